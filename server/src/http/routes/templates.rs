//! `/templates`.

use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use posthorn_core::app::Caller;
use serde_json::json;

use super::to_json;
use crate::http::body::JsonBody;
use crate::http::error::ApiResult;
use crate::http::query::QueryMap;
use crate::http::wire;
use crate::http::AppState;

/// `POST /templates`: 201.
pub async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let t = state
        .engine
        .create_template(&caller, wire::templates::create(&body)?)
        .await?;
    Ok((StatusCode::CREATED, Json(to_json(&t)?)).into_response())
}

/// `GET /templates`.
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    QueryMap(query): QueryMap,
) -> ApiResult<Response> {
    let page = state
        .engine
        .list_templates(&caller, wire::templates::list(&query)?)
        .await?;
    Ok(Json(json!({
        "data": to_json(&page.templates)?,
        "total": page.total,
        "page": page.page,
        "pageSize": page.page_size,
        "totalPages": page.total_pages,
        "cursor": page.cursor,
    }))
    .into_response())
}

/// `GET /templates/{id}`.
pub async fn read(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    Ok(Json(to_json(&state.engine.template(&caller, &id).await?)?).into_response())
}

/// `PATCH /templates/{id}` (also `PUT`).
pub async fn patch(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    Ok(Json(to_json(
        &state
            .engine
            .patch_template(&caller, &id, wire::templates::patch(&body)?)
            .await?,
    )?)
    .into_response())
}

/// `DELETE /templates/{id}`: 204.
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    state.engine.delete_template(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
