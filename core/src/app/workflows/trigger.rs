//! Reads a trigger kind and its configuration into a [`Trigger`], with field paths.

use serde_json::{Map, Value};

use super::TriggerType;
use crate::error::{Error, Result};
use crate::model::SegmentId;
use crate::validate::{join, Checker};
use crate::workflow::{Schedule, Trigger, MAX_EVENT_NAME_CHARS};

const PATH: &str = "triggerConfig";

/// The trigger of `kind` configured by `config`; an EVENT trigger's name may also come from
/// the `eventName` shorthand.
pub fn parse_trigger(
    kind: TriggerType,
    config: Option<&Map<String, Value>>,
    event_name: Option<&str>,
) -> Result<Trigger> {
    let empty = Map::new();
    let obj = config.unwrap_or(&empty);
    let mut c = Checker::new();
    let trigger = match kind {
        TriggerType::Manual => Trigger::Manual {},
        TriggerType::Event => {
            let from_config = c.line(obj, "eventName", PATH, false, MAX_EVENT_NAME_CHARS);
            let name = from_config.or(event_name.filter(|n| !n.trim().is_empty()));
            match name {
                Some(name) => {
                    if let Some((code, message)) =
                        crate::validate::line_problem("eventName", name, MAX_EVENT_NAME_CHARS)
                    {
                        c.fail("eventName", code, message);
                    }
                    Trigger::Event {
                        event_name: name.trim().to_string(),
                    }
                }
                None => {
                    if !c.has_errors() {
                        c.fail(
                            join(PATH, "eventName"),
                            "required",
                            "an EVENT trigger needs an eventName (triggerConfig.eventName or eventName)",
                        );
                    }
                    Trigger::Manual {}
                }
            }
        }
        TriggerType::Schedule => {
            let cron = c.line(obj, "cron", PATH, true, 255).unwrap_or_default();
            let timezone = c.line(obj, "timezone", PATH, false, 64).map(str::to_string);
            let segment_id = c
                .line(obj, "segmentId", PATH, true, 255)
                .unwrap_or_default();
            if !cron.is_empty() {
                match Schedule::parse(cron, timezone.as_deref()) {
                    Err(crate::workflow::ScheduleError::TimeZone(_)) => c.fail(
                        join(PATH, "timezone"),
                        "invalid_timezone",
                        "timezone must be an IANA time zone name such as Europe/Berlin",
                    ),
                    Err(e) => c.fail(join(PATH, "cron"), "invalid_cron", e.to_string()),
                    Ok(_) => {}
                }
            }
            Trigger::Schedule {
                cron: cron.to_string(),
                timezone,
                segment_id: SegmentId::from(segment_id),
            }
        }
    };
    c.finish()?;
    Ok(trigger)
}

/// The kind of a trigger.
pub fn trigger_type(trigger: &Trigger) -> TriggerType {
    match trigger {
        Trigger::Event { .. } => TriggerType::Event,
        Trigger::Manual {} => TriggerType::Manual,
        Trigger::Schedule { .. } => TriggerType::Schedule,
    }
}

/// The field error of a SCHEDULE trigger whose segment does not exist.
pub fn unknown_segment() -> Error {
    Error::field(
        join(PATH, "segmentId"),
        "not_found",
        "no segment with this id in the workspace",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn event_name_comes_from_config_or_shorthand() {
        assert_eq!(
            parse_trigger(TriggerType::Event, None, Some("signup")).ok(),
            Some(Trigger::Event {
                event_name: "signup".into()
            })
        );
        let config = obj(json!({"eventName": "paid"}));
        assert_eq!(
            parse_trigger(TriggerType::Event, Some(&config), Some("ignored")).ok(),
            Some(Trigger::Event {
                event_name: "paid".into()
            })
        );
        assert!(matches!(
            parse_trigger(TriggerType::Event, None, None),
            Err(Error::Validation(e)) if e[0].field == "triggerConfig.eventName"
        ));
    }

    #[test]
    fn schedule_config_is_checked_field_by_field() {
        let bad = obj(json!({"cron": "0 0 0 * * *", "timezone": "Nowhere/City"}));
        let fields: Vec<String> = match parse_trigger(TriggerType::Schedule, Some(&bad), None) {
            Err(Error::Validation(e)) => e.into_iter().map(|e| e.field).collect(),
            other => panic!("expected validation error, got {other:?}"),
        };
        assert_eq!(fields, ["triggerConfig.segmentId", "triggerConfig.cron"]);
        let good = obj(json!({"cron": "0 9 * * *", "timezone": "Europe/Paris", "segmentId": "s1"}));
        assert!(parse_trigger(TriggerType::Schedule, Some(&good), None).is_ok());
    }
}
