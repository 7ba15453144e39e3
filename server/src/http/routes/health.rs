//! `GET /health`: readiness, with the queue's state.

use crate::http::answer::JsonAnswer;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::http::health_cache::Health as Probe;
use crate::http::AppState;

/// Readiness and the job queue's counts.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// Always `ok`.
    #[schema(example = "ok")]
    pub status: &'static str,
    /// Jobs by state.
    pub jobs: JobCounts,
}

/// Jobs by state.
#[derive(Debug, Serialize, ToSchema)]
pub struct JobCounts {
    /// Waiting to run.
    pub queued: u64,
    /// Claimed by a worker.
    pub running: u64,
    /// Dead-lettered after their last attempt.
    pub dead: u64,
}

/// What does not answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct Unavailable {
    /// Always `unavailable`.
    #[schema(example = "unavailable")]
    pub status: &'static str,
    /// `store`, `queue` and/or `limits`.
    pub failing: Vec<&'static str>,
}

/// Readiness
///
/// 200 when the store, the job queue and the limits backend (Redis, when configured)
/// answer, 503 naming the failing parts otherwise, from a probe at most a second old. Needs
/// no key.
#[utoipa::path(
    get, path = "/health", operation_id = "health", tag = "System",
    responses(
        (status = 200, description = "Ready", body = Health),
        (status = 503, description = "The store, the queue or the limits backend does not answer", body = Unavailable),
    ),
)]
pub async fn health(State(state): State<AppState>) -> Response {
    // From a probe at most a second old (see `health_cache`).
    match state.health.current(&state.engine).await {
        Probe::Ok(stats) => JsonAnswer(Health {
            status: "ok",
            jobs: JobCounts {
                queued: stats.queued,
                running: stats.running,
                dead: stats.dead,
            },
        })
        .into_response(),
        Probe::Unavailable(failing) => (
            StatusCode::SERVICE_UNAVAILABLE,
            JsonAnswer(Unavailable {
                status: "unavailable",
                failing,
            }),
        )
            .into_response(),
    }
}
