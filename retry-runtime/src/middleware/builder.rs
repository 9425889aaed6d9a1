//! The builder `RetryLayer` and `RetryMiddleware` share.
//!
//! It holds the loop's settings and the classifiers, their setters written once.
//!
//! [`RetryLayer`](crate::tower::RetryLayer) and
//! [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware) are this type.
//!
//! In each, `F` holds the settings only it has (`LayerOnly`, `MiddlewareOnly`).

use core::time::Duration;

use std::sync::Arc;

use http::HeaderName;

use super::failure::FailedAsync;
use super::hops::Hops;
use super::writes::Writes;
use crate::fleet::{AdaptiveThrottle, CircuitBreaker};
use crate::fleet::{HostBudgets, SharedBudget};
use crate::hedge::Hedge;
use crate::http::Failed;
use crate::policy::Unset;
use crate::policy::{AcceptOk, RetryAll};
use crate::policy::{CancelToken, GiveUp, RetryEvent, RetryStats};
use crate::retry::{Cancellable, GuardPair, InResponse, WithStats};
use crate::run::awaiting::{AsyncHook, HookFuture, Slots};
use crate::run::guard::{BreakerGuard, IntoErr, ThrottleGuard};
use crate::{Policy, Retry};

/// The settings of a retry middleware: the layer or the middleware.
///
/// They hold the loop's: [`Retry`]'s policy, budget, timeout, hedge, name.
///
/// `C` and `O` are the error and response classifiers.
///
/// `F` holds what only the layer or only the middleware has.
///
/// Named through its aliases, [`RetryLayer`](crate::tower::RetryLayer) and
/// [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware).
///
/// The aliases add their constructors.
///
/// ```
/// # #[cfg(feature = "tower")] {
/// use retry_jitter::tower::RetryLayer;
/// use retry_jitter::{Policy, RetryBudget};
/// use std::time::Duration;
///
/// static BUDGET: RetryBudget = RetryBudget::new(500);
/// let layer = RetryLayer::new(Policy::default())
///     .budget(&BUDGET)
///     .timeout(Duration::from_secs(2))
///     .with_name("inventory");
/// # let _ = layer;
/// # }
/// ```
///
/// Its type parameters:
///
/// - `F`: what only one middleware has.
/// - `C`: the error classifier ([`on`](RetryBuilder::on)).
/// - `O`: the response classifier ([`on_ok`](RetryBuilder::on_ok)).
/// - `R`: the loop's settings, a [`Retry`] whose parameters the other setters write.
#[derive(Clone, Debug)]
#[must_use = "a retry middleware does nothing until it wraps a service or joins a client"]
pub struct RetryBuilder<F, C, O, R = Settings> {
    /// The loop's settings.
    ///
    /// Their classifiers are set per call, from `on` and `on_ok`.
    pub(super) retry: R,
    pub(super) on: C,
    pub(super) on_ok: O,
    /// Which requests may be sent twice.
    pub(super) writes: Writes,
    /// The level of the events the middleware's calls emit.
    #[cfg(feature = "tracing")]
    pub(super) level: tracing::Level,
    pub(super) only: F,
}

// The setters' types are the settings they change.
//
// Those types are spelled out, one letter each.
#[allow(clippy::type_complexity)]
impl<F, C, O, B, L, D, Gd, N, G> RetryBuilder<F, C, O, Settings<B, L, D, Gd, N, G>> {
    /// Which errors are retried: a [`Classify`](crate::hooks::Classify) of the error.
    ///
    /// - `tower`: [`BoxError`](crate::tower::BoxError), the inner service's error boxed.
    ///   A closure may downcast it.
    /// - `reqwest-middleware`: `reqwest_middleware::Error`.
    ///
    /// Usually a closure `Fn(&Error) -> D` where `D: Into<Decision>`.
    ///
    /// ```
    /// # #[cfg(all(feature = "tower", feature = "reqwest-middleware"))] {
    /// use retry_jitter::reqwest_middleware::RetryMiddleware;
    /// use retry_jitter::tower::{BoxError, RetryLayer};
    /// use retry_jitter::Policy;
    ///
    /// // Retry only the inner service's `std::io::Error`s.
    /// let layer = RetryLayer::new(Policy::default())
    ///     .on(|e: &BoxError| e.downcast_ref::<std::io::Error>().is_some());
    /// let m = RetryMiddleware::new(Policy::default())
    ///     .on(|e: &reqwest_middleware::Error| e.is_connect());
    /// # let _ = (layer, m);
    /// # }
    /// ```
    pub fn on<C2>(self, on: C2) -> RetryBuilder<F, C2, O, Settings<B, L, D, Gd, N, G>> {
        self.with_classifiers(|_, on_ok| (on, on_ok))
    }

    /// Which responses are retried, in place of the default, [`ByStatus`](crate::tower::ByStatus).
    ///
    /// A [`ClassifyOk`](crate::hooks::ClassifyOk) of the response.
    ///
    /// Usually a closure `Fn(&Response) -> D` where `D: Into<Decision>`.
    ///
    /// - `tower`: the inner service's response, an `http::Response<B>` for HTTP.
    /// - `reqwest-middleware`: `reqwest::Response`.
    ///
    /// A response this classifier retries is a poll.
    ///
    /// The middleware waits the backoff and sends the request again.
    ///
    /// When retrying ends on such a response, it is returned.
    ///
    /// Such a response is no failure: `notify` and `give_up` are not told.
    ///
    /// The breaker and throttle count it as answered.
    ///
    /// A response the default retries (a `503`, a `429`) is a failure to all four.
    ///
    /// ```
    /// # #[cfg(all(feature = "tower", feature = "reqwest-middleware"))] {
    /// use retry_jitter::reqwest_middleware::RetryMiddleware;
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    ///
    /// // Retry only 503s, ignoring Retry-After.
    /// let layer = RetryLayer::new(Policy::default())
    ///     .on_ok(|r: &http::Response<String>| r.status() == 503);
    /// let m = RetryMiddleware::new(Policy::default())
    ///     .on_ok(|r: &reqwest::Response| r.status() == 503);
    /// # let _ = (layer, m);
    /// # }
    /// ```
    pub fn on_ok<O2>(self, on_ok: O2) -> RetryBuilder<F, C, O2, Settings<B, L, D, Gd, N, G>> {
        self.with_classifiers(|on, _| (on, on_ok))
    }

    /// Share a `static` budget with every other call using it (see [`Retry::budget`]).
    ///
    /// It replaces the default for every request, whatever its host.
    ///
    /// The default is a budget per host ([`HostBudgets`]).
    ///
    /// Each host's retries are at most 20% of its calls over 10 s.
    ///
    /// Each host also gets 10 retries a second on top.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::{Policy, RetryBudget};
    /// static BUDGET: RetryBudget = RetryBudget::new(500);
    /// let layer = RetryLayer::new(Policy::default()).budget(&BUDGET);
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn budget<S: SharedBudget>(
        self,
        budget: &S,
    ) -> RetryBuilder<F, C, O, Settings<&S, L, D, Gd, N, G>> {
        self.with_retry(|retry| retry.budget(budget))
    }

    /// No budget at all.
    ///
    /// Every call makes all its attempts, whatever the others do.
    ///
    /// It replaces the default, a budget per host ([`HostBudgets`]).
    ///
    /// It suits a middleware whose retries are bounded elsewhere.
    ///
    /// Such bounds: a proxy's own budget, a caller of few calls.
    ///
    /// ```
    /// # #[cfg(all(feature = "tower", feature = "reqwest-middleware"))] {
    /// use retry_jitter::reqwest_middleware::RetryMiddleware;
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default()).budget_none();
    /// let m = RetryMiddleware::new(Policy::default()).budget_none();
    /// # let _ = (layer, m);
    /// # }
    /// ```
    pub fn budget_none(self) -> RetryBuilder<F, C, O, Settings<Unset, L, D, Gd, N, G>> {
        self.with_retry(Retry::budget_none)
    }

    /// A budget the middleware holds itself.
    ///
    /// Its clones and their services share it.
    ///
    /// `None`: no budget.
    ///
    /// A layer that builds its own budget gives it to its loops this way.
    ///
    /// gRPC's throttle of one channel is such a budget.
    #[cfg(feature = "tonic")]
    pub(crate) fn budget_owned<S: SharedBudget + Send>(
        self,
        budget: Option<Arc<S>>,
    ) -> RetryBuilder<F, C, O, Settings<Option<Arc<S>>, L, D, Gd, N, G>> {
        self.with_retry(|retry| retry.budget_by_host(budget))
    }

    /// Limit each attempt to `timeout` (see [`Retry::timeout`]).
    ///
    /// An attempt cut fails with [`TimedOut`](crate::TimedOut), and is retried.
    ///
    /// `reqwest-middleware`: the error is a middleware error whose source is `TimedOut`.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// use std::time::Duration;
    /// let layer = RetryLayer::new(Policy::default()).timeout(Duration::from_secs(1));
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn timeout(
        self,
        timeout: Duration,
    ) -> RetryBuilder<F, C, O, Settings<B, Duration, D, Gd, N, G>> {
        self.with_retry(|retry| retry.timeout(timeout))
    }

    /// Hedge each request (see [`Retry::hedge`]).
    ///
    /// A hedge is a second send.
    ///
    /// A request the write rule does not let send twice is never hedged.
    ///
    /// A `POST` or `PATCH` without a key is such a request.
    ///
    /// [`idempotent`](RetryBuilder::idempotent) lifts the rule.
    ///
    /// A request whose body cannot be sent again is never hedged either.
    ///
    /// A hedge of a request whose body is still being sent waits for it to be buffered.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::hedge::Hedge;
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// use std::time::Duration;
    /// let layer = RetryLayer::new(Policy::default()).hedge(Hedge::After(Duration::from_millis(50)));
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn hedge(self, hedge: Hedge) -> RetryBuilder<F, C, O, Settings<B, L, Hedge, Gd, N, G>> {
        self.with_retry(|retry| retry.hedge(hedge))
    }

    /// [`timeout`](RetryBuilder::timeout), or none (`None`), the type the same either way.
    #[cfg(feature = "tonic")]
    pub(crate) fn timeout_maybe(
        self,
        timeout: Option<Duration>,
    ) -> RetryBuilder<F, C, O, Settings<B, Option<Duration>, D, Gd, N, G>> {
        self.with_retry(|retry| retry.with_timeout(timeout))
    }

    /// The same settings under `policy`.
    ///
    /// The gRPC layer uses it to put a method's policy on the hooks its user set.
    #[cfg(feature = "tonic")]
    pub(crate) fn with_policy(self, policy: Policy) -> Self {
        self.with_retry(|retry| retry.with_policy(policy))
    }

    /// The same settings, their guards made into others by `f`.
    ///
    /// The gRPC layer uses it to add its A96 figures to its user's guards.
    #[cfg(feature = "tonic")]
    pub(crate) fn with_guards<Gd2>(
        self,
        f: impl FnOnce(Gd) -> Gd2,
    ) -> RetryBuilder<F, C, O, Settings<B, L, D, Gd2, N, G>> {
        self.with_retry(|retry| retry.map_guard(f))
    }

    /// [`hedge`](RetryBuilder::hedge), or not (`None`), the type the same either way.
    #[cfg(feature = "tonic")]
    pub(crate) fn hedge_maybe(
        self,
        hedge: Option<Hedge>,
    ) -> RetryBuilder<F, C, O, Settings<B, L, Option<Hedge>, Gd, N, G>> {
        self.with_retry(|retry| retry.hedge_maybe(hedge))
    }

    /// Vouch that every request through this middleware is safe to send again.
    ///
    /// A request's method then does not matter.
    ///
    /// A `POST` or `PATCH` is then retried like a `GET`, on the whole table.
    ///
    /// Without it (or [`idempotency_key`](RetryBuilder::idempotency_key)), the write rule holds.
    ///
    /// The rule covers a non-idempotent request without an `Idempotency-Key`.
    ///
    /// `X-Idempotency-Key` counts as a key too.
    ///
    /// Such a request is retried only on what proves it was not applied.
    ///
    /// An empty or blank key is none.
    ///
    /// The proofs: a failed connect, a stream the server refused.
    ///
    /// So are `408`, `425`, `429`, `503`, and the server's `x-should-retry: true`.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// // An API whose POSTs are lookups: safe to repeat.
    /// let layer = RetryLayer::new(Policy::default()).idempotent();
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn idempotent(mut self) -> Self {
        self.writes = Writes::Idempotent;
        self
    }

    /// Give a key to each non-idempotent request (`POST`, `PATCH`, …) without one.
    ///
    /// A key is an `Idempotency-Key` or `X-Idempotency-Key` header.
    ///
    /// The key is a random version-4 UUID.
    ///
    /// It comes from the operating system's entropy.
    ///
    /// It is the same on every attempt of a call.
    ///
    /// It is new for each call.
    ///
    /// Such a request is then retried on the whole table.
    ///
    /// The key lets the server apply it once.
    ///
    /// A key the caller set is kept as it is.
    ///
    /// An empty or blank one is no key.
    ///
    /// That header is replaced under its own name.
    ///
    /// A `GET` gets none.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// // A payments API that deduplicates by Idempotency-Key, as Stripe's does.
    /// let layer = RetryLayer::new(Policy::default()).idempotency_key();
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn idempotency_key(mut self) -> Self {
        self.writes = Writes::Keyed;
        self
    }

    /// Tell `hook` of each retry before its wait.
    ///
    /// `#[retry]`'s `notify` is told the same way.
    ///
    /// It is told what failed, and the [`RetryEvent`].
    ///
    /// What failed is [`Failed::Error`], the middleware's error, or [`Failed::Status`].
    ///
    /// [`Failed::Status`] is a response retried for its status or the server's word.
    ///
    /// A response a user's [`on_ok`](RetryBuilder::on_ok) retries is an answer.
    ///
    /// That retry is polling, so the hook is not told.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::http::Failed;
    /// use retry_jitter::tower::{BoxError, RetryLayer};
    /// use retry_jitter::{Policy, RetryEvent};
    /// let layer = RetryLayer::new(Policy::default()).notify(|f: &Failed<'_, BoxError>, ev: &RetryEvent| {
    ///     eprintln!("attempt {} failed ({f}), retry in {:?}", ev.attempt, ev.delay);
    /// });
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn notify<N2>(self, hook: N2) -> RetryBuilder<F, C, O, Settings<B, L, D, Gd, N2, G>>
    where
        F: ErrorOf,
        N2: Fn(&Failed<'_, F::Error>, &RetryEvent),
    {
        self.with_retry(|retry| retry.notify(hook))
    }

    /// Tell `hook` once, when retrying ends on a failure.
    ///
    /// The hook is told what failed and why retrying ended ([`GiveUp`]).
    ///
    /// `#[retry]`'s `give_up` is told the same way.
    ///
    /// A call ending on a response retried for its status gives up too.
    ///
    /// The response is still what the caller gets.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::http::Failed;
    /// use retry_jitter::tower::{BoxError, RetryLayer};
    /// use retry_jitter::{GiveUp, Policy};
    /// let layer = RetryLayer::new(Policy::default()).give_up(|f: &Failed<'_, BoxError>, g: &GiveUp| {
    ///     eprintln!("gave up ({}) after {} calls: {f}", g.reason, g.calls);
    /// });
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn give_up<G2>(self, hook: G2) -> RetryBuilder<F, C, O, Settings<B, L, D, Gd, N, G2>>
    where
        F: ErrorOf,
        G2: Fn(&Failed<'_, F::Error>, &GiveUp),
    {
        self.with_retry(|retry| retry.give_up(hook))
    }

    /// Hand each call's figures ([`RetryStats`]) to `hook`, once, at its end.
    ///
    /// See [`Retry::stats`].
    ///
    /// The figures: attempts, hedges, time waited, time in all, outcome.
    ///
    /// A call ending on a response retried for its status sets `gave_up`.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::{Policy, RetryStats};
    /// let layer = RetryLayer::new(Policy::default())
    ///     .stats(|s: &RetryStats| eprintln!("{} attempts, {:?} waited", s.attempts, s.waited));
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn stats<H: Fn(&RetryStats)>(
        self,
        hook: H,
    ) -> RetryBuilder<F, C, O, Settings<B, L, D, WithStats<Gd, H>, N, G>> {
        self.with_retry(|retry| retry.stats(hook))
    }

    /// Stop retrying once `token` is cancelled (see [`Retry::cancel`]).
    ///
    /// A wait ends at once, and no further request is sent.
    ///
    /// The call returns its last outcome.
    ///
    /// The middleware keeps a clone of the token.
    ///
    /// Clones share their state: cancel the one you keep.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::{CancelToken, Policy};
    /// let shutdown = CancelToken::new();
    /// let layer = RetryLayer::new(Policy::default()).cancel(&shutdown);
    /// shutdown.cancel(); // at shutdown: no call through the layer retries again
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn cancel(
        self,
        token: &CancelToken,
    ) -> RetryBuilder<F, C, O, Settings<B, L, D, Cancellable<CancelToken, Gd>, N, G>>
    where
        Gd: GuardPair,
    {
        self.with_retry(|retry| retry.cancel_owned(token.clone()))
    }

    /// Ask `throttle` before every request the middleware sends (see [`Retry::throttle`]).
    ///
    /// A request it rejects is not sent.
    ///
    /// The call ends with the middleware's error made from [`Throttled`](crate::Throttled).
    ///
    /// A response retried for its status counts as a request the service did not accept.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::{AdaptiveThrottle, Policy};
    /// use std::time::Duration;
    /// static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(60));
    /// let layer = RetryLayer::new(Policy::default()).throttle(&THROTTLE);
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn throttle(
        self,
        throttle: &AdaptiveThrottle,
    ) -> RetryBuilder<
        F,
        C,
        O,
        Settings<B, L, D, Gd::With<Gd::Breaker, ThrottleGuard<'_, IntoErr>>, N, G>,
    >
    where
        Gd: GuardPair,
    {
        self.with_retry(|retry| retry.throttle(throttle))
    }

    /// Count each call in `breaker` (see [`Retry::breaker`]).
    ///
    /// While it is open, a call fails at once, sending nothing.
    ///
    /// Its error is the middleware's, made from [`CircuitOpen`](crate::CircuitOpen).
    ///
    /// A call ending on a response retried for its status is a failure to the breaker.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::{CircuitBreaker, Policy};
    /// use std::time::Duration;
    /// static BREAKER: CircuitBreaker = CircuitBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5));
    /// let layer = RetryLayer::new(Policy::default()).breaker(&BREAKER);
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn breaker(
        self,
        breaker: &CircuitBreaker,
    ) -> RetryBuilder<
        F,
        C,
        O,
        Settings<B, L, D, Gd::With<BreakerGuard<'_, IntoErr>, Gd::Throttle>, N, G>,
    >
    where
        Gd: GuardPair,
    {
        self.with_retry(|retry| retry.breaker(breaker))
    }

    /// Await `hook` before each retry's wait.
    ///
    /// The wait starts after the hook's future is done.
    ///
    /// The hook is told what [`notify`](RetryBuilder::notify) is.
    ///
    /// That is the [`Failed`], by value, and the [`RetryEvent`].
    ///
    /// A middleware's future must be `Send`.
    ///
    /// An async closure's cannot be named so on stable Rust.
    ///
    /// So `hook` returns its future boxed.
    ///
    /// Write it as `Box::pin(async move { … })`.
    ///
    /// With a hedge, not awaited.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::hooks::HookFuture;
    /// use retry_jitter::http::Failed;
    /// use retry_jitter::tower::{BoxError, RetryLayer};
    /// use retry_jitter::{Policy, RetryEvent};
    /// let layer = RetryLayer::new(Policy::default()).notify_async(
    ///     |f: Failed<'_, BoxError>, ev: &RetryEvent| -> HookFuture<'_> {
    ///         let line = format!("attempt {} failed ({f})", ev.attempt);
    ///         Box::pin(async move { eprintln!("{line}") }) // a log shipped, a metric sent…
    ///     },
    /// );
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn notify_async<H>(
        self,
        hook: H,
    ) -> RetryBuilder<
        F,
        C,
        O,
        Settings<
            B,
            L,
            D,
            Gd::WithAsync<<Gd::AsyncHooks as Slots>::WithNotify<FailedAsync<H>>>,
            N,
            G,
        >,
    >
    where
        F: ErrorOf,
        Gd: GuardPair,
        H: for<'a> Fn(Failed<'a, F::Error>, &'a RetryEvent) -> HookFuture<'a>,
    {
        self.with_retry(|retry| retry.with_async(|hooks| hooks.with_notify(FailedAsync(hook))))
    }

    /// Await `hook` once, when retrying ends on a failure.
    ///
    /// The hook is told what [`give_up`](RetryBuilder::give_up) is.
    ///
    /// See [`notify_async`](RetryBuilder::notify_async).
    ///
    /// ```
    /// # #[cfg(feature = "reqwest-middleware")] {
    /// use retry_jitter::hooks::HookFuture;
    /// use retry_jitter::http::Failed;
    /// use retry_jitter::reqwest_middleware::RetryMiddleware;
    /// use retry_jitter::{GiveUp, Policy};
    /// let m = RetryMiddleware::new(Policy::default()).give_up_async(
    ///     |f: Failed<'_, reqwest_middleware::Error>, g: &GiveUp| -> HookFuture<'_> {
    ///         let line = format!("gave up ({}): {f}", g.reason);
    ///         Box::pin(async move { eprintln!("{line}") })
    ///     },
    /// );
    /// # let _ = m;
    /// # }
    /// ```
    pub fn give_up_async<H>(
        self,
        hook: H,
    ) -> RetryBuilder<
        F,
        C,
        O,
        Settings<
            B,
            L,
            D,
            Gd::WithAsync<<Gd::AsyncHooks as Slots>::WithGiveUp<FailedAsync<H>>>,
            N,
            G,
        >,
    >
    where
        F: ErrorOf,
        Gd: GuardPair,
        H: for<'a> Fn(Failed<'a, F::Error>, &'a GiveUp) -> HookFuture<'a>,
    {
        self.with_retry(|retry| retry.with_async(|hooks| hooks.with_give_up(FailedAsync(hook))))
    }

    /// Await `hook` once, when the call ends, with its figures ([`RetryStats`]).
    ///
    /// They are what [`stats`](RetryBuilder::stats) is handed.
    ///
    /// See [`notify_async`](RetryBuilder::notify_async).
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::hooks::HookFuture;
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::{Policy, RetryStats};
    /// let layer = RetryLayer::new(Policy::default()).stats_async(|s: &RetryStats| -> HookFuture<'_> {
    ///     Box::pin(async move { eprintln!("{} attempts", s.attempts) })
    /// });
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn stats_async<H>(
        self,
        hook: H,
    ) -> RetryBuilder<
        F,
        C,
        O,
        Settings<B, L, D, Gd::WithAsync<<Gd::AsyncHooks as Slots>::WithStats<AsyncHook<H>>>, N, G>,
    >
    where
        Gd: GuardPair,
        H: for<'a> Fn(&'a RetryStats) -> HookFuture<'a>,
    {
        self.with_retry(|retry| retry.with_async(|hooks| hooks.with_stats(AsyncHook(hook))))
    }

    /// Put each call's figures ([`RetryStats`]) in its response's extensions.
    ///
    /// Read them as `response.extensions().get::<RetryStats>()`, on an `http::Response` or a
    /// `reqwest::Response`.
    ///
    /// A response retried for its status carries them too, with `gave_up` set.
    ///
    /// A handler can then log or export them without a hook.
    ///
    /// Without this setter, the middleware reads no clock for figures.
    ///
    /// Nor does it add anything to a response.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default()).stats_in_response();
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn stats_in_response(
        self,
    ) -> RetryBuilder<F, C, O, Settings<B, L, D, InResponse<Gd>, N, G>> {
        self.with_retry(Retry::in_response)
    }

    /// The same middleware with other classifiers.
    fn with_classifiers<C2, O2>(
        self,
        f: impl FnOnce(C, O) -> (C2, O2),
    ) -> RetryBuilder<F, C2, O2, Settings<B, L, D, Gd, N, G>> {
        let (on, on_ok) = f(self.on, self.on_ok);
        RetryBuilder {
            retry: self.retry,
            on,
            on_ok,
            writes: self.writes,
            #[cfg(feature = "tracing")]
            level: self.level,
            only: self.only,
        }
    }

    /// The same middleware with other loop settings.
    fn with_retry<R2>(
        self,
        f: impl FnOnce(Settings<B, L, D, Gd, N, G>) -> R2,
    ) -> RetryBuilder<F, C, O, R2> {
        RetryBuilder {
            retry: f(self.retry),
            on: self.on,
            on_ok: self.on_ok,
            writes: self.writes,
            #[cfg(feature = "tracing")]
            level: self.level,
            only: self.only,
        }
    }

    /// The name hooks and metrics see.
    ///
    /// It is [`RetryEvent::function`](crate::RetryEvent::function): `"tower"` or `"reqwest"` by
    /// default.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default()).with_name("billing");
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn with_name(mut self, name: &'static str) -> Self {
        self.retry = self.retry.with_name(name);
        self
    }
}

impl<F, C, O, R> RetryBuilder<F, C, O, R> {
    /// Emit the events of each call at `level` (feature `tracing`).
    ///
    /// The default is `WARN`, as `#[retry]`'s.
    ///
    /// The events: retrying, recovered (one level below), giving up.
    ///
    /// Another marks a request the write rule did not send again.
    ///
    /// An event gives a request's method, scheme, host and path.
    ///
    /// Of a response, its status; of an error, its `Display`.
    ///
    /// Never a header or a body.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default()).trace(tracing::Level::INFO);
    /// # let _ = layer;
    /// # }
    /// ```
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn trace(mut self, level: tracing::Level) -> Self {
        self.level = level;
        self
    }

    /// The level of its calls' events.
    #[cfg(feature = "tracing")]
    pub(crate) fn level(&self) -> tracing::Level {
        self.level
    }

    /// No level: without feature `tracing`, its calls emit nothing.
    #[cfg(not(feature = "tracing"))]
    pub(crate) fn level(&self) -> super::Unlevelled {
        super::Unlevelled
    }
}

/// What a middleware's hooks are told its error is.
///
/// It is [`BoxError`](crate::tower::BoxError) for [`RetryLayer`](crate::tower::RetryLayer).
///
/// It is `reqwest_middleware::Error` for
/// [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware).
///
/// Not a trait to implement.
#[doc(hidden)]
pub trait ErrorOf {
    /// The error.
    type Error;
}

/// A middleware whose requests carry headers across the hop.
///
/// This trait is where such a middleware keeps the headers' names.
///
/// That is [`RetryLayer`](crate::tower::RetryLayer) over `http::Request`s, and
/// [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware).
///
/// Not a trait to implement.
#[doc(hidden)]
pub trait OwnHops {
    /// The header names, its own to change.
    fn hops_mut(&mut self) -> &mut Hops;
}

/// The names a middleware keeps, behind one pointer.
///
/// The pointer is none until a setter names one.
///
/// It adds one word to the future of every request.
pub(crate) fn hops_mut(hops: &mut Option<Arc<Hops>>) -> &mut Hops {
    Arc::make_mut(hops.get_or_insert_with(Arc::default))
}

impl<F: OwnHops, C, O, R> RetryBuilder<F, C, O, R> {
    /// Send the time each attempt has left in the header `name`.
    ///
    /// The time is in milliseconds.
    ///
    /// The default header is Envoy's `x-envoy-expected-rq-timeout-ms`.
    ///
    /// Inside a [`ChainLayer`](crate::tower::ChainLayer)'s scope, an attempt sends the smallest
    /// limit.
    ///
    /// The limits: the attempt's `timeout`, its loop's deadline and its caller's.
    ///
    /// A gRPC request sends `grpc-timeout` instead.
    ///
    /// The attempt lowers a larger `grpc-timeout` the request carries.
    ///
    /// Outside a scope, nothing is sent.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use http::HeaderName;
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default())
    ///     .deadline_header(HeaderName::from_static("x-request-timeout-ms"));
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn deadline_header(mut self, name: HeaderName) -> Self {
        self.only.hops_mut().deadline = Some(name);
        self
    }

    /// Send each attempt's number in the header `name`.
    ///
    /// It is 1 on the first, 2 on the first retry, …
    ///
    /// The server then sees which attempt of one logical request it answers.
    ///
    /// A gRPC request sent again carries `grpc-previous-rpc-attempts` either way.
    ///
    /// That header is gRPC's A6.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use http::HeaderName;
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default())
    ///     .attempt_header(HeaderName::from_static("x-attempt"));
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn attempt_header(mut self, name: HeaderName) -> Self {
        self.only.hops_mut().attempt = Some(name);
        self
    }
}

impl<F, C, O> RetryBuilder<F, C, O> {
    /// A middleware's builder: `policy`, named `name`.
    ///
    /// It starts with the default classifiers and settings.
    pub(super) fn start(policy: Policy, name: &'static str, on: C, on_ok: O, only: F) -> Self {
        RetryBuilder {
            retry: Retry::new(policy).with_name(name).budget_per_host(),
            on,
            on_ok,
            writes: Writes::ByMethod,
            #[cfg(feature = "tracing")]
            level: tracing::Level::WARN,
            only,
        }
    }
}

/// A middleware's loop settings.
///
/// They are the [`Retry`] whose classifiers each call sets.
///
/// Its parameters are what the setters give it, values first:
///
/// - `B`, the budget: by default [`HostBudgets`], one [`DefaultBudget`](crate::budget::DefaultBudget)
///   per host.
/// - [`budget`](RetryBuilder::budget) makes it a `&'static RetryBudget`;
///   [`budget_none`](RetryBuilder::budget_none), [`Unset`].
/// - `L`: [`timeout`](RetryBuilder::timeout)'s `Duration`.
/// - `D`: [`hedge`](RetryBuilder::hedge)'s `Hedge`.
/// - `Gd`: the guards, a pair, breaker first.
/// - [`Breaker`] and [`Throttle`] name `static` ones; [`Unset`], none.
/// - [`cancel`](RetryBuilder::cancel) and [`stats`](RetryBuilder::stats) wrap them.
/// - `N`: the [`notify`](RetryBuilder::notify) hook.
/// - `G`: the [`give_up`](RetryBuilder::give_up) hook.
///
/// A service configured with values is written with it in one line:
///
/// ```
/// # #[cfg(feature = "tower")] {
/// use retry_jitter::builder::{Breaker, Settings};
/// use retry_jitter::hooks::Unset;
/// use retry_jitter::tower::{ByStatus, RetryLayer, RetryService, TransportErrors};
/// use retry_jitter::{CircuitBreaker, Policy, RetryBudget};
/// use std::time::Duration;
///
/// static BUDGET: RetryBudget = RetryBudget::new(500);
/// static BREAKER: CircuitBreaker = CircuitBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5));
///
/// struct Inventory {
///     client: RetryService<Client, TransportErrors, ByStatus, Settings<&'static RetryBudget, Duration, Unset, (Breaker, Unset)>>,
/// }
/// # #[derive(Clone)] struct Client;
/// let layer = RetryLayer::new(Policy::default()).budget(&BUDGET).timeout(Duration::from_secs(2)).breaker(&BREAKER);
/// let inventory = Inventory { client: tower_layer::Layer::layer(&layer, Client) };
/// # let _ = inventory;
/// # }
/// ```
pub type Settings<
    B = HostBudgets,
    L = Unset,
    D = Unset,
    Gd = (Unset, Unset),
    N = Unset,
    G = Unset,
> = Retry<RetryAll, N, G, B, Unset, L, D, AcceptOk, Gd>;

/// A `static` [`CircuitBreaker`] among a middleware's guards.
///
/// [`RetryBuilder::breaker`] sets it.
///
/// This alias is how [`Settings`] names its type.
pub type Breaker = BreakerGuard<'static, IntoErr>;

/// A `static` [`AdaptiveThrottle`] among a middleware's guards.
///
/// [`RetryBuilder::throttle`] sets it.
///
/// This alias is how [`Settings`] names its type.
pub type Throttle = ThrottleGuard<'static, IntoErr>;
