//! `/contacts`.

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

/// `POST /contacts`: 201 when created, 200 when updated, with `_meta`.
pub async fn upsert(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let done = state
        .engine
        .upsert_contact(&caller, wire::contacts::upsert(&body)?)
        .await?;
    let mut value = to_json(&done.contact)?;
    value["_meta"] = json!({"isNew": done.is_new, "isUpdate": !done.is_new});
    let status = if done.is_new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(value)).into_response())
}

/// `GET /contacts`.
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    QueryMap(query): QueryMap,
) -> ApiResult<Response> {
    let page = state
        .engine
        .list_contacts(&caller, wire::contacts::list(&query)?)
        .await?;
    let mut body = json!({
        "data": to_json(&page.contacts)?,
        "cursor": page.cursor,
        "hasMore": page.has_more,
    });
    if let Some(total) = page.total {
        body["total"] = json!(total);
    }
    Ok(Json(body).into_response())
}

/// `GET /contacts/{id}`.
pub async fn read(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let contact = state.engine.contact(&caller, &id).await?;
    Ok(Json(to_json(&contact)?).into_response())
}

/// `PATCH /contacts/{id}`.
pub async fn patch(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let contact = state
        .engine
        .patch_contact(&caller, &id, wire::contacts::patch(&body)?)
        .await?;
    Ok(Json(to_json(&contact)?).into_response())
}

/// `DELETE /contacts/{id}`: 204.
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    state.engine.delete_contact(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
