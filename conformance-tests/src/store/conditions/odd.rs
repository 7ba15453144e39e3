//! Hand-built filters mixed into generated conditions, and the keyset walk of an
//! audience.

use posthorn_core::model::ContactId;
use posthorn_core::model::ContactStatus;
use posthorn_core::ports::MatchQuery;
use posthorn_core::segment::{
    generate, matches, Activity, Condition, Field, Filter, Group, Logic, Operator, TimeUnit,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use super::{activity_event_name, data_field, now, single, store_people, store_segments, Person};
use crate::fixtures::workspace;
use crate::StorePorts;

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

/// 600 conditions over 80 generated contacts (every seventh PENDING), at a `now` with
/// sub-microsecond digits: whole generated conditions and single groups of one or two
/// filters, every other one with hand-built filters mixed in (any field with any operator,
/// value and unit: the evaluator's fallbacks). `contacts_matching` returns exactly the
/// contacts the evaluator accepts, in ascending ids, and `count_matching` counts the
/// audience among them; at least 150 conditions split the contacts.
pub async fn conditions_generated_and_hand_built_equal_evaluator(ports: &StorePorts) {
    let store = ports.store.as_ref();
    let ws = workspace(ports, "odd").await;
    let now = now();
    let mut rng = StdRng::seed_from_u64(0x5e9_7e57);
    store_segments(store, &ws.id, generate::SEGMENT_IDS).await;
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
    store_people(store, &people).await;
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
}

/// Walking an audience (subscribed and ACTIVE) up to an `until_id`, two at a time from
/// each page's last id, visits exactly the matching audience up to that id, in order.
pub async fn matching_keyset_walk_within_bounds(ports: &StorePorts) {
    let store = ports.store.as_ref();
    let ws = workspace(ports, "keyset").await;
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
    store_people(store, &people).await;
    let condition = single(json!({"field": "data.i", "operator": "greaterThan", "value": 0}));
    let expected: Vec<ContactId> = people
        .iter()
        .filter(|p| matches(&condition, &p.facts(), now()))
        .filter(|p| p.contact.id <= people[7].contact.id)
        .filter(|p| p.contact.subscribed && p.contact.status == ContactStatus::Active)
        .map(|p| p.contact.id.clone())
        .collect();
    let mut walked = Vec::new();
    let mut after: Option<ContactId> = None;
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
            .expect("contacts_matching failed");
        let Some(last) = page.last() else { break };
        after = Some(last.id.clone());
        walked.extend(page.iter().map(|c| c.id.clone()));
    }
    assert_eq!(walked, expected);
    assert!(!expected.is_empty());
}
