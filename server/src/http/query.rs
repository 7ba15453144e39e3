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
        let Query(map) = Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map_err(|e| {
                ApiError::Domain(posthorn_core::Error::BadRequest(format!(
                    "Invalid query string: {e}"
                )))
            })?;
        // As in a JSON body: no durable store keeps a NUL (PostgreSQL refuses the text
        // outright, which would read as an outage).
        let mut with_nul: Vec<&String> = map
            .iter()
            .filter(|(name, value)| name.contains('\0') || value.contains('\0'))
            .map(|(name, _)| name)
            .collect();
        if !with_nul.is_empty() {
            with_nul.sort();
            return Err(ApiError::Domain(posthorn_core::Error::Validation(
                with_nul
                    .into_iter()
                    .map(|name| {
                        posthorn_core::error::FieldError::new(
                            name.replace('\0', "\\u0000"),
                            "invalid_characters",
                            "must not contain NUL (%00) characters",
                        )
                    })
                    .collect(),
            )));
        }
        Ok(QueryMap(map))
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
