//! The layers in front of the workspace and operator routes, as one middleware each.
//!
//! The key check, the `Idempotency-Key` handling and the time limit run in that order
//! (the idempotency scope is the caller's workspace; the time limit sits inside the
//! idempotency layer, so a stopped request's key is forgotten like any 5xx). They are one
//! `route_layer` rather than three: every layer costs each request a clone of its service
//! and a boxed call.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::{auth, idempotency, time_limit, AppState};

/// An API key, then idempotency, then the time limit.
pub async fn workspace_gate(State(state): State<AppState>, req: Request, next: Next) -> Response {
    auth::require_key(&state, req, |req| {
        idempotent_within_limit(&state, req, next)
    })
    .await
}

/// The operator's admin token, then idempotency, then the time limit.
pub async fn admin_gate(State(state): State<AppState>, req: Request, next: Next) -> Response {
    auth::require_admin(&state, req, |req| {
        idempotent_within_limit(&state, req, next)
    })
    .await
}

/// What both gates run once the caller is known: idempotency around the time-limited route.
async fn idempotent_within_limit(state: &AppState, req: Request, next: Next) -> Response {
    let _counted = state.requests.enter();
    idempotency::idempotent(state, req, |req| {
        time_limit::limit(state.request_time_limit, next.run(req))
    })
    .await
}
