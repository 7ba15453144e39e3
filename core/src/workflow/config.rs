//! The rules a step's typed configuration must meet beyond its shape: ranges, the names a
//! condition can read, one-line texts, templates that compile, webhook URLs and headers.
//! Each broken rule is reported at its path (`config.amount`, `config.recipient.email`, ...),
//! the same paths the HTTP API shows.

use serde_json::Value;

use super::{Recipient, StepAction, StepCondition};
use crate::error::{Error, FieldError, Result};
use crate::ports::WebhookMethod;
use crate::render;
use crate::segment::{FieldKind, Operator};
use crate::validate::{join, line_problem, type_name};

/// Longest event name a step waits for or a trigger names, in characters.
pub const MAX_EVENT_NAME_CHARS: usize = 255;
/// Largest DELAY amount (about 27 years in days; a guard against overflow, not a policy).
pub const MAX_DELAY_AMOUNT: i64 = 10_000;
/// Longest WAIT_FOR_EVENT timeout in seconds (a year).
pub const MAX_WAIT_TIMEOUT_SECS: i64 = 366 * 24 * 3600;
/// Longest webhook URL template, in characters.
pub const MAX_URL_CHARS: usize = 2048;
/// Longest custom recipient address template, in characters.
pub const MAX_RECIPIENT_CHARS: usize = 320;
/// Longest EXIT reason, in characters.
pub const MAX_EXIT_REASON_CHARS: usize = 1000;
/// Longest CONDITION field name, in characters.
pub const MAX_CONDITION_FIELD_CHARS: usize = 255;
/// Longest webhook header value, in characters.
pub const MAX_HEADER_VALUE_CHARS: usize = 8192;
/// What a CONDITION operator outside [`condition_operator_allowed`] is told.
pub const CONDITION_OPERATOR_MESSAGE: &str = "operator must be equals, notEquals, contains, notContains, greaterThan, lessThan, greaterThanOrEqual, lessThanOrEqual, exists or notExists";

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

/// Refuses an action that breaks a rule of its kind, listing every failing field.
pub fn check_action(action: &StepAction) -> Result<()> {
    let problems = action_problems(action);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Validation(problems))
    }
}

/// Every rule `action` breaks, each at its path; empty when the action is valid.
pub fn action_problems(action: &StepAction) -> Vec<FieldError> {
    let mut p = Problems::default();
    match action {
        StepAction::Trigger { event_name } => {
            if let Some(name) = event_name {
                p.line(PATH, "eventName", name, MAX_EVENT_NAME_CHARS, false);
            }
        }
        StepAction::SendEmail { recipient } => {
            if let Recipient::Custom { email } = recipient {
                let path = join(PATH, "recipient");
                if p.line(&path, "email", email, MAX_RECIPIENT_CHARS, true) {
                    p.template(&join(&path, "email"), email);
                }
            }
        }
        StepAction::Delay { amount, .. } => {
            p.range(PATH, "amount", i64::from(*amount), MAX_DELAY_AMOUNT);
        }
        StepAction::WaitForEvent {
            event_name,
            timeout,
        } => {
            p.line(PATH, "eventName", event_name, MAX_EVENT_NAME_CHARS, true);
            if let Some(t) = timeout {
                let t = i64::try_from(*t).unwrap_or(i64::MAX);
                p.range(PATH, "timeout", t, MAX_WAIT_TIMEOUT_SECS);
            }
        }
        StepAction::Condition(condition) => condition_problems(&mut p, condition),
        // Data is merged as given; its string values are rendered when the step runs.
        StepAction::UpdateContact { .. } => {}
        StepAction::Webhook {
            url,
            method,
            headers,
            body,
        } => {
            if p.line(PATH, "url", url, MAX_URL_CHARS, true) {
                if let Some(problem) = super::webhook_url::url_template_problem(url) {
                    p.fail(join(PATH, "url"), "invalid_url", problem);
                }
            }
            if let Some(m) = method {
                if let Err(e) = m.parse::<WebhookMethod>() {
                    p.fail(join(PATH, "method"), "invalid_enum", e.to_string());
                }
            }
            let headers_path = join(PATH, "headers");
            for (name, value) in headers {
                header_problems(&mut p, &join(&headers_path, name), name, value);
            }
            if let Some(body) = body {
                p.templates_in(body, &join(PATH, "body"));
            }
        }
        StepAction::Exit { reason } => {
            if let Some(reason) = reason {
                p.line(PATH, "reason", reason, MAX_EXIT_REASON_CHARS, false);
            }
        }
    }
    p.0
}

fn condition_problems(p: &mut Problems, condition: &StepCondition) {
    let field = &condition.field;
    let field_ok = p.line(PATH, "field", field, MAX_CONDITION_FIELD_CHARS, true);
    if field_ok && !condition_field_allowed(field) {
        p.fail(
            join(PATH, "field"),
            "invalid_field",
            "field must be email, subscribed, contact.email, contact.subscribed, data.<key> or event.<key>",
        );
    }
    if !condition_operator_allowed(condition.operator) {
        p.fail(
            join(PATH, "operator"),
            "invalid_enum",
            CONDITION_OPERATOR_MESSAGE,
        );
    }
    if !p.0.is_empty() {
        return;
    }
    // `email` and `subscribed` take what their segment filters take: any other test would
    // be decided as false (so `notExists` as true) for every contact.
    let kind = match field.strip_prefix("contact.").unwrap_or(field) {
        "email" => Some(FieldKind::Email),
        "subscribed" => Some(FieldKind::Subscribed),
        _ => None,
    };
    if let Some(kind) = kind.filter(|k| !condition.operator.allowed_for(*k)) {
        let allowed = match kind {
            FieldKind::Email => "equals, notEquals, contains or notContains",
            _ => "equals or notEquals",
        };
        p.fail(
            join(PATH, "operator"),
            "invalid_operator",
            format!("{field} is tested with {allowed}"),
        );
        return;
    }
    // A missing operand is only worth reporting once the test itself reads right.
    let needs_value = !matches!(condition.operator, Operator::Exists | Operator::NotExists);
    match &condition.value {
        None if needs_value => p.fail(
            join(PATH, "value"),
            "required",
            "value is required for this operator",
        ),
        Some(value) if kind == Some(FieldKind::Email) && !value.is_string() => p.fail(
            join(PATH, "value"),
            "invalid_type",
            format!(
                "{field} is compared with a string, not {}",
                type_name(value)
            ),
        ),
        Some(value) if kind == Some(FieldKind::Subscribed) && !value.is_boolean() => p.fail(
            join(PATH, "value"),
            "invalid_type",
            format!(
                "{field} is compared with true or false, not {}",
                type_name(value)
            ),
        ),
        _ => {}
    }
}

fn header_problems(p: &mut Problems, field: &str, name: &str, value: &Value) {
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        p.fail(
            field,
            "invalid_header",
            "a header name is letters, digits and !#$%&'*+-.^_`|~",
        );
    }
    match value {
        Value::String(s) => {
            if let Some((code, message)) = line_problem(name, s, MAX_HEADER_VALUE_CHARS) {
                p.fail(field, code, message);
            } else {
                p.template(field, s);
            }
        }
        other => p.fail(
            field,
            "invalid_type",
            format!("a header value must be a string, got {}", type_name(other)),
        ),
    }
}

/// HTTP token characters (RFC 9110), the only ones allowed in a header name.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Field errors collected while checking one configuration.
#[derive(Default)]
pub(super) struct Problems(pub(super) Vec<FieldError>);

impl Problems {
    pub(super) fn fail(
        &mut self,
        field: impl Into<String>,
        code: &str,
        message: impl Into<String>,
    ) {
        self.0.push(FieldError::new(field, code, message));
    }

    /// Checks a one-line text at `path.key` (blank counts as missing when `required`);
    /// `true` when it passed.
    pub(super) fn line(
        &mut self,
        path: &str,
        key: &str,
        value: &str,
        max_chars: usize,
        required: bool,
    ) -> bool {
        let field = join(path, key);
        if required && value.trim().is_empty() {
            self.fail(field, "required", format!("{key} must not be empty"));
            return false;
        }
        if let Some((code, message)) = line_problem(key, value, max_chars) {
            self.fail(field, code, message);
            return false;
        }
        true
    }

    /// Checks that `value` at `path.key` lies in `1..=max`.
    fn range(&mut self, path: &str, key: &str, value: i64, max: i64) {
        if !(1..=max).contains(&value) {
            self.fail(
                join(path, key),
                "out_of_range",
                format!("{key} must be between 1 and {max}"),
            );
        }
    }

    /// Records a template syntax error in `source`.
    fn template(&mut self, field: &str, source: &str) {
        if let Err(e) = render::validate(source) {
            self.fail(field, "invalid_template", e.to_string());
        }
    }

    /// Records a template syntax error in any string inside `value`.
    fn templates_in(&mut self, value: &Value, path: &str) {
        match value {
            Value::String(s) => self.template(path, s),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.templates_in(item, &join(path, &i.to_string()));
                }
            }
            Value::Object(m) => {
                for (k, v) in m {
                    self.templates_in(v, &join(path, k));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::{DelayUnit, SubscriptionAction};
    use serde_json::{json, Map};

    fn fields(action: &StepAction) -> Vec<String> {
        action_problems(action)
            .into_iter()
            .map(|e| e.field)
            .collect()
    }

    fn webhook(url: &str) -> StepAction {
        StepAction::Webhook {
            url: url.into(),
            method: None,
            headers: Map::new(),
            body: None,
        }
    }

    #[test]
    fn valid_actions_pass() {
        let valid = [
            StepAction::Delay {
                amount: 3,
                unit: DelayUnit::Hours,
            },
            StepAction::WaitForEvent {
                event_name: "paid".into(),
                timeout: Some(60),
            },
            StepAction::SendEmail {
                recipient: Recipient::Custom {
                    email: "{{contact.data.manager}}".into(),
                },
            },
            StepAction::Condition(StepCondition {
                field: "data.plan".into(),
                operator: Operator::Equals,
                value: Some(json!("pro")),
            }),
            StepAction::Condition(StepCondition {
                field: "event.coupon".into(),
                operator: Operator::NotExists,
                value: None,
            }),
            StepAction::UpdateContact {
                updates: Map::new(),
                subscription_action: SubscriptionAction::Unsubscribe,
            },
            StepAction::Webhook {
                url: "https://h.example/{{event.id}}".into(),
                method: Some("PUT".into()),
                headers: [("X-Plan".to_string(), json!("{{data.plan}}"))]
                    .into_iter()
                    .collect(),
                body: Some(json!({"who": "{{contact.email}}", "n": [1, "{{event.n}}"]})),
            },
            StepAction::Exit { reason: None },
        ];
        for action in &valid {
            assert_eq!(check_action(action), Ok(()), "{action:?}");
        }
    }

    #[test]
    fn ranges_are_checked() {
        let delay = |amount| StepAction::Delay {
            amount,
            unit: DelayUnit::Days,
        };
        assert_eq!(fields(&delay(0)), ["config.amount"]);
        assert_eq!(fields(&delay(10_001)), ["config.amount"]);
        assert!(fields(&delay(10_000)).is_empty());
        let wait = |timeout| StepAction::WaitForEvent {
            event_name: "paid".into(),
            timeout: Some(timeout),
        };
        assert_eq!(fields(&wait(0)), ["config.timeout"]);
        assert_eq!(fields(&wait(u64::MAX)), ["config.timeout"]);
        let problems = action_problems(&delay(0));
        assert_eq!(problems[0].code, "out_of_range");
    }

    #[test]
    fn names_and_texts_are_checked() {
        assert_eq!(
            fields(&StepAction::WaitForEvent {
                event_name: "  ".into(),
                timeout: None
            }),
            ["config.eventName"]
        );
        assert_eq!(
            fields(&StepAction::WaitForEvent {
                event_name: "a\nb".into(),
                timeout: None
            }),
            ["config.eventName"]
        );
        assert_eq!(
            fields(&StepAction::SendEmail {
                recipient: Recipient::Custom {
                    email: "{{ unclosed".into()
                }
            }),
            ["config.recipient.email"]
        );
        assert_eq!(
            fields(&StepAction::Exit {
                reason: Some("x".repeat(1001))
            }),
            ["config.reason"]
        );
    }

    #[test]
    fn conditions_are_checked_in_order() {
        let cond = |field: &str, operator, value| {
            StepAction::Condition(StepCondition {
                field: field.into(),
                operator,
                value,
            })
        };
        assert_eq!(
            fields(&cond("foo", Operator::Within, None)),
            ["config.field", "config.operator"]
        );
        assert_eq!(
            fields(&cond("data.plan", Operator::Equals, None)),
            ["config.value"]
        );
        assert_eq!(
            fields(&cond("data.", Operator::Exists, None)),
            ["config.field"]
        );
    }

    #[test]
    fn email_and_subscribed_take_what_their_segment_filters_take() {
        let cond = |field: &str, operator, value| {
            StepAction::Condition(StepCondition {
                field: field.into(),
                operator,
                value,
            })
        };
        // Decided as false for every contact, so refused.
        assert_eq!(
            fields(&cond("email", Operator::Exists, None)),
            ["config.operator"]
        );
        assert_eq!(
            fields(&cond(
                "contact.subscribed",
                Operator::Contains,
                Some(json!(true))
            )),
            ["config.operator"]
        );
        assert_eq!(
            fields(&cond("subscribed", Operator::Equals, Some(json!("true")))),
            ["config.value"]
        );
        assert_eq!(
            fields(&cond("email", Operator::Contains, Some(json!(5)))),
            ["config.value"]
        );
        for ok in [
            cond("email", Operator::NotContains, Some(json!("@example.org"))),
            cond(
                "contact.subscribed",
                Operator::NotEquals,
                Some(json!(false)),
            ),
        ] {
            assert!(check_action(&ok).is_ok(), "{ok:?}");
        }
    }

    #[test]
    fn webhooks_are_checked_field_by_field() {
        let action = StepAction::Webhook {
            url: "ftp://x".into(),
            method: Some("TRACE".into()),
            headers: [
                ("X-A".to_string(), json!(1)),
                ("bad name".to_string(), json!("v")),
                ("X-B".to_string(), json!("a\r\nInjected: 1")),
            ]
            .into_iter()
            .collect(),
            body: Some(json!({"k": ["{{ broken"]})),
        };
        assert_eq!(
            fields(&action),
            [
                "config.url",
                "config.method",
                "config.headers.X-A",
                "config.headers.X-B",
                "config.headers.bad name",
                "config.body.k.0"
            ]
        );
        assert_eq!(fields(&webhook("")), ["config.url"]);
        assert_eq!(
            fields(&webhook(&"h".repeat(MAX_URL_CHARS + 1))),
            ["config.url"]
        );
    }
}
