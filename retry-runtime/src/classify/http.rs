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
//! **The server's word wins** ([`server_says_retry`], read by [`classify_response`],
//! `reqwest::check`'s error and the middleware, for a failure only): `x-should-retry: false`,
//! `stripe-should-retry: false` and `x-envoy-overloaded` stop whatever the status;
//! `x-should-retry: true` (or `stripe-should-retry: true`) retries a failure the table stops
//! on. Every field line of each header is read, and one "don't" wins over any "do".
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
use http::{HeaderMap, Method, StatusCode};

use crate::policy::Decision;

/// What to do after a response with this status (see the module's table).
///
/// ```
/// use retry_jitter::http::classify_status;
/// use retry_jitter::Decision;
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
/// `Decision::RetryAfter(hint)` instead of `Decision::Retry`; and the server's word
/// ([`server_says_retry`], from every field line of each header, "don't" winning) over the
/// table for a failure: `x-should-retry: false`, `stripe-should-retry: false` and
/// `x-envoy-overloaded` stop, `x-should-retry: true` retries. A success is never retried, and
/// its headers are not read.
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

/// [`classify_response`] for a response to a request of `method` with `request_headers`: a
/// request that is not [repeatable](is_repeatable) (a `POST` without an `Idempotency-Key`) is
/// retried only on a status that proves it was not applied
/// ([`refused_before_processing`]: `408`, `425`, `429`, `503`), not on a `500`, `502` or
/// `504`. The server's word ([`server_says_retry`]) still wins: `x-should-retry: true` on a
/// `500` answering a `POST` says it is safe.
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

/// [`classify_response`] on the wall clock, read (and the header parsed) only for a status that
/// is retried: a final answer (a success, a 404) costs neither. The middleware's `ByStatus`,
/// for a request that may be sent again as `resend` says.
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
#[inline(always)]
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

/// The response's decision; `repeatable`: the request may be sent again whatever became of
/// it, else only a refusal before processing is retried (unless the server says otherwise).
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

/// The decision on a response of `status`, from what the server said of retrying it (`said`,
/// as [`server_says_retry`] reads it) and its `Retry-After` (`hint`): each read only for a
/// failure, the hint only for one that is retried. What [`classify_response`] and
/// `reqwest::check`'s error decide by.
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
        Some(false) if classify_status(status) == Decision::Retry => {
            // A failure the table retries, which the server (a tier that already retried, an
            // overloaded proxy) says not to: inside a chain's scope, the tier passes that on.
            crate::run::chain::mark_gave_up();
            false
        }
        Some(said) => said,
        None => {
            classify_status(status) == Decision::Retry
                && (repeatable || refused_before_processing(status))
        }
    };
    if !retried {
        return Decision::Stop;
    }
    match hint() {
        Some(hint) => Decision::RetryAfter(hint),
        None => Decision::Retry,
    }
}

/// Whether a request may be sent again whatever became of the last one (RFC 9110 §9.2.2): its
/// method is idempotent (`GET`, `HEAD`, `OPTIONS`, `TRACE`, `PUT`, `DELETE`), or it carries an
/// `Idempotency-Key` (or `X-Idempotency-Key`) header, with which the server applies it once
/// however often it comes. A `POST` or a `PATCH` without one may already have been applied when
/// it failed (a `500`, a timeout, a connection closed after it was sent): sending it again may
/// place a second order.
///
/// A key is a value with something in it: an empty or all-blank (spaces, tabs) header is no
/// key, as a server that de-duplicates by key has nothing to de-duplicate by.
///
/// ```
/// use retry_jitter::http::is_repeatable;
/// use http::{HeaderMap, Method};
///
/// let mut headers = HeaderMap::new();
/// assert!(is_repeatable(&Method::PUT, &headers));
/// assert!(!is_repeatable(&Method::POST, &headers));
/// headers.insert("idempotency-key", "  ".parse().unwrap());
/// assert!(!is_repeatable(&Method::POST, &headers)); // blank: no key
/// headers.insert("idempotency-key", "7c4a8d09-ca37-4e4b-9c3b-0b6c1d2f3e4a".parse().unwrap());
/// assert!(is_repeatable(&Method::POST, &headers));
/// ```
pub fn is_repeatable(method: &Method, headers: &HeaderMap) -> bool {
    // `is_idempotent`: RFC 9110's idempotent methods, the six above, by the method's tag.
    method.is_idempotent() || KEYS.iter().any(|name| has_key(headers, name))
}

/// The headers that carry an idempotency key.
pub(crate) const KEYS: [&str; 2] = ["idempotency-key", "x-idempotency-key"];

/// Whether a line of header `name` holds a key: something other than spaces and tabs.
fn has_key(headers: &HeaderMap, name: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .any(|value| !value.as_bytes().iter().all(|&b| b == b' ' || b == b'\t'))
}

/// Whether a failed response proves that the server did not apply the request: `408`, `425`,
/// `429` and `503`, each a refusal before processing. What a request that is not
/// [repeatable](is_repeatable) is retried on (with a failed connect, which sent nothing).
///
/// ```
/// use retry_jitter::http::refused_before_processing;
/// use http::StatusCode;
///
/// assert!(refused_before_processing(StatusCode::TOO_MANY_REQUESTS));
/// assert!(!refused_before_processing(StatusCode::BAD_GATEWAY)); // the upstream may have run it
/// ```
pub fn refused_before_processing(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 425 | 429 | 503)
}

/// Whether a failed attempt's error proves that its request was never sent, so that even a
/// request that is not [repeatable](is_repeatable) may be sent again: down its source chain, a
/// refused connection (`std::io::ErrorKind::ConnectionRefused`), hyper-util's failed connect
/// (`client error (Connect)`), or an HTTP/2 stream the server did not process: one it refused
/// (`REFUSED_STREAM`), or one above the last stream id of the server's `GOAWAY`. A timeout, a
/// reset, a connection closed after the request was written, or a stream at or below a
/// `GOAWAY`'s last stream id proves nothing: the server may have applied it.
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

/// What the server said of retrying its failed response, if it said anything: the server's
/// word wins over the status table (and over the request method's rule in the middleware).
///
/// - `Some(false)`: `x-should-retry: false` (the Stainless-generated SDKs' header: OpenAI's,
///   Anthropic's), `stripe-should-retry: false` (Stripe's), or `x-envoy-overloaded` (Envoy
///   sheds load and never retries such an answer);
/// - `Some(true)`: `x-should-retry: true` or `stripe-should-retry: true`, which retry a failure
///   the table would stop on (a `409`), still within the attempts, the budget and the deadline;
/// - `None`: no such header (or a value that is neither `true` nor `false`).
///
/// Every field line of these headers is read, and every comma-separated value in a line (a
/// proxy may fold lines into one): one "don't" anywhere wins over any number of "do"s. Values
/// are read without regard to case or surrounding blanks.
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
    if headers.contains_key("x-envoy-overloaded") {
        return Some(false);
    }
    let mut said = None;
    for name in ["x-should-retry", "stripe-should-retry"] {
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

/// The status's decision, with `hint` (a parsed `Retry-After`) for a status that is retried.
///
/// ```
/// use retry_jitter::http::classify_status_with_hint;
/// use retry_jitter::Decision;
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
/// garbage, for a negative or fractional number and for a date that is not in the future.
///
/// - **Delta-seconds of any length are a hint.** A number too large for the integer types
///   saturates to `u64::MAX` seconds (RFC 9111 §1.2.2: "the greatest positive integer it can
///   conveniently represent"): a wait beyond any cap, so the retry loop stops with
///   [`GiveUpReason::HintBeyondCap`](crate::GiveUpReason::HintBeyondCap) instead of retrying
///   on its normal backoff. Leading zeros are fine (`007` is 7 s).
/// - **HTTP-dates** in the three formats of RFC 9110 §5.6.7: IMF-fixdate
///   (`Sun, 06 Nov 1994 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`), whose weekday
///   must match the date, and the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`).
///   Its two-digit year is read as RFC 9110 requires: in the century that puts the date at
///   most 50 years after `now`, so `01-Jan-70` read in 2026 is 2070, not 1970, and
///   `01-Jan-77` is 1977. Its weekday must be a weekday's name but is not checked against the
///   date: a sender may have computed it for another century.
///
/// ```
/// use retry_jitter::http::retry_after;
/// use http::HeaderMap;
/// use std::time::{Duration, SystemTime};
///
/// let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_400); // 2015-10-21 07:26:40 GMT
/// let mut h = HeaderMap::new();
/// h.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
/// assert_eq!(retry_after(&h, now), Some(Duration::from_secs(80)));
/// h.insert("retry-after", "soon".parse().unwrap());
/// assert_eq!(retry_after(&h, now), None);
///
/// // Too large for any integer type: the longest wait there is, not "no hint".
/// h.insert("retry-after", "99999999999999999999".parse().unwrap());
/// assert_eq!(retry_after(&h, now), Some(Duration::from_secs(u64::MAX)));
///
/// // RFC 850's two-digit year, read on 2026-01-01: `70` is 2070, 16 071 days ahead.
/// let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
/// h.insert("retry-after", "Wednesday, 01-Jan-70 00:00:00 GMT".parse().unwrap());
/// assert_eq!(retry_after(&h, now), Some(Duration::from_secs(16_071 * 86_400)));
/// ```
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(delta_seconds(value)));
    }
    let at = match rfc850::split(value) {
        Some(date) => rfc850::parse(date, now)?,
        None => httpdate::parse_http_date(value).ok()?,
    };
    at.duration_since(now).ok().filter(|d| !d.is_zero())
}

/// The value of a string of ASCII digits, saturated at `u64::MAX`.
fn delta_seconds(digits: &str) -> u64 {
    digits
        .bytes()
        .try_fold(0u64, |n, b| {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        })
        .unwrap_or(u64::MAX)
}

/// The obsolete RFC 850 date format, `Sunday, 06-Nov-94 08:49:37 GMT`, with its two-digit year
/// read by the rule of RFC 9110 §5.6.7 (the `httpdate` crate reads it in a fixed 1970–2069
/// window instead).
mod rfc850 {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    const WEEKDAYS: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];

    /// The date part (`06-Nov-94 08:49:37 GMT`) of a value in RFC 850 form: one that starts
    /// with a full weekday name and a comma. `None` for the other formats.
    pub(super) fn split(value: &str) -> Option<&str> {
        let (weekday, date) = value.split_once(", ")?;
        WEEKDAYS.contains(&weekday).then_some(date)
    }

    /// The instant `date` (`DD-Mon-YY HH:MM:SS GMT`) names, its year being the one ending in
    /// `YY` that puts it no more than 50 years after `now`. `None` if it is malformed or
    /// before 1970.
    pub(super) fn parse(date: &str, now: SystemTime) -> Option<SystemTime> {
        let s = date.as_bytes();
        let shape = s.len() == 22
            && s[2] == b'-'
            && s[6] == b'-'
            && s[9] == b' '
            && s[12] == b':'
            && s[15] == b':'
            && &s[18..] == b" GMT";
        if !shape {
            return None;
        }
        let two = |at: usize| -> Option<u32> {
            let (a, b) = (s[at], s[at + 1]);
            (a.is_ascii_digit() && b.is_ascii_digit())
                .then(|| u32::from(a - b'0') * 10 + u32::from(b - b'0'))
        };
        let (day, yy) = (two(0)?, two(7)?);
        let (hour, min, sec) = (two(10)?, two(13)?, two(16)?);
        let month = 1 + MONTHS.iter().position(|m| m[..] == s[3..6])? as u32;
        if hour > 23 || min > 59 || sec > 59 {
            return None;
        }
        let time = hour * 3600 + min * 60 + sec;

        // "More than 50 years in the future" is the previous century: of the years ending in
        // `yy`, the latest whose date is not after `now` plus 50 years.
        let (now_days, now_time) = since_epoch(now);
        let (now_year, now_month, now_day) = civil_from_days(now_days);
        let limit = (now_year + 50, now_month, now_day, now_time);
        let this_century = now_year.div_euclid(100) * 100 + i64::from(yy);
        let year = [this_century + 100, this_century]
            .into_iter()
            .find(|&y| (y, month, day, time) <= limit)
            .unwrap_or(this_century - 100);

        if day == 0 || day > days_in_month(year, month) {
            return None;
        }
        let secs = days_from_civil(year, month, day)
            .checked_mul(86_400)?
            .checked_add(i64::from(time))?;
        UNIX_EPOCH.checked_add(Duration::from_secs(u64::try_from(secs).ok()?))
    }

    /// Whole days since 1970-01-01 (negative before it) and the seconds into that day.
    fn since_epoch(t: SystemTime) -> (i64, u32) {
        let secs = match t.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            Err(e) => i64::try_from(e.duration().as_secs()).map_or(i64::MIN, |s| -s),
        };
        (secs.div_euclid(86_400), secs.rem_euclid(86_400) as u32)
    }

    fn is_leap(year: i64) -> bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    fn days_in_month(year: i64, month: u32) -> u32 {
        match month {
            2 if is_leap(year) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
        let y = if month <= 2 { year - 1 } else { year };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = i64::from((month + 9) % 12);
        let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The date of a day counted from 1970-01-01: the inverse of [`days_from_civil`].
    fn civil_from_days(days: i64) -> (i64, u32, u32) {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        (year, month, day)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_calendar_round_trips_and_knows_its_leap_years() {
            for days in (-800_000..800_000).step_by(7) {
                let (y, m, d) = civil_from_days(days);
                assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
                assert!(d >= 1 && d <= days_in_month(y, m));
            }
            assert_eq!(civil_from_days(0), (1970, 1, 1));
            assert_eq!(civil_from_days(11_016), (2000, 2, 29));
            assert_eq!(days_in_month(1900, 2), 28);
            assert_eq!(days_in_month(2000, 2), 29);
        }
    }
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
        for method in ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"] {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            for code in retried {
                assert_eq!(at(method.clone(), &none, code, &none), Decision::Retry);
            }
        }
        for method in [
            Method::POST,
            Method::PATCH,
            Method::from_bytes(b"LOCK").unwrap(),
        ] {
            for code in [408, 425, 429, 503] {
                assert_eq!(at(method.clone(), &none, code, &none), Decision::Retry);
            }
            for code in [500, 502, 504, 507] {
                assert_eq!(at(method.clone(), &none, code, &none), Decision::Stop);
            }
            // With a key, the whole table.
            for key in ["idempotency-key", "x-idempotency-key"] {
                let keyed = headers(&[(key, "k-1")]);
                for code in retried {
                    assert_eq!(at(method.clone(), &keyed, code, &none), Decision::Retry);
                }
            }
            // The server's word wins both ways.
            let yes = headers(&[("x-should-retry", "true")]);
            assert_eq!(at(method.clone(), &none, 500, &yes), Decision::Retry);
            let no = headers(&[("x-should-retry", "false")]);
            assert_eq!(at(method.clone(), &none, 503, &no), Decision::Stop);
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
    }

    #[test]
    fn delta_seconds_of_any_length_are_a_hint_saturating_at_the_longest_wait() {
        let now = SystemTime::UNIX_EPOCH;
        let longest = Some(Duration::from_secs(u64::MAX));
        let cases = [
            ("99999999", Some(Duration::from_secs(99_999_999))),
            ("18446744073709551615", longest), // u64::MAX itself
            ("18446744073709551616", longest), // one more
            ("99999999999999999999", longest),
            ("99999999999999999999999", longest),
            (&*"9".repeat(1000), longest),
            (
                "0000000000000000000000000042",
                Some(Duration::from_secs(42)),
            ),
        ];
        for (value, want) in cases {
            assert_eq!(retry_after(&header(value), now), want, "{value:?}");
        }
    }

    /// 2026-01-01 00:00:00 GMT.
    const NEW_YEAR_2026: u64 = 1_767_225_600;

    #[test]
    fn an_rfc_850_year_more_than_50_years_ahead_is_in_the_previous_century() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(NEW_YEAR_2026);
        let days = |n: u64| Some(Duration::from_secs(n * 86_400));
        let cases = [
            // 2070, not 1970 (which httpdate would say, and which is past).
            ("Wednesday, 01-Jan-70 00:00:00 GMT", days(16_071)),
            // The weekday is not checked: 1 Jan 2070 is a Wednesday, not a Thursday.
            ("Thursday, 01-Jan-70 00:00:00 GMT", days(16_071)),
            // Exactly 50 years ahead: still this century; one second more is 1976, past.
            ("Thursday, 01-Jan-76 00:00:00 GMT", days(18_262)),
            ("Thursday, 01-Jan-76 00:00:01 GMT", None),
            ("Saturday, 01-Jan-77 00:00:00 GMT", None), // 1977
            (
                "Friday, 01-Jan-26 00:00:10 GMT",
                Some(Duration::from_secs(10)),
            ),
            ("Friday, 29-Feb-72 00:00:00 GMT", days(16_860)), // 2072 is a leap year
            ("Friday, 29-Feb-71 00:00:00 GMT", None),         // 2071 is not
            ("Friday, 31-Apr-70 00:00:00 GMT", None),
            ("Friday, 01-jan-70 00:00:00 GMT", None),
            ("Friday, 1-Jan-70 00:00:00 GMT", None),
            ("Friday, 01-Jan-70 24:00:00 GMT", None),
            ("Friday, 01-Jan-70 00:00:00 UTC", None),
            ("Fri, 01-Jan-70 00:00:00 GMT", None),
            ("Someday, 01-Jan-70 00:00:00 GMT", None),
        ];
        for (value, want) in cases {
            assert_eq!(retry_after(&header(value), now), want, "{value:?}");
        }
        // Read in 2080, `10` is 2110: 30 years ahead, so this century's successor.
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(3_471_292_800); // 2080-01-01
        let hint = retry_after(&header("Wednesday, 01-Jan-10 00:00:00 GMT"), now);
        assert_eq!(hint, days(10_957));
        // Before 1970 the clock cannot say; nothing panics.
        let before = SystemTime::UNIX_EPOCH - Duration::from_secs(86_400 * 365 * 30);
        let hint = retry_after(&header("Wednesday, 01-Jan-70 00:00:00 GMT"), before);
        assert_eq!(hint, Some(Duration::from_secs(86_400 * 365 * 30)));
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
