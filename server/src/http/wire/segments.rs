//! `/segments` bodies and query strings into typed commands.

use std::collections::HashMap;

use posthorn_core::app::segments::{
    immutable_type, CreateSegment, SegmentMembers, SegmentPatch, MAX_SEGMENT_DESCRIPTION_CHARS,
    MAX_SEGMENT_NAME_CHARS,
};
use posthorn_core::app::{PageRequest, Patch};
use posthorn_core::model::SegmentType;
use posthorn_core::segment::{parse_condition, Condition};
use posthorn_core::validate::{type_name, Checker};
use posthorn_core::{Error, Result};
use serde_json::{Map, Value};

use super::page::page_request;

/// `POST /segments {name, description?, type?, condition?, trackMembership?}`.
pub fn create(body: &Value) -> Result<CreateSegment> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let name = c
        .line(obj, "name", "", true, MAX_SEGMENT_NAME_CHARS)
        .map(str::to_string);
    let description = c
        .line(obj, "description", "", false, MAX_SEGMENT_DESCRIPTION_CHARS)
        .map(str::to_string);
    let track_membership = c
        .boolean(obj, "trackMembership", "", false)
        .unwrap_or(false);
    let segment_type = match c.string(obj, "type", "", false) {
        None => SegmentType::Dynamic,
        Some(raw) => SegmentType::parse(raw).unwrap_or_else(|| {
            c.fail("type", "invalid_enum", "type must be DYNAMIC or STATIC");
            SegmentType::Dynamic
        }),
    };
    let condition = read_condition(&mut c, obj, segment_type == SegmentType::Dynamic);
    c.finish()?;
    Ok(CreateSegment {
        name: name.unwrap_or_default(),
        description,
        segment_type,
        condition,
        track_membership,
    })
}

/// `PATCH` (or `PUT`) `/segments/{id}`.
pub fn patch(body: &Value) -> Result<SegmentPatch> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let name = c
        .line(obj, "name", "", false, MAX_SEGMENT_NAME_CHARS)
        .map(str::to_string);
    let description = c.nullable_line(obj, "description", MAX_SEGMENT_DESCRIPTION_CHARS);
    let track_membership = c.boolean(obj, "trackMembership", "", false);
    let segment_type = match c.string(obj, "type", "", false) {
        None => None,
        Some(raw) => match SegmentType::parse(raw) {
            Some(t) => Some(t),
            // Not a type at all, so not the stored one: the same refusal as a change.
            None => {
                if let Error::Validation(errors) = immutable_type() {
                    for e in errors {
                        c.fail(e.field, &e.code, e.message);
                    }
                }
                None
            }
        },
    };
    let condition = if obj.get("condition").is_some_and(|v| !v.is_null()) {
        read_condition(&mut c, obj, true)
    } else {
        None
    };
    c.finish()?;
    Ok(SegmentPatch {
        name,
        description: Patch::from(description),
        track_membership,
        segment_type,
        condition,
    })
}

/// `GET /segments` and `GET /segments/{id}/contacts`: `page`, `pageSize` (or `limit`).
pub fn page(query: &HashMap<String, String>) -> Result<PageRequest> {
    let mut c = Checker::new();
    let page = page_request(&mut c, query);
    c.finish()?;
    Ok(page)
}

/// `POST /segments/{id}/members {emails, createMissing?, subscribed?}` (`adding`) and
/// `DELETE /segments/{id}/members {emails}`.
pub fn members(body: &Value, adding: bool) -> Result<SegmentMembers> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let mut emails = Vec::new();
    match c.value(obj, "emails", "", true) {
        Some(Value::Array(items)) => match SegmentMembers::count_problem(items.len()) {
            Some((code, message)) => c.fail("emails", code, message),
            None => {
                for (i, item) in items.iter().enumerate() {
                    match item.as_str() {
                        Some(raw) => {
                            if let Some(e) = c.parse_email(raw, &format!("emails.{i}")) {
                                if !emails.contains(&e) {
                                    emails.push(e);
                                }
                            }
                        }
                        None => c.fail(
                            format!("emails.{i}"),
                            "invalid_type",
                            format!("must be a string, got {}", type_name(item)),
                        ),
                    }
                }
            }
        },
        Some(other) => c.fail(
            "emails",
            "invalid_type",
            format!("emails must be an array, got {}", type_name(other)),
        ),
        None => {}
    }
    let (create_missing, subscribed) = if adding {
        (
            c.boolean(obj, "createMissing", "", false).unwrap_or(false),
            c.boolean(obj, "subscribed", "", false).unwrap_or(true),
        )
    } else {
        (false, true)
    };
    c.finish()?;
    Ok(SegmentMembers {
        emails,
        create_missing,
        subscribed,
    })
}

/// Reads `condition` (the condition language of docs/segments-and-campaigns.md).
pub fn read_condition(
    c: &mut Checker,
    obj: &Map<String, Value>,
    required: bool,
) -> Option<Condition> {
    let value = c.value(obj, "condition", "", required)?;
    condition_at(c, value, "condition")
}

/// Parses a condition at `path`, recording its errors.
pub fn condition_at(c: &mut Checker, value: &Value, path: &str) -> Option<Condition> {
    match parse_condition(value, path) {
        Ok(condition) => Some(condition),
        Err(errors) => {
            for e in errors {
                c.fail(e.field, &e.code, e.message);
            }
            None
        }
    }
}

/// A segment condition (`audienceCondition`, ...), parsed by core's [`parse_condition`]:
/// every problem is reported at its own path, e.g.
/// `audienceCondition.groups.0.filters.1.operator`. Described by the `SegmentCondition`
/// schema.
#[derive(Debug, Clone, PartialEq)]
pub struct AudienceCondition(pub Condition);

impl deserr::Deserr<super::de::WireErrors> for AudienceCondition {
    fn deserialize_from_value<V: deserr::IntoValue>(
        value: deserr::Value<V>,
        location: deserr::ValuePointerRef,
    ) -> std::result::Result<Self, super::de::WireErrors> {
        let json = Value::from(value);
        parse_condition(&json, &super::de::path_of(location))
            .map(AudienceCondition)
            .map_err(|errors| super::de::WireErrors(errors, Vec::new()))
    }
}

impl utoipa::PartialSchema for AudienceCondition {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::Ref::from_schema_name("SegmentCondition").into()
    }
}

impl utoipa::ToSchema for AudienceCondition {
    fn name() -> std::borrow::Cow<'static, str> {
        "SegmentCondition".into()
    }

    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use crate::http::openapi::schemas::SegmentCondition;
        schemas.push((
            "SegmentCondition".to_string(),
            <SegmentCondition as utoipa::PartialSchema>::schema(),
        ));
        <SegmentCondition as utoipa::ToSchema>::schemas(schemas);
    }
}
