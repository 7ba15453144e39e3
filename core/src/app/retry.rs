//! Optimistic concurrency: re-run a read-decide-commit step when a guarded write conflicts.

use std::future::Future;

use crate::error::Error;
use crate::ports::StoreError;

/// How many times a step is tried before a conflict is reported. Every round has a winner,
/// so this bounds how many writers of one record can race before one of them is told to
/// retry; 64 covers bursts far beyond what one contact sees in practice.
const ATTEMPTS: usize = 64;

/// Runs `step` until it does not fail with a store conflict (at most a few times).
/// `step` must re-read everything it decides on, so each run sees the winner's write.
pub async fn on_conflict_retry<T, F, Fut>(mut step: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, StepError>>,
{
    let mut last = String::new();
    for _ in 0..ATTEMPTS {
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
