//! The variables steps render with: `{{event.x}}`, `{{contact.email}}`,
//! `{{contact.data.x}}`, `{{data.x}}`, `{{email}}`, `{{workflow.name}}`, `{{execution.id}}`.

use serde_json::{json, Map, Value};

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

/// UPDATE_CONTACT `updates` rendered with `context`, each value as [`render_json`] renders
/// it, except that a value that is exactly `{{x}}` with `x` missing leaves its key out: the
/// merge would read the `null` it renders to as "remove this key", and a missing variable
/// must not delete stored data. A `null` written in the updates, or held by `x`, still
/// removes the key.
pub fn render_updates(
    updates: &Map<String, Value>,
    context: &Value,
) -> Result<Map<String, Value>, RenderError> {
    let mut data = Map::new();
    for (key, template) in updates {
        let missing = matches!(template, Value::String(s)
            if sole_placeholder(s).is_some_and(|path| lookup(context, path).is_none()));
        if !missing {
            data.insert(key.clone(), render_json(template, context)?);
        }
    }
    Ok(data)
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

    #[test]
    fn an_update_whose_lone_variable_is_missing_is_left_out() {
        let ctx = json!({"event": {"gone": null, "n": 2}});
        let updates = json!({
            "plan": "{{event.plan}}",
            "gone": "{{event.gone}}",
            "n": "{{ event.n }}",
            "note": "plan {{event.plan}}",
            "literal": null,
        });
        let updates = updates.as_object().expect("object");
        assert_eq!(
            render_updates(updates, &ctx).map(Value::Object),
            Ok(json!({"gone": null, "n": 2, "note": "plan ", "literal": null}))
        );
        // A webhook body keeps the key, as null.
        assert_eq!(
            render_json(&json!({"plan": "{{event.plan}}"}), &ctx),
            Ok(json!({"plan": null}))
        );
    }
}
