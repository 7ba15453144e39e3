//! Query strings as a string map; a malformed query string is a 400 in the envelope.

use std::collections::HashMap;

use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;

use super::error::ApiError;

/// The query parameters of a request.
#[derive(Debug, Default)]
pub struct QueryMap(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for QueryMap {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Query(map)| QueryMap(map))
            .map_err(|e| {
                ApiError::Domain(posthorn_core::Error::BadRequest(format!(
                    "Invalid query string: {e}"
                )))
            })
    }
}

/// A query string read into the wire type `T` with deserr: every failing parameter is
/// reported at once (422 `VALIDATION_ERROR`).
#[derive(Debug)]
pub struct WireQuery<T>(pub T);

impl<S: Send + Sync, T> FromRequestParts<S> for WireQuery<T>
where
    T: deserr::Deserr<super::wire::de::WireErrors> + utoipa::IntoParams + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let QueryMap(query) = QueryMap::from_request_parts(parts, state).await?;
        super::wire::de::parse_query::<T>(&query)
            .map(WireQuery)
            .map_err(ApiError::Domain)
    }
}
