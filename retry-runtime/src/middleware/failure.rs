//! An attempt of a middleware as its loop sees it.
//!
//! A response retried for its status is a failure: an error of the loop, [`Failure`].
//!
//! So the hooks, the guards, the budget and the figures count it as one.
//!
//! The response is still what the caller gets.
//!
//! The hooks a middleware is given are told of it as a [`Failed`] ([`Told`]).

use core::fmt;

use http::StatusCode;

use crate::fleet::{CircuitOpen, Throttled};
use crate::http::Failed;
use crate::policy::{
    ClassifyOk, Decision, GiveUp, Resend, RetryEvent, RetryStats, TimedOut, Unset,
};
use crate::retry::PutsStats;

use super::NotSent;
use crate::run::awaiting::{AsyncSlot, GiveUpAsync, HookFuture, NotifyAsync};
use crate::run::hooks::{GiveUpHook, Notify};

/// What an attempt of a middleware failed with, to its loop.
///
/// Its error, or a response retried for its status (with that status, and the decision on it).
pub(crate) enum Failure<E, Resp> {
    /// The middleware's error.
    Error(E),
    /// A response retried for its status or the server's word.
    Status {
        response: Resp,
        status: StatusCode,
        decision: Decision,
    },
}

impl<E, Resp> Failure<E, Resp> {
    /// What a hook is told of it.
    pub(crate) fn failed(&self) -> Failed<'_, E> {
        match self {
            Failure::Error(e) => Failed::Error(e),
            Failure::Status { status, .. } => Failed::Status(*status),
        }
    }

    /// A call's outcome as the caller gets it.
    ///
    /// A response retried for its status, when retrying ends on it, is the answer.
    pub(crate) fn answer(outcome: Result<Resp, Self>) -> Result<Resp, E> {
        match outcome {
            Ok(response) | Err(Failure::Status { response, .. }) => Ok(response),
            Err(Failure::Error(e)) => Err(e),
        }
    }

    /// [`answer`](Failure::answer), with the call's figures put in the response as the guards
    /// `P` say.
    pub(crate) fn answer_with<P: PutsStats<Resp>>(
        outcome: Result<Resp, Self>,
        stats: RetryStats,
    ) -> Result<Resp, E> {
        let mut answer = Self::answer(outcome);
        if let Ok(response) = &mut answer {
            P::put(response, stats);
        }
        answer
    }

    /// An attempt's outcome as its loop sees it.
    ///
    /// A response `on_ok` retries for its status (`failure_status`) becomes a failure.
    ///
    /// `not_sent` is told of one the write rule alone keeps from being sent again.
    ///
    /// So does one it stops on, where `stop_is_failure`.
    #[inline]
    pub(crate) fn sort<O: ClassifyOk<Resp>>(
        outcome: Result<Resp, E>,
        on_ok: &O,
        resend: Resend,
        not_sent: &NotSent<'_>,
    ) -> Result<Resp, Self> {
        match outcome {
            Ok(response) => {
                let Some(status) = on_ok.failure_status(&response) else {
                    return Ok(response);
                };
                let decision = on_ok.classify_ok_for(&response, resend);
                if not_sent.checked(decision, resend, || on_ok.classify_ok(&response))
                    == Decision::Stop
                    && !on_ok.stop_is_failure()
                {
                    return Ok(response);
                }
                Err(Failure::Status {
                    response,
                    status: StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                    decision,
                })
            }
            Err(e) => Err(Failure::Error(e)),
        }
    }
}

/// What the events say of a failure: the error's `Display`, or the status.
///
/// Never a header, never a body.
impl<E: fmt::Display, Resp> fmt::Display for Failure<E, Resp> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.failed().fmt(f)
    }
}

/// The refusals and the timeout the loop makes errors of, made the middleware's errors.
macro_rules! from_refusal {
    ($($refusal:ty),+) => {$(
        impl<E: From<$refusal>, Resp> From<$refusal> for Failure<E, Resp> {
            fn from(refusal: $refusal) -> Self {
                Failure::Error(E::from(refusal))
            }
        }
    )+};
}

from_refusal!(TimedOut, Throttled, CircuitOpen);

/// What the loop's `on_ok` decides of a response that is no failure.
///
/// For a classifier of statuses (`failure_status`), it is taken: its retried responses are
/// failures, sorted as each attempt ends.
///
/// Any other's (a user's `on_ok`) retries it as a poll.
#[inline]
pub(crate) fn poll<Resp, O: ClassifyOk<Resp>>(
    on_ok: &O,
    response: &Resp,
    resend: Resend,
) -> Decision {
    match on_ok.failure_status(response) {
        Some(_) => Decision::Stop,
        None => on_ok.classify_ok_for(response, resend),
    }
}

/// A middleware's `notify` hook: told of each retry with what failed
/// ([`RetryBuilder::notify`](crate::builder::RetryBuilder::notify)).
#[diagnostic::on_unimplemented(
    message = "a middleware's `notify` needs a `Fn(&Failed<'_, {E}>, &RetryEvent)`, not `{Self}`",
    label = "not a `Fn(&Failed<'_, {E}>, &RetryEvent)`",
    note = "`Failed` is `retry_jitter::http::Failed`: the error, or the status of a response retried for it"
)]
#[doc(hidden)]
pub trait NotifyFailed<E> {
    /// `failed` ended call number `event.attempt`; the next comes after `event.delay`.
    fn notify(&self, failed: &Failed<'_, E>, event: &RetryEvent);
}

impl<E, F: Fn(&Failed<'_, E>, &RetryEvent)> NotifyFailed<E> for F {
    #[inline]
    fn notify(&self, failed: &Failed<'_, E>, event: &RetryEvent) {
        self(failed, event);
    }
}

impl<E> NotifyFailed<E> for Unset {
    #[inline]
    fn notify(&self, _: &Failed<'_, E>, _: &RetryEvent) {}
}

/// A middleware's `give_up` hook: told once, when retrying ends on a failure
/// ([`RetryBuilder::give_up`](crate::builder::RetryBuilder::give_up)).
#[diagnostic::on_unimplemented(
    message = "a middleware's `give_up` needs a `Fn(&Failed<'_, {E}>, &GiveUp)`, not `{Self}`",
    label = "not a `Fn(&Failed<'_, {E}>, &GiveUp)`",
    note = "`Failed` is `retry_jitter::http::Failed`: the error, or the status of a response retried for it"
)]
#[doc(hidden)]
pub trait GiveUpFailed<E> {
    /// Retrying ended on `failed`, for the reason in `give_up`.
    fn give_up(&self, failed: &Failed<'_, E>, give_up: &GiveUp);
}

impl<E, F: Fn(&Failed<'_, E>, &GiveUp)> GiveUpFailed<E> for F {
    #[inline]
    fn give_up(&self, failed: &Failed<'_, E>, give_up: &GiveUp) {
        self(failed, give_up);
    }
}

impl<E> GiveUpFailed<E> for Unset {
    #[inline]
    fn give_up(&self, _: &Failed<'_, E>, _: &GiveUp) {}
}

/// A middleware's hook, borrowed for one call, told of a [`Failure`] as a [`Failed`].
///
/// A poll retried (`on_ok`) is not a failure: it is not told, as a closure of the closure API
/// is not.
pub(crate) struct Told<'a, H>(pub(crate) &'a H);

impl<E, Resp, H: NotifyFailed<E>> Notify<Failure<E, Resp>> for Told<'_, H> {
    #[inline]
    fn notify(&self, failure: &Failure<E, Resp>, event: &RetryEvent) {
        self.0.notify(&failure.failed(), event);
    }
}

impl<E, Resp, H: GiveUpFailed<E>> GiveUpHook<Failure<E, Resp>> for Told<'_, H> {
    #[inline]
    fn give_up(&self, failure: &Failure<E, Resp>, give_up: &GiveUp) {
        self.0.give_up(&failure.failed(), give_up);
    }
}

/// A middleware's async hook (`notify_async`, `give_up_async`), told of a [`Failure`] as a
/// [`Failed`], by value.
///
/// Its shape: `Fn(Failed<'_, E>, &RetryEvent) -> HookFuture<'_>`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct FailedAsync<F>(pub(crate) F);

impl<F> AsyncSlot for FailedAsync<F> {
    const ON: bool = true;
}

impl<E, Resp, F> NotifyAsync<Failure<E, Resp>> for FailedAsync<F>
where
    F: for<'a> Fn(Failed<'a, E>, &'a RetryEvent) -> HookFuture<'a>,
{
    fn notify<'a>(
        &'a self,
        failure: &'a Failure<E, Resp>,
        event: &'a RetryEvent,
    ) -> HookFuture<'a> {
        (self.0)(failure.failed(), event)
    }
}

impl<E, Resp, F> GiveUpAsync<Failure<E, Resp>> for FailedAsync<F>
where
    F: for<'a> Fn(Failed<'a, E>, &'a GiveUp) -> HookFuture<'a>,
{
    fn give_up<'a>(&'a self, failure: &'a Failure<E, Resp>, give_up: &'a GiveUp) -> HookFuture<'a> {
        (self.0)(failure.failed(), give_up)
    }
}
