//! `RedisRateLimiter`: fixed-window counters in Redis, taken by one Lua script.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use posthorn_core::ports::{window_bounds, PortError, Quota, RateDecision, RateLimiter};
use redis::Script;

use crate::connection::{bounded, RedisConnection};

/// Takes `ARGV[1]` units from the counter `KEYS[1]` if they fit under the limit `ARGV[2]`;
/// a new counter expires after `ARGV[3]` ms. Returns `{allowed (0|1), units used}`.
///
/// A refused take writes nothing; a take of 0 units reads only.
const TAKE_SCRIPT: &str = r"
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if not used then
  return redis.error_reply('rate counter ' .. KEYS[1] .. ' is not a number')
end
local cost = tonumber(ARGV[1])
if used + cost > tonumber(ARGV[2]) then
  return {0, used}
end
if cost > 0 then
  used = redis.call('INCRBY', KEYS[1], cost)
  if redis.call('PTTL', KEYS[1]) < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
  end
end
return {1, used}
";

/// Fixed-window rate limits shared by every process that uses the same Redis and prefix.
///
/// Windows are aligned with [`window_bounds`] on the caller's `now`, so they match every
/// other adapter's. Each (key, window length, window index) has its own counter, which
/// Redis drops a little after the window's length ([`EXPIRY_SLACK`](crate::EXPIRY_SLACK)).
#[derive(Clone)]
pub struct RedisRateLimiter {
    connection: RedisConnection,
    take: Script,
}

impl std::fmt::Debug for RedisRateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRateLimiter")
            .field("connection", &self.connection)
            .finish_non_exhaustive()
    }
}

impl RedisRateLimiter {
    /// A limiter on `connection` (see also [`RedisConnection::rate_limiter`]).
    pub fn new(connection: RedisConnection) -> Self {
        Self {
            connection,
            take: Script::new(TAKE_SCRIPT),
        }
    }
}

/// The Redis key of `key`'s counter in the window `index` of length `window`.
fn counter_key(prefix: &str, window: Duration, index: i64, key: &str) -> String {
    format!("{prefix}rate:{}:{index}:{key}", window.as_millis())
}

/// The decision for a script's answer: `used` units of `quota` are taken in the window.
fn decision(allowed: bool, used: i64, quota: Quota, reset_at: DateTime<Utc>) -> RateDecision {
    let used = u32::try_from(used.max(0)).unwrap_or(u32::MAX);
    RateDecision {
        allowed,
        limit: quota.limit,
        remaining: quota.limit.saturating_sub(used),
        reset_at,
    }
}

#[async_trait]
impl RateLimiter for RedisRateLimiter {
    async fn take(
        &self,
        key: &str,
        cost: u32,
        quota: Quota,
        now: DateTime<Utc>,
    ) -> Result<RateDecision, PortError> {
        let (index, reset_at) = window_bounds(now, quota.window);
        let counter = counter_key(self.connection.key_prefix(), quota.window, index, key);
        let mut con = self.connection.manager();
        let (allowed, used): (i64, i64) = bounded(
            self.take
                .key(&counter)
                .arg(cost)
                .arg(quota.limit)
                .arg(crate::redis_expiry_ms(quota.window))
                .invoke_async(&mut con),
        )
        .await?;
        Ok(decision(allowed == 1, used, quota, reset_at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(limit: u32) -> Quota {
        Quota {
            limit,
            window: Duration::from_secs(60),
        }
    }

    #[test]
    fn counter_keys_carry_prefix_window_and_index() {
        let key = counter_key(
            "posthorn:",
            Duration::from_secs(60),
            29_000_000,
            "ws:1:send",
        );
        assert_eq!(key, "posthorn:rate:60000:29000000:ws:1:send");
        let other_window = counter_key("posthorn:", Duration::from_secs(1), 29_000_000, "k");
        assert_eq!(other_window, "posthorn:rate:1000:29000000:k");
    }

    #[test]
    fn remaining_counts_down_and_never_below_zero() {
        let end = Utc::now();
        assert_eq!(decision(true, 3, quota(5), end).remaining, 2);
        assert_eq!(decision(false, 5, quota(5), end).remaining, 0);
        // A counter over the limit (the limit was lowered mid-window).
        assert_eq!(decision(false, 9, quota(5), end).remaining, 0);
        assert_eq!(decision(true, 0, quota(5), end).remaining, 5);
        let d = decision(true, -1, quota(5), end);
        assert_eq!((d.remaining, d.limit, d.reset_at), (5, 5, end));
    }
}
