//! The closure API: retry any call, for call sites `#[retry]` cannot annotate.

use core::future::Future;
use core::ops::ControlFlow;
use core::time::Duration;

use crate::sleep::{self, Clock};
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
        let mut state = RetryState::new(self.policy);
        run_blocking(&mut state, &self.on, &self.notify, self.name, op)
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
        let mut state = RetryState::with_clock(self.policy, clock);
        loop {
            let outcome = op().await;
            match step(&mut state, outcome, &self.on, &self.notify, self.name) {
                ControlFlow::Break(outcome) => return outcome,
                ControlFlow::Continue(delay) => sleep(delay).await,
            }
        }
    }
}

/// The blocking retry loop shared by [`Retry::call`] and sync `#[retry]` functions.
#[inline]
pub fn run_blocking<R, C, N, F>(
    state: &mut RetryState,
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
    loop {
        match step(state, op(), on, notify, function) {
            ControlFlow::Break(outcome) => return outcome,
            ControlFlow::Continue(delay) => sleep::sleep_blocking(delay),
        }
    }
}

/// One turn of every retry loop (blocking, async, closure API, `#[retry]`): a success or a
/// final error breaks out with the outcome; a retried error is dropped and the wait returned.
#[inline]
pub fn step<R, C, N>(
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
