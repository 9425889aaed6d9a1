//! The `on` of a function without one: by [`Transient`] where its error type has it, else
//! every error retried.

use core::marker::PhantomData;

use crate::policy::{Classify, Decision, RetryAll};
use crate::Transient;

/// The `on` of a function without one, chosen by autoref specialisation on its return type `R`.
///
/// `(&&DefaultOn::<R>::new()).default_on()`, with [`OnTransient`] and [`OnEvery`] in scope,
/// picks it.
///
/// It is [`ByTransient`] when `R` is a `Result` whose error type implements [`Transient`], else
/// [`RetryAll`].
///
/// Decided where the type is known, with no bound on it.
///
/// A generic error type, or an `R` that is not a `Result`, takes the fallback.
///
/// Both are zero-sized and statically dispatched: the success path pays nothing for the choice.
pub struct DefaultOn<R>(PhantomData<fn(&R)>);

impl<R> DefaultOn<R> {
    /// The chooser.
    #[allow(clippy::new_without_default)]
    #[inline]
    pub const fn new() -> Self {
        DefaultOn(PhantomData)
    }
}

/// [`DefaultOn`]'s arm for an error type that implements [`Transient`].
pub trait OnTransient {
    /// [`ByTransient`].
    fn default_on(&self) -> ByTransient;
}

impl<T, E: Transient> OnTransient for &DefaultOn<Result<T, E>> {
    #[inline]
    fn default_on(&self) -> ByTransient {
        ByTransient
    }
}

/// [`DefaultOn`]'s fallback: every error is retried.
pub trait OnEvery {
    /// [`RetryAll`].
    fn default_on(&self) -> RetryAll;
}

impl<R> OnEvery for DefaultOn<R> {
    #[inline]
    fn default_on(&self) -> RetryAll {
        RetryAll
    }
}

/// Classifies a [`Transient`] error by its own [`Transient::decision`]: what
/// `on = retry_jitter::transient` does, as a type.
#[derive(Clone, Copy, Debug, Default)]
pub struct ByTransient;

impl<E: Transient> Classify<E> for ByTransient {
    #[inline]
    fn classify(&self, error: &E) -> Decision {
        error.decision()
    }
}
