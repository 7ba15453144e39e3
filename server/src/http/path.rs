//! Path parameters, refused in the spec's error body: axum's own `Path` answers a parameter
//! it cannot read (not UTF-8 once percent-decoded) in plain text.

use axum::extract::{FromRequestParts, Path, RawPathParams};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// The path parameters of a request, read into `T`.
///
/// A parameter that is not UTF-8 is a 400 `BAD_REQUEST`; one holding a NUL character is a
/// 404, as no stored id or token holds one (PostgreSQL cannot even compare one, and would
/// answer an error instead of nothing).
#[derive(Debug)]
pub struct WirePath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for WirePath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let raw = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|e| bad_path(e.body_text()))?;
        if raw.iter().any(|(_, value)| value.contains('\0')) {
            return Err(ApiError::RouteNotFound(parts.uri.path().to_string()));
        }
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| WirePath(value))
            .map_err(|e| bad_path(e.body_text()))
    }
}

fn bad_path(detail: String) -> ApiError {
    ApiError::Domain(posthorn_core::Error::BadRequest(format!(
        "Invalid path parameter: {detail}"
    )))
}
