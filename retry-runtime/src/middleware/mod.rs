//! The retry loop where services retry: client middleware, each behind its feature. Each face
//! drives the closure API's loop ([`Retry`](crate::Retry)); none has a loop of its own.
//!
//! A response is an `Ok` to the client, yet a 503 is worth retrying: each face classifies the
//! response inside the attempt and hands the loop a [`Failure::Response`] for one to retry,
//! turned back into the `Ok` it was when retrying ends on it.
// TODO(on_ok): `Retry::on_ok` (branch main) does this in the loop itself; once it lands,
// the faces pass their response classifier to it and `Failure::Response` goes.

use crate::{Classify, Decision, TimedOut};

#[cfg(feature = "reqwest-middleware")]
pub mod reqwest_middleware;
#[cfg(feature = "tower")]
pub mod tower;

/// How an attempt ended when it did not end the call, as the retry loop sees it: an error of
/// the inner service, or a response [`on_ok`](crate::tower::RetryLayer::on_ok) retries (given
/// back to the caller should retrying end on it).
#[derive(Debug)]
pub enum Failure<R, E> {
    /// The inner service failed (or the attempt ran past its timeout).
    Error(E),
    /// A response to retry, with the decision made on it.
    Response(R, Decision),
    /// An error or a response that ends the call: its request cannot be sent again.
    Last(Box<Result<R, E>>),
}

impl<R, E: From<TimedOut>> From<TimedOut> for Failure<R, E> {
    fn from(t: TimedOut) -> Self {
        Failure::Error(E::from(t))
    }
}

impl<R, E> Failure<R, E> {
    /// Back to what the service answers.
    pub(crate) fn into_result(self) -> Result<R, E> {
        match self {
            Failure::Error(e) => Err(e),
            Failure::Response(r, _) => Ok(r),
            Failure::Last(last) => *last,
        }
    }
}

/// The retry loop's classifier: errors by `On`, responses by the decision made on them in the
/// attempt.
#[derive(Clone, Copy, Debug)]
pub struct Errors<On>(pub(crate) On);

impl<On: Classify<E>, R, E> Classify<Failure<R, E>> for Errors<On> {
    fn classify(&self, failure: &Failure<R, E>) -> Decision {
        match failure {
            Failure::Error(e) => self.0.classify(e),
            Failure::Response(_, decision) => *decision,
            Failure::Last(_) => Decision::Stop,
        }
    }
}

/// An attempt's outcome as the loop sees it: an answer, or a failure to classify — ended at
/// once when the request cannot be sent again (`sent_again` is asked only on a failure, so a
/// success pays nothing for it).
pub(crate) fn answer<R, E, F: Into<E>, OnOk: Classify<R>>(
    response: Result<R, F>,
    on_ok: &OnOk,
    sent_again: impl FnOnce() -> bool,
) -> Result<R, Failure<R, E>> {
    let failure = match response {
        Ok(response) => match on_ok.classify(&response) {
            Decision::Stop => return Ok(response),
            decision => Failure::Response(response, decision),
        },
        Err(e) => Failure::Error(e.into()),
    };
    if sent_again() {
        Err(failure)
    } else {
        Err(Failure::Last(Box::new(failure.into_result())))
    }
}
