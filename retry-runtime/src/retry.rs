//! The closure API: retry any call, for call sites `#[retry]` cannot annotate, on the loop
//! `#[retry]` runs (`run::loops`).

use core::future::Future;
use core::ops::ControlFlow;
use core::time::Duration;

use crate::fleet::{AdaptiveThrottle, CircuitBreaker};
use crate::fleet::{Budget, SharedBudget};
use crate::policy::deadline::Started;
use crate::policy::Clock;
use crate::policy::Unset;
use crate::policy::{AcceptOk, Classify, ClassifyOk, Policy, RetryAll};
use crate::run::guard::{BreakerGuard, Guard, IntoErr, ThrottleGuard};
use crate::run::hedge::{Hedge, HedgeWith};
use crate::run::hooks::Notify;
use crate::run::hooks::{GiveUpHook, Hooks, Trace};
use crate::run::loops::{run_blocking, sleep_boxed, verdict, Loop, LoopState};
use crate::run::state::start_time;
use crate::run::timeout::{AttemptTimeout, Limit, Race};

/// Retries a closure under a [`Policy`]: the same loop `#[retry]` expands to.
///
/// Retries every error unless [`on`](Retry::on) says otherwise; returns the **last** error,
/// unchanged, when retrying ends.
///
/// ```
/// use retry_jitter::{Policy, Retry};
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
///
/// Retrying every error by default is where `Retry` differs from `#[retry]`. The attribute,
/// which sees the function's error type where it is written, classifies an error type that
/// implements [`Transient`](crate::Transient) by it when no `on` is given. `Retry::new` knows
/// nothing of the error type until `call`, which is generic in it, so it cannot choose without
/// asking every error type for a bound: it retries every error. Write
/// `.on(retry_jitter::transient)` for the attribute's behaviour:
///
/// ```
/// use retry_jitter::{transient, Policy, Retry};
/// use std::io;
///
/// let mut calls = 0;
/// let result = Retry::new(Policy::new()).on(transient).call(|| {
///     calls += 1;
///     std::fs::read_to_string("/no/such/file") // NotFound: not transient
/// });
/// assert_eq!((result.unwrap_err().kind(), calls), (io::ErrorKind::NotFound, 1));
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "a Retry does nothing until `call` or `call_async`"]
pub struct Retry<
    On = RetryAll,
    Notify = Unset,
    GiveUp = Unset,
    Budget = Unset,
    Trace = Unset,
    Timeout = Unset,
    Hedge = Unset,
    OnOk = AcceptOk,
    Guards = (Unset, Unset),
> {
    policy: Policy,
    hooks: Hooks<On, Notify, GiveUp, Budget, Trace, OnOk, Guards>,
    name: &'static str,
    timeout: Timeout,
    hedge: Hedge,
}

impl Retry {
    /// Retry every error under `policy` (`.on(retry_jitter::transient)` to retry only the
    /// transient ones, as `#[retry]` does by default for a `Transient` error type).
    ///
    /// ```
    /// use retry_jitter::{Policy, Retry};
    /// let r = Retry::new(Policy::new().with_attempts(1));
    /// assert_eq!(r.call(|| Err::<(), _>(1)), Err(1));
    /// ```
    pub const fn new(policy: Policy) -> Self {
        Retry {
            policy,
            hooks: Hooks {
                on: RetryAll,
                notify: Unset,
                give_up: Unset,
                budget: Unset,
                trace: Unset,
                on_ok: AcceptOk,
                guard: (Unset, Unset),
            },
            name: "closure",
            timeout: Unset,
            hedge: Unset,
        }
    }
}

impl<C, N, G, B, T, L, D, O, Gd> Retry<C, N, G, B, T, L, D, O, Gd> {
    /// Which errors are retried: a [`Classify`], usually a closure `Fn(&E) -> D` where
    /// `D: Into<Decision>` (annotate its argument's type), or [`transient`](crate::transient).
    ///
    /// ```
    /// use retry_jitter::{Decision, Policy, Retry};
    /// let r = Retry::new(Policy::default()).on(|_: &std::io::Error| Decision::Stop);
    /// assert!(r.call(|| std::fs::read("/no/such/file")).is_err());
    /// ```
    pub fn on<C2>(self, on: C2) -> Retry<C2, N, G, B, T, L, D, O, Gd> {
        self.map_hooks(|h| Hooks {
            on,
            notify: h.notify,
            give_up: h.give_up,
            budget: h.budget,
            trace: h.trace,
            on_ok: h.on_ok,
            guard: h.guard,
        })
    }

    /// A hook called before each wait: a [`Notify`], usually a closure `Fn(&E, &RetryEvent)`.
    ///
    /// ```
    /// use retry_jitter::{Policy, Retry, RetryEvent};
    /// use std::time::Duration;
    /// let r = Retry::new(Policy::new().with_attempts(2).with_base(Duration::ZERO))
    ///     .notify(|e: &&str, ev: &RetryEvent| eprintln!("{} failed: {e}", ev.function));
    /// assert_eq!(r.call(|| Err::<(), _>("down")), Err("down"));
    /// ```
    pub fn notify<N2>(self, notify: N2) -> Retry<C, N2, G, B, T, L, D, O, Gd> {
        self.map_hooks(|h| Hooks {
            on: h.on,
            notify,
            give_up: h.give_up,
            budget: h.budget,
            trace: h.trace,
            on_ok: h.on_ok,
            guard: h.guard,
        })
    }

    /// A hook called once when retrying ends with an error, with the reason: a
    /// [`GiveUpHook`], usually a closure `Fn(&E, &GiveUp)`.
    ///
    /// ```
    /// use retry_jitter::{GiveUp, GiveUpReason, Policy, Retry};
    /// let r = Retry::new(Policy::default())
    ///     .on(|_: &&str| false)
    ///     .give_up(|_: &&str, g: &GiveUp| assert_eq!(g.reason, GiveUpReason::Stopped));
    /// assert_eq!(r.call(|| Err::<(), _>("fatal")), Err("fatal"));
    /// ```
    pub fn give_up<G2>(self, give_up: G2) -> Retry<C, N, G2, B, T, L, D, O, Gd> {
        self.map_hooks(|h| Hooks {
            on: h.on,
            notify: h.notify,
            give_up,
            budget: h.budget,
            trace: h.trace,
            on_ok: h.on_ok,
            guard: h.guard,
        })
    }

    /// Share a budget with every other call that uses it: a [`RetryBudget`](crate::RetryBudget),
    /// or any [`SharedBudget`].
    ///
    /// ```
    /// use retry_jitter::{Policy, Retry, RetryBudget};
    /// static BUDGET: RetryBudget = RetryBudget::new(0);
    /// let mut calls = 0;
    /// let r = Retry::new(Policy::default()).budget(&BUDGET);
    /// let _ = r.call(|| { calls += 1; Err::<(), _>("down") });
    /// assert_eq!(calls, 1); // an empty budget: no retry
    /// ```
    pub fn budget<S: SharedBudget>(self, budget: &S) -> Retry<C, N, G, &S, T, L, D, O, Gd> {
        self.map_hooks(|h| Hooks {
            on: h.on,
            notify: h.notify,
            give_up: h.give_up,
            budget,
            trace: h.trace,
            on_ok: h.on_ok,
            guard: h.guard,
        })
    }

    /// Trace each retry and each give-up as an event at `level` (feature `tracing`). The error
    /// is not part of these events (a closure API call knows nothing of its type); `#[retry]`
    /// adds it.
    ///
    /// ```
    /// use retry_jitter::{Policy, Retry};
    /// let r = Retry::new(Policy::default()).trace(tracing::Level::WARN);
    /// # let _ = r;
    /// ```
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn trace(
        self,
        level: tracing::Level,
    ) -> Retry<C, N, G, B, crate::run::hooks::Tracer<crate::run::hooks::Unrendered>, L, D, O, Gd>
    {
        self.map_hooks(|h| Hooks {
            on: h.on,
            notify: h.notify,
            give_up: h.give_up,
            budget: h.budget,
            trace: crate::run::hooks::tracer(level, crate::run::hooks::Unrendered),
            on_ok: h.on_ok,
            guard: h.guard,
        })
    }

    /// The same retry with other hooks.
    fn map_hooks<C2, N2, G2, B2, T2, O2>(
        self,
        f: impl FnOnce(Hooks<C, N, G, B, T, O, Gd>) -> Hooks<C2, N2, G2, B2, T2, O2, Gd>,
    ) -> Retry<C2, N2, G2, B2, T2, L, D, O2, Gd> {
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
    /// use retry_jitter::{Policy, Retry};
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
    pub fn timeout(self, timeout: Duration) -> Retry<C, N, G, B, T, Duration, D, O, Gd> {
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
    /// use retry_jitter::{hedge::Hedge, Policy, Retry};
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
    pub fn hedge(self, hedge: Hedge) -> Retry<C, N, G, B, T, L, Hedge, O, Gd> {
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
    /// use retry_jitter::{Policy, Retry};
    /// let r = Retry::new(Policy::default()).with_name("load_config");
    /// # let _ = r;
    /// ```
    pub const fn with_name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// Ask `throttle` before every attempt (the first, retries, hedges): an attempt it rejects
    /// is not made, and the call ends with `E::from(Throttled)`
    /// ([`GiveUpReason::Throttled`](crate::GiveUpReason::Throttled)). See [`AdaptiveThrottle`].
    ///
    /// ```
    /// use retry_jitter::{AdaptiveThrottle, Policy, Retry};
    /// use std::time::Duration;
    /// static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(60));
    /// let r = Retry::new(Policy::new().with_attempts(2).with_base(Duration::ZERO)).throttle(&THROTTLE);
    /// assert_eq!(r.call(|| Ok::<_, std::io::Error>(1)).unwrap(), 1);
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn throttle(
        self,
        throttle: &AdaptiveThrottle,
    ) -> Retry<C, N, G, B, T, L, D, O, (Gd::Breaker, ThrottleGuard<'_, IntoErr>)>
    where
        Gd: GuardPair,
    {
        let breaker = self.hooks.guard.breaker();
        self.with_guard((breaker, ThrottleGuard::new(throttle, IntoErr)))
    }

    /// Count this call's outcome in `breaker`, and while it is open fail at once with
    /// `E::from(CircuitOpen)` without calling the operation
    /// ([`GiveUpReason::CircuitOpen`](crate::GiveUpReason::CircuitOpen)). See [`CircuitBreaker`].
    ///
    /// ```
    /// use retry_jitter::{CircuitBreaker, Policy, Retry};
    /// use std::time::Duration;
    /// static BREAKER: CircuitBreaker = CircuitBreaker::new(1.0, 1, Duration::from_secs(10), Duration::from_secs(60));
    /// let r = Retry::new(Policy::new().with_attempts(1)).breaker(&BREAKER);
    /// let down = || Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
    /// assert_eq!(r.call(down).unwrap_err().kind(), std::io::ErrorKind::ConnectionRefused);
    /// // One failed call of one: the breaker is open, the next call is refused at once.
    /// let refused = r.call(|| Ok::<_, std::io::Error>(())).unwrap_err();
    /// assert!(refused.get_ref().is_some_and(|e| e.is::<retry_jitter::CircuitOpen>()));
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn breaker(
        self,
        breaker: &CircuitBreaker,
    ) -> Retry<C, N, G, B, T, L, D, O, (BreakerGuard<'_, IntoErr>, Gd::Throttle)>
    where
        Gd: GuardPair,
    {
        let throttle = self.hooks.guard.throttle();
        self.with_guard((BreakerGuard::new(breaker, IntoErr), throttle))
    }

    /// The same retry with other guards.
    fn with_guard<Gd2>(self, guard: Gd2) -> Retry<C, N, G, B, T, L, D, O, Gd2> {
        Retry {
            policy: self.policy,
            hooks: Hooks {
                on: self.hooks.on,
                notify: self.hooks.notify,
                give_up: self.hooks.give_up,
                budget: self.hooks.budget,
                trace: self.hooks.trace,
                on_ok: self.hooks.on_ok,
                guard,
            },
            name: self.name,
            timeout: self.timeout,
            hedge: self.hedge,
        }
    }

    /// Retry an `Ok` value too (poll until ready): `on_ok` is a [`ClassifyOk`], usually a
    /// closure `Fn(&T) -> D` where `D: Into<Decision>` (`true` = try again). A value it
    /// retries is treated like a retryable error (the same backoff, attempts, deadline, budget
    /// and hedging; [`Decision::RetryAfter`](crate::Decision::RetryAfter) is a hint); when
    /// retrying ends on one, that last `Ok` is returned.
    ///
    /// ```
    /// use retry_jitter::{Policy, Retry};
    /// use std::time::Duration;
    ///
    /// let mut polls = 0;
    /// let status = Retry::new(Policy::new().with_attempts(10).with_base(Duration::ZERO))
    ///     .on_ok(|status: &&str| *status == "pending")
    ///     .call(|| { polls += 1; Ok::<_, ()>(if polls < 3 { "pending" } else { "done" }) });
    /// assert_eq!((status, polls), (Ok("done"), 3));
    /// ```
    pub fn on_ok<O2>(self, on_ok: O2) -> Retry<C, N, G, B, T, L, D, O2, Gd> {
        self.map_hooks(|h| Hooks {
            on: h.on,
            notify: h.notify,
            give_up: h.give_up,
            budget: h.budget,
            trace: h.trace,
            on_ok,
            guard: h.guard,
        })
    }

    /// Call the future-making `op` until its future succeeds or retrying ends, sleeping the
    /// waits with `tokio::time::sleep` (and measuring `max_elapsed` on tokio's clock).
    ///
    /// The future is `Send` when `op`'s futures are and `V` and `E` are: the last outcome is
    /// kept through each wait, to be returned should the policy's `max_elapsed` pass during it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_jitter::{Policy, Retry};
    /// let r = Retry::new(Policy::default());
    /// assert_eq!(r.call_async(|| async { Ok::<_, ()>(42) }).await, Ok(42));
    /// # }
    /// ```
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub async fn call_async<V, E, F, Fut>(&self, mut op: F) -> Result<V, E>
    where
        C: Classify<E>,
        N: Notify<E>,
        G: GiveUpHook<E>,
        B: Budget,
        T: Trace<Result<V, E>>,
        O: ClassifyOk<V>,
        Gd: Guard<Result<V, E>>,
        L: AttemptTimeout<E>,
        D: HedgeWith,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<V, E>>,
    {
        let (sleep, clock) = (crate::sleep::tokio_sleep, crate::sleep::tokio_now);
        self.run_async(sleep, clock, |_| op()).await
    }

    /// [`call_async`](Retry::call_async), handing `op` the 1-based number of the attempt it
    /// makes (each hedge its own): to fail over to the next endpoint, tag an attempt in a header
    /// or log it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_jitter::{Policy, Retry};
    /// let endpoints = ["http://a.invalid", "http://b.invalid"];
    /// let r = Retry::new(Policy::new().with_attempts(3));
    /// let used = r.call_async_with_attempt(|n| async move {
    ///     let endpoint = endpoints[(n - 1) as usize % endpoints.len()];
    ///     if n < 2 { Err(endpoint) } else { Ok(endpoint) }
    /// }).await;
    /// assert_eq!(used, Ok("http://b.invalid"));
    /// # }
    /// ```
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub async fn call_async_with_attempt<V, E, F, Fut>(&self, op: F) -> Result<V, E>
    where
        C: Classify<E>,
        N: Notify<E>,
        G: GiveUpHook<E>,
        B: Budget,
        T: Trace<Result<V, E>>,
        O: ClassifyOk<V>,
        Gd: Guard<Result<V, E>>,
        L: AttemptTimeout<E>,
        D: HedgeWith,
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<V, E>>,
    {
        let (sleep, clock) = (crate::sleep::tokio_sleep, crate::sleep::tokio_now);
        self.run_async(sleep, clock, op).await
    }

    /// [`call_async`](Retry::call_async) on any runtime: `sleep` is the timer, `clock` the
    /// clock `max_elapsed` is measured on (use [`sleep::now`](crate::sleep::now) unless the
    /// timer has a clock of its own).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_jitter::{sleep, Policy, Retry};
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
        sleep: S,
        clock: Clock,
        mut op: F,
    ) -> Result<V, E>
    where
        C: Classify<E>,
        N: Notify<E>,
        G: GiveUpHook<E>,
        B: Budget,
        T: Trace<Result<V, E>>,
        O: ClassifyOk<V>,
        Gd: Guard<Result<V, E>>,
        L: AttemptTimeout<E>,
        D: HedgeWith,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<V, E>>,
        S: FnMut(Duration) -> SFut,
        SFut: Future<Output = ()>,
    {
        self.run_async(sleep, clock, |_| op()).await
    }

    /// The async loop every `call_async*` runs: `op` is handed the attempt's number.
    async fn run_async<V, E, F, Fut, S, SFut>(
        &self,
        mut sleep: S,
        clock: Clock,
        mut op: F,
    ) -> Result<V, E>
    where
        C: Classify<E>,
        N: Notify<E>,
        G: GiveUpHook<E>,
        B: Budget,
        T: Trace<Result<V, E>>,
        O: ClassifyOk<V>,
        Gd: Guard<Result<V, E>>,
        L: AttemptTimeout<E>,
        D: HedgeWith,
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<V, E>>,
        S: FnMut(Duration) -> SFut,
        SFut: Future<Output = ()>,
    {
        let start = start_time(&self.policy, clock);
        // The policy borrowed: the hedged entry keeps its address until the loop starts.
        let call = Started {
            policy: &self.policy,
            clock,
            start,
        };
        if let Some(hedge) = self.hedge.hedge() {
            let timeout = self
                .timeout
                .limit()
                .map(|(t, make_error)| (t, move |timed_out| Err(make_error(timed_out))));
            let (hooks, name) = (&self.hooks, self.name);
            return Loop::hedged(call, hooks, name, hedge, timeout, sleep, op, None).await;
        }
        let mut state = LoopState::<Result<V, E>>::new();
        loop {
            if let ControlFlow::Break(refused) = state.admit(&self.hooks, self.name, clock) {
                return refused;
            }
            let attempt = state.attempt();
            let (outcome, cut) = match self.timeout.limit() {
                None => (op(attempt).await, false),
                Some((timeout, timed_out)) => {
                    let Limit { duration, deadline } = Limit::of(timeout, call.owned());
                    match Race::new(op(attempt), sleep(duration), duration, clock).await {
                        Ok(outcome) => (outcome, false),
                        Err(t) => (Err(timed_out(t)), deadline),
                    }
                }
            };
            let verdict = verdict(&outcome, &self.hooks.on_ok);
            if verdict.accepted() {
                state.succeeded_with(&self.hooks, self.name, clock);
                return outcome;
            }
            // The outcome is gone before the wait: only the last one is kept through it,
            // where the policy has a deadline that may end the call after it.
            let (wait, last) =
                match state.failed(call, outcome, verdict, &self.hooks, self.name, cut) {
                    ControlFlow::Break(outcome) => return outcome,
                    ControlFlow::Continue((delay, last)) => (sleep_boxed(delay, &mut sleep), last),
                };
            wait.await;
            if let ControlFlow::Break(outcome) = state.resumed(last, &self.hooks, self.name) {
                return outcome;
            }
        }
    }
}

impl<C, N, G, B, T, O, Gd> Retry<C, N, G, B, T, Unset, Unset, O, Gd> {
    /// Call `op` until it succeeds or retrying ends, sleeping the waits with
    /// [`std::thread::sleep`].
    ///
    /// ```
    /// use retry_jitter::{Policy, Retry};
    /// let r = Retry::new(Policy::default());
    /// assert_eq!(r.call(|| Ok::<_, ()>(42)), Ok(42));
    /// ```
    pub fn call<V, E>(&self, mut op: impl FnMut() -> Result<V, E>) -> Result<V, E>
    where
        C: Classify<E>,
        N: Notify<E>,
        G: GiveUpHook<E>,
        B: Budget,
        T: Trace<Result<V, E>>,
        O: ClassifyOk<V>,
        Gd: Guard<Result<V, E>>,
    {
        run_blocking(self.policy, &self.hooks, self.name, |_| op())
    }

    /// [`call`](Retry::call), handing `op` the 1-based number of the attempt it makes.
    ///
    /// ```
    /// use retry_jitter::{Policy, Retry};
    /// use std::time::Duration;
    ///
    /// let mut seen = Vec::new();
    /// let r = Retry::new(Policy::new().with_attempts(3).with_base(Duration::ZERO));
    /// let out = r.call_with_attempt(|n| { seen.push(n); if n < 3 { Err(n) } else { Ok(n) } });
    /// assert_eq!((out, seen), (Ok(3), vec![1, 2, 3]));
    /// ```
    pub fn call_with_attempt<V, E>(&self, op: impl FnMut(u32) -> Result<V, E>) -> Result<V, E>
    where
        C: Classify<E>,
        N: Notify<E>,
        G: GiveUpHook<E>,
        B: Budget,
        T: Trace<Result<V, E>>,
        O: ClassifyOk<V>,
        Gd: Guard<Result<V, E>>,
    {
        run_blocking(self.policy, &self.hooks, self.name, op)
    }
}

/// The closure API's guards: a breaker slot and a throttle slot, each set once.
pub trait GuardPair {
    /// The breaker slot's guard.
    type Breaker;
    /// The throttle slot's guard.
    type Throttle;
    /// The breaker slot.
    fn breaker(&self) -> Self::Breaker;
    /// The throttle slot.
    fn throttle(&self) -> Self::Throttle;
}

impl<A: Copy, B: Copy> GuardPair for (A, B) {
    type Breaker = A;
    type Throttle = B;
    fn breaker(&self) -> A {
        self.0
    }
    fn throttle(&self) -> B {
        self.1
    }
}

#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
impl<C, N, G, B, T, L, D, O> Retry<C, N, G, B, T, L, D, O, (Unset, Unset)> {
    /// The same retry with a single call: how the middleware faces send a request whose body
    /// cannot be sent twice (over the replay limit, or streaming), keeping its timeout.
    pub(crate) fn once(mut self) -> Self {
        self.policy = self.policy.with_attempts(1);
        self
    }

    /// The same retry, hedged only where `hedge` holds: a face's request that may not be sent
    /// twice (a write without a key) is never hedged.
    pub(crate) fn hedge_if(self, hedge: bool) -> Retry<C, N, G, B, T, L, Option<D>, O> {
        Retry {
            policy: self.policy,
            hooks: self.hooks,
            name: self.name,
            timeout: self.timeout,
            hedge: hedge.then_some(self.hedge),
        }
    }

    /// Whether a face may run the first attempt itself and enter
    /// [`call_async`](Retry::call_async) only once it failed: nothing of the loop's acts before
    /// or during a first attempt (no timeout races it, no hedge starts beside it, no
    /// `max_elapsed` reads the clock before it; no guard can refuse it: the faces set none).
    #[cfg(feature = "tower")]
    pub(crate) fn first_attempt_alone<E>(&self) -> bool
    where
        L: AttemptTimeout<E>,
        D: HedgeWith,
    {
        self.timeout.limit().is_none()
            && self.hedge.hedge().is_none()
            && self.policy.max_elapsed().is_none()
    }

    /// The limits of a call beginning now, for the headers its attempts carry across a hop.
    #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
    pub(crate) fn hop_limits<E>(&self) -> crate::middleware::HopLimits
    where
        L: AttemptTimeout<E>,
    {
        let timeout = self.timeout.limit().map(|(timeout, _)| timeout);
        crate::middleware::HopLimits::start(timeout, self.policy.max_elapsed())
    }

    /// What the loop does when a first attempt succeeds (the budget's due), for a face that
    /// ran that attempt itself ([`first_attempt_alone`](Retry::first_attempt_alone)).
    #[cfg(feature = "tower")]
    pub(crate) fn first_succeeded<V, E>(&self)
    where
        B: Budget,
    {
        self.hooks
            .first_try::<Result<V, E>>(crate::sleep::tokio_now, self.name);
    }
}
