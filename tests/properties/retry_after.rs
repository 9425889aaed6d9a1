//! `Retry-After` over its whole input space: delta-seconds of any length, and RFC 850 dates
//! whose two-digit year is read by RFC 9110's 50-year rule.
#![cfg(feature = "http")]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::HeaderMap;
use proptest::prelude::*;
use retry_jitter::http::retry_after;

fn hint(value: &str, now: SystemTime) -> Option<Duration> {
    let mut headers = HeaderMap::new();
    headers.insert("retry-after", value.parse().unwrap());
    retry_after(&headers, now)
}

/// The value of a digit string, exactly, or `None` when it does not fit in a `u64`.
fn exact(digits: &str) -> Option<u64> {
    let significant = digits.trim_start_matches('0');
    if significant.len() > 20 {
        return None;
    }
    u64::try_from(significant.parse::<u128>().unwrap_or(0)).ok()
}

/// The date of a day counted from 1970-01-01 (H. Hinnant's algorithm), for formatting.
fn civil(days: i64) -> (i64, usize, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month as usize, day)
}

/// `secs` after the epoch in RFC 850 form: `Sunday, 06-Nov-94 08:49:37 GMT`.
fn rfc850(secs: u64) -> String {
    const DAYS: [&str; 7] = [
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
    ];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = (secs / 86_400) as i64;
    let (year, month, day) = civil(days);
    let t = secs % 86_400;
    format!(
        "{}, {day:02}-{}-{:02} {:02}:{:02}:{:02} GMT",
        DAYS[(days % 7) as usize],
        MONTHS[month - 1],
        year % 100,
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

/// Fifty calendar years, at least: 365 days × 50 plus the fewest leap days fifty years can hold,
/// 11 when they span a century year that is not a leap year (2100, 2200). (12 was wrong: from
/// 2156-02-29 to 2206-03-01 there are 11, and a date 18,261.9 days ahead — past 50 calendar
/// years by the parser's reckoning, within them by this constant's — failed the test.)
const FIFTY_YEARS_AT_LEAST: u64 = (50 * 365 + 11) * 86_400;

proptest! {
    #[test]
    fn delta_seconds_of_any_length_are_the_number_saturated_at_u64_max(
        digits in "[0-9]{1,200}",
        now in 0u64..10_000_000_000,
    ) {
        let now = UNIX_EPOCH + Duration::from_secs(now);
        let want = Duration::from_secs(exact(&digits).unwrap_or(u64::MAX));
        prop_assert_eq!(hint(&digits, now), Some(want));
    }

    #[test]
    fn a_longer_wait_asked_for_is_never_a_shorter_hint(
        digits in "[1-9][0-9]{0,60}",
        more in "[0-9]{1,20}",
    ) {
        let now = SystemTime::now();
        let longer = format!("{digits}{more}");
        prop_assert!(hint(&longer, now) >= hint(&digits, now));
        prop_assert!(hint(&longer, now).is_some());
    }

    #[test]
    fn an_rfc_850_date_up_to_50_years_ahead_is_read_in_the_right_century(
        now in 0u64..200 * 365 * 86_400,
        ahead in 1u64..FIFTY_YEARS_AT_LEAST,
    ) {
        let date = rfc850(now + ahead);
        let now = UNIX_EPOCH + Duration::from_secs(now);
        prop_assert_eq!(hint(&date, now), Some(Duration::from_secs(ahead)), "{}", date);
    }

    #[test]
    fn an_rfc_850_date_more_than_50_years_ahead_is_a_century_earlier(
        now in 100 * 365 * 86_400u64..200 * 365 * 86_400,
        ahead in (50 * 365 + 14) * 86_400u64..100 * 365 * 86_400,
    ) {
        // The same two-digit year a century earlier: in the past, so no hint.
        let date = rfc850(now + ahead);
        let now = UNIX_EPOCH + Duration::from_secs(now);
        prop_assert_eq!(hint(&date, now), None, "{}", date);
    }
}

#[test]
fn the_formatter_of_these_tests_writes_rfc_850() {
    assert_eq!(rfc850(784_111_777), "Sunday, 06-Nov-94 08:49:37 GMT");
    assert_eq!(rfc850(0), "Thursday, 01-Jan-70 00:00:00 GMT");
}
