//! The hooks an `async fn` awaits: `notify`, `give_up` and `stats` given an async closure or
//! an `async fn`.
//!
//! A path's value is sorted by its type (autoref specialisation, [`Probe`]).
//!
//! An `AsyncFn` of the key's arguments is awaited by the function itself.
//!
//! Anything else goes to the loop as a sync hook, checked at its key as always.

use core::marker::PhantomData;

use super::{GiveUpKey, Hook, Keep, NotifyKey, StatsKey, Unchecked};
use crate::policy::{GiveUp, RetryEvent, RetryStats, Unset};
use crate::run::loops::IsResult;

/// An async hook, awaited by the function.
///
/// `notify` before each retry's wait; `give_up` and `stats` as the call ends.
pub struct Awaited<F>(pub F);

impl<F> Awaited<F> {
    /// `notify`.
    #[inline]
    pub async fn call_notify<E>(&self, error: &E, event: &RetryEvent)
    where
        F: AsyncFn(&E, &RetryEvent),
    {
        (self.0)(error, event).await;
    }
    /// `give_up`.
    #[inline]
    pub async fn call_give_up<E>(&self, error: &E, give_up: &GiveUp)
    where
        F: AsyncFn(&E, &GiveUp),
    {
        (self.0)(error, give_up).await;
    }
    /// `stats`.
    #[inline]
    pub async fn call_stats(&self, stats: &RetryStats)
    where
        F: AsyncFn(&RetryStats),
    {
        (self.0)(stats).await;
    }
}

/// No async hook: a sync one, called by the loop (the stand-in of a wrong one too: nothing).
pub type NoAwait = Unchecked;

/// The key `notify` given an async closure: checked, a [`Hook`] of this key keeps as
/// [`Awaited`].
pub struct AwaitNotifyKey;
/// The key `give_up` given an async closure.
pub struct AwaitGiveUpKey;
/// The key `stats` given an async closure.
pub struct AwaitStatsKey;

impl<R: IsResult, H: AsyncFn(&R::Err, &RetryEvent)> Keep for Hook<R, H, AwaitNotifyKey> {
    type Hook = Awaited<H>;
    #[inline]
    fn keep(self) -> Awaited<H> {
        Awaited(self.into_inner())
    }
}

impl<R: IsResult, H: AsyncFn(&R::Err, &GiveUp)> Keep for Hook<R, H, AwaitGiveUpKey> {
    type Hook = Awaited<H>;
    #[inline]
    fn keep(self) -> Awaited<H> {
        Awaited(self.into_inner())
    }
}

impl<R, H: AsyncFn(&RetryStats)> Keep for Hook<R, H, AwaitStatsKey> {
    type Hook = Awaited<H>;
    #[inline]
    fn keep(self) -> Awaited<H> {
        Awaited(self.into_inner())
    }
}

/// No awaited hook: a sync one (called by the loop), or one of the wrong type.
///
/// A wrong one is one compile error already, at its key. Nothing.
impl Unchecked {
    /// Nothing.
    #[inline]
    pub async fn call_notify<E>(&self, _: &E, _: &RetryEvent) {}
    /// Nothing.
    #[inline]
    pub async fn call_give_up<E>(&self, _: &E, _: &GiveUp) {}
    /// Nothing.
    #[inline]
    pub async fn call_stats(&self, _: &RetryStats) {}
}

/// Sorts the value `V` given to key `K` of a function returning `R`: `(&&Probe::of(&v)).kind()`
/// with [`AsyncArm`] and [`SyncArm`] in scope.
pub struct Probe<R, V, K>(PhantomData<fn(&R, &V) -> K>);

impl<R, V, K> Probe<R, V, K> {
    /// The probe of `value`.
    #[inline]
    pub fn of(_: &V) -> Self {
        Probe(PhantomData)
    }
}

/// The arm of an `AsyncFn` of the key's arguments.
pub trait AsyncArm {
    /// [`AsyncKind`].
    fn kind(&self) -> AsyncKind;
}

impl<R: IsResult, F: AsyncFn(&R::Err, &RetryEvent)> AsyncArm for &Probe<R, F, NotifyKey> {
    #[inline]
    fn kind(&self) -> AsyncKind {
        AsyncKind
    }
}

impl<R: IsResult, F: AsyncFn(&R::Err, &GiveUp)> AsyncArm for &Probe<R, F, GiveUpKey> {
    #[inline]
    fn kind(&self) -> AsyncKind {
        AsyncKind
    }
}

impl<R, F: AsyncFn(&RetryStats)> AsyncArm for &Probe<R, F, StatsKey> {
    #[inline]
    fn kind(&self) -> AsyncKind {
        AsyncKind
    }
}

/// The arm of anything else: a sync hook, checked at its key.
pub trait SyncArm {
    /// [`SyncKind`].
    fn kind(&self) -> SyncKind;
}

impl<R, V, K> SyncArm for Probe<R, V, K> {
    #[inline]
    fn kind(&self) -> SyncKind {
        SyncKind
    }
}

/// The value is awaited: no sync hook.
pub struct AsyncKind;

impl AsyncKind {
    /// `(Unset, Awaited(value))`.
    #[inline]
    pub fn split<V>(self, value: V) -> (Unset, Awaited<V>) {
        (Unset, Awaited(value))
    }
}

/// The value is a sync hook.
pub struct SyncKind;

impl SyncKind {
    /// `(value, NoAwait)`.
    #[inline]
    pub fn split<V>(self, value: V) -> (V, NoAwait) {
        (value, Unchecked)
    }
}
