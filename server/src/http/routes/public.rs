//! `/v1/send`, `/v1/track`, `/v1/verify`.

use axum::extract::{Extension, State};
use axum::http::StatusCode;
use posthorn_core::app::idempotency::Keyed;
use posthorn_core::app::send::Accepted;
use posthorn_core::app::Caller;
use std::sync::Arc;

use crate::http::answer::JsonAnswer;
use posthorn_core::verify::VerificationResult;

use crate::http::body::{FastWire, Wire};
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::idempotency::{json_answer, IdempotentRequest};
use crate::http::wire::send::{SendInput, SendResult};
use crate::http::wire::track::{TrackBody, TrackResult, VerifyBody};
use crate::http::wire::V1;
use crate::http::AppState;

/// Send a transactional email
///
/// One email record and delivery job per distinct recipient, all or nothing. The sender
/// domain must be a verified domain of the workspace (and in the key set's allowlist when it
/// has one). New contacts are created unsubscribed unless `subscribed` is given.
#[utoipa::path(
    post, path = "/v1/send", operation_id = "send", tag = "Sending",
    request_body = SendInput,
    responses(
        (status = 200, description = "Accepted for delivery", body = V1<SendResult>),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), a malformed `Idempotency-Key`, or a MARKETING template sent to unsubscribed recipients (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`), sender domain not verified (`DOMAIN_NOT_VERIFIED`), sender domain outside the key set's allowlist (`FORBIDDEN`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "`template` does not exist (`TEMPLATE_NOT_FOUND`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields, all listed in `errors` (`VALIDATION_ERROR`), or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
    ),
)]
pub async fn send(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    keyed: Option<Extension<IdempotentRequest>>,
    Wire(body): Wire<SendInput>,
) -> ApiResult<JsonAnswer<V1<SendResult>>> {
    let accepted = match keyed {
        // The key's answer is committed with the emails: a retry after a crash replays it.
        Some(Extension(keyed)) => {
            let answer = |accepted: &Accepted| {
                json_answer(StatusCode::OK, &V1::new(SendResult::from(accepted.clone())))
            };
            let ticket = Keyed {
                ticket: &keyed.ticket,
                answer: &answer,
            };
            let accepted = state
                .engine
                .send_keyed(&caller, body.into(), Some(ticket))
                .await?;
            keyed.recorded();
            accepted
        }
        None => state.engine.send(&caller, body.into()).await?,
    };
    Ok(JsonAnswer(V1::new(accepted.into())))
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
    Extension(caller): Extension<Arc<Caller>>,
    FastWire(body): FastWire<TrackBody>,
) -> ApiResult<JsonAnswer<V1<TrackResult>>> {
    let tracked = state.engine.track(&caller, body.into()).await?;
    Ok(JsonAnswer(V1::new(tracked.into())))
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
    Extension(_caller): Extension<Arc<Caller>>,
    Wire(body): Wire<VerifyBody>,
) -> ApiResult<JsonAnswer<V1<VerificationResult>>> {
    let result = state.engine.verify(&body.into()).await?;
    Ok(JsonAnswer(V1::new(result)))
}
