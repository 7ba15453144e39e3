//! The generated workspace: contacts with realistic custom data and a few events, made
//! deterministically from a seed, so that the memory and PostgreSQL runs hold the same data.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use posthorn_core::model::{Contact, EmailAddress, Event, WorkspaceId};
use posthorn_core::ports::SystemClock;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Map, Value};

/// Countries with their weight in percent (they add up to 100).
const COUNTRIES: &[(&str, u32)] = &[
    ("US", 30),
    ("DE", 12),
    ("GB", 10),
    ("FR", 8),
    ("IN", 8),
    ("BR", 6),
    ("CA", 5),
    ("NL", 4),
    ("ES", 4),
    ("IT", 4),
    ("JP", 3),
    ("AU", 3),
    ("SE", 2),
    ("PL", 1),
];

const FIRST_NAMES: &[&str] = &[
    "Ada", "Alan", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances", "Edsger",
    "Radia", "Niklaus", "Sophie", "John", "Karen", "Tim",
];

/// Custom event names with their weight in percent.
const EVENTS: &[(&str, u32)] = &[("login", 60), ("purchase", 25), ("page-viewed", 15)];

/// What the generator makes and how.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Contacts to make.
    pub contacts: usize,
    /// Share of contacts with events (each gets 1 to 3).
    pub event_share: f64,
    /// Seed of the random generator.
    pub seed: u64,
}

/// One generated contact and its events.
pub struct Generated {
    pub contact: Contact,
    pub events: Vec<Event>,
}

/// Makes the contacts one by one, in id (creation) order.
pub struct Generator {
    shape: Shape,
    workspace_id: WorkspaceId,
    now: DateTime<Utc>,
    rng: StdRng,
    next: usize,
}

impl Generator {
    pub fn new(shape: Shape, workspace_id: &str, now: DateTime<Utc>) -> Self {
        Self {
            shape,
            workspace_id: WorkspaceId::from(workspace_id),
            now,
            rng: StdRng::seed_from_u64(shape.seed),
            next: 0,
        }
    }

    fn weighted(&mut self, table: &[(&'static str, u32)]) -> &'static str {
        let mut roll = self
            .rng
            .gen_range(0..table.iter().map(|(_, w)| w).sum::<u32>());
        for (name, weight) in table {
            if roll < *weight {
                return name;
            }
            roll -= weight;
        }
        table[0].0
    }

    fn days_ago(&mut self, max_days: i64) -> DateTime<Utc> {
        let secs = self.rng.gen_range(0..max_days * 86_400);
        // Whole milliseconds, like the API's timestamps.
        let millis = self.rng.gen_range(0..1000);
        self.now - Duration::seconds(secs) - Duration::milliseconds(millis)
    }
}

impl Iterator for Generator {
    type Item = Generated;

    fn next(&mut self) -> Option<Generated> {
        if self.next >= self.shape.contacts {
            return None;
        }
        let i = self.next;
        self.next += 1;
        let plan = match self.rng.gen_range(0..100) {
            0..=9 => "pro",
            10..=14 => "team",
            _ => "free",
        };
        let first = FIRST_NAMES[self.rng.gen_range(0..FIRST_NAMES.len())];
        let country = self.weighted(COUNTRIES);
        let age: u32 = self.rng.gen_range(18..=80);
        let signed_up = self.days_ago(730);
        let subscribed = self.rng.gen_bool(0.9);
        let mut data = Map::new();
        data.insert("name".into(), json!(first));
        data.insert("plan".into(), json!(plan));
        data.insert("country".into(), json!(country));
        data.insert("age".into(), json!(age));
        data.insert(
            "signedUpAt".into(),
            json!(signed_up.to_rfc3339_opts(SecondsFormat::Millis, true)),
        );
        let email = EmailAddress::parse(&format!("c{i}@scale.test"))
            .unwrap_or_else(|e| panic!("generated address c{i}@scale.test: {e}"));
        let contact = Contact::new(
            &SystemClock,
            &self.workspace_id,
            email,
            subscribed,
            data,
            false,
            self.now,
        );
        let mut events = Vec::new();
        if self.rng.gen_bool(self.shape.event_share) {
            for _ in 0..self.rng.gen_range(1..=3) {
                let name = self.weighted(EVENTS);
                let at = self.days_ago(90);
                events.push(Event::new(
                    &SystemClock,
                    &self.workspace_id,
                    name,
                    Value::Object(Map::new()),
                    Some(contact.id.clone()),
                    None,
                    at,
                ));
            }
        }
        Some(Generated { contact, events })
    }
}
