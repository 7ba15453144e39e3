//! `MemoryRateLimiter`: fixed-window counters in process.

use std::hash::RandomState;
use std::sync::Mutex;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use hashbrown::HashMap;
use posthorn_core::ports::{window_bounds, PortError, Quota, RateDecision, RateLimiter};

/// How many takes may pass between two sweeps of ended windows, at least.
const MIN_TAKES_BETWEEN_SWEEPS: usize = 1024;

/// Fixed-window rate limits for one process.
///
/// Counters live per (key, window length, window index), like the Redis adapter's keys.
/// Windows are aligned with [`window_bounds`], so they match every other adapter's. Counters
/// of ended windows are swept every so often, in amortised constant time per take.
#[derive(Debug, Default)]
pub struct MemoryRateLimiter {
    windows: Mutex<Windows>,
}

/// One counting window of a key.
#[derive(Debug)]
struct Window {
    /// The window's length in milliseconds.
    length_ms: u128,
    /// Which window of that length, counted from the epoch.
    index: i64,
    /// Units used.
    used: u32,
    /// When the window ends.
    end: DateTime<Utc>,
}

#[derive(Debug, Default)]
struct Windows {
    /// Key → its open windows (one per quota length in use, and an ended one until the
    /// next sweep). The key is copied only when first seen: every API request takes from
    /// its workspace's key. Hashed with std's SipHash, not hashbrown's default: keys can
    /// carry what a stranger chose (the MX listener's per-sender limit).
    counters: HashMap<String, Vec<Window>, RandomState>,
    /// Windows across all keys.
    count: usize,
    takes_since_sweep: usize,
}

impl MemoryRateLimiter {
    /// A limiter with no counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many windows are tracked (for tests of the pruning).
    pub fn tracked_windows(&self) -> usize {
        self.windows.lock().unwrap_or_else(|e| e.into_inner()).count
    }
}

impl Windows {
    fn sweep_if_due(&mut self, now: DateTime<Utc>) {
        self.takes_since_sweep += 1;
        if self.takes_since_sweep >= self.count.max(MIN_TAKES_BETWEEN_SWEEPS) {
            let mut count = 0;
            self.counters.retain(|_, windows| {
                windows.retain(|w| w.end > now);
                count += windows.len();
                !windows.is_empty()
            });
            self.count = count;
            self.takes_since_sweep = 0;
        }
    }

    /// The window (`length_ms`, `index`) of `key`, opened with nothing used when new.
    fn window(
        &mut self,
        key: &str,
        length_ms: u128,
        index: i64,
        end: DateTime<Utc>,
    ) -> &mut Window {
        let windows = self.counters.entry_ref(key).or_default();
        let at = match windows
            .iter()
            .position(|w| w.length_ms == length_ms && w.index == index)
        {
            Some(at) => at,
            None => {
                windows.push(Window {
                    length_ms,
                    index,
                    used: 0,
                    end,
                });
                self.count += 1;
                windows.len() - 1
            }
        };
        &mut windows[at]
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
        let window = windows.window(key, quota.window.as_millis(), index, reset_at);
        let allowed = u64::from(window.used) + u64::from(cost) <= u64::from(quota.limit);
        if allowed {
            window.used += cost;
        }
        Ok(RateDecision {
            allowed,
            limit: quota.limit,
            remaining: quota.limit.saturating_sub(window.used),
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
