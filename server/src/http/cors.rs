//! Cross-origin requests: the public key tracks events from web pages (`POST /v1/track`), so
//! browsers must be let through their preflight.
//!
//! Every route allows any origin. Keys travel in the `Authorization` header, never in
//! cookies, and no credentials are allowed, so a page on another origin can do nothing
//! without a key it already holds (as with Plunk's API, which allows every origin too).

use std::time::Duration;

use axum::http::{HeaderName, Method};
use tower_http::cors::{Any, CorsLayer};

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The CORS policy of the whole API.
pub fn policy() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ])
        .allow_headers([
            HeaderName::from_static("authorization"),
            HeaderName::from_static("content-type"),
            HeaderName::from_static("idempotency-key"),
        ])
        .expose_headers([
            HeaderName::from_static("x-request-id"),
            HeaderName::from_static("ratelimit-limit"),
            HeaderName::from_static("ratelimit-remaining"),
            HeaderName::from_static("ratelimit-reset"),
            HeaderName::from_static("retry-after"),
            HeaderName::from_static("idempotent-replayed"),
        ])
        .max_age(PREFLIGHT_MAX_AGE)
}
