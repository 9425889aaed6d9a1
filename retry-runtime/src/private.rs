//! What `#[retry]`'s expansion calls. Not a public API: names and signatures change freely.

use core::marker::PhantomData;

pub use core::ops::ControlFlow;
pub use core::time::Duration;

pub use crate::retry::{run_blocking, start_time, succeeded, Attempts, IsResult};
pub use crate::sleep::{now, sleep_blocking, Clock};
#[cfg(feature = "tokio")]
pub use crate::sleep::{tokio_now, tokio_sleep};
pub use crate::{
    Classify, Decision, Jitter, NoNotify, Notify, Policy, RetryAll, RetryEvent, RetryState,
};

/// Gives an `on = …` closure its signature `Fn(&E) -> D` before it is first called, so that
/// `on = |e| e.is_timeout()` needs no annotation.
#[inline(always)]
pub fn classifier<R, D, F>(on: F) -> impl Classify<R::Err>
where
    R: IsResult,
    D: Into<Decision>,
    F: Fn(&R::Err) -> D,
{
    On::<R, F>(on, PhantomData)
}

/// An `on = …` value, tied to the function's return type `R`. [`classifier`] returns it as an
/// opaque `impl Classify<R::Err>`, so the loop's bounds hold whatever `on` is, and a mistake in
/// `on` is reported at the `on` key, once.
pub struct On<R, F>(F, PhantomData<fn(&R)>);

impl<R, D, F> Classify<R::Err> for On<R, F>
where
    R: IsResult,
    D: Into<Decision>,
    F: Fn(&R::Err) -> D,
{
    #[inline]
    fn classify(&self, error: &R::Err) -> Decision {
        (self.0)(error).into()
    }
}

/// Gives a `notify = …` closure its signature `Fn(&E, &RetryEvent)`, like [`classifier`].
#[inline(always)]
pub fn notifier<R, F>(notify: F) -> impl Notify<R::Err>
where
    R: IsResult,
    F: Fn(&R::Err, &RetryEvent),
{
    OnRetry::<R, F>(notify, PhantomData)
}

/// A `notify = …` value, tied to the function's return type `R`, like [`On`].
pub struct OnRetry<R, F>(F, PhantomData<fn(&R)>);

impl<R, F> Notify<R::Err> for OnRetry<R, F>
where
    R: IsResult,
    F: Fn(&R::Err, &RetryEvent),
{
    #[inline]
    fn notify(&self, error: &R::Err, event: &RetryEvent) {
        (self.0)(error, event);
    }
}

/// The by-value arguments of a retried function are cloned for each attempt.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` calls the body once per attempt, so the by-value argument type `{Self}` must be `Clone`",
    label = "this argument is cloned for each attempt",
    note = "take it by reference (`&{Self}`), or implement or derive `Clone` for it"
)]
pub trait CloneArg {
    /// A fresh copy for the next attempt.
    fn clone_arg(&self) -> Self;
}

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

/// The timer of an `async fn`, boxed: the retried function's future then holds a pointer, not
/// a timer, and a first-call success (which never sleeps) allocates nothing.
#[inline]
pub fn sleep_boxed<F: core::future::Future<Output = ()>>(sleep: F) -> core::pin::Pin<Box<F>> {
    Box::pin(sleep)
}
