//! Optimistic concurrency: re-run a read-decide-commit step when a guarded write conflicts
//! (or the database reports a serialization failure or deadlock), with a short, jittered
//! backoff so that racing writers spread out instead of colliding again.

use std::future::Future;
use std::time::Duration;

use rand::Rng;

use crate::error::Error;
use crate::ports::{Clock, StoreError};
use crate::Engine;

/// How many times a step is tried before a conflict is reported. Every round has a winner,
/// and the backoff spreads the losers out, so this bounds how many writers of one record can
/// race before one of them is told to retry.
const ATTEMPTS: u32 = 32;
/// Backoff before the second attempt; doubled per attempt up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(1);
/// Longest backoff between two attempts (under a second in all, on average, before giving
/// up). N writers racing for one record need up to N rounds, so [`ATTEMPTS`] also bounds
/// the contention that is absorbed without an error.
const MAX_BACKOFF: Duration = Duration::from_millis(50);

impl Engine {
    /// Runs `step` until it does not fail with a store conflict; see `retry_on_conflict`.
    pub async fn on_conflict_retry<T, F, Fut>(&self, step: F) -> Result<T, Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, StepError>>,
    {
        retry_on_conflict(&*self.clock, step).await
    }
}

/// Runs `step` until it does not fail with a store conflict, at most [`ATTEMPTS`] times,
/// waiting a random part of an exponentially growing backoff on `clock` (a manual clock makes
/// it instant) between attempts. `step` must re-read everything it decides on, so each run
/// sees the winner's write.
pub async fn retry_on_conflict<T, F, Fut>(clock: &dyn Clock, mut step: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, StepError>>,
{
    let mut last = String::new();
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            clock.sleep(backoff(attempt)).await;
        }
        match step().await {
            Ok(v) => return Ok(v),
            Err(StepError::Domain(e)) => return Err(e),
            Err(StepError::Store(StoreError::Conflict(why))) => last = why,
            Err(StepError::Store(e)) => return Err(e.into()),
        }
    }
    Err(Error::Conflict(format!(
        "the change kept colliding with concurrent changes ({last}); try again"
    )))
}

/// The wait before attempt `attempt` (1-based retries): uniformly random up to
/// `FIRST_BACKOFF * 2^(attempt-1)`, capped at [`MAX_BACKOFF`] ("full jitter").
fn backoff(attempt: u32) -> Duration {
    let ceiling = FIRST_BACKOFF
        .saturating_mul(1 << attempt.saturating_sub(1).min(16))
        .min(MAX_BACKOFF);
    let micros = u64::try_from(ceiling.as_micros()).unwrap_or(u64::MAX);
    Duration::from_micros(rand::thread_rng().gen_range(0..=micros))
}

/// The failure of one step: a domain refusal (final) or a store error (conflicts retry).
#[derive(Debug)]
pub enum StepError {
    /// Final: the request is refused.
    Domain(Error),
    /// From `commit` or a read.
    Store(StoreError),
}

impl From<Error> for StepError {
    fn from(e: Error) -> Self {
        StepError::Domain(e)
    }
}

impl From<StoreError> for StepError {
    fn from(e: StoreError) -> Self {
        StepError::Store(e)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use chrono::TimeZone;
    use proptest::prelude::*;

    use super::*;
    use crate::ports::ManualClock;

    proptest! {
        #[test]
        fn backoff_stays_under_its_growing_ceiling(attempt in 1u32..40) {
            let wait = backoff(attempt);
            let ceiling = FIRST_BACKOFF * (1 << (attempt - 1).min(16));
            prop_assert!(wait <= ceiling.min(MAX_BACKOFF));
        }
    }

    #[tokio::test]
    async fn conflicts_are_retried_with_backoff_then_reported() {
        let start = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).single();
        let start = start.unwrap_or_default();
        let clock = ManualClock::new(start);
        let runs = AtomicU32::new(0);
        let result: Result<(), Error> = retry_on_conflict(&clock, || async {
            runs.fetch_add(1, Ordering::SeqCst);
            Err(StepError::Store(StoreError::Conflict("busy".into())))
        })
        .await;
        assert_eq!(runs.load(Ordering::SeqCst), ATTEMPTS);
        assert!(matches!(result, Err(Error::Conflict(m)) if m.contains("busy")));
        // The waits went through the clock: a manual one moved instead of waiting.
        assert!(clock.now() > start, "no backoff was taken");

        let runs = AtomicU32::new(0);
        let third = retry_on_conflict(&clock, || async {
            if runs.fetch_add(1, Ordering::SeqCst) < 2 {
                Err(StepError::Store(StoreError::Conflict("busy".into())))
            } else {
                Ok(7)
            }
        })
        .await;
        assert_eq!(third, Ok(7));
    }
}
