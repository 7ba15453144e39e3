//! Route handlers, one module per area.

pub mod admin;
pub mod campaigns;
pub mod contacts;
pub mod events;
pub mod health;
pub mod keys;
pub mod public;
pub mod segments;
pub mod templates;
pub mod workflows;

use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// The `/v1` envelope: `{success: true, data}`.
pub fn v1(data: Value) -> Response {
    axum::Json(json!({ "success": true, "data": data })).into_response()
}

/// Serializes a record, mapping the (impossible in practice) failure to an internal error.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, super::error::ApiError> {
    serde_json::to_value(value)
        .map_err(|e| super::error::ApiError::Domain(posthorn_core::Error::Internal(e.to_string())))
}
