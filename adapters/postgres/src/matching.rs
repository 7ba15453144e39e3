//! Segment conditions as SQL: `contacts_matching` and `count_matching`.
//!
//! A condition is first lowered to a small predicate tree ([`Pred`]) that mirrors
//! `posthorn_core::segment::matches` branch by branch: everything the evaluator decides
//! from the filter alone (a value of the wrong type, an impossible window, a string holding
//! NUL, which PostgreSQL cannot store) becomes a constant, and what is left is rendered with
//! `QueryBuilder::push` of fixed SQL text and `push_bind` for every value. Every rendered
//! leaf is `true` or `false`, never SQL `NULL`, so `NOT` is exactly the evaluator's `!`.
//!
//! Which index serves what (contacts aliased `c`):
//! - scope and order: `contacts` primary key (workspace_id, id) — the keyset walk
//!   `id > after_id AND id <= until_id ORDER BY id`;
//! - `email equals`: unique (workspace_id, email); `email contains`: `contacts_email_trgm`
//!   (pg_trgm GIN, when installed) through `LIKE`;
//! - `data.<path> equals` a string or boolean, and `contains` of a string or boolean in an
//!   array: `contacts_data` (GIN `jsonb_path_ops`) through `c.data @> {"a":{"b":value}}`;
//!   numbers, substrings, timestamps and `exists` are evaluated per row (no index);
//! - `event.<name>` / `email.<activity>`: `EXISTS` probes on `events_by_contact_name`
//!   (workspace_id, contact_id, name, created_at), the window bound being a range on its
//!   last column;
//! - `segment.<id>`: `EXISTS` probes on the `segment_members` primary key
//!   (workspace_id, segment_id, contact_id).
//!
//! A lone `EXISTS` (or `NOT EXISTS`) becomes a semi- (anti-) join, and under `OR` the
//! planner may hash the subquery once instead of probing per contact; both are fine.
//!
//! Where SQL and the evaluator could disagree, and how that is avoided:
//! - data paths follow object keys only: `->` with a text key (never `#>`, which would
//!   index into arrays), and JSON `null` counts as missing;
//! - numbers compare as `float8` (the evaluator's `f64`), so `1` = `1.0`; casts are
//!   guarded by `CASE` on `jsonb_typeof`, so no row can raise a cast error;
//! - timestamps in data go through `posthorn_timestamp` (migration 0002), which accepts
//!   exactly what `parse_timestamp` accepts and returns `NULL` otherwise;
//! - window cutoffs are computed in Rust with `Filter::cutoff(now)` and rounded up to the
//!   next microsecond, the precision of stored times (for a microsecond `t`,
//!   `t >= x` ⟺ `t >= ceil(x)` and `t < x` ⟺ `t < ceil(x)`);
//! - filter values are folded to lower case in Rust (`char::to_lowercase`); only a stored
//!   data string is folded in SQL, with `lower()`. That is the one known difference: for a
//!   few characters (e.g. `İ`, which Rust lowers to two characters) and under a database
//!   locale whose `lower()` is ASCII-only, `data.* contains` can differ.

use chrono::{DateTime, Duration, Utc};
use posthorn_core::model::{Contact, INTERNAL_EVENT_NAMES};
use posthorn_core::ports::{MatchQuery, StoreError};
use posthorn_core::segment::{
    activity_of_event, parse_timestamp, Activity, Condition, Field, Filter, Group, Logic, Operator,
};
use serde_json::{Map, Value};
use sqlx::types::Json;
use sqlx::{PgPool, Postgres, QueryBuilder};

use crate::contacts::{sql_limit, substring_pattern};
use crate::error;
use crate::rows::{self, contact_cols};

/// Contacts matching `condition` at `now`, ascending by id, within `query`'s bounds.
pub(crate) async fn contacts_matching(
    pool: &PgPool,
    workspace_id: &str,
    condition: &Condition,
    query: &MatchQuery,
    now: DateTime<Utc>,
) -> Result<Vec<Contact>, StoreError> {
    let mut sql =
        QueryBuilder::<Postgres>::new(concat!("SELECT ", contact_cols!(), " FROM contacts c"));
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
    pool: &PgPool,
    workspace_id: &str,
    condition: &Condition,
    audience_only: bool,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    let mut sql = QueryBuilder::<Postgres>::new("SELECT count(*) FROM contacts c");
    push_where(&mut sql, workspace_id, audience_only, condition, now);
    let n: i64 = sql
        .build_query_scalar()
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// ` WHERE` scope `AND (condition)`.
fn push_where(
    sql: &mut QueryBuilder<Postgres>,
    workspace_id: &str,
    audience_only: bool,
    condition: &Condition,
    now: DateTime<Utc>,
) {
    sql.push(" WHERE c.workspace_id = ")
        .push_bind(workspace_id.to_string());
    if audience_only {
        sql.push(" AND c.subscribed AND c.status = 'ACTIVE'");
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
    fn sql(self) -> &'static str {
        match self {
            Cmp::Eq => " = ",
            Cmp::Gt => " > ",
            Cmp::Lt => " < ",
            Cmp::Ge => " >= ",
            Cmp::Le => " <= ",
        }
    }

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
    /// `c.email LIKE pattern` (a literal substring pattern).
    EmailLike(String),
    /// `c.subscribed = value`.
    Subscribed(bool),
    /// `c.<column> <cmp> at`.
    ContactTime(TimeColumn, Cmp, DateTime<Utc>),
    /// The data path holds a non-null value.
    DataExists(Vec<String>),
    /// `c.data @> document` (a nested object ending in a string, boolean or array of one).
    DataContains(Value),
    /// The data path holds a number that compares so with the value (as `float8`).
    DataNumber(Vec<String>, Cmp, f64),
    /// The data path holds a timestamp string that compares so with the instant.
    DataTime(Vec<String>, Cmp, DateTime<Utc>),
    /// The data path holds a string whose lower case contains the (folded) needle.
    DataSubstring(Vec<String>, String),
    /// The data path holds an array with a number equal to the value (as `float8`).
    DataArrayNumber(Vec<String>, f64),
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

    /// Appends this predicate as a parenthesised SQL boolean.
    fn render(&self, sql: &mut QueryBuilder<Postgres>) {
        match self {
            Pred::Const(true) => {
                sql.push("TRUE");
            }
            Pred::Const(false) => {
                sql.push("FALSE");
            }
            Pred::Not(inner) => {
                sql.push("(NOT ");
                inner.render(sql);
                sql.push(")");
            }
            Pred::And(items) | Pred::Or(items) => {
                let joiner = if matches!(self, Pred::And(_)) {
                    " AND "
                } else {
                    " OR "
                };
                sql.push("(");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        sql.push(joiner);
                    }
                    item.render(sql);
                }
                sql.push(")");
            }
            Pred::EmailEquals(address) => {
                sql.push("(c.email = ").push_bind(address.clone()).push(")");
            }
            Pred::EmailLike(pattern) => {
                sql.push("(c.email LIKE ")
                    .push_bind(pattern.clone())
                    .push(" ESCAPE '\\')");
            }
            Pred::Subscribed(value) => {
                sql.push("(c.subscribed = ").push_bind(*value).push(")");
            }
            Pred::ContactTime(column, cmp, at) => {
                sql.push(match column {
                    TimeColumn::CreatedAt => "(c.created_at",
                    TimeColumn::UpdatedAt => "(c.updated_at",
                });
                sql.push(cmp.sql()).push_bind(*at).push(")");
            }
            Pred::DataExists(path) => {
                sql.push("COALESCE(jsonb_typeof(");
                push_path(sql, path);
                sql.push(") <> 'null', FALSE)");
            }
            Pred::DataContains(document) => {
                sql.push("(c.data @> ")
                    .push_bind(Json(document.clone()))
                    .push(")");
            }
            Pred::DataNumber(path, cmp, value) => {
                sql.push("(CASE WHEN jsonb_typeof(");
                push_path(sql, path);
                sql.push(") = 'number' THEN (");
                push_path(sql, path);
                sql.push(")::float8")
                    .push(cmp.sql())
                    .push_bind(*value)
                    .push(" ELSE FALSE END)");
            }
            Pred::DataTime(path, cmp, at) => {
                sql.push("COALESCE(posthorn_timestamp(CASE WHEN jsonb_typeof(");
                push_path(sql, path);
                sql.push(") = 'string' THEN ");
                push_path(sql, path);
                sql.push(" #>> '{}' END)")
                    .push(cmp.sql())
                    .push_bind(*at)
                    .push(", FALSE)");
            }
            Pred::DataSubstring(path, needle) => {
                sql.push("(CASE WHEN jsonb_typeof(");
                push_path(sql, path);
                sql.push(") = 'string' THEN strpos(lower(");
                push_path(sql, path);
                sql.push(" #>> '{}'), ")
                    .push_bind(needle.clone())
                    .push(") > 0 ELSE FALSE END)");
            }
            Pred::DataArrayNumber(path, value) => {
                // The CASE hands `jsonb_array_elements` an array whatever the row holds.
                sql.push("EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(");
                push_path(sql, path);
                sql.push(") = 'array' THEN ");
                push_path(sql, path);
                sql.push(
                    " ELSE '[]'::jsonb END) AS item(v) \
                     WHERE CASE WHEN jsonb_typeof(item.v) = 'number' THEN item.v::float8 = ",
                )
                .push_bind(*value)
                .push(" ELSE FALSE END)");
            }
            Pred::Occurred(names, window) => {
                sql.push(
                    "EXISTS (SELECT 1 FROM events e WHERE e.workspace_id = c.workspace_id \
                     AND e.contact_id = c.id AND e.name",
                );
                match names.as_slice() {
                    [name] => {
                        sql.push(" = ").push_bind(name.clone());
                    }
                    _ => {
                        sql.push(" = ANY(").push_bind(names.clone()).push(")");
                    }
                }
                if let Some((cmp, at)) = window {
                    sql.push(" AND e.created_at").push(cmp.sql()).push_bind(*at);
                }
                sql.push(")");
            }
            Pred::Member(segment_id) => {
                sql.push(
                    "EXISTS (SELECT 1 FROM segment_members m \
                     WHERE m.workspace_id = c.workspace_id AND m.segment_id = ",
                )
                .push_bind(segment_id.clone())
                .push(" AND m.contact_id = c.id)");
            }
        }
    }
}

/// `(c.data -> $1 -> $2 ...)`: object keys only (a text key on an array or scalar gives
/// `NULL`), and `NULL` when any step is missing.
fn push_path(sql: &mut QueryBuilder<Postgres>, path: &[String]) {
    sql.push("(c.data");
    for key in path {
        sql.push(" -> ").push_bind(key.clone());
    }
    sql.push(")");
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

/// PostgreSQL cannot store NUL in text or jsonb, so no stored string equals or contains
/// one that holds it; such values are decided here rather than sent (the server would
/// refuse them).
fn storable(s: &str) -> bool {
    !s.contains('\0')
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
            if !storable(&needle) {
                return Pred::Const(false);
            }
            match op {
                Operator::Equals => Pred::EmailEquals(needle),
                Operator::Contains => Pred::EmailLike(substring_pattern(&needle)),
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
            if path.is_empty() || !path.iter().all(|k| storable(k)) {
                return Pred::Const(false);
            }
            data(filter, op, path, now)
        }
        Field::Event(name) => {
            if !storable(name) {
                return Pred::Const(false);
            }
            occurred(filter, op, vec![name.clone()], now)
        }
        Field::EmailActivity(kind) => occurred(filter, op, activity_event_names(*kind), now),
        Field::Segment(id) => {
            if op == Operator::MemberOfSegment && storable(id.as_str()) {
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

/// `{"a": {"b": leaf}}` for the path `a.b`.
fn nest(path: &[String], leaf: Value) -> Value {
    path.iter().rev().fold(leaf, |inner, key| {
        let mut object = Map::new();
        object.insert(key.clone(), inner);
        Value::Object(object)
    })
}

/// The path's value is JSON-equal to `v` (`json_eq`): same string, same boolean, or a
/// number with the same `f64` value. Strings and booleans go through containment, which
/// for a scalar at the end of an object path is exactly equality of type and value.
fn json_equals(path: Vec<String>, v: &Value) -> Pred {
    match v {
        Value::String(s) if storable(s) => Pred::DataContains(nest(&path, v.clone())),
        Value::Bool(_) => Pred::DataContains(nest(&path, v.clone())),
        Value::Number(n) => match n.as_f64() {
            Some(n) => Pred::DataNumber(path, Cmp::Eq, n),
            None => Pred::Const(false),
        },
        _ => Pred::Const(false),
    }
}

/// `contains`: a string value is a case-insensitive substring of a string, or an element
/// of an array; numbers and booleans are elements of an array. Array elements are matched
/// at the top level of the array only (`[["vip"]]` does not contain `"vip"`), which is what
/// containment of a one-element array means for a scalar.
fn contains(path: Vec<String>, v: &Value) -> Pred {
    match v {
        Value::String(s) if storable(s) => {
            let element = Pred::DataContains(nest(&path, Value::Array(vec![v.clone()])));
            Pred::any([Pred::DataSubstring(path, fold(s)), element])
        }
        Value::Bool(_) => Pred::DataContains(nest(&path, Value::Array(vec![v.clone()]))),
        Value::Number(n) => match n.as_f64() {
            Some(n) => Pred::DataArrayNumber(path, n),
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
mod tests {
    use super::*;
    use chrono::TimeZone;
    use posthorn_core::segment::TimeUnit;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 6, 1, 12, 0, 0)
            .single()
            .expect("date")
    }

    fn filter(field: Field, op: Operator, value: Option<Value>, unit: Option<TimeUnit>) -> Filter {
        Filter {
            field,
            op,
            value,
            unit,
        }
    }

    fn data(path: &[&str]) -> Field {
        Field::Data(path.iter().map(|k| k.to_string()).collect())
    }

    #[test]
    fn values_of_the_wrong_type_are_constants() {
        let f = filter(Field::Email, Operator::Equals, Some(json!(5)), None);
        assert_eq!(lower_filter(&f, now()), Pred::Const(false));
        let f = filter(Field::Email, Operator::NotEquals, Some(json!(5)), None);
        assert_eq!(lower_filter(&f, now()), Pred::Const(true));
        let f = filter(data(&["a"]), Operator::Equals, Some(json!(null)), None);
        assert_eq!(lower_filter(&f, now()), Pred::Const(false));
        let f = filter(
            data(&["a"]),
            Operator::GreaterThan,
            Some(json!("soon")),
            None,
        );
        assert_eq!(lower_filter(&f, now()), Pred::Const(false));
        let f = filter(
            Field::Subscribed,
            Operator::Contains,
            Some(json!(true)),
            None,
        );
        assert_eq!(lower_filter(&f, now()), Pred::Const(false));
    }

    #[test]
    fn impossible_windows_are_constants() {
        let f = filter(
            Field::Event("x".into()),
            Operator::NotTriggeredWithin,
            Some(json!(0)),
            Some(TimeUnit::Days),
        );
        assert_eq!(lower_filter(&f, now()), Pred::Const(true));
        let f = filter(Field::CreatedAt, Operator::Within, Some(json!(1)), None);
        assert_eq!(lower_filter(&f, now()), Pred::Const(false));
    }

    #[test]
    fn nul_never_reaches_the_server() {
        let f = filter(data(&["a\0"]), Operator::NotExists, None, None);
        assert_eq!(lower_filter(&f, now()), Pred::Const(true));
        let f = filter(Field::Email, Operator::Contains, Some(json!("a\0")), None);
        assert_eq!(lower_filter(&f, now()), Pred::Const(false));
        let f = filter(
            Field::Segment("s\0".into()),
            Operator::NotMemberOfSegment,
            None,
            None,
        );
        assert_eq!(lower_filter(&f, now()), Pred::Const(true));
    }

    #[test]
    fn equality_uses_containment_for_strings_and_floats_for_numbers() {
        let f = filter(data(&["a", "b"]), Operator::Equals, Some(json!("x")), None);
        assert_eq!(
            lower_filter(&f, now()),
            Pred::DataContains(json!({"a": {"b": "x"}}))
        );
        let f = filter(data(&["a"]), Operator::NotEquals, Some(json!(1)), None);
        assert_eq!(
            lower_filter(&f, now()),
            Pred::Not(Box::new(Pred::DataNumber(vec!["a".into()], Cmp::Eq, 1.0)))
        );
    }

    #[test]
    fn activity_names_match_the_core_mapping() {
        for kind in Activity::ALL {
            let names = activity_event_names(kind);
            assert_eq!(names.len(), 1, "{kind:?}");
            assert_eq!(activity_of_event(&names[0]), Some(kind));
        }
    }

    #[test]
    fn cutoffs_round_up_to_microseconds() {
        let at = now() + Duration::nanoseconds(1_500);
        assert_eq!(ceil_micros(at), now() + Duration::microseconds(2));
        assert_eq!(ceil_micros(now()), now());
        let before_epoch = Utc.timestamp_opt(-1, 999_999_001).single().expect("time");
        assert_eq!(
            ceil_micros(before_epoch),
            Utc.timestamp_opt(0, 0).single().expect("time")
        );
    }

    #[test]
    fn empty_structures_fold() {
        let empty_or = Condition {
            logic: Logic::Or,
            groups: vec![],
        };
        assert_eq!(lower(&empty_or, now()), Pred::Const(true));
        let empty_group = Condition {
            logic: Logic::Or,
            groups: vec![Group::default()],
        };
        assert_eq!(lower(&empty_group, now()), Pred::Const(true));
    }
}
