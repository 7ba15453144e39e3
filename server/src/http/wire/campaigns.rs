//! `/campaigns`: bodies and query strings into typed commands, and the shapes of the answers.

use chrono::{DateTime, Utc};
use deserr::{Deserr, IntoValue, Value as DValue, ValuePointerRef};
use posthorn_core::app::campaigns::{CampaignPatch, CreateCampaign, ListCampaigns, SendCampaign};
use posthorn_core::app::send::{MAX_NAME_CHARS, MAX_SUBJECT_CHARS};
use posthorn_core::app::PageRequest;
use posthorn_core::model::SegmentId;
use posthorn_core::model::{AudienceType, CampaignStatus};
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::RefOr;
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::de::{path_of, Email, Filled, Line, Nullable, QueryInt, Templated, WireErrors};
use super::segments::{AudienceCondition, SegmentCondition, SegmentRecord};

type Name = Line<255>;
type Description = Line<2000>;
type Subject = Templated<Line<MAX_SUBJECT_CHARS>>;
type FromName = Line<MAX_NAME_CHARS>;

const AUDIENCE_MESSAGE: &str = "audienceType must be ALL, SEGMENT or FILTERED";
const STATUS_MESSAGE: &str = "status must be DRAFT, SCHEDULED, SENDING, SENT or CANCELLED";

/// `ALL`, `SEGMENT` or `FILTERED` (exact case), parsed by [`AudienceType::parse`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Audience(pub AudienceType);

impl Deserr<WireErrors> for Audience {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        AudienceType::parse(&raw)
            .map(Audience)
            .ok_or_else(|| WireErrors::at(location, "invalid_enum", AUDIENCE_MESSAGE))
    }
}

impl PartialSchema for Audience {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["ALL", "SEGMENT", "FILTERED"]))
            .description(Some(
                "Who receives the campaign (always only subscribed, ACTIVE contacts): ALL, the \
                 members of `segmentId` (SEGMENT) or the contacts matching `audienceCondition` \
                 (FILTERED).",
            ))
            .into()
    }
}

impl ToSchema for Audience {}

/// A campaign status (exact case), as listed and answered.
fn status_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["DRAFT", "SCHEDULED", "SENDING", "SENT", "CANCELLED"]))
}

/// A campaign's status in a query string (trimmed; empty for none).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QueryStatus(pub Option<CampaignStatus>);

impl Deserr<WireErrors> for QueryStatus {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        match raw.trim() {
            "" => Ok(QueryStatus(None)),
            raw => CampaignStatus::parse(raw)
                .map(|s| QueryStatus(Some(s)))
                .ok_or_else(|| WireErrors::at(location, "invalid_enum", STATUS_MESSAGE)),
        }
    }
}

impl PartialSchema for QueryStatus {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some([
                "",
                "DRAFT",
                "SCHEDULED",
                "SENDING",
                "SENT",
                "CANCELLED",
            ]))
            .description(Some("A campaign status; empty for any."))
            .into()
    }
}

impl ToSchema for QueryStatus {}

/// Where a campaign is in its life: DRAFT → SCHEDULED | SENDING; SCHEDULED → SENDING |
/// SCHEDULED | CANCELLED; SENDING → SENT | CANCELLED.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Status;

impl PartialSchema for Status {
    fn schema() -> RefOr<Schema> {
        status_schema()
            .description(Some(
                "DRAFT → SCHEDULED | SENDING; SCHEDULED → SENDING | SCHEDULED | CANCELLED; \
                 SENDING → SENT | CANCELLED.",
            ))
            .into()
    }
}

impl ToSchema for Status {}

/// An RFC 3339 date-time (`T` separator, `Z` or a numeric offset), as `scheduledFor` takes it.
const DATE_TIME: &str = concat!(
    r"^\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\d|3[01])|(0[469]|11)-(0[1-9]|[12]\d|30)",
    r"|02-(0[1-9]|1\d|2[0-8]))T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?",
    r"(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$"
);

/// `scheduledFor`: an RFC 3339 date-time string (trimmed), parsed with
/// [`DateTime::parse_from_rfc3339`] (`invalid_date` otherwise).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SendAt(pub DateTime<Utc>);

impl Deserr<WireErrors> for SendAt {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let key = path_of(location);
        match value {
            DValue::String(raw) => DateTime::parse_from_rfc3339(raw.trim())
                .map(|t| SendAt(t.with_timezone(&Utc)))
                .map_err(|_| {
                    WireErrors::at(
                        location,
                        "invalid_date",
                        format!("{key} must be an ISO 8601 date-time"),
                    )
                }),
            _ => Err(WireErrors::at(
                location,
                "invalid_type",
                format!("{key} must be a date-time string or null"),
            )),
        }
    }
}

impl PartialSchema for SendAt {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .pattern(Some(DATE_TIME))
            .min_length(Some(20))
            .into()
    }
}

impl ToSchema for SendAt {}

/// Body of `POST /campaigns`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = CampaignCreate)]
#[schema(example = json!({
    "name": "Autumn news",
    "subject": "Hi {{name}}",
    "body": "<p>News for {{contact.email}}</p>",
    "from": "news@example.com",
    "fromName": "Acme News",
    "audienceType": "SEGMENT",
    "segmentId": "0193a5f0-7c1e-7d2a-9a0e-5b1c2d3e4f50"
}))]
pub struct CampaignCreateBody {
    /// Name.
    #[schema(inline)]
    pub name: Filled<Name>,
    /// Description.
    #[deserr(default)]
    #[schema(inline)]
    pub description: Option<Description>,
    /// Subject with placeholders.
    #[schema(inline)]
    pub subject: Filled<Subject>,
    /// HTML body with placeholders (`{{name}}`, `{{contact.email}}`, `{{data.plan}}`).
    #[schema(inline)]
    pub body: Filled<Templated<String>>,
    /// Sender address; must be on a verified domain.
    #[schema(inline)]
    pub from: Filled<Email>,
    /// Sender name.
    #[deserr(default)]
    #[schema(inline)]
    pub from_name: Option<FromName>,
    /// Reply-To address.
    #[deserr(default)]
    #[schema(inline)]
    pub reply_to: Option<Email>,
    /// ALL, SEGMENT or FILTERED.
    #[schema(inline)]
    pub audience_type: Filled<Audience>,
    /// An existing segment; required for SEGMENT.
    #[deserr(default)]
    pub segment_id: Option<String>,
    /// The audience's condition; required for FILTERED.
    #[deserr(default)]
    #[schema(inline)]
    pub audience_condition: Option<AudienceCondition>,
}

impl From<CampaignCreateBody> for CreateCampaign {
    fn from(b: CampaignCreateBody) -> Self {
        CreateCampaign {
            name: b.name.0 .0,
            description: b.description.map(|d| d.0),
            subject: b.subject.0 .0 .0,
            body: b.body.0 .0,
            from: b.from.0 .0,
            from_name: b.from_name.map(|n| n.0),
            reply_to: b.reply_to.map(|e| e.0),
            audience_type: b.audience_type.0 .0,
            segment_id: b.segment_id.map(|s| SegmentId::from(s.trim())),
            audience_condition: b.audience_condition.map(|c| c.0),
        }
    }
}

/// Body of `POST /campaigns`: [`CampaignCreateBody`], whose schema also states what each
/// audience needs (`segmentId` for SEGMENT, `audienceCondition` for FILTERED; 400
/// `BAD_REQUEST` otherwise).
#[derive(Debug)]
pub struct CampaignCreateInput(pub CampaignCreateBody);

impl Deserr<WireErrors> for CampaignCreateInput {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        CampaignCreateBody::deserialize_from_value(value, location).map(CampaignCreateInput)
    }
}

impl PartialSchema for CampaignCreateInput {
    fn schema() -> RefOr<Schema> {
        use utoipa::openapi::schema::{AllOfBuilder, AnyOfBuilder};
        let audience = |kind: &str, field: Option<(&str, Type)>| {
            let builder = ObjectBuilder::new().property(
                "audienceType",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some([kind])),
            );
            match field {
                Some((name, ty)) => builder
                    .property(name, ObjectBuilder::new().schema_type(ty))
                    .required(name),
                None => builder,
            }
        };
        AllOfBuilder::new()
            .item(CampaignCreateBody::schema())
            .item(
                AnyOfBuilder::new()
                    .item(audience("ALL", None))
                    .item(audience("SEGMENT", Some(("segmentId", Type::String))))
                    .item(audience(
                        "FILTERED",
                        Some(("audienceCondition", Type::Object)),
                    ))
                    .description(Some(
                        "SEGMENT needs `segmentId`, FILTERED needs `audienceCondition`.",
                    )),
            )
            .into()
    }
}

impl ToSchema for CampaignCreateInput {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("CampaignCreate")
    }
}

impl From<CampaignCreateInput> for CreateCampaign {
    fn from(CampaignCreateInput(b): CampaignCreateInput) -> Self {
        b.into()
    }
}

/// Body of `PUT` or `PATCH /campaigns/{id}` (DRAFT or SCHEDULED only): fields not given are
/// left alone; `null` clears optional ones.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = CampaignUpdate)]
pub struct CampaignPatchBody {
    /// Name.
    #[deserr(default)]
    #[schema(inline)]
    pub name: Option<Name>,
    /// Description; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub description: Nullable<Description>,
    /// Subject with placeholders.
    #[deserr(default)]
    #[schema(inline)]
    pub subject: Option<Subject>,
    /// HTML body with placeholders.
    #[deserr(default)]
    #[schema(inline)]
    pub body: Option<Templated<String>>,
    /// Sender address; must be on a verified domain.
    #[deserr(default)]
    #[schema(inline)]
    pub from: Option<Email>,
    /// Sender name; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub from_name: Nullable<FromName>,
    /// Reply-To address; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub reply_to: Nullable<Email>,
    /// ALL, SEGMENT or FILTERED.
    #[deserr(default)]
    #[schema(inline)]
    pub audience_type: Option<Audience>,
    /// An existing segment; required for SEGMENT; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub segment_id: Nullable<String>,
    /// The audience's condition; required for FILTERED; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub audience_condition: Nullable<AudienceCondition>,
}

impl From<CampaignPatchBody> for CampaignPatch {
    fn from(b: CampaignPatchBody) -> Self {
        CampaignPatch {
            name: b.name.map(|n| n.0),
            description: b.description.into_patch().map(|d| d.0),
            subject: b.subject.map(|s| s.0 .0),
            body: b.body.map(|s| s.0),
            from: b.from.map(|e| e.0),
            from_name: b.from_name.into_patch().map(|n| n.0),
            reply_to: b.reply_to.into_patch().map(|e| e.0),
            audience_type: b.audience_type.map(|a| a.0),
            segment_id: b.segment_id.into_patch().map(|s| SegmentId::from(s.trim())),
            audience_condition: b.audience_condition.into_patch().map(|c| c.0),
        }
    }
}

/// Query of `GET /campaigns` (page pagination, newest first).
#[derive(Debug, Deserr, IntoParams)]
#[deserr(error = WireErrors)]
#[into_params(parameter_in = Query)]
pub struct CampaignsQuery {
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
    /// Only campaigns in this status.
    #[deserr(default)]
    #[param(inline, value_type = Option<QueryStatus>)]
    pub status: QueryStatus,
}

impl From<CampaignsQuery> for ListCampaigns {
    fn from(q: CampaignsQuery) -> Self {
        ListCampaigns {
            page: PageRequest {
                page: q.page.0 as u64,
                page_size: q.page_size.or(q.limit).map_or(20, |n| n.0 as u64),
            },
            status: q.status.0,
        }
    }
}

/// Body of `POST /campaigns/{id}/send` (may be empty).
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = CampaignSend)]
pub struct CampaignSendBody {
    /// A future time to send at (the campaign becomes SCHEDULED; sending a SCHEDULED
    /// campaign again moves it); omitted or null sends now.
    #[deserr(default)]
    #[schema(inline)]
    pub scheduled_for: Option<SendAt>,
}

impl From<CampaignSendBody> for SendCampaign {
    fn from(b: CampaignSendBody) -> Self {
        SendCampaign {
            scheduled_for: b.scheduled_for.map(|t| t.0),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Answers: the shapes `routes::campaigns` renders (`campaign_json` and the envelopes).
// ---------------------------------------------------------------------------------------

/// A campaign with its counters and embedded segment.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Campaign {
    /// Campaign id.
    pub id: String,
    /// Owning workspace.
    pub project_id: String,
    /// Name.
    pub name: String,
    /// Description.
    #[schema(required = true)]
    pub description: Option<String>,
    /// Subject with placeholders.
    pub subject: String,
    /// HTML body with placeholders.
    pub body: String,
    /// Sender address on a verified domain.
    #[schema(format = Email)]
    pub from: String,
    /// Sender name.
    #[schema(required = true)]
    pub from_name: Option<String>,
    /// Reply-To address.
    #[schema(required = true, format = Email)]
    pub reply_to: Option<String>,
    /// ALL, SEGMENT or FILTERED.
    #[schema(inline)]
    pub audience_type: Audience,
    /// The segment of a SEGMENT audience.
    #[schema(required = true)]
    pub segment_id: Option<String>,
    /// The condition of a FILTERED audience.
    #[schema(required = true)]
    pub audience_condition: Option<SegmentCondition>,
    /// Current status.
    #[schema(inline)]
    pub status: Status,
    /// When a SCHEDULED campaign starts.
    #[schema(required = true)]
    pub scheduled_for: Option<DateTime<Utc>>,
    /// When sending started.
    #[schema(required = true)]
    pub sent_at: Option<DateTime<Utc>>,
    /// Recipients (emails created) so far; exact once expansion is done.
    pub total_recipients: u64,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// Recipients handed to the provider (or further).
    pub sent_count: u64,
    /// Recipients whose delivery was confirmed (including opened, clicked, complained).
    pub delivered_count: u64,
    /// Recipients who opened (including clicked).
    pub opened_count: u64,
    /// Recipients who clicked.
    pub clicked_count: u64,
    /// Recipients whose email bounced.
    pub bounced_count: u64,
    /// The audience segment (SEGMENT audiences); null otherwise or when it was deleted.
    #[schema(required = true)]
    pub segment: Option<SegmentRecord>,
}

/// `{success: true, data}` with one campaign.
#[derive(ToSchema)]
pub struct CampaignResponse {
    /// Always `true`.
    pub success: bool,
    /// The campaign.
    pub data: Campaign,
}

/// `{success: true, data, message}` of `POST /campaigns/{id}/send` and `.../cancel`.
#[derive(ToSchema)]
pub struct CampaignActionResponse {
    /// Always `true`.
    pub success: bool,
    /// The campaign after the change.
    pub data: Campaign,
    /// What happened, e.g. `Campaign is sending`, `Campaign scheduled for <time>` or
    /// `Campaign cancelled`.
    #[schema(example = "Campaign is sending")]
    pub message: String,
}

/// Answer of `DELETE /campaigns/{id}`.
#[derive(ToSchema)]
pub struct CampaignDeleted {
    /// Always `true`.
    pub success: bool,
    /// `Campaign deleted`.
    #[schema(example = "Campaign deleted")]
    pub message: String,
}

/// A page of campaigns, newest first, with `success`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignPage {
    /// Always `true`.
    pub success: bool,
    /// The campaigns.
    pub data: Vec<Campaign>,
    /// 1-based page number.
    pub page: u64,
    /// Page size.
    pub page_size: u64,
    /// Campaigns matching the filter.
    pub total: u64,
    /// Number of pages.
    pub total_pages: u64,
}

/// A campaign's counters and rates.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignStats {
    /// Campaign id.
    pub campaign_id: String,
    /// Current status.
    #[schema(inline)]
    pub status: Status,
    /// Recipients (emails created) so far.
    pub total_recipients: u64,
    /// Emails waiting for delivery.
    pub queued_count: u64,
    /// Handed to the provider (or further).
    pub sent_count: u64,
    /// Delivery confirmed (including opened, clicked, complained).
    pub delivered_count: u64,
    /// Opened (including clicked).
    pub opened_count: u64,
    /// Clicked.
    pub clicked_count: u64,
    /// Bounced.
    pub bounced_count: u64,
    /// Complained.
    pub complained_count: u64,
    /// Failed before reaching the provider.
    pub failed_count: u64,
    /// Cancelled before being handed over.
    pub cancelled_count: u64,
    /// `deliveredCount` in percent of `sentCount` (two decimals; 0 when nothing was sent).
    #[schema(minimum = 0, maximum = 100)]
    pub delivery_rate: f64,
    /// `openedCount` in percent of `sentCount`.
    #[schema(minimum = 0, maximum = 100)]
    pub open_rate: f64,
    /// `clickedCount` in percent of `sentCount`.
    #[schema(minimum = 0, maximum = 100)]
    pub click_rate: f64,
    /// `bouncedCount` in percent of `sentCount`.
    #[schema(minimum = 0, maximum = 100)]
    pub bounce_rate: f64,
    /// `complainedCount` in percent of `sentCount`.
    #[schema(minimum = 0, maximum = 100)]
    pub complaint_rate: f64,
}

/// `{success: true, data}` of `GET /campaigns/{id}/stats`.
#[derive(ToSchema)]
pub struct CampaignStatsResponse {
    /// Always `true`.
    pub success: bool,
    /// The counters and rates.
    pub data: CampaignStats,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::wire::de::parse;
    use posthorn_core::Error;
    use serde_json::json;

    fn fields(body: serde_json::Value) -> Vec<(String, String)> {
        match parse::<CampaignCreateBody>(body) {
            Err(Error::Validation(errors)) => {
                errors.into_iter().map(|e| (e.field, e.code)).collect()
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn every_field_in_declared_order_template_syntax_last() {
        let got = fields(
            json!({"audienceType": "SOME", "body": "{{ oops", "from": "x",
            "subject": "Hi\r\nBcc: x", "name": " "}),
        );
        let want = [
            ("name", "required"),
            ("subject", "invalid_characters"),
            ("from", "invalid_email"),
            ("audienceType", "invalid_enum"),
            ("body", "invalid_template"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(f, c)| (f.to_string(), c.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn scheduled_for_must_be_a_date_time_string_or_null() {
        let body: CampaignSendBody = parse(json!({"scheduledFor": null})).expect("null");
        assert!(body.scheduled_for.is_none());
        for (value, code) in [(json!("soon"), "invalid_date"), (json!(3), "invalid_type")] {
            match parse::<CampaignSendBody>(json!({ "scheduledFor": value })) {
                Err(Error::Validation(errors)) => {
                    assert_eq!(errors.len(), 1);
                    assert_eq!(errors[0].field, "scheduledFor");
                    assert_eq!(errors[0].code, code);
                }
                other => panic!("expected a validation error, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_patch_tells_null_from_absent() {
        let body: CampaignPatchBody =
            parse(json!({"segmentId": null, "fromName": "Ada", "name": null})).expect("valid");
        let patch = CampaignPatch::from(body);
        assert_eq!(patch.segment_id, posthorn_core::app::Patch::Clear);
        assert_eq!(patch.description, posthorn_core::app::Patch::Keep);
        assert_eq!(patch.name, None);
    }
}
