//! Random valid conditions and random contacts, for property tests and for the conformance
//! suite that compares a database's evaluation of a condition with [`super::matches`].
//!
//! Both sides draw from the same small vocabulary (event names, segment ids, data keys,
//! values and time offsets), so filters hit and miss often, including the exact boundaries
//! of time windows and the awkward cases (case differences, `1` against `1.0`, strings
//! against numbers, nulls, paths through arrays, impossible dates). Every generated string
//! is ASCII. Every time is `now` minus a whole number of minutes; `now` is first cut to
//! whole microseconds, so pass such a `now` to `matches` and to the database as well.

use std::collections::HashSet;

use chrono::{DateTime, Duration, DurationRound, SecondsFormat, Utc};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;
use serde_json::{json, Map, Value};

use super::condition::{
    Activity, Condition, Field, FieldKind, Filter, Group, Logic, Operator, TimeUnit,
};
use super::evaluate::{ActivityFact, ContactFacts, EventFact};
use crate::model::{Contact, EmailAddress, SegmentId, WorkspaceId};
use crate::ports::SystemClock;

/// Event names used by generated filters and facts (facts also use `other`).
pub const EVENT_NAMES: &[&str] = &["signup", "purchase", "order.placed"];

/// Segment ids used by generated filters and memberships.
pub const SEGMENT_IDS: &[&str] = &["seg-a", "seg-b", "seg-c"];

/// Data paths used by generated filters (and, mostly, by generated contact data).
pub const DATA_PATHS: &[&[&str]] = &[
    &["plan"],
    &["age"],
    &["tags"],
    &["lastSeen"],
    &["profile", "tier"],
    &["profile", "since"],
    &["items", "0"],
    &["absent"],
];

/// Offsets before `now`, in minutes, for every generated time: around the window lengths
/// below so that boundaries are hit exactly.
const OFFSETS_MINUTES: &[i64] = &[
    0, 1, 30, 59, 60, 61, 90, 120, 1439, 1440, 1441, 2880, 4320, 10_080, 43_200,
];

/// Local parts of generated addresses (`<name><index>@<domain>`).
const NAMES: &[&str] = &["ada", "bob", "carla"];
const DOMAINS: &[&str] = &["example.com", "test.io"];

/// A generated contact with everything a condition can look at, owned.
#[derive(Debug, Clone)]
pub struct GeneratedFacts {
    /// The contact (ACTIVE; `created_at` ≤ `updated_at` ≤ now).
    pub contact: Contact,
    /// Its events.
    pub events: Vec<EventFact>,
    /// Its email activity.
    pub activity: Vec<ActivityFact>,
    /// Ids of the segments it belongs to (a subset of [`SEGMENT_IDS`]).
    pub segments: HashSet<SegmentId>,
}

impl GeneratedFacts {
    /// Borrowed view for [`super::matches`].
    pub fn facts(&self) -> ContactFacts<'_> {
        ContactFacts {
            contact: &self.contact,
            events: &self.events,
            activity: &self.activity,
            segments: &self.segments,
        }
    }
}

/// A random valid condition: up to 3 levels deep and 40 filters, every filter accepted by
/// `parse_condition` and serialized back unchanged.
pub fn condition(rng: &mut StdRng, now: DateTime<Utc>) -> Condition {
    let mut budget = 40;
    condition_at(rng, micros(now), 1, &mut budget)
}

fn condition_at(
    rng: &mut StdRng,
    now: DateTime<Utc>,
    depth: usize,
    budget: &mut usize,
) -> Condition {
    let logic = if rng.gen_bool(0.5) {
        Logic::And
    } else {
        Logic::Or
    };
    let groups = (0..rng.gen_range(0..=3))
        .map(|_| {
            let n = rng.gen_range(0..=3).min(*budget);
            *budget -= n;
            let filters = (0..n).map(|_| filter(rng, now)).collect();
            let conditions = (depth < 3 && rng.gen_bool(0.3))
                .then(|| Box::new(condition_at(rng, now, depth + 1, budget)));
            Group {
                filters,
                conditions,
            }
        })
        .collect();
    Condition { logic, groups }
}

/// A random valid filter.
pub fn filter(rng: &mut StdRng, now: DateTime<Utc>) -> Filter {
    let now = micros(now);
    let field = match rng.gen_range(0..8) {
        0 => Field::Email,
        1 => Field::Subscribed,
        2 => Field::CreatedAt,
        3 => Field::UpdatedAt,
        4 | 5 => Field::Data(
            pick(rng, DATA_PATHS)
                .iter()
                .map(|k| k.to_string())
                .collect(),
        ),
        6 => Field::Event(pick(rng, EVENT_NAMES).to_string()),
        _ if rng.gen_bool(0.5) => Field::EmailActivity(pick(rng, &Activity::ALL)),
        _ => Field::Segment(SegmentId::from(pick(rng, SEGMENT_IDS))),
    };
    let kind = field.kind();
    let allowed: Vec<Operator> = Operator::ALL
        .into_iter()
        .filter(|o| o.allowed_for(kind))
        .collect();
    let op = pick(rng, &allowed);
    let (value, unit) = if op.takes_no_value() {
        (None, None)
    } else if op.uses_time() {
        let (amount, unit) = window(rng);
        (Some(amount), Some(unit))
    } else {
        (Some(operand(rng, kind, op, now)), None)
    };
    Filter {
        field,
        op,
        value,
        unit,
    }
}

fn operand(rng: &mut StdRng, kind: FieldKind, op: Operator, now: DateTime<Utc>) -> Value {
    let comparison = !matches!(
        op,
        Operator::Equals | Operator::NotEquals | Operator::Contains | Operator::NotContains
    );
    match kind {
        FieldKind::Email if op == Operator::Equals || op == Operator::NotEquals => {
            let name = pick(rng, NAMES);
            let address = format!("{name}{}@{}", rng.gen_range(0..3), pick(rng, DOMAINS));
            json!(if rng.gen_bool(0.3) {
                address.to_uppercase()
            } else {
                address
            })
        }
        FieldKind::Email => json!(pick(
            rng,
            &["ada", "BOB", "example", "@test.io", ".COM", "zzz"]
        )),
        FieldKind::Subscribed => json!(rng.gen_bool(0.5)),
        FieldKind::Timestamp => json!(timestamp_text(rng, now)),
        _ if comparison && rng.gen_bool(0.4) => json!(timestamp_text(rng, now)),
        _ if comparison => pick(
            rng,
            &[
                json!(0),
                json!(17),
                json!(18),
                json!(18.0),
                json!(18.5),
                json!(-2.5),
            ],
        ),
        _ => pick(
            rng,
            &[
                json!("gold"),
                json!("Gold"),
                json!("go"),
                json!("vip"),
                json!("VIP"),
                json!("18"),
                json!(18),
                json!(18.0),
                json!(1),
                json!(true),
                json!(false),
            ],
        ),
    }
}

fn window(rng: &mut StdRng) -> (Value, TimeUnit) {
    match rng.gen_range(0..3) {
        0 => (
            pick(rng, &[json!(1), json!(30), json!(60), json!(90)]),
            TimeUnit::Minutes,
        ),
        1 => (
            pick(rng, &[json!(1), json!(1.5), json!(2), json!(24)]),
            TimeUnit::Hours,
        ),
        _ => (
            pick(rng, &[json!(1), json!(2), json!(3), json!(7), json!(30)]),
            TimeUnit::Days,
        ),
    }
}

fn offset_time(rng: &mut StdRng, now: DateTime<Utc>) -> DateTime<Utc> {
    now - Duration::minutes(pick(rng, OFFSETS_MINUTES))
}

/// A timestamp string at a generated time, in UTC or at +02:00.
fn timestamp_text(rng: &mut StdRng, now: DateTime<Utc>) -> String {
    let at = offset_time(rng, now);
    match chrono::FixedOffset::east_opt(2 * 3600).filter(|_| rng.gen_bool(0.5)) {
        Some(offset) => at
            .with_timezone(&offset)
            .to_rfc3339_opts(SecondsFormat::AutoSi, false),
        None => at.to_rfc3339_opts(SecondsFormat::AutoSi, true),
    }
}

/// `now` to whole microseconds, the precision of timestamp strings and of databases.
fn micros(now: DateTime<Utc>) -> DateTime<Utc> {
    now.duration_trunc(Duration::microseconds(1)).unwrap_or(now)
}

/// A random contact of `workspace_id` with events, activity and memberships; `index`
/// makes the address unique among contacts generated with different indexes.
pub fn contact_facts(
    rng: &mut StdRng,
    workspace_id: &WorkspaceId,
    index: usize,
    now: DateTime<Utc>,
) -> GeneratedFacts {
    let now = micros(now);
    let raw = format!("{}{index}@{}", pick(rng, NAMES), pick(rng, DOMAINS));
    let email = EmailAddress::parse(&raw).expect("generated addresses are valid");
    // Generated contacts need unique ids, not ones ordered by a test's clock.
    let mut contact = Contact::new(
        &SystemClock,
        workspace_id,
        email,
        rng.gen_bool(0.7),
        data(rng, now),
        false,
        now,
    );
    let created = offset_time(rng, now);
    let updated = offset_time(rng, now);
    contact.created_at = created.min(updated);
    contact.updated_at = created.max(updated);
    let events = (0..rng.gen_range(0..=4))
        .map(|_| EventFact {
            name: pick(rng, &["signup", "purchase", "order.placed", "other"]).to_string(),
            at: offset_time(rng, now),
        })
        .collect();
    let activity = (0..rng.gen_range(0..=4))
        .map(|_| ActivityFact {
            activity: pick(rng, &Activity::ALL),
            at: offset_time(rng, now),
        })
        .collect();
    let segments = SEGMENT_IDS
        .iter()
        .filter(|_| rng.gen_bool(0.4))
        .map(|s| SegmentId::from(*s))
        .collect();
    GeneratedFacts {
        contact,
        events,
        activity,
        segments,
    }
}

fn data(rng: &mut StdRng, now: DateTime<Utc>) -> Map<String, Value> {
    let mut data = Map::new();
    let mut maybe = |rng: &mut StdRng, key: &str, value: Value| {
        if rng.gen_bool(0.7) {
            data.insert(key.to_string(), value);
        }
    };
    let plan = pick(
        rng,
        &[
            json!("gold"),
            json!("Gold"),
            json!("silver"),
            json!("GOLD plan"),
            json!(1),
            json!(true),
        ],
    );
    maybe(rng, "plan", plan);
    let age = pick(
        rng,
        &[
            json!(17),
            json!(18),
            json!(18.0),
            json!(18.5),
            json!(30),
            json!("18"),
            json!(-2.5),
        ],
    );
    maybe(rng, "age", age);
    let tags = pick(
        rng,
        &[
            json!(["vip", "beta"]),
            json!(["VIP"]),
            json!([1, "18", true]),
            json!([]),
            json!("vip,beta"),
            json!([["vip"]]),
        ],
    );
    maybe(rng, "tags", tags);
    let last_seen = match rng.gen_range(0..4) {
        0 => json!("yesterday"),
        1 => json!("2023-02-30T00:00:00Z"),
        _ => json!(timestamp_text(rng, now)),
    };
    maybe(rng, "lastSeen", last_seen);
    let profile = match rng.gen_range(0..4) {
        0 => json!("flat"),
        1 => json!({"tier": null, "since": timestamp_text(rng, now)}),
        _ => json!({
            "tier": pick(rng, &[json!("gold"), json!(18), json!(false)]),
            "since": timestamp_text(rng, now),
        }),
    };
    maybe(rng, "profile", profile);
    maybe(rng, "items", json!([{"0": "x"}, 18]));
    data
}

fn pick<T: Clone>(rng: &mut StdRng, items: &[T]) -> T {
    items.choose(rng).cloned().expect("non-empty vocabulary")
}
