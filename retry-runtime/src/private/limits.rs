//! The keys that limit a call.
//!
//! - `policy`.
//! - `timeout`, `throttle` and `breaker`, whose refusals the function's error type must be made
//!   from.
//! - `cancel`, the call's token.

use core::future::Future;
use core::time::Duration;

use crate::fleet::{AdaptiveThrottle, CircuitBreaker, CircuitOpen, Throttled};
use crate::policy::TimedOut;
use crate::policy::{CancelToken, Policy};
use crate::run::guard::{BreakerGuard, Cancelling, Guard, ThrottleGuard};
use crate::run::hooks::Hooks;
use crate::run::loops::IsResult;
use crate::run::wait::attempt_or_cancel;

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
    #[inline]
    fn as_policy(&self) -> Policy {
        *self
    }
}

impl AsPolicy for &Policy {
    #[inline]
    fn as_policy(&self) -> Policy {
        **self
    }
}

/// The policy of a `policy = …` key.
#[inline]
pub fn policy<P: AsPolicy>(policy: P) -> Policy {
    policy.as_policy()
}

/// The error type of a function with `timeout = …` is made from [`TimedOut`].
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`timeout` needs the error type `{Self}` to implement `From<retry_jitter::TimedOut>`",
    label = "an attempt cut by this timeout fails with `{Self}::from(retry_jitter::TimedOut)`",
    note = "if `{Self}` is a type of your own, write `impl From<retry_jitter::TimedOut> for {Self}` (a variant such as `TimedOut`)",
    note = "if it is not (`String`, `Box<dyn Error>`, another crate's error), the orphan rule forbids that impl (E0117): wrap `{Self}` in an error type of your own that has it, or return `std::io::Error`, which has it"
)]
pub trait FromTimedOut: Sized {
    /// The error of a cut attempt.
    fn from_timed_out(timed_out: TimedOut) -> Self;

    /// The outcome of an attempt `timeout = …` cut.
    ///
    /// The expansion names it as `<E as FromTimedOut>::timed_out::<R>`, the trait's own method.
    ///
    /// An error type without the `From` is then this message alone, with no function of this
    /// crate's after it.
    #[inline]
    fn timed_out<R: IsResult<Err = Self>>(timed_out: TimedOut) -> R {
        R::from_err(Self::from_timed_out(timed_out))
    }
}

// Not recommended: an error type whose `From` impls come from a blanket impl of its own is
// then reported as this trait's message at the `timeout` key.
//
// Not as `TimedOut: DatabaseError` (sqlx's `impl<E: DatabaseError> From<E> for Error`).
#[diagnostic::do_not_recommend]
impl<E: From<TimedOut>> FromTimedOut for E {
    #[inline]
    fn from_timed_out(timed_out: TimedOut) -> Self {
        E::from(timed_out)
    }
}

/// No `timeout`: for the hedging loop, which takes an optional one.
#[inline]
pub fn no_timeout<R>() -> Option<(Duration, crate::run::timeout::MakeError<R>)> {
    None
}

/// The error type of a function with `throttle = …` is made from [`Throttled`].
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`throttle` needs the error type `{Self}` to implement `From<retry_jitter::Throttled>`",
    label = "an attempt this throttle rejects fails with `{Self}::from(retry_jitter::Throttled)`",
    note = "for an error type of your own, write `impl From<retry_jitter::Throttled> for {Self}` (a variant for it); for one that is not yours (`String`, a library's), return an error type of your own that wraps it, or `std::io::Error`, which has it"
)]
pub trait FromThrottled: Sized {
    /// The error of a rejected attempt.
    fn from_throttled(throttled: Throttled) -> Self;

    /// `throttle = …`: the guard, whose rejected attempts end the call with
    /// `E::from(Throttled)`.
    ///
    /// The trait's own method, as [`FromTimedOut::timed_out`].
    #[inline]
    fn throttle_guard<R: IsResult<Err = Self>>(
        throttle: &AdaptiveThrottle,
    ) -> ThrottleGuard<'_, fn(Throttled) -> R> {
        ThrottleGuard::new(throttle, |t| R::from_err(Self::from_throttled(t)))
    }
}

#[diagnostic::do_not_recommend]
impl<E: From<Throttled>> FromThrottled for E {
    #[inline]
    fn from_throttled(throttled: Throttled) -> Self {
        E::from(throttled)
    }
}

/// The error type of a function with `breaker = …` is made from [`CircuitOpen`].
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`breaker` needs the error type `{Self}` to implement `From<retry_jitter::CircuitOpen>`",
    label = "a call this breaker refuses fails with `{Self}::from(retry_jitter::CircuitOpen)`",
    note = "for an error type of your own, write `impl From<retry_jitter::CircuitOpen> for {Self}` (a variant for it); for one that is not yours (`String`, a library's), return an error type of your own that wraps it, or `std::io::Error`, which has it"
)]
pub trait FromCircuitOpen: Sized {
    /// The error of a refused call.
    fn from_circuit_open(open: CircuitOpen) -> Self;

    /// `breaker = …`: the guard, whose refused calls end with `E::from(CircuitOpen)`.
    ///
    /// The trait's own method, as [`FromTimedOut::timed_out`].
    #[inline]
    fn breaker_guard<R: IsResult<Err = Self>>(
        breaker: &CircuitBreaker,
    ) -> BreakerGuard<'_, fn(CircuitOpen) -> R> {
        BreakerGuard::new(breaker, |c| R::from_err(Self::from_circuit_open(c)))
    }
}

#[diagnostic::do_not_recommend]
impl<E: From<CircuitOpen>> FromCircuitOpen for E {
    #[inline]
    fn from_circuit_open(open: CircuitOpen) -> Self {
        E::from(open)
    }
}

/// What `cancel = …` takes: a `&CancelToken`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`cancel` needs a `&CancelToken`, not `{Self}`",
    label = "not a `&retry_jitter::CancelToken`",
    note = "write `cancel = &TOKEN` for a `static TOKEN: CancelToken = CancelToken::new();`, or name a `&CancelToken` argument"
)]
pub trait CancelArg<'a> {
    /// The token's guard.
    fn cancelling(self) -> Cancelling<'a>;
}

#[diagnostic::do_not_recommend]
impl<'a> CancelArg<'a> for &'a CancelToken {
    #[inline]
    fn cancelling(self) -> Cancelling<'a> {
        Cancelling::new(self)
    }
}

/// An `async fn`'s attempt with `cancel = …`.
///
/// After a failure (`last` kept), raced against the hooks' token
/// (`run::wait::attempt_or_cancel`), its outcome type read from `last`.
///
/// The first attempt alone.
#[inline]
pub async fn attempt_or_cancel_in<F, R, C, N, G, B, T, O, Gd>(
    attempt: F,
    last: Option<R>,
    hooks: &Hooks<C, N, G, B, T, O, Gd>,
) -> Result<F::Output, R>
where
    F: Future,
    Gd: Guard<R>,
{
    match (hooks.guard.cancel(), last) {
        (Some(token), Some(last)) => attempt_or_cancel(attempt, last, token).await,
        _ => Ok(attempt.await),
    }
}
