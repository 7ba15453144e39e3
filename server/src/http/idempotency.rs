//! `Idempotency-Key` on every POST (workspace and operator API): replay the first answer for
//! 24 h, refuse a changed body.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use posthorn_core::app::Caller;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::time::Duration;

use super::body::read_limited;
use super::error::ApiError;
use super::AppState;

/// How long a key's answer is kept.
const TTL: Duration = Duration::from_secs(24 * 3600);
/// How long an in-flight marker blocks the key if the process dies mid-request.
const IN_FLIGHT_TTL: Duration = Duration::from_secs(120);

#[derive(Serialize, Deserialize)]
enum Record {
    InFlight {
        body_hash: String,
    },
    Done {
        body_hash: String,
        status: u16,
        content_type: Option<String>,
        body: Vec<u8>,
    },
}

fn valid_key(key: &str) -> bool {
    (1..=255).contains(&key.len()) && key.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// Applies idempotency to POST requests that carry the header.
pub async fn idempotent(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let Some(raw_key) = req.headers().get("idempotency-key") else {
        return next.run(req).await;
    };
    let key = match raw_key.to_str() {
        Ok(k) if valid_key(k) => k.to_string(),
        _ => return ApiError::InvalidIdempotencyKey.into_response(),
    };
    // Keys are per workspace; the operator API (no caller) has a scope of its own.
    let scope = req
        .extensions()
        .get::<Caller>()
        .map_or_else(|| "admin".to_string(), |c| c.workspace.id.to_string());
    let (parts, body) = req.into_parts();
    let bytes = match read_limited(body, state.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let body_hash = hex::encode(Sha256::digest(
        [
            parts.method.as_str().as_bytes(),
            parts.uri.path().as_bytes(),
            &bytes,
        ]
        .concat(),
    ));
    let cache_key = format!("idem:{scope}:{key}");
    let cache = &state.engine.cache;
    let now = state.engine.clock.now();
    let marker = match serde_json::to_vec(&Record::InFlight {
        body_hash: body_hash.clone(),
    }) {
        Ok(m) => m,
        Err(e) => {
            return ApiError::Domain(posthorn_core::Error::Internal(e.to_string())).into_response()
        }
    };
    match cache
        .put_if_absent(&cache_key, marker, IN_FLIGHT_TTL, now)
        .await
    {
        Ok(true) => {}
        Ok(false) => return replay(&state, &cache_key, &body_hash).await,
        Err(e) => return ApiError::Domain(e.into()).into_response(),
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let (resp_parts, resp_body) = response.into_parts();
    let resp_bytes = axum::body::to_bytes(resp_body, usize::MAX)
        .await
        .unwrap_or_default();
    let outcome = if resp_parts.status.is_server_error() {
        // A failure may succeed on retry: forget the key.
        cache.delete(&cache_key).await
    } else {
        let record = Record::Done {
            body_hash,
            status: resp_parts.status.as_u16(),
            content_type: resp_parts
                .headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            body: resp_bytes.to_vec(),
        };
        match serde_json::to_vec(&record) {
            Ok(v) => {
                cache
                    .put(&cache_key, v, TTL, state.engine.clock.now())
                    .await
            }
            Err(_) => cache.delete(&cache_key).await,
        }
    };
    if let Err(e) = outcome {
        tracing::error!(error = %e, "could not store the idempotency record");
    }
    Response::from_parts(resp_parts, Body::from(resp_bytes))
}

async fn replay(state: &AppState, cache_key: &str, body_hash: &str) -> Response {
    let now = state.engine.clock.now();
    let stored = match state.engine.cache.get(cache_key, now).await {
        Ok(v) => v.and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok()),
        Err(e) => return ApiError::Domain(e.into()).into_response(),
    };
    match stored {
        Some(Record::Done {
            body_hash: h,
            status,
            content_type,
            body,
        }) if h == body_hash => {
            let mut response = Response::new(Body::from(body));
            *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            if let Some(ct) = content_type.and_then(|ct| HeaderValue::from_str(&ct).ok()) {
                response.headers_mut().insert("content-type", ct);
            }
            response
                .headers_mut()
                .insert("idempotent-replayed", HeaderValue::from_static("true"));
            response
        }
        Some(Record::Done { .. }) => ApiError::IdempotencyKeyReused.into_response(),
        Some(Record::InFlight { body_hash: h }) if h != body_hash => {
            ApiError::IdempotencyKeyReused.into_response()
        }
        Some(Record::InFlight { .. }) | None => ApiError::IdempotencyInFlight.into_response(),
    }
}
