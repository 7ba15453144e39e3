//! Hand-written conditions and their documented answers.

use posthorn_core::model::SegmentId;
use std::collections::BTreeSet;

use posthorn_core::model::ContactStatus;
use posthorn_core::segment::{Activity, Condition, Field, Operator, TimeUnit};
use serde_json::{json, Value};

use super::{
    activity_event_name, ago, data_field, evaluator_labels, now, parsed, raw, single, store_people,
    store_segments, stored_labels, Person,
};
use crate::fixtures::workspace;
use crate::StorePorts;

/// Hand-written conditions over five contacts with awkward data (mixed types, case,
/// wildcards, timestamps good and bad, nested paths, nulls), events, email activity and
/// memberships, at a `now` half a microsecond past a stored window edge: the stored
/// contacts that match (and their count) are the documented ones, which the evaluator
/// must agree with first.
pub async fn conditions_match_as_documented(p: &StorePorts) {
    let ws = workspace(p, "cases").await;
    let w = &ws.id;
    let seg = &SegmentId::from("seg-a");
    store_segments(p.store.as_ref(), w, &[seg.as_str()]).await;
    let people = vec![
        Person::new(
            w,
            "a",
            "ada@example.com",
            json!({
                "plan": "Gold", "age": 18, "n": 1.0, "tags": ["vip", "beta"],
                "city": "MÜNCHEN",
                "lastSeen": "2024-05-31T12:00:00Z",
                "profile": {"tier": "gold", "since": "2024-05-01t00:00:00.5+02:00"},
                "items": [{"0": "x"}, 18]
            }),
        )
        .event("signup", ago(60 * 24))
        .event("purchase", ago(120))
        .member(seg),
        Person::new(
            w,
            "b",
            "bob_1@test.io",
            json!({
                "plan": "GOLD plan", "age": 18.0, "tags": [["vip"]],
                "lastSeen": "2023-02-30T00:00:00Z",
                "profile": {"tier": null},
                "big": 9007199254740993u64
            }),
        )
        .event("signup", ago(60 * 24 * 3)),
        {
            let mut c = Person::new(
                w,
                "c",
                "c%d@example.com",
                json!({
                    "plan": 1, "age": "18", "tags": "vip,beta", "tags2": [1, "18", true],
                    "profile": "flat", "lastSeen": "yesterday"
                }),
            )
            .event(activity_event_name(Activity::Opened), ago(30))
            .member(seg);
            c.contact.subscribed = false;
            c
        },
        {
            let mut d = Person::new(
                w,
                "d",
                "dora@test.io",
                json!({"lastSeen": "2024-06-01T11:00:00Z"}),
            )
            .event("order.placed", ago(1));
            d.contact.status = ContactStatus::Pending;
            d.contact.expires_at = Some(ago(-60));
            d
        },
        Person::new(
            w,
            "e",
            "eve@example.com",
            json!({
                "plan": true, "age": -2.5, "tags": [18.0, false],
                "lastSeen": "2024-06-01T11:00:00.000001Z"
            }),
        ),
    ];
    store_people(p.store.as_ref(), &people).await;

    let all = ["a", "b", "c", "d", "e"];
    let f = |field: &str, op: &str, value: Value| {
        single(json!({"field": field, "operator": op, "value": value}))
    };
    let bare = |field: &str, op: &str| single(json!({"field": field, "operator": op}));
    let window = |field: &str, op: &str, value: Value, unit: &str| {
        single(json!({"field": field, "operator": op, "value": value, "unit": unit}))
    };
    let segment_field = format!("segment.{seg}");
    let cases: Vec<(&str, Condition, Vec<&str>)> = vec![
        // JSON equality: case-sensitive strings, numbers as f64, types never mix.
        (
            "string equals",
            f("data.plan", "equals", json!("Gold")),
            vec!["a"],
        ),
        (
            "strings are case-sensitive",
            f("data.plan", "equals", json!("gold")),
            vec![],
        ),
        (
            "notEquals includes missing",
            f("data.plan", "notEquals", json!("Gold")),
            vec!["b", "c", "d", "e"],
        ),
        (
            "1 = 1.0",
            f("data.age", "equals", json!(18)),
            vec!["a", "b"],
        ),
        ("1.0 = 1", f("data.n", "equals", json!(1)), vec!["a"]),
        (
            "a string is not a number",
            f("data.age", "equals", json!("18")),
            vec!["c"],
        ),
        (
            "number equals",
            f("data.plan", "equals", json!(1)),
            vec!["c"],
        ),
        (
            "boolean equals",
            f("data.plan", "equals", json!(true)),
            vec!["e"],
        ),
        (
            "numbers compare as f64, not as numerics",
            f("data.big", "equals", json!(9007199254740992u64)),
            vec!["b"],
        ),
        // contains: case-insensitive substrings, or top-level array elements.
        (
            "substring ignoring case",
            f("data.plan", "contains", json!("gOLD")),
            vec!["a", "b"],
        ),
        (
            "notContains includes missing and non-strings",
            f("data.plan", "notContains", json!("gold")),
            vec!["c", "d", "e"],
        ),
        (
            "non-ASCII case folding",
            f("data.city", "contains", json!("münchen")),
            vec!["a"],
        ),
        (
            "element of an array or substring of a string, not of a nested array",
            f("data.tags", "contains", json!("vip")),
            vec!["a", "c"],
        ),
        (
            "array elements are case-sensitive",
            f("data.tags", "contains", json!("VIP")),
            vec!["c"],
        ),
        (
            "number element, 18 = 18.0",
            f("data.tags", "contains", json!(18)),
            vec!["e"],
        ),
        (
            "boolean element",
            f("data.tags", "contains", json!(false)),
            vec!["e"],
        ),
        (
            "mixed array: boolean",
            f("data.tags2", "contains", json!(true)),
            vec!["c"],
        ),
        (
            "mixed array: string",
            f("data.tags2", "contains", json!("18")),
            vec!["c"],
        ),
        (
            "mixed array: number",
            f("data.tags2", "contains", json!(18)),
            vec![],
        ),
        (
            "a number is no substring",
            f("data.age", "contains", json!(18)),
            vec![],
        ),
        // Paths: object keys only; null is missing.
        (
            "path through an array",
            bare("data.items.0", "exists"),
            vec![],
        ),
        (
            "notExists through an array",
            bare("data.items.0", "notExists"),
            all.to_vec(),
        ),
        (
            "nested exists",
            bare("data.profile.tier", "exists"),
            vec!["a"],
        ),
        (
            "null is missing",
            bare("data.profile", "exists"),
            vec!["a", "b", "c"],
        ),
        (
            "notEquals on null, a string parent and missing",
            f("data.profile.tier", "notEquals", json!("gold")),
            vec!["b", "c", "d", "e"],
        ),
        // Comparisons: numbers numerically, timestamps chronologically, nothing else.
        (
            "greaterThan number",
            f("data.age", "greaterThan", json!(17.5)),
            vec!["a", "b"],
        ),
        (
            "lessThanOrEqual number",
            f("data.age", "lessThanOrEqual", json!(18)),
            vec!["a", "b", "e"],
        ),
        (
            "timestamp with offset",
            f(
                "data.lastSeen",
                "greaterThan",
                json!("2024-06-01T12:59:59+02:00"),
            ),
            vec!["d", "e"],
        ),
        (
            "lower-case t, fraction and offset",
            f(
                "data.profile.since",
                "lessThanOrEqual",
                json!("2024-04-30T22:00:00.5Z"),
            ),
            vec!["a"],
        ),
        (
            "one microsecond later",
            f(
                "data.profile.since",
                "greaterThanOrEqual",
                json!("2024-04-30T22:00:00.500001Z"),
            ),
            vec![],
        ),
        (
            "impossible dates and words are not timestamps",
            f("data.lastSeen", "lessThan", json!("2100-01-01T00:00:00Z")),
            vec!["a", "d", "e"],
        ),
        // Windows against a `now` half a microsecond past a stored edge.
        (
            "within excludes an edge half a microsecond early",
            window("data.lastSeen", "within", json!(1), "hours"),
            vec!["e"],
        ),
        (
            "olderThan includes it",
            window("data.lastSeen", "olderThan", json!(1), "hours"),
            vec!["a", "d"],
        ),
        (
            "createdAt within",
            window("createdAt", "within", json!(3), "days"),
            all.to_vec(),
        ),
        (
            "createdAt olderThan",
            window("createdAt", "olderThan", json!(2), "days"),
            all.to_vec(),
        ),
        (
            "updatedAt within, edge",
            window("updatedAt", "within", json!(60), "minutes"),
            vec![],
        ),
        (
            "updatedAt compared",
            f(
                "updatedAt",
                "greaterThanOrEqual",
                json!("2024-06-01T11:00:00Z"),
            ),
            all.to_vec(),
        ),
        // Email and subscription.
        (
            "email equals folds the value",
            f("email", "equals", json!("ADA@Example.com")),
            vec!["a"],
        ),
        (
            "underscore is literal",
            f("email", "contains", json!("B_1")),
            vec!["b"],
        ),
        (
            "percent is literal",
            f("email", "contains", json!("%")),
            vec!["c"],
        ),
        (
            "email notContains",
            f("email", "notContains", json!("EXAMPLE")),
            vec!["b", "d"],
        ),
        (
            "subscribed",
            f("subscribed", "equals", json!(false)),
            vec!["c"],
        ),
        (
            "not subscribed",
            f("subscribed", "notEquals", json!(false)),
            vec!["a", "b", "d", "e"],
        ),
        // Events, activity, segments.
        (
            "triggered",
            bare("event.signup", "triggered"),
            vec!["a", "b"],
        ),
        (
            "dotted event name",
            bare("event.order.placed", "triggered"),
            vec!["d"],
        ),
        (
            "notTriggered",
            bare("event.signup", "notTriggered"),
            vec!["c", "d", "e"],
        ),
        (
            "triggeredWithin misses an edge half a microsecond early",
            window("event.signup", "triggeredWithin", json!(1), "days"),
            vec![],
        ),
        (
            "notTriggeredWithin",
            window("event.signup", "notTriggeredWithin", json!(1), "days"),
            all.to_vec(),
        ),
        (
            "triggeredOlderThan",
            window("event.signup", "triggeredOlderThan", json!(1), "days"),
            vec!["a", "b"],
        ),
        (
            "triggeredWithin fractional hours",
            window("event.purchase", "triggeredWithin", json!(2.5), "hours"),
            vec!["a"],
        ),
        ("activity", bare("email.opened", "triggered"), vec!["c"]),
        (
            "activity event by name",
            bare("event.email.open", "triggered"),
            vec!["c"],
        ),
        (
            "other activity",
            bare("email.clicked", "notTriggered"),
            all.to_vec(),
        ),
        (
            "member",
            bare(&segment_field, "memberOfSegment"),
            vec!["a", "c"],
        ),
        (
            "not member",
            bare(&segment_field, "notMemberOfSegment"),
            vec!["b", "d", "e"],
        ),
        (
            "unknown segment",
            bare("segment.nope", "notMemberOfSegment"),
            all.to_vec(),
        ),
        // Structure.
        (
            "no groups",
            parsed(json!({"logic": "OR", "groups": []})),
            all.to_vec(),
        ),
        (
            "an empty group",
            parsed(json!({"logic": "OR", "groups": [{}]})),
            all.to_vec(),
        ),
        (
            "OR of groups",
            parsed(json!({"logic": "or", "groups": [
                {"filters": [{"field": "data.plan", "operator": "equals", "value": "Gold"}]},
                {"filters": [{"field": "event.order.placed", "operator": "triggered"}]}
            ]})),
            vec!["a", "d"],
        ),
        (
            "AND of a filter and a nested OR",
            parsed(json!({"groups": [
                {"filters": [{"field": "email", "operator": "contains", "value": "example"}],
                 "conditions": {"logic": "OR", "groups": [
                    {"filters": [{"field": "subscribed", "operator": "equals", "value": false}]},
                    {"filters": [{"field": "data.age", "operator": "lessThan", "value": 0}]}
                 ]}}
            ]})),
            vec!["c", "e"],
        ),
        (
            "a nested empty OR matches",
            parsed(json!({"groups": [
                {"filters": [{"field": "data.plan", "operator": "exists"}],
                 "conditions": {"logic": "OR", "groups": []}}
            ]})),
            vec!["a", "b", "c", "e"],
        ),
        // Filters only hand-written code can build.
        (
            "email equals a number",
            raw(Field::Email, Operator::Equals, Some(json!(5)), None),
            vec![],
        ),
        (
            "email notEquals a number",
            raw(Field::Email, Operator::NotEquals, Some(json!(5)), None),
            all.to_vec(),
        ),
        (
            "equals null",
            raw(
                data_field("profile.tier"),
                Operator::Equals,
                Some(json!(null)),
                None,
            ),
            vec![],
        ),
        (
            "contains an array",
            raw(
                data_field("tags2"),
                Operator::NotContains,
                Some(json!([1])),
                None,
            ),
            all.to_vec(),
        ),
        (
            "compare with an impossible date",
            raw(
                data_field("lastSeen"),
                Operator::LessThan,
                Some(json!("2023-02-30T00:00:00Z")),
                None,
            ),
            vec![],
        ),
        (
            "a window of zero",
            raw(
                Field::Event("signup".into()),
                Operator::NotTriggeredWithin,
                Some(json!(0)),
                Some(TimeUnit::Days),
            ),
            all.to_vec(),
        ),
        (
            "a window without a unit",
            raw(Field::CreatedAt, Operator::OlderThan, Some(json!(1)), None),
            vec![],
        ),
        (
            "an operator that does not fit the field",
            raw(
                Field::Segment(seg.clone()),
                Operator::NotTriggered,
                None,
                None,
            ),
            all.to_vec(),
        ),
        (
            "NUL in a value",
            raw(
                data_field("plan"),
                Operator::NotContains,
                Some(json!("go\0")),
                None,
            ),
            all.to_vec(),
        ),
        (
            "NUL in a key",
            raw(data_field("pl\0an"), Operator::Exists, None, None),
            vec![],
        ),
        (
            "NUL in an address",
            raw(
                Field::Email,
                Operator::Equals,
                Some(json!("ada@example.com\0")),
                None,
            ),
            vec![],
        ),
        (
            "a wildcard-looking key",
            raw(data_field("%"), Operator::NotExists, None, None),
            all.to_vec(),
        ),
    ];
    for (what, condition, expected) in cases {
        let expected: BTreeSet<&str> = expected.into_iter().collect();
        assert_eq!(
            evaluator_labels(&people, &condition, now()),
            expected,
            "{what}: the test's expectation disagrees with the evaluator"
        );
        assert_eq!(
            stored_labels(p.store.as_ref(), w, &people, &condition, now()).await,
            expected,
            "{what}: {}",
            condition.to_json()
        );
    }
}
