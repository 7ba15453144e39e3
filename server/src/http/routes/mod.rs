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

use serde_json::Value;

/// Serializes a record, mapping the (impossible in practice) failure to an internal error.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, super::error::ApiError> {
    serde_json::to_value(value)
        .map_err(|e| super::error::ApiError::Domain(posthorn_core::Error::Internal(e.to_string())))
}
