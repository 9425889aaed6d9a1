//! A [`Retry`]'s async hooks: `notify_async`, `give_up_async` and `stats_async`.
//!
//! They are kept among its guards ([`Awaiting`]), and awaited by `call_async` where the sync
//! hooks are called.

use super::guards::{Awaiting, GuardPair};
use super::stats::StatsOf;
use super::Retry;
use crate::policy::{GiveUp, RetryEvent, RetryStats};
use crate::run::awaiting::{AsyncHook, HookFuture, Slots};

impl<P: StatsOf, X> StatsOf for Awaiting<P, X> {
    type Hook = P::Hook;
    type Awaited = X;
    #[inline]
    fn stats_hook(&self) -> &P::Hook {
        self.guards().stats_hook()
    }
    #[inline]
    fn awaited(&self) -> &X {
        self.hooks()
    }
}

/// What a setter of an async hook makes of a `Retry`'s guards: the same, with `hook` in one
/// slot of their async hooks.
type Async<Gd, S> = <Gd as GuardPair>::WithAsync<S>;

impl<C, N, G, B, T, L, D, O, Gd: GuardPair> Retry<C, N, G, B, T, L, D, O, Gd> {
    /// The same retry, its async hooks made into others by `f`.
    ///
    /// The one place the setters of both the closure API and the middleware faces go through.
    pub(crate) fn with_async<X>(
        self,
        f: impl FnOnce(Gd::AsyncHooks) -> X,
    ) -> Retry<C, N, G, B, T, L, D, O, Gd::WithAsync<X>> {
        self.map_guard(|guards| guards.with_async(f))
    }

    /// Await `hook` before each retry's wait ([`call_async`](Retry::call_async) and its kin).
    ///
    /// It is handed what [`notify`](Retry::notify) is: the error and the [`RetryEvent`].
    ///
    /// The wait starts after it.
    ///
    /// An async closure's future cannot be named `Send` on stable Rust.
    ///
    /// So `hook` returns it boxed: `Box::pin(async move { … })`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_jitter::hooks::HookFuture;
    /// use retry_jitter::{Policy, Retry, RetryEvent};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    ///
    /// static TOLD: AtomicU32 = AtomicU32::new(0);
    /// let r = Retry::new(Policy::new().with_attempts(3))
    ///     .notify_async(|e: &&str, ev: &RetryEvent| -> HookFuture<'_> {
    ///         Box::pin(async move {
    ///             tokio::task::yield_now().await; // a log shipped, a metric sent…
    ///             assert_eq!((*e, ev.attempt), ("busy", TOLD.fetch_add(1, Ordering::SeqCst) + 1));
    ///         })
    ///     });
    /// let mut calls = 0;
    /// let out = r.call_async(|| { calls += 1; let n = calls; async move { if n < 3 { Err("busy") } else { Ok(n) } } }).await;
    /// assert_eq!((out, TOLD.load(Ordering::SeqCst)), (Ok(3), 2));
    /// # }
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn notify_async<E, F>(
        self,
        hook: F,
    ) -> Retry<C, N, G, B, T, L, D, O, Async<Gd, <Gd::AsyncHooks as Slots>::WithNotify<AsyncHook<F>>>>
    where
        F: for<'a> Fn(&'a E, &'a RetryEvent) -> HookFuture<'a>,
    {
        self.with_async(|hooks| hooks.with_notify(AsyncHook(hook)))
    }

    /// Await `hook` once, when retrying ends with an error, with what
    /// [`give_up`](Retry::give_up) is handed: the error and the [`GiveUp`] (see
    /// [`notify_async`](Retry::notify_async)).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_jitter::hooks::HookFuture;
    /// use retry_jitter::{GiveUp, GiveUpReason, Policy, Retry};
    ///
    /// let r = Retry::new(Policy::new().with_attempts(2)).give_up_async(|e: &&str, g: &GiveUp| -> HookFuture<'_> {
    ///     Box::pin(async move { assert_eq!((*e, g.reason, g.calls), ("down", GiveUpReason::Attempts, 2)) })
    /// });
    /// assert_eq!(r.call_async(|| async { Err::<(), _>("down") }).await, Err("down"));
    /// # }
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn give_up_async<E, F>(
        self,
        hook: F,
    ) -> Retry<C, N, G, B, T, L, D, O, Async<Gd, <Gd::AsyncHooks as Slots>::WithGiveUp<AsyncHook<F>>>>
    where
        F: for<'a> Fn(&'a E, &'a GiveUp) -> HookFuture<'a>,
    {
        self.with_async(|hooks| hooks.with_give_up(AsyncHook(hook)))
    }

    /// Await `hook` once, when the call ends, with its figures ([`RetryStats`], as
    /// [`stats`](Retry::stats) is handed; see [`notify_async`](Retry::notify_async)).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_jitter::hooks::HookFuture;
    /// use retry_jitter::{Policy, Retry, RetryStats};
    ///
    /// let r = Retry::new(Policy::new()).stats_async(|s: &RetryStats| -> HookFuture<'_> {
    ///     Box::pin(async move { assert_eq!(s.attempts, 1) })
    /// });
    /// assert_eq!(r.call_async(|| async { Ok::<_, ()>(7) }).await, Ok(7));
    /// # }
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn stats_async<F>(
        self,
        hook: F,
    ) -> Retry<C, N, G, B, T, L, D, O, Async<Gd, <Gd::AsyncHooks as Slots>::WithStats<AsyncHook<F>>>>
    where
        F: for<'a> Fn(&'a RetryStats) -> HookFuture<'a>,
    {
        self.with_async(|hooks| hooks.with_stats(AsyncHook(hook)))
    }
}
