//! `GET /health`: readiness, with the queue's state (at most a second old).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::http::health_cache::Health;
use crate::http::AppState;

/// 200 when the store, the queue and the limits backend answer, 503 (naming the failing
/// parts) otherwise; from a probe at most a second old.
pub async fn health(State(state): State<AppState>) -> Response {
    match state.health.current(&state.engine).await {
        Health::Ok(stats) => Json(json!({
            "status": "ok",
            "jobs": {"queued": stats.queued, "running": stats.running, "dead": stats.dead},
        }))
        .into_response(),
        Health::Unavailable(failing) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "unavailable", "failing": failing})),
        )
            .into_response(),
    }
}
