//! HTTP: which status codes are worth retrying, and the server's `Retry-After` hint
//! (feature `http`, on the `http` crate's types).
//!
//! | status | decision | why |
//! |---|---|---|
//! | 408 Request Timeout | retry | the server gave up waiting; a new request may arrive in time |
//! | 425 Too Early | retry | the server will accept it once the TLS handshake is complete |
//! | 429 Too Many Requests | `RetryAfter` the server's hint; without one, `RateLimited` (waits drawn from the policy's `rate_limited_base`, 1 s) | rate limited: waiting, longer, is the fix |
//! | 500, 502, 503, 504 | retry (503 honours `Retry-After`) | the server or a gateway failed for now |
//! | 501 Not Implemented, 505 HTTP Version Not Supported | stop | the server will never support it |
//! | other 5xx | retry | a server-side failure |
//! | every other 4xx (400, 401, 403, 404, 409, 422, …) | stop | the request itself is wrong: sending it again gets the same answer |
//! | 1xx, 2xx, 3xx | stop | not a failure to retry |
//!
//! **The server's word wins**, for a failure only ([`server_says_retry`]).
//!
//! [`classify_response`], `reqwest::check`'s error and the middleware read it.
//!
//! `x-should-retry: false`, `stripe-should-retry: false` and `x-envoy-overloaded` stop
//! whatever the status.
//!
//! `x-should-retry: true` (or `stripe-should-retry: true`) retries a failure the table stops on.
//!
//! Every field line of each header is read, and one "don't" wins over any "do".
//!
//! **Idempotency.** Retrying resends the whole request.
//!
//! `GET`, `HEAD`, `PUT`, `DELETE` and `OPTIONS` are idempotent: a retry cannot do twice what
//! was meant once.
//!
//! A `POST` (or a `PATCH`) may create a second order, a second payment.
//!
//! Retry it only when the server makes it idempotent: an `Idempotency-Key` header whose value
//! stays the same across attempts.
//!
//! Or when the error proves the request never reached the server (a refused connection).
//!
//! Generate the key *outside* the retried function and pass it in, so every attempt sends the
//! same one:
//!
//! ```text
//! #[retry(on = retry_jitter::transient)]
//! async fn pay(client: &reqwest::Client, key: &str, order: &Order) -> Result<Receipt, retry_jitter::reqwest::Error> {
//!     let resp = client.post(URL).header("Idempotency-Key", key).json(order).send().await?;
//!     Ok(retry_jitter::reqwest::check(resp).await?.json().await?)
//! }
//! let key = uuid::Uuid::new_v4().to_string(); // once per logical payment, not per attempt
//! pay(&client, &key, &order).await?;
//! ```

use core::time::Duration;
use std::time::SystemTime;

use http::{HeaderMap, Method, StatusCode};

use crate::classify::headers::{STRIPE_SHOULD_RETRY, X_ENVOY_OVERLOADED, X_SHOULD_RETRY};
use crate::policy::Decision;

mod failed;
mod method;
mod retry_after;

pub use failed::Failed;
pub use method::never_sent;
pub(crate) use method::{is_repeatable, refused_before_processing};
pub use retry_after::retry_after;

/// What to do after a response with this status (see the module's table).
///
/// ```
/// use retry_jitter::http::classify_status;
/// use retry_jitter::Decision;
/// use http::StatusCode;
///
/// assert_eq!(classify_status(StatusCode::SERVICE_UNAVAILABLE), Decision::Retry);
/// assert_eq!(classify_status(StatusCode::TOO_MANY_REQUESTS), Decision::RateLimited);
/// assert_eq!(classify_status(StatusCode::NOT_FOUND), Decision::Stop);
/// assert_eq!(classify_status(StatusCode::NOT_IMPLEMENTED), Decision::Stop);
/// ```
pub fn classify_status(status: StatusCode) -> Decision {
    match status.as_u16() {
        429 => Decision::RateLimited,
        408 | 425 => Decision::Retry,
        501 | 505 => Decision::Stop,
        500..=599 => Decision::Retry,
        _ => Decision::Stop,
    }
}

/// The status's decision, with the `Retry-After` hint (if any) for a status that is retried.
///
/// That is `Decision::RetryAfter(hint)` instead of `Decision::Retry`.
///
/// For a failure, the server's word ([`server_says_retry`]) wins over the table.
///
/// `x-should-retry: false`, `stripe-should-retry: false` and `x-envoy-overloaded` stop;
/// `x-should-retry: true` retries.
///
/// A success is never retried, and its headers are not read.
///
/// ```
/// use retry_jitter::http::classify_response;
/// use retry_jitter::Decision;
/// use http::{HeaderMap, StatusCode};
/// use std::time::{Duration, SystemTime};
///
/// let mut headers = HeaderMap::new();
/// headers.insert("retry-after", "2".parse().unwrap());
/// let d = classify_response(StatusCode::TOO_MANY_REQUESTS, &headers, SystemTime::now());
/// assert_eq!(d, Decision::RetryAfter(Duration::from_secs(2)));
/// assert_eq!(classify_response(StatusCode::BAD_REQUEST, &headers, SystemTime::now()), Decision::Stop);
///
/// // The server's word: a 503 marked "don't" stops, a 409 marked "do" is retried.
/// let mut dont = HeaderMap::new();
/// dont.insert("x-should-retry", "false".parse().unwrap());
/// assert_eq!(classify_response(StatusCode::SERVICE_UNAVAILABLE, &dont, SystemTime::now()), Decision::Stop);
/// let mut again = HeaderMap::new();
/// again.insert("x-should-retry", "true".parse().unwrap());
/// assert_eq!(classify_response(StatusCode::CONFLICT, &again, SystemTime::now()), Decision::Retry);
/// assert_eq!(classify_response(StatusCode::OK, &again, SystemTime::now()), Decision::Stop);
///
/// // "Do" on one line, "don't" on the next: "don't" wins.
/// again.append("x-should-retry", "false".parse().unwrap());
/// assert_eq!(classify_response(StatusCode::CONFLICT, &again, SystemTime::now()), Decision::Stop);
/// ```
pub fn classify_response(status: StatusCode, headers: &HeaderMap, now: SystemTime) -> Decision {
    classify_response_at(status, headers, true, || now)
}

/// [`classify_response`] for a response to a request of `method` with `request_headers`.
///
/// A request that is not repeatable (a `POST` or `PATCH` without an `Idempotency-Key`) is
/// retried only on a status that proves it was not applied.
///
/// Those are `408`, `425`, `429`, `503` (refused before processing); not `500`, `502` or `504`.
///
/// The server's word ([`server_says_retry`]) still wins: `x-should-retry: true` on a `500`
/// answering a `POST` says it is safe.
///
/// ```
/// use retry_jitter::http::classify_response_to;
/// use retry_jitter::Decision;
/// use http::{HeaderMap, Method, StatusCode};
/// use std::time::SystemTime;
///
/// let none = HeaderMap::new();
/// let now = SystemTime::now();
/// let post = |status| classify_response_to(&Method::POST, &none, status, &none, now);
/// assert_eq!(post(StatusCode::INTERNAL_SERVER_ERROR), Decision::Stop);
/// assert_eq!(post(StatusCode::SERVICE_UNAVAILABLE), Decision::Retry);
/// let get = classify_response_to(&Method::GET, &none, StatusCode::BAD_GATEWAY, &none, now);
/// assert_eq!(get, Decision::Retry);
/// ```
pub fn classify_response_to(
    method: &Method,
    request_headers: &HeaderMap,
    status: StatusCode,
    headers: &HeaderMap,
    now: SystemTime,
) -> Decision {
    classify_response_at(
        status,
        headers,
        is_repeatable(method, request_headers),
        || now,
    )
}

/// [`classify_response`] on the wall clock.
///
/// The clock is read (and the header parsed) only for a status that is retried: a final answer
/// (a success, a 404) costs neither.
///
/// The middleware's `ByStatus`, for a request that may be sent again as `resend` says.
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
#[inline]
pub(crate) fn classify_response_now(
    status: StatusCode,
    headers: &HeaderMap,
    resend: crate::policy::Resend,
) -> Decision {
    // A success is the answer: decided inline, in the face's own code, without a call.
    if status.is_success() {
        return Decision::Stop;
    }
    classify_failure_now(status, headers, resend)
}

/// [`classify_response_now`] of a status that is not a success, out of line.
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
#[inline(never)]
fn classify_failure_now(
    status: StatusCode,
    headers: &HeaderMap,
    resend: crate::policy::Resend,
) -> Decision {
    let repeatable = resend == crate::policy::Resend::Any;
    classify_response_at(status, headers, repeatable, SystemTime::now)
}

/// The response's decision.
///
/// `repeatable`: the request may be sent again whatever became of it.
///
/// Else only a refusal before processing is retried, unless the server says otherwise.
fn classify_response_at(
    status: StatusCode,
    headers: &HeaderMap,
    repeatable: bool,
    now: impl FnOnce() -> SystemTime,
) -> Decision {
    decide_response(
        status,
        repeatable,
        || server_says_retry(headers),
        || retry_after(headers, now()),
    )
}

/// The decision on a response of `status`, from what the server said (`said`) and its
/// `Retry-After` (`hint`).
///
/// `said` is as [`server_says_retry`] reads it.
///
/// Each is read only for a failure, the hint only for one that is retried.
///
/// What [`classify_response`] and `reqwest::check`'s error decide by.
pub(crate) fn decide_response(
    status: StatusCode,
    repeatable: bool,
    said: impl FnOnce() -> Option<bool>,
    hint: impl FnOnce() -> Option<Duration>,
) -> Decision {
    // A success (or a redirect) is final whatever a header says, and reads none.
    if !(status.is_client_error() || status.is_server_error()) {
        return Decision::Stop;
    }
    let retried = match said() {
        Some(false) if classify_status(status).retries() => {
            // A failure the table retries, which the server says not to: a tier that already
            // retried, an overloaded proxy.
            //
            // Inside a chain's scope, the tier passes that on.
            crate::policy::scope::mark_gave_up();
            false
        }
        Some(said) => said,
        None => {
            classify_status(status).retries() && (repeatable || refused_before_processing(status))
        }
    };
    if !retried {
        return Decision::Stop;
    }
    match hint() {
        Some(hint) => Decision::RetryAfter(hint),
        None if status == StatusCode::TOO_MANY_REQUESTS => Decision::RateLimited,
        None => Decision::Retry,
    }
}

/// What the server said of retrying its failed response, if it said anything.
///
/// The server's word wins over the status table, and over the method rule in the middleware.
///
/// - `Some(false)`: `x-should-retry: false` (the Stainless-generated SDKs' header: OpenAI's,
///   Anthropic's), `stripe-should-retry: false` (Stripe's), or `x-envoy-overloaded` (Envoy
///   sheds load and never retries such an answer);
/// - `Some(true)`: `x-should-retry: true` or `stripe-should-retry: true`.
///   These retry a failure the table would stop on (a `409`), within the attempts, the budget
///   and the deadline;
/// - `None`: no such header (or a value that is neither `true` nor `false`).
///
/// Every field line of these headers is read, and every comma-separated value in a line.
///
/// A proxy may fold lines into one.
///
/// One "don't" anywhere wins over any number of "do"s.
///
/// Values are read without regard to case or surrounding blanks.
///
/// Only a failure's headers are read: [`classify_response`] never retries a `2xx`.
///
/// ```
/// use retry_jitter::http::server_says_retry;
/// use http::HeaderMap;
///
/// let mut h = HeaderMap::new();
/// assert_eq!(server_says_retry(&h), None);
/// h.insert("x-should-retry", "true".parse().unwrap());
/// assert_eq!(server_says_retry(&h), Some(true));
/// h.append("x-should-retry", "false".parse().unwrap()); // a second line
/// assert_eq!(server_says_retry(&h), Some(false)); // "don't" wins
/// h.remove("x-should-retry");
/// h.insert("x-envoy-overloaded", "true".parse().unwrap());
/// assert_eq!(server_says_retry(&h), Some(false));
/// ```
pub fn server_says_retry(headers: &HeaderMap) -> Option<bool> {
    if headers.contains_key(X_ENVOY_OVERLOADED) {
        return Some(false);
    }
    let mut said = None;
    for name in [X_SHOULD_RETRY, STRIPE_SHOULD_RETRY] {
        let words = headers
            .get_all(name)
            .iter()
            .filter_map(|line| line.to_str().ok())
            .flat_map(|line| line.split(','));
        for word in words {
            let word = word.trim_matches([' ', '\t']);
            if word.eq_ignore_ascii_case("false") {
                return Some(false);
            }
            if word.eq_ignore_ascii_case("true") {
                said = Some(true);
            }
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::RETRY_AFTER;

    #[test]
    fn status_codes_follow_the_documented_table() {
        let retry = [408, 425, 429, 500, 502, 503, 504, 507, 511];
        let stop = [
            100, 200, 204, 301, 304, 400, 401, 403, 404, 405, 409, 410, 413, 422, 501, 505,
        ];
        for code in retry {
            let s = StatusCode::from_u16(code).unwrap();
            let retried = match code {
                429 => Decision::RateLimited,
                _ => Decision::Retry,
            };
            assert_eq!(classify_status(s), retried, "{code}");
        }
        for code in stop {
            let s = StatusCode::from_u16(code).unwrap();
            assert_eq!(classify_status(s), Decision::Stop, "{code}");
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, value.parse().unwrap());
        }
        h
    }

    #[test]
    fn the_server_s_word_wins_over_the_table_for_a_failure_only() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_400);
        let at = |code: u16, pairs: &[(&'static str, &str)]| {
            classify_response(StatusCode::from_u16(code).unwrap(), &headers(pairs), now)
        };
        // "Don't": each of the three headers stops a status the table retries.
        for dont in [
            ("x-should-retry", "false"),
            ("stripe-should-retry", "false"),
            ("x-envoy-overloaded", "true"),
            ("x-should-retry", " FALSE "),
        ] {
            for code in [429, 500, 502, 503, 504] {
                assert_eq!(at(code, &[dont]), Decision::Stop, "{code} {dont:?}");
            }
        }
        // "Do": a failure the table stops on is retried, with its Retry-After.
        for code in [400, 409, 422, 501] {
            assert_eq!(at(code, &[("x-should-retry", "true")]), Decision::Retry);
            assert_eq!(
                at(code, &[("stripe-should-retry", "true")]),
                Decision::Retry
            );
        }
        assert_eq!(
            at(409, &[("x-should-retry", "true"), ("retry-after", "3")]),
            Decision::RetryAfter(Duration::from_secs(3))
        );
        // Never a success, a redirect or an informational answer.
        for code in [100, 200, 201, 204, 301, 304] {
            assert_eq!(at(code, &[("x-should-retry", "true")]), Decision::Stop);
        }
        // "Don't" beats "do"; a value that is neither is no word at all.
        assert_eq!(
            at(
                503,
                &[("x-should-retry", "true"), ("x-envoy-overloaded", "true")]
            ),
            Decision::Stop
        );
        assert_eq!(
            at(
                503,
                &[("x-should-retry", "true"), ("stripe-should-retry", "false")]
            ),
            Decision::Stop
        );
        assert_eq!(at(503, &[("x-should-retry", "maybe")]), Decision::Retry);
        assert_eq!(at(404, &[("x-should-retry", "1")]), Decision::Stop);
    }

    /// A response's headers with each `(name, value)` as a field line of its own, in order.
    fn lines(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, value.parse().unwrap());
        }
        h
    }

    #[test]
    fn every_line_of_the_server_s_word_is_heard_and_don_t_wins() {
        let now = SystemTime::UNIX_EPOCH;
        let none = HeaderMap::new();
        let dont = [
            &[("x-should-retry", "true"), ("x-should-retry", "false")][..],
            &[("x-should-retry", "false"), ("x-should-retry", "true")],
            &[
                ("stripe-should-retry", "true"),
                ("stripe-should-retry", "false"),
            ],
            &[
                ("x-should-retry", "true"),
                ("stripe-should-retry", "TRUE"),
                ("stripe-should-retry", " false "),
            ],
            &[
                ("x-should-retry", "true"),
                ("x-envoy-overloaded", "true"),
                ("x-envoy-overloaded", "true"),
            ],
            &[("x-should-retry", "maybe"), ("x-should-retry", "false")],
            // Lines a proxy folded into one.
            &[("x-should-retry", "true, false")],
            &[("x-should-retry", "true,\tfalse")],
        ];
        for said in dont {
            let h = lines(said);
            assert_eq!(server_says_retry(&h), Some(false), "{said:?}");
            for code in [429, 500, 503, 409] {
                let status = StatusCode::from_u16(code).unwrap();
                assert_eq!(
                    classify_response(status, &h, now),
                    Decision::Stop,
                    "{code} {said:?}"
                );
                let post = classify_response_to(&Method::POST, &none, status, &h, now);
                assert_eq!(post, Decision::Stop, "POST {code} {said:?}");
            }
        }
        // "Do" on every line, or beside lines that say nothing: a POST's 500 is retried.
        for said in [
            &[("x-should-retry", "true"), ("x-should-retry", "true")][..],
            &[("x-should-retry", "maybe"), ("x-should-retry", "true")],
            &[("x-should-retry", "1, true")],
        ] {
            let h = lines(said);
            assert_eq!(server_says_retry(&h), Some(true), "{said:?}");
            let post = classify_response_to(
                &Method::POST,
                &none,
                StatusCode::INTERNAL_SERVER_ERROR,
                &h,
                now,
            );
            assert_eq!(post, Decision::Retry, "{said:?}");
        }
        // Lines that say neither are no word: the table decides.
        let h = lines(&[("x-should-retry", "maybe"), ("x-should-retry", "")]);
        assert_eq!(server_says_retry(&h), None);
        assert_eq!(
            classify_response(StatusCode::BAD_GATEWAY, &h, now),
            Decision::Retry
        );
    }

    fn header(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, value.parse().unwrap());
        h
    }

    #[test]
    fn a_hint_rides_only_on_a_retried_status() {
        let now = SystemTime::now();
        let h = header("3");
        let hint = Decision::RetryAfter(Duration::from_secs(3));
        assert_eq!(
            classify_response(StatusCode::SERVICE_UNAVAILABLE, &h, now),
            hint
        );
        assert_eq!(
            classify_response(StatusCode::TOO_MANY_REQUESTS, &h, now),
            hint
        );
        assert_eq!(
            classify_response(StatusCode::NOT_FOUND, &h, now),
            Decision::Stop
        );
        let none = HeaderMap::new();
        assert_eq!(
            classify_response(StatusCode::BAD_GATEWAY, &none, now),
            Decision::Retry
        );
    }
}
