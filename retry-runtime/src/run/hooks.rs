//! What a retry loop calls out to besides the operation: the classifier, the `notify` and
//! `give_up` hooks, the shared budget, the trace (in `trace`).
//!
//! Each defaults to a zero-sized "nothing", so a call site pays only for what it uses.

use crate::policy::Unset;
use crate::policy::{GiveUp, RetryEvent};
pub use crate::run::trace::Trace;
#[cfg(feature = "tracing")]
pub use crate::run::trace::{tracer, Level, Render, Rendered, Tracer, Unrendered};

/// Told about each retry before its wait (logging, metrics).
///
/// Implemented for every `Fn(&E, &RetryEvent)`, and for [`Unset`].
///
/// ```
/// use retry_jitter::RetryEvent;
/// use retry_jitter::hooks::Notify;
///
/// let log = |e: &String, ev: &RetryEvent| eprintln!("{}: {e}, retry in {:?}", ev.function, ev.delay);
/// # let _ = &log as &dyn Notify<String>;
/// ```
#[diagnostic::on_unimplemented(
    message = "`notify` needs a `Fn(&{E}, &RetryEvent)` or a type that implements `Notify<{E}>`, not `{Self}`",
    label = "not a `Notify<{E}>`",
    note = "a closure `|e, event| …` or a `fn(&{E}, &RetryEvent)` works, as does any type with `impl Notify<{E}>`"
)]
pub trait Notify<E> {
    /// `error` ended call number `event.attempt`; the next call comes after `event.delay`.
    fn notify(&self, error: &E, event: &RetryEvent);

    /// Call number `event.attempt` has not answered within `event.delay` (`hedge = …`).
    ///
    /// The next call starts beside it.
    ///
    /// There is no error to show: a closure `Fn(&E, &RetryEvent)` is not told.
    ///
    /// Hedges are traced, and counted in [`GiveUp::calls`](crate::GiveUp::calls).
    ///
    /// Implement `Notify` on a type of your own to be told.
    ///
    /// ```
    /// use retry_jitter::RetryEvent;
    /// use retry_jitter::hooks::Notify;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    ///
    /// #[derive(Default)]
    /// struct Counts { retries: AtomicU32, hedges: AtomicU32 }
    ///
    /// impl<E> Notify<E> for Counts {
    ///     fn notify(&self, _: &E, _: &RetryEvent) { self.retries.fetch_add(1, Ordering::Relaxed); }
    ///     fn hedge(&self, _: &RetryEvent) { self.hedges.fetch_add(1, Ordering::Relaxed); }
    /// }
    /// # let _ = &Counts::default() as &dyn Notify<()>;
    /// ```
    fn hedge(&self, event: &RetryEvent) {
        let _ = event;
    }

    /// Call number `event.attempt` returned an `Ok` value that `on_ok` retries
    /// ([`RetryEvent::ok`](crate::RetryEvent::ok)).
    ///
    /// The next call comes after `event.delay`.
    ///
    /// There is no error to show: a closure `Fn(&E, &RetryEvent)` is not told.
    ///
    /// Implement `Notify` on a type of your own to be told.
    ///
    /// ```
    /// use retry_jitter::RetryEvent;
    /// use retry_jitter::hooks::Notify;
    /// struct Log;
    /// impl<E: std::fmt::Display> Notify<E> for Log {
    ///     fn notify(&self, e: &E, ev: &RetryEvent) { eprintln!("call {} failed: {e}", ev.attempt) }
    ///     fn retry_ok(&self, ev: &RetryEvent) { eprintln!("call {} not ready yet", ev.attempt) }
    /// }
    /// # let _ = &Log as &dyn Notify<String>;
    /// ```
    fn retry_ok(&self, event: &RetryEvent) {
        let _ = event;
    }
}

impl<E, F: Fn(&E, &RetryEvent)> Notify<E> for F {
    fn notify(&self, error: &E, event: &RetryEvent) {
        self(error, event);
    }
}

impl<E> Notify<E> for Unset {
    fn notify(&self, _: &E, _: &RetryEvent) {}
}

/// Told once, when retrying ends with an error, why it ended.
///
/// Implemented for every `Fn(&E, &GiveUp)`, and for [`Unset`].
///
/// ```
/// use retry_jitter::GiveUp;
/// use retry_jitter::hooks::GiveUpHook;
/// let log = |e: &String, g: &GiveUp| eprintln!("{}: giving up ({}) after {} calls: {e}", g.function, g.reason, g.calls);
/// # let _ = &log as &dyn GiveUpHook<String>;
/// ```
pub trait GiveUpHook<E> {
    /// `error` is being returned, for the reason in `give_up`.
    fn give_up(&self, error: &E, give_up: &GiveUp);

    /// Retrying ended on an `Ok` value that `on_ok` would have retried
    /// ([`GiveUp::ok`](crate::GiveUp::ok)); `give_up` holds the reason.
    ///
    /// That value is returned.
    ///
    /// There is no error to show: a closure `Fn(&E, &GiveUp)` is not told.
    ///
    /// Implement `GiveUpHook` on a type of your own to be told.
    ///
    /// ```
    /// use retry_jitter::GiveUp;
    /// use retry_jitter::hooks::GiveUpHook;
    /// struct Log;
    /// impl<E> GiveUpHook<E> for Log {
    ///     fn give_up(&self, _: &E, g: &GiveUp) { eprintln!("failed: {}", g.reason) }
    ///     fn give_up_ok(&self, g: &GiveUp) { eprintln!("still not ready: {}", g.reason) }
    /// }
    /// # let _ = &Log as &dyn GiveUpHook<()>;
    /// ```
    fn give_up_ok(&self, give_up: &GiveUp) {
        let _ = give_up;
    }
}

impl<E, F: Fn(&E, &GiveUp)> GiveUpHook<E> for F {
    fn give_up(&self, error: &E, give_up: &GiveUp) {
        self(error, give_up);
    }
}

impl<E> GiveUpHook<E> for Unset {
    fn give_up(&self, _: &E, _: &GiveUp) {}
}

/// Everything a call site's retry loop calls out to besides the operation.
///
/// ```
/// use retry_jitter::hooks::{AcceptOk, Hooks, RetryAll, Unset};
/// let hooks = Hooks { on: RetryAll, notify: Unset, give_up: Unset, budget: Unset, trace: Unset, on_ok: AcceptOk, guard: Unset };
/// # let _ = hooks;
/// ```
///
/// The parameters are [`Retry`](crate::Retry)'s, with the same letters.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hooks<C, N, G, B, T, O = crate::policy::AcceptOk, Gd = Unset> {
    /// Which errors are retried: a [`Classify`](crate::hooks::Classify).
    pub on: C,
    /// Told before each wait: a [`Notify`](crate::hooks::Notify).
    pub notify: N,
    /// Told once when retrying ends with an error: a [`GiveUpHook`].
    pub give_up: G,
    /// The shared budget, if any: a [`Budget`](crate::hooks::Budget).
    pub budget: B,
    /// Trace events: [`Unset`] in a loop of your own (the attribute's expansion passes its own).
    pub trace: T,
    /// Which `Ok` values are retried (`on_ok`): a [`ClassifyOk`](crate::hooks::ClassifyOk); every one
    /// is taken with [`AcceptOk`](crate::policy::AcceptOk).
    pub on_ok: O,
    /// The throttle and the circuit breaker, if any: [`Unset`] in a loop of your own (the
    /// attribute's expansion and [`Retry`](crate::Retry) set them).
    pub guard: Gd,
}
