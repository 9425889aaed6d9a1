//! What `#[retry]`'s expansion calls. Not a public API: names and signatures change freely.

use core::marker::PhantomData;
pub use core::ops::ControlFlow;
pub use core::time::Duration;

// Exactly what the expansion names.
pub use crate::run::hedge::{Discard, Hedge, LatencyHistogram};
pub use crate::run::loops::{sleep_boxed, start_time, IsResult, Loop, LoopState, Verdict};
pub use crate::run::question::Branch;
pub use crate::sleep::Clock;
pub use crate::sleep::{now, sleep_blocking};
#[cfg(feature = "tokio")]
pub use crate::sleep::{tokio_now, tokio_sleep};
pub use crate::timeout::{poll_race, Limit, Race};
pub use crate::{
    AcceptOk, Hooks, Jitter, NoBudget, NoGiveUp, NoGuard, NoNotify, NoTrace, Policy, RetryAll,
};

// Two families in files of their own; the rest stays here, where the compiler's notes on a
// misused key point (`retry-runtime/src/private.rs`, in the ui goldens).
#[path = "private/default_on.rs"]
mod default_on;
#[cfg(feature = "tracing")]
#[path = "private/render.rs"]
mod render;

pub use default_on::*;
#[cfg(feature = "tracing")]
pub use render::*;

use crate::{
    AdaptiveThrottle, BreakerGuard, CircuitBreaker, CircuitOpen, ThrottleGuard, Throttled,
};

use crate::{
    Classify, ClassifyOk, Decision, GiveUp, GiveUpHook, Notify, RetryEvent, SharedBudget, TimedOut,
};

/// Gives an `on = …` closure its signature `Fn(&E) -> D` before it is first called, so that
/// `on = |e| e.is_timeout()` needs no annotation, and checks it there: a mistake in `on` is
/// reported at the `on` key. What it returns carries no bound (see [`Hook`]).
#[inline(always)]
pub fn classifier<R, D, F>(on: F) -> Hook<R, F, OnKey>
where
    R: IsResult,
    D: Into<Decision>,
    F: Fn(&R::Err) -> D,
{
    Hook(on, PhantomData)
}

/// Gives an `on_ok = …` closure its signature `Fn(&T) -> D`, like [`classifier`].
#[inline(always)]
pub fn ok_classifier<R, D, F>(on_ok: F) -> Hook<R, F, OnOkKey>
where
    R: IsResult,
    D: Into<Decision>,
    F: Fn(&R::Ok) -> D,
{
    Hook(on_ok, PhantomData)
}

/// Gives a `notify = …` closure its signature `Fn(&E, &RetryEvent)`, like [`classifier`].
#[inline(always)]
pub fn notifier<R, F>(notify: F) -> Hook<R, F, NotifyKey>
where
    R: IsResult,
    F: Fn(&R::Err, &RetryEvent),
{
    Hook(notify, PhantomData)
}

/// Checks a `notify = …` value that is not a closure (a path, a `Notify` value of one's own
/// type, `&SEEN`…): any [`Notify`] of the function's error type, a fn `fn(&E, &RetryEvent)`
/// included, like [`notifier`].
#[inline(always)]
pub fn notify_value<R, N>(notify: N) -> Hook<R, N, NotifyKey>
where
    R: IsResult,
    N: Notify<R::Err>,
{
    Hook(notify, PhantomData)
}

/// Gives a `give_up = …` closure its signature `Fn(&E, &GiveUp)`, like [`classifier`].
#[inline(always)]
pub fn give_up_hook<R, F>(give_up: F) -> Hook<R, F, GiveUpKey>
where
    R: IsResult,
    F: Fn(&R::Err, &GiveUp),
{
    Hook(give_up, PhantomData)
}

/// A hook given to the key `K` of a function returning `R`, checked by [`classifier`] (or
/// [`notifier`], [`give_up_hook`]). `.keep()` (autoref specialisation, with [`Keep`] and
/// [`KeepUnchecked`] in scope) hands back the hook itself when it is the right one, statically
/// dispatched, at no cost; a wrong one, already reported at its key, is swapped for
/// [`Unchecked`], so that nothing that uses the hooks reports it again. (An opaque
/// `impl Classify` carries the checker's bounds, which were checked again, and reported again,
/// wherever the hooks were used; a type-erased hook would cost a stored pointer.)
pub struct Hook<R, H, K>(H, PhantomData<fn(&R, K)>);

/// The key `on`.
pub struct OnKey;
/// The key `on_ok`.
pub struct OnOkKey;
/// The key `notify`.
pub struct NotifyKey;
/// The key `give_up`.
pub struct GiveUpKey;

/// [`Hook`]'s `.keep()` for a hook of the right type: the hook.
pub trait Keep {
    /// The hook.
    type Hook;
    /// The hook.
    fn keep(self) -> Self::Hook;
}

impl<R: IsResult, H: Classify<R::Err>> Keep for Hook<R, H, OnKey> {
    type Hook = H;
    #[inline(always)]
    fn keep(self) -> H {
        self.0
    }
}

impl<R: IsResult, H: ClassifyOk<R::Ok>> Keep for Hook<R, H, OnOkKey> {
    type Hook = H;
    #[inline(always)]
    fn keep(self) -> H {
        self.0
    }
}

impl<R: IsResult, H: Notify<R::Err>> Keep for Hook<R, H, NotifyKey> {
    type Hook = H;
    #[inline(always)]
    fn keep(self) -> H {
        self.0
    }
}

impl<R: IsResult, H: GiveUpHook<R::Err>> Keep for Hook<R, H, GiveUpKey> {
    type Hook = H;
    #[inline(always)]
    fn keep(self) -> H {
        self.0
    }
}

/// [`Hook`]'s `.keep()` for a hook of the wrong type (one compile error already): a stand-in.
pub trait KeepUnchecked {
    /// The stand-in.
    fn keep(self) -> Unchecked;
}

impl<R, H, K> KeepUnchecked for &Hook<R, H, K> {
    #[inline(always)]
    fn keep(self) -> Unchecked {
        Unchecked
    }
}

/// Stands in for a hook of the wrong type, in a program that does not compile: it serves every
/// error type, so that the loop's bounds add no error to the one at the key.
pub struct Unchecked;

impl<E> Classify<E> for Unchecked {
    fn classify(&self, _: &E) -> Decision {
        Decision::Stop
    }
}

impl<T> ClassifyOk<T> for Unchecked {
    fn classify_ok(&self, _: &T) -> Decision {
        Decision::Stop
    }
}

impl<E> Notify<E> for Unchecked {
    fn notify(&self, _: &E, _: &RetryEvent) {}
}

impl<E> GiveUpHook<E> for Unchecked {
    fn give_up(&self, _: &E, _: &GiveUp) {}
}

/// `budget = …` takes a `&` of a [`SharedBudget`] (a `&RetryBudget`).
#[inline(always)]
pub fn budget<S: SharedBudget>(budget: &S) -> &S {
    budget
}

/// The by-value arguments of a retried function are cloned for each attempt.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` calls the body once per attempt, so the by-value argument type `{Self}` must be `Clone`",
    label = "this argument is cloned for each attempt",
    note = "take it by reference (`&{Self}`), or implement or derive `Clone` for it (a generic type such as `Vec<T>` or `Option<T>` is `Clone` when its parameters are: bound them with `Clone`, or derive `Clone` on them); a type that is not yours to change (an extractor, like axum's `Path`) can stay in a function that calls a retried one with what the body needs from it"
)]
pub trait CloneArg {
    /// A fresh copy for the next attempt.
    fn clone_arg(&self) -> Self;
}

// Not recommended, as `CloneSelf`'s: a `Vec<B>` or `Option<NotClone>` that is not `Clone` for its
// inner type is then reported as this trait's message on the argument, not as `B: Clone`.
#[diagnostic::do_not_recommend]
impl<T: Clone> CloneArg for T {
    #[inline(always)]
    fn clone_arg(&self) -> Self {
        self.clone()
    }
}

/// Clone a by-value argument for one attempt.
#[inline(always)]
pub fn clone_arg<T: CloneArg>(arg: &T) -> T {
    arg.clone_arg()
}

/// A receiver taken by value (`self`, `self: Arc<Self>`…) is cloned for each attempt.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` calls the body once per attempt, so `self` taken by value as `{Self}` must be `Clone`",
    label = "`self` is cloned for each attempt",
    note = "take `&self` or `&mut self`, or make `Self` `Clone`; where the body needs a handle it can own (to spawn a task), take `self: &Arc<Self>` and clone the `Arc`, or `self: Arc<Self>`"
)]
pub trait CloneSelf {
    /// A fresh copy for the next attempt.
    fn clone_self(&self) -> Self;
}

// Not recommended: a `Box<Self>` that is not `Clone` is then reported as this trait's message,
// not as `Box<Self>: Clone` (which says nothing of retrying).
#[diagnostic::do_not_recommend]
impl<T: Clone> CloneSelf for T {
    #[inline(always)]
    fn clone_self(&self) -> Self {
        self.clone()
    }
}

/// Clone a by-value receiver for one attempt.
#[inline(always)]
pub fn clone_self<T: CloneSelf>(receiver: &T) -> T {
    receiver.clone_self()
}

/// How an attempt gets its own `self` taken by value as `Self`: re-borrowed where `Self` is a
/// `&mut T` (never `Clone`: serde's `impl Serializer for &mut Serializer<W>`), else cloned.
/// Chosen by autoref specialisation, `(&&SelfKind::<Self>::new()).kind()`, with
/// [`ReborrowKind`] and [`CloneKind`] in scope: where `Self` is known to be a `&mut`, the first
/// applies; anywhere else (a type parameter too) the second.
pub struct SelfKind<T: ?Sized>(PhantomData<fn(&T)>);

impl<T: ?Sized> SelfKind<T> {
    /// The chooser.
    #[allow(clippy::new_without_default)]
    #[inline(always)]
    pub const fn new() -> Self {
        SelfKind(PhantomData)
    }
}

/// `self` is a `&mut`: each attempt re-borrows it.
pub struct ByReborrow;
/// `self` is cloned for each attempt.
pub struct ByClone;

/// [`SelfKind`]'s arm for a `&mut T`.
pub trait ReborrowKind {
    /// [`ByReborrow`].
    fn kind(&self) -> ByReborrow;
}

impl<T: ?Sized> ReborrowKind for &SelfKind<&mut T> {
    #[inline(always)]
    fn kind(&self) -> ByReborrow {
        ByReborrow
    }
}

/// [`SelfKind`]'s arm for any other type.
pub trait CloneKind {
    /// [`ByClone`].
    fn kind(&self) -> ByClone;
}

impl<T: ?Sized> CloneKind for SelfKind<T> {
    #[inline(always)]
    fn kind(&self) -> ByClone {
        ByClone
    }
}

/// An attempt's own `self` of type `T`, made the way the kind says. On the kind, not on `T`: a
/// `T` that is not `Clone` is then reported as [`CloneSelf`]'s message, with no list of the
/// other kinds' impls.
pub trait OwnSelf<'s, T> {
    /// A clone of `self`, or a re-borrow of it for `'s`.
    type Own;
    /// The attempt's `self`.
    fn own_self(self, receiver: &'s mut T) -> Self::Own;
}

impl<'s, T: CloneSelf> OwnSelf<'s, T> for ByClone {
    type Own = T;
    #[inline(always)]
    fn own_self(self, receiver: &'s mut T) -> T {
        receiver.clone_self()
    }
}

impl<'s, T: ?Sized + 's> OwnSelf<'s, &mut T> for ByReborrow {
    type Own = &'s mut T;
    #[inline(always)]
    fn own_self(self, receiver: &'s mut &mut T) -> &'s mut T {
        receiver
    }
}

/// A by-value `self` for one attempt: cloned, or re-borrowed if it is a `&mut` (see
/// [`SelfKind`]).
#[inline(always)]
pub fn own_self<'s, K: OwnSelf<'s, T>, T>(kind: K, receiver: &'s mut T) -> K::Own {
    kind.own_self(receiver)
}

/// A by-value `self` that is a `&mut` cannot be returned, or a borrow of it: each attempt
/// re-borrows it for itself.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` cannot return a borrow of `self`: `Self` is a `&mut`, which each attempt re-borrows for itself, and the borrow checker cannot see that the attempt which returns is the last",
    label = "this may hold a borrow of `self`",
    note = "return an owned value, or retry a function that does not return the borrow and call it from this one"
)]
pub trait Unborrowed {}

impl Unborrowed for ByClone {}

/// The kind of a by-value `self` where the return type may hold a borrow of it (it names
/// `Self` or a lifetime of the `impl`'s): a kind that would re-borrow is refused, at `kind`,
/// which the expansion spans at the return type. The kind then goes to [`own_self`], whose call
/// is spanned at `self`: a `Self` that is not `Clone` is one error, there. (One helper that
/// bounded the kind with both `Unborrowed` and `OwnSelf` reported that `OwnSelf` bound at its
/// argument, the kind, at the return type, and again for the projection of its `K::Own`, at
/// the call, at `self`: the same message twice.)
#[inline(always)]
pub fn unborrowed<K: Unborrowed>(kind: K) -> K {
    kind
}

/// `policy = …` takes a `Policy` or a `&Policy`.
#[diagnostic::on_unimplemented(
    message = "`policy = …` takes a `retry_jitter::Policy` or a `&Policy`, not `{Self}`",
    label = "expected a `Policy`"
)]
pub trait AsPolicy {
    /// The policy.
    fn as_policy(&self) -> Policy;
}

impl AsPolicy for Policy {
    #[inline(always)]
    fn as_policy(&self) -> Policy {
        *self
    }
}

impl AsPolicy for &Policy {
    #[inline(always)]
    fn as_policy(&self) -> Policy {
        **self
    }
}

/// The policy of a `policy = …` key.
#[inline(always)]
pub fn policy<P: AsPolicy>(policy: P) -> Policy {
    policy.as_policy()
}

/// The error type of a function with `timeout = …` is made from [`TimedOut`].
#[diagnostic::on_unimplemented(
    message = "`timeout` needs the error type `{Self}` to implement `From<retry_jitter::TimedOut>`",
    label = "an attempt cut by this timeout fails with `{Self}::from(retry_jitter::TimedOut)`",
    note = "if `{Self}` is a type of your own, write `impl From<retry_jitter::TimedOut> for {Self}` (a variant such as `TimedOut`)",
    note = "if it is not (`String`, `Box<dyn Error>`, another crate's error), the orphan rule forbids that impl (E0117): wrap `{Self}` in an error type of your own that has it, or return `std::io::Error`, which has it"
)]
pub trait FromTimedOut {
    /// The error of a cut attempt.
    fn from_timed_out(timed_out: TimedOut) -> Self;
}

// Not recommended: an error type whose `From` impls come from a blanket impl of its own (sqlx's
// `impl<E: DatabaseError> From<E> for Error`) is then reported as this trait's message at the
// `timeout` key, not as `TimedOut: DatabaseError`.
#[diagnostic::do_not_recommend]
impl<E: From<TimedOut>> FromTimedOut for E {
    #[inline]
    fn from_timed_out(timed_out: TimedOut) -> Self {
        E::from(timed_out)
    }
}

/// The outcome of an attempt `timeout = …` cut.
#[inline]
pub fn timed_out<R>(timed_out: TimedOut) -> R
where
    R: IsResult,
    R::Err: FromTimedOut,
{
    R::from_err(FromTimedOut::from_timed_out(timed_out))
}

/// No `timeout`: for the hedging loop, which takes an optional one.
#[inline(always)]
pub fn no_timeout<R>() -> Option<(Duration, crate::run::timeout::MakeError<R>)> {
    None
}

/// The error type of a function with `throttle = …` is made from [`Throttled`].
#[diagnostic::on_unimplemented(
    message = "`throttle` needs the error type `{Self}` to implement `From<retry_jitter::Throttled>`",
    label = "an attempt this throttle rejects fails with `{Self}::from(retry_jitter::Throttled)`",
    note = "for an error type of your own, write `impl From<retry_jitter::Throttled> for {Self}` (a variant for it); for one that is not yours (`String`, a library's), return an error type of your own that wraps it, or `std::io::Error`, which has it"
)]
pub trait FromThrottled {
    /// The error of a rejected attempt.
    fn from_throttled(throttled: Throttled) -> Self;
}

#[diagnostic::do_not_recommend]
impl<E: From<Throttled>> FromThrottled for E {
    #[inline]
    fn from_throttled(throttled: Throttled) -> Self {
        E::from(throttled)
    }
}

/// `throttle = …`: the guard, whose rejected attempts end the call with `E::from(Throttled)`.
#[inline(always)]
pub fn throttle_guard<R>(throttle: &AdaptiveThrottle) -> ThrottleGuard<'_, fn(Throttled) -> R>
where
    R: IsResult,
    R::Err: FromThrottled,
{
    ThrottleGuard::new(throttle, |t| R::from_err(FromThrottled::from_throttled(t)))
}

/// The error type of a function with `breaker = …` is made from [`CircuitOpen`].
#[diagnostic::on_unimplemented(
    message = "`breaker` needs the error type `{Self}` to implement `From<retry_jitter::CircuitOpen>`",
    label = "a call this breaker refuses fails with `{Self}::from(retry_jitter::CircuitOpen)`",
    note = "for an error type of your own, write `impl From<retry_jitter::CircuitOpen> for {Self}` (a variant for it); for one that is not yours (`String`, a library's), return an error type of your own that wraps it, or `std::io::Error`, which has it"
)]
pub trait FromCircuitOpen {
    /// The error of a refused call.
    fn from_circuit_open(open: CircuitOpen) -> Self;
}

#[diagnostic::do_not_recommend]
impl<E: From<CircuitOpen>> FromCircuitOpen for E {
    #[inline]
    fn from_circuit_open(open: CircuitOpen) -> Self {
        E::from(open)
    }
}

/// `breaker = …`: the guard, whose refused calls end with `E::from(CircuitOpen)`.
#[inline(always)]
pub fn breaker_guard<R>(breaker: &CircuitBreaker) -> BreakerGuard<'_, fn(CircuitOpen) -> R>
where
    R: IsResult,
    R::Err: FromCircuitOpen,
{
    BreakerGuard::new(breaker, |c| {
        R::from_err(FromCircuitOpen::from_circuit_open(c))
    })
}
