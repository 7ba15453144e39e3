//! `RedisCache`: values stored with their expiry instant, judged by the caller's clock.
//!
//! A stored value is `{expires_ms}:{bytes}`: the instant it expires, in milliseconds since
//! the Unix epoch as ASCII decimal, a colon, then the caller's bytes untouched. The header
//! (`-?[0-9]+`) never holds a colon, so the first one ends it, in Rust and in Lua alike.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use posthorn_core::ports::{Cache, PortError};
use redis::Script;

use crate::connection::{bounded, RedisConnection};
use crate::error::RedisAdapterError;

/// Writes the encoded value `ARGV[2]` under `KEYS[1]`, with a Redis expiry of `ARGV[3]` ms,
/// unless the value stored there expires after `ARGV[1]` (now, ms since the epoch).
/// Returns 1 when it wrote, 0 when a live value was there, and -1 (writing nothing) when
/// the stored value is not in this adapter's format.
const PUT_IF_ABSENT_SCRIPT: &str = r"
local current = redis.call('GET', KEYS[1])
if current then
  local expires = tonumber(string.match(current, '^(%-?%d+):'))
  if not expires then
    return -1
  end
  if expires > tonumber(ARGV[1]) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
";

/// A cache shared by every process that uses the same Redis and prefix.
///
/// Expiry is judged by the `now` each call passes: values store the instant they expire.
/// Redis also drops each key a little after its ttl ([`EXPIRY_SLACK`](crate::EXPIRY_SLACK)),
/// which reclaims the memory of values that are never read again.
#[derive(Clone)]
pub struct RedisCache {
    connection: RedisConnection,
    put_if_absent: Script,
}

impl std::fmt::Debug for RedisCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCache")
            .field("connection", &self.connection)
            .finish_non_exhaustive()
    }
}

impl RedisCache {
    /// A cache on `connection` (see also [`RedisConnection::cache`]).
    pub fn new(connection: RedisConnection) -> Self {
        Self {
            connection,
            put_if_absent: Script::new(PUT_IF_ABSENT_SCRIPT),
        }
    }

    fn value_key(&self, key: &str) -> String {
        value_key(self.connection.key_prefix(), key)
    }
}

/// The Redis key of the cache entry `key`.
fn value_key(prefix: &str, key: &str) -> String {
    format!("{prefix}cache:{key}")
}

/// The instant, in ms since the epoch, that a value written at `now` for `ttl` expires
/// (rounded down, so a value never outlives its ttl; saturating far in the future).
fn expires_ms(now: DateTime<Utc>, ttl: Duration) -> i64 {
    let ttl = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
    now.timestamp_millis().saturating_add(ttl)
}

/// `value` behind its expiry header.
fn encode(expires_ms: i64, value: &[u8]) -> Vec<u8> {
    let header = expires_ms.to_string();
    let mut stored = Vec::with_capacity(header.len() + 1 + value.len());
    stored.extend_from_slice(header.as_bytes());
    stored.push(b':');
    stored.extend_from_slice(value);
    stored
}

/// The expiry and the value of a stored entry, or `None` when it has no valid header
/// (the same test as the Lua pattern `^(%-?%d+):`).
fn decode(stored: &[u8]) -> Option<(i64, &[u8])> {
    let colon = stored.iter().position(|&b| b == b':')?;
    let header = &stored[..colon];
    let digits = header.strip_prefix(b"-").unwrap_or(header);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let expires = std::str::from_utf8(header).ok()?.parse::<i64>().ok()?;
    Some((expires, &stored[colon + 1..]))
}

#[async_trait]
impl Cache for RedisCache {
    async fn get(&self, key: &str, now: DateTime<Utc>) -> Result<Option<Vec<u8>>, PortError> {
        let full_key = self.value_key(key);
        let mut con = self.connection.manager();
        let stored: Option<Vec<u8>> =
            bounded(redis::cmd("GET").arg(&full_key).query_async(&mut con)).await?;
        let Some(stored) = stored else {
            return Ok(None);
        };
        let (expires, value) =
            decode(&stored).ok_or(RedisAdapterError::ForeignValue { key: full_key })?;
        Ok((expires > now.timestamp_millis()).then(|| value.to_vec()))
    }

    async fn put(
        &self,
        key: &str,
        value: Vec<u8>,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let mut con = self.connection.manager();
        bounded(
            redis::cmd("SET")
                .arg(self.value_key(key))
                .arg(encode(expires_ms(now, ttl), &value))
                .arg("PX")
                .arg(crate::redis_expiry_ms(ttl))
                .query_async::<()>(&mut con),
        )
        .await
    }

    async fn put_if_absent(
        &self,
        key: &str,
        value: Vec<u8>,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        let full_key = self.value_key(key);
        let mut con = self.connection.manager();
        let wrote: i64 = bounded(
            self.put_if_absent
                .key(&full_key)
                .arg(now.timestamp_millis())
                .arg(encode(expires_ms(now, ttl), &value))
                .arg(crate::redis_expiry_ms(ttl))
                .invoke_async(&mut con),
        )
        .await?;
        match wrote {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(RedisAdapterError::ForeignValue { key: full_key }.into()),
        }
    }

    async fn delete(&self, key: &str) -> Result<(), PortError> {
        let mut con = self.connection.manager();
        bounded(
            redis::cmd("DEL")
                .arg(self.value_key(key))
                .query_async::<()>(&mut con),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeDelta;

    #[test]
    fn encoding_round_trips_any_bytes() {
        for value in [&b""[..], b"v", b"a:b:c", &[0, 255, b':', 10]] {
            for expires in [0, 1_763_780_000_123, -5, i64::MAX, i64::MIN] {
                let stored = encode(expires, value);
                assert_eq!(
                    decode(&stored),
                    Some((expires, value)),
                    "{expires} {value:?}"
                );
            }
        }
    }

    #[test]
    fn header_is_decimal_milliseconds_and_a_colon() {
        assert_eq!(encode(1_763_780_000_123, b"x:y"), b"1763780000123:x:y");
    }

    #[test]
    fn values_without_a_header_do_not_decode() {
        for stored in [
            &b""[..],
            b"plain",
            b"12x:v",
            b":v",
            b"1.5:v",
            b"+5:v",
            b"-:v",
            b" 5:v",
            &[0xff, b':'],
        ] {
            assert_eq!(decode(stored), None, "{stored:?}");
        }
    }

    #[test]
    fn expiry_is_now_plus_ttl_in_milliseconds() {
        let now = DateTime::<Utc>::from_timestamp_millis(1_000_000).unwrap_or_default()
            + TimeDelta::microseconds(700);
        assert_eq!(expires_ms(now, Duration::from_secs(60)), 1_060_000);
        assert_eq!(expires_ms(now, Duration::from_micros(1_999)), 1_000_001);
        assert_eq!(expires_ms(now, Duration::MAX), i64::MAX);
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        /// Any bytes behind any expiry come back unchanged.
        #[test]
        fn any_value_round_trips(expires: i64, value: Vec<u8>) {
            let stored = encode(expires, &value);
            proptest::prop_assert_eq!(decode(&stored), Some((expires, value.as_slice())));
        }

        /// The decoder never panics, and whatever it accepts re-encodes to the same bytes
        /// unless the header had a redundant form (leading zeros, `-0`).
        #[test]
        fn decoding_arbitrary_bytes_is_total(
            stored in proptest::prop_oneof![
                proptest::collection::vec(proptest::num::u8::ANY, 0..40),
                "[-+ ]?[0-9]{0,22}[:x]?.{0,10}".prop_map(String::into_bytes),
            ]
        ) {
            if let Some((expires, value)) = decode(&stored) {
                let header_len = stored.len() - value.len() - 1;
                let canonical = expires.to_string().len() == header_len;
                if canonical {
                    proptest::prop_assert_eq!(encode(expires, value), stored);
                }
            }
        }
    }

    #[test]
    fn value_keys_carry_the_prefix() {
        assert_eq!(
            value_key("posthorn:", "idem:ws:abc"),
            "posthorn:cache:idem:ws:abc"
        );
    }
}
