//! `/keys`: the workspace's key sets.

use crate::http::answer::JsonAnswer;
use crate::http::path::WirePath;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use posthorn_core::app::Caller;
use posthorn_core::model::KeySetId;
use std::sync::Arc;

use crate::http::body::Wire;
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::idempotency::{keys_shown_once, KeepInstead};
use crate::http::wire::admin::{KeySetBody, KeySetList, NewKeySetBody};
use crate::http::AppState;

/// List key sets
///
/// The workspace's key sets, without clear keys.
#[utoipa::path(
    get, path = "/keys", operation_id = "listKeySets", tag = "Keys",
    responses(
        (status = 200, description = "The key sets", body = KeySetList),
        (status = 403, description = "Public key or a key set limited to some domains (`FORBIDDEN`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
    ),
)]
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
) -> ApiResult<JsonAnswer<KeySetList>> {
    let data = state.engine.list_key_sets(&caller).await?;
    Ok(JsonAnswer(KeySetList { data }))
}

/// Create a key set
///
/// The clear keys are in this answer only; Posthorn keeps their hashes.
#[utoipa::path(
    post, path = "/keys", operation_id = "createKeySet", tag = "Keys",
    request_body = KeySetBody,
    responses(
        (status = 201, description = "Created, with the clear keys", body = NewKeySetBody),
        (status = 403, description = "Public key or a key set limited to some domains (`FORBIDDEN`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 409, description = "A replay under the same `Idempotency-Key` (`CONFLICT`): the keys are shown once and not kept; the message names the key set created", body = ErrorResponse),
        (status = 422, description = "Invalid fields (`VALIDATION_ERROR`) or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
    ),
)]
pub async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    Wire(body): Wire<KeySetBody>,
) -> ApiResult<(
    StatusCode,
    Extension<KeepInstead>,
    JsonAnswer<NewKeySetBody>,
)> {
    let set = state.engine.create_key_set(&caller, body.into()).await?;
    let body = NewKeySetBody::from(&set);
    let kept = keys_shown_once(format!("key set {}", body.id));
    Ok((StatusCode::CREATED, kept, JsonAnswer(body)))
}

/// Revoke a key set
///
/// Both keys of the set stop working at once. The last key set cannot be revoked.
#[utoipa::path(
    delete, path = "/keys/{id}", operation_id = "revokeKeySet", tag = "Keys",
    params(("id" = String, Path, description = "Key set id")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 403, description = "Public key or a key set limited to some domains (`FORBIDDEN`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such key set in this workspace (`NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "It is the workspace's last key set (`CONFLICT`)", body = ErrorResponse),
    ),
)]
pub async fn revoke(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<KeySetId>,
) -> ApiResult<StatusCode> {
    state.engine.revoke_key_set(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
