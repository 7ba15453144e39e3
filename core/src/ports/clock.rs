//! The `Clock` port: every use of "now" goes through it so tests can move time by hand.

use chrono::{DateTime, Duration, Timelike, Utc};
use futures::future::BoxFuture;
use std::sync::Mutex;
use uuid::{ContextV7, Timestamp, Uuid};

/// A source of the current time, and of waiting.
pub trait Clock: Send + Sync {
    /// The current instant, UTC.
    fn now(&self) -> DateTime<Utc>;

    /// Waits for `duration` of this clock's time (backoff between retries). A manual clock
    /// moves itself forward instead of waiting, so tests of backoff take no time.
    fn sleep(&self, duration: std::time::Duration) -> BoxFuture<'static, ()>;

    /// A new time-ordered identifier (UUIDv7) taken at this clock's [`now`](Clock::now).
    ///
    /// Identifiers made by one clock are strictly increasing, also within one millisecond,
    /// so records created one after another order by id like they order by `createdAt`
    /// (campaign audiences and keyset pages rely on it). Made by
    /// [`new_uuid_at`](Clock::new_uuid_at) at [`now`](Clock::now): a clock with a sequence
    /// of its own overrides that method, so both draw from the one sequence.
    fn new_uuid(&self) -> Uuid {
        self.new_uuid_at(self.now())
    }

    /// A new identifier as [`new_uuid`](Clock::new_uuid) makes, taken at `at` (an instant
    /// this clock gave, for a record created at it): no second reading of the clock, and
    /// the id carries the record's `createdAt`. Still strictly after every id this clock
    /// made before, whatever `at` is. The default shares one process-wide sequence; a
    /// clock that can go backwards keeps its own.
    fn new_uuid_at(&self, at: DateTime<Utc>) -> Uuid {
        static SEQUENCE: Mutex<Option<ContextV7>> = Mutex::new(None);
        let mut sequence = SEQUENCE.lock().unwrap_or_else(|e| e.into_inner());
        uuid_at(sequence.get_or_insert_with(ContextV7::new), at)
    }
}

/// A UUIDv7 for `at`, ordered after every earlier one `sequence` made.
fn uuid_at(sequence: &ContextV7, at: DateTime<Utc>) -> Uuid {
    let seconds = u64::try_from(at.timestamp()).unwrap_or(0);
    Uuid::new_v7(Timestamp::from_unix(
        sequence,
        seconds,
        at.timestamp_subsec_nanos(),
    ))
}

/// The real wall clock, truncated to milliseconds: the precision every timestamp is
/// shown and stored with, so a record reads back equal from any store.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        to_millisecond(Utc::now())
    }

    fn sleep(&self, duration: std::time::Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// `at` without its sub-millisecond part. The fraction of the second is replaced, where
/// `duration_trunc` would go through nanoseconds since 1970 (every request reads the clock
/// several times).
fn to_millisecond(at: DateTime<Utc>) -> DateTime<Utc> {
    let nanos = at.timestamp_subsec_nanos();
    at.with_nanosecond(nanos - nanos % 1_000_000).unwrap_or(at)
}

/// A clock that only moves when told to; for tests.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
    sequence: Mutex<ContextV7>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Mutex::new(start),
            sequence: Mutex::new(ContextV7::new()),
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

    fn new_uuid_at(&self, at: DateTime<Utc>) -> Uuid {
        let sequence = self.sequence.lock().unwrap_or_else(|e| e.into_inner());
        uuid_at(&sequence, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DurationRound;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn to_millisecond_truncates_as_duration_trunc_does(
            seconds in 0i64..9_000_000_000,
            nanos in 0u32..1_000_000_000,
        ) {
            let at = DateTime::from_timestamp(seconds, nanos).unwrap_or_default();
            let expected = at.duration_trunc(Duration::milliseconds(1)).unwrap_or(at);
            prop_assert_eq!(to_millisecond(at), expected);
        }
    }

    #[test]
    fn the_system_clock_reads_whole_milliseconds() {
        assert_eq!(SystemClock.now().timestamp_subsec_nanos() % 1_000_000, 0);
    }

    #[test]
    fn manual_clock_ids_carry_its_time_and_keep_increasing() {
        let start = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default();
        let clock = ManualClock::new(start);
        let first = clock.new_uuid();
        let second = clock.new_uuid();
        assert!(second > first, "same millisecond still orders");
        let (seconds, _) = first
            .get_timestamp()
            .map(|t| t.to_unix())
            .unwrap_or_default();
        assert_eq!(seconds as i64, start.timestamp());

        clock.advance(Duration::days(1));
        let later = clock.new_uuid();
        assert!(later > second);
        clock.set(start);
        assert!(
            clock.new_uuid() > later,
            "going back in time never reorders ids"
        );
    }

    #[test]
    fn an_id_taken_at_an_instant_carries_it_and_still_increases() {
        for clock in [&SystemClock as &dyn Clock, &ManualClock::new(Utc::now())] {
            let now = clock.now();
            let before = clock.new_uuid();
            let at = now - Duration::hours(1);
            let taken = clock.new_uuid_at(at);
            assert!(taken > before, "an earlier instant never reorders ids");
            let later = clock.new_uuid_at(now + Duration::hours(1));
            let millis = |id: Uuid| {
                id.get_timestamp()
                    .map(|t| t.to_unix())
                    .map(|(s, n)| s as i64 * 1000 + i64::from(n / 1_000_000))
            };
            assert_eq!(
                millis(later),
                Some((now + Duration::hours(1)).timestamp_millis())
            );
        }
    }
}
