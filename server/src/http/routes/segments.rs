//! `/segments`.

use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use posthorn_core::app::segments::{Page, SegmentView};
use posthorn_core::app::Caller;
use serde_json::{json, Value};

use super::to_json;
use crate::http::body::JsonBody;
use crate::http::error::{ApiError, ApiResult};
use crate::http::query::QueryMap;
use crate::http::{wire, AppState};

/// A segment with `memberCount`.
pub fn segment_json(view: &SegmentView) -> Result<Value, ApiError> {
    let mut value = to_json(&view.segment)?;
    value["memberCount"] = json!(view.member_count);
    Ok(value)
}

/// The page-style envelope.
pub fn page_json<T>(
    page: &Page<T>,
    render: impl Fn(&T) -> Result<Value, ApiError>,
) -> Result<Value, ApiError> {
    let data = page
        .data
        .iter()
        .map(render)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({
        "data": data,
        "page": page.page,
        "pageSize": page.page_size,
        "total": page.total,
        "totalPages": page.total_pages,
    }))
}

/// `POST /segments`: 201.
pub async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let view = state
        .engine
        .create_segment(&caller, wire::segments::create(&body)?)
        .await?;
    Ok((StatusCode::CREATED, Json(segment_json(&view)?)).into_response())
}

/// `GET /segments`.
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    QueryMap(query): QueryMap,
) -> ApiResult<Response> {
    let page = state
        .engine
        .list_segments(&caller, wire::segments::page(&query)?)
        .await?;
    Ok(Json(page_json(&page, segment_json)?).into_response())
}

/// `GET /segments/{id}`.
pub async fn read(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    Ok(Json(segment_json(&state.engine.segment(&caller, &id).await?)?).into_response())
}

/// `PATCH /segments/{id}` (also `PUT`).
pub async fn patch(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    Ok(Json(segment_json(
        &state
            .engine
            .patch_segment(&caller, &id, wire::segments::patch(&body)?)
            .await?,
    )?)
    .into_response())
}

/// `DELETE /segments/{id}`: 204.
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    state.engine.delete_segment(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /segments/{id}/contacts`.
pub async fn contacts(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    QueryMap(query): QueryMap,
) -> ApiResult<Response> {
    let page = state
        .engine
        .segment_contacts(&caller, &id, wire::segments::page(&query)?)
        .await?;
    Ok(Json(page_json(&page, to_json)?).into_response())
}

/// `POST /segments/{id}/members`.
pub async fn add_members(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let out = state
        .engine
        .add_segment_members(&caller, &id, wire::segments::members(&body, true)?)
        .await?;
    let mut value = json!({"added": out.added, "notFound": out.not_found});
    if body.get("createMissing") == Some(&json!(true)) {
        value["created"] = json!(out.created);
    }
    Ok(Json(value).into_response())
}

/// `DELETE /segments/{id}/members`.
pub async fn remove_members(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let removed = state
        .engine
        .remove_segment_members(&caller, &id, wire::segments::members(&body, false)?)
        .await?;
    Ok(Json(json!({"removed": removed})).into_response())
}
