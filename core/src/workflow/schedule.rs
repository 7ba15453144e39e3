//! SCHEDULE triggers: a five-field cron expression read in an IANA time zone.

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;

/// How many wall times `next_after` tries. One is enough in every zone (the second reading
/// of a repeated hour is after `after`); the bound keeps a surprising zone rule from looping.
const MAX_LOOKS: usize = 4;

/// Why a schedule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// Not a five-field cron expression.
    #[error("cron must have five fields (minute hour day-of-month month day-of-week): {0}")]
    Cron(String),
    /// Not an IANA time zone name.
    #[error("timezone must be an IANA time zone name such as Europe/Berlin, got {0:?}")]
    TimeZone(String),
}

/// A parsed schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
    tz: Tz,
}

impl Schedule {
    /// Parses a five-field `cron` in `timezone` (UTC when `None`).
    pub fn parse(cron: &str, timezone: Option<&str>) -> Result<Self, ScheduleError> {
        if cron.split_whitespace().count() != 5 {
            return Err(ScheduleError::Cron(format!(
                "{cron:?} does not have five fields"
            )));
        }
        let parsed = Cron::new(cron)
            .parse()
            .map_err(|e| ScheduleError::Cron(e.to_string()))?;
        let tz = match timezone {
            None => Tz::UTC,
            Some(name) => name
                .parse::<Tz>()
                .map_err(|_| ScheduleError::TimeZone(name.to_string()))?,
        };
        Ok(Self { cron: parsed, tz })
    }

    /// The first fire time strictly after `after`, or `None` when the expression never
    /// fires again (such as the 30th of February).
    ///
    /// When `after` is in the second pass of the hour repeated as clocks go back, a wall
    /// time later in that hour fires at its second reading (its first is past).
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let mut from = after.with_timezone(&self.tz);
        for _ in 0..MAX_LOOKS {
            let at = self.cron.find_next_occurrence(&from, false).ok()?;
            // croner reads an ambiguous wall time as its earlier instant, which is before
            // `after` when `after` is in the second reading; the later instant is due.
            let readings = [
                Some(at),
                self.tz.from_local_datetime(&at.naive_local()).latest(),
            ];
            if let Some(due) = readings
                .into_iter()
                .flatten()
                .map(|t| t.with_timezone(&Utc))
                .find(|t| *t > after)
            {
                return Some(due);
            }
            // Both readings past: look again from the next wall time.
            from = at;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_fields_in_a_time_zone() {
        let s = Schedule::parse("0 9 * * 1", Some("Europe/Berlin")).expect("valid");
        // Wednesday 2026-01-07 12:00 UTC: the next Monday 09:00 in Berlin is 08:00 UTC.
        let after = Utc
            .with_ymd_and_hms(2026, 1, 7, 12, 0, 0)
            .single()
            .expect("date");
        assert_eq!(
            s.next_after(after),
            Utc.with_ymd_and_hms(2026, 1, 12, 8, 0, 0).single()
        );
        let utc = Schedule::parse("*/15 * * * *", None).expect("valid");
        assert_eq!(
            utc.next_after(after),
            Utc.with_ymd_and_hms(2026, 1, 7, 12, 15, 0).single()
        );
    }

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
            .single()
            .expect("date")
    }

    #[test]
    fn in_the_second_reading_of_a_repeated_hour_the_next_quarter_is_after_it() {
        // Berlin goes back from 03:00 CEST to 02:00 CET at 01:00 UTC: 01:10 UTC reads 02:10
        // the second time. 02:15 CEST (00:15 UTC) is past; 02:15 CET (01:15 UTC) is next.
        let berlin = Schedule::parse("*/15 * * * *", Some("Europe/Berlin")).expect("valid");
        assert_eq!(
            berlin.next_after(utc(2026, 10, 25, 1, 10)),
            Some(utc(2026, 10, 25, 1, 15))
        );
    }

    #[test]
    fn in_the_second_reading_of_a_repeated_hour_a_daily_time_in_it_is_still_to_come() {
        // New York goes back from 02:00 EDT to 01:00 EST at 06:00 UTC: 06:10 UTC reads 01:10
        // EST, and 01:30 EST (06:30 UTC) is still to come; 01:30 EDT (05:30 UTC) is past.
        let ny = Schedule::parse("30 1 * * *", Some("America/New_York")).expect("valid");
        assert_eq!(
            ny.next_after(utc(2026, 11, 1, 6, 10)),
            Some(utc(2026, 11, 1, 6, 30))
        );
    }

    #[test]
    fn a_daily_time_in_a_repeated_hour_that_fired_at_its_first_reading_waits_a_day() {
        let ny = Schedule::parse("30 1 * * *", Some("America/New_York")).expect("valid");
        assert_eq!(
            ny.next_after(utc(2026, 11, 1, 5, 30)),
            Some(utc(2026, 11, 2, 6, 30))
        );
    }

    /// A UTC instant of 2026: (month, day, hour, minute).
    type At = (u32, u32, u32, u32);

    /// Zones and the UTC instants of their 2026 clock changes (both ways), including a
    /// half-hour change (Lord Howe) and changes at midnight (Havana).
    const CHANGES: &[(&str, [At; 2])] = &[
        ("Europe/Berlin", [(3, 29, 1, 0), (10, 25, 1, 0)]),
        ("America/New_York", [(3, 8, 7, 0), (11, 1, 6, 0)]),
        ("Australia/Sydney", [(4, 4, 16, 0), (10, 3, 16, 0)]),
        ("Australia/Lord_Howe", [(4, 4, 15, 0), (10, 3, 15, 30)]),
        ("America/Havana", [(3, 8, 5, 0), (11, 1, 5, 0)]),
    ];

    const CRONS: &[&str] = &[
        "* * * * *",
        "*/15 * * * *",
        "30 1 * * *",
        "30 2 * * *",
        "0 0 * * *",
        "45 1 * * 0",
        "0 9 * * 1",
    ];

    #[test]
    fn the_sampled_instants_are_clock_changes() {
        use chrono::Offset;
        for (zone, changes) in CHANGES {
            let tz: Tz = zone.parse().expect("zone");
            for &(mo, d, h, mi) in changes {
                let at = utc(2026, mo, d, h, mi);
                let offset = |t: DateTime<Utc>| t.with_timezone(&tz).offset().fix();
                assert_ne!(
                    offset(at - chrono::Duration::seconds(1)),
                    offset(at),
                    "{zone} {at}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_next_time_is_a_whole_minute_strictly_after(
            zone in 0..CHANGES.len(),
            change in 0..2usize,
            cron in 0..CRONS.len(),
            seconds in -4 * 3600i64..4 * 3600,
            nanos in proptest::prop_oneof![proptest::strategy::Just(0u32), 0..1_000_000_000u32],
        ) {
            let (name, changes) = CHANGES[zone];
            let (mo, d, h, mi) = changes[change];
            let after = utc(2026, mo, d, h, mi)
                + chrono::Duration::seconds(seconds)
                + chrono::Duration::nanoseconds(i64::from(nanos));
            let s = Schedule::parse(CRONS[cron], Some(name)).expect("valid");
            let next = s.next_after(after);
            proptest::prop_assert!(
                next.is_some_and(|n| n > after && n.timestamp() % 60 == 0 && n.timestamp_subsec_nanos() == 0),
                "{} in {name} after {after}: {next:?}",
                CRONS[cron]
            );
        }
    }

    #[test]
    fn other_shapes_are_refused() {
        assert!(matches!(
            Schedule::parse("0 0 9 * * 1", None),
            Err(ScheduleError::Cron(_))
        ));
        assert!(matches!(
            Schedule::parse("61 * * * *", None),
            Err(ScheduleError::Cron(_))
        ));
        assert!(matches!(
            Schedule::parse("* * * *", None),
            Err(ScheduleError::Cron(_))
        ));
        assert!(matches!(
            Schedule::parse("* * * * *", Some("Mars/Base")),
            Err(ScheduleError::TimeZone(_))
        ));
    }
}
