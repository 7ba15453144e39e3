//! Connections to the test Redis, each under its own random key prefix.

use std::sync::Arc;

use posthorn_core::ports::{Cache, RateLimiter};
use posthorn_redis::RedisConnection;

/// The variable naming the test server's URL.
pub const URL_VAR: &str = "POSTHORN_TEST_REDIS_URL";

/// The URL of the test server (see [`posthorn_conformance::test_service_url`]).
pub fn url() -> String {
    posthorn_conformance::test_service_url(URL_VAR)
}

/// A key prefix no other test uses.
pub fn prefix() -> String {
    format!("posthorn-test:{}:", uuid::Uuid::new_v4().simple())
}

/// A connection under a fresh random prefix.
pub async fn connection() -> RedisConnection {
    connect(&url(), &prefix()).await
}

/// A connection to `url` under `prefix`.
pub async fn connect(url: &str, prefix: &str) -> RedisConnection {
    RedisConnection::connect(url, prefix)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the test Redis: {e}"))
}

/// A plain connection for looking at (and tampering with) keys behind the adapters' backs.
pub async fn raw() -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(url()).unwrap_or_else(|e| panic!("bad {URL_VAR}: {e}"));
    client
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the test Redis: {e}"))
}

/// Runs one command on `raw`, panicking on failure.
pub async fn raw_cmd<T: redis::FromRedisValue>(
    raw: &mut redis::aio::MultiplexedConnection,
    cmd: &mut redis::Cmd,
) -> T {
    cmd.query_async(raw)
        .await
        .unwrap_or_else(|e| panic!("raw Redis command failed: {e}"))
}

/// A fresh rate limiter for the conformance suite.
pub async fn make_rate_limiter() -> Arc<dyn RateLimiter> {
    Arc::new(connection().await.rate_limiter())
}

/// A fresh cache for the conformance suite.
pub async fn make_cache() -> Arc<dyn Cache> {
    Arc::new(connection().await.cache())
}
