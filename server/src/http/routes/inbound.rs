//! `POST /inbound/raw`: raw intake for MTAs that relay received mail over HTTP.

use crate::http::answer::JsonAnswer;
use axum::extract::{Extension, RawQuery, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use posthorn_core::app::inbound::InboundMessage;
use posthorn_core::app::Caller;
use posthorn_core::model::ProviderVerdicts;
use std::sync::Arc;

use crate::http::body::read_limited;
use crate::http::error::{ApiError, ApiResult, ErrorResponse};
use crate::http::wire::inbound::{InboundEnvelope, InboundResult};
use crate::http::wire::V1;
use crate::http::AppState;

/// Receive a raw message
///
/// Takes one message as received by an MTA (`message/rfc822`, the raw bytes), with its
/// envelope in the query string. Every recipient must be at a verified domain of this
/// workspace with `inboundEnabled`. Answers 202 once the message is stored; its
/// `email.received` events (one per recipient) follow from a background job.
#[utoipa::path(
    post, path = "/inbound/raw", operation_id = "receiveRawInbound", tag = "Inbound",
    params(InboundEnvelope),
    request_body(content = String, content_type = "message/rfc822", description = "The message as received (RFC 5322)"),
    responses(
        (status = 202, description = "Stored; `email.received` follows", body = V1<InboundResult>),
        (status = 400, description = "Content type other than `message/rfc822` (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 413, description = "Message larger than `POSTHORN_MAX_BODY_BYTES` (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "A recipient not at an inbound domain of this workspace (`to.<n>`), a malformed sender (`from`), no recipient (`to`) (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 429, description = "Too much mail from this sender or for this workspace (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse),
    ),
)]
pub async fn raw(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    RawQuery(query): RawQuery,
    req: Request,
) -> ApiResult<(StatusCode, JsonAnswer<V1<InboundResult>>)> {
    let envelope = InboundEnvelope::parse(query.as_deref())?;
    let is_rfc822 = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|ct| ct.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("message/rfc822"));
    if !is_rfc822 {
        return Err(ApiError::Domain(posthorn_core::Error::BadRequest(
            "Send the message as the body with Content-Type: message/rfc822".into(),
        )));
    }
    let raw = read_limited(req.into_body(), state.max_body_bytes).await?;
    let message = InboundMessage {
        envelope_from: envelope.from,
        recipients: envelope.to,
        raw: raw.to_vec(),
        client_ip: None,
        helo: None,
        provider_verdicts: ProviderVerdicts::default(),
    };
    let receipt = state.engine.receive_inbound_for(&caller, message).await?;
    let at = state.engine.clock.now();
    Ok((
        StatusCode::ACCEPTED,
        JsonAnswer(V1::new(InboundResult::new(receipt, at))),
    ))
}
