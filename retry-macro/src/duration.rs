//! Duration literals (`"200ms"`, `"1m30s"`), parsed at compile time.

/// What a duration literal is, said in every message about one.
const SYNTAX: &str = "a duration literal is a whole number and a unit (ns, us, µs, ms, s, m, h) \
                      with no space between, several joined if need be, like \"200ms\", \"30s\" \
                      or \"1m30s\"";

/// A parsed literal, in nanoseconds (saturating at `u128::MAX`, checked against `Duration::MAX`).
pub(crate) fn parse(text: &str) -> Result<u128, String> {
    let total = strict(text.trim()).map_err(|()| diagnose(text))?;
    // Duration::MAX is u64::MAX seconds and 999_999_999 ns.
    let max = u128::from(u64::MAX) * 1_000_000_000 + 999_999_999;
    if total > max {
        return Err(format!("`{text}` is longer than `Duration::MAX`"));
    }
    Ok(total)
}

/// The length of the longest start of `text` whose chars are all `what`.
///
/// One function for every predicate: `trim_start_matches` compiles its searcher again for each
/// closure.
fn prefix_len(text: &str, what: fn(char) -> bool) -> usize {
    text.find(|c| !what(c)).unwrap_or(text.len())
}

/// The literal as the macro accepts it: `Err` for anything else, including an overflow.
fn strict(text: &str) -> Result<u128, ()> {
    if text.is_empty() {
        return Err(());
    }
    let mut total: u128 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = prefix_len(rest, |c| c.is_ascii_digit());
        let number: u128 = rest[..digits].parse().map_err(|_| ())?;
        rest = &rest[digits..];
        let unit_len = prefix_len(rest, char::is_alphabetic);
        let scale = unit(&rest[..unit_len]).ok_or(())?;
        rest = &rest[unit_len..];
        total = number
            .checked_mul(scale)
            .and_then(|n| total.checked_add(n))
            .ok_or(())?;
    }
    Ok(total)
}

/// Nanoseconds in one of the units a literal may use.
fn unit(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// Nanoseconds in a unit spelt as a word (or a unit this syntax lacks, days).
fn word_unit(word: &str) -> Option<u128> {
    let word = word.to_lowercase();
    let word = word
        .strip_suffix('s')
        .filter(|w| w.len() > 1)
        .unwrap_or(&word);
    Some(match word {
        "nano" | "nanosecond" | "nsec" => 1,
        "micro" | "microsecond" | "usec" => 1_000,
        "milli" | "millisecond" | "msec" => 1_000_000,
        "sec" | "second" => 1_000_000_000,
        "min" | "minute" => 60_000_000_000,
        "hr" | "hour" => 3_600_000_000_000,
        "d" | "day" => 86_400_000_000_000,
        _ => return None,
    })
}

/// Why `text` is not a literal, and what to write instead where that can be worked out.
fn diagnose(text: &str) -> String {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return format!("empty duration: {SYNTAX}");
    }
    let mut faults: Vec<String> = Vec::new();
    let mut fault = |f: String| {
        if !faults.contains(&f) {
            faults.push(f);
        }
    };
    // Read it leniently: spaces, fractions and units spelt as words allowed.
    //
    // That says which of them it has, and writes the literal it means.
    let mut total: Option<u128> = Some(0);
    let mut written = Some(String::new());
    let mut rest = trimmed;
    if trimmed.contains(char::is_whitespace) {
        fault("a space".into());
    }
    while !rest.is_empty() {
        rest = rest.trim_start();
        let number_len = prefix_len(rest, |c| c.is_ascii_digit() || c == '.');
        let number = &rest[..number_len];
        rest = rest[number_len..].trim_start();
        let unit_len = prefix_len(rest, char::is_alphabetic);
        let word = &rest[..unit_len];
        rest = &rest[unit_len..];
        if number.is_empty() || number.starts_with('.') || number.ends_with('.') {
            total = None;
            if number.is_empty() && word.is_empty() {
                // A sign, a comma: nothing more is read.
                let stray: String = rest.chars().take(1).collect();
                fault(format!("`{stray}` where a number should be"));
                break;
            }
            let what = if number.is_empty() { word } else { number };
            fault(format!("`{what}` where a number should be"));
            continue;
        }
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if fraction.contains('.') {
            fault(format!("`{number}` where a number should be"));
            total = None;
            continue;
        }
        if !fraction.is_empty() {
            fault(format!("a fraction (`{number}`)"));
        }
        let scale = match (unit(word), word_unit(word)) {
            (Some(scale), _) => Some(scale),
            (None, Some(scale)) => {
                let days = word_unit(word) == word_unit("day");
                fault(if days {
                    format!("days, which have no unit here (`{word}`)")
                } else {
                    format!("a word for a unit (`{word}`)")
                });
                Some(scale)
            }
            (None, None) if word.is_empty() => {
                fault(format!("a number without a unit (`{number}`)"));
                None
            }
            (None, None) => {
                fault(format!("a unit it does not know (`{word}`)"));
                None
            }
        };
        let part = scale.and_then(|scale| {
            let whole: u128 = whole.parse().ok()?;
            let digits = u32::try_from(fraction.len()).ok()?;
            let fraction: u128 = if fraction.is_empty() {
                0
            } else {
                fraction.parse().ok()?
            };
            let ten = 10u128.checked_pow(digits)?;
            // A fraction is written in a smaller unit only when it is a whole number of ns.
            let part = fraction.checked_mul(scale)?;
            (part % ten == 0).then_some(())?;
            whole.checked_mul(scale)?.checked_add(part / ten)
        });
        // Each part as it should be written.
        //
        // Its own number and unit where it has them: `1m 30s` is `1m30s`.
        //
        // Else in the largest unit that holds it: `1.5s` is `1500ms`.
        written = written.zip(part).map(|(mut written, nanos)| {
            match unit(word) {
                Some(_) if fraction.is_empty() => written.push_str(&format!("{whole}{word}")),
                _ => written.push_str(&show(nanos)),
            }
            written
        });
        total = total
            .zip(part)
            .and_then(|(total, part)| total.checked_add(part));
    }
    let faults = match faults.as_slice() {
        [] => return format!("`{text}` is too long a duration"),
        [one] => one.clone(),
        [init @ .., last] => {
            let mut list = String::new();
            for (i, fault) in init.iter().enumerate() {
                if i > 0 {
                    list.push_str(", ");
                }
                list.push_str(fault);
            }
            format!("{list}, and {last}")
        }
    };
    match total.and(written) {
        Some(written) => {
            format!("`{text}` is not a duration literal: it has {faults}; write \"{written}\" ({SYNTAX})")
        }
        None => format!("`{text}` is not a duration literal: it has {faults}; {SYNTAX}"),
    }
}

/// How a duration is shown back in messages: the largest unit that divides it.
pub(crate) fn show(nanos: u128) -> String {
    for (scale, unit) in [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ] {
        if nanos != 0 && nanos % scale == 0 {
            return format!("{}{unit}", nanos / scale);
        }
    }
    format!("{nanos}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_sums() {
        assert_eq!(parse("200ms"), Ok(200_000_000));
        assert_eq!(parse("1m30s"), Ok(90_000_000_000));
        assert_eq!(parse("0ns"), Ok(0));
        assert_eq!(parse("5µs"), Ok(5_000));
        assert_eq!(parse("1h"), Ok(3_600_000_000_000));
    }

    #[test]
    fn rejects_what_is_not_a_duration() {
        for bad in [
            "",
            "ms",
            "200",
            "1.5s",
            "10 ms",
            "3d",
            "-1s",
            "99999999999999999999999h",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn says_what_is_wrong_and_what_to_write() {
        for (bad, fault, write) in [
            (
                "10 seconds",
                "a space, and a word for a unit (`seconds`)",
                "\"10s\"",
            ),
            ("1.5s", "a fraction (`1.5`)", "\"1500ms\""),
            ("10 s", "a space", "\"10s\""),
            (
                "200",
                "a number without a unit (`200`)",
                "a duration literal is",
            ),
            ("2 mins", "a word for a unit (`mins`)", "\"2m\""),
            ("3d", "days, which have no unit here (`d`)", "\"72h\""),
            ("1m 30s", "a space", "\"1m30s\""),
            (
                "1 parsec",
                "a unit it does not know (`parsec`)",
                "a duration literal is",
            ),
            (
                "-1s",
                "`-` where a number should be",
                "a duration literal is",
            ),
        ] {
            let msg = parse(bad).unwrap_err();
            assert!(msg.contains(fault), "{bad:?}: {msg}");
            assert!(msg.contains(write), "{bad:?}: {msg}");
        }
    }

    #[test]
    fn shows_the_largest_unit() {
        assert_eq!(show(200_000_000), "200ms");
        assert_eq!(show(30_000_000_000), "30s");
        assert_eq!(show(90_000_000_000), "90s");
        assert_eq!(show(0), "0ns");
    }
}
