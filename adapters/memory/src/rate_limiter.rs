//! `MemoryRateLimiter`: fixed-window counters in process.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use posthorn_core::ports::{window_bounds, PortError, Quota, RateDecision, RateLimiter};

/// Counters live per (key, window length, window index), like the Redis adapter's keys.
type WindowKey = (String, u128, i64);

/// How many takes may pass between two sweeps of ended windows, at least.
const MIN_TAKES_BETWEEN_SWEEPS: usize = 1024;

/// Fixed-window rate limits for one process.
///
/// Windows are aligned with [`window_bounds`], so they match every other adapter's. Counters
/// of ended windows are swept every so often, in amortised constant time per take.
#[derive(Debug, Default)]
pub struct MemoryRateLimiter {
    windows: Mutex<Windows>,
}

#[derive(Debug, Default)]
struct Windows {
    /// Units used and the window's end.
    counters: HashMap<WindowKey, (u32, DateTime<Utc>)>,
    takes_since_sweep: usize,
}

impl MemoryRateLimiter {
    /// A limiter with no counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many windows are tracked (for tests of the pruning).
    pub fn tracked_windows(&self) -> usize {
        self.windows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .counters
            .len()
    }
}

impl Windows {
    fn sweep_if_due(&mut self, now: DateTime<Utc>) {
        self.takes_since_sweep += 1;
        if self.takes_since_sweep >= self.counters.len().max(MIN_TAKES_BETWEEN_SWEEPS) {
            self.counters.retain(|_, (_, end)| *end > now);
            self.takes_since_sweep = 0;
        }
    }
}

#[async_trait]
impl RateLimiter for MemoryRateLimiter {
    async fn take(
        &self,
        key: &str,
        cost: u32,
        quota: Quota,
        now: DateTime<Utc>,
    ) -> Result<RateDecision, PortError> {
        let (index, reset_at) = window_bounds(now, quota.window);
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        windows.sweep_if_due(now);
        let window_key = (key.to_string(), quota.window.as_millis(), index);
        let (used, _) = windows.counters.entry(window_key).or_insert((0, reset_at));
        let allowed = u64::from(*used) + u64::from(cost) <= u64::from(quota.limit);
        if allowed {
            *used += cost;
        }
        Ok(RateDecision {
            allowed,
            limit: quota.limit,
            remaining: quota.limit.saturating_sub(*used),
            reset_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn ended_windows_are_swept() {
        let limiter = MemoryRateLimiter::new();
        let quota = Quota {
            limit: 5,
            window: Duration::from_secs(1),
        };
        let start = Utc::now();
        for i in 0..3000 {
            let now = start + chrono::TimeDelta::seconds(i);
            let decision = limiter.take("k", 1, quota, now).await;
            assert!(decision.is_ok_and(|d| d.allowed));
        }
        assert!(
            limiter.tracked_windows() <= 2 * MIN_TAKES_BETWEEN_SWEEPS,
            "{} windows kept",
            limiter.tracked_windows()
        );
    }
}
