//! Duration literals (`"200ms"`, `"1m30s"`), parsed at compile time.

/// A parsed literal, in nanoseconds (saturating at `u128::MAX`, checked against `Duration::MAX`).
pub(crate) fn parse(text: &str) -> Result<u128, String> {
    const HINT: &str = "write a whole number and a unit, like \"200ms\", \"30s\" or \"1m30s\" \
                        (units: ns, us, µs, ms, s, m, h)";
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("empty duration: {HINT}"));
    }
    let mut total: u128 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return Err(format!("`{text}` is not a duration: {HINT}"));
        }
        let number: u128 = rest[..digits]
            .parse()
            .map_err(|_| format!("`{text}` is too long a duration"))?;
        rest = &rest[digits..];
        let unit_len = rest.len() - rest.trim_start_matches(|c: char| c.is_alphabetic()).len();
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("`{text}` has a number without a unit: {HINT}")),
            other => return Err(format!("unknown unit `{other}` in `{text}`: {HINT}")),
        };
        total = number
            .checked_mul(scale)
            .and_then(|n| total.checked_add(n))
            .ok_or_else(|| format!("`{text}` is too long a duration"))?;
    }
    // Duration::MAX is u64::MAX seconds and 999_999_999 ns.
    let max = u128::from(u64::MAX) * 1_000_000_000 + 999_999_999;
    if total > max {
        return Err(format!("`{text}` is longer than `Duration::MAX`"));
    }
    Ok(total)
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
    fn shows_the_largest_unit() {
        assert_eq!(show(200_000_000), "200ms");
        assert_eq!(show(30_000_000_000), "30s");
        assert_eq!(show(90_000_000_000), "90s");
        assert_eq!(show(0), "0ns");
    }
}
