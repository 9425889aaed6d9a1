//! The async hooks a call awaits: [`Retry::notify_async`](crate::Retry::notify_async) and its
//! kin, on the closure API and the middleware faces.
//!
//! `notify_async` runs before a retry's wait; `give_up_async` and `stats_async` as the call
//! ends.
//!
//! Each is handed what its sync hook is.
//!
//! Not a loop of their own: the call's recorder keeps the last retry's event and the figures.
//!
//! The async loop awaits the hook with them, as `#[retry]`'s expansion does for an `async fn`'s
//! awaited hooks.
//!
//! A hook returns a [`HookFuture`], boxed and `Send`.
//!
//! The middleware faces box their own future as `Send`.
//!
//! An async closure's future cannot be named, nor so bounded, on stable Rust.

use core::future::{ready, Future};
use core::marker::PhantomData;
use core::pin::Pin;

use crate::policy::{GiveUp, RetryEvent, RetryStats, Unset};
use crate::run::stats::StatsHook;

/// What an async hook returns: `Box::pin(async move { … })`.
///
/// ```
/// use retry_jitter::hooks::HookFuture;
/// use retry_jitter::RetryEvent;
///
/// fn log<'a>(error: &'a std::io::Error, event: &'a RetryEvent) -> HookFuture<'a> {
///     Box::pin(async move { eprintln!("attempt {} failed: {error}", event.attempt) })
/// }
/// # let _ = log;
/// ```
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A call's async hooks, one slot each, [`Unset`] where none was given.
///
/// The loop awaits them.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct AsyncHooks<N = Unset, G = Unset, S = Unset> {
    pub(crate) notify: N,
    pub(crate) give_up: G,
    pub(crate) stats: S,
}

/// An async hook of the closure API, awaited with what its sync hook is handed
/// (`Fn(&E, &RetryEvent) -> HookFuture`, …).
#[derive(Clone, Copy, Debug)]
pub struct AsyncHook<F>(pub(crate) F);

/// One slot of a call's async hooks, as the loop awaits it: `ON` where there is a hook.
pub trait AsyncSlot {
    /// Whether there is a hook to await.
    const ON: bool;
}

impl AsyncSlot for Unset {
    const ON: bool = false;
}

impl<F> AsyncSlot for AsyncHook<F> {
    const ON: bool = true;
}

/// An async `notify` of a call whose error is `E`.
pub trait NotifyAsync<E>: AsyncSlot {
    /// `error` ended call number `event.attempt`; the next comes after `event.delay`.
    fn notify<'a>(&'a self, error: &'a E, event: &'a RetryEvent) -> HookFuture<'a>;
}

/// An async `give_up` of a call whose error is `E`.
pub trait GiveUpAsync<E>: AsyncSlot {
    /// Retrying ended with `error`, for the reason in `give_up`.
    fn give_up<'a>(&'a self, error: &'a E, give_up: &'a GiveUp) -> HookFuture<'a>;
}

/// An async `stats` hook.
pub trait StatsAsync: AsyncSlot {
    /// The call ended with these figures.
    fn stats<'a>(&'a self, stats: &'a RetryStats) -> HookFuture<'a>;
}

impl<E> NotifyAsync<E> for Unset {
    fn notify<'a>(&'a self, _: &'a E, _: &'a RetryEvent) -> HookFuture<'a> {
        Box::pin(ready(()))
    }
}

impl<E> GiveUpAsync<E> for Unset {
    fn give_up<'a>(&'a self, _: &'a E, _: &'a GiveUp) -> HookFuture<'a> {
        Box::pin(ready(()))
    }
}

impl StatsAsync for Unset {
    fn stats<'a>(&'a self, _: &'a RetryStats) -> HookFuture<'a> {
        Box::pin(ready(()))
    }
}

impl<E, F> NotifyAsync<E> for AsyncHook<F>
where
    F: for<'a> Fn(&'a E, &'a RetryEvent) -> HookFuture<'a>,
{
    fn notify<'a>(&'a self, error: &'a E, event: &'a RetryEvent) -> HookFuture<'a> {
        (self.0)(error, event)
    }
}

impl<E, F> GiveUpAsync<E> for AsyncHook<F>
where
    F: for<'a> Fn(&'a E, &'a GiveUp) -> HookFuture<'a>,
{
    fn give_up<'a>(&'a self, error: &'a E, give_up: &'a GiveUp) -> HookFuture<'a> {
        (self.0)(error, give_up)
    }
}

impl<F> StatsAsync for AsyncHook<F>
where
    F: for<'a> Fn(&'a RetryStats) -> HookFuture<'a>,
{
    fn stats<'a>(&'a self, stats: &'a RetryStats) -> HookFuture<'a> {
        (self.0)(stats)
    }
}

/// A call's async hooks, for a call whose error is `E`: what the async loop awaits.
///
/// And whether it has any to await: constants, so a call without them awaits nothing.
pub trait AwaitedHooks<E> {
    /// An async `notify`.
    const NOTIFY: bool;
    /// An async `give_up`.
    const GIVE_UP: bool;
    /// An async `stats`.
    const STATS: bool;
    /// [`NotifyAsync::notify`].
    fn notify<'a>(&'a self, error: &'a E, event: &'a RetryEvent) -> HookFuture<'a>;
    /// [`GiveUpAsync::give_up`].
    fn give_up<'a>(&'a self, error: &'a E, give_up: &'a GiveUp) -> HookFuture<'a>;
    /// [`StatsAsync::stats`].
    fn stats<'a>(&'a self, stats: &'a RetryStats) -> HookFuture<'a>;
}

impl<E, N: NotifyAsync<E>, G: GiveUpAsync<E>, S: StatsAsync> AwaitedHooks<E>
    for AsyncHooks<N, G, S>
{
    const NOTIFY: bool = N::ON;
    const GIVE_UP: bool = G::ON;
    const STATS: bool = S::ON;
    #[inline]
    fn notify<'a>(&'a self, error: &'a E, event: &'a RetryEvent) -> HookFuture<'a> {
        self.notify.notify(error, event)
    }
    #[inline]
    fn give_up<'a>(&'a self, error: &'a E, give_up: &'a GiveUp) -> HookFuture<'a> {
        self.give_up.give_up(error, give_up)
    }
    #[inline]
    fn stats<'a>(&'a self, stats: &'a RetryStats) -> HookFuture<'a> {
        self.stats.stats(stats)
    }
}

/// No async hooks at all, for guards that cannot hold any: a `static`.
pub(crate) static NONE: AsyncHooks = AsyncHooks {
    notify: Unset,
    give_up: Unset,
    stats: Unset,
};

/// A call's async hooks, a slot set at a time: what the setters (`notify_async`,
/// `give_up_async`, `stats_async`) change.
pub trait Slots {
    /// The same hooks with `notify` in its slot.
    type WithNotify<H>;
    /// The same hooks with `give_up` in its slot.
    type WithGiveUp<H>;
    /// The same hooks with `stats` in its slot.
    type WithStats<H>;
    /// [`Slots::WithNotify`].
    fn with_notify<H>(self, notify: H) -> Self::WithNotify<H>;
    /// [`Slots::WithGiveUp`].
    fn with_give_up<H>(self, give_up: H) -> Self::WithGiveUp<H>;
    /// [`Slots::WithStats`].
    fn with_stats<H>(self, stats: H) -> Self::WithStats<H>;
}

impl<N, G, S> Slots for AsyncHooks<N, G, S> {
    type WithNotify<H> = AsyncHooks<H, G, S>;
    type WithGiveUp<H> = AsyncHooks<N, H, S>;
    type WithStats<H> = AsyncHooks<N, G, H>;
    fn with_notify<H>(self, notify: H) -> AsyncHooks<H, G, S> {
        AsyncHooks {
            notify,
            give_up: self.give_up,
            stats: self.stats,
        }
    }
    fn with_give_up<H>(self, give_up: H) -> AsyncHooks<N, H, S> {
        AsyncHooks {
            notify: self.notify,
            give_up,
            stats: self.stats,
        }
    }
    fn with_stats<H>(self, stats: H) -> AsyncHooks<N, G, H> {
        AsyncHooks {
            notify: self.notify,
            give_up: self.give_up,
            stats,
        }
    }
}

/// The hook of a call's recorder where the call may await async hooks `A` (its error `E`).
///
/// `H`, the `stats` hook, beside what they need kept.
///
/// Every call's figures for an async `stats`; each retry's event and the last error for an
/// async `notify`.
pub struct Awaits<H, A, E>(H, PhantomData<fn(&A, &E)>);

impl<H, A, E> Awaits<H, A, E> {
    /// `hook`, with what `A` needs kept.
    #[inline]
    pub(crate) fn new(hook: H) -> Self {
        Awaits(hook, PhantomData)
    }
}

impl<H: StatsHook, A: AwaitedHooks<E>, E> StatsHook for Awaits<H, A, E> {
    const ACTIVE: bool = H::ACTIVE || A::NOTIFY || A::GIVE_UP || A::STATS;
    const TIMED: bool = H::TIMED || A::STATS;
    const AWAITS: bool = H::AWAITS || A::NOTIFY;
    #[inline]
    fn stats(&self, stats: &RetryStats) {
        self.0.stats(stats);
    }
}

/// The futures of the async `give_up` and `stats` hooks, as a call ends with `out`.
///
/// `give_up`'s when retrying ended with an error, with its figures.
///
/// Made here, in a function that is not async.
///
/// So the awaiting future holds only the boxed futures across their awaits, no borrow of
/// `out`.
///
/// A `Send` call then needs no `Sync` error.
pub(crate) fn at_end<'a, V, E, A: AwaitedHooks<E>>(
    hooks: &'a A,
    out: &'a Result<V, E>,
    give_up: &'a Option<GiveUp>,
    stats: &'a Option<RetryStats>,
) -> [Option<HookFuture<'a>>; 2] {
    let give_up = match (out, give_up) {
        (Err(error), Some(give_up)) if A::GIVE_UP => Some(hooks.give_up(error, give_up)),
        _ => None,
    };
    let stats = match stats {
        Some(stats) if A::STATS => Some(hooks.stats(stats)),
        _ => None,
    };
    [give_up, stats]
}

/// The future of the async `notify` hook after a retry's step.
///
/// It gets the last outcome kept (`last`) and the retry's event (`event`, the recorder's).
///
/// Made outside the async loop, as [`at_end`]'s.
pub(crate) fn at_retry<'a, V, E, A: AwaitedHooks<E>>(
    hooks: &'a A,
    last: Option<&'a Result<V, E>>,
    event: &'a Option<RetryEvent>,
) -> Option<HookFuture<'a>> {
    match (last.and_then(|last| last.as_ref().err()), event) {
        (Some(error), Some(event)) if A::NOTIFY => Some(hooks.notify(error, event)),
        _ => None,
    }
}
