//! `RedisConnection`: one self-healing connection to Redis and the key prefix to use.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use posthorn_core::ports::PortError;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::error::{self, RedisAdapterError};
use crate::{RedisCache, RedisRateLimiter};

/// How long one attempt to open a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a command may wait for its reply before it fails (and the connection is
/// replaced): rate limits and cache reads sit on request paths.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest a call may take in all, waiting for a reconnection included: the
/// connection manager makes calls wait while it reconnects, and a request must be refused
/// (503) rather than held while Redis is down.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// How often a (re)connection is retried before the pending calls fail. Kept low so that
/// calls fail fast (within seconds) while Redis is down; the next call after a failed
/// reconnection starts a new one.
const CONNECT_RETRIES: usize = 2;
/// Backoff between connection attempts: starts at 1 s (the `redis` crate's fixed base),
/// grows by this factor, and is capped at [`MAX_RETRY_DELAY_MS`].
const RETRY_FACTOR: u64 = 2;
/// The longest pause between two connection attempts, in milliseconds.
const MAX_RETRY_DELAY_MS: u64 = 2_000;

/// A connection to one Redis server, shared by the adapters made from it, and the prefix
/// of every key they use.
///
/// Cheap to clone: clones share one multiplexed connection, which a
/// `redis::aio::ConnectionManager` re-opens in the background when it breaks.
#[derive(Clone)]
pub struct RedisConnection {
    manager: ConnectionManager,
    key_prefix: Arc<str>,
}

impl std::fmt::Debug for RedisConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisConnection")
            .field("key_prefix", &self.key_prefix)
            .finish_non_exhaustive()
    }
}

impl RedisConnection {
    /// Connects to `url` (`redis://[user:password@]host[:port][/db]` or
    /// `redis+unix:///path`; TLS `rediss://` is not built in) and prefixes every key with
    /// `key_prefix` (usually [`DEFAULT_KEY_PREFIX`](crate::DEFAULT_KEY_PREFIX); give each
    /// deployment that shares a Redis database its own).
    ///
    /// Fails when the URL is invalid or the server cannot be reached (after a few quick
    /// retries), so a misconfiguration shows at start-up.
    pub async fn connect(url: &str, key_prefix: &str) -> Result<Self, RedisAdapterError> {
        let client = redis::Client::open(url).map_err(RedisAdapterError::InvalidUrl)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(CONNECT_TIMEOUT)
            .set_response_timeout(RESPONSE_TIMEOUT)
            .set_number_of_retries(CONNECT_RETRIES)
            .set_factor(RETRY_FACTOR)
            .set_max_delay(MAX_RETRY_DELAY_MS);
        let manager = ConnectionManager::new_with_config(client, config)
            .await
            .map_err(RedisAdapterError::Unavailable)?;
        Ok(Self {
            manager,
            key_prefix: Arc::from(key_prefix),
        })
    }

    /// The prefix of every key the adapters made from this connection use.
    pub fn key_prefix(&self) -> &str {
        &self.key_prefix
    }

    /// Checks that Redis answers (`PING`), for readiness probes.
    pub async fn ping(&self) -> Result<(), RedisAdapterError> {
        let mut con = self.manager();
        redis::cmd("PING").query_async::<()>(&mut con).await?;
        Ok(())
    }

    /// A rate limiter on this connection.
    pub fn rate_limiter(&self) -> RedisRateLimiter {
        RedisRateLimiter::new(self.clone())
    }

    /// A cache on this connection.
    pub fn cache(&self) -> RedisCache {
        RedisCache::new(self.clone())
    }

    /// A handle to send commands through (clones share the connection).
    pub(crate) fn manager(&self) -> ConnectionManager {
        self.manager.clone()
    }
}

/// Runs one Redis call for at most [`CALL_TIMEOUT`]; a call that takes longer fails as
/// unavailable (the connection keeps reconnecting in the background).
pub(crate) async fn bounded<T>(
    call: impl Future<Output = redis::RedisResult<T>>,
) -> Result<T, PortError> {
    match tokio::time::timeout(CALL_TIMEOUT, call).await {
        Ok(result) => result.map_err(error::port),
        Err(_) => Err(PortError::Unavailable(format!(
            "Redis unavailable: no answer within {CALL_TIMEOUT:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_invalid_url_is_reported_as_such() {
        let result = RedisConnection::connect("http://example.invalid/", "p:").await;
        assert!(
            matches!(result, Err(RedisAdapterError::InvalidUrl(_))),
            "{result:?}"
        );
    }

    /// Nothing listens on port 1 of the loopback: connecting fails (after the retries).
    #[tokio::test]
    async fn an_unreachable_server_fails_to_connect() {
        let result = RedisConnection::connect("redis://127.0.0.1:1/", "p:").await;
        assert!(
            matches!(result, Err(RedisAdapterError::Unavailable(_))),
            "{result:?}"
        );
    }
}
