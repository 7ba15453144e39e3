//! `GET /health`: readiness, with the queue's state.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::http::AppState;

/// Key read (and never found) to check that the store and the limits backend (Redis, when
/// configured) answer.
const PROBE_KEY: &str = "health-probe";

/// 200 when the store, the queue and the limits backend answer, 503 (naming the failing
/// parts) otherwise.
pub async fn health(State(state): State<AppState>) -> Response {
    let engine = &state.engine;
    let now = engine.clock.now();
    // A lookup by primary key answers as well as a list and stays cheap with many workspaces.
    let (store, jobs, limits) = tokio::join!(
        engine.store.workspace(PROBE_KEY),
        engine.jobs.stats(now),
        engine.cache.get(PROBE_KEY, now),
    );
    match (store, jobs, limits) {
        (Ok(_), Ok(stats), Ok(_)) => Json(json!({
            "status": "ok",
            "jobs": {"queued": stats.queued, "running": stats.running, "dead": stats.dead},
        }))
        .into_response(),
        (store, jobs, limits) => {
            let failing: Vec<&str> = [
                ("store", store.is_err()),
                ("queue", jobs.is_err()),
                ("limits", limits.is_err()),
            ]
            .into_iter()
            .filter_map(|(part, failed)| failed.then_some(part))
            .collect();
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"status": "unavailable", "failing": failing})),
            )
                .into_response()
        }
    }
}
