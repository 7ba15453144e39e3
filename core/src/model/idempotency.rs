//! The answer kept for an `Idempotency-Key`, committed with the changes of its request.

use chrono::{DateTime, Utc};

/// The answer a request got, as the API sent it: the core keeps it without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    /// The status code.
    pub status: u16,
    /// The `Content-Type` of the body, when it had one.
    pub content_type: Option<String>,
    /// The body, byte for byte.
    pub body: Vec<u8>,
}

/// One `Idempotency-Key` and the answer its first request got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRecord {
    /// Whose key it is: a workspace id, or `admin` for the operator API.
    pub scope: String,
    /// The key as the client sent it.
    pub key: String,
    /// A digest of the request (method, path, body): the same key with another request is
    /// refused, not replayed.
    pub fingerprint: String,
    /// The answer to replay.
    pub answer: StoredAnswer,
    /// When the first request was answered.
    pub created_at: DateTime<Utc>,
    /// When the record stops counting (and may be purged).
    pub expires_at: DateTime<Utc>,
}

/// A request's key, before its answer is known: what a use case needs to commit the
/// record together with its own changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyTicket {
    /// See [`IdempotencyRecord::scope`].
    pub scope: String,
    /// See [`IdempotencyRecord::key`].
    pub key: String,
    /// See [`IdempotencyRecord::fingerprint`].
    pub fingerprint: String,
    /// See [`IdempotencyRecord::expires_at`].
    pub expires_at: DateTime<Utc>,
}

impl IdempotencyTicket {
    /// The record keeping `answer` for this key, answered at `now`.
    pub fn record(&self, answer: StoredAnswer, now: DateTime<Utc>) -> IdempotencyRecord {
        IdempotencyRecord {
            scope: self.scope.clone(),
            key: self.key.clone(),
            fingerprint: self.fingerprint.clone(),
            answer,
            created_at: now,
            expires_at: self.expires_at,
        }
    }
}
