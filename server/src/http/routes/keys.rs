//! `/keys`: the workspace's key sets.

use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use posthorn_core::app::Caller;
use posthorn_core::model::NewKeySet;
use serde_json::{json, Value};

use super::to_json;
use crate::http::body::JsonBody;
use crate::http::error::ApiResult;
use crate::http::wire;
use crate::http::AppState;

/// A new key set with its clear keys (shown this once).
pub fn new_key_set_json(set: &NewKeySet) -> Value {
    json!({
        "id": set.record.id,
        "name": set.record.name,
        "publicKey": set.public_key,
        "secretKey": set.secret_key,
        "domains": set.record.domains,
        "createdAt": posthorn_core::model::timestamp::format(&set.record.created_at),
    })
}

/// `GET /keys`.
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Response> {
    let sets = state.engine.list_key_sets(&caller).await?;
    Ok(Json(json!({ "data": to_json(&sets)? })).into_response())
}

/// `POST /keys`: 201 with the clear keys.
pub async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let set = state
        .engine
        .create_key_set(&caller, wire::admin::create_key_set(&body)?)
        .await?;
    Ok((StatusCode::CREATED, Json(new_key_set_json(&set))).into_response())
}

/// `DELETE /keys/{id}`: 204.
pub async fn revoke(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    state.engine.revoke_key_set(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
