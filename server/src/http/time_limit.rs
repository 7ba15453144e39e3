//! A time limit on handlers: a request never hangs, whatever a backend does.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::AppState;

/// How long a handler may run (reading the body included) before the request is answered
/// 503, unless the state says otherwise. Generous: store and Redis calls have their own,
/// shorter time-outs.
pub const REQUEST_TIME_LIMIT: Duration = Duration::from_secs(60);

/// Runs the handler within the state's `request_time_limit` ([`REQUEST_TIME_LIMIT`] by
/// default).
///
/// The layer of the routes without a key (links, providers); the workspace and operator
/// routes get the same limit inside their idempotency handling ([`super::gate`]).
pub async fn within_limit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let _counted = state.requests.enter();
    limit(state.request_time_limit, next.run(req)).await
}

/// `answer`, or the 503 of a stopped request when it takes longer than `limit`.
pub async fn limit(
    limit: Duration,
    answer: impl std::future::Future<Output = Response>,
) -> Response {
    match tokio::time::timeout(limit, answer).await {
        Ok(response) => response,
        Err(_) => ApiError::TimedOut {
            limit_secs: limit.as_secs(),
        }
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[tokio::test(start_paused = true)]
    async fn a_handler_over_the_limit_is_answered_503() {
        let slow = async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            StatusCode::OK.into_response()
        };
        let response = limit(Duration::from_secs(60), slow).await;
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok()),
            Some("2")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_handler_within_the_limit_answers_as_it_would() {
        let quick = async { StatusCode::CREATED.into_response() };
        let response = limit(Duration::from_secs(60), quick).await;
        assert_eq!(response.status(), StatusCode::CREATED);
    }
}
