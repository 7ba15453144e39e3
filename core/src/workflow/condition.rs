//! The test of a CONDITION step, decided by the segment filters' comparison code: a
//! `data.<key>` or `event.<key>` field reads like a segment's `data.<path>` filter over the
//! contact's data or the execution's event data.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::{Branch, StepCondition};
use crate::model::Contact;
use crate::segment::{filter_matches, ContactFacts, Field, Filter, Operator};

/// Which branch the condition takes for `contact` with the execution's `event` data. A
/// missing value compares false, except for `notExists`.
pub fn evaluate(
    condition: &StepCondition,
    contact: &Contact,
    event: &Value,
    now: DateTime<Utc>,
) -> Branch {
    let field = condition.field.as_str();
    let field = field.strip_prefix("contact.").unwrap_or(field);
    let (subject, filter_field) = if let Some(path) = field.strip_prefix("event.") {
        let mut with_event = contact.clone();
        with_event.data = match event {
            Value::Object(m) => m.clone(),
            _ => Map::new(),
        };
        (with_event, Field::Data(split(path)))
    } else if let Some(path) = field.strip_prefix("data.") {
        (contact.clone(), Field::Data(split(path)))
    } else if field == "email" {
        (contact.clone(), Field::Email)
    } else if field == "subscribed" {
        (contact.clone(), Field::Subscribed)
    } else {
        // Refused when the step was written; an unknown field matches nothing.
        return Branch::No;
    };
    if let Field::Data(path) = &filter_field {
        let missing = resolve(&subject.data, path).is_none();
        if missing {
            return if condition.operator == Operator::NotExists {
                Branch::Yes
            } else {
                Branch::No
            };
        }
    }
    let filter = Filter {
        field: filter_field,
        op: condition.operator,
        value: condition.value.clone(),
        unit: None,
    };
    let none = HashSet::new();
    let facts = ContactFacts {
        contact: &subject,
        events: &[],
        activity: &[],
        segments: &none,
    };
    if filter_matches(&filter, &facts, now) {
        Branch::Yes
    } else {
        Branch::No
    }
}

/// The value at `path` in `data`; `null` counts as missing, as in segment filters.
fn resolve<'v>(data: &'v Map<String, Value>, path: &[String]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let found = rest
        .iter()
        .try_fold(data.get(first)?, |v, key| v.as_object()?.get(key))?;
    (!found.is_null()).then_some(found)
}

fn split(path: &str) -> Vec<String> {
    path.split('.').map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EmailAddress;
    use serde_json::json;

    fn contact() -> Contact {
        let email = EmailAddress::parse("ann@example.com").expect("valid");
        let data = json!({"plan": "pro", "age": 40})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let ws = crate::model::WorkspaceId::from("ws");
        Contact::new(
            &crate::ports::SystemClock,
            &ws,
            email,
            true,
            data,
            false,
            Utc::now(),
        )
    }

    fn test(field: &str, operator: Operator, value: Option<Value>, event: Value) -> Branch {
        let c = StepCondition {
            field: field.into(),
            operator,
            value,
        };
        evaluate(&c, &contact(), &event, Utc::now())
    }

    #[test]
    fn fields_read_contact_data_and_event() {
        use Branch::{No, Yes};
        assert_eq!(
            test("data.plan", Operator::Equals, Some(json!("pro")), json!({})),
            Yes
        );
        assert_eq!(
            test(
                "contact.data.plan",
                Operator::Equals,
                Some(json!("free")),
                json!({})
            ),
            No
        );
        assert_eq!(
            test(
                "data.age",
                Operator::GreaterThan,
                Some(json!(30)),
                json!({})
            ),
            Yes
        );
        assert_eq!(
            test(
                "event.total",
                Operator::LessThanOrEqual,
                Some(json!(10)),
                json!({"total": 10})
            ),
            Yes
        );
        assert_eq!(
            test(
                "email",
                Operator::Contains,
                Some(json!("EXAMPLE")),
                json!({})
            ),
            Yes
        );
        assert_eq!(
            test(
                "contact.subscribed",
                Operator::Equals,
                Some(json!(true)),
                json!({})
            ),
            Yes
        );
        assert_eq!(
            test(
                "subscribed",
                Operator::NotEquals,
                Some(json!(true)),
                json!({})
            ),
            No
        );
    }

    #[test]
    fn a_missing_value_is_false_except_for_not_exists() {
        use Branch::{No, Yes};
        assert_eq!(
            test("event.x", Operator::Equals, Some(json!(1)), json!({})),
            No
        );
        assert_eq!(
            test("event.x", Operator::GreaterThan, Some(json!(1)), json!({})),
            No
        );
        assert_eq!(test("event.x", Operator::Exists, None, json!({})), No);
        assert_eq!(test("event.x", Operator::NotExists, None, json!({})), Yes);
        assert_eq!(test("data.nope", Operator::NotExists, None, json!({})), Yes);
        assert_eq!(
            test("event.x", Operator::NotEquals, Some(json!(1)), json!({})),
            No
        );
        assert_eq!(
            test(
                "event.x",
                Operator::NotEquals,
                Some(json!(1)),
                json!({"x": 2})
            ),
            Yes
        );
        assert_eq!(
            test("event.x", Operator::Exists, None, json!({"x": 0})),
            Yes
        );
    }
}
