//! Checks of the `RateLimiter` port. Time is passed explicitly: nothing sleeps.
//!
//! Keys carry a random prefix so that checks may share one backend.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use posthorn_core::ports::{window_bounds, Quota, RateDecision, RateLimiter};

use crate::fixtures::unique;

const WINDOW: Duration = Duration::from_secs(60);

fn quota(limit: u32) -> Quota {
    Quota {
        limit,
        window: WINDOW,
    }
}

/// A few seconds into the current window, and that window's end.
fn in_window() -> (DateTime<Utc>, DateTime<Utc>) {
    let (_, end) = window_bounds(Utc::now(), WINDOW);
    (end - TimeDelta::seconds(55), end)
}

async fn take(
    limiter: &dyn RateLimiter,
    key: &str,
    cost: u32,
    quota: Quota,
    now: DateTime<Utc>,
) -> RateDecision {
    limiter
        .take(key, cost, quota, now)
        .await
        .unwrap_or_else(|e| panic!("take({key}, {cost}) failed: {e}"))
}

/// `limit` takes are allowed in a window, with `remaining` counting down; then refused.
pub async fn allows_limit_then_refuses(limiter: &Arc<dyn RateLimiter>) {
    let key = format!("conformance:{}:limit", unique());
    let (now, end) = in_window();
    for i in 1..=5u32 {
        let at = now + TimeDelta::seconds(i64::from(i));
        let decision = take(limiter.as_ref(), &key, 1, quota(5), at).await;
        assert_eq!(
            decision,
            RateDecision {
                allowed: true,
                limit: 5,
                remaining: 5 - i,
                reset_at: end
            },
            "take {i} of 5"
        );
    }
    let refused = take(
        limiter.as_ref(),
        &key,
        1,
        quota(5),
        now + TimeDelta::seconds(10),
    )
    .await;
    assert_eq!(
        refused,
        RateDecision {
            allowed: false,
            limit: 5,
            remaining: 0,
            reset_at: end
        },
        "the take past the limit"
    );
}

/// A refused take consumes nothing: a smaller take that fits is still allowed.
pub async fn refused_take_consumes_nothing(limiter: &Arc<dyn RateLimiter>) {
    let key = format!("conformance:{}:refused", unique());
    let (now, _) = in_window();
    let first = take(limiter.as_ref(), &key, 6, quota(10), now).await;
    assert!(
        first.allowed && first.remaining == 4,
        "first take: {first:?}"
    );
    for _ in 0..3 {
        let big = take(limiter.as_ref(), &key, 5, quota(10), now).await;
        assert!(
            !big.allowed,
            "a take over the remaining budget was allowed: {big:?}"
        );
        assert_eq!(big.remaining, 4, "a refused take consumed units");
    }
    let fits = take(limiter.as_ref(), &key, 4, quota(10), now).await;
    assert!(
        fits.allowed && fits.remaining == 0,
        "a take that fits: {fits:?}"
    );
    let over = take(limiter.as_ref(), &key, 11, quota(10), now).await;
    assert!(
        !over.allowed,
        "a take larger than the limit must be refused"
    );
}

/// The next window starts with the whole budget and a later reset time.
pub async fn new_window_resets(limiter: &Arc<dyn RateLimiter>) {
    let key = format!("conformance:{}:window", unique());
    let (now, end) = in_window();
    for _ in 0..3 {
        take(limiter.as_ref(), &key, 1, quota(3), now).await;
    }
    let refused = take(
        limiter.as_ref(),
        &key,
        1,
        quota(3),
        end - TimeDelta::milliseconds(1),
    )
    .await;
    assert!(!refused.allowed, "still the same window: {refused:?}");

    let next = end + TimeDelta::seconds(1);
    let decision = take(limiter.as_ref(), &key, 1, quota(3), next).await;
    let next_end = end + TimeDelta::seconds(60);
    assert_eq!(
        decision,
        RateDecision {
            allowed: true,
            limit: 3,
            remaining: 2,
            reset_at: next_end
        },
        "first take of the next window"
    );
    let exactly_at_end = take(limiter.as_ref(), &key, 1, quota(3), end).await;
    assert_eq!(
        exactly_at_end.reset_at, next_end,
        "a window ends exclusively at its end"
    );
}

/// Budgets of different keys do not affect each other.
pub async fn keys_are_independent(limiter: &Arc<dyn RateLimiter>) {
    let prefix = format!("conformance:{}", unique());
    let (a, b) = (format!("{prefix}:a"), format!("{prefix}:b"));
    let (now, _) = in_window();
    for _ in 0..2 {
        assert!(take(limiter.as_ref(), &a, 1, quota(2), now).await.allowed);
    }
    assert!(!take(limiter.as_ref(), &a, 1, quota(2), now).await.allowed);
    let other = take(limiter.as_ref(), &b, 1, quota(2), now).await;
    assert!(
        other.allowed && other.remaining == 1,
        "key b was charged for key a: {other:?}"
    );
}

/// One key's budgets over windows of different lengths do not affect each other (a
/// workspace's per-minute request budget and a per-second sending rate may share a key).
pub async fn window_lengths_are_independent(limiter: &Arc<dyn RateLimiter>) {
    let key = format!("conformance:{}:lengths", unique());
    let (now, _) = in_window();
    let per_second = Quota {
        limit: 1,
        window: Duration::from_secs(1),
    };
    assert!(take(limiter.as_ref(), &key, 1, quota(1), now).await.allowed);
    assert!(!take(limiter.as_ref(), &key, 1, quota(1), now).await.allowed);
    let other = take(limiter.as_ref(), &key, 1, per_second, now).await;
    assert!(
        other.allowed && other.remaining == 0,
        "the one-second window was charged for the minute's: {other:?}"
    );
    assert!(
        !take(limiter.as_ref(), &key, 1, per_second, now)
            .await
            .allowed
    );
}

/// Concurrent takes on one key never grant more than the limit.
pub async fn concurrent_takes_never_exceed_limit(limiter: &Arc<dyn RateLimiter>) {
    const LIMIT: u32 = 25;
    let key = format!("conformance:{}:race", unique());
    let (now, _) = in_window();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let limiter = limiter.clone();
        let key = key.clone();
        tasks.spawn(async move {
            let mut allowed = 0u32;
            for _ in 0..10 {
                if take(limiter.as_ref(), &key, 1, quota(LIMIT), now)
                    .await
                    .allowed
                {
                    allowed += 1;
                }
            }
            allowed
        });
    }
    let mut total = 0;
    while let Some(done) = tasks.join_next().await {
        total += done.expect("a task panicked");
    }
    assert_eq!(
        total, LIMIT,
        "80 concurrent takes against a limit of {LIMIT}"
    );
}
