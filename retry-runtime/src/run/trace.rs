//! The trace a retry loop reports to: the [`Trace`] events, [`Unset`], and with feature
//! `tracing` the `Tracer` that emits them as `tracing` events.

use crate::policy::Unset;
use crate::policy::{GiveUp, RetryEvent};

/// Trace events for retries and give-ups (feature `tracing`); [`Unset`] emits nothing.
///
/// `R` is the failed call's outcome (its `Result`): a trace sees the error through it, so that
/// its type depends on the function's return type alone.
///
/// ```
/// use retry_jitter::hooks::Unset;
/// use retry_jitter::__private::Trace;
/// # let _ = &Unset as &dyn Trace<Result<(), ()>>;
/// ```
pub trait Trace<R> {
    /// `true` for a trace that emits nothing ([`Unset`]): the loops then skip what they
    /// would compute only for it.
    #[inline(always)]
    fn is_silent(&self) -> bool {
        false
    }
    /// A failed call's `outcome` is about to be retried after `event.delay`.
    fn retry(&self, outcome: &R, event: &RetryEvent);
    /// Retrying ended with `outcome`.
    fn give_up(&self, outcome: &R, give_up: &GiveUp);
    /// A hedge starts (`hedge = …`): call number `event.attempt` has not answered within
    /// `event.delay`.
    fn hedge(&self, event: &RetryEvent) {
        let _ = event;
    }
    /// A call of `function` succeeded on its call number `calls`, after failed (or hedged)
    /// ones; `elapsed` since the call began (or, when the call kept no start time — it has no
    /// `max_elapsed` —, since its first call failed).
    fn recovered(&self, function: &'static str, calls: u32, elapsed: core::time::Duration) {
        let _ = (function, calls, elapsed);
    }
}

impl<R> Trace<R> for Unset {
    #[inline(always)]
    fn is_silent(&self) -> bool {
        true
    }
    #[inline(always)]
    fn retry(&self, _: &R, _: &RetryEvent) {}
    #[inline(always)]
    fn give_up(&self, _: &R, _: &GiveUp) {}
}

#[cfg(feature = "tracing")]
pub use tracer::{tracer, Level, Render, Rendered, Tracer, Unrendered, TARGET};

/// The `tracing` events.
#[cfg(feature = "tracing")]
mod tracer {
    use core::fmt::{Debug, Display};

    use super::Trace;
    use crate::policy::{GiveUp, RetryEvent};

    pub use tracing::Level;

    /// An error as a trace event shows it: through `Display` if its type has it, else `Debug`,
    /// else not at all (chosen at compile time by `#[retry]`; no bound on the error type).
    #[derive(Clone, Copy)]
    pub enum Rendered<'a> {
        /// Shown with `Display`.
        Display(&'a dyn Display),
        /// Shown with `Debug`.
        Debug(&'a dyn Debug),
        /// An `Ok` value `on_ok` retried, shown with `Debug`.
        Value(&'a dyn Debug),
        /// Not shown.
        Nothing,
    }

    /// How a [`Tracer`] shows the error in a failed call's outcome `R`: a function pointer
    /// `fn(&R) -> Rendered` (what `#[retry]` picks), or [`Unrendered`].
    pub trait Render<R> {
        /// The error as the event shows it.
        fn render<'e>(&self, outcome: &'e R) -> Rendered<'e>;
    }

    impl<R> Render<R> for for<'e> fn(&'e R) -> Rendered<'e> {
        fn render<'e>(&self, outcome: &'e R) -> Rendered<'e> {
            self(outcome)
        }
    }

    /// The error's renderer, then the value's (for an `Ok` that `on_ok` retried): what
    /// `#[retry]` picks when the function has `on_ok`.
    impl<R> Render<R>
        for (
            for<'e> fn(&'e R) -> Rendered<'e>,
            for<'e> fn(&'e R) -> Rendered<'e>,
        )
    {
        fn render<'e>(&self, outcome: &'e R) -> Rendered<'e> {
            match (self.0)(outcome) {
                Rendered::Nothing => (self.1)(outcome),
                shown => shown,
            }
        }
    }

    /// Events without the error: for the closure API, which knows nothing of its type.
    ///
    /// ```
    /// use retry_jitter::__private::{tracer, Level, Trace, Unrendered};
    /// # let t = tracer(Level::WARN, Unrendered);
    /// # let _ = &t as &dyn Trace<Result<(), String>>;
    /// ```
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Unrendered;

    impl<R> Render<R> for Unrendered {
        fn render<'e>(&self, _: &'e R) -> Rendered<'e> {
            Rendered::Nothing
        }
    }

    /// Trace events at `level`, the error shown by `render`.
    ///
    /// ```
    /// use retry_jitter::__private::{tracer, Level, Rendered, Trace};
    /// fn show(r: &Result<(), String>) -> Rendered<'_> {
    ///     r.as_ref().err().map_or(Rendered::Nothing, |e| Rendered::Display(e))
    /// }
    /// let t = tracer(Level::WARN, show as fn(&Result<(), String>) -> Rendered<'_>);
    /// # let _ = &t as &dyn Trace<Result<(), String>>;
    /// ```
    #[derive(Clone, Copy, Debug)]
    pub struct Tracer<F> {
        level: Level,
        render: F,
    }

    /// A [`Tracer`]: each retry and each give-up is an event at `level` (WARN by default in
    /// `#[retry]`), under the target `retry_jitter`, with fields `function`, `attempt`,
    /// `delay_ms` (whole milliseconds, a `u64`) (or `reason`, `calls`) and the error as `render`
    /// shows it.
    ///
    /// ```
    /// use retry_jitter::__private::{tracer, Level, Rendered};
    /// let t = tracer(Level::INFO, retry_jitter::__private::Unrendered);
    /// # let _ = t;
    /// ```
    pub fn tracer<F>(level: Level, render: F) -> Tracer<F> {
        Tracer { level, render }
    }

    /// The target of every event (and span) the crate emits: the crate's name, not the module
    /// an event happens to be written in, so that `RUST_LOG=retry_jitter=debug` shows them all.
    pub const TARGET: &str = "retry_jitter";

    /// A duration in whole milliseconds (rounded down, saturating): what `delay_ms` and
    /// `elapsed_ms` show, `2` rather than `2.2566859999999997`.
    fn whole_ms(d: core::time::Duration) -> u64 {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
    }

    macro_rules! at_level {
        ($level:expr, $($event:tt)*) => {
            match $level {
                Level::ERROR => tracing::event!(target: TARGET, Level::ERROR, $($event)*),
                Level::WARN => tracing::event!(target: TARGET, Level::WARN, $($event)*),
                Level::INFO => tracing::event!(target: TARGET, Level::INFO, $($event)*),
                Level::DEBUG => tracing::event!(target: TARGET, Level::DEBUG, $($event)*),
                _ => tracing::event!(target: TARGET, Level::TRACE, $($event)*),
            }
        };
    }

    impl<R, F: Render<R>> Trace<R> for Tracer<F> {
        fn retry(&self, error: &R, ev: &RetryEvent) {
            let delay_ms = whole_ms(ev.delay);
            let (function, attempt) = (ev.function, ev.attempt);
            match self.render.render(error) {
                Rendered::Display(e) => {
                    at_level!(self.level, function, attempt, delay_ms, error = %e, "retrying")
                }
                Rendered::Debug(e) => {
                    at_level!(self.level, function, attempt, delay_ms, error = ?e, "retrying")
                }
                Rendered::Value(v) => at_level!(
                    self.level,
                    function,
                    attempt,
                    delay_ms,
                    value = ?v,
                    "retrying on an Ok value"
                ),
                Rendered::Nothing if ev.ok => {
                    at_level!(
                        self.level,
                        function,
                        attempt,
                        delay_ms,
                        "retrying on an Ok value"
                    )
                }
                Rendered::Nothing => at_level!(self.level, function, attempt, delay_ms, "retrying"),
            }
        }

        fn hedge(&self, ev: &RetryEvent) {
            let delay_ms = whole_ms(ev.delay);
            let (function, attempt) = (ev.function, ev.attempt);
            at_level!(self.level, function, attempt, delay_ms, "hedging");
        }

        fn recovered(&self, function: &'static str, calls: u32, elapsed: core::time::Duration) {
            let elapsed_ms = whole_ms(elapsed);
            // One level below the retries': a recovery is the good news.
            let level = match self.level {
                Level::ERROR => Level::WARN,
                Level::WARN => Level::INFO,
                Level::INFO => Level::DEBUG,
                _ => Level::TRACE,
            };
            at_level!(level, function, calls, elapsed_ms, "recovered");
        }

        fn give_up(&self, error: &R, g: &GiveUp) {
            let (function, calls, reason) = (g.function, g.calls, g.reason.as_str());
            match self.render.render(error) {
                Rendered::Display(e) => {
                    at_level!(self.level, function, calls, reason, error = %e, "giving up")
                }
                Rendered::Debug(e) => {
                    at_level!(self.level, function, calls, reason, error = ?e, "giving up")
                }
                Rendered::Value(v) => at_level!(
                    self.level,
                    function,
                    calls,
                    reason,
                    value = ?v,
                    "giving up on an Ok value"
                ),
                Rendered::Nothing if g.ok => {
                    at_level!(
                        self.level,
                        function,
                        calls,
                        reason,
                        "giving up on an Ok value"
                    )
                }
                Rendered::Nothing => at_level!(self.level, function, calls, reason, "giving up"),
            }
        }
    }
}
