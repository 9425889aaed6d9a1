//! The closure API: retry any call, for call sites `#[retry]` cannot annotate.

use core::future::Future;
use core::ops::ControlFlow;
use core::time::Duration;

use crate::sleep::{self, Clock};
use std::time::Instant;

pub use crate::state::start_time;
use crate::{Classify, NoNotify, Notify, Policy, RetryAll, RetryState};

/// Retries a closure under a [`Policy`]: the same loop `#[retry]` expands to.
///
/// Retries every error unless [`on`](Retry::on) says otherwise; returns the **last** error,
/// unchanged, when retrying ends.
///
/// ```
/// use retry_runtime::{Policy, Retry};
/// use std::time::Duration;
///
/// let mut calls = 0;
/// let result = Retry::new(Policy::new().with_base(Duration::from_millis(1)))
///     .on(|e: &&str| *e != "fatal")
///     .call(|| {
///         calls += 1;
///         if calls < 3 { Err("busy") } else { Ok(calls) }
///     });
/// assert_eq!(result, Ok(3));
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "a Retry does nothing until `call` or `call_async`"]
pub struct Retry<C = RetryAll, N = NoNotify> {
    policy: Policy,
    on: C,
    notify: N,
    name: &'static str,
}

impl Retry {
    /// Retry every error under `policy`.
    ///
    /// ```
    /// use retry_runtime::{Policy, Retry};
    /// let r = Retry::new(Policy::new().with_attempts(1));
    /// assert_eq!(r.call(|| Err::<(), _>(1)), Err(1));
    /// ```
    pub const fn new(policy: Policy) -> Self {
        Retry {
            policy,
            on: RetryAll,
            notify: NoNotify,
            name: "closure",
        }
    }
}

impl<C, N> Retry<C, N> {
    /// Which errors are retried: a [`Classify`], usually a closure `Fn(&E) -> D` where
    /// `D: Into<Decision>` (annotate its argument's type).
    ///
    /// ```
    /// use retry_runtime::{Decision, Policy, Retry};
    /// let r = Retry::new(Policy::default()).on(|_: &std::io::Error| Decision::Stop);
    /// assert!(r.call(|| std::fs::read("/no/such/file")).is_err());
    /// ```
    pub fn on<C2>(self, on: C2) -> Retry<C2, N> {
        Retry {
            policy: self.policy,
            on,
            notify: self.notify,
            name: self.name,
        }
    }

    /// A hook called before each wait: a [`Notify`], usually a closure `Fn(&E, &RetryEvent)`.
    ///
    /// ```
    /// use retry_runtime::{Policy, Retry, RetryEvent};
    /// use std::time::Duration;
    /// let r = Retry::new(Policy::new().with_attempts(2).with_base(Duration::ZERO))
    ///     .notify(|e: &&str, ev: &RetryEvent| eprintln!("{} failed: {e}", ev.function));
    /// assert_eq!(r.call(|| Err::<(), _>("down")), Err("down"));
    /// ```
    pub fn notify<N2>(self, notify: N2) -> Retry<C, N2> {
        Retry {
            policy: self.policy,
            on: self.on,
            notify,
            name: self.name,
        }
    }

    /// The name given to `notify` hooks as [`RetryEvent::function`](crate::RetryEvent::function)
    /// (default `"closure"`).
    ///
    /// ```
    /// use retry_runtime::{Policy, Retry};
    /// let r = Retry::new(Policy::default()).name("load_config");
    /// # let _ = r;
    /// ```
    pub const fn name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// Call `op` until it succeeds or retrying ends, sleeping the waits with
    /// [`std::thread::sleep`].
    ///
    /// ```
    /// use retry_runtime::{Policy, Retry};
    /// let r = Retry::new(Policy::default());
    /// assert_eq!(r.call(|| Ok::<_, ()>(42)), Ok(42));
    /// ```
    pub fn call<T, E>(&self, op: impl FnMut() -> Result<T, E>) -> Result<T, E>
    where
        C: Classify<E>,
        N: Notify<E>,
    {
        run_blocking(self.policy, &self.on, &self.notify, self.name, op)
    }

    /// Call the future-making `op` until its future succeeds or retrying ends, sleeping the
    /// waits with `tokio::time::sleep` (and measuring `max_elapsed` on tokio's clock).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_runtime::{Policy, Retry};
    /// let r = Retry::new(Policy::default());
    /// assert_eq!(r.call_async(|| async { Ok::<_, ()>(42) }).await, Ok(42));
    /// # }
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn call_async<T, E, F, Fut>(&self, op: F) -> Result<T, E>
    where
        C: Classify<E>,
        N: Notify<E>,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.call_async_with(sleep::tokio_sleep, sleep::tokio_now, op)
            .await
    }

    /// [`call_async`](Retry::call_async) on any runtime: `sleep` is the timer, `clock` the
    /// clock `max_elapsed` is measured on (use [`sleep::now`](crate::sleep::now) unless the
    /// timer has a clock of its own).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_runtime::{sleep, Policy, Retry};
    /// use std::time::Duration;
    ///
    /// async fn my_sleep(d: Duration) { tokio::time::sleep(d).await }
    /// let r = Retry::new(Policy::new().with_base(Duration::from_millis(1)));
    /// let mut n = 0;
    /// let out = r.call_async_with(my_sleep, sleep::now, || { n += 1; let k = n; async move {
    ///     if k < 2 { Err("busy") } else { Ok(k) }
    /// }}).await;
    /// assert_eq!(out, Ok(2));
    /// # }
    /// ```
    pub async fn call_async_with<T, E, F, Fut, S, SFut>(
        &self,
        mut sleep: S,
        clock: Clock,
        mut op: F,
    ) -> Result<T, E>
    where
        C: Classify<E>,
        N: Notify<E>,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        S: FnMut(Duration) -> SFut,
        SFut: Future<Output = ()>,
    {
        let start = start_time(&self.policy, clock);
        let mut attempts = Attempts::new();
        loop {
            let outcome = op().await;
            if succeeded(&outcome) {
                return outcome;
            }
            let hooks = (&self.on, &self.notify, self.name);
            match attempts.failed((self.policy, clock, start), outcome, hooks) {
                ControlFlow::Break(outcome) => return outcome,
                ControlFlow::Continue(delay) => Box::pin(sleep(delay)).await,
            }
        }
    }
}

/// The retry machinery of one call, built only when its first attempt fails: until then an
/// empty pointer. The async retry loops (`#[retry]` on an `async fn`, [`Retry::call_async_with`])
/// are driven by it.
///
/// The policy, the clock and the start time are passed in, not kept, so that a policy known at
/// compile time stays a constant, and the state lives in a box allocated at the first failure:
/// a retried `async fn`'s future grows by one word for it, not by the whole state.
#[derive(Default)]
pub struct Attempts {
    state: Option<Box<RetryState>>,
}

impl Attempts {
    /// Before the first attempt.
    #[inline(always)]
    pub const fn new() -> Self {
        Attempts { state: None }
    }

    /// After a failed attempt (check [`succeeded`] first: the success path must not come
    /// here): `Break` with the outcome if retrying ends on it, `Continue` with the wait before
    /// the next attempt.
    #[cold]
    #[inline(never)]
    pub fn failed<R, C, N>(
        &mut self,
        (policy, clock, start): (Policy, Clock, Option<Instant>),
        outcome: R,
        (on, notify, function): (&C, &N, &'static str),
    ) -> ControlFlow<R, Duration>
    where
        R: IsResult,
        C: Classify<R::Err> + ?Sized,
        N: Notify<R::Err> + ?Sized,
    {
        let state = self
            .state
            .get_or_insert_with(|| Box::new(RetryState::resume(policy, clock, start)));
        step(state, outcome, on, notify, function)
    }
}

/// Whether an attempt succeeded. The loops test this first and return the outcome at once:
/// measured, handing a success through `ControlFlow` cost an async fn 8 ns.
#[inline(always)]
pub fn succeeded<R: IsResult>(outcome: &R) -> bool {
    outcome.as_err().is_none()
}

/// The blocking retry loop shared by [`Retry::call`] and sync `#[retry]` functions. The first
/// attempt runs before anything else exists: a success returns without a store.
#[inline]
pub fn run_blocking<R, C, N, F>(
    policy: Policy,
    on: &C,
    notify: &N,
    function: &'static str,
    mut op: F,
) -> R
where
    F: FnMut() -> R,
    R: IsResult,
    C: Classify<R::Err> + ?Sized,
    N: Notify<R::Err> + ?Sized,
{
    let start = start_time(&policy, sleep::now);
    let first = op();
    if succeeded(&first) {
        return first;
    }
    retry_blocking(policy, start, first, (on, notify, function), op)
}

#[cold]
#[inline(never)]
fn retry_blocking<R, C, N, F>(
    policy: Policy,
    start: Option<Instant>,
    first: R,
    (on, notify, function): (&C, &N, &'static str),
    mut op: F,
) -> R
where
    F: FnMut() -> R,
    R: IsResult,
    C: Classify<R::Err> + ?Sized,
    N: Notify<R::Err> + ?Sized,
{
    let mut state = RetryState::resume(policy, sleep::now, start);
    let mut outcome = first;
    loop {
        match step(&mut state, outcome, on, notify, function) {
            ControlFlow::Break(outcome) => return outcome,
            ControlFlow::Continue(delay) => sleep::sleep_blocking(delay),
        }
        outcome = op();
    }
}

/// One turn of every retry loop (blocking, async, closure API, `#[retry]`): a success or a
/// final error breaks out with the outcome; a retried error is dropped and the wait returned.
#[inline]
fn step<R, C, N>(
    state: &mut RetryState,
    outcome: R,
    on: &C,
    notify: &N,
    function: &'static str,
) -> ControlFlow<R, Duration>
where
    R: IsResult,
    C: Classify<R::Err> + ?Sized,
    N: Notify<R::Err> + ?Sized,
{
    let Some(error) = outcome.as_err() else {
        return ControlFlow::Break(outcome);
    };
    match state.on_error(error, on, notify, function) {
        Ok(delay) => ControlFlow::Continue(delay),
        Err(_) => ControlFlow::Break(outcome),
    }
}

/// The `Result` a retried function returns, seen through any alias (`io::Result<T>`…).
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a function that returns a `Result`, not `{Self}`",
    label = "this must be a `Result<T, E>` (or an alias of one, like `io::Result<T>`)",
    note = "retrying decides on the error: return `Result<{Self}, YourError>`"
)]
pub trait IsResult {
    /// The error type.
    type Err;
    /// The error, if this is one.
    fn as_err(&self) -> Option<&Self::Err>;
}

impl<T, E> IsResult for Result<T, E> {
    type Err = E;
    #[inline]
    fn as_err(&self) -> Option<&E> {
        self.as_ref().err()
    }
}
