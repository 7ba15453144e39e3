//! `/campaigns`: every answer is `{success, data}` (send and cancel add `message`).

use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use posthorn_core::app::campaigns::CampaignView;
use posthorn_core::app::Caller;
use serde_json::{json, Value};

use super::segments::page_json;
use super::to_json;
use crate::http::body::JsonBody;
use crate::http::error::{ApiError, ApiResult};
use crate::http::query::QueryMap;
use crate::http::{wire, AppState};

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

/// `POST /campaigns`: 201.
pub async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let view = state
        .engine
        .create_campaign(&caller, wire::campaigns::create(&body)?)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"success": true, "data": campaign_json(&view)?})),
    )
        .into_response())
}

/// `GET /campaigns`.
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    QueryMap(query): QueryMap,
) -> ApiResult<Response> {
    let page = state
        .engine
        .list_campaigns(&caller, wire::campaigns::list(&query)?)
        .await?;
    let mut value = page_json(&page, campaign_json)?;
    value["success"] = json!(true);
    Ok(Json(value).into_response())
}

/// `GET /campaigns/{id}`.
pub async fn read(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    Ok(ok(campaign_json(
        &state.engine.campaign(&caller, &id).await?,
    )?))
}

/// `PUT /campaigns/{id}` (also `PATCH`).
pub async fn update(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    Ok(ok(campaign_json(
        &state
            .engine
            .update_campaign(&caller, &id, wire::campaigns::patch(&body)?)
            .await?,
    )?))
}

/// `DELETE /campaigns/{id}`.
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    state.engine.delete_campaign(&caller, &id).await?;
    Ok(Json(json!({"success": true, "message": "Campaign deleted"})).into_response())
}

/// `POST /campaigns/{id}/send`.
pub async fn send(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let (view, message) = state
        .engine
        .send_campaign(&caller, &id, wire::campaigns::send(&body)?)
        .await?;
    Ok(
        Json(json!({"success": true, "data": campaign_json(&view)?, "message": message}))
            .into_response(),
    )
}

/// `POST /campaigns/{id}/cancel`.
pub async fn cancel(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let (view, message) = state.engine.cancel_campaign(&caller, &id).await?;
    Ok(
        Json(json!({"success": true, "data": campaign_json(&view)?, "message": message}))
            .into_response(),
    )
}

/// `GET /campaigns/{id}/stats`.
pub async fn stats(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
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
