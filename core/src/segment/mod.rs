//! Segments: the condition language (parse, evaluate), slugs, and generators for tests.
//!
//! Everything here is pure: no I/O, no clock (callers pass `now`).

mod condition;
mod evaluate;
pub mod generate;
mod parse;
#[cfg(feature = "openapi")]
mod schema;
mod slug;
mod timestamp;

pub use condition::{
    Activity, Condition, Field, FieldKind, Filter, Group, Logic, Operand, Operator, TimeUnit,
    MAX_WINDOW_SECONDS,
};
pub use evaluate::{filter_matches, matches, ActivityFact, ContactFacts, EventFact};
pub use parse::{parse_condition, referenced_segments, uses_time, MAX_DEPTH, MAX_FILTERS};
pub use slug::slug;
pub use timestamp::{parse_timestamp, TIMESTAMP_PATTERN};

impl<'de> serde::Deserialize<'de> for Condition {
    /// Reads the API shape back, with the same rules as [`parse_condition`].
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        parse_condition(&value, "condition").map_err(|errors| {
            let first = errors
                .first()
                .map(|e| format!("{}: {}", e.field, e.message))
                .unwrap_or_default();
            serde::de::Error::custom(format!("invalid segment condition ({first})"))
        })
    }
}

/// The activity a stored email event stands for (`email.open` is `Opened`, ...).
pub fn activity_of_event(name: &str) -> Option<Activity> {
    match name {
        "email.sent" => Some(Activity::Sent),
        "email.delivery" => Some(Activity::Delivered),
        "email.open" => Some(Activity::Opened),
        "email.click" => Some(Activity::Clicked),
        "email.bounce" => Some(Activity::Bounced),
        "email.complaint" => Some(Activity::Complained),
        _ => None,
    }
}
