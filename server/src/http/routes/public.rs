//! `/v1/send`, `/v1/track`, `/v1/verify`.

use axum::extract::{Extension, State};
use axum::response::Response;
use posthorn_core::app::Caller;
use posthorn_core::model::timestamp;
use serde_json::json;

use axum::Json;
use posthorn_core::verify::VerificationResult;

use super::v1;
use crate::http::body::{JsonBody, Wire};
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::wire;
use crate::http::wire::track::{TrackBody, TrackResult, VerifyBody};
use crate::http::wire::V1;
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

/// Track a custom event
///
/// Creates or updates the contact with `email` and stores the event. Accepts the public key
/// (`pk_`, for client-side tracking) as well as the secret key.
#[utoipa::path(
    post, path = "/v1/track", operation_id = "track", tag = "Sending",
    request_body = TrackBody,
    responses(
        (status = 200, description = "Recorded", body = V1<TrackResult>),
        (status = 403, description = "Workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or a reserved event name (`VALIDATION_ERROR`), or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
    ),
    security(("publicKey" = []), ("secretKey" = [])),
)]
pub async fn track(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Wire(body): Wire<TrackBody>,
) -> ApiResult<Json<V1<TrackResult>>> {
    let tracked = state.engine.track(&caller, body.into()).await?;
    Ok(Json(V1::new(tracked.into())))
}

/// Verify an email address
///
/// Offline checks (syntax, disposable, alias, personal provider, typo, plus-addressing,
/// random-looking input) and DNS checks. A malformed address is an answer with
/// `valid: false`, not an error.
#[utoipa::path(
    post, path = "/v1/verify", operation_id = "verify", tag = "Sending",
    request_body = VerifyBody,
    responses(
        (status = 200, description = "The verdict", body = V1<VerificationResult>),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 422, description = "`email` missing, not a string or too long (`VALIDATION_ERROR`), or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
    ),
)]
pub async fn verify(
    State(state): State<AppState>,
    Extension(_caller): Extension<Caller>,
    Wire(body): Wire<VerifyBody>,
) -> ApiResult<Json<V1<VerificationResult>>> {
    let result = state.engine.verify(&body.into()).await?;
    Ok(Json(V1::new(result)))
}
