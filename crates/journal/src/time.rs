//! RFC 3339 timestamps without a date-time dependency: the journal's own (milliseconds) and the
//! second-precision ones of signed statements (expiries, decision times).

use std::time::{SystemTime, UNIX_EPOCH};

/// The current UTC time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub(crate) fn rfc3339_now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339_millis(since.as_millis())
}

/// Milliseconds since the Unix epoch as RFC 3339 UTC.
fn rfc3339_millis(millis: u128) -> String {
    let seconds = rfc3339(u64::try_from(millis / 1000).unwrap_or(u64::MAX));
    let whole = seconds.trim_end_matches('Z');
    format!("{whole}.{:03}Z", millis % 1000)
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The latest time the four-digit year of RFC 3339 can say: 9999-12-31T23:59:59Z.
pub const MAX_RFC3339_SECS: u64 = 253_402_300_799;

/// `YYYY-MM-DDTHH:MM:SSZ` for `secs` after the Unix epoch; a time past
/// [`MAX_RFC3339_SECS`] is written as that one.
pub fn rfc3339(secs: u64) -> String {
    let secs = secs.min(MAX_RFC3339_SECS);
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let of_day = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// Seconds since the Unix epoch of `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (the fraction dropped).
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let digits = |from: usize, to: usize| -> Option<i64> {
        let part = text.get(from..to)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let fixed = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if bytes.len() < 20 || fixed.iter().any(|&(i, c)| bytes[i] != c) {
        return None;
    }
    let tail = text.get(19..)?;
    let fraction = tail.strip_suffix('Z')?;
    if !(fraction.is_empty()
        || fraction.len() > 1
            && fraction.starts_with('.')
            && fraction[1..].bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 7)?, digits(8, 10)?);
    let (hour, minute, second) = (digits(11, 13)?, digits(14, 16)?, digits(17, 19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days
        .checked_mul(86_400)?
        .checked_add(hour * 3600 + minute * 60 + second)?;
    u64::try_from(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::{MAX_RFC3339_SECS, parse_rfc3339, rfc3339};

    #[test]
    fn formats_known_instants() {
        assert_eq!(super::rfc3339_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            super::rfc3339_millis(951_782_400_123),
            "2000-02-29T00:00:00.123Z"
        );
        assert_eq!(
            super::rfc3339_millis(1_796_083_199_999),
            "2026-11-30T23:59:59.999Z"
        );
    }

    #[test]
    fn times_round_trip() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        for secs in [0, 951_782_400, 1_798_761_599, 4_102_444_800] {
            assert_eq!(parse_rfc3339(&rfc3339(secs)), Some(secs));
        }
        assert_eq!(
            parse_rfc3339("2026-12-02T16:05:00.250Z"),
            Some(1_796_227_500)
        );
        for bad in [
            "2026-12-02T16:05:00",
            "2026-13-02T16:05:00Z",
            "2026-12-02 16:05:00Z",
            "x",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn times_past_year_9999_are_written_as_its_last_second() {
        assert_eq!(rfc3339(MAX_RFC3339_SECS), "9999-12-31T23:59:59Z");
        for secs in [
            MAX_RFC3339_SECS + 1,
            1_000_000_000_000 + 1_800_000_000,
            u64::MAX,
        ] {
            let text = rfc3339(secs);
            assert_eq!(text, "9999-12-31T23:59:59Z");
            assert_eq!(parse_rfc3339(&text), Some(MAX_RFC3339_SECS));
        }
        assert_eq!(super::rfc3339_millis(u128::MAX), "9999-12-31T23:59:59.455Z");
    }

    #[test]
    fn any_text_is_read_without_a_panic() {
        for text in [
            "2026-12-02T16:05:\u{20ac}0Z",
            "2026-12-02T16:05:0\u{e9}Z",
            "\u{20ac}\u{20ac}\u{20ac}\u{20ac}\u{20ac}\u{20ac}\u{20ac}",
            "0000-01-01T00:00:00Z",
            "2026-12-02T16:05:00.Z",
        ] {
            assert_eq!(parse_rfc3339(text), None, "{text}");
        }
    }
}
