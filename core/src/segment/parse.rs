//! Reading an untrusted JSON condition into a [`Condition`], reporting every problem at once.
//!
//! Rules beyond the operator table on [`Operator`]:
//! - `logic` is `AND` or `OR` in any case; missing or `null` means `AND`.
//! - `groups` is required (an empty array matches every contact); a group's `filters` may
//!   be missing (no filters) and its `conditions` may be missing or `null`.
//! - Segment membership is written `{field: "segment.<id>", operator: "memberOfSegment"}`;
//!   a bare `segment` field is refused.
//! - `{field: "event.x" | "email.<activity>", operator: "equals", value: true}` means
//!   `triggered` and `value: false` means `notTriggered` (`notEquals` the other way round);
//!   the parsed filter uses the explicit operator.
//! - A `value` or `unit` that the operator does not use is ignored and dropped.
//! - Conditions nest at most [`MAX_DEPTH`] levels (the top level is 1) and hold at most
//!   [`MAX_FILTERS`] filters in all.
//!
//! Error codes: `invalid_type`, `required`, `invalid_value` (bad `logic`, `unit`, or a
//! string that is not a timestamp), `unknown_field`, `unknown_operator`,
//! `operator_not_allowed`, `out_of_range` (window not above 0 or over 36,500 days),
//! `too_deep`, `too_many_filters` (also for more than [`MAX_FILTERS`] groups in all).

use serde_json::{Map, Value};

use super::condition::{
    Condition, Field, FieldKind, Filter, Group, Logic, Operator, TimeUnit, MAX_WINDOW_SECONDS,
};
use super::timestamp::parse_timestamp;
use crate::error::FieldError;
use crate::model::{ascii_domain_address, SegmentId};
use crate::validate::{join, type_name};

/// How many condition levels may nest (the top-level condition is level 1).
pub const MAX_DEPTH: usize = 5;

/// How many filters a condition may hold, counting every nested group.
pub const MAX_FILTERS: usize = 100;

/// Parses `value` found at `path` (e.g. `condition`), or lists every problem with its dot
/// path (`condition.groups.0.filters.1.operator`). Problems with the value as a whole are
/// reported at `path` (or `condition` when `path` is empty).
pub fn parse_condition(value: &Value, path: &str) -> Result<Condition, Vec<FieldError>> {
    let mut parser = Parser::default();
    let root = if path.is_empty() { "condition" } else { path };
    // Counted before the walk, which reports every problem of every filter: a body of a
    // million empty filters would otherwise become a list of two million errors.
    let (filters, groups) = count_items(value, 1);
    if filters > MAX_FILTERS || groups > MAX_FILTERS {
        let message = if filters > MAX_FILTERS {
            format!("a condition may hold at most {MAX_FILTERS} filters, this one has {filters}")
        } else {
            format!("a condition may hold at most {MAX_FILTERS} groups, this one has {groups}")
        };
        parser.fail(root, "too_many_filters", message);
        return Err(parser.errors);
    }
    let condition = parser.condition(value, path, root, 1);
    if parser.filters > MAX_FILTERS {
        parser.fail(
            root,
            "too_many_filters",
            format!(
                "a condition may hold at most {MAX_FILTERS} filters, this one has {}",
                parser.filters
            ),
        );
    }
    match condition {
        Some(c) if parser.errors.is_empty() => Ok(c),
        _ => Err(parser.errors),
    }
}

/// How many filters and groups `value` holds, counting nested conditions down to one level
/// past [`MAX_DEPTH`] (the walk reports anything deeper as `too_deep`). Only arrays are
/// counted, whatever their items are.
fn count_items(value: &Value, depth: usize) -> (usize, usize) {
    let Some(groups) = value.get("groups").and_then(Value::as_array) else {
        return (0, 0);
    };
    let mut counted = (0, groups.len());
    for group in groups {
        if let Some(filters) = group.get("filters").and_then(Value::as_array) {
            counted.0 += filters.len();
        }
        if depth <= MAX_DEPTH {
            if let Some(nested) = group.get("conditions").filter(|c| !c.is_null()) {
                let (f, g) = count_items(nested, depth + 1);
                counted = (counted.0 + f, counted.1 + g);
            }
        }
    }
    counted
}

/// The ids of every segment the condition refers to, each once, in order of first use.
pub fn referenced_segments(condition: &Condition) -> Vec<SegmentId> {
    let mut ids: Vec<SegmentId> = Vec::new();
    condition.for_each_filter(&mut |f| {
        if let Field::Segment(id) = &f.field {
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
    });
    ids
}

/// Whether some filter's truth can change with time alone (`within`, `olderThan`,
/// `triggeredWithin`, `notTriggeredWithin`, `triggeredOlderThan`), so the segment needs the
/// periodic sweep.
pub fn uses_time(condition: &Condition) -> bool {
    let mut found = false;
    condition.for_each_filter(&mut |f| found |= f.op.uses_time());
    found
}

#[derive(Default)]
struct Parser {
    errors: Vec<FieldError>,
    filters: usize,
}

/// `None` for missing and `null` alike.
fn get<'v>(obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    obj.get(key).filter(|v| !v.is_null())
}

impl Parser {
    fn fail(&mut self, field: &str, code: &str, message: impl Into<String>) {
        self.errors.push(FieldError::new(field, code, message));
    }

    fn wrong_type(&mut self, field: &str, what: &str, expected: &str, got: &Value) {
        self.fail(
            field,
            "invalid_type",
            format!("{what} must be {expected}, got {}", type_name(got)),
        );
    }

    /// `path` prefixes children; `here` names the value itself in errors.
    fn condition(
        &mut self,
        value: &Value,
        path: &str,
        here: &str,
        depth: usize,
    ) -> Option<Condition> {
        let Some(obj) = value.as_object() else {
            self.wrong_type(here, "condition", "an object", value);
            return None;
        };
        let logic_path = join(path, "logic");
        let logic = match get(obj, "logic") {
            None => Some(Logic::And),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("and") => Some(Logic::And),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("or") => Some(Logic::Or),
            Some(Value::String(s)) => {
                self.fail(
                    &logic_path,
                    "invalid_value",
                    format!("logic must be AND or OR, got '{s}'"),
                );
                None
            }
            Some(other) => {
                self.wrong_type(&logic_path, "logic", "AND or OR", other);
                None
            }
        };
        let groups_path = join(path, "groups");
        let groups = match get(obj, "groups") {
            None => {
                self.fail(
                    &groups_path,
                    "required",
                    "groups is required (use [] to match every contact)",
                );
                None
            }
            Some(Value::Array(items)) => {
                let parsed: Vec<Option<Group>> = items
                    .iter()
                    .enumerate()
                    .map(|(i, g)| self.group(g, &join(&groups_path, &i.to_string()), depth))
                    .collect();
                parsed.into_iter().collect::<Option<Vec<Group>>>()
            }
            Some(other) => {
                self.wrong_type(&groups_path, "groups", "an array", other);
                None
            }
        };
        Some(Condition {
            logic: logic?,
            groups: groups?,
        })
    }

    fn group(&mut self, value: &Value, path: &str, depth: usize) -> Option<Group> {
        let Some(obj) = value.as_object() else {
            self.wrong_type(path, "a group", "an object", value);
            return None;
        };
        let filters_path = join(path, "filters");
        let filters = match get(obj, "filters") {
            None => Some(Vec::new()),
            Some(Value::Array(items)) => {
                let parsed: Vec<Option<Filter>> = items
                    .iter()
                    .enumerate()
                    .map(|(i, f)| self.filter(f, &join(&filters_path, &i.to_string())))
                    .collect();
                parsed.into_iter().collect::<Option<Vec<Filter>>>()
            }
            Some(other) => {
                self.wrong_type(&filters_path, "filters", "an array", other);
                None
            }
        };
        let nested_path = join(path, "conditions");
        let conditions = match get(obj, "conditions") {
            None => Some(None),
            Some(_) if depth >= MAX_DEPTH => {
                self.fail(
                    &nested_path,
                    "too_deep",
                    format!("conditions may nest at most {MAX_DEPTH} levels"),
                );
                None
            }
            Some(nested) => self
                .condition(nested, &nested_path, &nested_path, depth + 1)
                .map(|c| Some(Box::new(c))),
        };
        Some(Group {
            filters: filters?,
            conditions: conditions?,
        })
    }

    fn filter(&mut self, value: &Value, path: &str) -> Option<Filter> {
        self.filters += 1;
        let Some(obj) = value.as_object() else {
            self.wrong_type(path, "a filter", "an object", value);
            return None;
        };
        let field_path = join(path, "field");
        let op_path = join(path, "operator");
        let field = match get(obj, "field") {
            None => {
                self.fail(&field_path, "required", "field is required");
                None
            }
            Some(Value::String(s)) => {
                let field = Field::parse(s);
                if field.is_none() {
                    self.fail(&field_path, "unknown_field", unknown_field_message(s));
                }
                field
            }
            Some(other) => {
                self.wrong_type(&field_path, "field", "a string", other);
                None
            }
        };
        let op = match get(obj, "operator") {
            None => {
                self.fail(&op_path, "required", "operator is required");
                None
            }
            Some(Value::String(s)) => {
                let op = Operator::parse(s);
                if op.is_none() {
                    self.fail(
                        &op_path,
                        "unknown_operator",
                        format!("unknown operator '{s}'"),
                    );
                }
                op
            }
            Some(other) => {
                self.wrong_type(&op_path, "operator", "a string", other);
                None
            }
        };
        let (field, op) = (field?, op?);
        let value_path = join(path, "value");
        let value = get(obj, "value");
        let kind = field.kind();

        if kind == FieldKind::Occurrence && matches!(op, Operator::Equals | Operator::NotEquals) {
            let flag = self.expect_bool(value, &value_path, &field)?;
            let triggered = flag == (op == Operator::Equals);
            let op = if triggered {
                Operator::Triggered
            } else {
                Operator::NotTriggered
            };
            return Some(bare(field, op));
        }
        if !op.allowed_for(kind) {
            let allowed: Vec<&str> = Operator::ALL
                .into_iter()
                .filter(|o| o.allowed_for(kind))
                .map(Operator::as_str)
                .collect();
            self.fail(
                &op_path,
                "operator_not_allowed",
                format!(
                    "{op} cannot be used with {field}; use one of {}",
                    allowed.join(", ")
                ),
            );
            return None;
        }
        if op.takes_no_value() {
            return Some(bare(field, op));
        }
        if op.uses_time() {
            return self.window(field, op, value, get(obj, "unit"), path);
        }
        let Some(value) = value else {
            self.fail(
                &value_path,
                "required",
                format!("value is required for {op}"),
            );
            return None;
        };
        let ok = match (op, kind) {
            (Operator::Equals | Operator::NotEquals, FieldKind::Subscribed) => {
                self.check(value.is_boolean(), &value_path, "a boolean", value)
            }
            (_, FieldKind::Email) => self.check(value.is_string(), &value_path, "a string", value),
            (
                Operator::Equals | Operator::NotEquals | Operator::Contains | Operator::NotContains,
                _,
            ) => {
                let scalar = value.is_string() || value.is_number() || value.is_boolean();
                self.check(scalar, &value_path, "a string, number or boolean", value)
            }
            (_, FieldKind::Timestamp) => self.timestamp_value(value, &value_path, false),
            _ => self.timestamp_value(value, &value_path, true),
        };
        // Addresses are stored with their domain in A-label form: a value naming one
        // (`x@bücher.de`, `@bücher.de`) is compared in that form too.
        let value = match (kind, value) {
            (FieldKind::Email, Value::String(s)) => {
                Value::String(ascii_domain_address(s).into_owned())
            }
            _ => value.clone(),
        };
        ok.then_some(Filter {
            field,
            op,
            value: Some(value),
            unit: None,
        })
    }

    /// The boolean operand of the `equals true|false` shorthand, or `None` after recording why not.
    fn expect_bool(&mut self, value: Option<&Value>, path: &str, field: &Field) -> Option<bool> {
        match value {
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.fail(
                    path,
                    "invalid_type",
                    format!(
                        "{field} only compares with true or false (or use triggered), got {}",
                        type_name(other)
                    ),
                );
                None
            }
            None => {
                self.fail(
                    path,
                    "required",
                    format!("value (true or false) is required for {field}"),
                );
                None
            }
        }
    }

    fn check(&mut self, ok: bool, path: &str, expected: &str, value: &Value) -> bool {
        if !ok {
            self.wrong_type(path, "value", expected, value);
        }
        ok
    }

    fn timestamp_value(&mut self, value: &Value, path: &str, numbers_too: bool) -> bool {
        match value {
            Value::Number(_) if numbers_too => true,
            Value::String(s) => {
                let ok = parse_timestamp(s).is_some();
                if !ok {
                    let message = format!(
                        "value must be an RFC 3339 timestamp like 2024-01-31T12:00:00Z{}, got '{s}'",
                        if numbers_too { " or a number" } else { "" }
                    );
                    self.fail(path, "invalid_value", message);
                }
                ok
            }
            other => {
                let expected = if numbers_too {
                    "a number or a timestamp string"
                } else {
                    "a timestamp string"
                };
                self.check(false, path, expected, other)
            }
        }
    }

    fn window(
        &mut self,
        field: Field,
        op: Operator,
        value: Option<&Value>,
        unit: Option<&Value>,
        path: &str,
    ) -> Option<Filter> {
        let unit_path = join(path, "unit");
        let value_path = join(path, "value");
        let unit = match unit {
            None => {
                self.fail(
                    &unit_path,
                    "required",
                    format!("unit (minutes, hours or days) is required for {op}"),
                );
                None
            }
            Some(Value::String(s)) => {
                let unit = TimeUnit::parse(s);
                if unit.is_none() {
                    self.fail(
                        &unit_path,
                        "invalid_value",
                        format!("unit must be minutes, hours or days, got '{s}'"),
                    );
                }
                unit
            }
            Some(other) => {
                self.wrong_type(&unit_path, "unit", "minutes, hours or days", other);
                None
            }
        };
        let amount = match value {
            None => {
                self.fail(
                    &value_path,
                    "required",
                    format!("value (a positive number) is required for {op}"),
                );
                return None;
            }
            Some(v) => match v.as_f64() {
                Some(n) => n,
                None => {
                    self.wrong_type(&value_path, "value", "a positive number", v);
                    return None;
                }
            },
        };
        let seconds = amount * unit.map_or(1, TimeUnit::seconds) as f64;
        if !(amount > 0.0 && seconds <= MAX_WINDOW_SECONDS) {
            self.fail(
                &value_path,
                "out_of_range",
                "value must be above 0 and at most 36500 days",
            );
            return None;
        }
        Some(Filter {
            field,
            op,
            value: value.cloned(),
            unit: Some(unit?),
        })
    }
}

fn bare(field: Field, op: Operator) -> Filter {
    Filter {
        field,
        op,
        value: None,
        unit: None,
    }
}

fn unknown_field_message(raw: &str) -> String {
    let hint = match raw {
        "segment" => " (write segment membership as field segment.<id>)",
        "data" | "data." => " (name a key: data.<key>)",
        "event" | "event." => " (name an event: event.<name>)",
        _ => "",
    };
    format!(
        "unknown field '{raw}'{hint}; fields are email, subscribed, createdAt, updatedAt, \
         data.<path>, event.<name>, email.<sent|delivered|opened|clicked|bounced|complained>, \
         segment.<id>"
    )
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
