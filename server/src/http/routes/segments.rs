//! `/segments`.

use crate::http::answer::JsonAnswer;
use crate::http::path::WirePath;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use posthorn_core::app::Caller;
use posthorn_core::model::SegmentId;
use std::sync::Arc;

use crate::http::body::Wire;
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::query::WireQuery;
use crate::http::wire::segments::{
    PageQuery, Segment, SegmentContactPage, SegmentCreateInput, SegmentMembersAddBody,
    SegmentMembersAdded, SegmentMembersRemoveBody, SegmentMembersRemoved, SegmentPage,
    SegmentPatchBody,
};
use crate::http::AppState;

/// Create a segment
///
/// DYNAMIC (members are the contacts matching `condition`, computed when read) or STATIC
/// (members added by email). With `trackMembership`, members are stored and
/// `segment.<slug>.entry|exit` events are emitted; the first snapshot is quiet.
#[utoipa::path(
    post, path = "/segments", operation_id = "createSegment", tag = "Segments",
    request_body = SegmentCreateInput,
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
)]
pub async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    Wire(body): Wire<SegmentCreateInput>,
) -> ApiResult<(StatusCode, JsonAnswer<Segment>)> {
    let view = state.engine.create_segment(&caller, body.into()).await?;
    Ok((StatusCode::CREATED, JsonAnswer(view.into())))
}

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
)]
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WireQuery(query): WireQuery<PageQuery>,
) -> ApiResult<JsonAnswer<SegmentPage>> {
    let page = state.engine.list_segments(&caller, query.into()).await?;
    Ok(JsonAnswer(page.into()))
}

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
)]
pub async fn read(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<SegmentId>,
) -> ApiResult<JsonAnswer<Segment>> {
    Ok(JsonAnswer(state.engine.segment(&caller, &id).await?.into()))
}

/// Update a segment
///
/// `name`, `description`, `condition`, `trackMembership`; the type never changes. A tracked
/// segment whose condition changes announces the resulting entries and exits.
#[utoipa::path(
    patch, path = "/segments/{id}", operation_id = "updateSegment", tag = "Segments",
    params(("id" = String, Path, description = "Segment id")),
    request_body = SegmentPatchBody,
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
)]
pub async fn patch(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<SegmentId>,
    Wire(body): Wire<SegmentPatchBody>,
) -> ApiResult<JsonAnswer<Segment>> {
    let view = state
        .engine
        .patch_segment(&caller, &id, body.into())
        .await?;
    Ok(JsonAnswer(view.into()))
}

/// Update a segment (PUT)
///
/// Same as `PATCH /segments/{id}`: fields not given are left alone.
#[utoipa::path(
    put, path = "/segments/{id}", operation_id = "replaceSegment", tag = "Segments",
    params(("id" = String, Path, description = "Segment id")),
    request_body = SegmentPatchBody,
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
)]
pub async fn replace(
    state: State<AppState>,
    caller: Extension<Arc<Caller>>,
    id: WirePath<SegmentId>,
    body: Wire<SegmentPatchBody>,
) -> ApiResult<JsonAnswer<Segment>> {
    patch(state, caller, id, body).await
}

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
)]
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<SegmentId>,
) -> ApiResult<StatusCode> {
    state.engine.delete_segment(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

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
)]
pub async fn contacts(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<SegmentId>,
    WireQuery(query): WireQuery<PageQuery>,
) -> ApiResult<JsonAnswer<SegmentContactPage>> {
    let page = state
        .engine
        .segment_contacts(&caller, &id, query.into())
        .await?;
    Ok(JsonAnswer(page.into()))
}

/// Add members to a STATIC segment
///
/// By email; `added` counts the addresses that matched (or, with `createMissing`, became)
/// contacts, members already or not. `created` is in the answer only with `createMissing`.
#[utoipa::path(
    post, path = "/segments/{id}/members", operation_id = "addSegmentMembers", tag = "Segments",
    params(("id" = String, Path, description = "Segment id")),
    request_body = SegmentMembersAddBody,
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
)]
pub async fn add_members(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<SegmentId>,
    Wire(body): Wire<SegmentMembersAddBody>,
) -> ApiResult<JsonAnswer<SegmentMembersAdded>> {
    let create_missing = body.create_missing == Some(true);
    let out = state
        .engine
        .add_segment_members(&caller, &id, body.into())
        .await?;
    Ok(JsonAnswer(SegmentMembersAdded::new(out, create_missing)))
}

/// Remove members from a STATIC segment
///
/// By email; addresses of no member are ignored.
#[utoipa::path(
    delete, path = "/segments/{id}/members", operation_id = "removeSegmentMembers", tag = "Segments",
    params(("id" = String, Path, description = "Segment id")),
    request_body = SegmentMembersRemoveBody,
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
)]
pub async fn remove_members(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<SegmentId>,
    Wire(body): Wire<SegmentMembersRemoveBody>,
) -> ApiResult<JsonAnswer<SegmentMembersRemoved>> {
    let removed = state
        .engine
        .remove_segment_members(&caller, &id, body.into())
        .await?;
    Ok(JsonAnswer(SegmentMembersRemoved { removed }))
}
