//! Segments: the condition language (parse, evaluate), slugs, and generators for tests.
//!
//! Everything here is pure: no I/O, no clock (callers pass `now`).

mod condition;
mod evaluate;
pub mod generate;
mod parse;
mod slug;
mod timestamp;

pub use condition::{
    Activity, Condition, Field, FieldKind, Filter, Group, Logic, Operator, TimeUnit,
    MAX_WINDOW_SECONDS,
};
pub use evaluate::{filter_matches, matches, ActivityFact, ContactFacts, EventFact};
pub use parse::{parse_condition, referenced_segments, uses_time, MAX_DEPTH, MAX_FILTERS};
pub use slug::slug;
pub use timestamp::{parse_timestamp, TIMESTAMP_PATTERN};
