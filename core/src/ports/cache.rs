//! The `Cache` port: short-lived shared records (idempotency replies, key lookups).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use std::time::Duration;

use super::PortError;

/// A key-value cache with expiry.
///
/// Contract: values expire `ttl` after they are written (relative to `now`); an expired
/// value is never returned. `put_if_absent` is atomic: of two concurrent callers exactly one
/// gets `true`.
#[async_trait]
pub trait Cache: Send + Sync {
    /// The live value under `key`, if any.
    async fn get(&self, key: &str, now: DateTime<Utc>) -> Result<Option<Vec<u8>>, PortError>;
    /// Writes `value` under `key`, replacing any value.
    async fn put(
        &self,
        key: &str,
        value: Vec<u8>,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<(), PortError>;
    /// Writes `value` only if no live value exists; says whether it wrote.
    async fn put_if_absent(
        &self,
        key: &str,
        value: Vec<u8>,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<bool, PortError>;
    /// Removes `key`.
    async fn delete(&self, key: &str) -> Result<(), PortError>;
}
