//! HTTP: which status codes are worth retrying, and the server's `Retry-After` hint
//! (feature `http`, on the `http` crate's types).
//!
//! | status | decision | why |
//! |---|---|---|
//! | 408 Request Timeout | retry | the server gave up waiting; a new request may arrive in time |
//! | 425 Too Early | retry | the server will accept it once the TLS handshake is complete |
//! | 429 Too Many Requests | retry (honouring `Retry-After`) | rate limited: waiting is the fix |
//! | 500, 502, 503, 504 | retry (503 honours `Retry-After`) | the server or a gateway failed for now |
//! | 501 Not Implemented, 505 HTTP Version Not Supported | stop | the server will never support it |
//! | other 5xx | retry | a server-side failure |
//! | every other 4xx (400, 401, 403, 404, 409, 422, …) | stop | the request itself is wrong: sending it again gets the same answer |
//! | 1xx, 2xx, 3xx | stop | not a failure to retry |
//!
//! **Idempotency.** Retrying resends the whole request. `GET`, `HEAD`, `PUT`, `DELETE` and
//! `OPTIONS` are idempotent, so a retry cannot do twice what was meant once. A `POST` (or a
//! `PATCH`) may create a second order, a second payment: retry it only when the server makes it
//! idempotent — an `Idempotency-Key` header whose value stays the same across attempts — or when
//! the error proves the request never reached the server (a refused connection). Generate the
//! key *outside* the retried function and pass it in, so every attempt sends the same one:
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

use http::header::RETRY_AFTER;
use http::{HeaderMap, StatusCode};

use crate::Decision;

/// What to do after a response with this status (see the module's table).
///
/// ```
/// use retry_runtime::http::classify_status;
/// use retry_runtime::Decision;
/// use http::StatusCode;
///
/// assert_eq!(classify_status(StatusCode::SERVICE_UNAVAILABLE), Decision::Retry);
/// assert_eq!(classify_status(StatusCode::NOT_FOUND), Decision::Stop);
/// assert_eq!(classify_status(StatusCode::NOT_IMPLEMENTED), Decision::Stop);
/// ```
pub fn classify_status(status: StatusCode) -> Decision {
    match status.as_u16() {
        408 | 425 | 429 => Decision::Retry,
        501 | 505 => Decision::Stop,
        500..=599 => Decision::Retry,
        _ => Decision::Stop,
    }
}

/// The status's decision, with the `Retry-After` hint (if any) for a status that is retried:
/// `Decision::RetryAfter(hint)` instead of `Decision::Retry`.
///
/// ```
/// use retry_runtime::http::classify_response;
/// use retry_runtime::Decision;
/// use http::{HeaderMap, StatusCode};
/// use std::time::{Duration, SystemTime};
///
/// let mut headers = HeaderMap::new();
/// headers.insert("retry-after", "2".parse().unwrap());
/// let d = classify_response(StatusCode::TOO_MANY_REQUESTS, &headers, SystemTime::now());
/// assert_eq!(d, Decision::RetryAfter(Duration::from_secs(2)));
/// assert_eq!(classify_response(StatusCode::BAD_REQUEST, &headers, SystemTime::now()), Decision::Stop);
/// ```
pub fn classify_response(status: StatusCode, headers: &HeaderMap, now: SystemTime) -> Decision {
    classify_status_with_hint(status, retry_after(headers, now))
}

/// The status's decision, with `hint` (a parsed `Retry-After`) for a status that is retried.
///
/// ```
/// use retry_runtime::http::classify_status_with_hint;
/// use retry_runtime::Decision;
/// use http::StatusCode;
/// use std::time::Duration;
///
/// let hint = Some(Duration::from_secs(1));
/// assert_eq!(classify_status_with_hint(StatusCode::SERVICE_UNAVAILABLE, hint), Decision::RetryAfter(Duration::from_secs(1)));
/// assert_eq!(classify_status_with_hint(StatusCode::FORBIDDEN, hint), Decision::Stop);
/// ```
pub fn classify_status_with_hint(status: StatusCode, hint: Option<Duration>) -> Decision {
    match (classify_status(status), hint) {
        (Decision::Retry, Some(hint)) => Decision::RetryAfter(hint),
        (decision, _) => decision,
    }
}

/// The wait a `Retry-After` header asks for: delta-seconds (`120`) or an HTTP-date
/// (`Wed, 21 Oct 2015 07:28:00 GMT`, measured from `now`). `None` for a missing header, for
/// garbage, for a negative number and for a date that is not in the future.
///
/// ```
/// use retry_runtime::http::retry_after;
/// use http::HeaderMap;
/// use std::time::{Duration, SystemTime};
///
/// let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_400); // 07:26:40 GMT
/// let mut h = HeaderMap::new();
/// h.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
/// assert_eq!(retry_after(&h, now), Some(Duration::from_secs(80)));
/// h.insert("retry-after", "soon".parse().unwrap());
/// assert_eq!(retry_after(&h, now), None);
/// ```
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse::<u64>().ok().map(Duration::from_secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    at.duration_since(now).ok().filter(|d| !d.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_follow_the_documented_table() {
        let retry = [408, 425, 429, 500, 502, 503, 504, 507, 511];
        let stop = [
            100, 200, 204, 301, 304, 400, 401, 403, 404, 405, 409, 410, 413, 422, 501, 505,
        ];
        for code in retry {
            let s = StatusCode::from_u16(code).unwrap();
            assert_eq!(classify_status(s), Decision::Retry, "{code}");
        }
        for code in stop {
            let s = StatusCode::from_u16(code).unwrap();
            assert_eq!(classify_status(s), Decision::Stop, "{code}");
        }
    }

    fn header(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, value.parse().unwrap());
        h
    }

    #[test]
    fn retry_after_parses_seconds_and_dates_and_ignores_the_rest() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_400);
        let cases: [(&str, Option<u64>); 11] = [
            ("0", Some(0)),
            ("1", Some(1)),
            (" 120 ", Some(120)),
            ("Wed, 21 Oct 2015 07:28:00 GMT", Some(80)),
            ("Wednesday, 21-Oct-15 07:28:00 GMT", Some(80)), // RFC 850
            ("Wed Oct 21 07:28:00 2015", Some(80)),          // asctime
            ("Wed, 21 Oct 2015 07:26:40 GMT", None),         // now: not in the future
            ("Tue, 20 Oct 2015 07:28:00 GMT", None),         // past
            ("-5", None),
            ("1.5", None),
            ("tomorrow", None),
        ];
        for (value, want) in cases {
            assert_eq!(
                retry_after(&header(value), now),
                want.map(Duration::from_secs),
                "{value:?}"
            );
        }
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
        assert_eq!(retry_after(&header("99999999999999999999999"), now), None);
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
