//! `/segments`: bodies and query strings into typed commands, and the shapes of the answers
//! and of the condition language.

use chrono::{DateTime, Utc};
use deserr::{Deserr, IntoValue, Value as DValue, ValueKind, ValuePointerRef};
use posthorn_core::app::segments::{
    immutable_type, CreateSegment, SegmentMembers, SegmentPatch, MAX_SEGMENT_DESCRIPTION_CHARS,
    MAX_SEGMENT_NAME_CHARS,
};
use posthorn_core::app::PageRequest;
use posthorn_core::model::{Contact, EmailAddress};
use posthorn_core::segment::{parse_condition, Condition};
use posthorn_core::validate::type_name;
use posthorn_core::Error;
use serde_json::Value;
use utoipa::openapi::schema::{Object, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::de::{path_of, Filled, Line, Nullable, QueryInt, WireErrors};

type Name = Line<MAX_SEGMENT_NAME_CHARS>;
type Description = Line<MAX_SEGMENT_DESCRIPTION_CHARS>;

const TYPE_MESSAGE: &str = "type must be DYNAMIC or STATIC";

/// `DYNAMIC` or `STATIC` (exact case), parsed by core's `SegmentType::parse`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kind(pub posthorn_core::model::SegmentType);

impl Deserr<WireErrors> for Kind {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        posthorn_core::model::SegmentType::parse(&raw)
            .map(Kind)
            .ok_or_else(|| WireErrors::at(location, "invalid_enum", TYPE_MESSAGE))
    }
}

impl PartialSchema for Kind {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["DYNAMIC", "STATIC"]))
            .description(Some(
                "DYNAMIC (the contacts matching `condition`, the default) or STATIC (members \
                 added and removed explicitly); never changes.",
            ))
            .into()
    }
}

impl ToSchema for Kind {}

/// A segment's type in a change: the stored type or nothing; anything that is not a type at
/// all is refused like a change (`immutable`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SameKind(pub posthorn_core::model::SegmentType);

impl Deserr<WireErrors> for SameKind {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        match posthorn_core::model::SegmentType::parse(&raw) {
            Some(t) => Ok(SameKind(t)),
            None => Err(match immutable_type() {
                Error::Validation(errors) => WireErrors(errors, Vec::new()),
                _ => WireErrors::at(location, "immutable", TYPE_MESSAGE),
            }),
        }
    }
}

impl PartialSchema for SameKind {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["DYNAMIC", "STATIC"]))
            .description(Some(
                "Only the segment's own type is accepted (422 `immutable` otherwise).",
            ))
            .into()
    }
}

impl ToSchema for SameKind {}

/// The fields of `POST /segments` as read one by one.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = SegmentCreate)]
#[schema(example = json!({
    "name": "Pro users",
    "condition": {"logic": "AND", "groups": [{"filters": [{"field": "data.plan", "operator": "equals", "value": "pro"}]}]},
    "trackMembership": true
}))]
pub struct SegmentCreateBody {
    /// Name; its slug names the `segment.<slug>.entry|exit` events.
    #[schema(inline)]
    pub name: Filled<Name>,
    /// Description.
    #[deserr(default)]
    #[schema(inline)]
    pub description: Option<Description>,
    /// Store members and emit `segment.<slug>.entry|exit` events (default false).
    #[deserr(default)]
    pub track_membership: Option<bool>,
    /// DYNAMIC (default) or STATIC.
    #[deserr(default, rename = "type")]
    #[serde(rename = "type")]
    #[schema(inline)]
    pub segment_type: Option<Kind>,
    /// The condition; required for DYNAMIC segments, optional for STATIC ones.
    #[deserr(default)]
    #[schema(inline)]
    pub condition: Option<AudienceCondition>,
}

/// Body of `POST /segments`: [`SegmentCreateBody`], and `condition` required unless `type`
/// is STATIC.
#[derive(Debug)]
pub struct SegmentCreateInput(pub SegmentCreateBody);

impl Deserr<WireErrors> for SegmentCreateInput {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        if value.kind() != ValueKind::Map {
            return SegmentCreateBody::deserialize_from_value(value, location)
                .map(SegmentCreateInput);
        }
        let json = Value::from(value);
        let is_static = json.get("type").and_then(Value::as_str) == Some("STATIC");
        let has_condition = json.get("condition").is_some_and(|c| !c.is_null());
        let missing = (!is_static && !has_condition).then(|| {
            WireErrors::at(
                location.push_key("condition"),
                "required",
                "condition is required",
            )
        });
        match (
            deserr::deserialize::<SegmentCreateBody, Value, WireErrors>(json),
            missing,
        ) {
            (Ok(body), None) => Ok(SegmentCreateInput(body)),
            (Ok(_), Some(missing)) => Err(missing),
            (Err(mut errors), missing) => {
                if let Some(missing) = missing {
                    errors.0.extend(missing.0);
                }
                Err(errors)
            }
        }
    }
}

impl PartialSchema for SegmentCreateInput {
    fn schema() -> RefOr<Schema> {
        use utoipa::openapi::schema::{AllOfBuilder, AnyOfBuilder};
        let is_static = ObjectBuilder::new()
            .property(
                "type",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["STATIC"])),
            )
            .required("type");
        let with_condition = ObjectBuilder::new()
            .property("condition", ObjectBuilder::new().schema_type(Type::Object))
            .required("condition");
        AllOfBuilder::new()
            .item(SegmentCreateBody::schema())
            .item(
                AnyOfBuilder::new()
                    .item(is_static)
                    .item(with_condition)
                    .description(Some("`condition` is required unless `type` is STATIC.")),
            )
            .into()
    }
}

impl ToSchema for SegmentCreateInput {}

impl From<SegmentCreateInput> for CreateSegment {
    fn from(SegmentCreateInput(b): SegmentCreateInput) -> Self {
        CreateSegment {
            name: b.name.0 .0,
            description: b.description.map(|d| d.0),
            segment_type: b
                .segment_type
                .map_or(posthorn_core::model::SegmentType::Dynamic, |k| k.0),
            condition: b.condition.map(|c| c.0),
            track_membership: b.track_membership.unwrap_or(false),
        }
    }
}

/// Body of `PATCH` or `PUT /segments/{id}`: fields not given are left alone.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = SegmentPatch)]
pub struct SegmentPatchBody {
    /// Name.
    #[deserr(default)]
    #[schema(inline)]
    pub name: Option<Name>,
    /// Description; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub description: Nullable<Description>,
    /// Store members and emit entry and exit events.
    #[deserr(default)]
    pub track_membership: Option<bool>,
    /// The segment's own type (a segment's type never changes).
    #[deserr(default, rename = "type")]
    #[serde(rename = "type")]
    #[schema(inline)]
    pub segment_type: Option<SameKind>,
    /// A new condition (DYNAMIC segments).
    #[deserr(default)]
    #[schema(inline)]
    pub condition: Option<AudienceCondition>,
}

impl From<SegmentPatchBody> for SegmentPatch {
    fn from(b: SegmentPatchBody) -> Self {
        SegmentPatch {
            name: b.name.map(|n| n.0),
            description: b.description.into_patch().map(|d| d.0),
            track_membership: b.track_membership,
            segment_type: b.segment_type.map(|k| k.0),
            condition: b.condition.map(|c| c.0),
        }
    }
}

/// Query of `GET /segments` and `GET /segments/{id}/contacts` (page pagination).
#[derive(Debug, Deserr, IntoParams)]
#[deserr(error = WireErrors)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// 1-based page number.
    #[deserr(default = QueryInt(1))]
    #[param(inline, required = false)]
    pub page: QueryInt<1, 1_000_000>,
    /// Page size (default 20).
    #[deserr(default, rename = "pageSize")]
    #[param(rename = "pageSize", inline)]
    pub page_size: Option<QueryInt<1, 100>>,
    /// Alias of `pageSize`, used when `pageSize` is absent.
    #[deserr(default)]
    #[param(inline)]
    pub limit: Option<QueryInt<1, 100>>,
}

impl From<PageQuery> for PageRequest {
    fn from(q: PageQuery) -> Self {
        PageRequest {
            page: q.page.0 as u64,
            page_size: q.page_size.or(q.limit).map_or(20, |n| n.0 as u64),
        }
    }
}

/// `emails` of a members change: an array of 1 to 500 addresses (duplicates count once).
#[derive(Debug, Clone, PartialEq)]
pub struct MemberEmails(pub Vec<EmailAddress>);

impl Deserr<WireErrors> for MemberEmails {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let key = path_of(location);
        let items = match Value::from(value) {
            Value::Array(items) => items,
            Value::Null => {
                return Err(WireErrors::at(
                    location,
                    "required",
                    format!("{key} is required"),
                ))
            }
            other => {
                return Err(WireErrors::at(
                    location,
                    "invalid_type",
                    format!("{key} must be an array, got {}", type_name(&other)),
                ))
            }
        };
        if let Some((code, message)) = SegmentMembers::count_problem(items.len()) {
            return Err(WireErrors::at(location, code, message));
        }
        let mut errors = WireErrors::default();
        let mut emails = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let at = location.push_index(i);
            match item.as_str() {
                Some(raw) => match EmailAddress::parse(raw) {
                    Ok(e) => {
                        if !emails.contains(&e) {
                            emails.push(e);
                        }
                    }
                    Err(e) => errors
                        .0
                        .extend(WireErrors::at(at, "invalid_email", e.to_string()).0),
                },
                None => errors.0.extend(
                    WireErrors::at(
                        at,
                        "invalid_type",
                        format!("must be a string, got {}", type_name(item)),
                    )
                    .0,
                ),
            }
        }
        if errors.0.is_empty() {
            Ok(MemberEmails(emails))
        } else {
            Err(errors)
        }
    }
}

impl PartialSchema for MemberEmails {
    fn schema() -> RefOr<Schema> {
        utoipa::openapi::schema::ArrayBuilder::new()
            .items(EmailAddress::schema())
            .min_items(Some(1))
            .max_items(Some(500))
            .into()
    }
}

impl ToSchema for MemberEmails {}

/// Body of `POST /segments/{id}/members` (STATIC segments).
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = SegmentMembersAdd)]
pub struct SegmentMembersAddBody {
    /// 1 to 500 addresses; unknown ones are listed in `notFound` unless `createMissing`.
    #[schema(inline)]
    pub emails: MemberEmails,
    /// Create contacts for unknown addresses (default false).
    #[deserr(default)]
    pub create_missing: Option<bool>,
    /// The subscription flag of created contacts (default true).
    #[deserr(default)]
    pub subscribed: Option<bool>,
}

impl From<SegmentMembersAddBody> for SegmentMembers {
    fn from(b: SegmentMembersAddBody) -> Self {
        SegmentMembers {
            emails: b.emails.0,
            create_missing: b.create_missing.unwrap_or(false),
            subscribed: b.subscribed.unwrap_or(true),
        }
    }
}

/// Body of `DELETE /segments/{id}/members` (STATIC segments).
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[schema(as = SegmentMembersRemove)]
pub struct SegmentMembersRemoveBody {
    /// 1 to 500 addresses.
    #[schema(inline)]
    pub emails: MemberEmails,
}

impl From<SegmentMembersRemoveBody> for SegmentMembers {
    fn from(b: SegmentMembersRemoveBody) -> Self {
        SegmentMembers {
            emails: b.emails.0,
            create_missing: false,
            subscribed: true,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Segment conditions
// ---------------------------------------------------------------------------------------

/// A segment condition: `{logic, groups: [{filters, conditions?}]}`. A group matches when all
/// its filters match and its nested condition (if any) matches; the groups combine by `logic`.
/// No groups matches every contact. At most 5 nested levels and 100 filters in all. Invalid
/// conditions are refused with 422, each problem named by its path, e.g.
/// `condition.groups.0.filters.1.operator`.
#[derive(ToSchema)]
#[schema(example = json!({
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
}))]
pub struct SegmentCondition {
    /// How the groups combine: `AND` (default when omitted or null) or `OR`; any case is
    /// accepted, answers use upper case.
    pub logic: Option<ConditionLogic>,
    /// The groups; `[]` matches every contact.
    pub groups: Vec<ConditionGroup>,
}

/// How the groups of a condition combine: `AND` (every group must match) or `OR` (at least
/// one must). Requests may spell it in any case (`and`, `Or`, ...); answers use upper case.
pub struct ConditionLogic;

impl PartialSchema for ConditionLogic {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^([Aa][Nn][Dd]|[Oo][Rr])$"))
            .description(Some(
                "`AND` (every group must match) or `OR` (at least one must), in any case; \
                 answers use upper case.",
            ))
            .into()
    }
}

impl ToSchema for ConditionLogic {}

/// A group of a condition: all its filters and its nested condition must match; an empty
/// group matches.
#[derive(ToSchema)]
pub struct ConditionGroup {
    /// Filters, all of which must match; may be omitted in requests (no filters).
    pub filters: Option<Vec<ConditionFilter>>,
    /// A nested condition, ANDed with the filters (omitted when there is none; `null` in a
    /// request is the same as omitted).
    #[schema(no_recursion)]
    pub conditions: Option<Box<SegmentCondition>>,
}

/// One test on a contact.
///
/// | Field | Operators | Value |
/// |---|---|---|
/// | `email` | `equals`, `notEquals`, `contains`, `notContains` | string (case-insensitive) |
/// | `subscribed` | `equals`, `notEquals` | boolean |
/// | `createdAt`, `updatedAt` | `greaterThan`, `lessThan`, `greaterThanOrEqual`, `lessThanOrEqual` | RFC 3339 date-time |
/// | `createdAt`, `updatedAt` | `within`, `olderThan` | positive number + `unit` |
/// | `data.<path>` | `equals`, `notEquals`, `contains`, `notContains` | string, number or boolean |
/// | `data.<path>` | the four comparisons | number or date-time |
/// | `data.<path>` | `exists`, `notExists` | none |
/// | `data.<path>` | `within`, `olderThan` | positive number + `unit` |
/// | `event.<name>`, `email.<activity>` | `triggered`, `notTriggered` (also `equals: true/false`) | none |
/// | `event.<name>`, `email.<activity>` | `triggeredWithin`, `notTriggeredWithin`, `triggeredOlderThan` | positive number + `unit` |
/// | `segment.<id>` | `memberOfSegment`, `notMemberOfSegment` | none |
///
/// `<activity>` is `sent`, `delivered`, `opened`, `clicked`, `bounced` or `complained`;
/// `segment.<id>` must name a STATIC segment or a DYNAMIC one with `trackMembership`. A
/// `value` or `unit` the operator does not use is dropped.
#[derive(ToSchema)]
pub struct ConditionFilter {
    /// What is tested: `email`, `subscribed`, `createdAt`, `updatedAt`, `data.<path>`,
    /// `event.<name>`, `email.<activity>` or `segment.<id>`.
    #[schema(
        example = "data.plan",
        pattern = r"^(email|subscribed|createdAt|updatedAt|data\.[^.]+(\.[^.]+)*|event\..+|email\.(sent|delivered|opened|clicked|bounced|complained)|segment\..+)$"
    )]
    pub field: String,
    /// How it is tested; the operator must fit the field (see the table).
    pub operator: FilterOperator,
    /// The operand, for operators that take one: a string, number or boolean (date-times as
    /// RFC 3339 strings; a time window's length as a positive number). Omitted otherwise.
    #[schema(schema_with = filter_value)]
    pub value: Option<Value>,
    /// The unit of a time window; required exactly for `within`, `olderThan`,
    /// `triggeredWithin`, `notTriggeredWithin` and `triggeredOlderThan`.
    #[schema(nullable = false)]
    pub unit: Option<TimeUnit>,
}

/// `value` of a filter: a string, number or boolean.
fn filter_value() -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::Array(vec![
            Type::String,
            Type::Number,
            Type::Boolean,
        ]))
        .description(Some(
            "The operand: a string, number or boolean; omitted for operators without one.",
        ))
        .build()
}

/// A filter's operator.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum FilterOperator {
    /// Equal to the value.
    Equals,
    /// Not equal to the value.
    NotEquals,
    /// Case-insensitive substring (strings) or element (arrays).
    Contains,
    /// Not `contains`.
    NotContains,
    /// Above the value.
    GreaterThan,
    /// Below the value.
    LessThan,
    /// At or above the value.
    GreaterThanOrEqual,
    /// At or below the value.
    LessThanOrEqual,
    /// The data path holds a non-null value.
    Exists,
    /// Not `exists`.
    NotExists,
    /// At or after `now - value unit`.
    Within,
    /// Before `now - value unit`.
    OlderThan,
    /// At least one occurrence.
    Triggered,
    /// No occurrence.
    NotTriggered,
    /// At least one occurrence at or after `now - value unit`.
    TriggeredWithin,
    /// No occurrence at or after `now - value unit`.
    NotTriggeredWithin,
    /// At least one occurrence before `now - value unit`.
    TriggeredOlderThan,
    /// The contact is a member of the segment.
    MemberOfSegment,
    /// The contact is not a member of the segment.
    NotMemberOfSegment,
}

/// The unit of a time window (any case is accepted; answers use lower case). Windows are
/// above 0 and at most 36,500 days.
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// 60 seconds.
    Minutes,
    /// 3,600 seconds.
    Hours,
    /// 86,400 seconds.
    Days,
}

// ---------------------------------------------------------------------------------------
// Segments
// ---------------------------------------------------------------------------------------

/// How a segment's members are decided; never changes.
#[derive(ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SegmentType {
    /// The contacts matching the condition, whenever asked.
    Dynamic,
    /// Members added and removed explicitly.
    Static,
}

/// A stored segment (as embedded in a campaign; without `memberCount`).
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentRecord {
    /// Segment id.
    pub id: String,
    /// Owning workspace.
    pub project_id: String,
    /// Name; its slug names the `segment.<slug>.entry|exit` events.
    pub name: String,
    /// Description.
    #[schema(required = true)]
    pub description: Option<String>,
    /// DYNAMIC or STATIC.
    #[serde(rename = "type")]
    pub segment_type: SegmentType,
    /// The condition; always set for DYNAMIC, null for a STATIC segment without one.
    #[schema(required = true)]
    pub condition: Option<SegmentCondition>,
    /// Whether members are stored and entries and exits emitted as events.
    pub track_membership: bool,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// A segment with its current member count.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    #[serde(flatten)]
    pub segment: SegmentRecord,
    /// Members now (computed at read time for DYNAMIC segments).
    pub member_count: u64,
}

/// A page of segments, newest first.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentPage {
    /// The segments.
    pub data: Vec<Segment>,
    /// 1-based page number.
    pub page: u64,
    /// Page size.
    pub page_size: u64,
    /// Segments in all pages.
    pub total: u64,
    /// Number of pages.
    pub total_pages: u64,
}

/// A page of a segment's members.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentContactPage {
    /// The members: stored members newest first; an untracked DYNAMIC segment's matches
    /// oldest contact first.
    pub data: Vec<Contact>,
    /// 1-based page number.
    pub page: u64,
    /// Page size.
    pub page_size: u64,
    /// Members in all pages.
    pub total: u64,
    /// Number of pages.
    pub total_pages: u64,
}

/// Answer of `POST /segments/{id}/members`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentMembersAdded {
    /// Addresses that matched (or became) contacts, members already or not.
    pub added: u64,
    /// Addresses that matched no contact (empty with `createMissing`).
    pub not_found: Vec<String>,
    /// Contacts created; only when `createMissing` is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub created: Option<u64>,
}

/// Answer of `DELETE /segments/{id}/members`.
#[derive(ToSchema)]
pub struct SegmentMembersRemoved {
    /// Members removed.
    pub removed: u64,
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
        schemas.push((
            "SegmentCondition".to_string(),
            <SegmentCondition as utoipa::PartialSchema>::schema(),
        ));
        <SegmentCondition as utoipa::ToSchema>::schemas(schemas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::wire::de::parse;
    use serde_json::json;

    fn errors<T: Deserr<WireErrors> + PartialSchema + std::fmt::Debug>(
        body: Value,
    ) -> Vec<(String, String, String)> {
        match parse::<T>(body) {
            Err(Error::Validation(errors)) => errors
                .into_iter()
                .map(|e| (e.field, e.code, e.message))
                .collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    fn codes(errors: Vec<(String, String, String)>) -> Vec<(String, String)> {
        errors.into_iter().map(|(f, c, _)| (f, c)).collect()
    }

    fn pairs(want: &[(&str, &str)]) -> Vec<(String, String)> {
        want.iter()
            .map(|(f, c)| (f.to_string(), c.to_string()))
            .collect()
    }

    #[test]
    fn a_condition_is_required_unless_static_even_beside_other_errors() {
        let got = codes(errors::<SegmentCreateInput>(json!({})));
        assert_eq!(
            got,
            pairs(&[("name", "required"), ("condition", "required")])
        );
        let got = codes(errors::<SegmentCreateInput>(
            json!({"type": 3, "name": " "}),
        ));
        assert_eq!(
            got,
            pairs(&[
                ("name", "required"),
                ("type", "invalid_type"),
                ("condition", "required")
            ])
        );
        let got = codes(errors::<SegmentCreateInput>(
            json!({"name": "x", "type": "STATIC", "trackMembership": "yes"}),
        ));
        assert_eq!(got, pairs(&[("trackMembership", "invalid_type")]));
        assert!(parse::<SegmentCreateInput>(json!({"name": "x", "type": "STATIC"})).is_ok());
    }

    #[test]
    fn member_emails_are_checked_one_by_one() {
        let got = errors::<SegmentMembersAddBody>(
            json!({"emails": ["a@example.com", 3, "bad"], "createMissing": "no"}),
        );
        assert_eq!(got[0].0, "emails.1");
        assert_eq!(got[0].2, "must be a string, got number");
        assert_eq!(
            codes(got),
            pairs(&[
                ("emails.1", "invalid_type"),
                ("emails.2", "invalid_email"),
                ("createMissing", "invalid_type")
            ])
        );
        let got = codes(errors::<SegmentMembersRemoveBody>(json!({"emails": []})));
        assert_eq!(got, pairs(&[("emails", "out_of_range")]));
        let body: SegmentMembersRemoveBody =
            parse(json!({"emails": ["a@example.com", "a@example.com"], "createMissing": 1}))
                .expect("valid");
        assert_eq!(body.emails.0.len(), 1);
    }

    #[test]
    fn a_type_that_is_not_a_type_is_refused_as_a_change() {
        let got = codes(errors::<SegmentPatchBody>(json!({"type": "OTHER"})));
        assert_eq!(got, pairs(&[("type", "immutable")]));
    }
}
