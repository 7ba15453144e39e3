//! `GET /health`: readiness, with the queue's state.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::http::AppState;

/// 200 when the store and queue answer, 503 otherwise.
pub async fn health(State(state): State<AppState>) -> Response {
    let engine = &state.engine;
    let store_ok = engine.store.workspaces().await.is_ok();
    match engine.jobs.stats(engine.clock.now()).await {
        Ok(stats) if store_ok => Json(json!({
            "status": "ok",
            "jobs": {"queued": stats.queued, "running": stats.running, "dead": stats.dead},
        }))
        .into_response(),
        _ => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "unavailable"})),
        )
            .into_response(),
    }
}
