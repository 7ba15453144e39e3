//! The OpenAPI description of a condition (`SegmentCondition`, `ConditionGroup`,
//! `ConditionFilter`), derived from the rules `parse_condition` applies: a filter is one of
//! a `oneOf` per family of fields and kind of operand, whose operators are those
//! [`Operator::operand`] gives for that family. So the document and the parser cannot
//! disagree on which operator fits which field, nor on what `value` and `unit` must be.

use std::borrow::Cow;

use utoipa::openapi::schema::{
    AllOfBuilder, AnyOfBuilder, ArrayBuilder, Object, ObjectBuilder, OneOfBuilder, Schema,
    SchemaType, Type,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use super::condition::{Activity, Condition, FieldKind, Operand, Operator, TimeUnit};
use super::parse::{MAX_DEPTH, MAX_FILTERS};

const CONDITION: &str = "SegmentCondition";
const GROUP: &str = "ConditionGroup";
const FILTER: &str = "ConditionFilter";

/// A timestamp string as `parse_timestamp` takes it, real calendar dates only (leap years
/// included, year 0000 excluded): what [`super::TIMESTAMP_PATTERN`] matches and a calendar
/// check keeps, as one pattern.
pub(crate) const CALENDAR_TIMESTAMP_PATTERN: &str = concat!(
    r"^((000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})-",
    r"((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)",
    r"|02-(0[1-9]|1[0-9]|2[0-8]))",
    r"|([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)-02-29)",
    r"[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?",
    r"([Zz]|[+-](0[0-9]|1[0-4]):[0-5][0-9])$"
);

/// The families of fields, each with the schema of its `field` strings.
fn families() -> Vec<(FieldKind, &'static str, Object)> {
    let exact = |names: &[&str]| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(names.to_vec()))
            .build()
    };
    let prefixed = |pattern: &str| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(pattern))
            .build()
    };
    let activities: Vec<String> = Activity::ALL
        .iter()
        .map(|a| format!("email.{}", a.as_str()))
        .collect();
    vec![
        (FieldKind::Email, "`email`", exact(&["email"])),
        (
            FieldKind::Subscribed,
            "`subscribed`",
            exact(&["subscribed"]),
        ),
        (
            FieldKind::Timestamp,
            "`createdAt`, `updatedAt`",
            exact(&["createdAt", "updatedAt"]),
        ),
        (
            FieldKind::Data,
            "`data.<path>` (object keys joined by dots, none empty)",
            prefixed(r"^data\.[^.]+(\.[^.]+)*$"),
        ),
        (
            FieldKind::Occurrence,
            "`email.<activity>` (`sent`, `delivered`, `opened`, `clicked`, `bounced`, \
             `complained`)",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(activities))
                .build(),
        ),
        (
            FieldKind::Occurrence,
            "`event.<name>`",
            prefixed(r"^event\.[\s\S]"),
        ),
        (
            FieldKind::Segment,
            "`segment.<id>` (a STATIC segment or a DYNAMIC one with `trackMembership`)",
            prefixed(r"^segment\.[\s\S]"),
        ),
    ]
}

/// Every kind of operand, in the order the variants are listed.
const OPERANDS: [Operand; 7] = [
    Operand::String,
    Operand::Boolean,
    Operand::Scalar,
    Operand::Timestamp,
    Operand::NumberOrTimestamp,
    Operand::None,
    Operand::Window,
];

fn any(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(SchemaType::AnyValue)
        .description(Some(description))
}

const IGNORED_UNIT: &str = "Ignored and dropped: only the time-window operators (`within`, \
    `olderThan`, `triggeredWithin`, `notTriggeredWithin`, `triggeredOlderThan`) take a `unit`.";

/// A unit name in any case (`days`, `Days`, `DAYS`, ...).
fn unit_pattern(unit: TimeUnit) -> String {
    let letters: String = unit
        .as_str()
        .chars()
        .map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c))
        .collect();
    format!("^{letters}$")
}

/// The `value` (and `unit`) properties of a variant.
fn operand_properties(operand: Operand, object: ObjectBuilder) -> ObjectBuilder {
    let value = |schema: ObjectBuilder| {
        ObjectBuilder::new()
            .property("value", schema)
            .required("value")
    };
    let ignored_unit = any(IGNORED_UNIT);
    let operand = match operand {
        Operand::None => ObjectBuilder::new()
            .property(
                "value",
                any("Ignored and dropped: this operator takes no value."),
            )
            .property("unit", ignored_unit),
        Operand::Boolean => {
            value(ObjectBuilder::new().schema_type(Type::Boolean)).property("unit", ignored_unit)
        }
        Operand::String => value(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some("Compared case-insensitively.")),
        )
        .property("unit", ignored_unit),
        Operand::Scalar => value(
            ObjectBuilder::new()
                .schema_type(SchemaType::Array(vec![
                    Type::String,
                    Type::Number,
                    Type::Boolean,
                ]))
                .description(Some("A string, number or boolean.")),
        )
        .property("unit", ignored_unit),
        Operand::Timestamp => value(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(CALENDAR_TIMESTAMP_PATTERN))
                .description(Some(
                    "An RFC 3339 timestamp like `2024-01-31T12:00:00Z` (1 to 6 fraction digits, \
                     offset at most ±14:59, a real calendar date).",
                )),
        )
        .property("unit", ignored_unit),
        Operand::NumberOrTimestamp => value(
            ObjectBuilder::new()
                .schema_type(SchemaType::Array(vec![Type::Number, Type::String]))
                .pattern(Some(CALENDAR_TIMESTAMP_PATTERN))
                .description(Some(
                    "A number, or an RFC 3339 timestamp like `2024-01-31T12:00:00Z`.",
                )),
        )
        .property("unit", ignored_unit),
        Operand::Window => value(
            ObjectBuilder::new()
                .schema_type(Type::Number)
                .exclusive_minimum(Some(0))
                .description(Some(
                    "The window's length in `unit`s: above 0 and at most 36,500 days.",
                )),
        )
        .property(
            "unit",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(
                    r"^([Mm][Ii][Nn][Uu][Tt][Ee][Ss]|[Hh][Oo][Uu][Rr][Ss]|[Dd][Aa][Yy][Ss])$",
                ))
                .description(Some(
                    "`minutes`, `hours` or `days`, in any case (answers use lower case).",
                )),
        )
        .required("unit"),
    };
    merge(object, operand.build())
}

/// `object` with the properties and required names of `more` added.
fn merge(object: ObjectBuilder, more: Object) -> ObjectBuilder {
    let object = more
        .properties
        .into_iter()
        .fold(object, |o, (name, schema)| o.property(name, schema));
    more.required
        .into_iter()
        .fold(object, |o, name| o.required(name))
}

/// The bound on a window's `value` for each unit (36,500 days in all).
fn window_bounds() -> AnyOfBuilder {
    TimeUnit::ALL
        .into_iter()
        .fold(AnyOfBuilder::new(), |any_of, unit| {
            let max = super::MAX_WINDOW_SECONDS / unit.seconds() as f64;
            any_of.item(
                ObjectBuilder::new()
                    .property(
                        "unit",
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .pattern(Some(unit_pattern(unit))),
                    )
                    .property(
                        "value",
                        ObjectBuilder::new()
                            .schema_type(Type::Number)
                            .maximum(Some(max)),
                    ),
            )
        })
        .description(Some(
            "At most 36,500 days: 52,560,000 minutes, 876,000 hours.",
        ))
}

fn operand_words(operand: Operand) -> &'static str {
    match operand {
        Operand::None => "no value",
        Operand::Boolean => "a boolean value",
        Operand::String => "a string value",
        Operand::Scalar => "a string, number or boolean value",
        Operand::Timestamp => "a timestamp value",
        Operand::NumberOrTimestamp => "a number or timestamp value",
        Operand::Window => "a time window (`value` and `unit`)",
    }
}

/// `ConditionFilter`: one variant per family of fields and kind of operand.
fn filter_schema() -> Schema {
    let mut one_of = OneOfBuilder::new().description(Some(
        "One test on a contact. The operators a field takes, and what `value` and `unit` \
         must be, depend on the field's family; each variant lists one family's operators \
         for one kind of operand. A `value` or `unit` the operator does not use is ignored \
         and dropped.",
    ));
    for (kind, fields, field_schema) in families() {
        for operand in OPERANDS {
            let operators: Vec<&str> = Operator::ALL
                .into_iter()
                .filter(|op| op.operand(kind) == Some(operand))
                .map(Operator::as_str)
                .collect();
            if operators.is_empty() {
                continue;
            }
            let shorthand = kind == FieldKind::Occurrence && operand == Operand::Boolean;
            let title = if shorthand {
                format!(
                    "{fields}: `equals: true` means `triggered`, `equals: false` \
                     `notTriggered` (`notEquals` the other way round)"
                )
            } else {
                format!("{fields} with {}", operand_words(operand))
            };
            let object = ObjectBuilder::new()
                .title(Some(title))
                .property("field", field_schema.clone())
                .required("field")
                .property(
                    "operator",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some(operators)),
                )
                .required("operator");
            let object = operand_properties(operand, object);
            one_of = if operand == Operand::Window {
                one_of.item(AllOfBuilder::new().item(object).item(window_bounds()))
            } else {
                one_of.item(object)
            };
        }
    }
    one_of.into()
}

/// `ConditionGroup`.
fn group_schema() -> Schema {
    let null = || ObjectBuilder::new().schema_type(Type::Null);
    ObjectBuilder::new()
        .description(Some(
            "A group: all its filters and its nested condition must match; an empty group \
             matches.",
        ))
        .property(
            "filters",
            OneOfBuilder::new()
                .item(null())
                .item(
                    ArrayBuilder::new()
                        .items(Ref::from_schema_name(FILTER))
                        .max_items(Some(MAX_FILTERS)),
                )
                .description(Some(
                    "Filters, all of which must match; omitted or `null` for none (answers \
                     always list them).",
                )),
        )
        .property(
            "conditions",
            OneOfBuilder::new()
                .item(null())
                .item(Ref::from_schema_name(CONDITION))
                .description(Some(
                    "A nested condition, ANDed with the filters; omitted when there is none \
                     (`null` is the same as omitted).",
                )),
        )
        .into()
}

impl PartialSchema for Condition {
    fn schema() -> RefOr<Schema> {
        let logic: Vec<serde_json::Value> = ["and", "or"]
            .into_iter()
            .flat_map(|word| {
                let n = word.len();
                (0..1u32 << n).map(move |mask| {
                    word.chars()
                        .enumerate()
                        .map(|(i, c)| {
                            if mask & (1 << i) != 0 {
                                c.to_ascii_uppercase()
                            } else {
                                c
                            }
                        })
                        .collect::<String>()
                })
            })
            .map(serde_json::Value::from)
            .chain([serde_json::Value::Null])
            .collect();
        ObjectBuilder::new()
            .description(Some(format!(
                "A segment condition: `{{logic, groups: [{{filters, conditions?}}]}}`. A group \
                 matches when all its filters match and its nested condition (if any) \
                 matches; the groups combine by `logic`. No groups matches every contact. At \
                 most {MAX_DEPTH} nested levels and {MAX_FILTERS} filters in all. Invalid \
                 conditions are refused with 422, each problem named by its path, e.g. \
                 `condition.groups.0.filters.1.operator`."
            )))
            .property(
                "logic",
                ObjectBuilder::new()
                    .schema_type(SchemaType::Array(vec![Type::String, Type::Null]))
                    .enum_values(Some(logic))
                    .description(Some(
                        "How the groups combine: `AND` (every group must match; the default \
                         when omitted or null) or `OR` (at least one must), in any case; \
                         answers use upper case.",
                    )),
            )
            .property(
                "groups",
                ArrayBuilder::new().items(Ref::from_schema_name(GROUP)),
            )
            .required("groups")
            .examples([serde_json::json!({
                "logic": "AND",
                "groups": [{
                    "filters": [
                        {"field": "data.plan", "operator": "equals", "value": "pro"},
                        {"field": "event.login", "operator": "triggeredWithin", "value": 7, "unit": "days"}
                    ],
                    "conditions": {"logic": "OR", "groups": [
                        {"filters": [{"field": "email", "operator": "contains", "value": "@acme.com"}]}
                    ]}
                }]
            })])
            .into()
    }
}

impl ToSchema for Condition {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed(CONDITION)
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((GROUP.to_string(), group_schema().into()));
        schemas.push((FILTER.to_string(), filter_schema().into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::parse_condition;
    use serde_json::{json, Value};

    /// A value of each operand kind that the parser accepts.
    fn sample(operand: Operand) -> (Option<Value>, Option<Value>) {
        match operand {
            Operand::None => (None, None),
            Operand::Boolean => (Some(json!(true)), None),
            Operand::String => (Some(json!("a")), None),
            Operand::Scalar => (Some(json!(3)), None),
            Operand::Timestamp => (Some(json!("2024-02-29T10:00:00Z")), None),
            Operand::NumberOrTimestamp => (Some(json!(2)), None),
            Operand::Window => (Some(json!(36_500)), Some(json!("DAYS"))),
        }
    }

    #[test]
    fn the_documented_operand_is_the_one_the_parser_takes() {
        let fields = [
            ("email", FieldKind::Email),
            ("subscribed", FieldKind::Subscribed),
            ("createdAt", FieldKind::Timestamp),
            ("data.plan", FieldKind::Data),
            ("event.login", FieldKind::Occurrence),
            ("email.opened", FieldKind::Occurrence),
            ("segment.s1", FieldKind::Segment),
        ];
        for (field, kind) in fields {
            for op in Operator::ALL {
                let mut filter = json!({"field": field, "operator": op.as_str()});
                let operand = op.operand(kind);
                if let Some((value, unit)) = operand.map(sample) {
                    if let Some(v) = value {
                        filter["value"] = v;
                    }
                    if let Some(u) = unit {
                        filter["unit"] = u;
                    }
                }
                let condition = json!({"groups": [{"filters": [filter]}]});
                let parsed = parse_condition(&condition, "condition");
                assert_eq!(
                    parsed.is_ok(),
                    operand.is_some(),
                    "{field} {op}: {parsed:?}"
                );
            }
        }
    }

    #[test]
    fn the_calendar_pattern_is_what_parse_timestamp_takes() {
        let pattern = regex::Regex::new(CALENDAR_TIMESTAMP_PATTERN).expect("pattern");
        for raw in [
            "2024-02-29T10:00:00Z",
            "2023-02-29T10:00:00Z",
            "2000-02-29T10:00:00Z",
            "1900-02-29T10:00:00Z",
            "0004-02-29T00:00:00z",
            "0000-02-29T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "0001-01-01t00:00:00+14:59",
            "9999-12-31T23:59:59.123456-14:59",
            "2024-04-31T10:00:00Z",
            "2024-13-01T10:00:00Z",
            "2024-12-31T24:00:00Z",
            "2024-12-31T23:59:60Z",
            "2024-12-31T23:59:59.1234567Z",
            "2024-12-31T23:59:59+15:00",
            "2024-06-30T23:59:59.5+02:00",
            "2024-06-31T23:59:59Z",
        ] {
            assert_eq!(
                pattern.is_match(raw),
                super::super::parse_timestamp(raw).is_some(),
                "{raw}"
            );
        }
    }
}
