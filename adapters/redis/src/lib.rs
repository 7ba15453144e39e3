//! Posthorn's `RateLimiter` and `Cache` ports on Redis.
//!
//! One [`RedisConnection`] (a self-healing, multiplexed connection plus a key prefix) feeds
//! both adapters, so that every Posthorn process pointed at the same Redis shares its rate
//! budgets and cached records:
//!
//! - [`RedisRateLimiter`]: fixed-window counters, one key per (key, window length, window
//!   index); a take is one Lua script, so it is atomic and a refused take consumes nothing.
//! - [`RedisCache`]: values stored with the instant they expire, judged by the caller's
//!   `now`; `put_if_absent` is one Lua script, so exactly one concurrent caller wins.
//!
//! ```no_run
//! # async fn demo() -> Result<(), posthorn_redis::RedisAdapterError> {
//! use posthorn_redis::{RedisConnection, DEFAULT_KEY_PREFIX};
//!
//! let connection = RedisConnection::connect("redis://127.0.0.1:6379/", DEFAULT_KEY_PREFIX).await?;
//! let limiter = connection.rate_limiter();
//! let cache = connection.cache();
//! # let _ = (limiter, cache);
//! # Ok(())
//! # }
//! ```
//!
//! # Keys and expiry
//!
//! Every key starts with the connection's prefix ([`DEFAULT_KEY_PREFIX`] unless chosen
//! otherwise), so several deployments can share one Redis database:
//!
//! - `{prefix}rate:{window_ms}:{window_index}:{key}` holds a window's used units;
//! - `{prefix}cache:{key}` holds a cached value behind a small header (its expiry).
//!
//! Expiry follows the `now` that each call passes (as the ports require). Every key also
//! gets a Redis expiry a little longer than its logical life (the window or the ttl, plus
//! [`EXPIRY_SLACK`]) so that stale keys vanish by themselves. That expiry runs on Redis's
//! real clock: a caller whose clock runs slower than real time (a frozen test clock, say)
//! sees values and counters vanish once their real time is up, though its `now` says they
//! still live. With the system clock the two agree.
//!
//! # Reconnection
//!
//! The connection is a `redis::aio::ConnectionManager`: when Redis goes away, the failing
//! calls return `PortError::Unavailable` and the manager reconnects in the background with
//! a short, capped backoff; later calls use the new connection.

#![warn(missing_docs)]

mod cache;
mod connection;
mod error;
mod rate_limiter;

use std::time::Duration;

pub use cache::RedisCache;
pub use connection::RedisConnection;
pub use error::RedisAdapterError;
pub use rate_limiter::RedisRateLimiter;

/// The key prefix to use when a deployment has no reason to choose another.
pub const DEFAULT_KEY_PREFIX: &str = "posthorn:";

/// How much longer than its logical life a key lives in Redis.
pub const EXPIRY_SLACK: Duration = Duration::from_secs(1);

/// The longest Redis expiry this crate sets (about 100 years): far beyond any real ttl,
/// and far from the overflow of Redis's millisecond arithmetic.
const MAX_REDIS_EXPIRY_MS: u64 = 100 * 365 * 24 * 60 * 60 * 1000;

/// The Redis expiry (`PX`, milliseconds) of a key whose logical life is `life`: that plus
/// [`EXPIRY_SLACK`], at least 1 ms, at most [`MAX_REDIS_EXPIRY_MS`].
fn redis_expiry_ms(life: Duration) -> u64 {
    let ms = life
        .saturating_add(EXPIRY_SLACK)
        .as_millis()
        .min(u128::from(MAX_REDIS_EXPIRY_MS));
    u64::try_from(ms).unwrap_or(MAX_REDIS_EXPIRY_MS).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_expiry_adds_slack_and_is_bounded() {
        assert_eq!(redis_expiry_ms(Duration::ZERO), 1000);
        assert_eq!(redis_expiry_ms(Duration::from_secs(60)), 61_000);
        assert_eq!(redis_expiry_ms(Duration::from_micros(1500)), 1001);
        assert_eq!(redis_expiry_ms(Duration::MAX), MAX_REDIS_EXPIRY_MS);
    }
}
