//! The cache's stored format, Redis expiry, foreign values and agreement with the
//! in-memory adapter.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use posthorn_core::ports::{Cache, PortError};
use posthorn_memory::MemoryCache;

use super::Rng;
use crate::support::{self, raw_cmd};

const TTL: Duration = Duration::from_secs(60);

/// Whole milliseconds, as the memory adapter's and ours agree only to the millisecond.
fn now() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(Utc::now().timestamp_millis()).unwrap_or_default()
}

#[tokio::test]
async fn values_are_stored_behind_their_expiry_with_a_redis_expiry() {
    let prefix = support::prefix();
    let cache = support::connect(&support::url(), &prefix).await.cache();
    let at = now();
    cache
        .put("idem:1", b"reply".to_vec(), TTL, at)
        .await
        .expect("put");
    let key = format!("{prefix}cache:idem:1");
    let mut raw = support::raw().await;
    let stored: Vec<u8> = raw_cmd(&mut raw, redis::cmd("GET").arg(&key)).await;
    let expected = format!("{}:reply", at.timestamp_millis() + 60_000);
    assert_eq!(String::from_utf8_lossy(&stored), expected);
    let pttl: i64 = raw_cmd(&mut raw, redis::cmd("PTTL").arg(&key)).await;
    assert!(
        (59_000..=61_000).contains(&pttl),
        "the value should expire in Redis a little after its ttl: PTTL {pttl}"
    );
}

#[tokio::test]
async fn put_if_absent_over_an_expired_value_renews_the_redis_expiry() {
    let prefix = support::prefix();
    let cache = support::connect(&support::url(), &prefix).await.cache();
    let at = now();
    let old = at - TimeDelta::seconds(10);
    cache
        .put("k", b"old".to_vec(), Duration::from_secs(5), old)
        .await
        .expect("put");
    assert_eq!(cache.get("k", at).await, Ok(None), "logically expired");
    assert_eq!(
        cache.put_if_absent("k", b"new".to_vec(), TTL, at).await,
        Ok(true)
    );
    assert_eq!(cache.get("k", at).await, Ok(Some(b"new".to_vec())));
    let mut raw = support::raw().await;
    let pttl: i64 = raw_cmd(&mut raw, redis::cmd("PTTL").arg(format!("{prefix}cache:k"))).await;
    assert!(pttl > 59_000, "PTTL {pttl}");
}

#[tokio::test]
async fn foreign_values_are_errors_not_misses() {
    let prefix = support::prefix();
    let cache = support::connect(&support::url(), &prefix).await.cache();
    let key = format!("{prefix}cache:k");
    let mut raw = support::raw().await;
    let () = raw_cmd(
        &mut raw,
        redis::cmd("SET")
            .arg(&key)
            .arg("garbage")
            .arg("PX")
            .arg(60_000),
    )
    .await;
    let at = now();

    let read = cache.get("k", at).await;
    assert!(matches!(read, Err(PortError::Unavailable(_))), "{read:?}");
    let guarded = cache.put_if_absent("k", b"v".to_vec(), TTL, at).await;
    assert!(
        matches!(guarded, Err(PortError::Unavailable(_))),
        "{guarded:?}"
    );
    let stored: Vec<u8> = raw_cmd(&mut raw, redis::cmd("GET").arg(&key)).await;
    assert_eq!(
        stored, b"garbage",
        "put_if_absent overwrote a foreign value"
    );

    cache.put("k", b"v".to_vec(), TTL, at).await.expect("put");
    assert_eq!(cache.get("k", at).await, Ok(Some(b"v".to_vec())));
}

#[tokio::test]
async fn prefixes_keep_values_apart() {
    let url = support::url();
    let a = support::connect(&url, &support::prefix()).await.cache();
    let b = support::connect(&url, &support::prefix()).await.cache();
    let at = now();
    a.put("shared", b"a".to_vec(), TTL, at).await.expect("put");
    assert_eq!(b.get("shared", at).await, Ok(None));
    assert_eq!(
        b.put_if_absent("shared", b"b".to_vec(), TTL, at).await,
        Ok(true)
    );
    assert_eq!(a.get("shared", at).await, Ok(Some(b"a".to_vec())));
}

#[tokio::test]
async fn extreme_ttls_are_accepted() {
    let cache = support::connection().await.cache();
    let at = now();
    cache
        .put("forever", b"v".to_vec(), Duration::MAX, at)
        .await
        .expect("put with the longest ttl");
    assert_eq!(
        cache.get("forever", at + TimeDelta::days(36_500)).await,
        Ok(Some(b"v".to_vec()))
    );
    // Not left in the shared Redis for a century.
    cache.delete("forever").await.expect("delete");
    cache
        .put("never", b"v".to_vec(), Duration::ZERO, at)
        .await
        .expect("put with no ttl");
    assert_eq!(cache.get("never", at).await, Ok(None));
    assert_eq!(
        cache
            .put_if_absent("never", b"w".to_vec(), Duration::ZERO, at)
            .await,
        Ok(true)
    );
}

/// Random reads, writes and deletes on a few keys, with time moving on: every answer
/// equals the in-memory adapter's.
#[tokio::test]
async fn agrees_with_the_memory_adapter() {
    let cache = support::connection().await.cache();
    let memory = MemoryCache::new();
    let mut rng = Rng::new(0xcafe_f00d);
    let mut at = now();
    for step in 0..400u32 {
        at += TimeDelta::milliseconds(i64::try_from(rng.below(100)).unwrap_or(0));
        let key = format!("k{}", rng.below(3));
        let ttl = Duration::from_millis(rng.below(1_500));
        let value = step.to_be_bytes().to_vec();
        match rng.below(4) {
            0 => assert_eq!(
                cache.get(&key, at).await,
                memory.get(&key, at).await,
                "step {step}: get({key}) at {at}"
            ),
            1 => assert_eq!(
                cache.put(&key, value.clone(), ttl, at).await,
                memory.put(&key, value, ttl, at).await,
                "step {step}: put({key}, {ttl:?}) at {at}"
            ),
            2 => assert_eq!(
                cache.put_if_absent(&key, value.clone(), ttl, at).await,
                memory.put_if_absent(&key, value, ttl, at).await,
                "step {step}: put_if_absent({key}, {ttl:?}) at {at}"
            ),
            _ => assert_eq!(
                cache.delete(&key).await,
                memory.delete(&key).await,
                "step {step}: delete({key})"
            ),
        }
    }
}
