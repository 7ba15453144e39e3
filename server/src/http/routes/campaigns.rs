//! `/campaigns`: every answer is `{success, data}` (send and cancel add `message`), typed
//! in [`crate::http::wire::campaigns`].

use crate::http::answer::JsonAnswer;
use crate::http::path::WirePath;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use posthorn_core::app::Caller;
use posthorn_core::model::CampaignId;
use std::sync::Arc;

use crate::http::body::Wire;
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::query::WireQuery;
use crate::http::wire::campaigns::{
    CampaignActionResponse, CampaignCreateInput, CampaignDeleted, CampaignPage, CampaignPatchBody,
    CampaignResponse, CampaignSendBody, CampaignStatsResponse, CampaignsQuery,
};
use crate::http::AppState;

/// Create a campaign
///
/// A DRAFT addressed to ALL subscribed contacts, a SEGMENT or a FILTERED audience.
#[utoipa::path(
    post, path = "/campaigns", operation_id = "createCampaign", tag = "Campaigns",
    request_body = CampaignCreateInput,
    responses(
        (status = 201, description = "Created", body = CampaignResponse),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), a malformed `Idempotency-Key`, SEGMENT without `segmentId` or FILTERED without `audienceCondition` (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`), `from` not on a verified domain (`DOMAIN_NOT_VERIFIED`) or outside the key set's allowlist (`FORBIDDEN`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "`segmentId` does not exist (`SEGMENT_NOT_FOUND`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields, template syntax or `audienceCondition` (`VALIDATION_ERROR`), or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
    ),
)]
pub async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    Wire(body): Wire<CampaignCreateInput>,
) -> ApiResult<(StatusCode, JsonAnswer<CampaignResponse>)> {
    let view = state.engine.create_campaign(&caller, body.into()).await?;
    Ok((StatusCode::CREATED, JsonAnswer(view.into())))
}

/// List campaigns
///
/// Page pagination, newest first, optionally by `status`.
#[utoipa::path(
    get, path = "/campaigns", operation_id = "listCampaigns", tag = "Campaigns",
    params(CampaignsQuery),
    responses(
        (status = 200, description = "A page of campaigns", body = CampaignPage),
        (status = 422, description = "`page`, `pageSize` or `limit` out of range, or an unknown `status` (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WireQuery(query): WireQuery<CampaignsQuery>,
) -> ApiResult<JsonAnswer<CampaignPage>> {
    let page = state.engine.list_campaigns(&caller, query.into()).await?;
    Ok(JsonAnswer(page.into()))
}

/// Read a campaign
///
/// With its counters and embedded segment.
#[utoipa::path(
    get, path = "/campaigns/{id}", operation_id = "getCampaign", tag = "Campaigns",
    params(("id" = String, Path, description = "Campaign id")),
    responses(
        (status = 200, description = "The campaign", body = CampaignResponse),
        (status = 404, description = "No such campaign in this workspace (`CAMPAIGN_NOT_FOUND`)", body = ErrorResponse),
    ),
)]
pub async fn read(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<CampaignId>,
) -> ApiResult<JsonAnswer<CampaignResponse>> {
    Ok(JsonAnswer(
        state.engine.campaign(&caller, &id).await?.into(),
    ))
}

/// Update a campaign
///
/// DRAFT or SCHEDULED only; fields not given are left alone, `null` clears optional ones.
#[utoipa::path(
    put, path = "/campaigns/{id}", operation_id = "updateCampaign", tag = "Campaigns",
    params(("id" = String, Path, description = "Campaign id")),
    request_body = CampaignPatchBody,
    responses(
        (status = 200, description = "The updated campaign", body = CampaignResponse),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), the campaign is not DRAFT or SCHEDULED (`INVALID_STATE`), or SEGMENT without `segmentId` or FILTERED without `audienceCondition` (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`), `from` not on a verified domain (`DOMAIN_NOT_VERIFIED`) or outside the key set's allowlist (`FORBIDDEN`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such campaign (`CAMPAIGN_NOT_FOUND`) or `segmentId` does not exist (`SEGMENT_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "The campaign changed while the request ran (`CONFLICT`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields, template syntax or `audienceCondition` (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn update(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<CampaignId>,
    Wire(body): Wire<CampaignPatchBody>,
) -> ApiResult<JsonAnswer<CampaignResponse>> {
    let view = state
        .engine
        .update_campaign(&caller, &id, body.into())
        .await?;
    Ok(JsonAnswer(view.into()))
}

/// Update a campaign (PATCH)
///
/// Same as `PUT /campaigns/{id}`.
#[utoipa::path(
    patch, path = "/campaigns/{id}", operation_id = "patchCampaign", tag = "Campaigns",
    params(("id" = String, Path, description = "Campaign id")),
    request_body = CampaignPatchBody,
    responses(
        (status = 200, description = "The updated campaign", body = CampaignResponse),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), the campaign is not DRAFT or SCHEDULED (`INVALID_STATE`), or SEGMENT without `segmentId` or FILTERED without `audienceCondition` (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`), `from` not on a verified domain (`DOMAIN_NOT_VERIFIED`) or outside the key set's allowlist (`FORBIDDEN`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such campaign (`CAMPAIGN_NOT_FOUND`) or `segmentId` does not exist (`SEGMENT_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "The campaign changed while the request ran (`CONFLICT`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields, template syntax or `audienceCondition` (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn patch(
    state: State<AppState>,
    caller: Extension<Arc<Caller>>,
    id: WirePath<CampaignId>,
    body: Wire<CampaignPatchBody>,
) -> ApiResult<JsonAnswer<CampaignResponse>> {
    update(state, caller, id, body).await
}

/// Delete a campaign
///
/// DRAFT only (cancel a scheduled or sending one instead).
#[utoipa::path(
    delete, path = "/campaigns/{id}", operation_id = "deleteCampaign", tag = "Campaigns",
    params(("id" = String, Path, description = "Campaign id")),
    responses(
        (status = 200, description = "Deleted", body = CampaignDeleted),
        (status = 400, description = "The campaign is not a DRAFT (`INVALID_STATE`)", body = ErrorResponse),
        (status = 404, description = "No such campaign in this workspace (`CAMPAIGN_NOT_FOUND`)", body = ErrorResponse),
    ),
)]
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<CampaignId>,
) -> ApiResult<JsonAnswer<CampaignDeleted>> {
    state.engine.delete_campaign(&caller, &id).await?;
    Ok(JsonAnswer(CampaignDeleted::default()))
}

/// Send or schedule a campaign
///
/// DRAFT or SCHEDULED only. Without `scheduledFor` (or with null) sending starts now
/// (SENDING); with a future time the campaign becomes SCHEDULED (again: the time moves). The
/// audience is fixed when sending starts.
#[utoipa::path(
    post, path = "/campaigns/{id}/send", operation_id = "sendCampaign", tag = "Campaigns",
    params(("id" = String, Path, description = "Campaign id")),
    request_body = CampaignSendBody,
    responses(
        (status = 200, description = "Sending or scheduled; `message` says which", body = CampaignActionResponse),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), a malformed `Idempotency-Key` (`BAD_REQUEST`), the campaign is not DRAFT or SCHEDULED (`INVALID_STATE`), or its audience has no subscribed, active contact or its segment is gone (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 404, description = "No such campaign in this workspace (`CAMPAIGN_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A request with this `Idempotency-Key` is still running, or the campaign changed while the request ran (`CONFLICT`)", body = ErrorResponse),
        (status = 422, description = "`scheduledFor` not a date-time or in the past (`VALIDATION_ERROR`), or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
    ),
)]
pub async fn send(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<CampaignId>,
    Wire(body): Wire<CampaignSendBody>,
) -> ApiResult<JsonAnswer<CampaignActionResponse>> {
    let (view, message) = state
        .engine
        .send_campaign(&caller, &id, body.into())
        .await?;
    Ok(JsonAnswer(CampaignActionResponse::new(view, message)))
}

/// Cancel a campaign
///
/// SCHEDULED or SENDING → CANCELLED; emails not yet handed over are cancelled. No body.
#[utoipa::path(
    post, path = "/campaigns/{id}/cancel", operation_id = "cancelCampaign", tag = "Campaigns",
    params(("id" = String, Path, description = "Campaign id")),
    responses(
        (status = 200, description = "Cancelled", body = CampaignActionResponse),
        (status = 400, description = "A malformed `Idempotency-Key` (`BAD_REQUEST`) or the campaign is not SCHEDULED or SENDING (`INVALID_STATE`)", body = ErrorResponse),
        (status = 404, description = "No such campaign in this workspace (`CAMPAIGN_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A request with this `Idempotency-Key` is still running, or the campaign changed while the request ran (`CONFLICT`)", body = ErrorResponse),
        (status = 422, description = "`Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
    ),
)]
pub async fn cancel(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<CampaignId>,
) -> ApiResult<JsonAnswer<CampaignActionResponse>> {
    let (view, message) = state.engine.cancel_campaign(&caller, &id).await?;
    Ok(JsonAnswer(CampaignActionResponse::new(view, message)))
}

/// Campaign statistics
///
/// The counters plus queued, failed and cancelled emails, and delivery, open, click, bounce
/// and complaint rates in percent of `sentCount`.
#[utoipa::path(
    get, path = "/campaigns/{id}/stats", operation_id = "getCampaignStats", tag = "Campaigns",
    params(("id" = String, Path, description = "Campaign id")),
    responses(
        (status = 200, description = "The statistics", body = CampaignStatsResponse),
        (status = 404, description = "No such campaign in this workspace (`CAMPAIGN_NOT_FOUND`)", body = ErrorResponse),
    ),
)]
pub async fn stats(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<CampaignId>,
) -> ApiResult<JsonAnswer<CampaignStatsResponse>> {
    Ok(JsonAnswer(
        state.engine.campaign(&caller, &id).await?.into(),
    ))
}
