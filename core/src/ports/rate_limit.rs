//! The `RateLimiter` port: counts requests and sends against per-key budgets.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use std::time::Duration;

use super::PortError;

/// A budget: `limit` units per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Units allowed per window (at least 1).
    pub limit: u32,
    /// Length of the window.
    pub window: Duration,
}

/// The answer to one `take`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateDecision {
    /// Whether the units were granted (and counted).
    pub allowed: bool,
    /// The quota's limit, for `RateLimit-Limit`.
    pub limit: u32,
    /// Units left in the current window after this call.
    pub remaining: u32,
    /// When the current window ends and the budget is whole again.
    pub reset_at: DateTime<Utc>,
}

/// Fixed-window counters shared by every process that uses the same adapter instance/server.
///
/// Contract: `take` is atomic per key; a refused take consumes nothing. Windows are aligned
/// to multiples of `quota.window` since the Unix epoch, so every process agrees on them.
#[async_trait]
pub trait RateLimiter: Send + Sync {
    /// Tries to take `cost` units from `key`'s budget at `now`.
    async fn take(
        &self,
        key: &str,
        cost: u32,
        quota: Quota,
        now: DateTime<Utc>,
    ) -> Result<RateDecision, PortError>;
}

/// Start and end of the fixed window containing `now` (shared by every adapter).
pub fn window_bounds(now: DateTime<Utc>, window: Duration) -> (i64, DateTime<Utc>) {
    let width = i64::try_from(window.as_millis()).unwrap_or(i64::MAX).max(1);
    let index = now.timestamp_millis().div_euclid(width);
    let end =
        DateTime::<Utc>::from_timestamp_millis((index + 1).saturating_mul(width)).unwrap_or(now);
    (index, end)
}
