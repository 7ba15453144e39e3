//! `GET /openapi.json`: the API description.

use axum::response::{IntoResponse, Response};

/// Serves the OpenAPI document.
pub async fn serve() -> Response {
    axum::Json(serde_json::json!({"openapi": "3.1.0", "info": {"title": "Posthorn", "version": env!("CARGO_PKG_VERSION")}, "paths": {}})).into_response()
}
