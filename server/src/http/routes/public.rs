//! `/v1/send`, `/v1/track`, `/v1/verify`.

use axum::extract::{Extension, State};
use axum::response::Response;
use posthorn_core::app::Caller;
use posthorn_core::model::timestamp;
use serde_json::json;

use super::{to_json, v1};
use crate::http::body::JsonBody;
use crate::http::error::ApiResult;
use crate::http::wire;
use crate::http::AppState;

/// `POST /v1/send`.
pub async fn send(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let accepted = state
        .engine
        .send(&caller, wire::send::send_email(&body)?)
        .await?;
    let emails: Vec<_> = accepted
        .emails
        .iter()
        .map(|e| json!({"contact": {"id": e.contact_id, "email": e.email}, "email": e.email_id}))
        .collect();
    Ok(v1(
        json!({"emails": emails, "timestamp": timestamp::format(&accepted.at)}),
    ))
}

/// `POST /v1/track`.
pub async fn track(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let tracked = state
        .engine
        .track(&caller, wire::track::track_event(&body)?)
        .await?;
    Ok(v1(json!({
        "contact": tracked.contact_id,
        "event": tracked.event_id,
        "timestamp": timestamp::format(&tracked.at),
    })))
}

/// `POST /v1/verify`.
pub async fn verify(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let _ = &caller;
    let result = state.engine.verify(&wire::track::verify(&body)?).await?;
    Ok(v1(to_json(&result)?))
}
