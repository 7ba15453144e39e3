//! The operator API under `/admin` (admin token only).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::keys::new_key_set_json;
use super::to_json;
use crate::http::body::JsonBody;
use crate::http::error::ApiResult;
use crate::http::AppState;

/// `POST /admin/workspaces`: 201 `{workspace, keySet}`.
pub async fn create(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let (ws, keys) = state.engine.create_workspace(&body).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({ "workspace": to_json(&ws)?, "keySet": new_key_set_json(&keys) })),
    )
        .into_response())
}

/// `GET /admin/workspaces`.
pub async fn list(State(state): State<AppState>) -> ApiResult<Response> {
    Ok(Json(json!({ "data": to_json(&state.engine.workspaces().await?)? })).into_response())
}

/// `GET /admin/workspaces/{id}`.
pub async fn read(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    Ok(Json(to_json(&state.engine.workspace(&id).await?)?).into_response())
}

/// `PATCH /admin/workspaces/{id}`.
pub async fn patch(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    Ok(Json(to_json(&state.engine.patch_workspace(&id, &body).await?)?).into_response())
}

/// `POST /admin/workspaces/{id}/key-sets`: 201 with the clear keys.
pub async fn create_key_set(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let set = state.engine.admin_create_key_set(&id, &body).await?;
    Ok((StatusCode::CREATED, Json(new_key_set_json(&set))).into_response())
}

/// `POST /admin/workspaces/{id}/domains`: 201 Domain.
pub async fn add_domain(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let domain = state.engine.admin_add_domain(&id, &body).await?;
    Ok((StatusCode::CREATED, Json(to_json(&domain)?)).into_response())
}
