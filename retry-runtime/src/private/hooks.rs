//! The hooks of the keys `on`, `on_ok`, `notify` and `give_up`, and the `budget` key.
//!
//! Each value is checked at its key, then handed to the loop as itself, or as a stand-in when
//! it was the wrong one.

use core::marker::PhantomData;

use crate::fleet::SharedBudget;
use crate::policy::{Classify, ClassifyOk, Decision, GiveUp, RetryEvent, RetryStats};
use crate::run::hooks::{GiveUpHook, Notify};
use crate::run::loops::IsResult;
use crate::run::stats::StatsHook;

/// What an `on = …` hook returns: `bool` or [`Decision`] (anything `Into<Decision>`).
///
/// Its own trait, so that a hook returning something else is told that, not
/// `Decision: From<String>`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`on` returns `bool` or `Decision`, not `{Self}`",
    label = "this returns `{Self}`",
    note = "`true` retries the error and `false` returns it; a `Decision` can also say `RetryAfter(wait)`: `on = |e| e.is_timeout()`, or `on = retry_jitter::transient`"
)]
pub trait OnReturns {}

// Not recommended: a wrong return type is this trait's message alone, not `From<String>`.
#[diagnostic::do_not_recommend]
impl<D: Into<Decision>> OnReturns for D {}

/// What an `on_ok = …` hook returns: `bool` or [`Decision`], like [`OnReturns`].
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`on_ok` returns `bool` or `Decision`, not `{Self}`",
    label = "this returns `{Self}`",
    note = "`true` retries the `Ok` value and `false` returns it; a `Decision` can also say `RetryAfter(wait)`: `on_ok = |job| !job.is_done()`"
)]
pub trait OnOkReturns {}

// Not recommended, as `OnReturns`'s.
#[diagnostic::do_not_recommend]
impl<D: Into<Decision>> OnOkReturns for D {}

impl<R, H, K> Hook<R, H, K> {
    /// The hook, once its key's signature is checked.
    ///
    /// The expansion checks it with a generic `fn` of its own, named after the key and spanned
    /// at its value (`on`: `F: Fn(&E) -> D, D: OnReturns`).
    ///
    /// That gives a closure its signature before it is first called.
    ///
    /// A mistake is reported at the key as "required by a bound in `on`", with no function of
    /// this crate's after it.
    #[inline]
    pub const fn new(hook: H) -> Self {
        Hook(hook, PhantomData)
    }

    /// The hook.
    #[inline]
    pub(crate) fn into_inner(self) -> H {
        self.0
    }
}

/// A hook given to the key `K` of a function returning `R`, checked at its key.
///
/// `.keep()` uses autoref specialisation, with [`Keep`] and [`KeepUnchecked`] in scope.
///
/// It hands back the hook itself when it is the right one: statically dispatched, at no cost.
///
/// A wrong one, already reported at its key, is swapped for [`Unchecked`].
///
/// So nothing that uses the hooks reports it again.
///
/// An opaque `impl Classify` would carry the checker's bounds, reported again wherever used.
///
/// A type-erased hook would cost a stored pointer.
pub struct Hook<R, H, K>(H, PhantomData<fn(&R, K)>);

/// The key `on`.
pub struct OnKey;
/// The key `on_ok`.
pub struct OnOkKey;
/// The key `notify`.
pub struct NotifyKey;
/// The key `give_up`.
pub struct GiveUpKey;
/// The key `stats`.
pub struct StatsKey;

/// [`Hook`]'s `.keep()` for a hook of the right type: the hook.
pub trait Keep {
    /// The hook.
    type Hook;
    /// The hook.
    fn keep(self) -> Self::Hook;
}

impl<R: IsResult, H: Classify<R::Err>> Keep for Hook<R, H, OnKey> {
    type Hook = H;
    #[inline]
    fn keep(self) -> H {
        self.0
    }
}

impl<R: IsResult, H: ClassifyOk<R::Ok>> Keep for Hook<R, H, OnOkKey> {
    type Hook = H;
    #[inline]
    fn keep(self) -> H {
        self.0
    }
}

impl<R: IsResult, H: Notify<R::Err>> Keep for Hook<R, H, NotifyKey> {
    type Hook = H;
    #[inline]
    fn keep(self) -> H {
        self.0
    }
}

impl<R: IsResult, H: GiveUpHook<R::Err>> Keep for Hook<R, H, GiveUpKey> {
    type Hook = H;
    #[inline]
    fn keep(self) -> H {
        self.0
    }
}

impl<R, H: StatsHook> Keep for Hook<R, H, StatsKey> {
    type Hook = H;
    #[inline]
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
    #[inline]
    fn keep(self) -> Unchecked {
        Unchecked
    }
}

/// Stands in for a hook of the wrong type, in a program that does not compile.
///
/// It serves every error type, so the loop's bounds add no error to the one at the key.
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

impl StatsHook for Unchecked {
    fn stats(&self, _: &RetryStats) {}
}

/// What `budget = …` takes: a `&` of a [`SharedBudget`] (a `&RetryBudget`).
///
/// The expansion calls the trait's own method, so a wrong value is this message alone.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`budget` needs a `&` of a budget, not `{Self}`",
    label = "not a `&RetryBudget` (or a `&` of another `SharedBudget`)",
    note = "write `budget = &BUDGET` for a `static BUDGET: RetryBudget = RetryBudget::new(10);`, name a `&RetryBudget` argument, or write `budget = none` for no budget at all"
)]
pub trait BudgetArg<'a, S> {
    /// The budget.
    fn budget(self) -> &'a S;
}

#[diagnostic::do_not_recommend]
impl<'a, S: SharedBudget> BudgetArg<'a, S> for &'a S {
    #[inline]
    fn budget(self) -> &'a S {
        self
    }
}
