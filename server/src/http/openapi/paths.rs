//! Documentation stubs for the operations not converted yet (`/v1/send`, `/segments`): the
//! functions are never called, their `#[utoipa::path]` attributes describe routes still
//! added with `.route(...)`. Every other operation is documented on its real handler; move
//! these there (and delete them here) area by area.

#![allow(dead_code)]

use utoipa::IntoParams;

use super::schemas::*;

// ---------------------------------------------------------------------------------------
// Query parameters
// ---------------------------------------------------------------------------------------

/// Query of `GET /segments` and `GET /segments/{id}/contacts` (page pagination).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// 1-based page number.
    #[param(minimum = 1, maximum = 1_000_000, default = 1)]
    pub page: Option<u32>,
    /// Page size.
    #[param(rename = "pageSize")]
    #[param(minimum = 1, maximum = 100, default = 20)]
    pub page_size: Option<u32>,
    /// Alias of `pageSize`, used when `pageSize` is absent.
    #[param(minimum = 1, maximum = 100, default = 20)]
    pub limit: Option<u32>,
}

// ---------------------------------------------------------------------------------------
// System
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// /v1
// ---------------------------------------------------------------------------------------

/// Send a transactional email
///
/// One email record and delivery job per distinct recipient, all or nothing. The sender
/// domain must be a verified domain of the workspace (and in the key set's allowlist when it
/// has one). New contacts are created unsubscribed unless `subscribed` is given.
#[utoipa::path(
    post, path = "/v1/send", operation_id = "send", tag = "Sending",
    params(IdempotencyKey),
    request_body = SendRequest,
    responses(
        (status = 200, description = "Accepted for delivery", body = SendResponse),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), a malformed `Idempotency-Key`, or a MARKETING template sent to unsubscribed recipients (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`), sender domain not verified (`DOMAIN_NOT_VERIFIED`), sender domain outside the key set's allowlist (`FORBIDDEN`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "`template` does not exist (`TEMPLATE_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A request with this `Idempotency-Key` is still running (`CONFLICT`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields, all listed in `errors` (`VALIDATION_ERROR`), or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
            ("RateLimit-Limit" = u32, description = "Requests per minute"),
            ("RateLimit-Remaining" = u32, description = "Requests left in the window"),
            ("RateLimit-Reset" = u64, description = "Seconds until the window resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn send() {}

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
// Segments
// ---------------------------------------------------------------------------------------

/// Create a segment
///
/// DYNAMIC (members are the contacts matching `condition`, computed when read) or STATIC
/// (members added by email). With `trackMembership`, members are stored and
/// `segment.<slug>.entry|exit` events are emitted; the first snapshot is quiet.
#[utoipa::path(
    post, path = "/segments", operation_id = "createSegment", tag = "Segments",
    params(IdempotencyKey),
    request_body = SegmentCreate,
    responses(
        (status = 201, description = "Created, with `memberCount`", body = Segment),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`) or a malformed `Idempotency-Key` (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 409, description = "A request with this `Idempotency-Key` is still running (`CONFLICT`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or condition, each problem at its path, e.g. `condition.groups.0.filters.1.operator`; a `segment.<id>` filter naming an unknown or untracked DYNAMIC segment or making a cycle (`VALIDATION_ERROR`); or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn create_segment() {}

/// List segments
///
/// Page pagination, newest first; each with its current `memberCount`.
#[utoipa::path(
    get, path = "/segments", operation_id = "listSegments", tag = "Segments",
    params(PageQuery),
    responses(
        (status = 200, description = "A page of segments", body = SegmentPage),
        (status = 400, description = "Malformed query string (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 422, description = "`page`, `pageSize` or `limit` out of range or not an integer (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn list_segments() {}

/// Read a segment
///
/// `memberCount` is computed at read time for DYNAMIC segments.
#[utoipa::path(
    get, path = "/segments/{id}", operation_id = "getSegment", tag = "Segments",
    params(("id" = String, Path, description = "Segment id")),
    responses(
        (status = 200, description = "The segment", body = Segment),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such segment in this workspace (`SEGMENT_NOT_FOUND`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn get_segment() {}

/// Update a segment
///
/// `name`, `description`, `condition`, `trackMembership`; the type never changes. A tracked
/// segment whose condition changes announces the resulting entries and exits.
#[utoipa::path(
    patch, path = "/segments/{id}", operation_id = "updateSegment", tag = "Segments",
    params(("id" = String, Path, description = "Segment id")),
    request_body = SegmentPatch,
    responses(
        (status = 200, description = "The updated segment", body = Segment),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such segment in this workspace (`SEGMENT_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "`trackMembership: false` while another segment's condition, or the audience of a SCHEDULED or SENDING campaign, names the segment (`CONFLICT`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or condition, a bad `segment.<id>` reference or a cycle, or a `type` other than the current one (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn update_segment() {}

/// Update a segment (PUT)
///
/// Same as `PATCH /segments/{id}`: fields not given are left alone.
#[utoipa::path(
    put, path = "/segments/{id}", operation_id = "replaceSegment", tag = "Segments",
    params(("id" = String, Path, description = "Segment id")),
    request_body = SegmentPatch,
    responses(
        (status = 200, description = "The updated segment", body = Segment),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such segment in this workspace (`SEGMENT_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "`trackMembership: false` while another segment's condition, or the audience of a SCHEDULED or SENDING campaign, names the segment (`CONFLICT`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or condition, a bad `segment.<id>` reference or a cycle, or a `type` other than the current one (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn replace_segment() {}

/// Delete a segment
///
/// Refused while a SCHEDULED or SENDING campaign uses it.
#[utoipa::path(
    delete, path = "/segments/{id}", operation_id = "deleteSegment", tag = "Segments",
    params(("id" = String, Path, description = "Segment id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such segment in this workspace (`SEGMENT_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A SCHEDULED or SENDING campaign uses the segment, as `segmentId` or in its `audienceCondition` (`CONFLICT`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn delete_segment() {}

/// List a segment's members
///
/// Page pagination. Stored members (STATIC or tracked) newest first; an untracked DYNAMIC
/// segment's matches, computed now, oldest contact first.
#[utoipa::path(
    get, path = "/segments/{id}/contacts", operation_id = "listSegmentContacts", tag = "Segments",
    params(("id" = String, Path, description = "Segment id"), PageQuery),
    responses(
        (status = 200, description = "A page of members", body = SegmentContactPage),
        (status = 400, description = "Malformed query string (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such segment in this workspace (`SEGMENT_NOT_FOUND`)", body = ErrorResponse),
        (status = 422, description = "`page`, `pageSize` or `limit` out of range or not an integer (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn list_segment_contacts() {}

/// Add members to a STATIC segment
///
/// By email; `added` counts the addresses that matched (or, with `createMissing`, became)
/// contacts, members already or not. `created` is in the answer only with `createMissing`.
#[utoipa::path(
    post, path = "/segments/{id}/members", operation_id = "addSegmentMembers", tag = "Segments",
    params(("id" = String, Path, description = "Segment id"), IdempotencyKey),
    request_body = SegmentMembersAdd,
    responses(
        (status = 200, description = "Added", body = SegmentMembersAdded),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), a malformed `Idempotency-Key` (`BAD_REQUEST`), or a DYNAMIC segment (`INVALID_STATE`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such segment in this workspace (`SEGMENT_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A request with this `Idempotency-Key` is still running (`CONFLICT`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "`emails` missing, empty, over 500 or with invalid addresses, each at `emails.<i>` (`VALIDATION_ERROR`), or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn add_segment_members() {}

/// Remove members from a STATIC segment
///
/// By email; addresses of no member are ignored.
#[utoipa::path(
    delete, path = "/segments/{id}/members", operation_id = "removeSegmentMembers", tag = "Segments",
    params(("id" = String, Path, description = "Segment id")),
    request_body = SegmentMembersRemove,
    responses(
        (status = 200, description = "Removed", body = SegmentMembersRemoved),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`) or a DYNAMIC segment (`INVALID_STATE`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such segment in this workspace (`SEGMENT_NOT_FOUND`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "`emails` missing, empty, over 500 or with invalid addresses (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn remove_segment_members() {}

// ---------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Operator API
// ---------------------------------------------------------------------------------------

/// The optional `Idempotency-Key` header of POST requests.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IdempotencyKey {
    /// 1 to 255 printable ASCII characters (spaces inside only, as HTTP trims the ends).
    /// Within 24 hours the same key with the same body replays the first answer (header
    /// `Idempotent-Replayed: true`); the same key with another body is refused (422
    /// `IDEMPOTENCY_KEY_REUSED`).
    #[param(
        rename = "Idempotency-Key",
        required = false,
        min_length = 1,
        max_length = 255,
        pattern = r"^[!-~]([ -~]{0,253}[!-~])?$"
    )]
    pub idempotency_key: String,
}
