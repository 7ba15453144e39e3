//! The `WebhookSink` port: performs one outbound HTTP request for the workflow WEBHOOK step.
//!
//! The port only carries a request out and reports what came back. Deciding what an attempt
//! means ([`classify_attempt`]), when to try again ([`RetrySchedule`]) and how to sign the
//! request ([`SigningKeys`], [`sign`]) are pure helpers here, shared by every adapter and by
//! the workflow engine.

mod refusing;
mod retry;
mod signing;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;

pub use refusing::RefusingWebhookSink;
pub use retry::{
    classify_attempt, classify_status, parse_retry_after, AttemptVerdict, RetrySchedule,
    ScheduleError,
};
pub use signing::{
    sign, signature_headers, SecretError, SigningKeys, WebhookSecret, SECRET_PREFIX,
    WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER,
};

/// How long a webhook request may take when the request does not say otherwise.
pub const DEFAULT_WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// How many bytes of a response body are kept in [`WebhookResponse::body_excerpt`].
pub const BODY_EXCERPT_LIMIT: usize = 4096;

/// The HTTP methods a WEBHOOK step may use (`POST` unless configured).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WebhookMethod {
    /// `GET`
    Get,
    /// `POST`, the default.
    #[default]
    Post,
    /// `PUT`
    Put,
    /// `PATCH`
    Patch,
    /// `DELETE`
    Delete,
}

impl WebhookMethod {
    /// The method's name as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }
}

impl fmt::Display for WebhookMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text is not one of the methods a webhook may use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported webhook method {0:?}: use GET, POST, PUT, PATCH or DELETE")]
pub struct UnknownMethod(pub String);

impl FromStr for WebhookMethod {
    type Err = UnknownMethod;

    /// Parses a method name, ignoring ASCII case (`post` and `POST` are the same).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_uppercase().as_str() {
            "GET" => Ok(Self::Get),
            "POST" => Ok(Self::Post),
            "PUT" => Ok(Self::Put),
            "PATCH" => Ok(Self::Patch),
            "DELETE" => Ok(Self::Delete),
            _ => Err(UnknownMethod(s.to_string())),
        }
    }
}

/// One HTTP request to make, fully rendered (variables substituted, signature headers added).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRequest {
    /// The method.
    pub method: WebhookMethod,
    /// The absolute target URL; only `http` and `https` are ever contacted.
    pub url: String,
    /// Headers in the order given; names and values are checked by the adapter.
    pub headers: Vec<(String, String)>,
    /// The body bytes, sent as they are (empty for no body).
    pub body: Vec<u8>,
    /// Bound on the whole exchange (resolution, connection, response head and excerpt);
    /// `None` means the adapter's default ([`DEFAULT_WEBHOOK_TIMEOUT`] unless configured).
    pub timeout: Option<Duration>,
}

impl WebhookRequest {
    /// A `POST` of `body` to `url` with no extra header and the default timeout.
    pub fn post(url: impl Into<String>, body: impl Into<Vec<u8>>) -> Self {
        Self {
            method: WebhookMethod::Post,
            url: url.into(),
            headers: Vec::new(),
            body: body.into(),
            timeout: None,
        }
    }

    /// Adds a header (builder style).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// What came back from a request that received a response, whatever its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookResponse {
    /// The HTTP status code.
    pub status: u16,
    /// The start of the body, at most [`BODY_EXCERPT_LIMIT`] bytes, as text (invalid UTF-8
    /// replaced; a character cut at the limit dropped).
    pub body_excerpt: String,
    /// True when the body was longer than the excerpt.
    pub body_truncated: bool,
    /// The delay the response's `Retry-After` asked for, when it had a valid one.
    pub retry_after: Option<Duration>,
    /// The `Location` header of a redirect (3xx), which is reported and never followed.
    pub location: Option<String>,
    /// Time from the start of the request to the end of reading the excerpt.
    pub latency: Duration,
}

/// Why a request produced no response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    /// Refused before any connection was opened: a scheme other than http(s), a host outside
    /// the allow-list, or an address in a forbidden range (loopback, private, link-local, ...).
    /// Never retried: the same request would be refused again.
    #[error("webhook target refused: {0}")]
    Refused(String),
    /// The request cannot be made as given (malformed URL, header name or value). Never
    /// retried; no connection was opened.
    #[error("invalid webhook request: {0}")]
    Invalid(String),
    /// No complete response head (and excerpt) within the timeout. Retryable.
    #[error("webhook timed out after {0:?}")]
    Timeout(Duration),
    /// The host could not be resolved or reached, or the TLS handshake failed. Retryable.
    #[error("cannot reach the webhook target: {0}")]
    Connect(String),
    /// The connection failed after it was established (reset, malformed response). Retryable.
    #[error("webhook connection failed: {0}")]
    Network(String),
}

impl WebhookError {
    /// Whether another attempt of the same request may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Refused(_) | Self::Invalid(_) => false,
            Self::Timeout(_) | Self::Connect(_) | Self::Network(_) => true,
        }
    }
}

/// Performs outbound webhook requests.
///
/// Contract: one call makes at most one HTTP request and never retries by itself; retries are
/// the caller's decision ([`classify_attempt`], [`RetrySchedule`]). Redirects are never
/// followed: a 3xx comes back as a response like any other status. Any status is `Ok`;
/// `Err` means no response status was received. `Err(Refused)` and `Err(Invalid)` guarantee
/// that no connection was opened. Implementations check the target's addresses before
/// connecting and connect only to the addresses they checked.
#[async_trait]
pub trait WebhookSink: Send + Sync {
    /// Sends `request` and reports the response or why there was none.
    async fn deliver(&self, request: &WebhookRequest) -> Result<WebhookResponse, WebhookError>;
}

/// Turns the first bytes of a body into an excerpt: at most `limit` bytes of text, a
/// character cut by the limit dropped, other invalid UTF-8 replaced. The flag says whether
/// anything of `bytes` was left out.
pub fn body_excerpt(bytes: &[u8], limit: usize) -> (String, bool) {
    let truncated = bytes.len() > limit;
    let mut kept = &bytes[..bytes.len().min(limit)];
    if truncated {
        // A multi-byte character split by the limit is incomplete at the very end: drop it
        // rather than show a replacement character that was never in the body.
        if let Err(err) = std::str::from_utf8(kept) {
            if err.error_len().is_none() {
                kept = &kept[..err.valid_up_to()];
            }
        }
    }
    (String::from_utf8_lossy(kept).into_owned(), truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_parse_ignoring_case_and_print_upper_case() {
        for m in ["get", "POST", "Put", "patch", "DELETE"] {
            let parsed: WebhookMethod = m.parse().expect("known method");
            assert_eq!(parsed.as_str(), m.to_ascii_uppercase());
        }
        assert!("CONNECT".parse::<WebhookMethod>().is_err());
        assert!("".parse::<WebhookMethod>().is_err());
        assert_eq!(WebhookMethod::default(), WebhookMethod::Post);
    }

    #[test]
    fn only_guard_and_invalid_errors_are_final() {
        assert!(!WebhookError::Refused("x".into()).is_retryable());
        assert!(!WebhookError::Invalid("x".into()).is_retryable());
        assert!(WebhookError::Timeout(Duration::from_secs(1)).is_retryable());
        assert!(WebhookError::Connect("x".into()).is_retryable());
        assert!(WebhookError::Network("x".into()).is_retryable());
    }

    #[test]
    fn the_excerpt_is_bounded_and_never_ends_in_half_a_character() {
        let (text, truncated) = body_excerpt(b"hello", 4096);
        assert_eq!((text.as_str(), truncated), ("hello", false));

        let long = vec![b'a'; 5000];
        let (text, truncated) = body_excerpt(&long, 4096);
        assert_eq!(text.len(), 4096);
        assert!(truncated);

        // "é" is two bytes; a limit of 2 cuts the second one in half.
        let (text, truncated) = body_excerpt("aéb".as_bytes(), 2);
        assert_eq!((text.as_str(), truncated), ("a", true));

        // Invalid bytes inside the excerpt are replaced, not dropped.
        let (text, _) = body_excerpt(&[b'a', 0xff, b'b'], 10);
        assert_eq!(text, "a\u{fffd}b");
    }
}
