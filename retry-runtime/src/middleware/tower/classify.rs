//! The default classifiers: the inner service's errors ([`TransportErrors`]) and its
//! responses ([`ByStatus`]).

use super::BoxError;
use crate::policy::Resend;
use crate::policy::{Classify, ClassifyOk};
use crate::Decision;

/// The default classifier of the inner service's errors: the first cause down the source
/// chain that says something decides.
///
/// - [`TimedOut`](crate::TimedOut) (the layer's own timeout): retry;
/// - an `std::io::Error`: by its [`Transient`](crate::Transient) table (a refused or reset connection is
///   retried);
/// - with feature `tonic`, a `tonic::Status`: by [`tonic::classify`](crate::tonic::classify);
/// - hyper's client errors by their message: retry.
///   A failed connect, a connection closed before the response, or an HTTP/2 stream the server
///   did not process (`REFUSED_STREAM`, or above a `GOAWAY`'s last stream id);
/// - anything else: stop.
///
/// ```
/// use retry_jitter::tower::{BoxError, TransportErrors};
/// use retry_jitter::{Decision, TimedOut};
/// use retry_jitter::hooks::Classify;
///
/// let refused: BoxError = std::io::Error::from(std::io::ErrorKind::ConnectionRefused).into();
/// assert_eq!(TransportErrors.classify(&refused), Decision::Retry);
/// assert_eq!(TransportErrors.classify(&BoxError::from(TimedOut)), Decision::Retry);
/// assert_eq!(TransportErrors.classify(&BoxError::from("invalid uri")), Decision::Stop);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct TransportErrors;

impl Classify<BoxError> for TransportErrors {
    /// For a request that may be sent again only if it was not applied
    /// ([`Resend::IfNotApplied`]: a `POST` without a key), few errors are classified.
    ///
    /// Only an error that proves it was never sent ([`never_sent`](crate::http::never_sent)).
    ///
    /// Any other stops.
    fn classify_for(&self, error: &BoxError, resend: Resend) -> Decision {
        if resend == Resend::IfNotApplied && !crate::http::never_sent(&**error) {
            return Decision::Stop;
        }
        self.classify(error)
    }

    fn classify(&self, error: &BoxError) -> Decision {
        crate::classify::transport::decision(&**error)
    }
}

/// The default classifier of responses: by status with `Retry-After`
/// ([`classify_response`](crate::http::classify_response)).
///
/// With feature `tonic`, a response carrying `grpc-status` in its headers goes by
/// [`tonic::classify`](crate::tonic::classify).
///
/// A success status is decided without reading a header (nor, with `tonic`, more than one).
///
/// ```
/// use retry_jitter::tower::ByStatus;
/// use retry_jitter::Decision;
/// use retry_jitter::hooks::ClassifyOk;
/// use std::time::Duration;
///
/// let ok = http::Response::new(());
/// assert_eq!(ByStatus.classify_ok(&ok), Decision::Stop); // not a failure: the answer
/// let busy = http::Response::builder().status(503).header("retry-after", "1").body(()).unwrap();
/// assert_eq!(ByStatus.classify_ok(&busy), Decision::RetryAfter(Duration::from_secs(1)));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ByStatus;

impl<T> ClassifyOk<http::Response<T>> for ByStatus {
    fn classify_ok(&self, response: &http::Response<T>) -> Decision {
        self.classify_ok_for(response, Resend::Any)
    }

    /// For a request that may be sent again only if it was not applied
    /// ([`Resend::IfNotApplied`]: a `POST` without a key), few responses are retried.
    ///
    /// Only a refusal before processing (`408`, `425`, `429`, `503`), or a failure the server
    /// marks `x-should-retry: true`.
    ///
    /// A gRPC answer keeps the gRPC table: every gRPC call is a `POST`.
    fn classify_ok_for(&self, response: &http::Response<T>, resend: Resend) -> Decision {
        let headers = response.headers();
        #[cfg(feature = "tonic")]
        if let Some(code) = headers.get(crate::classify::headers::GRPC_STATUS) {
            let code = tonic::Code::from_bytes(code.as_bytes());
            return crate::tonic::classify(code, headers);
        }
        crate::http::classify_response_now(response.status(), headers, resend)
    }

    /// A response this retries is a failure, of its status.
    #[inline]
    fn failure_status(&self, response: &http::Response<T>) -> Option<u16> {
        Some(response.status().as_u16())
    }
}
