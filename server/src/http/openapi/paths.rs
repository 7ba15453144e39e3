//! Documentation stubs for the operations not converted yet (`/v1/send`): the functions
//! are never called, their `#[utoipa::path]` attributes describe routes still added with
//! `.route(...)`. Every other operation is documented on its real handler; move
//! these there (and delete them here) area by area.

#![allow(dead_code)]

use utoipa::IntoParams;

use super::schemas::*;

// ---------------------------------------------------------------------------------------
// Query parameters
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// System
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// /v1
// ---------------------------------------------------------------------------------------

/// Send a transactional email
///
/// One email record and delivery job per distinct recipient, all or nothing. The sender
/// domain must be a verified domain of the workspace (and in the key set's allowlist when it
/// has one). New contacts are created unsubscribed unless `subscribed` is given.
#[utoipa::path(
    post, path = "/v1/send", operation_id = "send", tag = "Sending",
    params(IdempotencyKey),
    request_body = SendRequest,
    responses(
        (status = 200, description = "Accepted for delivery", body = SendResponse),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), a malformed `Idempotency-Key`, or a MARKETING template sent to unsubscribed recipients (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`), sender domain not verified (`DOMAIN_NOT_VERIFIED`), sender domain outside the key set's allowlist (`FORBIDDEN`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "`template` does not exist (`TEMPLATE_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A request with this `Idempotency-Key` is still running (`CONFLICT`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields, all listed in `errors` (`VALIDATION_ERROR`), or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
            ("RateLimit-Limit" = u32, description = "Requests per minute"),
            ("RateLimit-Remaining" = u32, description = "Requests left in the window"),
            ("RateLimit-Reset" = u64, description = "Seconds until the window resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
    security(("secretKey" = [])),
)]
fn send() {}

// ---------------------------------------------------------------------------------------
// Contacts
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Operator API
// ---------------------------------------------------------------------------------------

/// The optional `Idempotency-Key` header of POST requests.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IdempotencyKey {
    /// 1 to 255 printable ASCII characters (spaces inside only, as HTTP trims the ends).
    /// Within 24 hours the same key with the same body replays the first answer (header
    /// `Idempotent-Replayed: true`); the same key with another body is refused (422
    /// `IDEMPOTENCY_KEY_REUSED`).
    #[param(
        rename = "Idempotency-Key",
        required = false,
        min_length = 1,
        max_length = 255,
        pattern = r"^[!-~]([ -~]{0,253}[!-~])?$"
    )]
    pub idempotency_key: String,
}
