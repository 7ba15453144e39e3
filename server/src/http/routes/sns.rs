//! `POST /webhooks/sns`: Amazon SES notifications delivered by SNS. No key: only messages
//! of the listed topics whose signature verifies are acted on.

use crate::http::answer::JsonAnswer;
use axum::body::Body;
use axum::extract::State;
use posthorn_core::Error;

use crate::http::body::read_limited;
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::wire::sns::{SnsMessageDoc, SnsResult};
use crate::http::wire::V1;
use crate::http::AppState;

/// Receive an SNS message
///
/// Amazon SES feedback (Delivery, Bounce, Complaint, Open, Click) and inbound mail
/// (Received) through SNS, and the subscription confirmation of a listed topic. The body is
/// the SNS message as SNS posts it (JSON, sent as `text/plain`). Only topics listed in
/// `POSTHORN_SNS_TOPIC_ARNS` are processed; the signature is verified against the
/// certificate at `SigningCertURL` before anything else happens; a redelivered message
/// (same `MessageId`) is processed once.
#[utoipa::path(
    post, path = "/webhooks/sns", operation_id = "receiveSns", tag = "Providers",
    request_body(
        content(
            (SnsMessageDoc = "text/plain"),
            (SnsMessageDoc = "application/json"),
        ),
        description = "The SNS message: a JSON document, whatever the `Content-Type` (SNS sends `text/plain`)",
    ),
    responses(
        (status = 200, description = "Processed, confirmed, or recognised as a redelivery", body = V1<SnsResult>),
        (status = 400, description = "Not an SNS message, or a signed message that is not an SES notification (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 403, description = "Topic not listed, certificate or subscribe URL on a refused host, or a signature that does not verify (`FORBIDDEN`); nothing changed", body = ErrorResponse),
        (status = 413, description = "Body too large (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 503, description = "The certificate or subscribe URL could not be fetched, or the store is unavailable (`SERVICE_UNAVAILABLE`); SNS delivers again", body = ErrorResponse),
    ),
)]
pub async fn receive(
    State(state): State<AppState>,
    body: Body,
) -> ApiResult<JsonAnswer<V1<SnsResult>>> {
    let bytes = read_limited(body, state.max_body_bytes).await?;
    let Some(receiver) = state.sns.get() else {
        return Err(Error::Forbidden(
            "SNS notifications are off: set POSTHORN_SNS_TOPIC_ARNS".into(),
        )
        .into());
    };
    let outcome = receiver.receive(&state.engine, &bytes).await?;
    Ok(JsonAnswer(V1::new(outcome.into())))
}
