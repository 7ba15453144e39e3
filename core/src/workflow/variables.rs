//! The variables steps render with: `{{event.x}}`, `{{contact.email}}`,
//! `{{contact.data.x}}`, `{{data.x}}`, `{{email}}`, `{{workflow.name}}`, `{{execution.id}}`.

use serde_json::{json, Value};

use super::{Execution, Workflow};
use crate::model::Contact;
use crate::render::{render, Escape, RenderError};

/// The render context of a step of `execution` for `contact`.
pub fn variables(workflow: &Workflow, execution: &Execution, contact: &Contact) -> Value {
    json!({
        "event": execution.event,
        "contact": contact_value(contact),
        "data": contact.data,
        "email": contact.email,
        "workflow": {"id": workflow.id, "name": workflow.name},
        "execution": {
            "id": execution.id,
            "startedAt": crate::model::timestamp::format(&execution.started_at),
        },
    })
}

/// A contact as steps and webhook bodies see it.
pub fn contact_value(contact: &Contact) -> Value {
    json!({
        "id": contact.id,
        "email": contact.email,
        "subscribed": contact.subscribed,
        "data": contact.data,
    })
}

/// The value at a dotted `path` (`event.plan.name`) in `context`; `None` when missing.
pub fn lookup<'v>(context: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(context, |v, key| match v {
        Value::Object(m) => m.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// When `template` is exactly one placeholder of a dotted path (`{{ event.amount }}`), the
/// path: such a value keeps its JSON type in a webhook body.
pub fn sole_placeholder(template: &str) -> Option<&str> {
    let inner = template
        .trim()
        .strip_prefix("{{")?
        .strip_suffix("}}")?
        .trim();
    let plain = !inner.is_empty()
        && inner.split('.').all(|k| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        });
    // `{{{x}}}` (raw) and expressions such as `{{ a ?? b }}` are rendered as text.
    (plain && !template.trim().starts_with("{{{")).then_some(inner)
}

/// A JSON template rendered with `context`: every string rendered as text (no escaping:
/// the result is a JSON value, escaped when serialized), except that a string that is
/// exactly `{{x}}` becomes `x`'s JSON value (`null` when missing). Keys are kept.
pub fn render_json(template: &Value, context: &Value) -> Result<Value, RenderError> {
    Ok(match template {
        Value::String(s) => match sole_placeholder(s) {
            Some(path) => lookup(context, path).cloned().unwrap_or(Value::Null),
            None => Value::String(render(s, context, Escape::None)?),
        },
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| render_json(v, context))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| Ok((k.clone(), render_json(v, context)?)))
                .collect::<Result<_, RenderError>>()?,
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_through_objects_and_arrays() {
        let ctx = json!({"event": {"items": [{"sku": "a"}], "n": 2}});
        assert_eq!(lookup(&ctx, "event.n"), Some(&json!(2)));
        assert_eq!(lookup(&ctx, "event.items.0.sku"), Some(&json!("a")));
        assert_eq!(lookup(&ctx, "event.missing"), None);
    }

    #[test]
    fn only_a_lone_placeholder_keeps_its_type() {
        assert_eq!(sole_placeholder("{{ event.amount }}"), Some("event.amount"));
        assert_eq!(sole_placeholder("{{event.amount}}"), Some("event.amount"));
        assert_eq!(sole_placeholder("total {{event.amount}}"), None);
        assert_eq!(sole_placeholder("{{ a ?? 'b' }}"), None);
        assert_eq!(sole_placeholder("{{{event.amount}}}"), None);
    }
}
