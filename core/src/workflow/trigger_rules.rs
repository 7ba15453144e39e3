//! The rules a typed [`Trigger`] must meet: a one-line event name; a five-field cron in a
//! known IANA time zone over a named segment. Each broken rule is reported at its
//! `triggerConfig.*` path. (Whether the segment exists is the use case's to check.)

use super::config::{Problems, MAX_EVENT_NAME_CHARS};
use super::{Schedule, ScheduleError, Trigger};
use crate::error::{Error, FieldError, Result};
use crate::validate::join;

/// Longest cron expression, in characters.
pub const MAX_CRON_CHARS: usize = 255;
/// Longest time zone name, in characters.
pub const MAX_TIMEZONE_CHARS: usize = 64;
/// Longest segment id a SCHEDULE trigger names, in characters.
pub const MAX_SEGMENT_ID_CHARS: usize = 255;

const PATH: &str = "triggerConfig";

/// Refuses a trigger that breaks a rule of its kind, listing every failing field.
pub fn check_trigger(trigger: &Trigger) -> Result<()> {
    let problems = trigger_problems(trigger);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Validation(problems))
    }
}

/// Every rule `trigger` breaks, each at its path; empty when it is valid.
pub fn trigger_problems(trigger: &Trigger) -> Vec<FieldError> {
    let mut p = Problems::default();
    match trigger {
        Trigger::Manual {} => {}
        Trigger::Event { event_name } => {
            p.line(PATH, "eventName", event_name, MAX_EVENT_NAME_CHARS, true);
        }
        Trigger::Schedule {
            cron,
            timezone,
            segment_id,
        } => {
            let cron_ok = p.line(PATH, "cron", cron, MAX_CRON_CHARS, true);
            let tz_ok = timezone
                .as_deref()
                .is_none_or(|tz| p.line(PATH, "timezone", tz, MAX_TIMEZONE_CHARS, false));
            p.line(
                PATH,
                "segmentId",
                segment_id.as_str(),
                MAX_SEGMENT_ID_CHARS,
                true,
            );
            if cron_ok && tz_ok {
                match Schedule::parse(cron, timezone.as_deref()) {
                    Err(ScheduleError::TimeZone(_)) => p.fail(
                        join(PATH, "timezone"),
                        "invalid_timezone",
                        "timezone must be an IANA time zone name such as Europe/Berlin",
                    ),
                    Err(e) => p.fail(join(PATH, "cron"), "invalid_cron", e.to_string()),
                    Ok(_) => {}
                }
            }
        }
    }
    p.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SegmentId;

    fn fields(trigger: &Trigger) -> Vec<String> {
        trigger_problems(trigger)
            .into_iter()
            .map(|e| e.field)
            .collect()
    }

    fn schedule(cron: &str, timezone: Option<&str>, segment: &str) -> Trigger {
        Trigger::Schedule {
            cron: cron.into(),
            timezone: timezone.map(str::to_string),
            segment_id: SegmentId::from(segment),
        }
    }

    #[test]
    fn valid_triggers_pass() {
        for trigger in [
            Trigger::Manual {},
            Trigger::Event {
                event_name: "signup".into(),
            },
            schedule("0 9 * * 1-5", Some("Europe/Paris"), "s1"),
            schedule("*/15 * * * *", None, "s1"),
        ] {
            assert_eq!(check_trigger(&trigger), Ok(()), "{trigger:?}");
        }
    }

    #[test]
    fn event_names_must_be_one_filled_line() {
        for name in ["", "  ", "sign\nup"] {
            let trigger = Trigger::Event {
                event_name: name.into(),
            };
            assert_eq!(fields(&trigger), ["triggerConfig.eventName"], "{name:?}");
        }
    }

    #[test]
    fn schedules_are_checked_field_by_field() {
        assert_eq!(
            fields(&schedule("0 0 0 * * *", Some("Nowhere/City"), "")),
            ["triggerConfig.segmentId", "triggerConfig.cron"]
        );
        let tz = trigger_problems(&schedule("0 9 * * *", Some("Nowhere/City"), "s1"));
        assert_eq!(tz.len(), 1);
        assert_eq!(
            (tz[0].field.as_str(), tz[0].code.as_str()),
            ("triggerConfig.timezone", "invalid_timezone")
        );
        assert_eq!(
            fields(&schedule("", Some(&"x".repeat(65)), "s1")),
            ["triggerConfig.cron", "triggerConfig.timezone"]
        );
    }
}
