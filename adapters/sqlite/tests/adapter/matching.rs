//! The SQL translation of segment conditions against the pure evaluator: hand-written
//! tricky cases, hand-built filters outside what `parse_condition` produces, a `now` with
//! sub-microsecond digits, and the SQL timestamp recognition against `parse_timestamp`.

use std::collections::{BTreeSet, HashSet};

use chrono::{DateTime, Duration, TimeZone, Utc};
use posthorn_core::model::{Contact, ContactStatus, EmailAddress, Event, INTERNAL_EVENT_NAMES};
use posthorn_core::ports::{MatchQuery, Store, Write};
use posthorn_core::segment::{
    activity_of_event, generate, matches, parse_condition, parse_timestamp, Activity, ActivityFact,
    Condition, ContactFacts, EventFact, Field, Filter, Group, Logic, Operator, TimeUnit,
};
use posthorn_sqlite::SqliteStore;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use super::{changes, workspace};
use crate::support;

/// 2024-06-01T12:00:00.0000005Z: half a microsecond past a whole one, so every window
/// cutoff falls between two instants the database can store.
fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 6, 1, 12, 0, 0)
        .single()
        .expect("valid date")
        + Duration::nanoseconds(500)
}

/// `now()` cut to whole seconds minus `minutes`: a stored time exactly on a window edge.
fn ago(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 6, 1, 12, 0, 0)
        .single()
        .expect("valid date")
        - Duration::minutes(minutes)
}

fn activity_event_name(activity: Activity) -> &'static str {
    INTERNAL_EVENT_NAMES
        .iter()
        .copied()
        .find(|name| activity_of_event(name) == Some(activity))
        .expect("every activity has an event name")
}

/// A contact with what a condition can see, as stored.
struct Person {
    label: &'static str,
    contact: Contact,
    events: Vec<EventFact>,
    activity: Vec<ActivityFact>,
    segments: HashSet<String>,
}

impl Person {
    fn new(ws: &str, label: &'static str, email: &str, data: Value) -> Self {
        let Value::Object(data) = data else {
            panic!("data must be an object")
        };
        let email = EmailAddress::parse(email).expect("valid address");
        let mut contact = Contact::new(ws, email, true, data, false, ago(0));
        contact.created_at = ago(60 * 24 * 2);
        contact.updated_at = ago(60);
        Self {
            label,
            contact,
            events: Vec::new(),
            activity: Vec::new(),
            segments: HashSet::new(),
        }
    }

    fn event(mut self, name: &str, at: DateTime<Utc>) -> Self {
        if let Some(activity) = activity_of_event(name) {
            self.activity.push(ActivityFact { activity, at });
        }
        self.events.push(EventFact {
            name: name.to_string(),
            at,
        });
        self
    }

    fn member(mut self, segment_id: &str) -> Self {
        self.segments.insert(segment_id.to_string());
        self
    }

    fn facts(&self) -> ContactFacts<'_> {
        ContactFacts {
            contact: &self.contact,
            events: &self.events,
            activity: &self.activity,
            segments: &self.segments,
        }
    }

    fn writes(&self) -> Vec<Write> {
        let ws = &self.contact.workspace_id;
        let mut writes = vec![Write::InsertContact(self.contact.clone())];
        for e in &self.events {
            writes.push(Write::AppendEvent(Event::new(
                ws,
                e.name.clone(),
                json!({}),
                Some(self.contact.id.clone()),
                None,
                e.at,
            )));
        }
        for segment_id in &self.segments {
            writes.push(Write::AddSegmentMember {
                workspace_id: ws.clone(),
                segment_id: segment_id.clone(),
                contact_id: self.contact.id.clone(),
            });
        }
        writes
    }
}

async fn store_people(store: &SqliteStore, people: &[Person]) {
    let writes = people.iter().flat_map(Person::writes).collect();
    store.commit(changes(writes)).await.expect("store people");
}

/// Labels of the contacts the store says match, checked against the evaluator and the
/// count.
async fn sql_labels(
    store: &SqliteStore,
    ws: &str,
    people: &[Person],
    condition: &Condition,
    now: DateTime<Utc>,
) -> BTreeSet<&'static str> {
    let query = MatchQuery {
        limit: 1000,
        ..MatchQuery::default()
    };
    let found = store
        .contacts_matching(ws, condition, &query, now)
        .await
        .unwrap_or_else(|e| panic!("contacts_matching failed for {condition:?}: {e}"));
    let ids: Vec<&str> = found.iter().map(|c| c.id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "ascending ids");
    let count = store
        .count_matching(ws, condition, false, now)
        .await
        .expect("count_matching");
    assert_eq!(count, found.len() as u64, "count of {condition:?}");
    found
        .iter()
        .map(|c| {
            people
                .iter()
                .find(|p| p.contact.id == c.id)
                .map(|p| p.label)
                .expect("a stored person")
        })
        .collect()
}

fn evaluator_labels(
    people: &[Person],
    condition: &Condition,
    now: DateTime<Utc>,
) -> BTreeSet<&'static str> {
    people
        .iter()
        .filter(|p| matches(condition, &p.facts(), now))
        .map(|p| p.label)
        .collect()
}

fn single(filter: Value) -> Condition {
    parse_condition(&json!({"groups": [{"filters": [filter]}]}), "condition")
        .unwrap_or_else(|e| panic!("invalid test condition {filter}: {e:?}"))
}

fn parsed(condition: Value) -> Condition {
    parse_condition(&condition, "condition")
        .unwrap_or_else(|e| panic!("invalid test condition {condition}: {e:?}"))
}

/// A filter as only hand-written code can build it (no `parse_condition` invariants).
fn raw(field: Field, op: Operator, value: Option<Value>, unit: Option<TimeUnit>) -> Condition {
    Condition {
        logic: Logic::And,
        groups: vec![Group {
            filters: vec![Filter {
                field,
                op,
                value,
                unit,
            }],
            conditions: None,
        }],
    }
}

fn data_field(path: &str) -> Field {
    Field::Data(path.split('.').map(str::to_string).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hand_written_conditions_match_as_documented() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let w = ws.id.as_str();
    let seg = "seg-a";
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
    store_people(&store, &people).await;

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
                Field::Segment(seg.into()),
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
            sql_labels(&store, w, &people, &condition, now()).await,
            expected,
            "{what}: {}",
            condition.to_json()
        );
    }
    support::finish(store, db).await;
}

/// Values for hand-built filters: every JSON type, timestamps good and bad, NUL.
fn odd_value(rng: &mut StdRng) -> Option<Value> {
    let values = [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(18),
        json!(18.0),
        json!(-2.5),
        json!(1e300),
        json!("gold"),
        json!("GOLD"),
        json!(""),
        json!("v\0ip"),
        json!("18"),
        json!("2024-06-01T10:00:00Z"),
        json!("2024-06-01t12:00:00+02:00"),
        json!("2023-02-30T00:00:00Z"),
        json!([1]),
        json!({"a": 1}),
    ];
    if rng.gen_bool(0.1) {
        None
    } else {
        Some(values[rng.gen_range(0..values.len())].clone())
    }
}

/// Any field with any operator, value and unit: the evaluator's fallbacks.
fn odd_filter(rng: &mut StdRng) -> Filter {
    let fields = [
        Field::Email,
        Field::Subscribed,
        Field::CreatedAt,
        Field::UpdatedAt,
        data_field("plan"),
        data_field("tags"),
        data_field("lastSeen"),
        data_field("profile.since"),
        data_field("items.0"),
        Field::Event("signup".into()),
        Field::EmailActivity(Activity::Opened),
        Field::Segment("seg-a".into()),
    ];
    let units = [
        None,
        Some(TimeUnit::Minutes),
        Some(TimeUnit::Hours),
        Some(TimeUnit::Days),
    ];
    Filter {
        field: fields[rng.gen_range(0..fields.len())].clone(),
        op: Operator::ALL[rng.gen_range(0..Operator::ALL.len())],
        value: odd_value(rng),
        unit: units[rng.gen_range(0..units.len())],
    }
}

/// Replaces about a third of the generated filters with odd ones.
fn spoil(condition: &mut Condition, rng: &mut StdRng) {
    for group in &mut condition.groups {
        for filter in &mut group.filters {
            if rng.gen_bool(0.35) {
                *filter = odd_filter(rng);
            }
        }
        if let Some(nested) = &mut group.conditions {
            spoil(nested, rng);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_and_hand_built_conditions_equal_the_evaluator() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let now = now();
    let mut rng = StdRng::seed_from_u64(0x5e9_7e57);
    let mut people = Vec::new();
    for i in 0..80 {
        let g = generate::contact_facts(&mut rng, &ws.id, i, now);
        let mut p = Person {
            label: "generated",
            contact: g.contact,
            events: g.events,
            activity: Vec::new(),
            segments: g.segments,
        };
        for a in g.activity {
            p = p.event(activity_event_name(a.activity), a.at);
        }
        if i % 7 == 3 {
            p.contact.status = ContactStatus::Pending;
        }
        people.push(p);
    }
    store_people(&store, &people).await;
    let mut sorted: Vec<&Person> = people.iter().collect();
    sorted.sort_by(|a, b| a.contact.id.cmp(&b.contact.id));

    let mut split = 0;
    for round in 0..600 {
        // Whole generated conditions, and single groups of one or two filters, which
        // split the contacts more often; every other one with odd filters mixed in.
        let mut condition = if round % 4 < 2 {
            generate::condition(&mut rng, now)
        } else {
            let n = rng.gen_range(1..=2);
            Condition {
                logic: Logic::And,
                groups: vec![Group {
                    filters: (0..n).map(|_| generate::filter(&mut rng, now)).collect(),
                    conditions: None,
                }],
            }
        };
        if round % 2 == 1 {
            spoil(&mut condition, &mut rng);
        }
        let expected: Vec<&str> = sorted
            .iter()
            .filter(|p| matches(&condition, &p.facts(), now))
            .map(|p| p.contact.id.as_str())
            .collect();
        if !expected.is_empty() && expected.len() < people.len() {
            split += 1;
        }
        let query = MatchQuery {
            limit: 1000,
            ..MatchQuery::default()
        };
        let found = store
            .contacts_matching(&ws.id, &condition, &query, now)
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}: {}", condition.to_json()));
        let found: Vec<&str> = found.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(found, expected, "round {round}: {condition:?}");

        let audience = sorted
            .iter()
            .filter(|p| p.contact.subscribed && p.contact.status == ContactStatus::Active)
            .filter(|p| expected.contains(&p.contact.id.as_str()))
            .count() as u64;
        assert_eq!(
            store.count_matching(&ws.id, &condition, true, now).await,
            Ok(audience),
            "round {round}: audience count of {condition:?}"
        );
    }
    assert!(split >= 150, "only {split} conditions split the contacts");
    support::finish(store, db).await;
}

/// Strings near the timestamp pattern: valid ones with one character changed, dropped or
/// repeated, and some fixed awkward cases.
fn timestamp_candidates(rng: &mut StdRng) -> Vec<String> {
    let mut out: Vec<String> = [
        "2024-02-29T00:00:00Z",
        "2023-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2000-02-29T23:59:59.999999+14:59",
        "0001-01-01T00:00:00+14:00",
        "0000-12-31T00:00:00Z",
        "9999-12-31T23:59:59-14:59",
        "2024-04-31T00:00:00Z",
        "2024-06-31T00:00:00z",
        "2024-11-31T00:00:00Z",
        "2024-12-31t00:00:00Z",
        "2024-00-10T00:00:00Z",
        "2024-01-00T00:00:00Z",
        "2024-01-01T00:00:00.Z",
        "2024-01-01T00:00:00.1234567Z",
        "2024-01-01T00:00:00+1500",
        "2024-01-01T00:00:00-00:00",
        "2024-01-01T00:00:00Z\n",
        "\n2024-01-01T00:00:00Z",
        "２０２４-01-01T00:00:00Z",
        "2024-01-01T00:00:00+02:60",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let alphabet: Vec<char> = "0123456789-+:.TtZz \n9".chars().collect();
    for _ in 0..3000 {
        let secs = rng.gen_range(-62_000_000_000i64..253_000_000_000i64);
        let base = Utc
            .timestamp_opt(secs, rng.gen_range(0..1_000_000) * 1000)
            .single()
            .expect("in range");
        let mut s = match rng.gen_range(0..3) {
            0 => base.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            1 => base.to_rfc3339_opts(chrono::SecondsFormat::Micros, false),
            _ => base
                .with_timezone(
                    &chrono::FixedOffset::east_opt(rng.gen_range(-15 * 3600..15 * 3600))
                        .expect("offset"),
                )
                .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false),
        };
        let mut chars: Vec<char> = s.chars().collect();
        match rng.gen_range(0..4) {
            0 => {}
            1 => {
                let i = rng.gen_range(0..chars.len());
                chars[i] = alphabet[rng.gen_range(0..alphabet.len())];
            }
            2 => {
                chars.remove(rng.gen_range(0..chars.len()));
            }
            _ => {
                let i = rng.gen_range(0..chars.len());
                chars.insert(i, alphabet[rng.gen_range(0..alphabet.len())]);
            }
        }
        s = chars.into_iter().collect();
        out.push(s);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_timestamps_equal_parse_timestamp() {
    let (store, db) = support::fresh().await;
    let mut rng = StdRng::seed_from_u64(17);
    let candidates = timestamp_candidates(&mut rng);
    let got = posthorn_sqlite::testing::sql_timestamps(&store, &candidates)
        .await
        .expect("sql timestamps");
    let mut valid = 0;
    for (s, got) in candidates.iter().zip(got) {
        let expected = parse_timestamp(s);
        valid += usize::from(expected.is_some());
        assert_eq!(got, expected, "{s:?}");
    }
    assert!(
        valid > 300 && valid + 300 < candidates.len(),
        "{valid} of {} valid: the candidates are too one-sided",
        candidates.len()
    );
    support::finish(store, db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyset_walk_and_bounds() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let mut people: Vec<Person> = (0..9)
        .map(|i| {
            let mut p = Person::new(&ws.id, "k", &format!("k{i}@example.com"), json!({"i": i}));
            p.contact.subscribed = i % 3 != 0;
            if i == 4 {
                p.contact.status = ContactStatus::Pending;
            }
            p
        })
        .collect();
    people.sort_by(|a, b| a.contact.id.cmp(&b.contact.id));
    store_people(&store, &people).await;
    let condition = single(json!({"field": "data.i", "operator": "greaterThan", "value": 0}));
    let expected: Vec<String> = people
        .iter()
        .filter(|p| matches(&condition, &p.facts(), now()))
        .filter(|p| p.contact.id <= people[7].contact.id)
        .filter(|p| p.contact.subscribed && p.contact.status == ContactStatus::Active)
        .map(|p| p.contact.id.clone())
        .collect();
    let mut walked = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store
            .contacts_matching(
                &ws.id,
                &condition,
                &MatchQuery {
                    after_id: after.clone(),
                    until_id: Some(people[7].contact.id.clone()),
                    audience_only: true,
                    limit: 2,
                },
                now(),
            )
            .await
            .expect("page");
        let Some(last) = page.last() else { break };
        after = Some(last.id.clone());
        walked.extend(page.iter().map(|c| c.id.clone()));
    }
    assert_eq!(walked, expected);
    assert!(!expected.is_empty());
    support::finish(store, db).await;
}
