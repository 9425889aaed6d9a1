//! The classifier hooks: what decides, error by error and value by value, whether a call is
//! retried (`on`, `on_ok`), and their stand-ins when none is given.

use crate::policy::Decision;

/// Decides, error by error, whether a failed call is retried.
///
/// Implemented for every `Fn(&E) -> D` where `D: Into<Decision>` (so `bool` works), and for
/// [`RetryAll`].
///
/// ```
/// use retry_runtime::{Classify, Decision};
///
/// let on = |e: &u16| *e >= 500;
/// assert_eq!(on.classify(&503), Decision::Retry);
/// assert_eq!(on.classify(&404), Decision::Stop);
/// ```
pub trait Classify<E> {
    /// What to do about `error`.
    fn classify(&self, error: &E) -> Decision;
}

impl<E, D: Into<Decision>, F: Fn(&E) -> D> Classify<E> for F {
    fn classify(&self, error: &E) -> Decision {
        self(error).into()
    }
}

/// The classifier used when none is given: every error is retried.
///
/// ```
/// use retry_runtime::{Classify, Decision, RetryAll};
/// assert_eq!(RetryAll.classify(&"any error"), Decision::Retry);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct RetryAll;

impl<E> Classify<E> for RetryAll {
    fn classify(&self, _: &E) -> Decision {
        Decision::Retry
    }
}

/// Decides, value by value, whether an `Ok` is retried (`on_ok`: poll until ready).
///
/// Implemented for every `Fn(&T) -> D` where `D: Into<Decision>` (so `bool` works: `true` =
/// try again), and for [`AcceptOk`], which takes every value.
///
/// ```
/// use retry_runtime::{ClassifyOk, Decision};
///
/// #[derive(PartialEq)]
/// enum Job { Pending, Done }
/// let pending = |job: &Job| *job == Job::Pending;
/// assert_eq!(pending.classify_ok(&Job::Pending), Decision::Retry);
/// assert_eq!(pending.classify_ok(&Job::Done), Decision::Stop);
/// ```
pub trait ClassifyOk<T> {
    /// What to do about `value`: [`Decision::Stop`] takes it.
    fn classify_ok(&self, value: &T) -> Decision;
}

impl<T, D: Into<Decision>, F: Fn(&T) -> D> ClassifyOk<T> for F {
    #[inline]
    fn classify_ok(&self, value: &T) -> Decision {
        self(value).into()
    }
}

/// The `on_ok` used when none is given: every `Ok` is a success (and costs nothing).
///
/// ```
/// use retry_runtime::{AcceptOk, ClassifyOk, Decision};
/// assert_eq!(AcceptOk.classify_ok(&"any value"), Decision::Stop);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct AcceptOk;

impl<T> ClassifyOk<T> for AcceptOk {
    #[inline(always)]
    fn classify_ok(&self, _: &T) -> Decision {
        Decision::Stop
    }
}
