//! Segment conditions as SQL: `contacts_matching` and `count_matching`.
//!
//! A condition is first lowered to a small predicate tree ([`Pred`]) that mirrors
//! `posthorn_core::segment::matches` branch by branch: everything the evaluator decides
//! from the filter alone (a value of the wrong type, an impossible window) becomes a
//! constant, and what is left is rendered (in [`render`]) with fixed SQL text and a bound
//! parameter for every value. Every rendered leaf is `1` or `0`, never SQL `NULL`, so
//! `NOT` is exactly the evaluator's `!`.
//!
//! Which index serves what (contacts aliased `c`):
//! - scope and order: the `contacts` primary key (workspace_id, id), walked as the keyset
//!   `id > after_id AND id <= until_id ORDER BY id`;
//! - `email equals`: unique (workspace_id, email);
//! - `event.<name>` / `email.<activity>`: `EXISTS` probes on `events_by_contact_name`
//!   (workspace_id, contact_id, name, created_at), the window bound a range on its last
//!   column;
//! - `segment.<id>`: `EXISTS` probes on the `segment_members` primary key;
//! - `data.<path>` and `email contains` are evaluated per row with JSON1 (no index).
//!
//! Where SQL and the evaluator could disagree, and how that is avoided:
//! - data paths follow object keys only: a JSON path of quoted labels (`$."a"."b"`), which
//!   never indexes into an array, and JSON `null` counts as missing;
//! - numbers compare as `REAL` (the evaluator's `f64`), so `1` = `1.0`, and only values
//!   whose `json_type` is `integer` or `real` are compared;
//! - timestamps in data are recognised by the core's own `TIMESTAMP_PATTERN` (SQLite's
//!   `REGEXP`, the same `regex` crate) and a real calendar date, and turned into
//!   microseconds with integer arithmetic (see [`render`]);
//! - window cutoffs are computed in Rust with `Filter::cutoff(now)` and rounded up to the
//!   next microsecond, the precision of stored times (for a microsecond `t`,
//!   `t >= x` ⟺ `t >= ceil(x)` and `t < x` ⟺ `t < ceil(x)`);
//! - filter values are folded to lower case in Rust (`char::to_lowercase`); a stored data
//!   string is matched case-insensitively by the `regex` crate (Unicode simple case
//!   folding), since SQLite's `lower()` folds ASCII only. That is the one known
//!   difference: for the few characters whose lower case is several characters (`İ`) or
//!   that fold together without lowering to each other (`ς` and `σ`), `data.* contains`
//!   can differ.

mod render;

use chrono::{DateTime, Duration, Utc};
use posthorn_core::model::{Contact, INTERNAL_EVENT_NAMES};
use posthorn_core::ports::{MatchQuery, StoreError};
use posthorn_core::segment::{
    activity_of_event, parse_timestamp, Activity, Condition, Field, Filter, Group, Logic, Operator,
};
use serde_json::Value;
use sqlx::{QueryBuilder, Sqlite, SqlitePool};

use crate::error;
use crate::rows::{self, contact_cols, count, sql_limit};

pub(crate) use render::push_timestamp;

/// Contacts matching `condition` at `now`, ascending by id, within `query`'s bounds.
pub(crate) async fn contacts_matching(
    pool: &SqlitePool,
    workspace_id: &str,
    condition: &Condition,
    query: &MatchQuery,
    now: DateTime<Utc>,
) -> Result<Vec<Contact>, StoreError> {
    let mut sql =
        QueryBuilder::<Sqlite>::new(concat!("SELECT ", contact_cols!(), " FROM contacts c"));
    push_where(&mut sql, workspace_id, query.audience_only, condition, now);
    if let Some(after) = &query.after_id {
        sql.push(" AND c.id > ").push_bind(after.as_str());
    }
    if let Some(until) = &query.until_id {
        sql.push(" AND c.id <= ").push_bind(until.as_str());
    }
    sql.push(" ORDER BY c.id LIMIT ")
        .push_bind(sql_limit(query.limit));
    let found = sql.build().fetch_all(pool).await.map_err(error::store)?;
    rows::all(&found, rows::contact)
}

/// How many contacts match `condition` at `now`.
pub(crate) async fn count_matching(
    pool: &SqlitePool,
    workspace_id: &str,
    condition: &Condition,
    audience_only: bool,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    let mut sql = QueryBuilder::<Sqlite>::new("SELECT count(*) FROM contacts c");
    push_where(&mut sql, workspace_id, audience_only, condition, now);
    let n: i64 = sql
        .build_query_scalar()
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok(count(n))
}

/// ` WHERE` scope `AND (condition)`.
fn push_where(
    sql: &mut QueryBuilder<Sqlite>,
    workspace_id: &str,
    audience_only: bool,
    condition: &Condition,
    now: DateTime<Utc>,
) {
    sql.push(" WHERE c.workspace_id = ")
        .push_bind(workspace_id.to_string());
    if audience_only {
        sql.push(" AND c.subscribed = 1 AND c.status = 'ACTIVE'");
    }
    sql.push(" AND ");
    lower(condition, now).render(sql);
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Gt,
    Lt,
    Ge,
    Le,
}

impl Cmp {
    /// The ordering operators (`greaterThan`, ...); `None` for every other operator.
    fn of(op: Operator) -> Option<Cmp> {
        match op {
            Operator::GreaterThan => Some(Cmp::Gt),
            Operator::LessThan => Some(Cmp::Lt),
            Operator::GreaterThanOrEqual => Some(Cmp::Ge),
            Operator::LessThanOrEqual => Some(Cmp::Le),
            _ => None,
        }
    }
}

/// A contact timestamp column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeColumn {
    CreatedAt,
    UpdatedAt,
}

/// A condition lowered to what SQL will test. Every leaf renders to a non-`NULL` boolean.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pred {
    /// Decided without looking at the contact.
    Const(bool),
    Not(Box<Pred>),
    And(Vec<Pred>),
    Or(Vec<Pred>),
    /// `c.email = folded value`.
    EmailEquals(String),
    /// The email holds the (folded) needle.
    EmailContains(String),
    /// `c.subscribed = value`.
    Subscribed(bool),
    /// `c.<column> <cmp> at`.
    ContactTime(TimeColumn, Cmp, DateTime<Utc>),
    /// The data path holds a non-null value.
    DataExists(Vec<String>),
    /// The data path holds exactly this string.
    DataText(Vec<String>, String),
    /// The data path holds this boolean.
    DataBool(Vec<String>, bool),
    /// The data path holds a number that compares so with the value (as `REAL`).
    DataNumber(Vec<String>, Cmp, f64),
    /// The data path holds a timestamp string that compares so with the instant.
    DataTime(Vec<String>, Cmp, DateTime<Utc>),
    /// The data path holds a string that contains the (folded) needle, ignoring case.
    DataSubstring(Vec<String>, String),
    /// The data path holds an array with this string at its top level.
    DataElementText(Vec<String>, String),
    /// The data path holds an array with this boolean at its top level.
    DataElementBool(Vec<String>, bool),
    /// The data path holds an array with a number equal to the value (as `REAL`).
    DataElementNumber(Vec<String>, f64),
    /// The contact has an event with one of these names (and a time comparing so).
    Occurred(Vec<String>, Option<(Cmp, DateTime<Utc>)>),
    /// The contact is a stored member of the segment.
    Member(String),
}

impl Pred {
    fn not(p: Pred) -> Pred {
        match p {
            Pred::Const(b) => Pred::Const(!b),
            Pred::Not(inner) => *inner,
            p => Pred::Not(Box::new(p)),
        }
    }

    /// Conjunction with constants folded (empty = true).
    fn all(preds: impl IntoIterator<Item = Pred>) -> Pred {
        let mut kept = Vec::new();
        for p in preds {
            match p {
                Pred::Const(true) => {}
                Pred::Const(false) => return Pred::Const(false),
                p => kept.push(p),
            }
        }
        match kept.len() {
            0 => Pred::Const(true),
            1 => kept.pop().unwrap_or(Pred::Const(true)),
            _ => Pred::And(kept),
        }
    }

    /// Disjunction with constants folded (empty = false).
    fn any(preds: impl IntoIterator<Item = Pred>) -> Pred {
        let mut kept = Vec::new();
        for p in preds {
            match p {
                Pred::Const(false) => {}
                Pred::Const(true) => return Pred::Const(true),
                p => kept.push(p),
            }
        }
        match kept.len() {
            0 => Pred::Const(false),
            1 => kept.pop().unwrap_or(Pred::Const(false)),
            _ => Pred::Or(kept),
        }
    }
}

/// The condition as a predicate (`matches`): no groups match everything.
pub(crate) fn lower(condition: &Condition, now: DateTime<Utc>) -> Pred {
    if condition.groups.is_empty() {
        return Pred::Const(true);
    }
    let groups = condition.groups.iter().map(|g| lower_group(g, now));
    match condition.logic {
        Logic::And => Pred::all(groups),
        Logic::Or => Pred::any(groups),
    }
}

fn lower_group(group: &Group, now: DateTime<Utc>) -> Pred {
    let filters = group.filters.iter().map(|f| lower_filter(f, now));
    let nested = group.conditions.as_deref().map(|c| lower(c, now));
    Pred::all(filters.chain(nested))
}

/// One filter (`filter_matches`): negated operators are exactly `!` of their positive form.
pub(crate) fn lower_filter(filter: &Filter, now: DateTime<Utc>) -> Pred {
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
    let holds = holds(filter, positive, now);
    if negated {
        Pred::not(holds)
    } else {
        holds
    }
}

/// The positive operator `op` of `filter` (`holds` in the evaluator).
fn holds(filter: &Filter, op: Operator, now: DateTime<Utc>) -> Pred {
    let value = filter.value.as_ref();
    match &filter.field {
        Field::Email => {
            let Some(Value::String(v)) = value else {
                return Pred::Const(false);
            };
            let needle = fold(v);
            match op {
                Operator::Equals => Pred::EmailEquals(needle),
                Operator::Contains => Pred::EmailContains(needle),
                _ => Pred::Const(false),
            }
        }
        Field::Subscribed => match (op, value.and_then(Value::as_bool)) {
            (Operator::Equals, Some(b)) => Pred::Subscribed(b),
            _ => Pred::Const(false),
        },
        Field::CreatedAt => contact_time(filter, op, TimeColumn::CreatedAt, now),
        Field::UpdatedAt => contact_time(filter, op, TimeColumn::UpdatedAt, now),
        Field::Data(path) => {
            if path.is_empty() {
                return Pred::Const(false);
            }
            data(filter, op, path, now)
        }
        Field::Event(name) => occurred(filter, op, vec![name.clone()], now),
        Field::EmailActivity(kind) => occurred(filter, op, activity_event_names(*kind), now),
        Field::Segment(id) => {
            if op == Operator::MemberOfSegment {
                Pred::Member(id.to_string())
            } else {
                Pred::Const(false)
            }
        }
    }
}

/// The stored event names that stand for `kind` (`email.open` for `Opened`, ...).
fn activity_event_names(kind: Activity) -> Vec<String> {
    INTERNAL_EVENT_NAMES
        .iter()
        .filter(|name| activity_of_event(name) == Some(kind))
        .map(|name| name.to_string())
        .collect()
}

/// Unicode lower case, character by character (the evaluator's `fold`).
fn fold(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).collect()
}

/// `filter.cutoff(now)` rounded up to a whole microsecond (see the module notes).
fn cutoff(filter: &Filter, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    filter.cutoff(now).map(ceil_micros)
}

fn ceil_micros(at: DateTime<Utc>) -> DateTime<Utc> {
    let extra = at.timestamp_subsec_nanos() % 1_000;
    if extra == 0 {
        return at;
    }
    at.checked_add_signed(Duration::nanoseconds(i64::from(1_000 - extra)))
        .unwrap_or(at)
}

/// `createdAt` / `updatedAt` (`time_holds`).
fn contact_time(filter: &Filter, op: Operator, column: TimeColumn, now: DateTime<Utc>) -> Pred {
    let compare = match op {
        Operator::Within => cutoff(filter, now).map(|at| (Cmp::Ge, at)),
        Operator::OlderThan => cutoff(filter, now).map(|at| (Cmp::Lt, at)),
        _ => Cmp::of(op).zip(
            filter
                .value
                .as_ref()
                .and_then(Value::as_str)
                .and_then(parse_timestamp),
        ),
    };
    match compare {
        Some((cmp, at)) => Pred::ContactTime(column, cmp, at),
        None => Pred::Const(false),
    }
}

/// `data.<path>`: a missing path (or JSON `null`) makes every positive operator false.
fn data(filter: &Filter, op: Operator, path: &[String], now: DateTime<Utc>) -> Pred {
    let path = path.to_vec();
    match (op, filter.value.as_ref()) {
        (Operator::Exists, _) => Pred::DataExists(path),
        (Operator::Equals, Some(v)) => json_equals(path, v),
        (Operator::Contains, Some(v)) => contains(path, v),
        (Operator::Within, _) => match cutoff(filter, now) {
            Some(at) => Pred::DataTime(path, Cmp::Ge, at),
            None => Pred::Const(false),
        },
        (Operator::OlderThan, _) => match cutoff(filter, now) {
            Some(at) => Pred::DataTime(path, Cmp::Lt, at),
            None => Pred::Const(false),
        },
        (_, Some(v)) => {
            let Some(cmp) = Cmp::of(op) else {
                return Pred::Const(false);
            };
            match v {
                Value::Number(n) => match n.as_f64() {
                    Some(n) => Pred::DataNumber(path, cmp, n),
                    None => Pred::Const(false),
                },
                Value::String(s) => match parse_timestamp(s) {
                    Some(at) => Pred::DataTime(path, cmp, at),
                    None => Pred::Const(false),
                },
                _ => Pred::Const(false),
            }
        }
        _ => Pred::Const(false),
    }
}

/// The path's value is JSON-equal to `v` (`json_eq`): same string, same boolean, or a
/// number with the same `f64` value.
fn json_equals(path: Vec<String>, v: &Value) -> Pred {
    match v {
        Value::String(s) => Pred::DataText(path, s.clone()),
        Value::Bool(b) => Pred::DataBool(path, *b),
        Value::Number(n) => match n.as_f64() {
            Some(n) => Pred::DataNumber(path, Cmp::Eq, n),
            None => Pred::Const(false),
        },
        _ => Pred::Const(false),
    }
}

/// `contains`: a string value is a case-insensitive substring of a string, or an element
/// of an array; numbers and booleans are elements of an array. Array elements are matched
/// at the top level of the array only (`[["vip"]]` does not contain `"vip"`).
fn contains(path: Vec<String>, v: &Value) -> Pred {
    match v {
        Value::String(s) => {
            let element = Pred::DataElementText(path.clone(), s.clone());
            Pred::any([Pred::DataSubstring(path, fold(s)), element])
        }
        Value::Bool(b) => Pred::DataElementBool(path, *b),
        Value::Number(n) => match n.as_f64() {
            Some(n) => Pred::DataElementNumber(path, n),
            None => Pred::Const(false),
        },
        _ => Pred::Const(false),
    }
}

/// `event.<name>` and `email.<activity>` (`occurred`).
fn occurred(filter: &Filter, op: Operator, names: Vec<String>, now: DateTime<Utc>) -> Pred {
    if names.is_empty() {
        return Pred::Const(false);
    }
    match op {
        Operator::Triggered => Pred::Occurred(names, None),
        Operator::TriggeredWithin => match cutoff(filter, now) {
            Some(at) => Pred::Occurred(names, Some((Cmp::Ge, at))),
            None => Pred::Const(false),
        },
        Operator::TriggeredOlderThan => match cutoff(filter, now) {
            Some(at) => Pred::Occurred(names, Some((Cmp::Lt, at))),
            None => Pred::Const(false),
        },
        _ => Pred::Const(false),
    }
}

#[cfg(test)]
mod tests;
