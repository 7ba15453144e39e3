//! `/segments`: bodies and query strings into typed commands, and the shapes of the answers
//! and of the condition language.

use std::borrow::Cow;

use deserr::{Deserr, IntoValue, Value as DValue, ValueKind, ValuePointerRef};
use posthorn_core::app::segments::{
    immutable_type, CreateSegment, MembersAdded, Page, SegmentMembers, SegmentPatch, SegmentView,
    MAX_SEGMENT_DESCRIPTION_CHARS, MAX_SEGMENT_NAME_CHARS,
};
use posthorn_core::app::PageRequest;
use posthorn_core::model::{Contact, EmailAddress, Segment as SegmentRecord};
use posthorn_core::segment::{parse_condition, Condition};
use posthorn_core::validate::type_name;
use posthorn_core::Error;
use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};
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
// Answers: what `routes::segments` serializes
// ---------------------------------------------------------------------------------------

/// A segment with its current member count.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    /// The stored segment.
    #[serde(flatten)]
    pub segment: SegmentRecord,
    /// Members now (computed at read time for DYNAMIC segments).
    pub member_count: u64,
}

impl From<SegmentView> for Segment {
    fn from(view: SegmentView) -> Self {
        Segment {
            segment: view.segment,
            member_count: view.member_count,
        }
    }
}

/// A page of segments, newest first.
#[derive(Debug, Serialize, ToSchema)]
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

impl From<Page<SegmentView>> for SegmentPage {
    fn from(page: Page<SegmentView>) -> Self {
        SegmentPage {
            data: page.data.into_iter().map(Segment::from).collect(),
            page: page.page,
            page_size: page.page_size,
            total: page.total,
            total_pages: page.total_pages,
        }
    }
}

/// A page of a segment's members.
#[derive(Debug, Serialize, ToSchema)]
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

impl From<Page<Contact>> for SegmentContactPage {
    fn from(page: Page<Contact>) -> Self {
        SegmentContactPage {
            data: page.data,
            page: page.page,
            page_size: page.page_size,
            total: page.total,
            total_pages: page.total_pages,
        }
    }
}

/// Answer of `POST /segments/{id}/members`.
#[derive(Debug, Serialize, ToSchema)]
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

impl SegmentMembersAdded {
    /// The answer to an addition; `created` only when the request asked `createMissing`.
    pub fn new(out: MembersAdded, create_missing: bool) -> Self {
        SegmentMembersAdded {
            added: out.added,
            not_found: out.not_found,
            created: create_missing.then_some(out.created),
        }
    }
}

/// Answer of `DELETE /segments/{id}/members`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SegmentMembersRemoved {
    /// Members removed.
    pub removed: u64,
}

// ---------------------------------------------------------------------------------------
// Segment conditions
// ---------------------------------------------------------------------------------------

/// A segment condition in a request (`condition`, `audienceCondition`), parsed by core's
/// [`parse_condition`]: every problem is reported at its own path, e.g.
/// `audienceCondition.groups.0.filters.1.operator`. Described by core's [`Condition`]
/// schema (`SegmentCondition`), the same one answers use.
#[derive(Debug, Clone, PartialEq)]
pub struct AudienceCondition(pub Condition);

impl Deserr<WireErrors> for AudienceCondition {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let json = Value::from(value);
        parse_condition(&json, &path_of(location))
            .map(AudienceCondition)
            .map_err(|errors| WireErrors(errors, Vec::new()))
    }
}

impl PartialSchema for AudienceCondition {
    fn schema() -> RefOr<Schema> {
        Ref::from_schema_name(<Condition as ToSchema>::name()).into()
    }
}

impl ToSchema for AudienceCondition {
    fn name() -> Cow<'static, str> {
        <Condition as ToSchema>::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((
            <Condition as ToSchema>::name().into_owned(),
            <Condition as PartialSchema>::schema(),
        ));
        <Condition as ToSchema>::schemas(schemas);
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
    fn a_segment_answer_is_the_record_with_member_count() {
        let record: SegmentRecord = serde_json::from_value(json!({
            "id": "s1", "projectId": "w1", "name": "Pro", "description": null,
            "type": "DYNAMIC", "trackMembership": false,
            "condition": {"logic": "or", "groups": [{"filters": [
                {"field": "event.login", "operator": "equals", "value": true, "unit": 3}
            ]}]},
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"
        }))
        .expect("record");
        let got = serde_json::to_value(Segment::from(SegmentView {
            segment: record.clone(),
            member_count: 4,
        }))
        .expect("json");
        let mut want = serde_json::to_value(&record).expect("json");
        want["memberCount"] = json!(4);
        assert_eq!(got, want);
        assert_eq!(
            got["condition"],
            json!({"logic": "OR", "groups": [{"filters": [
                {"field": "event.login", "operator": "triggered"}
            ]}]})
        );
        assert_eq!(got["description"], Value::Null);

        let out = |created| MembersAdded {
            added: 2,
            not_found: vec!["a@example.com".into()],
            created,
        };
        assert_eq!(
            serde_json::to_value(SegmentMembersAdded::new(out(0), false)).expect("json"),
            json!({"added": 2, "notFound": ["a@example.com"]})
        );
        assert_eq!(
            serde_json::to_value(SegmentMembersAdded::new(out(1), true)).expect("json"),
            json!({"added": 2, "notFound": ["a@example.com"], "created": 1})
        );
    }

    #[test]
    fn a_type_that_is_not_a_type_is_refused_as_a_change() {
        let got = codes(errors::<SegmentPatchBody>(json!({"type": "OTHER"})));
        assert_eq!(got, pairs(&[("type", "immutable")]));
    }
}
