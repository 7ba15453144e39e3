//! The `Clock` port: every use of "now" goes through it so tests can move time by hand.

use chrono::{DateTime, Duration, DurationRound, Utc};
use futures::future::BoxFuture;
use std::sync::Mutex;

/// A source of the current time, and of waiting.
pub trait Clock: Send + Sync {
    /// The current instant, UTC.
    fn now(&self) -> DateTime<Utc>;

    /// Waits for `duration` of this clock's time (backoff between retries). A manual clock
    /// moves itself forward instead of waiting, so tests of backoff take no time.
    fn sleep(&self, duration: std::time::Duration) -> BoxFuture<'static, ()>;
}

/// The real wall clock, truncated to milliseconds: the precision every timestamp is
/// shown and stored with, so a record reads back equal from any store.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        let now = Utc::now();
        now.duration_trunc(Duration::milliseconds(1)).unwrap_or(now)
    }

    fn sleep(&self, duration: std::time::Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// A clock that only moves when told to; for tests.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Mutex::new(start),
        }
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        *now += by;
    }

    /// Sets the clock to `to`.
    pub fn set(&self, to: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn sleep(&self, duration: std::time::Duration) -> BoxFuture<'static, ()> {
        self.advance(Duration::from_std(duration).unwrap_or(Duration::MAX));
        Box::pin(std::future::ready(()))
    }
}
