//! A unique id per request: in a task-local for error bodies and logs, and in `X-Request-Id`.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

tokio::task_local! {
    static REQUEST_ID: String;
}

/// The id of the request being handled (empty outside a request).
pub fn current_request_id() -> String {
    REQUEST_ID.try_with(Clone::clone).unwrap_or_default()
}

/// Assigns the id, logs the request, and echoes the id in `X-Request-Id`.
pub async fn assign(req: Request, next: Next) -> Response {
    let id = uuid::Uuid::now_v7().to_string();
    let span = tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.uri().path());
    let started = std::time::Instant::now();
    let mut response = REQUEST_ID
        .scope(id.clone(), next.run(req).instrument(span.clone()))
        .await;
    span.in_scope(|| {
        tracing::debug!(
            status = response.status().as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "handled"
        );
    });
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert("x-request-id", v);
    }
    response
}
