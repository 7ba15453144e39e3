//! `/events` and `/events/names` (secret key only, enforced by the auth layer).

use axum::extract::{Extension, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use posthorn_core::app::Caller;
use serde_json::json;

use super::to_json;
use crate::http::error::ApiResult;
use crate::http::query::QueryMap;
use crate::http::wire;
use crate::http::AppState;

/// `GET /events`.
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    QueryMap(query): QueryMap,
) -> ApiResult<Response> {
    let events = state
        .engine
        .list_events(&caller, wire::events::list(&query)?)
        .await?;
    Ok(Json(json!({ "events": to_json(&events)? })).into_response())
}

/// `GET /events/names`.
pub async fn names(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Response> {
    let names = state.engine.event_names(&caller).await?;
    Ok(Json(json!({ "eventNames": names })).into_response())
}
