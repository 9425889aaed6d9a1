//! `Retry-After` (and AWS's `x-amz-retry-after`): the wait a server asks for.
//!
//! It is delta-seconds or an HTTP-date (RFC 9110 §10.2.3).
//!
//! The obsolete RFC 850 date is read by RFC 9110's rule for its two-digit year.

use core::time::Duration;
use std::time::SystemTime;

use http::HeaderMap;

use crate::classify::headers::{RETRY_AFTER, X_AMZ_RETRY_AFTER};

/// The wait a `Retry-After` header asks for: delta-seconds (`120`) or an HTTP-date
/// (`Wed, 21 Oct 2015 07:28:00 GMT`, measured from `now`).
///
/// `None` for a missing header, for garbage, for a negative or fractional number and for a
/// date that is not in the future.
///
/// - **Delta-seconds of any length are a hint.**
///   - A number too large for the integer types saturates to `u64::MAX` seconds (RFC 9111
///     §1.2.2: "the greatest positive integer it can conveniently represent").
///   - That is a wait beyond any cap: the retry loop stops with
///     [`GiveUpReason::HintBeyondCap`](crate::GiveUpReason::HintBeyondCap), not retrying on its
///     normal backoff.
///   - Leading zeros are fine (`007` is 7 s).
/// - **HTTP-dates** in the three formats of RFC 9110 §5.6.7.
///   - IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`):
///     the weekday must match the date.
///   - The obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`).
///   - Its two-digit year is put in the century that makes the date at most 50 years after `now`.
///   - So `01-Jan-70` read in 2026 is 2070, not 1970, and `01-Jan-77` is 1977.
///   - Its weekday must be a weekday's name, unchecked against the date: a sender may have
///     computed it for another century.
/// - **AWS's `x-amz-retry-after`**, in milliseconds, where no `Retry-After` gives a hint.
///   - It is clamped to at most 5 s, as the AWS SDKs do: the wait is at most 5 s above the draw.
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
///
/// // AWS's header, in milliseconds, clamped to 5 s; `Retry-After` wins when it parses.
/// let mut h = HeaderMap::new();
/// h.insert("x-amz-retry-after", "1500".parse().unwrap());
/// assert_eq!(retry_after(&h, now), Some(Duration::from_millis(1500)));
/// h.insert("x-amz-retry-after", "60000".parse().unwrap());
/// assert_eq!(retry_after(&h, now), Some(Duration::from_secs(5)));
/// h.insert("retry-after", "2".parse().unwrap());
/// assert_eq!(retry_after(&h, now), Some(Duration::from_secs(2)));
/// ```
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    standard(headers, now).or_else(|| amz_retry_after(headers))
}

/// The longest hint `x-amz-retry-after` gives, as the AWS SDKs clamp it.
const AMZ_MOST: Duration = Duration::from_secs(5);

/// `x-amz-retry-after`: whole milliseconds, at most [`AMZ_MOST`].
fn amz_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(X_AMZ_RETRY_AFTER)?.to_str().ok()?.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Duration::from_millis(digits_value(value)).min(AMZ_MOST))
}

/// `Retry-After`, as RFC 9110 defines it.
fn standard(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(digits_value(value)));
    }
    let at = match rfc850::split(value) {
        Some(date) => rfc850::parse(date, now)?,
        None => httpdate::parse_http_date(value).ok()?,
    };
    at.duration_since(now).ok().filter(|d| !d.is_zero())
}

/// The value of a string of ASCII digits, saturated at `u64::MAX`.
fn digits_value(digits: &str) -> u64 {
    digits
        .bytes()
        .try_fold(0u64, |n, b| {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        })
        .unwrap_or(u64::MAX)
}

/// The obsolete RFC 850 date format, `Sunday, 06-Nov-94 08:49:37 GMT`.
///
/// Its two-digit year is read by the rule of RFC 9110 §5.6.7.
///
/// The `httpdate` crate reads it in a fixed 1970–2069 window instead.
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

    /// The date part (`06-Nov-94 08:49:37 GMT`) of a value in RFC 850 form.
    ///
    /// That form starts with a full weekday name and a comma. `None` for the other formats.
    pub(super) fn split(value: &str) -> Option<&str> {
        let (weekday, date) = value.split_once(", ")?;
        WEEKDAYS.contains(&weekday).then_some(date)
    }

    /// The instant `date` (`DD-Mon-YY HH:MM:SS GMT`) names.
    ///
    /// Its year is the one ending in `YY` that puts it no more than 50 years after `now`.
    ///
    /// `None` if it is malformed or before 1970.
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
}
