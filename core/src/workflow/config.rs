//! Reads a step's `config` for its `type` into a typed [`StepAction`], reporting every
//! failing field with its path (`config.amount`, `config.recipient.email`, ...).

use serde_json::{Map, Value};

use super::{DelayUnit, Recipient, StepAction, StepCondition, StepType, SubscriptionAction};
use crate::error::{Error, Result};
use crate::ports::WebhookMethod;
use crate::render;
use crate::segment::Operator;
use crate::validate::{join, line_problem, type_name, Checker};

/// Longest event name a step waits for or a trigger names, in characters.
pub const MAX_EVENT_NAME_CHARS: usize = 255;
/// Largest DELAY amount (about 27 years in days; a guard against overflow, not a policy).
pub const MAX_DELAY_AMOUNT: i64 = 10_000;
/// Longest WAIT_FOR_EVENT timeout in seconds (a year).
pub const MAX_WAIT_TIMEOUT_SECS: i64 = 366 * 24 * 3600;
/// Longest webhook URL template, in characters.
pub const MAX_URL_CHARS: usize = 2048;

const PATH: &str = "config";

/// The operators a CONDITION step can use: the value comparisons of the segment filters.
pub fn condition_operator_allowed(op: Operator) -> bool {
    use Operator as O;
    matches!(
        op,
        O::Equals
            | O::NotEquals
            | O::Contains
            | O::NotContains
            | O::GreaterThan
            | O::LessThan
            | O::GreaterThanOrEqual
            | O::LessThanOrEqual
            | O::Exists
            | O::NotExists
    )
}

/// Whether a CONDITION `field` names something a step can read.
pub fn condition_field_allowed(field: &str) -> bool {
    let keyed = |prefix: &str| {
        field
            .strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.split('.').all(|k| !k.is_empty()))
    };
    matches!(
        field,
        "email" | "subscribed" | "contact.email" | "contact.subscribed"
    ) || keyed("data.")
        || keyed("contact.data.")
        || keyed("event.")
}

/// The typed action of a step of `step_type` configured with `config` (`null` or absent
/// reads as `{}`).
pub fn parse_action(step_type: StepType, config: &Value) -> Result<StepAction> {
    let empty = Map::new();
    let obj = match config {
        Value::Null => &empty,
        Value::Object(m) => m,
        other => {
            return Err(Error::field(
                PATH,
                "invalid_type",
                format!("config must be an object, got {}", type_name(other)),
            ))
        }
    };
    let mut c = Checker::new();
    let action = match step_type {
        StepType::Trigger => StepAction::Trigger {
            event_name: c
                .line(obj, "eventName", PATH, false, MAX_EVENT_NAME_CHARS)
                .map(str::to_string),
        },
        StepType::SendEmail => StepAction::SendEmail {
            recipient: recipient(&mut c, obj),
        },
        StepType::Delay => {
            let amount = c.integer(obj, "amount", PATH, true, 1, MAX_DELAY_AMOUNT);
            let unit = enum_field(
                &mut c,
                obj,
                "unit",
                true,
                |s| match s {
                    "minutes" => Some(DelayUnit::Minutes),
                    "hours" => Some(DelayUnit::Hours),
                    "days" => Some(DelayUnit::Days),
                    _ => None,
                },
                "minutes, hours or days",
            );
            StepAction::Delay {
                amount: amount.and_then(|a| u32::try_from(a).ok()).unwrap_or(1),
                unit: unit.unwrap_or(DelayUnit::Minutes),
            }
        }
        StepType::WaitForEvent => StepAction::WaitForEvent {
            event_name: c
                .line(obj, "eventName", PATH, true, MAX_EVENT_NAME_CHARS)
                .map(str::to_string)
                .unwrap_or_default(),
            timeout: c
                .integer(obj, "timeout", PATH, false, 1, MAX_WAIT_TIMEOUT_SECS)
                .and_then(|t| u64::try_from(t).ok()),
        },
        StepType::Condition => StepAction::Condition(condition(&mut c, obj)),
        StepType::UpdateContact => {
            let updates = c.object(obj, "updates", PATH, false).cloned();
            let subscription_action = enum_field(
                &mut c,
                obj,
                "subscriptionAction",
                false,
                |s| match s {
                    "none" => Some(SubscriptionAction::None),
                    "subscribe" => Some(SubscriptionAction::Subscribe),
                    "unsubscribe" => Some(SubscriptionAction::Unsubscribe),
                    _ => None,
                },
                "none, subscribe or unsubscribe",
            );
            if let Some(updates) = &updates {
                check_templates(
                    &mut c,
                    &Value::Object(updates.clone()),
                    &join(PATH, "updates"),
                );
            }
            StepAction::UpdateContact {
                updates: updates.unwrap_or_default(),
                subscription_action: subscription_action.unwrap_or_default(),
            }
        }
        StepType::Webhook => webhook(&mut c, obj),
        StepType::Exit => StepAction::Exit {
            reason: c.line(obj, "reason", PATH, false, 1000).map(str::to_string),
        },
    };
    c.finish()?;
    Ok(action)
}

/// A string field that must be one of a few names.
fn enum_field<T>(
    c: &mut Checker,
    obj: &Map<String, Value>,
    key: &str,
    required: bool,
    parse: impl Fn(&str) -> Option<T>,
    expected: &str,
) -> Option<T> {
    let raw = c.string(obj, key, PATH, required)?;
    let parsed = parse(raw);
    if parsed.is_none() {
        c.fail(
            join(PATH, key),
            "invalid_enum",
            format!("{key} must be {expected}"),
        );
    }
    parsed
}

fn recipient(c: &mut Checker, obj: &Map<String, Value>) -> Recipient {
    let path = join(PATH, "recipient");
    let Some(r) = c.object(obj, "recipient", PATH, false) else {
        return Recipient::Contact;
    };
    let kind = c.string(r, "type", &path, false).unwrap_or("CONTACT");
    match kind {
        "CONTACT" => Recipient::Contact,
        "CUSTOM" => {
            let email = c.line(r, "email", &path, true, 320).unwrap_or_default();
            if let Err(e) = render::validate(email) {
                c.fail(join(&path, "email"), "invalid_template", e.to_string());
            }
            Recipient::Custom {
                email: email.to_string(),
            }
        }
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
    let field = c.line(obj, "field", PATH, true, 255).unwrap_or_default();
    if !field.is_empty() && !condition_field_allowed(field) {
        c.fail(
            join(PATH, "field"),
            "invalid_field",
            "field must be email, subscribed, contact.email, contact.subscribed, data.<key> or event.<key>",
        );
    }
    let operator = c
        .string(obj, "operator", PATH, true)
        .and_then(|raw| {
            let op = serde_json::from_value::<Operator>(Value::String(raw.to_string())).ok();
            if !op.is_some_and(condition_operator_allowed) {
                c.fail(
                    join(PATH, "operator"),
                    "invalid_enum",
                    "operator must be equals, notEquals, contains, notContains, greaterThan, lessThan, greaterThanOrEqual, lessThanOrEqual, exists or notExists",
                );
            }
            op
        })
        .unwrap_or(Operator::Exists);
    let value = obj.get("value").filter(|v| !v.is_null()).cloned();
    let needs_value = !matches!(operator, Operator::Exists | Operator::NotExists);
    if needs_value && value.is_none() && !c.has_errors() {
        c.fail(
            join(PATH, "value"),
            "required",
            "value is required for this operator",
        );
    }
    StepCondition {
        field: field.to_string(),
        operator,
        value,
    }
}

fn webhook(c: &mut Checker, obj: &Map<String, Value>) -> StepAction {
    let url = c
        .line(obj, "url", PATH, true, MAX_URL_CHARS)
        .unwrap_or_default();
    if !url.is_empty() {
        if let Some(problem) = super::webhook_url::url_template_problem(url) {
            c.fail(join(PATH, "url"), "invalid_url", problem);
        }
    }
    let method = c.string(obj, "method", PATH, false).map(str::to_string);
    if let Some(m) = &method {
        if let Err(e) = m.parse::<WebhookMethod>() {
            c.fail(join(PATH, "method"), "invalid_enum", e.to_string());
        }
    }
    let headers = c
        .object(obj, "headers", PATH, false)
        .cloned()
        .unwrap_or_default();
    let headers_path = join(PATH, "headers");
    for (name, value) in &headers {
        let field = join(&headers_path, name);
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            c.fail(
                &field,
                "invalid_header",
                "a header name is letters, digits and !#$%&'*+-.^_`|~",
            );
        }
        match value {
            Value::String(s) => {
                if let Some((code, message)) = line_problem(name, s, 8192) {
                    c.fail(&field, code, message);
                } else if let Err(e) = render::validate(s) {
                    c.fail(&field, "invalid_template", e.to_string());
                }
            }
            other => c.fail(
                &field,
                "invalid_type",
                format!("a header value must be a string, got {}", type_name(other)),
            ),
        }
    }
    let body = obj.get("body").filter(|v| !v.is_null()).cloned();
    if let Some(body) = &body {
        check_templates(c, body, &join(PATH, "body"));
    }
    StepAction::Webhook {
        url: url.to_string(),
        method: method.map(|m| m.to_ascii_uppercase()),
        headers,
        body,
    }
}

/// HTTP token characters (RFC 9110), the only ones allowed in a header name.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Records a template syntax error in any string inside `value`.
fn check_templates(c: &mut Checker, value: &Value, path: &str) {
    match value {
        Value::String(s) => {
            if let Err(e) = render::validate(s) {
                c.fail(path, "invalid_template", e.to_string());
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_templates(c, item, &join(path, &i.to_string()));
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                check_templates(c, v, &join(path, k));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(result: Result<StepAction>) -> Vec<String> {
        match result {
            Err(Error::Validation(errors)) => errors.into_iter().map(|e| e.field).collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn each_type_reads_its_config() {
        assert_eq!(
            parse_action(StepType::Delay, &json!({"amount": 3, "unit": "hours"})).ok(),
            Some(StepAction::Delay {
                amount: 3,
                unit: DelayUnit::Hours
            })
        );
        assert_eq!(
            parse_action(
                StepType::WaitForEvent,
                &json!({"eventName": "paid", "timeout": 60})
            )
            .ok(),
            Some(StepAction::WaitForEvent {
                event_name: "paid".into(),
                timeout: Some(60)
            })
        );
        assert!(matches!(
            parse_action(StepType::SendEmail, &Value::Null),
            Ok(StepAction::SendEmail {
                recipient: Recipient::Contact
            })
        ));
        assert!(matches!(
            parse_action(StepType::Webhook, &json!({"url": "https://h.example/{{event.id}}", "method": "put"})),
            Ok(StepAction::Webhook { method: Some(m), .. }) if m == "PUT"
        ));
        assert!(parse_action(StepType::Exit, &json!({})).is_ok());
    }

    #[test]
    fn invalid_fields_are_reported_with_their_paths() {
        assert_eq!(
            fields(parse_action(
                StepType::Delay,
                &json!({"amount": 0, "unit": "weeks"})
            )),
            ["config.amount", "config.unit"]
        );
        assert_eq!(
            fields(parse_action(StepType::WaitForEvent, &json!({}))),
            ["config.eventName"]
        );
        assert_eq!(
            fields(parse_action(
                StepType::Condition,
                &json!({"field": "foo", "operator": "within"})
            )),
            ["config.field", "config.operator"]
        );
        assert_eq!(
            fields(parse_action(
                StepType::Condition,
                &json!({"field": "data.plan", "operator": "equals"})
            )),
            ["config.value"]
        );
        assert_eq!(
            fields(parse_action(
                StepType::Webhook,
                &json!({"url": "ftp://x", "method": "TRACE", "headers": {"X-A": 1, "bad name": "v"}})
            )),
            [
                "config.url",
                "config.method",
                "config.headers.X-A",
                "config.headers.bad name"
            ]
        );
        assert_eq!(
            fields(parse_action(
                StepType::SendEmail,
                &json!({"recipient": {"type": "CUSTOM"}})
            )),
            ["config.recipient.email"]
        );
        assert_eq!(
            fields(parse_action(StepType::Delay, &json!([1]))),
            ["config"]
        );
    }
}
