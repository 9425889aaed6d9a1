//! The closure API: retry any call, for call sites `#[retry]` cannot annotate, on the loop
//! `#[retry]` runs (`run::loops`).

use core::time::Duration;

use crate::fleet::{AdaptiveThrottle, CircuitBreaker, OwnBudget, SharedBudget};
use crate::policy::{AcceptOk, Policy, RetryAll, Unset};
use crate::run::guard::{BreakerGuard, IntoErr, ThrottleGuard};
use crate::run::hedge::Hedge;
use crate::run::hooks::Hooks;

/// Writes one of [`Retry`]'s `call*` methods with the loop's bounds on its parts.
///
/// The bounds are stated here once, added to the ones it writes in `where { … }`:
///
/// - `on` classifies `E`; `on_ok` classifies `V`.
/// - `notify` and `give_up` take `&E`.
/// - The trace and the guards see `Result<V, E>`.
/// - An `async fn`'s timeout makes an `E`, its hedge is one, and its async hooks take `&E`.
/// - A blocking method's async hooks are `Unset`, and it awaits nothing.
///
/// A macro, not a trait that bundles them: Rust has no bound aliases.
///
/// A trait's bounds reach a generic body only through its associated types.
///
/// A generic caller that boxes their futures as `Send` (the tower and reqwest-middleware
/// faces) cannot prove them `Send` ("implementation of … is not general enough").
///
/// Spelled out on each method, a hook that does not fit is reported at the bound it misses.
macro_rules! with_loop_bounds {
    (
        @write [$($async:tt)?] $(#[$attr:meta])* $vis:vis fn $name:ident<$($g:ident),*>($($params:tt)*)
        -> $ret:ty where { $($extra:tt)* } $body:block
    ) => {
        $(#[$attr])*
        $vis $($async)? fn $name<$($g),*>($($params)*) -> $ret
        where
            C: $crate::policy::Classify<E>,
            N: $crate::run::hooks::Notify<E>,
            G: $crate::run::hooks::GiveUpHook<E>,
            B: $crate::fleet::Budget,
            T: $crate::run::trace::Trace<Result<V, E>>,
            O: $crate::policy::ClassifyOk<V>,
            Gd: $crate::run::guard::Guard<Result<V, E>> + $crate::retry::stats::StatsOf,
            $($extra)*
        $body
    };
    (
        $(#[$attr:meta])*
        $vis:vis async fn $name:ident<$($g:ident),*>($($params:tt)*) -> $ret:ty
        where { $($extra:tt)* }
        $body:block
    ) => {
        with_loop_bounds! {
            @write [async] $(#[$attr])* $vis fn $name<$($g),*>($($params)*) -> $ret
            where {
                L: $crate::run::timeout::AttemptTimeout<E>,
                D: $crate::run::hedge::HedgeWith,
                <Gd as $crate::retry::stats::StatsOf>::Awaited: $crate::run::awaiting::AwaitedHooks<E>,
                $($extra)*
            }
            $body
        }
    };
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident<$($g:ident),*>($($params:tt)*) -> $ret:ty
        where { $($extra:tt)* }
        $body:block
    ) => {
        with_loop_bounds! {
            @write [] $(#[$attr])* $vis fn $name<$($g),*>($($params)*) -> $ret
            where { $($extra)* }
            $body
        }
    };
}

mod awaiting;
mod call;
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
mod for_middleware;
mod guards;
mod stats;

#[cfg(feature = "tower")]
pub use for_middleware::Unguarded;
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
pub use for_middleware::{InResponse, PutsStats};
pub use guards::{Awaiting, Cancellable, GuardPair};
#[cfg(all(feature = "tonic", feature = "metrics"))]
pub use stats::AlsoStats;
pub use stats::{StatsOf, WithStats};

/// Retries a closure under a [`Policy`]: the same loop `#[retry]` expands to.
///
/// Retries every error unless [`on`](Retry::on) says otherwise.
///
/// Returns the **last** error, unchanged, when retrying ends.
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
/// A `Retry` has a retry budget of its own, shared with its clones.
///
/// It is an [`OwnBudget`]: a [`DefaultBudget`](crate::budget::DefaultBudget), 20% of its calls over
/// 10 s plus 10 retries a second.
///
/// Make it once and reuse or clone it, so its calls share the budget.
///
/// One made per call has a budget per call, which bounds nothing.
///
/// [`budget`](Retry::budget) shares another instead; [`budget_none`](Retry::budget_none) has
/// none.
///
/// Retrying every error by default is where `Retry` differs from `#[retry]`.
///
/// The attribute sees the function's error type where it is written.
///
/// Without `on`, it classifies an error type that implements [`Transient`](crate::Transient)
/// by it.
///
/// `Retry::new` knows nothing of the error type until `call`, which is generic in it.
///
/// It cannot choose without asking every error type for a bound: it retries every error.
///
/// Write `.on(retry_jitter::transient)` for the attribute's behaviour:
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
///
/// Its type parameters are written by its setters, one letter each, the same in every `impl`:
///
/// - `C`: [`on`](Retry::on).
/// - `N`: [`notify`](Retry::notify).
/// - `G`: [`give_up`](Retry::give_up).
/// - `B`: [`budget`](Retry::budget).
/// - `T`: [`trace`](Retry::trace).
/// - `L`: [`timeout`](Retry::timeout).
/// - `D`: [`hedge`](Retry::hedge).
/// - `O`: [`on_ok`](Retry::on_ok).
/// - `Gd`, the guards: [`breaker`](Retry::breaker), [`throttle`](Retry::throttle),
///   [`cancel`](Retry::cancel), [`stats`](Retry::stats).
#[derive(Clone, Copy, Debug)]
#[must_use = "a Retry does nothing until `call` or `call_async`"]
pub struct Retry<
    C = RetryAll,
    N = Unset,
    G = Unset,
    B = OwnBudget,
    T = Unset,
    L = Unset,
    D = Unset,
    O = AcceptOk,
    Gd = (Unset, Unset),
> {
    policy: Policy,
    hooks: Hooks<C, N, G, B, T, O, Gd>,
    name: &'static str,
    timeout: L,
    hedge: D,
}

impl Retry {
    /// Retry every error under `policy`.
    ///
    /// `.on(retry_jitter::transient)` retries only the transient ones, as `#[retry]` does by
    /// default for a `Transient` error type.
    ///
    /// ```
    /// use retry_jitter::{Policy, Retry};
    /// let r = Retry::new(Policy::new().with_attempts(1));
    /// assert_eq!(r.call(|| Err::<(), _>(1)), Err(1));
    /// ```
    pub fn new(policy: Policy) -> Self {
        Retry {
            policy,
            hooks: Hooks {
                on: RetryAll,
                notify: Unset,
                give_up: Unset,
                budget: OwnBudget::default(),
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
    /// Which errors are retried: a [`Classify`](crate::hooks::Classify).
    ///
    /// Usually a closure `Fn(&E) -> D` where `D: Into<Decision>` (annotate its argument's type),
    /// or [`transient`](crate::transient).
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

    /// A hook called before each wait: a [`Notify`](crate::hooks::Notify), usually a closure `Fn(&E, &RetryEvent)`.
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

    /// A hook called once when retrying ends with an error, with the reason.
    ///
    /// A [`GiveUpHook`](crate::hooks::GiveUpHook), usually a closure `Fn(&E, &GiveUp)`.
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

    /// No budget at all: every call makes its attempts whatever the others do.
    ///
    /// Otherwise a `Retry` has its own [`DefaultBudget`](crate::budget::DefaultBudget), shared with its
    /// clones: 20% of its calls over 10 s, plus 10 retries a second.
    ///
    /// ```
    /// use retry_jitter::{Policy, Retry};
    /// use std::time::Duration;
    /// let r = Retry::new(Policy::new().with_base(Duration::ZERO)).budget_none();
    /// let mut calls = 0;
    /// for _ in 0..100 {
    ///     let _ = r.call(|| { calls += 1; Err::<(), _>("down") });
    /// }
    /// assert_eq!(calls, 500); // 5 attempts each: nothing bounds them
    /// ```
    pub fn budget_none(self) -> Retry<C, N, G, Unset, T, L, D, O, Gd> {
        self.map_hooks(|h| Hooks {
            on: h.on,
            notify: h.notify,
            give_up: h.give_up,
            budget: Unset,
            trace: h.trace,
            on_ok: h.on_ok,
            guard: h.guard,
        })
    }

    /// Trace each retry and each give-up as an event at `level` (feature `tracing`).
    ///
    /// The error is not part of these events: a closure API call knows nothing of its type.
    ///
    /// `#[retry]` adds it.
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

    /// Limit each attempt of [`call_async`](Retry::call_async) to `timeout`.
    ///
    /// An attempt still running then is dropped and fails with `E::from(TimedOut)`, classified
    /// like any other error.
    ///
    /// With a `max_elapsed` in the policy, each attempt is also limited to the time left before
    /// it.
    ///
    /// An attempt cut by that deadline ends the call
    /// ([`GiveUpReason::Elapsed`](crate::GiveUpReason::Elapsed)).
    ///
    /// A sync call cannot be cut: a `Retry` with a timeout has no [`call`](Retry::call).
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
        self.with_timeout(timeout)
    }

    /// The same settings with `timeout` of any limit type (`Duration`, `Option<Duration>`).
    pub(crate) fn with_timeout<L2>(self, timeout: L2) -> Retry<C, N, G, B, T, L2, D, O, Gd> {
        Retry {
            policy: self.policy,
            hooks: self.hooks,
            name: self.name,
            timeout,
            hedge: self.hedge,
        }
    }

    /// Hedge each call of [`call_async`](Retry::call_async). See [`hedge`](crate::hedge).
    ///
    /// When the latest attempt has not answered within `hedge`, the next starts beside it.
    ///
    /// `hedge` is [`Hedge::After`] a delay, or a [`Hedge::Percentile`] of recent latency.
    ///
    /// The first success wins and the others are dropped.
    ///
    /// At most the policy's `attempts` calls in all.
    ///
    /// A retryable error waits the usual backoff only when no other attempt runs.
    ///
    /// A sync call cannot be hedged: a `Retry` with a hedge has no [`call`](Retry::call).
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
        self.with_hedge(hedge)
    }

    /// The same settings with `hedge` of any hedging type ([`Hedge`], `Option<Hedge>`).
    pub(crate) fn with_hedge<D2>(self, hedge: D2) -> Retry<C, N, G, B, T, L, D2, O, Gd> {
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

    /// Ask `throttle` before every attempt: the first, retries, hedges. See [`AdaptiveThrottle`].
    ///
    /// An attempt it rejects is not made, and the call ends with `E::from(Throttled)`
    /// ([`GiveUpReason::Throttled`](crate::GiveUpReason::Throttled)).
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
    ) -> Retry<C, N, G, B, T, L, D, O, Gd::With<Gd::Breaker, ThrottleGuard<'_, IntoErr>>>
    where
        Gd: GuardPair,
    {
        self.map_guard(|guard| {
            let breaker = guard.breaker();
            guard.with(breaker, ThrottleGuard::new(throttle, IntoErr))
        })
    }

    /// Count this call's outcome in `breaker`. See [`CircuitBreaker`].
    ///
    /// While it is open, fail at once with `E::from(CircuitOpen)`, without calling the operation
    /// ([`GiveUpReason::CircuitOpen`](crate::GiveUpReason::CircuitOpen)).
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
    ) -> Retry<C, N, G, B, T, L, D, O, Gd::With<BreakerGuard<'_, IntoErr>, Gd::Throttle>>
    where
        Gd: GuardPair,
    {
        self.map_guard(|guard| {
            let throttle = guard.throttle();
            guard.with(BreakerGuard::new(breaker, IntoErr), throttle)
        })
    }

    /// The same retry, its guards made into others by `f`: a breaker, a throttle, a cancel
    /// token or a `stats` hook added (the gRPC layer adds its A96 figures to its user's this
    /// way).
    ///
    /// The one place the other fields are carried over.
    pub(crate) fn map_guard<Gd2>(
        self,
        f: impl FnOnce(Gd) -> Gd2,
    ) -> Retry<C, N, G, B, T, L, D, O, Gd2> {
        Retry {
            policy: self.policy,
            hooks: Hooks {
                on: self.hooks.on,
                notify: self.hooks.notify,
                give_up: self.hooks.give_up,
                budget: self.hooks.budget,
                trace: self.hooks.trace,
                on_ok: self.hooks.on_ok,
                guard: f(self.hooks.guard),
            },
            name: self.name,
            timeout: self.timeout,
            hedge: self.hedge,
        }
    }

    /// Retry an `Ok` value too: poll until ready.
    ///
    /// `on_ok` is a [`ClassifyOk`](crate::hooks::ClassifyOk), usually a closure `Fn(&T) -> D`
    /// where `D: Into<Decision>` (`true` = try again).
    ///
    /// A value it retries is treated like a retryable error: the same backoff, attempts,
    /// deadline, budget and hedging.
    ///
    /// [`Decision::RetryAfter`](crate::Decision::RetryAfter) is a hint.
    ///
    /// When retrying ends on such a value, that last `Ok` is returned.
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
}
