//! Success answers: a value serialized as the JSON body.

use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::error::ApiError;
use posthorn_core::Error;

/// A `200` answer whose body is the value as JSON (the bytes `axum::Json` writes).
///
/// Written into a `Vec` with room for a typical answer: `axum::Json` writes through a
/// `BytesMut` writer, which pays a bookkeeping call for every token of the JSON, a few
/// dozen per answer.
#[derive(Debug)]
pub struct JsonAnswer<T>(pub T);

/// Room for a typical answer (an envelope with a few ids and timestamps).
const TYPICAL_ANSWER_BYTES: usize = 256;

/// The JSON bytes of `value`, as every answer carries them (a replayed idempotent answer
/// too, so that it is the first answer byte for byte).
pub fn to_json(value: &impl Serialize) -> serde_json::Result<Vec<u8>> {
    let mut body = Vec::with_capacity(TYPICAL_ANSWER_BYTES);
    serde_json::to_writer(&mut body, value)?;
    Ok(body)
}

impl<T: Serialize> IntoResponse for JsonAnswer<T> {
    fn into_response(self) -> Response {
        match to_json(&self.0) {
            Ok(body) => (
                [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                body,
            )
                .into_response(),
            // Answer types serialize infallibly (string keys only); should one not, the
            // client gets the envelope of an internal error, not half a body.
            Err(e) => ApiError::from(Error::Internal(format!("answer not serialized: {e}")))
                .into_response(),
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::body::to_bytes;
    use axum::http::StatusCode;
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn writes_the_bytes_axum_json_writes() {
        let value = json!({"success": true, "data": {"id": "a\"b", "n": [1, 2.5, null]}});
        let ours = JsonAnswer(&value).into_response();
        let axums = axum::Json(&value).into_response();
        assert_eq!(ours.status(), StatusCode::OK);
        assert_eq!(
            ours.headers().get(CONTENT_TYPE),
            axums.headers().get(CONTENT_TYPE)
        );
        let ours = to_bytes(ours.into_body(), usize::MAX).await.ok();
        let axums = to_bytes(axums.into_body(), usize::MAX).await.ok();
        assert!(ours.is_some());
        assert_eq!(ours, axums);
    }
}
