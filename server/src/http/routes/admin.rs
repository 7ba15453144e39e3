//! The operator API under `/admin` (admin token only).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use posthorn_core::ports::DeadJob;
use posthorn_core::validate::Checker;
use serde_json::{json, Value};

use super::keys::new_key_set_json;
use super::to_json;
use crate::http::body::JsonBody;
use crate::http::error::ApiResult;
use crate::http::query::QueryMap;
use crate::http::wire;
use crate::http::AppState;

/// `POST /admin/workspaces`: 201 `{workspace, keySet}`.
pub async fn create(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let (ws, keys) = state
        .engine
        .create_workspace(wire::admin::create_workspace(&body)?)
        .await?;
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
    Ok(Json(to_json(
        &state
            .engine
            .patch_workspace(&id, wire::admin::patch_workspace(&body)?)
            .await?,
    )?)
    .into_response())
}

/// `POST /admin/workspaces/{id}/key-sets`: 201 with the clear keys.
pub async fn create_key_set(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let set = state
        .engine
        .admin_create_key_set(&id, wire::admin::create_key_set(&body)?)
        .await?;
    Ok((StatusCode::CREATED, Json(new_key_set_json(&set))).into_response())
}

/// `POST /admin/workspaces/{id}/domains`: 201 Domain.
pub async fn add_domain(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let domain = state
        .engine
        .admin_add_domain(&id, wire::admin::add_domain(&body)?)
        .await?;
    Ok((StatusCode::CREATED, Json(to_json(&domain)?)).into_response())
}

/// `GET /admin/jobs/dead?limit=N` (1..=500, 100): `{jobs: [DeadJob]}`, oldest first.
pub async fn dead_jobs(
    State(state): State<AppState>,
    QueryMap(query): QueryMap,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let limit = c.query_int(&query, "limit", 1, 500, 100);
    c.finish()?;
    let limit = usize::try_from(limit).unwrap_or(100);
    let jobs = state.engine.dead_jobs(limit).await?;
    let jobs = jobs
        .iter()
        .map(dead_job_json)
        .collect::<ApiResult<Vec<Value>>>()?;
    Ok(Json(json!({ "jobs": jobs })).into_response())
}

/// `POST /admin/jobs/{id}/revive`: `{revived: true, id}`, or 404 when no dead job has it.
pub async fn revive_job(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    state.engine.revive_job(&id).await?;
    Ok(Json(json!({ "revived": true, "id": id })).into_response())
}

/// A dead job as JSON: `kind` is the payload's tag (`deliver_email`, ...), `payload` the
/// payload itself (with `kind`).
fn dead_job_json(job: &DeadJob) -> ApiResult<Value> {
    let payload = to_json(&job.payload)?;
    let kind = payload.get("kind").cloned().unwrap_or(Value::Null);
    Ok(json!({
        "id": job.id,
        "kind": kind,
        "payload": payload,
        "attempts": job.attempts,
        "lastError": job.last_error,
    }))
}
