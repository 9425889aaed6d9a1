//! A [`Retry`](super::Retry)'s guards as its setters build them.
//!
//! A breaker slot and a throttle slot ([`GuardPair`]).
//!
//! Around them, the cancel token ([`Cancellable`]) and the async hooks ([`Awaiting`]).
//!
//! Each wrapper is still a `GuardPair` for the setters after it.

use core::borrow::Borrow;

use crate::policy::CancelToken;
use crate::run::awaiting::{AsyncHooks, Slots};
use crate::run::guard::forward_guard;

/// The closure API's guards: a breaker slot and a throttle slot, each set once.
///
/// Around them, the cancel token if one was given ([`Cancellable`]).
pub trait GuardPair {
    /// The breaker slot's guard.
    type Breaker;
    /// The throttle slot's guard.
    type Throttle;
    /// The same guards with these two slots (a cancel token kept).
    type With<Br, Th>;
    /// The breaker slot.
    fn breaker(&self) -> Self::Breaker;
    /// The throttle slot.
    fn throttle(&self) -> Self::Throttle;
    /// The same guards with these two slots.
    fn with<Br, Th>(self, breaker: Br, throttle: Th) -> Self::With<Br, Th>;
    /// The async hooks (every slot `Unset` until a setter fills one).
    type AsyncHooks: Slots;
    /// The same guards with the async hooks `X`.
    type WithAsync<X>;
    /// The same guards with the async hooks `f` makes of theirs.
    fn with_async<X>(self, f: impl FnOnce(Self::AsyncHooks) -> X) -> Self::WithAsync<X>;
}

impl<A: Copy, B: Copy> GuardPair for (A, B) {
    type Breaker = A;
    type Throttle = B;
    type With<Br, Th> = (Br, Th);
    fn breaker(&self) -> A {
        self.0
    }
    fn throttle(&self) -> B {
        self.1
    }
    fn with<Br, Th>(self, breaker: Br, throttle: Th) -> (Br, Th) {
        (breaker, throttle)
    }
    type AsyncHooks = AsyncHooks;
    type WithAsync<X> = Awaiting<(A, B), X>;
    fn with_async<X>(self, f: impl FnOnce(AsyncHooks) -> X) -> Awaiting<(A, B), X> {
        Awaiting::new(self, f(AsyncHooks::default()))
    }
}

/// The closure API's guards with a cancel token.
///
/// For [`Retry::cancel`](crate::Retry::cancel), `K` is a `&CancelToken`.
///
/// A middleware's [`cancel`](crate::builder::RetryBuilder::cancel) keeps a `CancelToken`, a
/// clone.
///
/// The loop reads the token; the guards inside are asked and told as without it.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Cancellable<K, P> {
    guards: P,
    token: K,
}

impl<K: Borrow<CancelToken>, P: GuardPair> GuardPair for Cancellable<K, P> {
    type Breaker = P::Breaker;
    type Throttle = P::Throttle;
    type With<Br, Th> = Cancellable<K, P::With<Br, Th>>;
    fn breaker(&self) -> P::Breaker {
        self.guards.breaker()
    }
    fn throttle(&self) -> P::Throttle {
        self.guards.throttle()
    }
    fn with<Br, Th>(self, breaker: Br, throttle: Th) -> Self::With<Br, Th> {
        Cancellable {
            guards: self.guards.with(breaker, throttle),
            token: self.token,
        }
    }
    type AsyncHooks = P::AsyncHooks;
    type WithAsync<X> = Cancellable<K, P::WithAsync<X>>;
    fn with_async<X>(self, f: impl FnOnce(P::AsyncHooks) -> X) -> Self::WithAsync<X> {
        Cancellable {
            guards: self.guards.with_async(f),
            token: self.token,
        }
    }
}

impl<K, P> Cancellable<K, P> {
    /// `guards`, cancelled by `token`.
    pub(super) fn new(guards: P, token: K) -> Self {
        Cancellable { guards, token }
    }

    /// The guards beside the token.
    pub(super) fn guards(&self) -> &P {
        &self.guards
    }

    /// The guards and the token, apart.
    #[cfg(all(feature = "tonic", feature = "metrics"))]
    pub(super) fn into_parts(self) -> (P, K) {
        (self.guards, self.token)
    }
}

forward_guard!(impl[K: Borrow<CancelToken>, P] Cancellable<K, P> => guards: P, cancel: token);

/// A [`Retry`](crate::Retry)'s guards with async hooks `X`
/// ([`Retry::notify_async`](crate::Retry::notify_async) and its kin).
///
/// The guards `P` refuse and hear as before.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Awaiting<P, X> {
    guards: P,
    hooks: X,
}

impl<P, X> Awaiting<P, X> {
    /// `guards`, with the async hooks `hooks`.
    pub(crate) fn new(guards: P, hooks: X) -> Self {
        Awaiting { guards, hooks }
    }

    /// The guards beside the async hooks.
    pub(super) fn guards(&self) -> &P {
        &self.guards
    }

    /// The async hooks.
    pub(super) fn hooks(&self) -> &X {
        &self.hooks
    }

    /// The guards and the async hooks, apart.
    #[cfg(all(feature = "tonic", feature = "metrics"))]
    pub(super) fn into_parts(self) -> (P, X) {
        (self.guards, self.hooks)
    }
}

impl<P: GuardPair, X: Slots> GuardPair for Awaiting<P, X> {
    type Breaker = P::Breaker;
    type Throttle = P::Throttle;
    type With<Br, Th> = Awaiting<P::With<Br, Th>, X>;
    fn breaker(&self) -> P::Breaker {
        self.guards.breaker()
    }
    fn throttle(&self) -> P::Throttle {
        self.guards.throttle()
    }
    fn with<Br, Th>(self, breaker: Br, throttle: Th) -> Self::With<Br, Th> {
        Awaiting::new(self.guards.with(breaker, throttle), self.hooks)
    }
    type AsyncHooks = X;
    type WithAsync<Y> = Awaiting<P, Y>;
    fn with_async<Y>(self, f: impl FnOnce(X) -> Y) -> Awaiting<P, Y> {
        Awaiting::new(self.guards, f(self.hooks))
    }
}

forward_guard!(impl[P, X] Awaiting<P, X> => guards: P);
