//! Condition queries held to the pure evaluator beyond the generated checks of
//! `matching`: hand-written tricky cases with their documented answers, hand-built filters
//! outside what `parse_condition` produces, data keys a JSON path must quote, a `now` with
//! sub-microsecond digits, and the keyset walk of an audience.

mod cases;
mod data_keys;
mod odd;

pub use cases::*;
pub use data_keys::*;
pub use odd::*;

use posthorn_core::model::{SegmentId, WorkspaceId};
use std::collections::{BTreeSet, HashSet};

use chrono::{DateTime, Duration, TimeZone, Utc};
use posthorn_core::model::{
    Contact, ContactStatus, EmailAddress, Event, SegmentType, INTERNAL_EVENT_NAMES,
};
use posthorn_core::ports::{MatchQuery, Store, Write};
use posthorn_core::segment::{
    activity_of_event, matches, parse_condition, Activity, ActivityFact, Condition, ContactFacts,
    EventFact, Field, Filter, Group, Logic, Operator, TimeUnit,
};
use serde_json::{json, Value};

use crate::fixtures::{commit, segment};

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

/// The stored event name of an activity (`Opened` is `email.open`).
pub(super) fn activity_event_name(activity: Activity) -> &'static str {
    INTERNAL_EVENT_NAMES
        .iter()
        .copied()
        .find(|name| activity_of_event(name) == Some(activity))
        .expect("every activity has an event name")
}

/// A contact with what a condition can see, as stored.
pub(super) struct Person {
    pub(super) label: &'static str,
    pub(super) contact: Contact,
    /// Its events, including the `email.*` events standing for its activity.
    pub(super) events: Vec<EventFact>,
    pub(super) activity: Vec<ActivityFact>,
    /// Ids of the segments it is a stored member of.
    pub(super) segments: HashSet<SegmentId>,
}

impl Person {
    fn new(ws: &WorkspaceId, label: &'static str, email: &str, data: Value) -> Self {
        let Value::Object(data) = data else {
            panic!("data must be an object")
        };
        let email = EmailAddress::parse(email).expect("valid address");
        let mut contact =
            Contact::new(crate::fixtures::ids(), ws, email, true, data, false, ago(0));
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

    fn member(mut self, segment_id: &SegmentId) -> Self {
        self.segments.insert(segment_id.clone());
        self
    }

    pub(super) fn facts(&self) -> ContactFacts<'_> {
        ContactFacts {
            contact: &self.contact,
            events: &self.events,
            activity: &self.activity,
            segments: &self.segments,
        }
    }

    /// Whether a campaign would reach it: subscribed and ACTIVE.
    pub(super) fn in_audience(&self) -> bool {
        self.contact.subscribed && self.contact.status == ContactStatus::Active
    }

    fn writes(&self) -> Vec<Write> {
        let ws = &self.contact.workspace_id;
        let mut writes = vec![Write::InsertContact(self.contact.clone())];
        for e in &self.events {
            writes.push(Write::AppendEvent(Event::new(
                crate::fixtures::ids(),
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

/// Stores a STATIC segment under each of `ids` (the generator's fixed ids), so that the
/// memberships of the people are memberships of stored segments.
async fn store_segments(store: &dyn Store, workspace_id: &WorkspaceId, ids: &[&str]) {
    let writes = ids
        .iter()
        .map(|id| {
            let mut seg = segment(workspace_id, id, SegmentType::Static, false, ago(60));
            seg.id = SegmentId::from(*id);
            Write::PutSegment(seg)
        })
        .collect();
    commit(store, "storing the segments", writes).await;
}

async fn store_people(store: &dyn Store, people: &[Person]) {
    let writes = people.iter().flat_map(Person::writes).collect();
    commit(store, "storing the people", writes).await;
}

/// Labels of the contacts the store says match, checked against the evaluator and the
/// count.
async fn stored_labels(
    store: &dyn Store,
    ws: &WorkspaceId,
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
