//! A `Retry`'s `stats` hook, and the figures `call_with_stats` returns.
//!
//! A [`Recorder`] is made for each call, among that call's guards, beside the `Retry`'s own
//! hooks (borrowed).

use core::time::Duration;

use crate::fleet::Budget;
use crate::policy::{
    Classify, ClassifyOk, Decision, GiveUp, Resend, RetryEvent, RetryStats, Unset,
};
#[cfg(feature = "tokio")]
use crate::run::awaiting::{at_end, Awaits};
use crate::run::awaiting::{AsyncHooks, NONE as NO_ASYNC_HOOKS};
use crate::run::guard::forward_guard;
use crate::run::hooks::{GiveUpHook, Hooks, Notify, Trace};
use crate::run::stats::{ReadAfter, Recorder, StatsHook};

use super::{Cancellable, GuardPair, Retry};

/// A [`Retry`]'s guards with a `stats` hook ([`Retry::stats`]).
///
/// The guards `P` refuse and hear as before; each call's figures go to `F`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct WithStats<P, F> {
    guards: P,
    hook: F,
}

impl<P: GuardPair, F> GuardPair for WithStats<P, F> {
    type Breaker = P::Breaker;
    type Throttle = P::Throttle;
    type With<Br, Th> = WithStats<P::With<Br, Th>, F>;
    fn breaker(&self) -> P::Breaker {
        self.guards.breaker()
    }
    fn throttle(&self) -> P::Throttle {
        self.guards.throttle()
    }
    fn with<Br, Th>(self, breaker: Br, throttle: Th) -> Self::With<Br, Th> {
        WithStats {
            guards: self.guards.with(breaker, throttle),
            hook: self.hook,
        }
    }
    type AsyncHooks = P::AsyncHooks;
    type WithAsync<X> = WithStats<P::WithAsync<X>, F>;
    fn with_async<X>(self, f: impl FnOnce(P::AsyncHooks) -> X) -> Self::WithAsync<X> {
        WithStats {
            guards: self.guards.with_async(f),
            hook: self.hook,
        }
    }
}

forward_guard!(impl[P, F] WithStats<P, F> => guards: P);

/// Where a [`Retry`]'s guards keep its `stats` hook and its async hooks ([`AsyncHooks`]).
///
/// Guards without them hold [`Unset`] in each slot.
///
/// A call's recorder hears what is here, and the async loop awaits it.
pub trait StatsOf {
    /// The hook.
    type Hook: StatsHook;
    /// The async hooks.
    type Awaited;
    /// The hook.
    fn stats_hook(&self) -> &Self::Hook;
    /// The async hooks.
    fn awaited(&self) -> &Self::Awaited;
}

impl StatsOf for Unset {
    type Hook = Unset;
    type Awaited = AsyncHooks;
    #[inline]
    fn stats_hook(&self) -> &Unset {
        &Unset
    }
    #[inline]
    fn awaited(&self) -> &AsyncHooks {
        &NO_ASYNC_HOOKS
    }
}

impl<A, B> StatsOf for (A, B) {
    type Hook = Unset;
    type Awaited = AsyncHooks;
    #[inline]
    fn stats_hook(&self) -> &Unset {
        &Unset
    }
    #[inline]
    fn awaited(&self) -> &AsyncHooks {
        &NO_ASYNC_HOOKS
    }
}

impl<K, P: StatsOf> StatsOf for Cancellable<K, P> {
    type Hook = P::Hook;
    type Awaited = P::Awaited;
    #[inline]
    fn stats_hook(&self) -> &P::Hook {
        self.guards().stats_hook()
    }
    #[inline]
    fn awaited(&self) -> &P::Awaited {
        self.guards().awaited()
    }
}

impl<P: StatsOf, F: StatsHook> StatsOf for WithStats<P, F> {
    type Hook = F;
    type Awaited = P::Awaited;
    #[inline]
    fn stats_hook(&self) -> &F {
        &self.hook
    }
    #[inline]
    fn awaited(&self) -> &P::Awaited {
        self.guards.awaited()
    }
}

/// Two `stats` hooks, heard in turn: a user's, then one of the crate's own (the gRPC layer's
/// A96 figures).
///
/// Public in a private module: in the layer's types only.
#[cfg(all(feature = "tonic", feature = "metrics"))]
#[derive(Clone, Copy, Debug)]
pub struct Both<A, B>(pub(crate) A, pub(crate) B);

#[cfg(all(feature = "tonic", feature = "metrics"))]
impl<A: StatsHook, B: StatsHook> StatsHook for Both<A, B> {
    #[inline]
    fn stats(&self, stats: &RetryStats) {
        self.0.stats(stats);
        self.1.stats(stats);
    }
}

/// Guards with a second `stats` hook `H`, heard after the one they have, if any.
///
/// A face of its own hears each call's figures this way (the gRPC layer's A96), beside a user's
/// hook.
///
/// Public in a private module: in the layer's types only.
#[cfg(all(feature = "tonic", feature = "metrics"))]
pub trait AlsoStats<H> {
    /// The guards with `H`.
    type Out;
    /// The guards with `hook`.
    fn also(self, hook: H) -> Self::Out;
}

#[cfg(all(feature = "tonic", feature = "metrics"))]
impl<A, B, H> AlsoStats<H> for (A, B) {
    type Out = WithStats<(A, B), H>;
    fn also(self, hook: H) -> Self::Out {
        WithStats { guards: self, hook }
    }
}

#[cfg(all(feature = "tonic", feature = "metrics"))]
impl<P, F, H> AlsoStats<H> for WithStats<P, F> {
    type Out = WithStats<P, Both<F, H>>;
    fn also(self, hook: H) -> Self::Out {
        WithStats {
            guards: self.guards,
            hook: Both(self.hook, hook),
        }
    }
}

#[cfg(all(feature = "tonic", feature = "metrics"))]
impl<K, P: AlsoStats<H>, H> AlsoStats<H> for Cancellable<K, P> {
    type Out = Cancellable<K, P::Out>;
    fn also(self, hook: H) -> Self::Out {
        let (guards, token) = self.into_parts();
        Cancellable::new(guards.also(hook), token)
    }
}

#[cfg(all(feature = "tonic", feature = "metrics"))]
impl<P: AlsoStats<H>, X, H> AlsoStats<H> for super::Awaiting<P, X> {
    type Out = super::Awaiting<P::Out, X>;
    fn also(self, hook: H) -> Self::Out {
        let (guards, hooks) = self.into_parts();
        super::Awaiting::new(guards.also(hook), hooks)
    }
}

/// A borrowed hook, heard as itself.
pub(super) struct HookRef<'a, H>(pub(super) &'a H);

impl<H: StatsHook> StatsHook for HookRef<'_, H> {
    const ACTIVE: bool = H::ACTIVE;
    #[inline]
    fn stats(&self, stats: &RetryStats) {
        self.0.stats(stats);
    }
}

/// One of a `Retry`'s hooks, borrowed for one call whose hooks add a [`Recorder`].
#[derive(Clone, Copy)]
pub struct Borrowed<'a, H>(&'a H);

impl<'a, H> Borrowed<'a, H> {
    /// `hook`, borrowed.
    #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
    pub(crate) fn new(hook: &'a H) -> Self {
        Borrowed(hook)
    }
}

impl<H: StatsOf> StatsOf for Borrowed<'_, H> {
    type Hook = H::Hook;
    type Awaited = H::Awaited;
    #[inline]
    fn stats_hook(&self) -> &H::Hook {
        self.0.stats_hook()
    }
    #[inline]
    fn awaited(&self) -> &H::Awaited {
        self.0.awaited()
    }
}

impl<E, H: Classify<E>> Classify<E> for Borrowed<'_, H> {
    #[inline]
    fn classify(&self, error: &E) -> Decision {
        self.0.classify(error)
    }
    #[inline]
    fn classify_for(&self, error: &E, resend: Resend) -> Decision {
        self.0.classify_for(error, resend)
    }
    #[inline]
    fn transparent(&self, error: &E) -> crate::policy::Transparent {
        self.0.transparent(error)
    }
}

impl<T, H: ClassifyOk<T>> ClassifyOk<T> for Borrowed<'_, H> {
    #[inline]
    fn classify_ok(&self, value: &T) -> Decision {
        self.0.classify_ok(value)
    }
    #[inline]
    fn classify_ok_for(&self, value: &T, resend: Resend) -> Decision {
        self.0.classify_ok_for(value, resend)
    }
    #[inline]
    fn failure_status(&self, value: &T) -> Option<u16> {
        self.0.failure_status(value)
    }
}

impl<E, H: Notify<E>> Notify<E> for Borrowed<'_, H> {
    #[inline]
    fn notify(&self, error: &E, event: &RetryEvent) {
        self.0.notify(error, event);
    }
    #[inline]
    fn hedge(&self, event: &RetryEvent) {
        self.0.hedge(event);
    }
    #[inline]
    fn retry_ok(&self, event: &RetryEvent) {
        self.0.retry_ok(event);
    }
}

impl<E, H: GiveUpHook<E>> GiveUpHook<E> for Borrowed<'_, H> {
    #[inline]
    fn give_up(&self, error: &E, give_up: &GiveUp) {
        self.0.give_up(error, give_up);
    }
    #[inline]
    fn give_up_ok(&self, give_up: &GiveUp) {
        self.0.give_up_ok(give_up);
    }
}

impl<H: Budget> Budget for Borrowed<'_, H> {
    type Shared = H::Shared;
    #[inline]
    fn get(&self) -> Option<&H::Shared> {
        self.0.get()
    }
}

impl<R, H: Trace<R>> Trace<R> for Borrowed<'_, H> {
    #[inline]
    fn is_silent(&self) -> bool {
        self.0.is_silent()
    }
    #[inline]
    fn retry(&self, outcome: &R, event: &RetryEvent) {
        self.0.retry(outcome, event);
    }
    #[inline]
    fn give_up(&self, outcome: &R, give_up: &GiveUp) {
        self.0.give_up(outcome, give_up);
    }
    #[inline]
    fn hedge(&self, event: &RetryEvent) {
        self.0.hedge(event);
    }
    #[inline]
    fn recovered(&self, function: &'static str, calls: u32, elapsed: Duration) {
        self.0.recovered(function, calls, elapsed);
    }
}

forward_guard!(impl['a, H] Borrowed<'a, H> => 0: H);

/// A call's hooks: the `Retry`'s, borrowed, with the call's recorder among the guards.
pub(super) type CallHooks<'a, C, N, G, B, T, O, Gd, H> = Hooks<
    Borrowed<'a, C>,
    Borrowed<'a, N>,
    Borrowed<'a, G>,
    Borrowed<'a, B>,
    Borrowed<'a, T>,
    Borrowed<'a, O>,
    (Borrowed<'a, Gd>, &'a Recorder<H>),
>;

impl<C, N, G, B, T, L, D, O, Gd> Retry<C, N, G, B, T, L, D, O, Gd> {
    /// Hand each call's figures ([`RetryStats`]) to `hook`, once, when the call ends, success
    /// or give-up.
    ///
    /// The figures: attempts, hedges, time waited and in all, how it ended.
    ///
    /// A call that succeeds at once costs two clock reads more; a `Retry` without the hook,
    /// nothing.
    ///
    /// ```
    /// use retry_jitter::{Policy, Retry, RetryStats};
    /// use std::time::Duration;
    ///
    /// let r = Retry::new(Policy::new().with_base(Duration::ZERO))
    ///     .stats(|s: &RetryStats| println!("{}: {} attempts, waited {:?}", s.function, s.attempts, s.waited));
    /// let mut calls = 0;
    /// assert_eq!(r.call(|| { calls += 1; if calls < 3 { Err("busy") } else { Ok(calls) } }), Ok(3));
    /// ```
    pub fn stats<F: Fn(&RetryStats)>(
        self,
        hook: F,
    ) -> Retry<C, N, G, B, T, L, D, O, WithStats<Gd, F>> {
        self.map_guard(|guards| WithStats { guards, hook })
    }

    /// The call's hooks, with `recorder` among the guards.
    #[inline]
    pub(super) fn with_recorder<'a, H>(
        &'a self,
        recorder: &'a Recorder<H>,
    ) -> CallHooks<'a, C, N, G, B, T, O, Gd, H> {
        let h = &self.hooks;
        Hooks {
            on: Borrowed(&h.on),
            notify: Borrowed(&h.notify),
            give_up: Borrowed(&h.give_up),
            budget: Borrowed(&h.budget),
            trace: Borrowed(&h.trace),
            on_ok: Borrowed(&h.on_ok),
            guard: (Borrowed(&h.guard), recorder),
        }
    }
}

impl<C, N, G, B, T, O, Gd: StatsOf> Retry<C, N, G, B, T, Unset, Unset, O, Gd> {
    with_loop_bounds! {
        /// [`call`](Retry::call), returning the call's figures ([`RetryStats`]) with its outcome
        /// (a [`stats`](Retry::stats) hook hears them too).
        ///
        /// ```
        /// use retry_jitter::{Policy, Retry};
        /// use std::time::Duration;
        ///
        /// let r = Retry::new(Policy::new().with_base(Duration::ZERO));
        /// let (out, stats) = r.call_with_stats(|| Ok::<_, ()>(7));
        /// assert_eq!((out, stats.attempts, stats.gave_up), (Ok(7), 1, None));
        /// assert_eq!(stats.waited, Duration::ZERO);
        /// ```
        pub fn call_with_stats<V, E>(
            &self,
            mut op: impl FnMut() -> Result<V, E>,
        ) -> (Result<V, E>, RetryStats)
        where {
        }
        {
            let hook: ReadAfter<_> = ReadAfter(HookRef(self.hooks.guard.stats_hook()));
            let recorder = Recorder::new(hook, crate::sleep::now, self.name);
            let hooks = self.with_recorder(&recorder);
            let out = crate::run::loops::run_blocking(self.policy, &hooks, self.name, |_| op());
            (out, self.returned(&recorder))
        }
    }
}

impl<C, N, G, B, T, L, D, O, Gd: StatsOf> Retry<C, N, G, B, T, L, D, O, Gd> {
    with_loop_bounds! {
        /// [`call_async`](Retry::call_async), returning the call's figures ([`RetryStats`]) with
        /// its outcome (a [`stats`](Retry::stats) hook hears them too).
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
        /// use retry_jitter::{Jitter, Policy, Retry};
        /// use std::time::Duration;
        ///
        /// let r = Retry::new(Policy::new().with_jitter(Jitter::None).with_base(Duration::from_millis(100)));
        /// let mut calls = 0;
        /// let (out, stats) = r.call_async_with_stats(|| { calls += 1; let n = calls; async move { if n < 3 { Err("busy") } else { Ok(n) } } }).await;
        /// assert_eq!((out, stats.attempts), (Ok(3), 3));
        /// assert_eq!(stats.waited, Duration::from_millis(300)); // 100 ms, then 200 ms
        /// # }
        /// ```
        #[cfg(feature = "tokio")]
        #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
        pub async fn call_async_with_stats<V, E, F, Fut>(&self, mut op: F) -> (Result<V, E>, RetryStats)
        where {
            F: FnMut() -> Fut,
            Fut: core::future::Future<Output = Result<V, E>>,
        }
        {
            self.call_async_numbered_with_stats(|_| op()).await
        }
    }

    with_loop_bounds! {
        /// [`call_async_with_stats`](Retry::call_async_with_stats), handing `op` the 1-based
        /// number of the attempt it makes (the middleware faces).
        #[cfg(feature = "tokio")]
        pub(crate) async fn call_async_numbered_with_stats<V, E, F, Fut>(&self, op: F) -> (Result<V, E>, RetryStats)
        where {
            F: FnMut(u32) -> Fut,
            Fut: core::future::Future<Output = Result<V, E>>,
        }
        {
            let (sleep, clock) = (crate::sleep::tokio_sleep, crate::sleep::tokio_now);
            let awaited = self.hooks.guard.awaited();
            let hook: ReadAfter<_> = ReadAfter(HookRef(self.hooks.guard.stats_hook()));
            let hook = Awaits::<_, Gd::Awaited, E>::new(hook);
            let recorder = Recorder::new(hook, clock, self.name);
            let hooks = self.with_recorder(&recorder);
            let awaiting = Some((&recorder, awaited));
            let out = self.run_async_with(&hooks, awaiting, sleep, clock, op).await;
            let (give_up, stats) = (recorder.give_up(), recorder.stats());
            for told in at_end(awaited, &out, &give_up, &stats).into_iter().flatten() {
                told.await;
            }
            (out, self.returned(&recorder))
        }
    }

    /// The figures a call's recorder kept: always there once the call ended.
    ///
    /// A call ends through the one place that reports it; should they be missing, what is known.
    fn returned<H: StatsHook>(&self, recorder: &Recorder<H>) -> RetryStats {
        recorder.stats().unwrap_or(RetryStats {
            function: self.name,
            attempts: 0,
            hedges: 0,
            transparent_retries: 0,
            waited: Duration::ZERO,
            elapsed: Duration::ZERO,
            gave_up: None,
        })
    }
}
