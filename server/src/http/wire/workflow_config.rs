//! Reads a step's JSON `config` (for its `type`) and a workflow's `triggerConfig` (for its
//! `triggerType`) into core's typed [`StepAction`] and [`Trigger`]. The shape is checked
//! here (types, required fields, enum names); every other rule is core's
//! ([`action_problems`], [`trigger_problems`]). When the shape fails, core's rules still run
//! over the fields that did read, so one answer lists every failing field at its path
//! (`config.amount`, `triggerConfig.cron`).

use posthorn_core::app::workflows::{trigger_type, TriggerType};
use posthorn_core::model::SegmentId;
use posthorn_core::segment::Operator;
use posthorn_core::validate::{join, line_problem, type_name, Checker};
use posthorn_core::workflow::{
    action_problems, trigger_problems, DelayUnit, Recipient, StepAction, StepCondition, StepType,
    SubscriptionAction, Trigger, CONDITION_OPERATOR_MESSAGE, MAX_DELAY_AMOUNT,
    MAX_EVENT_NAME_CHARS, MAX_WAIT_TIMEOUT_SECS,
};
use posthorn_core::{Error, FieldError};
use serde_json::{Map, Value};

const CONFIG: &str = "config";
const TRIGGER_CONFIG: &str = "triggerConfig";

/// The typed action of a step of `kind` configured by `config` (absent or `null` reads as
/// `{}`).
pub fn read_action(kind: StepType, config: Option<&Value>) -> Result<StepAction, Error> {
    let empty = Map::new();
    let obj = match config {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(Error::field(
                CONFIG,
                "invalid_type",
                format!("config must be an object, got {}", type_name(other)),
            ))
        }
    };
    let mut c = Checker::new();
    let action =
        match kind {
            StepType::Trigger => StepAction::Trigger {
                event_name: text(&mut c, obj, "eventName", false),
            },
            StepType::SendEmail => StepAction::SendEmail {
                recipient: recipient(&mut c, obj),
            },
            StepType::Delay => {
                StepAction::Delay {
                    amount: int(&mut c, obj, "amount", true, MAX_DELAY_AMOUNT).unwrap_or(1),
                    unit: enum_field(&mut c, obj, "unit", true, "minutes, hours or days", |s| {
                        match s {
                            "minutes" => Some(DelayUnit::Minutes),
                            "hours" => Some(DelayUnit::Hours),
                            "days" => Some(DelayUnit::Days),
                            _ => None,
                        }
                    })
                    .unwrap_or(DelayUnit::Minutes),
                }
            }
            StepType::WaitForEvent => StepAction::WaitForEvent {
                event_name: text(&mut c, obj, "eventName", true).unwrap_or_default(),
                timeout: int(&mut c, obj, "timeout", false, MAX_WAIT_TIMEOUT_SECS),
            },
            StepType::Condition => StepAction::Condition(condition(&mut c, obj)),
            StepType::UpdateContact => StepAction::UpdateContact {
                updates: c
                    .object(obj, "updates", CONFIG, false)
                    .cloned()
                    .unwrap_or_default(),
                subscription_action: enum_field(
                    &mut c,
                    obj,
                    "subscriptionAction",
                    false,
                    "none, subscribe or unsubscribe",
                    |s| match s {
                        "none" => Some(SubscriptionAction::None),
                        "subscribe" => Some(SubscriptionAction::Subscribe),
                        "unsubscribe" => Some(SubscriptionAction::Unsubscribe),
                        _ => None,
                    },
                )
                .unwrap_or_default(),
            },
            StepType::Webhook => StepAction::Webhook {
                url: text(&mut c, obj, "url", true).unwrap_or_default(),
                method: text(&mut c, obj, "method", false).map(|m| m.to_ascii_uppercase()),
                headers: c
                    .object(obj, "headers", CONFIG, false)
                    .cloned()
                    .unwrap_or_default(),
                body: obj.get("body").filter(|v| !v.is_null()).cloned(),
            },
            StepType::Exit => StepAction::Exit {
                reason: text(&mut c, obj, "reason", false),
            },
        };
    finish(c, action, action_problems)
}

/// The trigger of `kind` configured by `config`; an EVENT trigger's name may also come from
/// the `eventName` shorthand of `POST /workflows`.
pub fn read_trigger(
    kind: TriggerType,
    config: Option<&Map<String, Value>>,
    event_name: Option<&str>,
) -> Result<Trigger, Error> {
    let empty = Map::new();
    let obj = config.unwrap_or(&empty);
    let mut c = Checker::new();
    let trigger = match kind {
        TriggerType::Manual => Trigger::Manual {},
        TriggerType::Event => {
            let from_config = c
                .string(obj, "eventName", TRIGGER_CONFIG, false)
                .filter(|n| !n.trim().is_empty());
            let shorthand = event_name.filter(|n| !n.trim().is_empty());
            if from_config.is_none() {
                if let Some((code, message)) =
                    shorthand.and_then(|n| line_problem("eventName", n, MAX_EVENT_NAME_CHARS))
                {
                    // The name is the trigger's only field; nothing else to report.
                    return Err(Error::field("eventName", code, message));
                }
            }
            let name = from_config.or(shorthand);
            if name.is_none() && !c.has_errors() {
                c.fail(
                    join(TRIGGER_CONFIG, "eventName"),
                    "required",
                    "an EVENT trigger needs an eventName (triggerConfig.eventName or eventName)",
                );
            }
            Trigger::Event {
                event_name: name.map(|n| n.trim().to_string()).unwrap_or_default(),
            }
        }
        TriggerType::Schedule => Trigger::Schedule {
            cron: trigger_text(&mut c, obj, "cron", true).unwrap_or_default(),
            timezone: trigger_text(&mut c, obj, "timezone", false),
            segment_id: SegmentId::from(
                trigger_text(&mut c, obj, "segmentId", true).unwrap_or_default(),
            ),
        },
    };
    finish(c, trigger, trigger_problems)
}

/// The trigger a PATCH asks for, given the stored one: `triggerType` alone keeps the stored
/// configuration when the kind is unchanged; `triggerConfig` alone is read for the stored
/// kind. `None` when the PATCH leaves the trigger alone.
pub fn patched_trigger(
    kind: Option<TriggerType>,
    config: Option<&Map<String, Value>>,
    current: &Trigger,
) -> Result<Option<Trigger>, Error> {
    let current_kind = trigger_type(current);
    match (kind, config) {
        (None, None) => Ok(None),
        (kind, Some(config)) => {
            read_trigger(kind.unwrap_or(current_kind), Some(config), None).map(Some)
        }
        (Some(kind), None) if kind == current_kind => Ok(None),
        (Some(kind), None) => read_trigger(kind, None, None).map(Some),
    }
}

/// The shape errors, followed by core's verdict on what did read (placeholders stand in for
/// the fields that did not, whose errors are already listed).
fn finish<T>(c: Checker, value: T, rules: impl Fn(&T) -> Vec<FieldError>) -> Result<T, Error> {
    match c.finish() {
        // Core checks the typed value again in the use case; nothing to add here.
        Ok(()) => Ok(value),
        Err(Error::Validation(mut errors)) => {
            for problem in rules(&value) {
                if !errors.iter().any(|e| e.field == problem.field) {
                    errors.push(problem);
                }
            }
            Err(Error::Validation(errors))
        }
        Err(other) => Err(other),
    }
}

/// A string field of `config` (rules on its content are core's).
fn text(c: &mut Checker, obj: &Map<String, Value>, key: &str, required: bool) -> Option<String> {
    c.string(obj, key, CONFIG, required).map(str::to_string)
}

/// A string field of `triggerConfig`.
fn trigger_text(
    c: &mut Checker,
    obj: &Map<String, Value>,
    key: &str,
    required: bool,
) -> Option<String> {
    c.string(obj, key, TRIGGER_CONFIG, required)
        .map(str::to_string)
}

/// A whole number of `config` that fits `T`; `max` only names the range in the message.
fn int<T: TryFrom<i64>>(
    c: &mut Checker,
    obj: &Map<String, Value>,
    key: &str,
    required: bool,
    max: i64,
) -> Option<T> {
    let field = join(CONFIG, key);
    let value = c.value(obj, key, CONFIG, required)?;
    // JSON has one number type: `5.0` is the integer 5, as JSON Schema says.
    let whole = value
        .as_f64()
        .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
        .map(|f| f as i64);
    let Some(n) = value.as_i64().or(whole) else {
        let message = match value {
            // A whole number too large for i64 is a range problem, not a type problem.
            Value::Number(n) if n.is_u64() => {
                c.fail(
                    &field,
                    "out_of_range",
                    format!("{key} must be between 1 and {max}"),
                );
                return None;
            }
            other => format!("{key} must be an integer, got {}", type_name(other)),
        };
        c.fail(field, "invalid_type", message);
        return None;
    };
    match T::try_from(n) {
        Ok(v) => Some(v),
        Err(_) => {
            c.fail(
                field,
                "out_of_range",
                format!("{key} must be between 1 and {max}"),
            );
            None
        }
    }
}

/// A string field of `config` that must be one of a few names.
fn enum_field<T>(
    c: &mut Checker,
    obj: &Map<String, Value>,
    key: &str,
    required: bool,
    expected: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    let raw = c.string(obj, key, CONFIG, required)?;
    let parsed = parse(raw);
    if parsed.is_none() {
        c.fail(
            join(CONFIG, key),
            "invalid_enum",
            format!("{key} must be {expected}"),
        );
    }
    parsed
}

fn recipient(c: &mut Checker, obj: &Map<String, Value>) -> Recipient {
    let path = join(CONFIG, "recipient");
    let Some(r) = c.object(obj, "recipient", CONFIG, false) else {
        return Recipient::Contact;
    };
    match c.string(r, "type", &path, false).unwrap_or("CONTACT") {
        "CONTACT" => Recipient::Contact,
        "CUSTOM" => Recipient::Custom {
            email: c
                .string(r, "email", &path, true)
                .unwrap_or_default()
                .to_string(),
        },
        _ => {
            c.fail(
                join(&path, "type"),
                "invalid_enum",
                "type must be CONTACT or CUSTOM",
            );
            Recipient::Contact
        }
    }
}

fn condition(c: &mut Checker, obj: &Map<String, Value>) -> StepCondition {
    let field = text(c, obj, "field", true).unwrap_or_default();
    let operator = c
        .string(obj, "operator", CONFIG, true)
        .and_then(|raw| {
            let op = serde_json::from_value::<Operator>(Value::String(raw.to_string())).ok();
            if op.is_none() {
                c.fail(
                    join(CONFIG, "operator"),
                    "invalid_enum",
                    CONDITION_OPERATOR_MESSAGE,
                );
            }
            op
        })
        // Needs no operand, so a missing one is not reported beside the bad operator.
        .unwrap_or(Operator::Exists);
    StepCondition {
        field,
        operator,
        value: obj.get("value").filter(|v| !v.is_null()).cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields<T: std::fmt::Debug>(result: Result<T, Error>) -> Vec<String> {
        match result {
            Err(Error::Validation(errors)) => errors.into_iter().map(|e| e.field).collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_whole_float_is_an_integer_and_a_fraction_is_not() {
        let whole = read_action(
            StepType::Delay,
            Some(&json!({"amount": 3.0, "unit": "hours"})),
        );
        assert_eq!(
            whole.ok(),
            Some(StepAction::Delay {
                amount: 3,
                unit: DelayUnit::Hours
            })
        );
        let fraction = read_action(
            StepType::Delay,
            Some(&json!({"amount": 2.5, "unit": "hours"})),
        );
        assert_eq!(fields(fraction), ["config.amount"]);
    }

    #[test]
    fn each_type_reads_its_config() {
        assert_eq!(
            read_action(
                StepType::Delay,
                Some(&json!({"amount": 3, "unit": "hours"}))
            )
            .ok(),
            Some(StepAction::Delay {
                amount: 3,
                unit: DelayUnit::Hours
            })
        );
        assert_eq!(
            read_action(
                StepType::WaitForEvent,
                Some(&json!({"eventName": "paid", "timeout": 60}))
            )
            .ok(),
            Some(StepAction::WaitForEvent {
                event_name: "paid".into(),
                timeout: Some(60)
            })
        );
        assert_eq!(
            read_action(StepType::SendEmail, Some(&Value::Null)).ok(),
            Some(StepAction::SendEmail {
                recipient: Recipient::Contact
            })
        );
        assert!(matches!(
            read_action(StepType::Webhook, Some(&json!({"url": "https://h.example/{{event.id}}", "method": "put"}))),
            Ok(StepAction::Webhook { method: Some(m), .. }) if m == "PUT"
        ));
        assert!(read_action(StepType::Exit, None).is_ok());
    }

    #[test]
    fn shape_and_rule_failures_are_reported_together() {
        // `unit` is a shape failure (wire), `amount: 0` a rule failure (core).
        assert_eq!(
            fields(read_action(
                StepType::Delay,
                Some(&json!({"amount": 0, "unit": "weeks"}))
            )),
            ["config.unit", "config.amount"]
        );
        assert_eq!(
            fields(read_action(
                StepType::Delay,
                Some(&json!({"amount": -1, "unit": "days"}))
            )),
            ["config.amount"]
        );
        assert_eq!(
            fields(read_action(
                StepType::Delay,
                Some(&json!({"amount": "2", "unit": 3}))
            )),
            ["config.amount", "config.unit"]
        );
        assert_eq!(
            fields(read_action(StepType::WaitForEvent, Some(&json!({})))),
            ["config.eventName"]
        );
        assert_eq!(
            fields(read_action(
                StepType::Condition,
                Some(&json!({"field": "foo", "operator": "sometimes"}))
            )),
            ["config.operator", "config.field"]
        );
        assert_eq!(
            fields(read_action(
                StepType::SendEmail,
                Some(&json!({"recipient": {"type": "CUSTOM"}}))
            )),
            ["config.recipient.email"]
        );
        assert_eq!(
            fields(read_action(StepType::Delay, Some(&json!([1])))),
            ["config"]
        );
    }

    #[test]
    fn event_name_comes_from_config_or_shorthand() {
        assert_eq!(
            read_trigger(TriggerType::Event, None, Some(" signup ")).ok(),
            Some(Trigger::Event {
                event_name: "signup".into()
            })
        );
        let config = obj(json!({"eventName": "paid"}));
        assert_eq!(
            read_trigger(TriggerType::Event, Some(&config), Some("ignored")).ok(),
            Some(Trigger::Event {
                event_name: "paid".into()
            })
        );
        assert_eq!(
            fields(read_trigger(TriggerType::Event, None, None)),
            ["triggerConfig.eventName"]
        );
        assert_eq!(
            fields(read_trigger(TriggerType::Event, None, Some("a\nb"))),
            ["eventName"]
        );
    }

    #[test]
    fn schedule_config_is_checked_field_by_field() {
        let bad = obj(json!({"cron": "0 0 0 * * *", "timezone": "Nowhere/City"}));
        assert_eq!(
            fields(read_trigger(TriggerType::Schedule, Some(&bad), None)),
            ["triggerConfig.segmentId", "triggerConfig.cron"]
        );
        let good = obj(json!({"cron": "0 9 * * *", "timezone": "Europe/Paris", "segmentId": "s1"}));
        assert!(read_trigger(TriggerType::Schedule, Some(&good), None).is_ok());
    }

    #[test]
    fn a_patch_keeps_or_replaces_the_trigger() {
        let current = Trigger::Event {
            event_name: "signup".into(),
        };
        assert_eq!(patched_trigger(None, None, &current), Ok(None));
        assert_eq!(
            patched_trigger(Some(TriggerType::Event), None, &current),
            Ok(None)
        );
        assert_eq!(
            patched_trigger(Some(TriggerType::Manual), None, &current),
            Ok(Some(Trigger::Manual {}))
        );
        let config = obj(json!({"eventName": "paid"}));
        assert_eq!(
            patched_trigger(None, Some(&config), &current),
            Ok(Some(Trigger::Event {
                event_name: "paid".into()
            }))
        );
        assert_eq!(
            fields(patched_trigger(Some(TriggerType::Schedule), None, &current)),
            ["triggerConfig.cron", "triggerConfig.segmentId"]
        );
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        const KEYS: [&str; 17] = [
            "amount",
            "unit",
            "eventName",
            "timeout",
            "field",
            "operator",
            "value",
            "recipient",
            "type",
            "email",
            "updates",
            "subscriptionAction",
            "url",
            "method",
            "headers",
            "body",
            "reason",
        ];
        const KINDS: [StepType; 8] = [
            StepType::Trigger,
            StepType::SendEmail,
            StepType::Delay,
            StepType::WaitForEvent,
            StepType::Condition,
            StepType::UpdateContact,
            StepType::Webhook,
            StepType::Exit,
        ];

        /// JSON shaped like step configs: the real keys, plausible and wrong values.
        fn config() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<u64>().prop_map(Value::from),
                any::<f64>().prop_map(|f| json!(f)),
                prop::sample::select(vec![
                    "hours",
                    "days",
                    "weeks",
                    "CUSTOM",
                    "CONTACT",
                    "equals",
                    "within",
                    "exists",
                    "data.plan",
                    "event.x",
                    "https://h.example/{{event.id}}",
                    "ftp://x",
                    "put",
                    "TRACE",
                    "subscribe",
                    "{{ broken",
                    "a\nb",
                    "",
                    " ",
                ])
                .prop_map(Value::from),
                "\\PC{0,12}".prop_map(Value::from),
            ];
            leaf.prop_recursive(3, 24, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                    prop::collection::btree_map(prop::sample::select(KEYS.to_vec()), inner, 0..6)
                        .prop_map(|m| {
                            Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                        }),
                ]
            })
        }

        proptest! {
            /// Whatever the JSON, reading answers (no panic) with errors under `config`,
            /// and what reads is read again the same from its own JSON.
            #[test]
            fn configs_read_or_are_refused_under_config(
                kind in prop::sample::select(KINDS.to_vec()),
                value in config(),
            ) {
                match read_action(kind, Some(&value)) {
                    Ok(action) => {
                        prop_assert_eq!(action.step_type(), kind);
                        let shown = serde_json::to_value(&action)
                            .ok()
                            .and_then(|mut v| v.get_mut("config").map(Value::take))
                            .unwrap_or_else(|| json!({}));
                        prop_assert_eq!(read_action(kind, Some(&shown)), Ok(action));
                    }
                    Err(Error::Validation(errors)) => {
                        prop_assert!(!errors.is_empty());
                        for e in &errors {
                            prop_assert!(e.field == "config" || e.field.starts_with("config."), "{:?}", e);
                        }
                    }
                    Err(other) => prop_assert!(false, "unexpected {:?}", other),
                }
            }
        }
    }
}
