//! The JSON body extractor: enforces the size limit and content type, refuses NUL
//! characters (no durable store keeps them), and maps every failure to the spec's envelope.

use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use deserr::Deserr;
use posthorn_core::validate::first_nul;
use serde_json::Value;
use utoipa::PartialSchema;

use super::error::ApiError;
use super::wire::de::{parse, WireErrors};
use super::wire::fast::ReadFast;
use super::AppState;

/// A request body parsed as JSON; an empty body reads as `{}`.
#[derive(Debug)]
pub struct JsonBody(pub Value);

/// Reads the whole body up to `limit` bytes.
pub async fn read_limited(
    body: axum::body::Body,
    limit: usize,
) -> Result<axum::body::Bytes, ApiError> {
    use http_body_util::BodyExt;
    let too_large = |_| ApiError::PayloadTooLarge(limit);
    let mut body = http_body_util::Limited::new(body, limit);
    // A small body comes whole in its first frame: taken as it is, without the buffer
    // list a collection of frames builds.
    let first = match body.frame().await {
        None => return Ok(axum::body::Bytes::new()),
        Some(frame) => frame.map_err(too_large)?,
    };
    let first = first.into_data().unwrap_or_default();
    if axum::body::HttpBody::is_end_stream(&body) {
        return Ok(first);
    }
    let rest = body.collect().await.map_err(too_large)?.to_bytes();
    if first.is_empty() {
        return Ok(rest);
    }
    let mut whole = Vec::with_capacity(first.len() + rest.len());
    whole.extend_from_slice(&first);
    whole.extend_from_slice(&rest);
    Ok(whole.into())
}

/// The bytes of a JSON body (empty for no body), its size limit and content type checked.
async fn json_bytes(req: Request, state: &AppState) -> Result<axum::body::Bytes, ApiError> {
    let is_json = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_json_type);
    let bytes = read_limited(req.into_body(), state.max_body_bytes).await?;
    // Only a body of no bytes is "no body" (as Express's JSON parser has it); whitespace
    // alone is not JSON text and is refused below like any other syntax error.
    if bytes.is_empty() {
        return Ok(bytes);
    }
    if !is_json {
        return Err(ApiError::UnsupportedContentType);
    }
    Ok(bytes)
}

/// Whether a `Content-Type` names JSON: `application/json` or a `+json` type, in any case,
/// parameters aside.
fn is_json_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .as_bytes();
    let suffix = b"+json";
    essence.eq_ignore_ascii_case(b"application/json")
        || (essence.len() >= suffix.len()
            && essence[essence.len() - suffix.len()..].eq_ignore_ascii_case(suffix))
}

/// JSON text cannot carry a raw NUL, only the escape `\u0000`: without one in the bytes
/// there is no NUL in the value, and no need to walk it.
fn may_hold_nul(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, br"\u0000").is_some()
}

/// The JSON value of `bytes` (`{}` for no body), refused when it holds a NUL.
fn value_of(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| ApiError::InvalidJson(e.to_string()))?;
    if let Some(path) = may_hold_nul(bytes).then(|| first_nul(&value)).flatten() {
        let field = if path.is_empty() {
            "body".to_string()
        } else {
            path
        };
        return Err(ApiError::Domain(posthorn_core::Error::field(
            field,
            "invalid_characters",
            "must not contain NUL (\\u0000) characters",
        )));
    }
    Ok(value)
}

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let bytes = json_bytes(req, state).await?;
        value_of(&bytes).map(JsonBody)
    }
}

/// A JSON body read into the wire type `T` with deserr: every failing field is reported at
/// once (422 `VALIDATION_ERROR`), in the order `T` declares its fields.
#[derive(Debug)]
pub struct Wire<T>(pub T);

impl<T> FromRequest<AppState> for Wire<T>
where
    T: Deserr<WireErrors> + PartialSchema + Send,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let bytes = json_bytes(req, state).await?;
        by_deserr(&bytes).map(Wire)
    }
}

/// `bytes` (a JSON body, empty for none) read into `T` with deserr.
fn by_deserr<T: Deserr<WireErrors> + PartialSchema>(bytes: &[u8]) -> Result<T, ApiError> {
    parse::<T>(value_of(bytes)?).map_err(ApiError::Domain)
}

/// [`Wire`] for the hottest bodies: a well-formed body is read straight into `T` with serde
/// ([`ReadFast`]); any other goes through deserr as [`Wire`] reads it, so the answers are
/// the same and only the cost differs.
#[derive(Debug)]
pub struct FastWire<T>(pub T);

impl<T> FromRequest<AppState> for FastWire<T>
where
    T: ReadFast + Deserr<WireErrors> + PartialSchema + Send,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let bytes = json_bytes(req, state).await?;
        if !bytes.is_empty() && !may_hold_nul(&bytes) {
            if let Some(body) = T::read_fast(&bytes) {
                return Ok(FastWire(body));
            }
        }
        by_deserr(&bytes).map(FastWire)
    }
}

#[cfg(test)]
mod tests {
    use super::{is_json_type, read_limited};
    use crate::http::error::ApiError;
    use axum::body::{Body, Bytes};

    /// A body of `chunks`, one frame each.
    fn framed(chunks: &[&'static str]) -> Body {
        let frames: Vec<Result<Bytes, std::io::Error>> = chunks
            .iter()
            .map(|c| Ok(Bytes::from_static(c.as_bytes())))
            .collect();
        Body::from_stream(futures::stream::iter(frames))
    }

    #[tokio::test]
    async fn a_body_is_read_whole_in_one_frame_or_many() {
        let read = |body| async move { read_limited(body, 16).await.ok() };
        assert_eq!(read(Body::empty()).await, Some(Bytes::new()));
        assert_eq!(
            read(Body::from("{\"a\":1}")).await,
            Some(Bytes::from("{\"a\":1}"))
        );
        assert_eq!(
            read(framed(&["{\"a\"", ":", "1}"])).await,
            Some(Bytes::from("{\"a\":1}"))
        );
        assert_eq!(read(framed(&["", "ab"])).await, Some(Bytes::from("ab")));
        assert_eq!(read(framed(&["ab", ""])).await, Some(Bytes::from("ab")));
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused_in_one_frame_or_many() {
        for body in [
            Body::from("0123456789abcdefg"),
            framed(&["0123456789", "abcdefg"]),
        ] {
            assert!(matches!(
                read_limited(body, 16).await,
                Err(ApiError::PayloadTooLarge(16))
            ));
        }
        assert!(read_limited(Body::from("0123456789abcdef"), 16)
            .await
            .is_ok());
    }

    #[test]
    fn json_types_are_known_in_any_case_with_parameters() {
        for json in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ;x=y",
            "application/vnd.api+json",
            "APPLICATION/PROBLEM+JSON",
        ] {
            assert!(is_json_type(json), "{json}");
        }
        for other in [
            "text/plain",
            "application/jsonx",
            "json",
            "+jso",
            "",
            "application/x-www-form-urlencoded",
        ] {
            assert!(!is_json_type(other), "{other}");
        }
    }
}
