//! A6's classification of one method's attempts: a response by its gRPC status and the
//! method's `retryableStatusCodes` ([`ByCodes`]), an error of the channel by what it proves
//! ([`ChannelErrors`]).

use http::{HeaderMap, StatusCode};
use tonic::Code;

use crate::classify::headers::{GRPC_RETRY_PUSHBACK_MS, GRPC_STATUS};
use crate::classify::tonic::{pushback, CodeSet};
use crate::policy::{Classify, ClassifyOk, Decision, TimedOut, Transparent};
use crate::tower::BoxError;

/// The classifier of a method's responses under its `retryPolicy`: a trailers-only answer
/// (`grpc-status` in its headers) whose code is in `retryableStatusCodes` is retried, after
/// the server's `grpc-retry-pushback-ms` when it sends one (a negative or malformed one: not
/// retried); any other code is the answer. A response whose headers came without a status has
/// begun: the call is committed, and whatever its trailers say is returned. Public in a
/// private module: named in the layer's types, never by a user.
#[derive(Clone, Copy, Debug)]
pub struct ByCodes(pub(crate) CodeSet);

impl<B> ClassifyOk<http::Response<B>> for ByCodes {
    fn classify_ok(&self, response: &http::Response<B>) -> Decision {
        match code_of(response) {
            Some(code) if self.0.contains(code) => after_pushback(response.headers()),
            _ => Decision::Stop,
        }
    }

    /// A response that ends its call with a code other than `OK` is a failure.
    #[inline]
    fn failure_status(&self, response: &http::Response<B>) -> Option<u16> {
        code_of(response)
            .filter(|&code| code != Code::Ok)
            .map(|_| response.status().as_u16())
    }

    /// A code not retried ends the call as a failure: the throttle counts neither a failure
    /// nor a success (gRPC C-core counts a success for `OK` alone).
    #[inline]
    fn stop_is_failure(&self) -> bool {
        true
    }
}

/// Whether a response retried for `code` would be refused by the server's pushback: a
/// `grpc-retry-pushback-ms` that is negative or malformed. A6 still counts such an attempt as
/// a failure for the throttle.
pub(crate) fn pushback_refuses<B>(codes: CodeSet, response: &http::Response<B>) -> bool {
    code_of(response).is_some_and(|code| codes.contains(code))
        && after_pushback(response.headers()) == Decision::Stop
}

/// The gRPC code a response ends its call with, if it says so in its headers: its
/// `grpc-status` (a trailers-only answer), or, for an HTTP status other than 200 without one,
/// the code gRPC maps that status to. `None` for a `200` without a status: the server has
/// begun its answer.
fn code_of<B>(response: &http::Response<B>) -> Option<Code> {
    if let Some(code) = response.headers().get(GRPC_STATUS) {
        return Some(Code::from_bytes(code.as_bytes()));
    }
    // gRPC's own table (doc/http-grpc-status-mapping.md), as tonic reads it.
    Some(match response.status() {
        StatusCode::OK => return None,
        StatusCode::BAD_REQUEST => Code::Internal,
        StatusCode::UNAUTHORIZED => Code::Unauthenticated,
        StatusCode::FORBIDDEN => Code::PermissionDenied,
        StatusCode::NOT_FOUND => Code::Unimplemented,
        StatusCode::TOO_MANY_REQUESTS
        | StatusCode::BAD_GATEWAY
        | StatusCode::SERVICE_UNAVAILABLE
        | StatusCode::GATEWAY_TIMEOUT => Code::Unavailable,
        _ => Code::Unknown,
    })
}

/// A retryable code's decision, by the server's pushback: none, the policy's backoff; `n` ≥ 0
/// ms, after `n` ms; negative or malformed, no retry.
fn after_pushback(headers: &HeaderMap) -> Decision {
    match headers.get(GRPC_RETRY_PUSHBACK_MS) {
        None => Decision::Retry,
        Some(value) => match value.to_str().ok().and_then(pushback) {
            Some(wait) => Decision::RetryAfter(wait),
            None => {
                // The server says "don't retry": inside a chain's scope, the tier says so too.
                crate::policy::scope::mark_gave_up();
                Decision::Stop
            }
        },
    }
}

/// The classifier of a method's errors (what the channel fails with, and the layer's own
/// timeout): an attempt cut by `perAttemptRecvTimeout` ([`TimedOut`]) is retried, as A6 says;
/// a `tonic::Status` by its code, as [`ByCodes`] classifies one; a transport failure that
/// the layer's default ([`TransportErrors`](crate::tower::TransportErrors)) would retry is
/// what a gRPC client reports as `UNAVAILABLE`: retried when that code is retryable, or when
/// it proves the request never left (a refused connection, a refused stream). Public in a
/// private module.
#[derive(Clone, Copy, Debug)]
pub struct ChannelErrors(pub(crate) CodeSet);

impl Classify<BoxError> for ChannelErrors {
    fn classify(&self, error: &BoxError) -> Decision {
        let error: &(dyn std::error::Error + 'static) = &**error;
        if error.is::<TimedOut>() {
            return Decision::Retry;
        }
        if let Some(status) = error.downcast_ref::<tonic::Status>() {
            return match self.0.contains(status.code()) {
                true => after_pushback(status.metadata().as_ref()),
                false => Decision::Stop,
            };
        }
        match crate::classify::transport::decision(error) {
            Decision::Stop => Decision::Stop,
            _ if self.0.contains(Code::Unavailable) || crate::http::never_sent(error) => {
                Decision::Retry
            }
            _ => Decision::Stop,
        }
    }

    /// A6's transparent retries: an attempt the channel proves never reached the server's
    /// application (see [`unseen`](crate::classify::transport::unseen)).
    fn transparent(&self, error: &BoxError) -> Transparent {
        crate::classify::transport::unseen(&**error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(list: &[Code]) -> CodeSet {
        CodeSet::of(list)
    }

    fn answer(status: u16, headers: &[(&'static str, &'static str)]) -> http::Response<()> {
        let mut r = http::Response::builder().status(status);
        for &(k, v) in headers {
            r = r.header(k, v);
        }
        r.body(()).unwrap()
    }

    #[test]
    fn a_response_is_retried_only_on_a_listed_code_and_as_its_pushback_says() {
        let on = ByCodes(codes(&[Code::Aborted]));
        let aborted = [("grpc-status", "10")];
        assert_eq!(on.classify_ok(&answer(200, &aborted)), Decision::Retry);
        assert_eq!(
            on.classify_ok(&answer(200, &[("grpc-status", "14")])),
            Decision::Stop
        );
        assert_eq!(
            on.classify_ok(&answer(200, &[("grpc-status", "0")])),
            Decision::Stop
        );
        // Headers without a status: the answer has begun, the call is committed.
        assert_eq!(on.classify_ok(&answer(200, &[])), Decision::Stop);
        let pushed = answer(
            200,
            &[("grpc-status", "10"), ("grpc-retry-pushback-ms", "50")],
        );
        assert_eq!(
            on.classify_ok(&pushed),
            Decision::RetryAfter(core::time::Duration::from_millis(50))
        );
        // The longest pushback gRPC reads, and one past it (C-core's `int64`: malformed).
        let longest = answer(
            200,
            &[
                ("grpc-status", "10"),
                ("grpc-retry-pushback-ms", "9223372036854775807"),
            ],
        );
        assert_eq!(
            on.classify_ok(&longest),
            Decision::RetryAfter(core::time::Duration::from_millis(i64::MAX as u64))
        );
        for bad in [
            "-1",
            "soon",
            "",
            "9223372036854775808",
            "18446744073709551616",
        ] {
            let refused = answer(
                200,
                &[("grpc-status", "10"), ("grpc-retry-pushback-ms", bad)],
            );
            assert_eq!(on.classify_ok(&refused), Decision::Stop, "{bad:?}");
            assert!(pushback_refuses(on.0, &refused));
        }
        assert!(!pushback_refuses(on.0, &pushed));
    }

    #[test]
    fn an_http_status_without_a_grpc_status_is_read_as_grpc_reads_it() {
        let on = ByCodes(codes(&[Code::Unavailable]));
        for (status, retried) in [
            (503, true),
            (429, true),
            (502, true),
            (404, false),
            (500, false),
        ] {
            assert_eq!(
                on.classify_ok(&answer(status, &[])).retries(),
                retried,
                "{status}"
            );
        }
    }

    #[test]
    fn errors_of_the_channel() {
        let on = ChannelErrors(codes(&[Code::Aborted]));
        assert_eq!(on.classify(&BoxError::from(TimedOut)), Decision::Retry);
        let aborted: BoxError = tonic::Status::aborted("conflict").into();
        assert_eq!(on.classify(&aborted), Decision::Retry);
        let reset: BoxError = std::io::Error::from(std::io::ErrorKind::ConnectionReset).into();
        // Not listed: UNAVAILABLE; a reset proves nothing of whether it was applied.
        assert_eq!(on.classify(&reset), Decision::Stop);
        let refused: BoxError = std::io::Error::from(std::io::ErrorKind::ConnectionRefused).into();
        assert_eq!(on.classify(&refused), Decision::Retry);
        let on = ChannelErrors(codes(&[Code::Unavailable]));
        assert_eq!(on.classify(&reset), Decision::Retry);
    }
}
