//! `/campaigns`: every answer is `{success, data}` (send and cancel add `message`).

use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use posthorn_core::app::campaigns::CampaignView;
use posthorn_core::app::Caller;
use posthorn_core::model::CampaignId;
use serde_json::{json, Value};

use super::segments::page_json;
use super::to_json;
use crate::http::body::Wire;
use crate::http::error::{ApiError, ApiResult, ErrorResponse};
use crate::http::query::WireQuery;
use crate::http::wire::campaigns::{
    CampaignActionResponse, CampaignCreateInput, CampaignDeleted, CampaignPage, CampaignPatchBody,
    CampaignResponse, CampaignSendBody, CampaignStatsResponse, CampaignsQuery,
};
use crate::http::AppState;

/// A campaign with its counters and embedded segment.
pub fn campaign_json(view: &CampaignView) -> Result<Value, ApiError> {
    let mut value = to_json(&view.campaign)?;
    let c = &view.counts;
    value["sentCount"] = json!(c.handed_over());
    value["deliveredCount"] = json!(c.delivered + c.opened + c.clicked + c.complained);
    value["openedCount"] = json!(c.opened + c.clicked);
    value["clickedCount"] = json!(c.clicked);
    value["bouncedCount"] = json!(c.bounced);
    value["segment"] = match &view.segment {
        Some(s) => to_json(s)?,
        None => Value::Null,
    };
    Ok(value)
}

fn ok(data: Value) -> Response {
    Json(json!({"success": true, "data": data})).into_response()
}

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
    Extension(caller): Extension<Caller>,
    Wire(body): Wire<CampaignCreateInput>,
) -> ApiResult<Response> {
    let view = state.engine.create_campaign(&caller, body.into()).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"success": true, "data": campaign_json(&view)?})),
    )
        .into_response())
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
    Extension(caller): Extension<Caller>,
    WireQuery(query): WireQuery<CampaignsQuery>,
) -> ApiResult<Response> {
    let page = state.engine.list_campaigns(&caller, query.into()).await?;
    let mut value = page_json(&page, campaign_json)?;
    value["success"] = json!(true);
    Ok(Json(value).into_response())
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
    Extension(caller): Extension<Caller>,
    Path(id): Path<CampaignId>,
) -> ApiResult<Response> {
    Ok(ok(campaign_json(
        &state.engine.campaign(&caller, &id).await?,
    )?))
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
    Extension(caller): Extension<Caller>,
    Path(id): Path<CampaignId>,
    Wire(body): Wire<CampaignPatchBody>,
) -> ApiResult<Response> {
    Ok(ok(campaign_json(
        &state
            .engine
            .update_campaign(&caller, &id, body.into())
            .await?,
    )?))
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
    caller: Extension<Caller>,
    id: Path<CampaignId>,
    body: Wire<CampaignPatchBody>,
) -> ApiResult<Response> {
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
    Extension(caller): Extension<Caller>,
    Path(id): Path<CampaignId>,
) -> ApiResult<Response> {
    state.engine.delete_campaign(&caller, &id).await?;
    Ok(Json(json!({"success": true, "message": "Campaign deleted"})).into_response())
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
    Extension(caller): Extension<Caller>,
    Path(id): Path<CampaignId>,
    Wire(body): Wire<CampaignSendBody>,
) -> ApiResult<Response> {
    let (view, message) = state
        .engine
        .send_campaign(&caller, &id, body.into())
        .await?;
    Ok(
        Json(json!({"success": true, "data": campaign_json(&view)?, "message": message}))
            .into_response(),
    )
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
    Extension(caller): Extension<Caller>,
    Path(id): Path<CampaignId>,
) -> ApiResult<Response> {
    let (view, message) = state.engine.cancel_campaign(&caller, &id).await?;
    Ok(
        Json(json!({"success": true, "data": campaign_json(&view)?, "message": message}))
            .into_response(),
    )
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
    Extension(caller): Extension<Caller>,
    Path(id): Path<CampaignId>,
) -> ApiResult<Response> {
    let view = state.engine.campaign(&caller, &id).await?;
    let c = &view.counts;
    let sent = c.handed_over();
    let delivered = c.delivered + c.opened + c.clicked + c.complained;
    let rate = |n: u64, of: u64| {
        if of == 0 {
            0.0
        } else {
            (n as f64 / of as f64 * 10_000.0).round() / 100.0
        }
    };
    Ok(ok(json!({
        "campaignId": view.campaign.id,
        "status": view.campaign.status,
        "totalRecipients": view.campaign.total_recipients,
        "queuedCount": c.queued,
        "sentCount": sent,
        "deliveredCount": delivered,
        "openedCount": c.opened + c.clicked,
        "clickedCount": c.clicked,
        "bouncedCount": c.bounced,
        "complainedCount": c.complained,
        "failedCount": c.failed,
        "cancelledCount": c.cancelled,
        "deliveryRate": rate(delivered, sent),
        "openRate": rate(c.opened + c.clicked, sent),
        "clickRate": rate(c.clicked, sent),
        "bounceRate": rate(c.bounced, sent),
        "complaintRate": rate(c.complained, sent),
    })))
}
