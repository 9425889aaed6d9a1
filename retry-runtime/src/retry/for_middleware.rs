//! What the middleware faces ask of a [`Retry`] besides running it.

use crate::fleet::HostBudgets;
use crate::middleware::ByHost;
use crate::policy::Unset;
#[cfg(feature = "tower")]
use crate::run::guard::{BreakerGuard, Guard, ThrottleGuard};
#[cfg(feature = "tower")]
use crate::run::hedge::HedgeWith;
use crate::run::timeout::AttemptTimeout;

use super::stats::{Borrowed, StatsOf, WithStats};
use super::{Cancellable, GuardPair, Retry};
use crate::middleware::failure::Told;
use crate::policy::RetryStats;
use crate::policy::{AcceptOk, RetryAll};
use crate::run::guard::forward_guard;
use crate::run::hooks::Hooks;

impl<N, G, B, L, D, Gd> Retry<RetryAll, N, G, B, Unset, L, D, AcceptOk, Gd> {
    /// One call's loop of a middleware, borrowing these settings.
    ///
    /// - Its classifiers `on` and `on_ok`, and its `trace`.
    /// - Its hooks, told of what failed as a `Failed` ([`Told`]).
    /// - The budget of its request's `host` ([`host`](Retry::host)).
    /// - A single attempt if `once`: a request that cannot be sent again (over the replay
    ///   limit, or streaming).
    /// - Hedged only if `hedge`: a write without a key never is.
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    pub(crate) fn for_call<C2, O2, T2>(
        &self,
        on: C2,
        on_ok: O2,
        trace: T2,
        host: u8,
        once: bool,
        hedge: bool,
    ) -> Retry<C2, Told<'_, N>, Told<'_, G>, B::Of<'_>, T2, L, Option<D>, O2, Borrowed<'_, Gd>>
    where
        B: ByHost,
        L: Clone,
        D: Clone,
    {
        let policy = match once {
            true => self.policy.with_attempts(1),
            false => self.policy,
        };
        let h = &self.hooks;
        Retry {
            policy,
            hooks: Hooks {
                on,
                notify: Told(&h.notify),
                give_up: Told(&h.give_up),
                budget: h.budget.of(host),
                trace,
                on_ok,
                guard: Borrowed::new(&h.guard),
            },
            name: self.name,
            timeout: self.timeout.clone(),
            hedge: (hedge && !once).then(|| self.hedge.clone()),
        }
    }

    /// The name hooks and events see.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Which budget a call to `authority` uses, found once, as the call starts.
    ///
    /// A budget kept per host finds the host's; any other asks nothing.
    #[inline]
    pub(crate) fn host<'k>(&self, authority: impl FnOnce() -> Option<&'k str>) -> u8
    where
        B: ByHost,
    {
        self.hooks.budget.host(authority)
    }

    /// The same settings with a budget per host: a middleware's default.
    pub(crate) fn budget_per_host(
        self,
    ) -> Retry<RetryAll, N, G, HostBudgets, Unset, L, D, AcceptOk, Gd> {
        self.budget_by_host(HostBudgets::new())
    }

    /// The same settings with `budget`, found per call as [`ByHost`] finds it.
    pub(crate) fn budget_by_host<B2: ByHost>(
        self,
        budget: B2,
    ) -> Retry<RetryAll, N, G, B2, Unset, L, D, AcceptOk, Gd> {
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

    /// The same settings under `policy` (the gRPC layer: a method's, on its user's hooks).
    #[cfg(feature = "tonic")]
    pub(crate) fn with_policy(mut self, policy: crate::Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The same settings, hedged or not by `hedge`.
    ///
    /// A layer whose loops differ in this alone has one type for all.
    #[cfg(feature = "tonic")]
    pub(crate) fn hedge_maybe(
        self,
        hedge: Option<crate::hedge::Hedge>,
    ) -> Retry<RetryAll, N, G, B, Unset, L, Option<crate::hedge::Hedge>, AcceptOk, Gd> {
        self.with_hedge(hedge)
    }

    /// The same settings, each call's figures put in its response.
    pub(crate) fn in_response(
        self,
    ) -> Retry<RetryAll, N, G, B, Unset, L, D, AcceptOk, InResponse<Gd>> {
        self.map_guard(InResponse::new)
    }

    /// Whether a face may run the first attempt itself, entering
    /// [`call_async`](Retry::call_async) only once it failed.
    ///
    /// It may when nothing of the loop's acts before or during a first attempt:
    ///
    /// - no timeout races it, and no hedge starts beside it;
    /// - no `max_elapsed` reads the clock before it;
    /// - no guard asks before it, and no `stats` hook times it.
    #[cfg(feature = "tower")]
    pub(crate) fn first_attempt_alone<E>(&self) -> bool
    where
        L: AttemptTimeout<E>,
        D: HedgeWith,
        Gd: Unguarded,
    {
        Gd::UNGUARDED
            && self.timeout.limit().is_none()
            && self.hedge.hedge().is_none()
            && self.policy.max_elapsed().is_none()
    }

    /// The limits of a call beginning now, for the headers its attempts carry across a hop.
    pub(crate) fn hop_limits<E>(&self) -> crate::middleware::HopLimits
    where
        L: AttemptTimeout<E>,
    {
        let timeout = self.timeout.limit().map(|(timeout, _)| timeout);
        crate::middleware::HopLimits::start(timeout, self.policy.max_elapsed())
    }

    /// What the loop does when a first attempt succeeds: the budget of the call's `host`
    /// counts the call.
    ///
    /// For a face that ran that attempt itself ([`first_attempt_alone`](Retry::first_attempt_alone)).
    #[cfg(feature = "tower")]
    #[inline]
    pub(crate) fn first_succeeded<V, E>(&self, host: u8)
    where
        B: ByHost,
        Gd: Guard<Result<V, E>>,
    {
        let h = &self.hooks;
        let call = Hooks {
            on: RetryAll,
            notify: Unset,
            give_up: Unset,
            budget: h.budget.of(host),
            trace: Unset,
            on_ok: AcceptOk,
            guard: Borrowed::new(&h.guard),
        };
        call.succeeded::<Result<V, E>>(None, crate::sleep::tokio_now, self.name);
    }
}

/// Whether a middleware's guards are none at all: its first attempt then needs no loop.
#[cfg(feature = "tower")]
#[doc(hidden)]
pub trait Unguarded {
    /// No guard, no `stats` hook, no cancel token.
    const UNGUARDED: bool;
}

#[cfg(feature = "tower")]
impl Unguarded for Unset {
    const UNGUARDED: bool = true;
}

#[cfg(feature = "tower")]
impl<A: Unguarded, B: Unguarded> Unguarded for (A, B) {
    const UNGUARDED: bool = A::UNGUARDED && B::UNGUARDED;
}

#[cfg(feature = "tower")]
impl<F> Unguarded for BreakerGuard<'_, F> {
    const UNGUARDED: bool = false;
}

#[cfg(feature = "tower")]
impl<F> Unguarded for ThrottleGuard<'_, F> {
    const UNGUARDED: bool = false;
}

#[cfg(feature = "tower")]
impl<K, P> Unguarded for Cancellable<K, P> {
    const UNGUARDED: bool = false;
}

#[cfg(feature = "tower")]
impl<P, F> Unguarded for WithStats<P, F> {
    const UNGUARDED: bool = false;
}

/// A middleware's guards whose calls put their figures in their responses
/// ([`stats_in_response`](crate::tower::RetryBuilder::stats_in_response)).
///
/// The guards `P` refuse and hear as before.
#[derive(Clone, Copy, Debug)]
pub struct InResponse<P>(P);

impl<P> InResponse<P> {
    /// `guards`, their calls' figures put in their responses.
    pub(crate) fn new(guards: P) -> Self {
        InResponse(guards)
    }
}

impl<P: GuardPair> GuardPair for InResponse<P> {
    type Breaker = P::Breaker;
    type Throttle = P::Throttle;
    type With<Br, Th> = InResponse<P::With<Br, Th>>;
    fn breaker(&self) -> P::Breaker {
        self.0.breaker()
    }
    fn throttle(&self) -> P::Throttle {
        self.0.throttle()
    }
    fn with<Br, Th>(self, breaker: Br, throttle: Th) -> Self::With<Br, Th> {
        InResponse(self.0.with(breaker, throttle))
    }
    type AsyncHooks = P::AsyncHooks;
    type WithAsync<X> = InResponse<P::WithAsync<X>>;
    fn with_async<X>(self, f: impl FnOnce(P::AsyncHooks) -> X) -> Self::WithAsync<X> {
        InResponse(self.0.with_async(f))
    }
}

forward_guard!(impl[P] InResponse<P> => 0: P);

#[cfg(all(feature = "tonic", feature = "metrics"))]
impl<P: super::AlsoStats<H>, H> super::AlsoStats<H> for InResponse<P> {
    type Out = InResponse<P::Out>;
    fn also(self, hook: H) -> Self::Out {
        InResponse(self.0.also(hook))
    }
}

impl<P: StatsOf> StatsOf for InResponse<P> {
    type Hook = P::Hook;
    type Awaited = P::Awaited;
    #[inline]
    fn stats_hook(&self) -> &P::Hook {
        self.0.stats_hook()
    }
    #[inline]
    fn awaited(&self) -> &P::Awaited {
        self.0.awaited()
    }
}

#[cfg(feature = "tower")]
impl<P, X> Unguarded for super::Awaiting<P, X> {
    const UNGUARDED: bool = false;
}

#[cfg(feature = "tower")]
impl<P> Unguarded for InResponse<P> {
    const UNGUARDED: bool = false;
}

/// A response that carries its call's [`RetryStats`] in its extensions.
#[diagnostic::on_unimplemented(
    message = "`stats_in_response()` puts the figures in an HTTP response's extensions: `{Self}` has none",
    label = "not an `http::Response` nor a `reqwest::Response`"
)]
#[doc(hidden)]
pub trait CarriesStats {
    /// Put `stats` in its extensions.
    fn put(&mut self, stats: RetryStats);
}

impl<B> CarriesStats for http::Response<B> {
    fn put(&mut self, stats: RetryStats) {
        self.extensions_mut().insert(stats);
    }
}

#[cfg(feature = "reqwest-middleware")]
impl CarriesStats for reqwest::Response {
    fn put(&mut self, stats: RetryStats) {
        self.extensions_mut().insert(stats);
    }
}

/// Whether a middleware's guards put their calls' figures in the responses of type `Resp`
/// ([`InResponse`]), and how.
#[doc(hidden)]
pub trait PutsStats<Resp> {
    /// Whether they do.
    const PUTS: bool;
    /// Put `stats` in `response`, if they do.
    fn put(response: &mut Resp, stats: RetryStats);
}

impl<Resp: CarriesStats, P> PutsStats<Resp> for InResponse<P> {
    const PUTS: bool = true;
    fn put(response: &mut Resp, stats: RetryStats) {
        response.put(stats);
    }
}

/// The guards that put nothing in a response, and those that wrap others (and put what they
/// do).
macro_rules! puts_nothing {
    ($(impl[$($gen:tt)*] $ty:ty;)+) => {$(
        impl<$($gen)* Resp> PutsStats<Resp> for $ty {
            const PUTS: bool = false;
            fn put(_: &mut Resp, _: RetryStats) {}
        }
    )+};
}

puts_nothing! {
    impl[] Unset;
    impl[A, B,] (A, B);
}

impl<Resp, K, P: PutsStats<Resp>> PutsStats<Resp> for Cancellable<K, P> {
    const PUTS: bool = P::PUTS;
    fn put(response: &mut Resp, stats: RetryStats) {
        P::put(response, stats);
    }
}

impl<Resp, P: PutsStats<Resp>, F> PutsStats<Resp> for WithStats<P, F> {
    const PUTS: bool = P::PUTS;
    fn put(response: &mut Resp, stats: RetryStats) {
        P::put(response, stats);
    }
}

impl<Resp, P: PutsStats<Resp>, X> PutsStats<Resp> for super::Awaiting<P, X> {
    const PUTS: bool = P::PUTS;
    fn put(response: &mut Resp, stats: RetryStats) {
        P::put(response, stats);
    }
}
