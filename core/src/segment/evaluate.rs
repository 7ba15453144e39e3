//! Whether a contact matches a condition, given everything the condition can look at.
//!
//! This is the reference semantics: a database adapter that evaluates conditions in SQL
//! must give the same answer for every contact (the conformance suite compares them).
//!
//! # Structure
//! - A condition with no groups matches, whatever its `logic`. Otherwise `AND` needs every
//!   group to match and `OR` at least one.
//! - A group matches when every filter matches and its nested condition (if any) matches;
//!   a group with neither matches.
//!
//! # Filters
//! Every negated operator is exactly the negation of its positive form, in all cases
//! (missing values included): `notEquals` = !`equals`, `notContains` = !`contains`,
//! `notExists` = !`exists`, `notTriggered` = !`triggered`, `notTriggeredWithin` =
//! !`triggeredWithin`, `notMemberOfSegment` = !`memberOfSegment`.
//!
//! `cutoff` is [`Filter::cutoff`]`(now)` = `now - value × unit` (whole milliseconds).
//! "Fold" is Unicode lower-casing character by character (`char::to_lowercase`).
//! "Timestamp" means a string accepted by [`parse_timestamp`], compared as an instant.
//!
//! | field | operator | true when |
//! |---|---|---|
//! | `email` | `equals` | fold(value) = address (addresses are stored lower-case) |
//! | `email` | `contains` | address contains fold(value) as a substring |
//! | `subscribed` | `equals` | `subscribed` = value |
//! | `createdAt`, `updatedAt` | `greaterThan` etc. | the time compared with the timestamp value |
//! | `createdAt`, `updatedAt` | `within` | time ≥ cutoff |
//! | `createdAt`, `updatedAt` | `olderThan` | time < cutoff |
//! | `data.p` | `exists` | the path resolves to a non-null value |
//! | `data.p` | `equals` | the path's value is JSON-equal to value (below) |
//! | `data.p` | `contains` | a string containing fold(value) after folding, when value is a string; or an array with an element JSON-equal to value |
//! | `data.p` | `greaterThan` etc. | number value: a number compared numerically; timestamp value: a timestamp string compared chronologically |
//! | `data.p` | `within` / `olderThan` | a timestamp string ≥ cutoff / < cutoff |
//! | `event.n` | `triggered` | at least one event named exactly `n` |
//! | `event.n` | `triggeredWithin` | at least one event named `n` with `at` ≥ cutoff |
//! | `event.n` | `triggeredOlderThan` | at least one event named `n` with `at` < cutoff |
//! | `email.a` | the `triggered*` operators | as for events, over activity facts of kind `a` |
//! | `segment.id` | `memberOfSegment` | `id` is in the contact's segment set |
//!
//! Data paths follow object keys only (`data.a.b` is `data["a"]["b"]`); a path through a
//! non-object (an array, a string, ...) or ending at JSON `null` is missing, and a missing
//! path makes `equals`, `contains`, `exists`, comparisons, `within` and `olderThan` false.
//!
//! JSON-equal: two strings with the same characters (case-sensitive), two numbers with the
//! same value as 64-bit floats (`1` = `1.0`), or two equal booleans; anything else,
//! including values of different types (`"1"` and `1`), is unequal. A filter of a type the
//! table does not list (possible only in a hand-built condition) is false, or true for the
//! negated operators.

use std::cmp::Ordering;
use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::condition::{Activity, Condition, Field, Filter, Group, Logic, Operator};
use super::timestamp::parse_timestamp;
use crate::model::{Contact, SegmentId};

/// One of the contact's events, as far as segments care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFact {
    /// Event name, e.g. `purchase` (matched exactly by `event.<name>`).
    pub name: String,
    /// When it happened.
    pub at: DateTime<Utc>,
}

/// One piece of the contact's email activity (a message sent, opened, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityFact {
    /// What happened.
    pub activity: Activity,
    /// When it happened.
    pub at: DateTime<Utc>,
}

/// Everything a condition can look at for one contact.
#[derive(Debug, Clone, Copy)]
pub struct ContactFacts<'a> {
    /// The contact itself (email, subscription, data, timestamps).
    pub contact: &'a Contact,
    /// All of the contact's events, in any order.
    pub events: &'a [EventFact],
    /// All of the contact's email activity, in any order.
    pub activity: &'a [ActivityFact],
    /// Ids of the segments the contact currently belongs to.
    pub segments: &'a HashSet<SegmentId>,
}

/// Whether the contact described by `facts` matches `condition` at time `now`, by the rules
/// in this module's documentation.
pub fn matches(condition: &Condition, facts: &ContactFacts, now: DateTime<Utc>) -> bool {
    let group = |g: &Group| group_matches(g, facts, now);
    match condition.logic {
        _ if condition.groups.is_empty() => true,
        Logic::And => condition.groups.iter().all(group),
        Logic::Or => condition.groups.iter().any(group),
    }
}

fn group_matches(group: &Group, facts: &ContactFacts, now: DateTime<Utc>) -> bool {
    group.filters.iter().all(|f| filter_matches(f, facts, now))
        && group
            .conditions
            .as_deref()
            .is_none_or(|c| matches(c, facts, now))
}

/// Whether one filter holds for the contact at `now`.
pub fn filter_matches(filter: &Filter, facts: &ContactFacts, now: DateTime<Utc>) -> bool {
    use Operator as O;
    let (positive, negated) = match filter.op {
        O::NotEquals => (O::Equals, true),
        O::NotContains => (O::Contains, true),
        O::NotExists => (O::Exists, true),
        O::NotTriggered => (O::Triggered, true),
        O::NotTriggeredWithin => (O::TriggeredWithin, true),
        O::NotMemberOfSegment => (O::MemberOfSegment, true),
        op => (op, false),
    };
    holds(filter, positive, facts, now) != negated
}

fn holds(filter: &Filter, op: Operator, facts: &ContactFacts, now: DateTime<Utc>) -> bool {
    let contact = facts.contact;
    let value = filter.value.as_ref();
    match &filter.field {
        Field::Email => {
            let Some(Value::String(v)) = value else {
                return false;
            };
            let address = contact.email.as_str();
            match op {
                Operator::Equals => fold(v) == address,
                Operator::Contains => address.contains(&fold(v)),
                _ => false,
            }
        }
        Field::Subscribed => {
            op == Operator::Equals && value.and_then(Value::as_bool) == Some(contact.subscribed)
        }
        Field::CreatedAt => time_holds(filter, op, contact.created_at, now),
        Field::UpdatedAt => time_holds(filter, op, contact.updated_at, now),
        Field::Data(path) => {
            let Some(target) = resolve(&contact.data, path) else {
                return false;
            };
            match (op, value) {
                (Operator::Exists, _) => true,
                (Operator::Equals, Some(v)) => json_eq(target, v),
                (Operator::Contains, Some(v)) => contains(target, v),
                (Operator::Within | Operator::OlderThan, _) => target
                    .as_str()
                    .and_then(parse_timestamp)
                    .is_some_and(|at| time_holds(filter, op, at, now)),
                (_, Some(v)) => compare(target, v).is_some_and(|o| ordering_holds(op, o)),
                _ => false,
            }
        }
        Field::Event(name) => occurred(
            filter,
            op,
            facts
                .events
                .iter()
                .filter(|e| &e.name == name)
                .map(|e| e.at),
            now,
        ),
        Field::EmailActivity(kind) => occurred(
            filter,
            op,
            facts
                .activity
                .iter()
                .filter(|a| a.activity == *kind)
                .map(|a| a.at),
            now,
        ),
        Field::Segment(id) => op == Operator::MemberOfSegment && facts.segments.contains(id),
    }
}

/// Unicode lower case, character by character.
fn fold(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).collect()
}

/// The value at `path` in `data`, following object keys only; `null` counts as missing.
fn resolve<'v>(data: &'v serde_json::Map<String, Value>, path: &[String]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let mut current = data.get(first)?;
    for key in rest {
        current = current.as_object()?.get(key)?;
    }
    (!current.is_null()).then_some(current)
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => false,
    }
}

fn contains(target: &Value, value: &Value) -> bool {
    match (target, value) {
        (Value::String(s), Value::String(needle)) => fold(s).contains(&fold(needle)),
        (Value::Array(items), v) => items.iter().any(|item| json_eq(item, v)),
        _ => false,
    }
}

/// `target` against `value`: numerically for a number value, chronologically for a
/// timestamp value; `None` when the target is not of the same kind.
fn compare(target: &Value, value: &Value) -> Option<Ordering> {
    match (target, value) {
        (Value::Number(t), Value::Number(v)) => t.as_f64()?.partial_cmp(&v.as_f64()?),
        (Value::String(t), Value::String(v)) => Some(parse_timestamp(t)?.cmp(&parse_timestamp(v)?)),
        _ => None,
    }
}

fn ordering_holds(op: Operator, ordering: Ordering) -> bool {
    match op {
        Operator::GreaterThan => ordering == Ordering::Greater,
        Operator::LessThan => ordering == Ordering::Less,
        Operator::GreaterThanOrEqual => ordering != Ordering::Less,
        Operator::LessThanOrEqual => ordering != Ordering::Greater,
        _ => false,
    }
}

/// A contact timestamp (or a timestamp found in data) against the filter.
fn time_holds(filter: &Filter, op: Operator, at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    match op {
        Operator::Within => filter.cutoff(now).is_some_and(|cutoff| at >= cutoff),
        Operator::OlderThan => filter.cutoff(now).is_some_and(|cutoff| at < cutoff),
        _ => filter
            .value
            .as_ref()
            .and_then(Value::as_str)
            .and_then(parse_timestamp)
            .is_some_and(|v| ordering_holds(op, at.cmp(&v))),
    }
}

/// The occurrence operators over the times of the matching events or activity.
fn occurred(
    filter: &Filter,
    op: Operator,
    mut times: impl Iterator<Item = DateTime<Utc>>,
    now: DateTime<Utc>,
) -> bool {
    match op {
        Operator::Triggered => times.next().is_some(),
        Operator::TriggeredWithin => filter
            .cutoff(now)
            .is_some_and(|cutoff| times.any(|at| at >= cutoff)),
        Operator::TriggeredOlderThan => filter
            .cutoff(now)
            .is_some_and(|cutoff| times.any(|at| at < cutoff)),
        _ => false,
    }
}

#[cfg(test)]
#[path = "evaluate_tests.rs"]
mod tests;
