//! What counts as a timestamp string in segment conditions and in contact data.
//!
//! A deliberately narrow subset of RFC 3339 so that a database can recognise exactly the
//! same strings: match [`TIMESTAMP_PATTERN`], then require a real calendar date.

use std::sync::LazyLock;

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, Utc};
use regex::Regex;

/// The shape of a timestamp string: `YYYY-MM-DDTHH:MM:SS`, optional `.` and 1 to 6
/// fraction digits, then `Z` or an offset `±HH:MM` of at most 14:59 (`T` and `Z` may be
/// lower-case). Seconds stop at 59 (no leap seconds).
pub const TIMESTAMP_PATTERN: &str = r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:\.([0-9]{1,6}))?(?:([Zz])|([+-])(0[0-9]|1[0-4]):([0-5][0-9]))$";

static PATTERN: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(TIMESTAMP_PATTERN).ok());

/// Parses a timestamp string: it must match [`TIMESTAMP_PATTERN`] and name a real date
/// from year 0001 to 9999 (`2023-02-30T00:00:00Z` is not a timestamp). Microsecond
/// precision, so a database keeping microseconds stores the same instant.
pub fn parse_timestamp(raw: &str) -> Option<DateTime<Utc>> {
    let caps = PATTERN.as_ref()?.captures(raw)?;
    let num = |i: usize| caps.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
    let year = i32::try_from(num(1)?).ok().filter(|y| *y >= 1)?;
    let date = NaiveDate::from_ymd_opt(year, num(2)?, num(3)?)?;
    let micros = match caps.get(7) {
        Some(m) => format!("{:0<6}", m.as_str()).parse::<u32>().ok()?,
        None => 0,
    };
    let time = NaiveTime::from_hms_micro_opt(num(4)?, num(5)?, num(6)?, micros)?;
    let offset_seconds = if caps.get(8).is_some() {
        0
    } else {
        let sign = if caps.get(9)?.as_str() == "-" { -1 } else { 1 };
        sign * i32::try_from(num(10)? * 3600 + num(11)? * 60).ok()?
    };
    let offset = FixedOffset::east_opt(offset_seconds)?;
    let local = date.and_time(time).and_local_timezone(offset).single()?;
    Some(local.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn accepts_the_subset() {
        let utc = |s: &str| parse_timestamp(s).map(|t| t.to_rfc3339());
        assert_eq!(
            utc("2024-03-01T10:00:00Z").as_deref(),
            Some("2024-03-01T10:00:00+00:00")
        );
        assert_eq!(
            utc("2024-03-01t10:00:00z").as_deref(),
            Some("2024-03-01T10:00:00+00:00")
        );
        assert_eq!(
            utc("2024-03-01T10:00:00.5+02:00").as_deref(),
            Some("2024-03-01T08:00:00.500+00:00")
        );
        assert_eq!(
            utc("2024-03-01T00:30:00.123456-01:00").as_deref(),
            Some("2024-03-01T01:30:00.123456+00:00")
        );
    }

    #[test]
    fn refuses_everything_else() {
        for bad in [
            "",
            "2024-03-01",
            "2024-03-01 10:00:00Z",
            "2024-03-01T10:00:00",
            "2024-03-01T10:00Z",
            "2024-03-01T24:00:00Z",
            "2024-03-01T10:00:60Z",
            "2024-02-30T10:00:00Z",
            "0000-01-01T00:00:00Z",
            "2024-03-01T10:00:00.1234567Z",
            "2024-03-01T10:00:00+15:00",
            "2024-03-01T10:00:00+0200",
            " 2024-03-01T10:00:00Z",
            "2024-03-01T10:00:00Z ",
            "2024-13-01T10:00:00Z",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn never_panics(raw in "\\PC{0,40}") {
            let _ = parse_timestamp(&raw);
        }

        #[test]
        fn formatted_instants_parse_back(secs in -62_000_000_000i64..253_000_000_000i64, micros in 0u32..1_000_000) {
            if let Some(t) = DateTime::<Utc>::from_timestamp(secs, micros * 1000) {
                let text = t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
                if t.format("%Y").to_string().len() == 4 && !text.starts_with("0000") {
                    prop_assert_eq!(parse_timestamp(&text), Some(t));
                }
            }
        }
    }
}
