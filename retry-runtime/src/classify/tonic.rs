//! gRPC's errors (feature `tonic`): the status table, the server's pushback, and the service
//! config's parser. Public as [`retry_jitter::tonic`](crate::tonic), whose page documents
//! them, beside the layer that applies a service config.

use core::time::Duration;

use http::HeaderMap;
use tonic::{Code, Status};

use crate::classify::headers::GRPC_RETRY_PUSHBACK_MS;
use crate::policy::transient::Transient;
use crate::policy::Decision;

mod service_config;
pub(crate) use service_config::{CodeSet, HedgingPolicy, MethodConfig, Policy, RetryPolicy};
pub use service_config::{ServiceConfig, ServiceConfigError};

/// What to do after a call that ended with `code` (see the module's table), before any
/// pushback: `UNAVAILABLE` and `RESOURCE_EXHAUSTED` are retried, every other code stops.
///
/// ```
/// use retry_jitter::tonic::classify_code;
/// use retry_jitter::Decision;
/// use tonic::Code;
///
/// assert_eq!(classify_code(Code::Unavailable), Decision::Retry);
/// assert_eq!(classify_code(Code::ResourceExhausted), Decision::RateLimited);
/// assert_eq!(classify_code(Code::InvalidArgument), Decision::Stop);
/// assert_eq!(classify_code(Code::Ok), Decision::Stop);
/// ```
pub fn classify_code(code: Code) -> Decision {
    match code {
        Code::Unavailable => Decision::Retry,
        Code::ResourceExhausted => Decision::RateLimited,
        _ => Decision::Stop,
    }
}

/// The code's decision with the server's pushback applied, read from `headers` (the response's
/// headers for a trailers-only answer, or the status's metadata):
///
/// - no `grpc-retry-pushback-ms`: [`classify_code`];
/// - a non-negative integer `n` on a retried code: `Decision::RetryAfter(n ms)`, the server's
///   wait (a lower bound: the jitter is added to it);
/// - a negative or malformed value: `Decision::Stop`, as gRPC A6 says ("do not retry").
///
/// ```
/// use http::HeaderMap;
/// use retry_jitter::tonic::classify;
/// use retry_jitter::Decision;
/// use std::time::Duration;
/// use tonic::Code;
///
/// let mut h = HeaderMap::new();
/// assert_eq!(classify(Code::ResourceExhausted, &h), Decision::RateLimited);
/// h.insert("grpc-retry-pushback-ms", "1000".parse().unwrap());
/// assert_eq!(classify(Code::ResourceExhausted, &h), Decision::RetryAfter(Duration::from_secs(1)));
/// h.insert("grpc-retry-pushback-ms", "-1".parse().unwrap());
/// assert_eq!(classify(Code::ResourceExhausted, &h), Decision::Stop);
/// h.insert("grpc-retry-pushback-ms", "soon".parse().unwrap());
/// assert_eq!(classify(Code::Unavailable, &h), Decision::Stop);
/// assert_eq!(classify(Code::NotFound, &h), Decision::Stop);
/// ```
pub fn classify(code: Code, headers: &HeaderMap) -> Decision {
    match classify_code(code) {
        Decision::Stop => Decision::Stop,
        decision => match headers.get(GRPC_RETRY_PUSHBACK_MS) {
            None => decision,
            Some(value) => match value.to_str().ok().and_then(pushback) {
                Some(wait) => Decision::RetryAfter(wait),
                None => {
                    // The server (a tier that already retried) says not to: inside a chain's
                    // scope, the tier passes that on.
                    crate::policy::scope::mark_gave_up();
                    Decision::Stop
                }
            },
        },
    }
}

/// A pushback value as a wait: ASCII digits only (no sign, no space) of a number of
/// milliseconds that fits a signed 64-bit integer, as gRPC C-core reads it; `None` for a
/// negative or malformed value, one past that included (a wait of some 300 million years
/// is not a server's word but a broken header, and under gRPC's backoff, which no cap
/// bounds, it would hold a call without a deadline for good).
pub(crate) fn pushback(value: &str) -> Option<Duration> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ms = value.bytes().try_fold(0u64, |n, b| {
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })?;
    (ms <= i64::MAX as u64).then(|| Duration::from_millis(ms))
}

/// By [`classify`]: the status's code, with the pushback in its metadata.
///
/// ```
/// use retry_jitter::{Decision, Transient};
/// use std::time::Duration;
/// use tonic::{Code, Status};
///
/// assert_eq!(Status::unavailable("restarting").decision(), Decision::Retry);
/// assert_eq!(Status::invalid_argument("no name").decision(), Decision::Stop);
///
/// let mut s = Status::resource_exhausted("slow down");
/// s.metadata_mut().insert("grpc-retry-pushback-ms", "250".parse().unwrap());
/// assert_eq!(s.decision(), Decision::RetryAfter(Duration::from_millis(250)));
/// # let _ = Code::Ok;
/// ```
impl Transient for Status {
    fn decision(&self) -> Decision {
        classify(self.code(), self.metadata().as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_but_the_two_stops() {
        for n in 0..=16 {
            let code = Code::from_i32(n);
            let expected = matches!(code, Code::Unavailable | Code::ResourceExhausted);
            assert_eq!(classify_code(code).retries(), expected, "{code:?}");
        }
    }

    #[test]
    fn pushback_values() {
        assert_eq!(pushback("0"), Some(Duration::ZERO));
        assert_eq!(pushback("007"), Some(Duration::from_millis(7)));
        assert_eq!(
            pushback("9223372036854775807"),
            Some(Duration::from_millis(i64::MAX as u64))
        );
        for bad in [
            "",
            "-1",
            "+1",
            " 1",
            "1.5",
            "1e3",
            "ten",
            "9223372036854775808",
            "99999999999999999999999",
        ] {
            assert_eq!(pushback(bad), None, "{bad:?}");
        }
    }
}
