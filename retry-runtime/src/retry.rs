//! The closure API: retry any call, for call sites `#[retry]` cannot annotate; and the loops
//! that both it and `#[retry]` run.

use core::future::Future;
use core::ops::ControlFlow;
use core::time::Duration;
use std::time::Instant;

use crate::budget::Owed;
use crate::hedge::{hedged, Hedge, HedgeWith, NoHedge};
use crate::hooks::{Budget, GiveUpHook, Hooks, NoBudget, NoGiveUp, NoTrace, Trace};
use crate::sleep::{self, Clock};
pub use crate::state::start_time;
use crate::timeout::{race, AttemptTimeout, Limit, NoTimeout};
use crate::{
    Classify, Decision, GiveUp, GiveUpReason, NoNotify, Notify, Policy, RetryAll, RetryBudget,
    RetryEvent, RetryState,
};

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
pub struct Retry<
    C = RetryAll,
    N = NoNotify,
    G = NoGiveUp,
    B = NoBudget,
    T = NoTrace,
    L = NoTimeout,
    D = NoHedge,
> {
    policy: Policy,
    hooks: Hooks<C, N, G, B, T>,
    name: &'static str,
    timeout: L,
    hedge: D,
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
            hooks: Hooks {
                on: RetryAll,
                notify: NoNotify,
                give_up: NoGiveUp,
                budget: NoBudget,
                trace: NoTrace,
            },
            name: "closure",
            timeout: NoTimeout,
            hedge: NoHedge,
        }
    }
}

impl<C, N, G, B, T, L, D> Retry<C, N, G, B, T, L, D> {
    /// Which errors are retried: a [`Classify`], usually a closure `Fn(&E) -> D` where
    /// `D: Into<Decision>` (annotate its argument's type), or [`transient`](crate::transient).
    ///
    /// ```
    /// use retry_runtime::{Decision, Policy, Retry};
    /// let r = Retry::new(Policy::default()).on(|_: &std::io::Error| Decision::Stop);
    /// assert!(r.call(|| std::fs::read("/no/such/file")).is_err());
    /// ```
    pub fn on<C2>(self, on: C2) -> Retry<C2, N, G, B, T, L, D> {
        self.map_hooks(|h| Hooks {
            on,
            notify: h.notify,
            give_up: h.give_up,
            budget: h.budget,
            trace: h.trace,
        })
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
    pub fn notify<N2>(self, notify: N2) -> Retry<C, N2, G, B, T, L, D> {
        self.map_hooks(|h| Hooks {
            on: h.on,
            notify,
            give_up: h.give_up,
            budget: h.budget,
            trace: h.trace,
        })
    }

    /// A hook called once when retrying ends with an error, with the reason: a
    /// [`GiveUpHook`], usually a closure `Fn(&E, &GiveUp)`.
    ///
    /// ```
    /// use retry_runtime::{GiveUp, GiveUpReason, Policy, Retry};
    /// let r = Retry::new(Policy::default())
    ///     .on(|_: &&str| false)
    ///     .give_up(|_: &&str, g: &GiveUp| assert_eq!(g.reason, GiveUpReason::Stopped));
    /// assert_eq!(r.call(|| Err::<(), _>("fatal")), Err("fatal"));
    /// ```
    pub fn give_up<G2>(self, give_up: G2) -> Retry<C, N, G2, B, T, L, D> {
        self.map_hooks(|h| Hooks {
            on: h.on,
            notify: h.notify,
            give_up,
            budget: h.budget,
            trace: h.trace,
        })
    }

    /// Share a [`RetryBudget`] with every other call that uses it.
    ///
    /// ```
    /// use retry_runtime::{Policy, Retry, RetryBudget};
    /// static BUDGET: RetryBudget = RetryBudget::new(0);
    /// let mut calls = 0;
    /// let r = Retry::new(Policy::default()).budget(&BUDGET);
    /// let _ = r.call(|| { calls += 1; Err::<(), _>("down") });
    /// assert_eq!(calls, 1); // an empty budget: no retry
    /// ```
    pub fn budget(self, budget: &RetryBudget) -> Retry<C, N, G, &RetryBudget, T, L, D> {
        self.map_hooks(|h| Hooks {
            on: h.on,
            notify: h.notify,
            give_up: h.give_up,
            budget,
            trace: h.trace,
        })
    }

    /// Trace each retry and each give-up as an event at `level` (feature `tracing`). The error
    /// is not part of these events (a closure API call knows nothing of its type); `#[retry]`
    /// adds it.
    ///
    /// ```
    /// use retry_runtime::{Level, Policy, Retry};
    /// let r = Retry::new(Policy::default()).trace(Level::WARN);
    /// # let _ = r;
    /// ```
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn trace(
        self,
        level: crate::Level,
    ) -> Retry<C, N, G, B, crate::Tracer<crate::Unrendered>, L, D> {
        self.map_hooks(|h| Hooks {
            on: h.on,
            notify: h.notify,
            give_up: h.give_up,
            budget: h.budget,
            trace: crate::tracer(level, crate::Unrendered),
        })
    }

    /// The same retry with other hooks.
    fn map_hooks<C2, N2, G2, B2, T2>(
        self,
        f: impl FnOnce(Hooks<C, N, G, B, T>) -> Hooks<C2, N2, G2, B2, T2>,
    ) -> Retry<C2, N2, G2, B2, T2, L, D> {
        Retry {
            policy: self.policy,
            hooks: f(self.hooks),
            name: self.name,
            timeout: self.timeout,
            hedge: self.hedge,
        }
    }

    /// Limit each attempt of [`call_async`](Retry::call_async) to `timeout`: an attempt still
    /// running then is dropped and fails with `E::from(TimedOut)`, classified like any other
    /// error. With a `max_elapsed` in the policy, each attempt is also limited to the time
    /// left before it, and an attempt cut by that deadline ends the call
    /// ([`GiveUpReason::Elapsed`](crate::GiveUpReason::Elapsed)). A sync call cannot be cut:
    /// a `Retry` with a timeout has no [`call`](Retry::call).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_runtime::{Policy, Retry};
    /// use std::time::Duration;
    ///
    /// let r = Retry::new(Policy::new().with_attempts(3)).timeout(Duration::from_secs(1));
    /// let mut calls = 0;
    /// let out = r.call_async(|| { calls += 1; async {
    ///     tokio::time::sleep(Duration::from_secs(60)).await; // never answers in time
    ///     Ok::<(), std::io::Error>(())
    /// }}).await;
    /// assert_eq!(out.unwrap_err().kind(), std::io::ErrorKind::TimedOut);
    /// assert_eq!(calls, 3);
    /// # }
    /// ```
    pub fn timeout(self, timeout: Duration) -> Retry<C, N, G, B, T, Duration, D> {
        Retry {
            policy: self.policy,
            hooks: self.hooks,
            name: self.name,
            timeout,
            hedge: self.hedge,
        }
    }

    /// Hedge each call of [`call_async`](Retry::call_async): when the latest attempt has not
    /// answered within `hedge` ([`Hedge::After`] a delay, or a [`Hedge::Percentile`] of recent
    /// latency), the next starts beside it; the first success wins and the others are dropped.
    /// At most the policy's `attempts` calls in all; a retryable error waits the usual backoff
    /// only when no other attempt runs. See [`hedge`](crate::hedge). A sync call cannot be
    /// hedged: a `Retry` with a hedge has no [`call`](Retry::call).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_runtime::{hedge::Hedge, Policy, Retry};
    /// use std::time::Duration;
    ///
    /// let r = Retry::new(Policy::new().with_attempts(2)).hedge(Hedge::After(Duration::from_millis(50)));
    /// let mut calls = 0;
    /// let started = tokio::time::Instant::now();
    /// let out = r.call_async(|| { calls += 1; let slow = calls == 1; async move {
    ///     // The first call would take a second; the hedge, sent at 50 ms, answers in 10.
    ///     tokio::time::sleep(Duration::from_millis(if slow { 1000 } else { 10 })).await;
    ///     Ok::<_, ()>(if slow { "first" } else { "hedge" })
    /// }}).await;
    /// assert_eq!(out, Ok("hedge"));
    /// assert_eq!(started.elapsed(), Duration::from_millis(60));
    /// # }
    /// ```
    pub fn hedge(self, hedge: Hedge) -> Retry<C, N, G, B, T, L, Hedge> {
        Retry {
            policy: self.policy,
            hooks: self.hooks,
            name: self.name,
            timeout: self.timeout,
            hedge,
        }
    }

    /// The name given to hooks as [`RetryEvent::function`](crate::RetryEvent::function)
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
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub async fn call_async<V, E, F, Fut>(&self, op: F) -> Result<V, E>
    where
        Hooks<C, N, G, B, T>: Serves<Result<V, E>>,
        B: Budget,
        L: AttemptTimeout<E>,
        D: HedgeWith,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<V, E>>,
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
    pub async fn call_async_with<V, E, F, Fut, S, SFut>(
        &self,
        mut sleep: S,
        clock: Clock,
        mut op: F,
    ) -> Result<V, E>
    where
        Hooks<C, N, G, B, T>: Serves<Result<V, E>>,
        B: Budget,
        L: AttemptTimeout<E>,
        D: HedgeWith,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<V, E>>,
        S: FnMut(Duration) -> SFut,
        SFut: Future<Output = ()>,
    {
        let start = start_time(&self.policy, clock);
        let now = (self.policy, clock, start);
        if let Some(hedge) = self.hedge.hedge() {
            let timeout = self
                .timeout
                .limit()
                .map(|(t, make_error)| (t, move |timed_out| Err(make_error(timed_out))));
            return hedged(now, &self.hooks, self.name, hedge, timeout, sleep, op).await;
        }
        let mut attempts = Attempts::new();
        loop {
            let (outcome, cut) = match self.timeout.limit() {
                None => (op().await, false),
                Some((timeout, timed_out)) => {
                    let limit = Limit::of(timeout, now);
                    match race(op(), sleep(limit.duration)).await {
                        Ok(outcome) => (outcome, false),
                        Err(t) => (Err(timed_out(t)), limit.deadline),
                    }
                }
            };
            if succeeded(&outcome) {
                attempts.succeeded_with(&self.hooks, self.name);
                return outcome;
            }
            match attempts.failed(
                (&self.policy, clock, start),
                outcome,
                &self.hooks,
                self.name,
                cut,
            ) {
                ControlFlow::Break(outcome) => return outcome,
                ControlFlow::Continue(delay) => sleep_boxed(delay, &mut sleep).await,
            }
            if let ControlFlow::Break(outcome) = attempts.resumed(&self.hooks, self.name) {
                return outcome;
            }
        }
    }
}

impl<C, N, G, B, T> Retry<C, N, G, B, T, NoTimeout, NoHedge> {
    /// Call `op` until it succeeds or retrying ends, sleeping the waits with
    /// [`std::thread::sleep`].
    ///
    /// ```
    /// use retry_runtime::{Policy, Retry};
    /// let r = Retry::new(Policy::default());
    /// assert_eq!(r.call(|| Ok::<_, ()>(42)), Ok(42));
    /// ```
    pub fn call<V, E>(&self, op: impl FnMut() -> Result<V, E>) -> Result<V, E>
    where
        Hooks<C, N, G, B, T>: Serves<Result<V, E>>,
    {
        run_blocking(self.policy, &self.hooks, self.name, op)
    }
}

/// The retry machinery of one call after its first failure: the [`RetryState`], the budget's
/// tokens for a retry that has not run yet (given back if it never does), and the last failed
/// outcome while a wait may end at the deadline.
struct Failing<'h, R> {
    state: RetryState,
    owed: Owed<'h>,
    last: Option<R>,
}

impl<'h, R: IsResult> Failing<'h, R> {
    fn new((policy, clock, start): (&Policy, Clock, Option<Instant>)) -> Self {
        Failing {
            state: RetryState::resume(*policy, clock, start),
            owed: Owed::default(),
            last: None,
        }
    }

    /// After a failed attempt (`cut`: by the deadline): `Break` with the outcome if retrying
    /// ends on it, `Continue` with the wait before the next attempt.
    #[inline(always)]
    fn failed<H: Serves<R>>(
        &mut self,
        outcome: R,
        hooks: &'h H,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Duration> {
        let (delay, owed, outcome) = hooks.step_inline(&mut self.state, outcome, function, cut)?;
        // The previous retry's tokens were spent when it ran (`resumed`): nothing is given
        // back here, and no drop of the old value is compiled.
        self.owed.spend();
        self.owed = owed;
        // Kept through the wait only where the deadline may end the call after it.
        if self.state.has_deadline() {
            self.last = Some(outcome);
        }
        ControlFlow::Continue(delay)
    }

    /// After a wait, before the next attempt: `Break` with the last outcome if the deadline
    /// passed during the wait (however long the timer overslept, no attempt starts past it),
    /// else the retry runs and its tokens are spent.
    #[inline(always)]
    fn resumed<H: Serves<R>>(&mut self, hooks: &H, function: &'static str) -> ControlFlow<R> {
        if let Some(last) = self.last.take() {
            if self.state.past_deadline() {
                // The retry never runs: its tokens go back.
                self.owed = Owed::default();
                let reason = GiveUpReason::Elapsed;
                return ControlFlow::Break(hooks.give_up(&self.state, last, reason, function));
            }
        }
        self.owed.spend();
        ControlFlow::Continue(())
    }
}

/// The retry machinery of one call, built only when its first attempt fails: until then an
/// empty pointer. The async retry loops (`#[retry]` on an `async fn`, [`Retry::call_async_with`])
/// are driven by it.
///
/// The policy (by reference: a constant one is an address, not a copy at every failure), the
/// clock and the start time are passed in, not kept, so that a policy known at compile time
/// stays a constant, and the state lives in a box allocated at the first failure:
/// a retried `async fn`'s future grows by one word for it, not by the whole state. Dropping it
/// during a wait gives the budget back the tokens of the retry that never ran.
pub struct Attempts<'h, R> {
    state: Option<Box<Failing<'h, R>>>,
}

impl<R> Drop for Attempts<'_, R> {
    /// The state, if any, is dropped out of line (it gives back the tokens of a retry that
    /// never ran): the success path, which never has one, keeps its registers.
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(failing) = self.state.take() {
            drop_failing(failing);
        }
    }
}

#[cold]
#[inline(never)]
fn drop_failing<R>(failing: Box<Failing<'_, R>>) {
    drop(failing);
}

impl<R> Default for Attempts<'_, R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'h, R> Attempts<'h, R> {
    /// Before the first attempt.
    #[inline(always)]
    pub const fn new() -> Self {
        Attempts { state: None }
    }

    /// After a failed attempt (check [`succeeded`] first: the success path must not come
    /// here); `cut` when the deadline cut it. `Break` with the outcome if retrying ends on it,
    /// `Continue` with the wait before the next attempt.
    #[cold]
    #[inline(never)]
    pub fn failed<H: Serves<R>>(
        &mut self,
        now: (&Policy, Clock, Option<Instant>),
        outcome: R,
        hooks: &'h H,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Duration>
    where
        R: IsResult,
    {
        let failing = self
            .state
            .get_or_insert_with(|| Box::new(Failing::new(now)));
        failing.failed(outcome, hooks, function, cut)
    }

    /// After a wait, before the next attempt: `Break` with the last outcome if the deadline
    /// passed during the wait.
    #[cold]
    #[inline(never)]
    pub fn resumed<H: Serves<R>>(&mut self, hooks: &H, function: &'static str) -> ControlFlow<R>
    where
        R: IsResult,
    {
        match &mut self.state {
            Some(failing) => failing.resumed(hooks, function),
            None => ControlFlow::Continue(()),
        }
    }

    /// An attempt succeeded: give the budget its due (the first-try reward, or what this
    /// call's retries took), and after failures report the recovery.
    #[inline(always)]
    pub fn succeeded<C, N, G, B: Budget, T: Trace<R>>(
        &self,
        hooks: &Hooks<C, N, G, B, T>,
        function: &'static str,
    ) {
        // A recovery is reported only where something hears of it (the metrics, a trace);
        // otherwise this is the budget's payment alone, and no branch without a budget.
        if cfg!(feature = "metrics") || !Trace::<R>::is_silent(&hooks.trace) {
            if let Some(failing) = &self.state {
                return recovered(hooks, &failing.state, function);
            }
        }
        hooks.pay(
            self.state
                .as_ref()
                .map_or(0, |failing| failing.state.budget_retries()),
        );
    }

    /// [`succeeded`](Attempts::succeeded) for any hooks that serve `R` (the closure API's).
    #[inline(always)]
    fn succeeded_with<H: Serves<R>>(&self, hooks: &H, function: &'static str) {
        match &self.state {
            None => hooks.pay(0),
            Some(failing) => hooks.recovered(&failing.state, function),
        }
    }
}

/// A call succeeded after failed (or hedged) calls: the budget gets back what its retries
/// took, and the metrics and the trace hear of it.
#[cold]
#[inline(never)]
fn recovered<R, C, N, G, B: Budget, T: Trace<R>>(
    hooks: &Hooks<C, N, G, B, T>,
    state: &RetryState,
    function: &'static str,
) {
    hooks.pay(state.budget_retries());
    #[cfg(feature = "metrics")]
    crate::metrics::recovered(function);
    // The elapsed time is read (a clock read, with `tracing`) only for a trace that shows it.
    if !Trace::<R>::is_silent(&hooks.trace) {
        let calls = state.failed_calls().saturating_add(1);
        hooks.trace.recovered(function, calls, state.elapsed());
    }
}

/// The timer of an async loop for one wait, boxed: the retried future then holds a pointer,
/// not a timer, and a first-call success (which never sleeps) allocates nothing. A zero wait
/// is no timer at all (and no allocation).
#[inline]
pub fn sleep_boxed<F, S>(delay: Duration, sleep: S) -> Wait<F>
where
    F: Future<Output = ()>,
    S: FnOnce(Duration) -> F,
{
    Wait((!delay.is_zero()).then(|| Box::pin(sleep(delay))))
}

/// One wait of an async retry loop: a boxed timer, or none for a zero wait.
pub struct Wait<F>(Option<core::pin::Pin<Box<F>>>);

impl<F: Future<Output = ()>> Future for Wait<F> {
    type Output = ();

    #[inline]
    fn poll(
        self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<()> {
        match &mut self.get_mut().0 {
            Some(timer) => timer.as_mut().poll(cx),
            None => core::task::Poll::Ready(()),
        }
    }
}

/// Whether an attempt succeeded. The loops test this first and return the outcome at once:
/// measured, handing a success through `ControlFlow` cost an async fn 8 ns.
#[inline(always)]
pub fn succeeded<R: IsResult>(outcome: &R) -> bool {
    outcome.as_err().is_none()
}

/// The loops' entry points for a function returning `R`, as `For::<R>::…`: the return type
/// is named once, in the path, so every error about it (`R` is not a `Result`) has the same
/// span, the return type's, and the compiler reports it once.
pub struct For<R>(core::marker::PhantomData<fn() -> R>);

impl<R> For<R> {
    /// [`run_blocking`].
    #[inline(always)]
    pub fn run_blocking<C, N, G, B, T, F>(
        policy: Policy,
        hooks: &Hooks<C, N, G, B, T>,
        function: &'static str,
        op: F,
    ) -> R
    where
        R: IsResult,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
        F: FnMut() -> R,
    {
        run_blocking(policy, hooks, function, op)
    }

    /// [`succeeded`].
    #[inline(always)]
    pub fn succeeded(outcome: &R) -> bool
    where
        R: IsResult,
    {
        succeeded(outcome)
    }

    /// [`Attempts::failed`].
    #[inline(always)]
    pub fn failed<'h, C, N, G, B, T>(
        attempts: &mut Attempts<'h, R>,
        now: (&Policy, Clock, Option<Instant>),
        outcome: R,
        hooks: &'h Hooks<C, N, G, B, T>,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Duration>
    where
        R: IsResult,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
    {
        attempts.failed(now, outcome, hooks, function, cut)
    }

    /// The hedging loop (`hedge = …`): [`hedge`](crate::hedge).
    /// (A plain `fn` returning the loop's future, not an `async fn` around it, which would
    /// keep its arguments and that future twice.)
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn hedged<'h, C, N, G, B, T, F, Fut, S, SFut, M>(
        now: (Policy, Clock, Option<Instant>),
        hooks: &'h Hooks<C, N, G, B, T>,
        function: &'static str,
        hedge: Hedge,
        timeout: Option<(Duration, M)>,
        sleep: S,
        make: F,
    ) -> impl Future<Output = R> + use<'h, R, C, N, G, B, T, F, Fut, S, SFut, M>
    where
        R: IsResult,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
        F: FnMut() -> Fut,
        Fut: Future<Output = R>,
        S: FnMut(Duration) -> SFut,
        SFut: Future<Output = ()>,
        M: Fn(crate::TimedOut) -> R,
    {
        hedged(now, hooks, function, hedge, timeout, sleep, make)
    }

    /// [`Attempts::resumed`].
    #[inline(always)]
    pub fn resumed<C, N, G, B, T>(
        attempts: &mut Attempts<'_, R>,
        hooks: &Hooks<C, N, G, B, T>,
        function: &'static str,
    ) -> ControlFlow<R>
    where
        R: IsResult,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
    {
        attempts.resumed(hooks, function)
    }
}

/// Hooks that serve a function returning `R`: every bound the loops need, in one place.
/// (The `For::<R>` entry points spell the bounds out instead, so that a mistake in a hook is
/// reported at the user's key.)
pub trait Serves<R> {
    /// One turn of every retry loop after a failure (`cut`: an attempt cut by the deadline,
    /// which ends the call): a success (of a later attempt) pays the budget back and breaks
    /// out; an error retrying ends on is reported to `give_up` and the trace and breaks out;
    /// a retried error comes back with the wait and the budget's tokens its retry owes.
    #[allow(clippy::type_complexity)]
    fn step<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)>;

    /// [`step`](Serves::step), inlined whole into the loop that calls it (the blocking loop,
    /// `Attempts`): the hooks' types and a constant policy then leave only what they do.
    #[allow(clippy::type_complexity)]
    fn step_inline<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)>;

    /// Retrying ends with `outcome` (an error) for `reason`: tell the trace and the `give_up`
    /// hook, and hand the outcome back.
    fn give_up(
        &self,
        state: &RetryState,
        outcome: R,
        reason: GiveUpReason,
        function: &'static str,
    ) -> R;

    /// A success pays the budget back: the first-try reward, or what the call's retries took.
    fn pay(&self, budget_retries: u32);

    /// A call succeeded after failed (or hedged) calls: pay the budget back and report it.
    fn recovered(&self, state: &RetryState, function: &'static str);

    /// What the classifier says of a failed `outcome` (a hedged call decides with it while
    /// other attempts still run).
    fn decide(&self, outcome: &R) -> Decision;

    /// A hedge is about to start: take its budget tokens (`false`, no hedge, if there are
    /// none), and tell the `notify` hook and the trace.
    fn hedge(&self, state: &mut RetryState, event: &RetryEvent) -> bool;
}

impl<C, N, G, B: Budget, T> Hooks<C, N, G, B, T> {
    /// A success pays the budget back: the first-try reward (no retries), or what the call's
    /// retries took. Nothing at all without a budget.
    #[inline(always)]
    fn pay(&self, budget_retries: u32) {
        if let Some(budget) = self.budget.get() {
            budget.succeeded_after(budget_retries);
        }
    }
}

impl<R, C, N, G, B, T> Serves<R> for Hooks<C, N, G, B, T>
where
    R: IsResult,
    C: Classify<R::Err>,
    N: Notify<R::Err>,
    G: GiveUpHook<R::Err>,
    B: Budget,
    T: Trace<R>,
{
    #[inline]
    fn step<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)> {
        step(self, state, outcome, function, cut, false)
    }

    #[inline(always)]
    fn step_inline<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)> {
        step(self, state, outcome, function, cut, true)
    }

    fn give_up(
        &self,
        state: &RetryState,
        outcome: R,
        reason: GiveUpReason,
        function: &'static str,
    ) -> R {
        let give_up = GiveUp {
            reason,
            calls: state.failed_calls(),
            function,
        };
        self.trace.give_up(&outcome, &give_up);
        #[cfg(feature = "metrics")]
        crate::metrics::give_up(function, reason);
        if let Some(error) = outcome.as_err() {
            self.give_up.give_up(error, &give_up);
        }
        outcome
    }

    #[inline(always)]
    fn pay(&self, budget_retries: u32) {
        Hooks::pay(self, budget_retries);
    }

    fn recovered(&self, state: &RetryState, function: &'static str) {
        recovered(self, state, function);
    }

    fn decide(&self, outcome: &R) -> Decision {
        outcome
            .as_err()
            .map_or(Decision::Stop, |error| self.on.classify(error))
    }

    fn hedge(&self, state: &mut RetryState, event: &RetryEvent) -> bool {
        if !state.take_tokens(self.budget.get()) {
            return false;
        }
        self.notify.hedge(event);
        self.trace.hedge(event);
        #[cfg(feature = "metrics")]
        crate::metrics::hedge(event.function);
        true
    }
}

/// [`Serves::step`]; `inline`: with the classification and the wait inlined too (a constant).
#[allow(clippy::type_complexity)]
#[inline(always)]
fn step<'h, R, C, N, G, B, T>(
    hooks: &'h Hooks<C, N, G, B, T>,
    state: &mut RetryState,
    outcome: R,
    function: &'static str,
    cut: bool,
    inline: bool,
) -> ControlFlow<R, (Duration, Owed<'h>, R)>
where
    R: IsResult,
    C: Classify<R::Err>,
    N: Notify<R::Err>,
    G: GiveUpHook<R::Err>,
    B: Budget,
    T: Trace<R>,
{
    let Some(error) = outcome.as_err() else {
        recovered(hooks, state, function);
        return ControlFlow::Break(outcome);
    };
    let step = if cut {
        Err(state.end(GiveUpReason::Elapsed))
    } else {
        state.retry_step(error, hooks, function, inline)
    };
    match step {
        Ok((delay, owed)) => {
            hooks.trace.retry(&outcome, &state.event(delay, function));
            #[cfg(feature = "metrics")]
            crate::metrics::retry(function, delay);
            ControlFlow::Continue((delay, owed, outcome))
        }
        Err(reason) => ControlFlow::Break(Serves::give_up(hooks, state, outcome, reason, function)),
    }
}

/// The blocking retry loop shared by [`Retry::call`] and sync `#[retry]` functions. The first
/// attempt runs before anything else exists: a success returns without a store.
#[inline]
pub fn run_blocking<R, H, F>(policy: Policy, hooks: &H, function: &'static str, mut op: F) -> R
where
    R: IsResult,
    H: Serves<R>,
    F: FnMut() -> R,
{
    let start = start_time(&policy, sleep::now);
    let first = op();
    if succeeded(&first) {
        hooks.pay(0);
        return first;
    }
    retry_blocking(policy, start, first, hooks, function, op)
}

#[cold]
#[inline(never)]
fn retry_blocking<R, H, F>(
    policy: Policy,
    start: Option<Instant>,
    first: R,
    hooks: &H,
    function: &'static str,
    mut op: F,
) -> R
where
    R: IsResult,
    H: Serves<R>,
    F: FnMut() -> R,
{
    let mut failing = Failing::new((&policy, sleep::now, start));
    let mut outcome = first;
    loop {
        match failing.failed(outcome, hooks, function, false) {
            ControlFlow::Break(outcome) => return outcome,
            ControlFlow::Continue(delay) => sleep::sleep_blocking(delay),
        }
        if let ControlFlow::Break(outcome) = failing.resumed(hooks, function) {
            return outcome;
        }
        outcome = op();
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
    /// An outcome that is this error.
    fn from_err(error: Self::Err) -> Self;
}

impl<T, E> IsResult for Result<T, E> {
    type Err = E;
    #[inline]
    fn as_err(&self) -> Option<&E> {
        self.as_ref().err()
    }
    #[inline(always)]
    fn from_err(error: E) -> Self {
        Err(error)
    }
}
