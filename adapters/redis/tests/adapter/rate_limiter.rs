//! The rate limiter's keys, Redis expiry and agreement with the in-memory adapter.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use posthorn_core::ports::{window_bounds, PortError, Quota, RateLimiter};
use posthorn_memory::MemoryRateLimiter;

use super::Rng;
use crate::support::{self, raw_cmd};

const MINUTE: Quota = Quota {
    limit: 5,
    window: Duration::from_secs(60),
};

/// Whole milliseconds, as the memory adapter's and ours agree only to the millisecond.
fn now() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(Utc::now().timestamp_millis()).unwrap_or_default()
}

async fn take(
    limiter: &dyn RateLimiter,
    key: &str,
    cost: u32,
    quota: Quota,
    at: DateTime<Utc>,
) -> posthorn_core::ports::RateDecision {
    limiter
        .take(key, cost, quota, at)
        .await
        .unwrap_or_else(|e| panic!("take({key}, {cost}) failed: {e}"))
}

#[tokio::test]
async fn counters_live_under_the_prefix_with_a_redis_expiry() {
    let prefix = support::prefix();
    let limiter = support::connect(&support::url(), &prefix)
        .await
        .rate_limiter();
    let at = now();
    let decision = take(&limiter, "ws:1:send", 2, MINUTE, at).await;
    assert!(decision.allowed && decision.remaining == 3, "{decision:?}");

    let (index, _) = window_bounds(at, MINUTE.window);
    let key = format!("{prefix}rate:60000:{index}:ws:1:send");
    let mut raw = support::raw().await;
    let used: Option<i64> = raw_cmd(&mut raw, redis::cmd("GET").arg(&key)).await;
    assert_eq!(used, Some(2), "counter {key}");
    let pttl: i64 = raw_cmd(&mut raw, redis::cmd("PTTL").arg(&key)).await;
    assert!(
        (59_000..=61_000).contains(&pttl),
        "the counter should expire a little after the window: PTTL {pttl}"
    );
    take(&limiter, "ws:1:send", 1, MINUTE, at).await;
    let later: i64 = raw_cmd(&mut raw, redis::cmd("PTTL").arg(&key)).await;
    assert!(
        later <= pttl,
        "a take must not extend the counter's life ({pttl} -> {later})"
    );
}

#[tokio::test]
async fn zero_and_refused_takes_write_nothing() {
    let prefix = support::prefix();
    let limiter = support::connect(&support::url(), &prefix)
        .await
        .rate_limiter();
    let at = now();
    let (index, end) = window_bounds(at, MINUTE.window);
    let key = format!("{prefix}rate:60000:{index}:k");
    let mut raw = support::raw().await;

    let zero = take(&limiter, "k", 0, MINUTE, at).await;
    assert!(
        zero.allowed && zero.remaining == 5 && zero.reset_at == end,
        "{zero:?}"
    );
    let too_big = take(&limiter, "k", 6, MINUTE, at).await;
    assert!(!too_big.allowed && too_big.remaining == 5, "{too_big:?}");
    let exists: i64 = raw_cmd(&mut raw, redis::cmd("EXISTS").arg(&key)).await;
    assert_eq!(exists, 0, "a zero or refused take created the counter");

    let all = take(&limiter, "k", 5, MINUTE, at).await;
    assert!(all.allowed && all.remaining == 0, "{all:?}");
    let zero_when_spent = take(&limiter, "k", 0, MINUTE, at).await;
    assert!(
        zero_when_spent.allowed && zero_when_spent.remaining == 0,
        "a take of nothing always fits: {zero_when_spent:?}"
    );
}

#[tokio::test]
async fn prefixes_keep_budgets_apart() {
    let url = support::url();
    let a = support::connect(&url, &support::prefix())
        .await
        .rate_limiter();
    let b = support::connect(&url, &support::prefix())
        .await
        .rate_limiter();
    let at = now();
    assert!(take(&a, "shared", 5, MINUTE, at).await.allowed);
    assert!(!take(&a, "shared", 1, MINUTE, at).await.allowed);
    let other = take(&b, "shared", 1, MINUTE, at).await;
    assert!(other.allowed && other.remaining == 4, "{other:?}");
}

#[tokio::test]
async fn a_foreign_counter_is_an_error() {
    let prefix = support::prefix();
    let limiter = support::connect(&support::url(), &prefix)
        .await
        .rate_limiter();
    let at = now();
    let (index, _) = window_bounds(at, MINUTE.window);
    let key = format!("{prefix}rate:60000:{index}:k");
    let mut raw = support::raw().await;
    let () = raw_cmd(
        &mut raw,
        redis::cmd("SET").arg(&key).arg("abc").arg("PX").arg(60_000),
    )
    .await;
    let result = limiter.take("k", 1, MINUTE, at).await;
    assert!(
        matches!(&result, Err(PortError::Unavailable(m)) if m.contains("not a number")),
        "{result:?}"
    );
}

#[tokio::test]
async fn extreme_windows_are_accepted() {
    let limiter = support::connection().await.rate_limiter();
    let memory = MemoryRateLimiter::new();
    let at = now();
    for window in [Duration::ZERO, Duration::from_millis(1), Duration::MAX] {
        let quota = Quota { limit: 2, window };
        for cost in [1, 1, 1, 0] {
            let ours = take(&limiter, "k", cost, quota, at).await;
            let reference = take(&memory, "k", cost, quota, at).await;
            assert_eq!(ours, reference, "window {window:?}, cost {cost}");
        }
    }
}

/// Random takes on a few keys and quotas, with time moving on: every decision equals the
/// in-memory adapter's.
#[tokio::test]
async fn agrees_with_the_memory_adapter() {
    let limiter = support::connection().await.rate_limiter();
    let memory = MemoryRateLimiter::new();
    let quotas = [
        Quota {
            limit: 3,
            window: Duration::from_secs(1),
        },
        Quota {
            limit: 10,
            window: Duration::from_secs(10),
        },
    ];
    let mut rng = Rng::new(0x5eed_1234);
    let mut at = now();
    for step in 0..400 {
        at += TimeDelta::milliseconds(i64::try_from(rng.below(60)).unwrap_or(0));
        let key = format!("k{}", rng.below(3));
        let quota = quotas[usize::try_from(rng.below(2)).unwrap_or(0)];
        let cost = u32::try_from(rng.below(5)).unwrap_or(0);
        let ours = take(&limiter, &key, cost, quota, at).await;
        let reference = take(&memory, &key, cost, quota, at).await;
        assert_eq!(
            ours, reference,
            "step {step}: take({key}, {cost}, {quota:?}) at {at}"
        );
    }
}
