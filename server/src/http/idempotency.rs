//! `Idempotency-Key` on every POST (workspace and operator API): replay the first answer for
//! 24 h, refuse a changed body.
//!
//! The answer is kept in the store, so that it outlives the process: handlers whose use case
//! takes a [`Keyed`](posthorn_core::app::idempotency::Keyed) (`/v1/send`) commit it in the
//! same change set as the request's changes, and every other answer is stored in a commit
//! of its own right after the handler returned. The cache holds the in-flight marker (409
//! for a second request while the first runs) and a copy of finished answers in front of
//! the store.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::TimeDelta;
use posthorn_core::app::Caller;
use posthorn_core::model::{IdempotencyRecord, IdempotencyTicket, StoredAnswer};
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

/// The key of the POST being handled, for handlers whose use case commits the key's record
/// with its own changes. A handler that did so calls [`IdempotentRequest::recorded`], so
/// that the record is not written a second time.
#[derive(Clone)]
pub struct IdempotentRequest {
    /// The key, its scope, the request's fingerprint and the record's expiry.
    pub ticket: IdempotencyTicket,
    recorded: Arc<AtomicBool>,
}

impl IdempotentRequest {
    /// Notes that the use case committed the record with its changes.
    pub fn recorded(&self) {
        self.recorded.store(true, Ordering::Release);
    }
}

/// The answer as the API sends `value` with `status` (JSON, the bytes [`JsonAnswer`]
/// writes).
///
/// [`JsonAnswer`]: super::answer::JsonAnswer
pub fn json_answer(status: StatusCode, value: &impl Serialize) -> StoredAnswer {
    StoredAnswer {
        status: status.as_u16(),
        content_type: Some("application/json".to_string()),
        // Answer types serialize infallibly (string keys only, no custom serializers).
        body: super::answer::to_json(value).unwrap_or_default(),
    }
}

/// What to keep for the key instead of the answer itself: an answer holding clear keys,
/// which Posthorn shows once and never stores (not even for a replay), keeps this.
#[derive(Clone, Debug)]
pub struct KeepInstead(pub StoredAnswer);

/// The [`KeepInstead`] of an answer holding the clear keys of what it `created` (e.g. "key
/// set ks_…"): a replay answers 409 `CONFLICT` naming it.
pub fn keys_shown_once(created: String) -> axum::Extension<KeepInstead> {
    axum::Extension(KeepInstead(
        ApiError::KeysShownOnce { created }.stored_answer(),
    ))
}

/// Marks an error answer the client is told to retry (429, a conflict with a concurrent
/// change): it changed nothing, and is not kept for the key, so the retry runs again.
#[derive(Clone, Copy, Debug)]
pub struct Transient;

/// What makes two requests under one key the same request: the credential that sent it
/// (its key set and kind, since a handler's own permission checks do not run on a replay),
/// the method, the path, the query string and the body. Each part is length-prefixed, so
/// no two different requests hash the same text.
fn fingerprint(
    caller: Option<&Caller>,
    method: &Method,
    uri: &axum::http::Uri,
    body: &[u8],
) -> String {
    let credential = caller.map_or_else(
        || "admin".to_string(),
        |c| format!("{}:{:?}", c.key.key_set.id, c.key.kind),
    );
    let mut hash = Sha256::new();
    for part in [
        credential.as_bytes(),
        method.as_str().as_bytes(),
        uri.path().as_bytes(),
        uri.query().unwrap_or("").as_bytes(),
        body,
    ] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part);
    }
    hex::encode(hash.finalize())
}

fn valid_key(key: &str) -> bool {
    (1..=255).contains(&key.len()) && key.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// Applies idempotency to POST requests that carry the header.
pub async fn idempotent<F, Fut>(state: &AppState, req: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: std::future::Future<Output = Response>,
{
    if req.method() != Method::POST {
        return next(req).await;
    }
    let Some(raw_key) = req.headers().get("idempotency-key") else {
        return next(req).await;
    };
    let key = match raw_key.to_str() {
        Ok(k) if valid_key(k) => k.to_string(),
        _ => return ApiError::InvalidIdempotencyKey.into_response(),
    };
    // Keys are per workspace; the operator API (no caller) has a scope of its own.
    let caller = req.extensions().get::<Arc<Caller>>().cloned();
    let scope = caller
        .as_deref()
        .map_or_else(|| "admin".to_string(), |c| c.workspace.id.to_string());
    let (mut parts, body) = req.into_parts();
    let bytes = match read_limited(body, state.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let body_hash = fingerprint(caller.as_deref(), &parts.method, &parts.uri, &bytes);
    let cache_key = format!("idem:{scope}:{key}");
    let cache = &state.engine.cache;
    let now = state.engine.clock.now();

    // A finished answer: from the cache, else from the store (it outlives the process).
    match cache.get(&cache_key, now).await {
        Ok(Some(bytes)) => {
            if let Ok(done @ Record::Done { .. }) = serde_json::from_slice::<Record>(&bytes) {
                return answer_from(done, &body_hash);
            }
        }
        Ok(None) => {}
        Err(e) => return ApiError::Domain(e.into()).into_response(),
    }
    match state.engine.idempotency_record(&scope, &key).await {
        Ok(Some(stored)) => {
            // Cached for what is left of the record's day, not a day more.
            let left = (stored.expires_at - now).to_std().unwrap_or_default();
            let done = done_record(stored);
            cache_done(state, &cache_key, &done, left).await;
            return answer_from(done, &body_hash);
        }
        Ok(None) => {}
        Err(e) => return ApiError::Domain(e).into_response(),
    }

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
        Ok(false) => return replay(state, &cache_key, &body_hash).await,
        Err(e) => return ApiError::Domain(e.into()).into_response(),
    }
    let ticket = IdempotencyTicket {
        scope,
        key,
        fingerprint: body_hash.clone(),
        expires_at: now + TimeDelta::from_std(TTL).unwrap_or(TimeDelta::days(1)),
    };
    let request = IdempotentRequest {
        ticket: ticket.clone(),
        recorded: Arc::new(AtomicBool::new(false)),
    };
    parts.extensions.insert(request.clone());
    let response = next(Request::from_parts(parts, Body::from(bytes))).await;
    let (resp_parts, resp_body) = response.into_parts();
    let resp_bytes = axum::body::to_bytes(resp_body, usize::MAX)
        .await
        .unwrap_or_default();
    if resp_parts.status.is_server_error() || resp_parts.extensions.get::<Transient>().is_some() {
        // A failure may succeed on retry (a 5xx, a 429 or a conflict that asks for one):
        // forget the key. (A record committed before the failure, e.g. a time limit hit
        // after the commit, is still replayed from the store.)
        if let Err(e) = cache.delete(&cache_key).await {
            tracing::error!(error = %e, "could not drop the idempotency marker");
        }
        return Response::from_parts(resp_parts, Body::from(resp_bytes));
    }
    let answer = match resp_parts.extensions.get::<KeepInstead>() {
        Some(KeepInstead(instead)) => instead.clone(),
        None => StoredAnswer {
            status: resp_parts.status.as_u16(),
            content_type: resp_parts
                .headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            body: resp_bytes.to_vec(),
        },
    };
    if !request.recorded.load(Ordering::Acquire) {
        let record = ticket.record(answer.clone(), state.engine.clock.now());
        match state.engine.keep_idempotency_record(record).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!("another request stored this idempotency key first"),
            Err(e) => tracing::error!(error = %e, "could not store the idempotency record"),
        }
    }
    let done = Record::Done {
        body_hash,
        status: answer.status,
        content_type: answer.content_type,
        body: answer.body,
    };
    cache_done(state, &cache_key, &done, TTL).await;
    Response::from_parts(resp_parts, Body::from(resp_bytes))
}

/// The cache's form of a stored record.
fn done_record(stored: IdempotencyRecord) -> Record {
    Record::Done {
        body_hash: stored.fingerprint,
        status: stored.answer.status,
        content_type: stored.answer.content_type,
        body: stored.answer.body,
    }
}

/// Keeps `done` in the cache for `ttl`, what is left of the key's lifetime (best effort:
/// the store has it).
async fn cache_done(state: &AppState, cache_key: &str, done: &Record, ttl: Duration) {
    let outcome = match serde_json::to_vec(done) {
        Ok(v) if !ttl.is_zero() => {
            state
                .engine
                .cache
                .put(cache_key, v, ttl, state.engine.clock.now())
                .await
        }
        _ => state.engine.cache.delete(cache_key).await,
    };
    if let Err(e) = outcome {
        tracing::error!(error = %e, "could not cache the idempotency record");
    }
}

async fn replay(state: &AppState, cache_key: &str, body_hash: &str) -> Response {
    let now = state.engine.clock.now();
    let stored = match state.engine.cache.get(cache_key, now).await {
        Ok(v) => v.and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok()),
        Err(e) => return ApiError::Domain(e.into()).into_response(),
    };
    match stored {
        Some(done @ Record::Done { .. }) => answer_from(done, body_hash),
        Some(Record::InFlight { body_hash: h }) if h != body_hash => {
            ApiError::IdempotencyKeyReused.into_response()
        }
        Some(Record::InFlight { .. }) | None => ApiError::IdempotencyInFlight.into_response(),
    }
}

/// The replay of a finished record, or 422 when the request is another one.
fn answer_from(done: Record, body_hash: &str) -> Response {
    let Record::Done {
        body_hash: h,
        status,
        content_type,
        body,
    } = done
    else {
        return ApiError::IdempotencyInFlight.into_response();
    };
    if h != body_hash {
        return ApiError::IdempotencyKeyReused.into_response();
    }
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
