//! Authentication, workspace rate limiting and the `RateLimit-*` headers.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use posthorn_core::app::workspaces::{AuthFailure, AuthOutcome};
use posthorn_core::app::Caller;
use posthorn_core::ports::{Quota, RateDecision};
use std::sync::Arc;
use std::time::Duration;

use super::error::ApiError;
use super::AppState;

/// The bearer token of the request, if the header is well formed.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Paths a public key may call.
fn public_key_allowed(path: &str) -> bool {
    path == "/v1/track"
}

/// Authenticates the key, checks its kind, spends one unit of the workspace's budget, and
/// puts the caller into the request's extensions as an `Arc<Caller>` (handlers extract
/// `Extension<Arc<Caller>>`).
pub async fn require_key<F, Fut>(state: &AppState, mut req: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: std::future::Future<Output = Response>,
{
    let public_ok = public_key_allowed(req.uri().path());
    let caller = match authenticate(state, bearer(req.headers()), public_ok).await {
        Ok(caller) => caller,
        Err(e) => return e.into_response(),
    };
    let now = state.engine.clock.now();
    let decision = match spend_budget(state, &caller, now).await {
        Ok(d) => d,
        Err(e) => return ApiError::Domain(e).into_response(),
    };
    let mut response = if decision.allowed {
        req.extensions_mut().insert(caller);
        next(req).await
    } else {
        let retry_after = (decision.reset_at - now).num_seconds().max(1) as u64;
        ApiError::RateLimited { retry_after }.into_response()
    };
    rate_limit_headers(response.headers_mut(), &decision, now);
    response
}

/// Takes one unit of the workspace's per-minute request budget, shared by the HTTP API
/// and the SMTP submission relay (one message counts as one request).
pub(crate) async fn spend_budget(
    state: &AppState,
    caller: &Caller,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<RateDecision, posthorn_core::Error> {
    let quota = Quota {
        limit: caller.workspace.rate_limit_per_minute.max(1),
        window: Duration::from_secs(60),
    };
    // Pushed rather than `format!`ed: every request with a key comes through here.
    let id = caller.workspace.id.as_str();
    let mut key = String::with_capacity(4 + id.len());
    key.push_str("api:");
    key.push_str(id);
    Ok(state.engine.rate_limiter.take(&key, 1, quota, now).await?)
}

/// Resolves a key through the cache, as every request does; `public_ok` lets a public key
/// through.
pub(crate) async fn authenticate(
    state: &AppState,
    token: Option<&str>,
    public_ok: bool,
) -> Result<Arc<Caller>, ApiError> {
    let token = token.ok_or(ApiError::MissingAuth)?;
    let generation = state.engine.store.access_generation();
    if let Some(caller) = state.auth_cache.get(token, generation) {
        return check_kind(caller, public_ok);
    }
    let caller = state
        .engine
        .authenticate(token)
        .await
        .map_err(|e| match e {
            AuthOutcome::Refused(AuthFailure::Malformed) => ApiError::InvalidApiKey,
            AuthOutcome::Refused(AuthFailure::Unknown) => ApiError::InvalidApiKey,
            AuthOutcome::Refused(AuthFailure::Disabled) => ApiError::ProjectDisabled,
            AuthOutcome::Store(e) => ApiError::Domain(e.into()),
        })?;
    // Shared, not copied: the cache, the request's extensions and its handler hold one.
    let caller = Arc::new(caller);
    state.auth_cache.put(token, Arc::clone(&caller), generation);
    check_kind(caller, public_ok)
}

fn check_kind(caller: Arc<Caller>, public_ok: bool) -> Result<Arc<Caller>, ApiError> {
    if !caller.is_secret() && !public_ok {
        return Err(ApiError::SecretKeyRequired);
    }
    Ok(caller)
}

fn rate_limit_headers(
    headers: &mut HeaderMap,
    d: &RateDecision,
    now: chrono::DateTime<chrono::Utc>,
) {
    // Names made once (a `&str` name is parsed again on every insert), numbers written
    // without `fmt`.
    static LIMIT: HeaderName = HeaderName::from_static("ratelimit-limit");
    static REMAINING: HeaderName = HeaderName::from_static("ratelimit-remaining");
    static RESET: HeaderName = HeaderName::from_static("ratelimit-reset");
    let reset = (d.reset_at - now).num_seconds().max(0);
    headers.insert(LIMIT.clone(), HeaderValue::from(d.limit));
    headers.insert(REMAINING.clone(), HeaderValue::from(d.remaining));
    headers.insert(RESET.clone(), HeaderValue::from(reset));
}

/// Checks the operator's admin token.
pub async fn require_admin<F, Fut>(state: &AppState, req: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: std::future::Future<Output = Response>,
{
    if state.admin_token.is_none() {
        return ApiError::RouteNotFound(req.uri().path().to_string()).into_response();
    }
    let ok = match (&state.admin_token, bearer(req.headers())) {
        (Some(expected), Some(given)) => constant_time_eq(expected.as_bytes(), given.as_bytes()),
        _ => false,
    };
    if !ok {
        return ApiError::AdminUnauthorized.into_response();
    }
    // Operator changes (disabling, limits, keys) move the store's access generation,
    // which drops cached keys in every process.
    next(req).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
