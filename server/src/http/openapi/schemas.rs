//! Documentation-only DTOs: the exact JSON shapes the handlers accept and return.
//!
//! Handlers build their JSON by hand (or serialize the core models); these structs exist only
//! to describe those shapes in the OpenAPI document. `tests/openapi.rs` calls the real routes
//! and checks every answer against these schemas, so a drift fails the build.

#![allow(dead_code)]

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::Value;
use utoipa::openapi::schema::{ArrayBuilder, OneOf, Ref, Schema};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// Most recipients of one send.
const MAX_RECIPIENTS: usize = posthorn_core::app::send::MAX_RECIPIENTS;

// ---------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------

/// Free-form JSON object (documented as `type: object`).
pub type JsonObject = HashMap<String, Value>;

/// The error envelope every failure is answered with (status as in `error.statusCode`).
#[derive(ToSchema)]
#[schema(example = json!({
    "success": false,
    "error": {
        "code": "VALIDATION_ERROR",
        "message": "Validation failed: email: email is required",
        "statusCode": 422,
        "requestId": "0193a5f0-7c1e-7d2a-9a0e-5b1c2d3e4f50",
        "errors": [{"field": "email", "message": "email is required", "code": "required"}],
        "suggestion": "Fix the fields listed in `errors` and send the request again."
    },
    "timestamp": "2026-11-21T10:00:00.000Z"
}))]
pub struct ErrorResponse {
    /// Always `false`.
    pub success: bool,
    /// What went wrong.
    pub error: ErrorBody,
    /// When the error was produced (RFC 3339, UTC, milliseconds).
    pub timestamp: DateTime<Utc>,
}

/// The `error` object of the error envelope.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// Machine-readable code: `VALIDATION_ERROR`, `BAD_REQUEST`, `MISSING_AUTH`,
    /// `INVALID_API_KEY`, `FORBIDDEN`, `PROJECT_DISABLED`, `DOMAIN_NOT_VERIFIED`, `NOT_FOUND`,
    /// `CONTACT_NOT_FOUND`, `TEMPLATE_NOT_FOUND`, `CAMPAIGN_NOT_FOUND`, `SEGMENT_NOT_FOUND`,
    /// `WORKFLOW_NOT_FOUND`, `CONFLICT`, `INVALID_STATE`, `IDEMPOTENCY_KEY_REUSED`,
    /// `PAYLOAD_TOO_LARGE`, `RATE_LIMIT_EXCEEDED` or `INTERNAL_ERROR`.
    #[schema(example = "VALIDATION_ERROR")]
    pub code: String,
    /// Human-readable explanation.
    pub message: String,
    /// The HTTP status of the response.
    #[schema(example = 422)]
    pub status_code: u16,
    /// Unique id of the request (also in the `X-Request-Id` header).
    pub request_id: String,
    /// Every failing field; only for `VALIDATION_ERROR` answers with status 422.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub errors: Option<Vec<FieldError>>,
    /// What to do about it.
    pub suggestion: String,
}

/// One failing field of a request.
#[derive(ToSchema)]
pub struct FieldError {
    /// Dot-separated path of the field, e.g. `to.3.email` or `attachments.0.content`.
    #[schema(example = "to.3.email")]
    pub field: String,
    /// What is wrong, for people.
    pub message: String,
    /// What is wrong, for programs: `required`, `invalid_type`, `invalid_email`,
    /// `out_of_range`, `too_long`, `too_many`, `invalid_enum`, ...
    #[schema(example = "invalid_email")]
    pub code: String,
}

/// A contact's status.
#[derive(ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ContactStatus {
    /// A normal contact.
    Active,
    /// Created while the workspace was at its active contact limit.
    Pending,
}

/// A template's type; MARKETING mail is never sent to unsubscribed contacts.
#[derive(ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TemplateType {
    /// Account mail, receipts: sent regardless of subscription.
    Transactional,
    /// Newsletters and promotions: subscribed contacts only.
    Marketing,
}

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

/// Body of `POST /v1/track`.
#[derive(ToSchema)]
#[schema(example = json!({"email": "ada@example.org", "event": "signup", "data": {"plan": "pro"}}))]
pub struct TrackRequest {
    /// The contact's address; the contact is created when missing.
    #[schema(format = Email)]
    pub email: String,
    /// Custom event name, 1 to 255 characters; names Posthorn emits (`email.*`,
    /// `contact.subscribed`, `contact.unsubscribed`, `segment.*.entry|exit`) are refused.
    #[schema(min_length = 1, max_length = 255)]
    pub event: String,
    /// Subscription flag; a new contact defaults to true, an existing one is left alone.
    pub subscribed: Option<bool>,
    /// Event data; also merged into the contact's data.
    #[schema(value_type = Option<Object>)]
    pub data: Option<JsonObject>,
}

/// `{success: true, data}` of `POST /v1/track`.
#[derive(ToSchema)]
pub struct TrackResponse {
    /// Always `true`.
    pub success: bool,
    /// What was recorded.
    pub data: TrackResult,
}

/// The tracked event.
#[derive(ToSchema)]
pub struct TrackResult {
    /// Contact id.
    pub contact: String,
    /// Event id.
    pub event: String,
    /// When the event was recorded.
    pub timestamp: DateTime<Utc>,
}

/// Body of `POST /v1/verify`.
#[derive(ToSchema)]
pub struct VerifyRequest {
    /// The address to check (a malformed one is answered with `valid: false`).
    #[schema(max_length = 512)]
    pub email: String,
}

/// `{success: true, data}` of `POST /v1/verify`.
#[derive(ToSchema)]
pub struct VerifyResponse {
    /// Always `true`.
    pub success: bool,
    /// The verdict.
    pub data: VerificationResult,
}

/// What Posthorn could tell about an address.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerificationResult {
    /// The normalised address, or the trimmed input when it does not parse.
    pub email: String,
    /// Good syntax, an existing domain and MX records.
    pub valid: bool,
    /// Disposable, throw-away mail service.
    pub is_disposable: bool,
    /// Alias or forwarding service.
    pub is_alias: bool,
    /// The domain looks misspelt; see `suggestedEmail`.
    pub is_typo: bool,
    /// The local part carries a `+tag`.
    pub is_plus_addressed: bool,
    /// The local part looks machine-generated.
    pub is_random_input: bool,
    /// Free personal mailbox provider.
    pub is_personal_email: bool,
    /// DNS confirmed the domain exists.
    pub domain_exists: bool,
    /// The domain has an address record.
    pub has_website: bool,
    /// The domain has a usable MX record.
    pub has_mx_records: bool,
    /// The address probably meant, when `isTypo`.
    #[schema(required = true)]
    pub suggested_email: Option<String>,
    /// Plain sentences explaining the verdict.
    pub reasons: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// Contacts
// ---------------------------------------------------------------------------------------

/// A contact of the workspace.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    /// Contact id.
    pub id: String,
    /// Owning workspace.
    pub project_id: String,
    /// Address (trimmed, lower-case), unique in the workspace.
    #[schema(format = Email)]
    pub email: String,
    /// Whether the contact accepts marketing mail.
    pub subscribed: bool,
    /// Custom fields.
    #[schema(value_type = Object)]
    pub data: JsonObject,
    /// ACTIVE, or PENDING when created at the workspace's active contact limit.
    pub status: ContactStatus,
    /// When a PENDING contact is removed if still pending; null otherwise.
    #[schema(required = true)]
    pub expires_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// A contact with `_meta`, answered by `POST /contacts`.
#[derive(ToSchema)]
pub struct UpsertedContact {
    #[serde(flatten)]
    pub contact: Contact,
    /// Whether the request created or updated the contact.
    #[serde(rename = "_meta")]
    pub meta: UpsertMeta,
}

/// Whether `POST /contacts` created or updated.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpsertMeta {
    /// The contact was created (status 201).
    pub is_new: bool,
    /// The contact existed (status 200).
    pub is_update: bool,
}

/// Body of `POST /contacts`.
#[derive(ToSchema)]
pub struct ContactUpsert {
    /// Address; the contact with this address is updated, or created.
    #[schema(format = Email)]
    pub email: String,
    /// Flag; true for a new contact when omitted, unchanged for an existing one.
    pub subscribed: Option<bool>,
    /// Merged shallowly into the contact's data; a `null` value removes that key.
    #[schema(value_type = Option<Object>)]
    pub data: Option<JsonObject>,
}

/// Body of `PATCH /contacts/{id}`.
#[derive(ToSchema)]
pub struct ContactPatch {
    /// New subscription flag.
    pub subscribed: Option<bool>,
    /// Merged shallowly; a `null` value removes that key; `data: null` clears all.
    #[schema(value_type = Option<Object>)]
    pub data: Option<JsonObject>,
    /// New address (409 when another contact has it).
    #[schema(format = Email)]
    pub email: Option<String>,
}

/// A cursor page of contacts, newest first.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContactPage {
    /// The contacts.
    pub data: Vec<Contact>,
    /// Cursor of the next page; null on the last page.
    #[schema(required = true)]
    pub cursor: Option<String>,
    /// Whether another page exists.
    pub has_more: bool,
    /// Number of matching contacts; only on the first page (no `cursor` given).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub total: Option<u64>,
}

// ---------------------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------------------

/// A reusable email template with `{{variable}}` placeholders.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Template {
    /// Template id.
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
    /// Plain-text version.
    #[schema(required = true)]
    pub text: Option<String>,
    /// Default sender address.
    #[schema(required = true, format = Email)]
    pub from: Option<String>,
    /// Default sender name.
    #[schema(required = true)]
    pub from_name: Option<String>,
    /// Default Reply-To address.
    #[schema(required = true, format = Email)]
    pub reply_to: Option<String>,
    /// TRANSACTIONAL or MARKETING.
    #[serde(rename = "type")]
    pub template_type: TemplateType,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// Body of `POST /templates`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateCreate {
    /// Name.
    #[schema(max_length = 255)]
    pub name: String,
    /// Description.
    #[schema(max_length = 2000)]
    pub description: Option<String>,
    /// Subject with placeholders.
    #[schema(max_length = 998)]
    pub subject: String,
    /// HTML body with placeholders.
    pub body: String,
    /// Plain-text version.
    pub text: Option<String>,
    /// Default sender; must be on a verified domain.
    #[schema(format = Email)]
    pub from: Option<String>,
    /// Default sender name.
    #[schema(max_length = 256)]
    pub from_name: Option<String>,
    /// Default Reply-To address.
    #[schema(format = Email)]
    pub reply_to: Option<String>,
    /// TRANSACTIONAL or MARKETING.
    #[serde(rename = "type")]
    pub template_type: TemplateType,
}

/// Body of `PATCH` or `PUT /templates/{id}`: any editable field; `null` clears optional ones.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplatePatch {
    /// Name.
    #[schema(max_length = 255)]
    pub name: Option<String>,
    /// Description.
    #[schema(max_length = 2000)]
    pub description: Option<String>,
    /// Subject with placeholders.
    #[schema(max_length = 998)]
    pub subject: Option<String>,
    /// HTML body with placeholders.
    pub body: Option<String>,
    /// Plain-text version.
    pub text: Option<String>,
    /// Default sender; must be on a verified domain.
    #[schema(format = Email)]
    pub from: Option<String>,
    /// Default sender name.
    #[schema(max_length = 256)]
    pub from_name: Option<String>,
    /// Default Reply-To address.
    #[schema(format = Email)]
    pub reply_to: Option<String>,
    /// TRANSACTIONAL or MARKETING.
    #[serde(rename = "type")]
    pub template_type: Option<TemplateType>,
}

/// A page of templates, newest first.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplatePage {
    /// The templates.
    pub data: Vec<Template>,
    /// Templates matching the filters.
    pub total: u64,
    /// 1-based page number.
    pub page: u64,
    /// Page size.
    pub page_size: u64,
    /// Number of pages.
    pub total_pages: u64,
    /// Cursor of the next page (pass as `cursor`); null on the last page.
    #[schema(required = true)]
    pub cursor: Option<String>,
}

// ---------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------

/// A stored event: custom (from `/v1/track`) or emitted by Posthorn.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Event id.
    pub id: String,
    /// Owning workspace.
    pub project_id: String,
    /// Event name, e.g. `signup` or `email.sent`.
    pub name: String,
    /// Event data.
    #[schema(value_type = Object)]
    pub data: JsonObject,
    /// The contact the event is about.
    #[schema(required = true)]
    pub contact_id: Option<String>,
    /// The email the event is about.
    #[schema(required = true)]
    pub email_id: Option<String>,
    /// When it happened.
    pub created_at: DateTime<Utc>,
}

/// Answer of `GET /events`.
#[derive(ToSchema)]
pub struct EventList {
    /// Events, newest first.
    pub events: Vec<Event>,
}

/// Answer of `GET /events/names`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventNames {
    /// Every event name stored in the workspace plus the internal ones, sorted.
    pub event_names: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// Keys, workspaces, domains
// ---------------------------------------------------------------------------------------

/// A stored key set (no clear keys).
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeySet {
    /// Key set id.
    pub id: String,
    /// Owning workspace.
    pub project_id: String,
    /// Label.
    #[schema(required = true)]
    pub name: Option<String>,
    /// Sender-domain allowlist; empty means any verified domain of the workspace.
    pub domains: Vec<String>,
    /// First characters of the public key.
    #[schema(example = "pk_1a2b3c4…")]
    pub public_key_preview: String,
    /// First characters of the secret key.
    #[schema(example = "sk_9f8e7d6…")]
    pub secret_key_preview: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// A key set just created, with its clear keys (shown this once).
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewKeySet {
    /// Key set id.
    pub id: String,
    /// Label.
    #[schema(required = true)]
    pub name: Option<String>,
    /// Public key (`pk_` + 64 hex characters): only `/v1/track`.
    #[schema(pattern = "^pk_[0-9a-f]{64}$")]
    pub public_key: String,
    /// Secret key (`sk_` + 64 hex characters): every workspace endpoint.
    #[schema(pattern = "^sk_[0-9a-f]{64}$")]
    pub secret_key: String,
    /// Sender-domain allowlist; empty means any verified domain of the workspace.
    pub domains: Vec<String>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// Answer of `GET /keys`.
#[derive(ToSchema)]
pub struct KeySetList {
    /// The workspace's key sets.
    pub data: Vec<KeySet>,
}

/// Body of `POST /keys` and `POST /admin/workspaces/{id}/key-sets`.
#[derive(ToSchema)]
pub struct KeySetCreate {
    /// Label.
    #[schema(max_length = 255)]
    pub name: Option<String>,
    /// Sender-domain allowlist (domain names).
    pub domains: Option<Vec<String>>,
}

/// A workspace (a "project" in the interface).
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Workspace {
    /// Workspace id (`projectId` elsewhere).
    pub id: String,
    /// Display name.
    pub name: String,
    /// A disabled workspace gets 403 `PROJECT_DISABLED` on every request.
    pub disabled: bool,
    /// Maximum number of ACTIVE contacts; null means no limit.
    #[schema(required = true)]
    pub active_contact_limit: Option<u64>,
    /// API requests per minute for the whole workspace.
    pub rate_limit_per_minute: u32,
    /// Emails handed to the transport per second.
    pub send_rate_per_second: f64,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// Answer of `POST /admin/workspaces`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedWorkspace {
    /// The new workspace.
    pub workspace: Workspace,
    /// Its first key set, with the clear keys.
    pub key_set: NewKeySet,
}

/// Answer of `GET /admin/workspaces`.
#[derive(ToSchema)]
pub struct WorkspaceList {
    /// Every workspace.
    pub data: Vec<Workspace>,
}

/// Body of `POST /admin/workspaces`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceCreate {
    /// Display name.
    #[schema(max_length = 255)]
    pub name: String,
    /// Maximum number of ACTIVE contacts; null or omitted means no limit.
    #[schema(minimum = 0)]
    pub active_contact_limit: Option<u64>,
    /// API requests per minute (default 1000).
    #[schema(minimum = 1, maximum = 10_000_000)]
    pub rate_limit_per_minute: Option<u32>,
    /// Emails per second (default 14).
    #[schema(exclusive_minimum = 0, maximum = 100_000)]
    pub send_rate_per_second: Option<f64>,
}

/// Body of `PATCH /admin/workspaces/{id}`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkspacePatch {
    /// Display name.
    #[schema(max_length = 255)]
    pub name: Option<String>,
    /// Disables or enables every request of the workspace.
    pub disabled: Option<bool>,
    /// Maximum number of ACTIVE contacts; null removes the limit.
    #[schema(minimum = 0)]
    pub active_contact_limit: Option<u64>,
    /// API requests per minute.
    #[schema(minimum = 1, maximum = 10_000_000)]
    pub rate_limit_per_minute: Option<u32>,
    /// Emails per second.
    #[schema(exclusive_minimum = 0, maximum = 100_000)]
    pub send_rate_per_second: Option<f64>,
}

/// A sender domain of a workspace.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Domain {
    /// Domain id.
    pub id: String,
    /// Owning workspace.
    pub project_id: String,
    /// Domain name, lower-case.
    #[schema(example = "example.com")]
    pub domain: String,
    /// Whether ownership was verified (or asserted by the operator).
    pub verified: bool,
    /// Whether inbound mail to this domain is accepted.
    pub inbound_enabled: bool,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// Body of `POST /admin/workspaces/{id}/domains`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DomainCreate {
    /// Domain name.
    #[schema(example = "example.com")]
    pub domain: String,
    /// `true` marks the domain verified without a DNS check (default false).
    pub verified: Option<bool>,
    /// Accept inbound mail (default false).
    pub inbound_enabled: Option<bool>,
}

// ---------------------------------------------------------------------------------------
// System
// ---------------------------------------------------------------------------------------

/// Answer of `GET /health` when the store and the queue answer.
#[derive(ToSchema)]
pub struct Health {
    /// `ok`.
    #[schema(example = "ok")]
    pub status: String,
    /// Job queue counters.
    pub jobs: JobCounts,
}

/// Job queue counters.
#[derive(ToSchema)]
pub struct JobCounts {
    /// Waiting to run.
    pub queued: u64,
    /// Claimed by a worker.
    pub running: u64,
    /// Given up after too many attempts.
    pub dead: u64,
}

/// Answer of `GET /health` when the store or the queue fails.
#[derive(ToSchema)]
pub struct Unavailable {
    /// `unavailable`.
    #[schema(example = "unavailable")]
    pub status: String,
}
