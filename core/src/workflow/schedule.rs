//! SCHEDULE triggers: a five-field cron expression read in an IANA time zone.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::Cron;

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
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = after.with_timezone(&self.tz);
        self.cron
            .find_next_occurrence(&local, false)
            .ok()
            .map(|at| at.with_timezone(&Utc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

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
