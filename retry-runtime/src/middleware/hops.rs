//! What a request carries across a hop of a chain of services.
//!
//! - The time its caller has left: `grpc-timeout`, or an HTTP header (Envoy's
//!   `x-envoy-expected-rq-timeout-ms` by default).
//! - Its attempt number: `grpc-previous-rpc-attempts` (gRPC's A6), or a header the builder
//!   names.
//!
//! Both faces' attempts write them; [`ChainLayer`](crate::tower::ChainLayer) reads them at the
//! other end.

use core::time::Duration;
use std::time::Instant;

use http::{HeaderMap, HeaderName, HeaderValue};

use crate::classify::headers::{
    APPLICATION_GRPC, CONTENT_TYPE, GRPC_PREVIOUS_RPC_ATTEMPTS, GRPC_TIMEOUT,
    X_ENVOY_EXPECTED_RQ_TIMEOUT_MS,
};

/// The header names a builder sends across the hop.
///
/// - The deadline's: `None` is the default, [`X_ENVOY_EXPECTED_RQ_TIMEOUT_MS`].
/// - The attempt number's: `None` is not sent.
///
/// Public only as what a face's builder keeps.
#[doc(hidden)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hops {
    pub(crate) deadline: Option<HeaderName>,
    pub(crate) attempt: Option<HeaderName>,
}

/// What an attempt of a face's call may take, for the hop headers.
///
/// Its `timeout`, and its call's own deadline (`max_elapsed` after the loop began).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HopLimits {
    timeout: Option<Duration>,
    deadline: Option<Instant>,
}

impl HopLimits {
    /// The limits of a call beginning now.
    ///
    /// The clock is read only for a `max_elapsed` inside a chain's scope.
    ///
    /// Outside one nothing is sent, and the loop has read its own start.
    #[inline]
    pub(crate) fn start(timeout: Option<Duration>, max_elapsed: Option<Duration>) -> Self {
        let deadline = match (max_elapsed, crate::policy::scope::scope_deadline()) {
            (Some(max), Some(_)) => crate::sleep::tokio_now().checked_add(max),
            _ => None,
        };
        HopLimits { timeout, deadline }
    }

    /// The time an attempt starting now has: the smallest of its timeout, its call's deadline
    /// and the caller's.
    ///
    /// `None` outside a chain's scope (nothing is sent there), or inside one where none of the
    /// three is set.
    #[inline]
    pub(crate) fn left(&self) -> Option<Duration> {
        let caller = crate::policy::scope::scope_deadline()?;
        let now = crate::sleep::tokio_now();
        let until = |at: Option<Instant>| at.map(|at| at.saturating_duration_since(now));
        [self.timeout, until(self.deadline), until(caller)]
            .into_iter()
            .flatten()
            .min()
    }
}

/// Whether a request (or a response) with these headers is gRPC: its `content-type` is
/// `application/grpc` or one of its `+proto`, `+json`, … forms.
pub(crate) fn is_grpc(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(APPLICATION_GRPC.as_bytes()))
}

/// Write an attempt's hop headers into its request's `headers`.
///
/// `attempt` is its 1-based number.
///
/// `left` is the time it has: the smallest of its timeout, its loop's deadline and its
/// caller's; `None` outside a chain's scope.
///
/// `left` is written as its deadline unless the request already carries a smaller one.
///
/// A deadline is lowered, never raised.
///
/// A first attempt with nothing to say reads no header.
pub(crate) fn stamp(
    hops: Option<&Hops>,
    headers: &mut HeaderMap,
    attempt: u32,
    left: Option<Duration>,
) {
    let named = hops.and_then(|h| h.attempt.as_ref());
    if left.is_none() && attempt <= 1 && named.is_none() {
        return;
    }
    let grpc = is_grpc(headers);
    if let Some(left) = left {
        // What is sent: gRPC's format rounds down, but never to 0, which a `ChainLayer` reads
        // as "no deadline": 1 ns at least.
        //
        // Envoy's milliseconds round down too, and never to 0 (its "no timeout"): less than a
        // millisecond left is sent as 1.
        let (name, parse, sent): (HeaderName, Parse, Duration) = if grpc {
            let left = left.max(Duration::from_nanos(1));
            let name = HeaderName::from_static(GRPC_TIMEOUT);
            (name, parse_grpc_timeout, left)
        } else {
            let name = hops
                .and_then(|h| h.deadline.clone())
                .unwrap_or(HeaderName::from_static(X_ENVOY_EXPECTED_RQ_TIMEOUT_MS));
            let millis = u64::try_from(left.as_millis()).unwrap_or(u64::MAX).max(1);
            (name, parse_millis, Duration::from_millis(millis))
        };
        // A deadline the request already carries is lowered, never raised: the smaller wins.
        //
        // One the caller's code set (tonic's `set_timeout`, its own Envoy header), or this
        // attempt's own, kept from the one before.
        if least(headers, name.as_str(), parse).is_none_or(|theirs| sent < theirs) {
            let value = if grpc {
                grpc_timeout(sent)
            } else {
                number(sent.as_millis())
            };
            headers.insert(name, value);
        }
    }
    if grpc && attempt > 1 {
        headers.insert(GRPC_PREVIOUS_RPC_ATTEMPTS, number(u128::from(attempt - 1)));
    }
    if let Some(name) = named {
        headers.insert(name.clone(), number(u128::from(attempt)));
    }
}

/// A number as a header value.
fn number(n: u128) -> HeaderValue {
    HeaderValue::from_str(&n.to_string()).expect("digits are a valid header value")
}

/// `left` in gRPC's `grpc-timeout` format: at most 8 digits and the finest unit that holds it
/// (`n`, `u`, `m`, `S`, `M`, `H`).
///
/// Rounded down: a deadline is never sent later than it is.
pub(crate) fn grpc_timeout(left: Duration) -> HeaderValue {
    const MAX: u128 = 99_999_999;
    let nanos = left.as_nanos();
    let units: [(u128, char); 6] = [
        (1, 'n'),
        (1_000, 'u'),
        (1_000_000, 'm'),
        (1_000_000_000, 'S'),
        (60_000_000_000, 'M'),
        (3_600_000_000_000, 'H'),
    ];
    let (value, unit) = units
        .iter()
        .map(|&(per, unit)| (nanos / per, unit))
        .find(|&(value, _)| value <= MAX)
        .unwrap_or((MAX, 'H'));
    HeaderValue::from_str(&format!("{value}{unit}")).expect("digits and a letter")
}

/// A `grpc-timeout` value: 1 to 8 ASCII digits and a unit (`H`, `M`, `S`, `m`, `u`, `n`);
/// `None` for anything else.
pub(crate) fn parse_grpc_timeout(value: &[u8]) -> Option<Duration> {
    let (&unit, digits) = value.split_last()?;
    let n = digits_value(digits, 8)?;
    Some(match unit {
        b'H' => Duration::from_secs(n * 3600),
        b'M' => Duration::from_secs(n * 60),
        b'S' => Duration::from_secs(n),
        b'm' => Duration::from_millis(n),
        b'u' => Duration::from_micros(n),
        b'n' => Duration::from_nanos(n),
        _ => return None,
    })
}

/// How a deadline header's value is read: [`parse_grpc_timeout`] or [`parse_millis`].
pub(crate) type Parse = fn(&[u8]) -> Option<Duration>;

/// The smallest deadline of every value of the header `name`.
///
/// Each field line, and each comma-separated value of one, is read by `parse`.
///
/// `0` and malformed values are none.
///
/// `0` is Envoy's "no timeout", and what a `ChainLayer` reads as no deadline in `grpc-timeout`
/// too.
pub(crate) fn least(headers: &HeaderMap, name: &str, parse: Parse) -> Option<Duration> {
    headers
        .get_all(name)
        .iter()
        .flat_map(|line| line.as_bytes().split(|&b| b == b','))
        .filter_map(|value| parse(value.trim_ascii()))
        .filter(|left| !left.is_zero())
        .min()
}

/// A milliseconds header value (Envoy's): ASCII digits only, at most 19 of them.
pub(crate) fn parse_millis(value: &[u8]) -> Option<Duration> {
    digits_value(value, 19).map(Duration::from_millis)
}

/// 1 to `most` ASCII digits as a number (`most` ≤ 19 always fits a `u64`).
fn digits_value(digits: &[u8], most: usize) -> Option<u64> {
    if digits.is_empty() || digits.len() > most || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        digits
            .iter()
            .fold(0u64, |n, d| n * 10 + u64::from(d - b'0')),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_parse_in_every_unit_and_refuse_the_rest() {
        let ok = [
            ("1H", Duration::from_secs(3600)),
            ("2M", Duration::from_secs(120)),
            ("3S", Duration::from_secs(3)),
            ("300m", Duration::from_millis(300)),
            ("99999999u", Duration::from_micros(99_999_999)),
            ("7n", Duration::from_nanos(7)),
            ("0m", Duration::ZERO),
        ];
        for (value, want) in ok {
            assert_eq!(parse_grpc_timeout(value.as_bytes()), Some(want), "{value}");
        }
        for bad in [
            "",
            "m",
            "100",
            "123456789m",
            "-1m",
            "1.5S",
            "10s",
            "10 m",
            "1D",
        ] {
            assert_eq!(parse_grpc_timeout(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn a_grpc_timeout_is_sent_in_the_finest_unit_that_fits_rounded_down() {
        let cases = [
            (Duration::from_nanos(5), "5n"),
            (Duration::from_millis(300), "300000u"),
            (Duration::from_secs(2), "2000000u"),
            (Duration::from_secs(100), "100000m"),
            (Duration::from_secs(200_000), "200000S"),
            (Duration::MAX, "99999999H"),
        ];
        for (left, want) in cases {
            assert_eq!(grpc_timeout(left), want, "{left:?}");
            let back = parse_grpc_timeout(want.as_bytes()).unwrap();
            assert!(back <= left, "{left:?} sent as {want}, later");
        }
        // 1.5 s in microseconds is exact; past 8 digits of them, milliseconds.
        assert_eq!(grpc_timeout(Duration::from_micros(1_500_000)), "1500000u");
        assert_eq!(grpc_timeout(Duration::from_micros(123_456_789)), "123456m");
    }

    #[test]
    fn millis_parse_digits_only() {
        assert_eq!(parse_millis(b"300"), Some(Duration::from_millis(300)));
        assert_eq!(parse_millis(b"0"), Some(Duration::ZERO));
        for bad in ["", "-5", "1.5", " 300", "3e2", "99999999999999999999"] {
            assert_eq!(parse_millis(bad.as_bytes()), None, "{bad:?}");
        }
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|&(k, v)| (HeaderName::from_static(k), HeaderValue::from_static(v)))
            .collect()
    }

    #[test]
    fn an_http_attempt_carries_its_time_left_and_a_named_attempt_number() {
        let hops = Hops {
            deadline: None,
            attempt: Some(HeaderName::from_static("x-attempt")),
        };
        let mut h = headers(&[]);
        stamp(Some(&hops), &mut h, 3, Some(Duration::from_millis(250)));
        assert_eq!(h[X_ENVOY_EXPECTED_RQ_TIMEOUT_MS], "250");
        assert_eq!(h["x-attempt"], "3");
        stamp(Some(&hops), &mut h, 4, Some(Duration::from_micros(300)));
        assert_eq!(
            h[X_ENVOY_EXPECTED_RQ_TIMEOUT_MS], "1",
            "never 0, Envoy's \"no timeout\""
        );
        assert!(!h.contains_key(GRPC_PREVIOUS_RPC_ATTEMPTS));
        // A first attempt outside a scope, with no attempt header: nothing written.
        let mut h = headers(&[("content-type", "application/grpc")]);
        stamp(None, &mut h, 1, None);
        assert_eq!(h.len(), 1);
    }

    #[test]
    fn an_http_attempt_lowers_the_deadline_its_request_carries_and_never_raises_it() {
        let five = Some(Duration::from_secs(5));
        let renamed = Hops {
            deadline: Some(HeaderName::from_static("x-deadline-ms")),
            attempt: None,
        };
        // (the header's name, its values as carried, what leaves with 5 s left)
        let cases: [(Option<&Hops>, &[&'static str], &str); 7] = [
            (None, &["100"], "100"),
            (None, &["60000"], "5000"),
            (None, &["300, 80"], "300, 80"),
            (None, &["0"], "5000"),
            (None, &["100ms"], "5000"),
            (Some(&renamed), &["100"], "100"),
            (Some(&renamed), &["60000", "7000"], "5000"),
        ];
        for (hops, carried, want) in cases {
            let name = hops.map_or(X_ENVOY_EXPECTED_RQ_TIMEOUT_MS, |h| {
                h.deadline.as_ref().unwrap().as_str()
            });
            let mut h = HeaderMap::new();
            for value in carried {
                h.append(
                    HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_static(value),
                );
            }
            stamp(hops, &mut h, 1, five);
            let sent: Vec<_> = h
                .get_all(name)
                .iter()
                .map(|v| v.to_str().unwrap())
                .collect();
            assert_eq!(sent.join(" | "), want, "{name}: {carried:?}");
        }
        // The same request's next attempt, with less left: lowered again, never raised.
        let mut h = headers(&[(X_ENVOY_EXPECTED_RQ_TIMEOUT_MS, "100")]);
        stamp(None, &mut h, 2, Some(Duration::from_millis(40)));
        assert_eq!(h[X_ENVOY_EXPECTED_RQ_TIMEOUT_MS], "40");
        stamp(None, &mut h, 3, Some(Duration::from_millis(70)));
        assert_eq!(h[X_ENVOY_EXPECTED_RQ_TIMEOUT_MS], "40");
    }

    #[test]
    fn a_grpc_retry_counts_previous_attempts_and_only_lowers_grpc_timeout() {
        let mut h = headers(&[
            ("content-type", "application/grpc+proto"),
            ("grpc-timeout", "1S"),
        ]);
        stamp(None, &mut h, 3, Some(Duration::from_millis(200)));
        assert_eq!(h[GRPC_TIMEOUT], "200000u");
        assert_eq!(h[GRPC_PREVIOUS_RPC_ATTEMPTS], "2");
        assert!(!h.contains_key(X_ENVOY_EXPECTED_RQ_TIMEOUT_MS));
        let mut h = headers(&[
            ("content-type", "application/grpc"),
            ("grpc-timeout", "100m"),
        ]);
        stamp(None, &mut h, 1, Some(Duration::from_secs(5)));
        assert_eq!(h[GRPC_TIMEOUT], "100m");
        assert!(!h.contains_key(GRPC_PREVIOUS_RPC_ATTEMPTS));
        // Nothing left is sent as 1 ns, never as 0 (which a `ChainLayer` reads as none).
        stamp(None, &mut h, 1, Some(Duration::ZERO));
        assert_eq!(h[GRPC_TIMEOUT], "1n");
        // Of several values the least counts, as a `ChainLayer` reads them; `0` is none.
        let mut h = headers(&[
            ("content-type", "application/grpc"),
            ("grpc-timeout", "5S, 100m"),
        ]);
        stamp(None, &mut h, 1, Some(Duration::from_secs(1)));
        assert_eq!(h[GRPC_TIMEOUT], "5S, 100m");
        let mut h = headers(&[("content-type", "application/grpc"), ("grpc-timeout", "0m")]);
        stamp(None, &mut h, 1, Some(Duration::from_millis(200)));
        assert_eq!(h[GRPC_TIMEOUT], "200000u");
    }
}
