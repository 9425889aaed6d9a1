//! The method rule: whether a request may be sent again whatever became of the last one
//! (RFC 9110 §9.2.2).
//!
//! And what proves that one that may not was never applied.

use http::{HeaderMap, Method, StatusCode};

use crate::classify::headers::IDEMPOTENCY_KEYS;

/// Whether a request may be sent again whatever became of the last one (RFC 9110 §9.2.2).
///
/// Its method is idempotent (`GET`, `HEAD`, `OPTIONS`, `TRACE`, `PUT`, `DELETE`), or it carries
/// an `Idempotency-Key` (or `X-Idempotency-Key`) header.
///
/// With a key, the server applies it once however often it comes.
///
/// A `POST` or a `PATCH` without one may already have been applied when it failed: a `500`, a
/// timeout, a connection closed after it was sent.
///
/// Sending it again may place a second order.
///
/// A key is a value with something in it: an empty or all-blank (spaces, tabs) header is no
/// key.
///
/// A server that de-duplicates by key has nothing to de-duplicate such a request by.
pub(crate) fn is_repeatable(method: &Method, headers: &HeaderMap) -> bool {
    // `is_idempotent`: RFC 9110's idempotent methods, the six above, by the method's tag.
    method.is_idempotent() || IDEMPOTENCY_KEYS.iter().any(|name| has_key(headers, name))
}

/// Whether a line of header `name` holds a key: something other than spaces and tabs.
fn has_key(headers: &HeaderMap, name: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .any(|value| !value.as_bytes().iter().all(|&b| b == b' ' || b == b'\t'))
}

/// Whether a failed response proves that the server did not apply the request.
///
/// `408`, `425`, `429` and `503` do: each a refusal before processing.
///
/// A request that is not [repeatable](is_repeatable) is retried on these (and on a failed
/// connect, which sent nothing).
pub(crate) fn refused_before_processing(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 425 | 429 | 503)
}

/// Whether a failed attempt's error proves that its request was never sent.
///
/// Then even a request that is not repeatable (a `POST` or `PATCH` without an
/// `Idempotency-Key`) may be sent again.
///
/// Proofs, down its source chain:
///
/// - A refused connection (`std::io::ErrorKind::ConnectionRefused`).
/// - hyper-util's failed connect (`client error (Connect)`).
/// - An HTTP/2 stream the server refused (`REFUSED_STREAM`).
/// - An HTTP/2 stream above the last stream id of the server's `GOAWAY`.
///
/// These prove nothing: a timeout, a reset, a connection closed after the request was written,
/// a stream at or below a `GOAWAY`'s last stream id. The server may have applied it.
///
/// ```
/// use retry_jitter::http::never_sent;
/// use std::io::{Error, ErrorKind};
///
/// assert!(never_sent(&Error::from(ErrorKind::ConnectionRefused)));
/// assert!(!never_sent(&Error::from(ErrorKind::ConnectionReset))); // it may have been read
/// ```
pub fn never_sent(error: &(dyn std::error::Error + 'static)) -> bool {
    crate::classify::transport::never_sent(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The method rule as the docs of `is_repeatable` and `refused_before_processing` state it.
    #[test]
    fn the_method_rule() {
        use http::{HeaderMap, Method, StatusCode};

        let mut headers = HeaderMap::new();
        assert!(is_repeatable(&Method::PUT, &headers));
        assert!(!is_repeatable(&Method::POST, &headers));
        headers.insert("idempotency-key", "  ".parse().unwrap());
        assert!(!is_repeatable(&Method::POST, &headers)); // blank: no key
        headers.insert(
            "idempotency-key",
            "7c4a8d09-ca37-4e4b-9c3b-0b6c1d2f3e4a".parse().unwrap(),
        );
        assert!(is_repeatable(&Method::POST, &headers));

        assert!(refused_before_processing(StatusCode::TOO_MANY_REQUESTS));
        assert!(!refused_before_processing(StatusCode::BAD_GATEWAY)); // the upstream may have run it
    }
    use crate::classify::http::classify_response_to;
    use crate::policy::Decision;
    use std::time::SystemTime;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, value.parse().unwrap());
        }
        h
    }

    /// A request's headers with each `(name, value)` as a field line of its own, in order.
    fn lines(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, value.parse().unwrap());
        }
        h
    }

    #[test]
    fn an_empty_or_blank_key_is_no_key() {
        for name in ["idempotency-key", "x-idempotency-key"] {
            for blank in ["", " ", "\t", " \t  "] {
                let h = lines(&[(name, blank)]);
                assert!(!is_repeatable(&Method::POST, &h), "{name}: {blank:?}");
                assert!(is_repeatable(&Method::PUT, &h), "the method still decides");
            }
            // A blank line beside a key: a key.
            let h = lines(&[(name, ""), (name, " k-1 ")]);
            assert!(is_repeatable(&Method::PATCH, &h));
        }
        let (post, blank) = (Method::POST, lines(&[("idempotency-key", " ")]));
        let status = StatusCode::INTERNAL_SERVER_ERROR;
        let now = SystemTime::UNIX_EPOCH;
        let none = HeaderMap::new();
        assert_eq!(
            classify_response_to(&post, &blank, status, &none, now),
            Decision::Stop
        );
    }

    #[test]
    fn a_write_is_retried_only_on_what_proves_it_was_not_applied() {
        let now = SystemTime::UNIX_EPOCH;
        let none = HeaderMap::new();
        let at = |method: Method, request: &HeaderMap, code: u16, response: &HeaderMap| {
            let status = StatusCode::from_u16(code).unwrap();
            classify_response_to(&method, request, status, response, now)
        };
        let retried = [408, 425, 429, 500, 502, 503, 504];
        // A 429 without a hint is the server limiting the rate: retried, from the
        // rate-limited base.
        let retry = |code: u16| match code {
            429 => Decision::RateLimited,
            _ => Decision::Retry,
        };
        for method in ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"] {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            for code in retried {
                assert_eq!(at(method.clone(), &none, code, &none), retry(code));
            }
        }
        for method in [
            Method::POST,
            Method::PATCH,
            Method::from_bytes(b"LOCK").unwrap(),
        ] {
            for code in [408, 425, 429, 503] {
                assert_eq!(at(method.clone(), &none, code, &none), retry(code));
            }
            for code in [500, 502, 504, 507] {
                assert_eq!(at(method.clone(), &none, code, &none), Decision::Stop);
            }
            // With a key, the whole table.
            for key in ["idempotency-key", "x-idempotency-key"] {
                let keyed = headers(&[(key, "k-1")]);
                for code in retried {
                    assert_eq!(at(method.clone(), &keyed, code, &none), retry(code));
                }
            }
            // The server's word wins both ways.
            let yes = headers(&[("x-should-retry", "true")]);
            assert_eq!(at(method.clone(), &none, 500, &yes), Decision::Retry);
            let no = headers(&[("x-should-retry", "false")]);
            assert_eq!(at(method.clone(), &none, 503, &no), Decision::Stop);
        }
    }
}
