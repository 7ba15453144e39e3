//! Documentation-only DTOs of the areas not converted yet (`/v1/send`, `/segments`): the
//! JSON shapes their handlers accept and return, and `REQUEST_RULES` for
//! what the derive cannot say. `tests/openapi.rs` calls the real routes and checks every
//! answer against these schemas. Converted areas describe themselves with their wire types;
//! `SegmentCondition` and `SegmentRecord` are also what `/campaigns` embeds.

#![allow(dead_code)]

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::Value;
use utoipa::openapi::schema::{
    ArrayBuilder, Object, ObjectBuilder, OneOf, Ref, Schema, SchemaType, Type,
};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

pub use crate::http::error::ErrorResponse;
pub use posthorn_core::model::Contact;

/// Most recipients of one send.
const MAX_RECIPIENTS: usize = posthorn_core::app::send::MAX_RECIPIENTS;

// ---------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------

/// Free-form JSON object (documented as `type: object`).
pub type JsonObject = HashMap<String, Value>;

// ---------------------------------------------------------------------------------------
// /v1: send, track, verify
// ---------------------------------------------------------------------------------------

/// Body of `POST /v1/send`.
#[derive(ToSchema)]
#[schema(example = json!({
    "to": ["ada@example.org", {"name": "Grace", "email": "grace@example.org"}],
    "from": "Acme <hello@acme.com>",
    "subject": "Welcome, {{name}}",
    "body": "<p>Hello {{name}}</p>",
    "data": {"name": "friend"}
}))]
pub struct SendRequest {
    /// One recipient or a list of 1 to 50 (duplicates are sent once).
    pub to: Recipients,
    /// Sender on a verified domain of the workspace; required unless the template has one.
    pub from: Option<MailboxInput>,
    /// Subject; required when no template is given. At most 998 characters.
    #[schema(max_length = 998)]
    pub subject: Option<String>,
    /// HTML body; required when no template is given.
    pub body: Option<String>,
    /// Plain-text part: omitted = generated from `body`; `""` = no text part.
    pub text: Option<String>,
    /// Template id; supplies subject, body, from and reply-to unless given here.
    pub template: Option<String>,
    /// Sender display name (overrides `from.name`).
    #[schema(max_length = 256)]
    pub name: Option<String>,
    /// Subscription flag to set on the recipients' contacts; new contacts default to false.
    pub subscribed: Option<bool>,
    /// Template variables.
    #[schema(value_type = Option<Object>)]
    pub data: Option<JsonObject>,
    /// Custom headers (name to value); CR/LF and headers Posthorn sets are refused.
    pub headers: Option<HashMap<String, String>>,
    /// Reply-To address.
    #[schema(format = Email)]
    pub reply: Option<String>,
    /// At most 10 attachments, 10 MB decoded in total.
    #[schema(max_items = 10)]
    pub attachments: Option<Vec<Attachment>>,
}

/// `to`: one recipient or an array of 1 to 50 (schema written by hand for the array bounds).
pub struct Recipients;

impl utoipa::PartialSchema for Recipients {
    fn schema() -> RefOr<Schema> {
        let one = || Ref::from_schema_name("MailboxInput");
        OneOf::builder()
            .item(one())
            .item(
                ArrayBuilder::new()
                    .items(one())
                    .min_items(Some(1))
                    .max_items(Some(MAX_RECIPIENTS)),
            )
            .description(Some(
                "One recipient, or an array of 1 to 50 (duplicates are sent once).",
            ))
            .into()
    }
}

impl ToSchema for Recipients {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((MailboxInput::name().into(), MailboxInput::schema()));
        MailboxInput::schemas(schemas);
    }
}

/// A mailbox: `address`, `Display Name <address>`, or `{name, email}`.
#[derive(ToSchema)]
#[serde(untagged)]
pub enum MailboxInput {
    /// `address` or `Display Name <address>`.
    #[schema(example = "Ada Lovelace <ada@example.org>")]
    Address(String),
    /// A mailbox object.
    Named(NamedMailbox),
}

/// A mailbox as an object.
#[derive(ToSchema)]
pub struct NamedMailbox {
    /// Display name.
    #[schema(max_length = 256)]
    pub name: Option<String>,
    /// Address.
    #[schema(format = Email)]
    pub email: String,
}

/// Whether an attachment is a download or is shown inline.
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Disposition {
    /// A downloadable file (default).
    Attachment,
    /// Shown inline, referenced as `cid:<contentId>` from the HTML.
    Inline,
}

/// A file attached to a sent email.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    /// File name shown to the recipient.
    #[schema(max_length = 255)]
    pub filename: String,
    /// File content, base64 encoded.
    #[schema(content_encoding = "base64")]
    pub content: String,
    /// MIME type; default `application/octet-stream`.
    #[schema(max_length = 255, example = "application/pdf")]
    pub content_type: Option<String>,
    /// Content-ID; required for inline attachments.
    #[schema(max_length = 255)]
    pub content_id: Option<String>,
    /// `attachment` (default) or `inline`.
    pub disposition: Option<Disposition>,
}

/// `{success: true, data}` of `POST /v1/send`.
#[derive(ToSchema)]
pub struct SendResponse {
    /// Always `true`.
    pub success: bool,
    /// What was accepted.
    pub data: SendResult,
}

/// The accepted emails.
#[derive(ToSchema)]
pub struct SendResult {
    /// One entry per distinct recipient, in request order.
    pub emails: Vec<SentEmail>,
    /// When the request was accepted.
    pub timestamp: DateTime<Utc>,
}

/// One accepted recipient.
#[derive(ToSchema)]
pub struct SentEmail {
    /// The recipient's contact.
    pub contact: ContactRef,
    /// Email record id (the `emailId` of later events).
    pub email: String,
}

/// A contact's id and address.
#[derive(ToSchema)]
pub struct ContactRef {
    /// Contact id.
    pub id: String,
    /// Contact address.
    #[schema(format = Email)]
    pub email: String,
}

// ---------------------------------------------------------------------------------------
// Contacts
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------

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

/// Body of `POST /segments`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({
    "name": "Pro users",
    "condition": {"logic": "AND", "groups": [{"filters": [{"field": "data.plan", "operator": "equals", "value": "pro"}]}]},
    "trackMembership": true
}))]
pub struct SegmentCreate {
    /// Name.
    #[schema(max_length = 255)]
    pub name: String,
    /// Description.
    #[schema(max_length = 2000)]
    pub description: Option<String>,
    /// DYNAMIC (default) or STATIC.
    #[serde(rename = "type")]
    pub segment_type: Option<SegmentType>,
    /// The condition; required for DYNAMIC, optional for STATIC.
    pub condition: Option<SegmentCondition>,
    /// Store members and emit entry and exit events (default false).
    pub track_membership: Option<bool>,
}

/// Body of `PATCH` or `PUT /segments/{id}`: fields not given are left alone.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentPatch {
    /// Name.
    #[schema(max_length = 255)]
    pub name: Option<String>,
    /// Description; `null` clears it.
    #[schema(max_length = 2000)]
    pub description: Option<String>,
    /// A new condition (`null` leaves it alone); a tracked segment announces the resulting
    /// entries and exits.
    pub condition: Option<SegmentCondition>,
    /// Turns tracking on (quiet first snapshot) or off.
    pub track_membership: Option<bool>,
    /// Must equal the current type (422 otherwise): the type never changes.
    #[serde(rename = "type")]
    pub segment_type: Option<SegmentType>,
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

/// Body of `POST /segments/{id}/members`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentMembersAdd {
    /// 1 to 500 addresses (duplicates count once).
    #[schema(min_items = 1, max_items = 500)]
    pub emails: Vec<String>,
    /// Create contacts for addresses that match none (default false).
    pub create_missing: Option<bool>,
    /// Subscription flag of contacts created with `createMissing` (default true).
    pub subscribed: Option<bool>,
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

/// Body of `DELETE /segments/{id}/members`.
#[derive(ToSchema)]
pub struct SegmentMembersRemove {
    /// 1 to 500 addresses; addresses of no member are ignored.
    #[schema(min_items = 1, max_items = 500)]
    pub emails: Vec<String>,
}

/// Answer of `DELETE /segments/{id}/members`.
#[derive(ToSchema)]
pub struct SegmentMembersRemoved {
    /// Members removed.
    pub removed: u64,
}

// ---------------------------------------------------------------------------------------
// Keys, workspaces, domains
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// System
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Request rules the derive cannot spell
// ---------------------------------------------------------------------------------------

/// Control characters (Unicode `Cc`): what `char::is_control` refuses.
const CONTROL: &str = r"\u0000-\u001F\u007F-\u009F";
/// Control characters other than tab: what single-line fields refuse.
const CONTROL_BUT_TAB: &str = r"\u0000-\u0008\u000A-\u001F\u007F-\u009F";
/// The local part of an address: at most 64 atom characters and dots, no dot first or last
/// (and, by the lookahead in [`Rule::constraints`], no two dots in a row).
const LOCAL_PART: &str = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]([A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{0,62}[A-Za-z0-9!#$%&'*+/=?^_`{|}~-])?";
/// One domain label: letters, digits and inner hyphens, 1 to 63 characters.
const LABEL: &str = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";

/// What a request field must look like beyond its type, as the use cases check it.
#[derive(Clone, Copy)]
enum Rule {
    /// One line: no control characters other than tab (may be empty).
    Line,
    /// One line with at least one character that is not white space.
    FilledLine,
    /// Any text with at least one character that is not white space.
    Filled,
    /// An email address: dot-atom local part, a domain of two labels or more.
    Email,
    /// `address` or `Display Name <address>`, no control characters.
    Mailbox,
    /// A custom event name: not blank, no control characters.
    EventName,
    /// A domain name of two labels or more.
    DomainName,
    /// An RFC 3339 date-time (`T` separator, `Z` or a numeric offset).
    DateTime,
    /// Canonical standard base64 with padding, at least one byte.
    Base64,
}

impl Rule {
    /// The pattern, and the least and most characters.
    fn constraints(self) -> (String, Option<usize>, Option<usize>) {
        let email = format!(r"(?![^@<]*\.\.){LOCAL_PART}@({LABEL}\.)+[A-Za-z]{{2,63}}");
        match self {
            Rule::Line => (format!("^[^{CONTROL_BUT_TAB}]*$"), None, None),
            Rule::FilledLine => (
                format!(
                    r"^[^{CONTROL_BUT_TAB}]*[^\s{CONTROL}][^{CONTROL_BUT_TAB}]*$"
                ),
                Some(1),
                None,
            ),
            Rule::Filled => (r"\S".to_string(), Some(1), None),
            Rule::Email => (format!("^{email}$"), Some(3), Some(254)),
            Rule::Mailbox => (
                format!("^({email}|[^{CONTROL}<>]*<{email}>)$"),
                Some(3),
                None,
            ),
            Rule::EventName => (
                format!(r"^[^{CONTROL}]*[^\s{CONTROL}][^{CONTROL}]*$"),
                Some(1),
                None,
            ),
            Rule::DomainName => (
                format!(r"^({LABEL}\.)+{LABEL}$"),
                Some(3),
                Some(253),
            ),
            Rule::DateTime => (
                concat!(
                    r"^\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\d|3[01])|(0[469]|11)-(0[1-9]|[12]\d|30)",
                    r"|02-(0[1-9]|1\d|2[0-8]))T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?",
                    r"(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$"
                )
                .to_string(),
                Some(20),
                None,
            ),
            Rule::Base64 => (
                concat!(
                    r"^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{4}|[A-Za-z0-9+/][AQgw]==",
                    r"|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)$"
                )
                .to_string(),
                Some(4),
                None,
            ),
        }
    }

    /// Adds the rule to a string schema (or to the string branch of a nullable one).
    fn apply(self, schema: &mut Schema) {
        match schema {
            Schema::Object(object) => {
                let (pattern, min, max) = self.constraints();
                object.pattern = Some(pattern);
                if min.is_some() {
                    object.min_length = min;
                }
                if let (Some(max), current) = (max, &mut object.max_length) {
                    *current = Some(current.map_or(max, |c| c.min(max)));
                }
            }
            Schema::Array(array) => {
                if let utoipa::openapi::schema::ArrayItems::RefOrSchema(items) = &mut array.items {
                    if let RefOr::T(item) = items.as_mut() {
                        self.apply(item);
                    }
                }
            }
            Schema::OneOf(one_of) => {
                for item in &mut one_of.items {
                    if let RefOr::T(item @ Schema::Object(_)) = item {
                        if is_string(item) {
                            self.apply(item);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

fn is_string(schema: &Schema) -> bool {
    match schema {
        Schema::Object(o) => match &o.schema_type {
            SchemaType::Type(Type::String) => true,
            SchemaType::Array(types) => types.contains(&Type::String),
            _ => false,
        },
        _ => false,
    }
}

/// Every (schema, property, rule) of the request bodies. Fields the use cases check only for
/// their type (free text such as `body` on updates or `text`) are not listed.
const REQUEST_RULES: &[(&str, &str, Rule)] = &[
    ("SendRequest", "subject", Rule::Line),
    ("SendRequest", "name", Rule::Line),
    ("SendRequest", "reply", Rule::Email),
    ("NamedMailbox", "name", Rule::Line),
    ("NamedMailbox", "email", Rule::Email),
    ("MailboxInput", "", Rule::Mailbox),
    ("Attachment", "filename", Rule::FilledLine),
    ("Attachment", "content", Rule::Base64),
    ("Attachment", "contentType", Rule::Line),
    ("Attachment", "contentId", Rule::Line),
    ("SegmentCreate", "name", Rule::FilledLine),
    ("SegmentCreate", "description", Rule::Line),
    ("SegmentPatch", "name", Rule::Line),
    ("SegmentPatch", "description", Rule::Line),
    ("SegmentMembersAdd", "emails", Rule::Email),
    ("SegmentMembersRemove", "emails", Rule::Email),
];

/// Adds [`REQUEST_RULES`] to the component schemas: patterns for what the derive attributes
/// cannot say (no line breaks, not blank, address and domain syntax, base64, RFC 3339).
pub struct RequestRules;

impl utoipa::Modify for RequestRules {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let Some(components) = openapi.components.as_mut() else {
            return;
        };
        for (schema_name, property, rule) in REQUEST_RULES {
            let Some(RefOr::T(schema)) = components.schemas.get_mut(*schema_name) else {
                panic!("REQUEST_RULES names {schema_name}, which is not a component");
            };
            if property.is_empty() {
                rule.apply(schema);
                continue;
            }
            let Schema::Object(object) = schema else {
                panic!("{schema_name} is not an object schema");
            };
            match object.properties.get_mut(*property) {
                Some(RefOr::T(field)) => rule.apply(field),
                _ => panic!("{schema_name}.{property} is not an inline property"),
            }
        }
        if let Some(RefOr::T(Schema::Object(send))) = components.schemas.get_mut("SendRequest") {
            if let Some(RefOr::T(Schema::Object(headers))) = send.properties.get_mut("headers") {
                headers.property_names = Some(Box::new(header_names()));
                if let Some(utoipa::openapi::schema::AdditionalProperties::RefOr(RefOr::T(value))) =
                    headers.additional_properties.as_deref_mut()
                {
                    Rule::Line.apply(value);
                    if let Schema::Object(value) = value {
                        value.max_length = Some(2000);
                    }
                }
            }
        }
    }
}

/// Header names a caller may set: printable ASCII without `:` or space, at most 76
/// characters, none of the headers Posthorn writes (any case).
fn header_names() -> Schema {
    let reserved: Vec<String> = posthorn_core::app::send::RESERVED_HEADERS
        .iter()
        .map(|name| {
            name.chars()
                .map(|c| {
                    if c.is_ascii_alphabetic() {
                        format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())
                    } else {
                        c.to_string()
                    }
                })
                .collect()
        })
        .collect();
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(76))
        .pattern(Some(format!("^(?!({})$)[!-9;-~]+$", reserved.join("|"))))
        .description(Some(
            "Printable ASCII without `:` or space, at most 76 characters; not one Posthorn sets \
             (From, To, Cc, Bcc, Subject, Date, Message-ID, Reply-To, Sender, MIME-Version, \
             Content-Type, Content-Transfer-Encoding, Return-Path, Content-Disposition, \
             X-Posthorn-Email-Id).",
        ))
        .into()
}
