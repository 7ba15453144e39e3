//! The one table from error to HTTP status, `error.code` and suggestion, and the envelope.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use posthorn_core::{Error, FieldError, Resource};
use serde::Serialize;
use utoipa::ToSchema;

use super::request_id::current_request_id;

/// `Retry-After` of a 503: a dropped connection is usually back within a second or two.
const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 2;

/// The error envelope every failure is answered with (status as in `error.statusCode`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "success": false,
    "error": {
        "code": "VALIDATION_ERROR",
        "message": "Validation failed: email: email is required",
        "statusCode": 422,
        "requestId": "0193a5f0-7c1e-7d2a-9a0e-5b1c2d3e4f50",
        "errors": [{"field": "email", "message": "email is required", "code": "required"}],
        "suggestion": "Fix the fields listed in `errors` and send the request again."
    },
    "timestamp": "2026-11-21T10:00:00.000Z"
}))]
pub struct ErrorResponse {
    /// Always `false`.
    pub success: bool,
    /// What went wrong.
    pub error: ErrorBody,
    /// When the error was produced (RFC 3339, UTC, milliseconds).
    #[schema(format = DateTime)]
    pub timestamp: String,
}

/// The `error` object of the error envelope.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// Machine-readable code: `VALIDATION_ERROR`, `BAD_REQUEST`, `MISSING_AUTH`,
    /// `INVALID_API_KEY`, `FORBIDDEN`, `PROJECT_DISABLED`, `DOMAIN_NOT_VERIFIED`, `NOT_FOUND`,
    /// `CONTACT_NOT_FOUND`, `TEMPLATE_NOT_FOUND`, `CAMPAIGN_NOT_FOUND`, `SEGMENT_NOT_FOUND`,
    /// `WORKFLOW_NOT_FOUND`, `CONFLICT`, `INVALID_STATE`, `IDEMPOTENCY_KEY_REUSED`,
    /// `PAYLOAD_TOO_LARGE`, `RATE_LIMIT_EXCEEDED`, `INTERNAL_ERROR` or `SERVICE_UNAVAILABLE`.
    #[schema(example = "VALIDATION_ERROR")]
    pub code: &'static str,
    /// Human-readable explanation.
    pub message: String,
    /// The HTTP status of the response.
    #[schema(example = 422)]
    pub status_code: u16,
    /// Unique id of the request (also in the `X-Request-Id` header).
    pub request_id: String,
    /// Every failing field; only for `VALIDATION_ERROR` answers with status 422.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub errors: Option<Vec<FieldError>>,
    /// What to do about it.
    pub suggestion: &'static str,
}

/// Every failure an HTTP request can end in.
#[derive(Debug)]
pub enum ApiError {
    /// A use case refused or failed.
    Domain(Error),
    /// No `Authorization: Bearer` header, or a malformed one.
    MissingAuth,
    /// Unknown or revoked key.
    InvalidApiKey,
    /// A public key on a secret-key endpoint.
    SecretKeyRequired,
    /// The workspace is disabled.
    ProjectDisabled,
    /// The operator API is off or the admin token is wrong.
    AdminUnauthorized,
    /// The workspace's request budget is spent.
    RateLimited {
        /// Seconds until the budget resets.
        retry_after: u64,
    },
    /// The body is not JSON.
    InvalidJson(String),
    /// A body was sent with a content type other than JSON.
    UnsupportedContentType,
    /// The body is larger than allowed.
    PayloadTooLarge(usize),
    /// No such route.
    RouteNotFound(String),
    /// The route exists with other methods.
    MethodNotAllowed,
    /// `Idempotency-Key` is malformed.
    InvalidIdempotencyKey,
    /// The same `Idempotency-Key` came with another body.
    IdempotencyKeyReused,
    /// The first request with this `Idempotency-Key` is still running.
    IdempotencyInFlight,
    /// A replay of a request whose answer held clear keys, which are shown once and never
    /// kept; `created` says what the first request made.
    KeysShownOnce {
        /// What the first request created, with its ids.
        created: String,
    },
    /// The handler did not finish within the request time limit.
    TimedOut {
        /// The limit, in seconds.
        limit_secs: u64,
    },
    /// A handler panicked.
    Panic,
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError::Domain(e)
    }
}

struct Parts {
    status: StatusCode,
    code: &'static str,
    message: String,
    errors: Option<Vec<FieldError>>,
    suggestion: &'static str,
}

fn not_found_code(resource: Resource) -> &'static str {
    match resource {
        Resource::Contact => "CONTACT_NOT_FOUND",
        Resource::Template => "TEMPLATE_NOT_FOUND",
        Resource::Campaign => "CAMPAIGN_NOT_FOUND",
        Resource::Segment => "SEGMENT_NOT_FOUND",
        Resource::Workflow => "WORKFLOW_NOT_FOUND",
        // Operator-level records (workspaces, key sets, domains, jobs) and emails.
        Resource::Workspace
        | Resource::KeySet
        | Resource::Domain
        | Resource::Email
        | Resource::Job
        | Resource::Step
        | Resource::Transition
        | Resource::Execution => "NOT_FOUND",
        Resource::Link => "LINK_NOT_FOUND",
    }
}

impl ApiError {
    fn parts(self) -> Parts {
        use StatusCode as S;
        let p = |status, code, message: String, suggestion| Parts {
            status,
            code,
            message,
            errors: None,
            suggestion,
        };
        match self {
            ApiError::Domain(Error::Validation(errors)) => Parts {
                status: S::UNPROCESSABLE_ENTITY,
                code: "VALIDATION_ERROR",
                message: match errors.as_slice() {
                    [one] => format!("Validation failed: {}: {}", one.field, one.message),
                    many => format!("Validation failed for {} fields", many.len()),
                },
                errors: Some(errors),
                suggestion: "Fix the fields listed in `errors` and send the request again.",
            },
            ApiError::Domain(e @ Error::StepKindMismatch { .. }) => {
                let message = e.to_string();
                Parts {
                    status: S::UNPROCESSABLE_ENTITY,
                    code: "VALIDATION_ERROR",
                    message: format!("Validation failed: config: {message}"),
                    errors: Some(vec![posthorn_core::FieldError::new(
                        "config",
                        "type_mismatch",
                        message,
                    )]),
                    suggestion:
                        "Send a config of the step's own type; to change the type, add a new step.",
                }
            }
            ApiError::Domain(Error::BadRequest(m)) => p(
                S::BAD_REQUEST,
                "BAD_REQUEST",
                m,
                "Change the request as the message says.",
            ),
            ApiError::Domain(Error::InvalidState(m)) => p(
                S::BAD_REQUEST,
                "INVALID_STATE",
                m,
                "Read the resource's current state and pick an operation it allows.",
            ),
            ApiError::Domain(Error::NotFound(r)) => p(
                S::NOT_FOUND,
                not_found_code(r),
                format!("The {} does not exist in this workspace", r.noun()),
                "Check the id; ids from another workspace are not visible with this key.",
            ),
            ApiError::Domain(Error::Forbidden(m)) => p(
                S::FORBIDDEN,
                "FORBIDDEN",
                m,
                "Use a key whose key set allows this operation.",
            ),
            ApiError::Domain(Error::DomainNotVerified(m)) => p(
                S::FORBIDDEN,
                "DOMAIN_NOT_VERIFIED",
                m,
                "Add and verify the sender domain, or send from a verified one.",
            ),
            ApiError::Domain(Error::Conflict(m)) => p(
                S::CONFLICT,
                "CONFLICT",
                m,
                "Re-read the resource and try again.",
            ),
            ApiError::Domain(Error::Unavailable(cause)) => {
                tracing::error!(%cause, "backing service unavailable");
                p(
                    S::SERVICE_UNAVAILABLE,
                    "SERVICE_UNAVAILABLE",
                    "A backing service (database or Redis) is unavailable".into(),
                    "Retry in a few seconds, with the same Idempotency-Key for writes.",
                )
            }
            ApiError::Domain(Error::Internal(cause)) => {
                tracing::error!(%cause, "internal error");
                p(
                    S::INTERNAL_SERVER_ERROR,
                    "INTERNAL_ERROR",
                    "An unexpected error occurred".into(),
                    "Try again later; report the requestId if it persists.",
                )
            }
            ApiError::MissingAuth => p(
                S::UNAUTHORIZED,
                "MISSING_AUTH",
                "Missing or malformed Authorization header".into(),
                "Send `Authorization: Bearer <API key>`.",
            ),
            ApiError::InvalidApiKey => p(
                S::UNAUTHORIZED,
                "INVALID_API_KEY",
                "The API key is invalid or was revoked".into(),
                "Check the key, or create a new key set.",
            ),
            ApiError::SecretKeyRequired => p(
                S::FORBIDDEN,
                "FORBIDDEN",
                "This endpoint needs a secret key (sk_); public keys only work with /v1/track"
                    .into(),
                "Call this endpoint from your server with the secret key.",
            ),
            ApiError::ProjectDisabled => p(
                S::FORBIDDEN,
                "PROJECT_DISABLED",
                "This workspace is disabled".into(),
                "Contact the operator of this Posthorn installation.",
            ),
            ApiError::AdminUnauthorized => p(
                S::UNAUTHORIZED,
                "INVALID_API_KEY",
                "The operator API needs a valid admin token".into(),
                "Set POSTHORN_ADMIN_TOKEN and send it as a Bearer token.",
            ),
            ApiError::Domain(Error::RateLimited { message, .. }) => p(
                S::TOO_MANY_REQUESTS,
                "RATE_LIMIT_EXCEEDED",
                message,
                "Wait for Retry-After seconds, or ask the operator for a higher limit.",
            ),
            ApiError::RateLimited { retry_after } => p(
                S::TOO_MANY_REQUESTS,
                "RATE_LIMIT_EXCEEDED",
                format!("Too many requests; the budget resets in {retry_after} s"),
                "Wait for Retry-After seconds, or ask the operator for a higher limit.",
            ),
            ApiError::InvalidJson(detail) => p(
                S::BAD_REQUEST,
                "VALIDATION_ERROR",
                format!("Invalid JSON in request body: {detail}"),
                "Send a valid JSON object with Content-Type: application/json.",
            ),
            ApiError::UnsupportedContentType => p(
                S::BAD_REQUEST,
                "VALIDATION_ERROR",
                "Invalid JSON in request body: Content-Type must be application/json".into(),
                "Send a valid JSON object with Content-Type: application/json.",
            ),
            ApiError::PayloadTooLarge(limit) => p(
                S::PAYLOAD_TOO_LARGE,
                "PAYLOAD_TOO_LARGE",
                format!("The request body is larger than {limit} bytes"),
                "Send less data per request (attachments are limited to 10 MB).",
            ),
            ApiError::RouteNotFound(path) => p(
                S::NOT_FOUND,
                "NOT_FOUND",
                format!("No route for {path}"),
                "See GET /openapi.json for the routes this server offers.",
            ),
            ApiError::MethodNotAllowed => p(
                S::METHOD_NOT_ALLOWED,
                "BAD_REQUEST",
                "This method is not allowed on this route".into(),
                "See GET /openapi.json for the methods of each route.",
            ),
            ApiError::InvalidIdempotencyKey => p(
                S::BAD_REQUEST,
                "BAD_REQUEST",
                "Idempotency-Key must be 1 to 255 printable ASCII characters".into(),
                "Use a UUID as the idempotency key.",
            ),
            ApiError::IdempotencyKeyReused => p(
                S::UNPROCESSABLE_ENTITY,
                "IDEMPOTENCY_KEY_REUSED",
                "This Idempotency-Key was used with a different request (another API key, path, query or body)".into(),
                "Use a new key for a new request.",
            ),
            ApiError::IdempotencyInFlight => p(
                S::CONFLICT,
                "CONFLICT",
                "A request with this Idempotency-Key is still being processed".into(),
                "Retry after the first request has finished.",
            ),
            ApiError::KeysShownOnce { created } => p(
                S::CONFLICT,
                "CONFLICT",
                format!(
                    "The first request with this Idempotency-Key created {created}; \
                     its clear keys were shown once and are not kept, so they cannot be replayed"
                ),
                "If that answer was lost, revoke the key set it created and create another.",
            ),
            ApiError::TimedOut { limit_secs } => p(
                S::SERVICE_UNAVAILABLE,
                "SERVICE_UNAVAILABLE",
                format!(
                    "The request did not finish within {limit_secs} s and was stopped; \
                     a write may or may not have taken effect"
                ),
                "Retry with the same Idempotency-Key, so that a write is not made twice.",
            ),
            ApiError::Panic => p(
                S::INTERNAL_SERVER_ERROR,
                "INTERNAL_ERROR",
                "An unexpected error occurred".into(),
                "Try again later; report the requestId if it persists.",
            ),
        }
    }
}

impl ApiError {
    /// The status and the error envelope this error is answered with.
    fn envelope(self) -> (StatusCode, ErrorResponse) {
        let parts = self.parts();
        let body = ErrorResponse {
            success: false,
            error: ErrorBody {
                code: parts.code,
                message: parts.message,
                status_code: parts.status.as_u16(),
                request_id: current_request_id(),
                errors: parts.errors,
                suggestion: parts.suggestion,
            },
            timestamp: posthorn_core::model::timestamp::format(&chrono::Utc::now()),
        };
        (parts.status, body)
    }

    /// This error's answer as an `Idempotency-Key` keeps it.
    pub fn stored_answer(self) -> posthorn_core::model::StoredAnswer {
        let (status, body) = self.envelope();
        super::idempotency::json_answer(status, &body)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // Answers that ask the client to retry are not kept for an Idempotency-Key.
        let transient = matches!(
            self,
            ApiError::RateLimited { .. }
                | ApiError::Domain(Error::RateLimited { .. })
                | ApiError::Domain(Error::Conflict(_))
        );
        let retry_after = match &self {
            ApiError::RateLimited { retry_after } => Some(*retry_after),
            ApiError::Domain(Error::RateLimited {
                retry_after_secs, ..
            }) => Some(*retry_after_secs),
            ApiError::Domain(Error::Unavailable(_)) | ApiError::TimedOut { .. } => {
                Some(UNAVAILABLE_RETRY_AFTER_SECS)
            }
            _ => None,
        };
        let (status, body) = self.envelope();
        let mut response = (status, super::answer::JsonAnswer(body)).into_response();
        if let Some(secs) = retry_after {
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert("retry-after", v);
            }
        }
        if transient {
            response
                .extensions_mut()
                .insert(super::idempotency::Transient);
        }
        response
    }
}

/// Result of a handler.
pub type ApiResult<T> = Result<T, ApiError>;
