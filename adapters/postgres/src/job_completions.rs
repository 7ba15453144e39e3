//! `Jobs::complete` shared by concurrent workers: the completions that arrive while one is
//! in flight are made by one statement (see [`crate::batcher`]). Each completion was its own
//! durable commit, so under a burst of deliveries the queue cost one WAL flush per job.

use std::collections::HashSet;
use std::sync::Arc;

use posthorn_core::ports::StoreError;
use sqlx::{PgPool, Row};

use crate::batcher::{fail_all, Batcher};
use crate::error;

/// Most completions made by one statement.
const MAX_BATCH: usize = 128;

/// Most statements in flight at once (each holds a pooled connection).
const RUNNERS: usize = 1;

/// Deletes the running jobs of the (id, lease token) pairs in $1 and $2 whose lease is
/// still held, answering the ids deleted.
const COMPLETE: &str = "\
    DELETE FROM jobs AS j \
    USING unnest($1::text[], $2::text[]) AS done(id, lease_token) \
    WHERE j.id = done.id AND j.lease_token = done.lease_token AND j.state = 'running' \
    RETURNING j.id";

/// A job's id and the lease token it was claimed with.
type Lease = (String, String);

/// The queue of completions waiting for their statement.
pub(crate) struct JobCompletions {
    batcher: Batcher<Lease, bool>,
}

impl JobCompletions {
    /// Completions on `pool`.
    pub(crate) fn new(pool: PgPool) -> Self {
        let serve = Arc::new(move |leases: Vec<Lease>| {
            let pool = pool.clone();
            Box::pin(async move { complete_all(&pool, leases).await }) as _
        });
        Self {
            batcher: Batcher::new(MAX_BATCH, RUNNERS, serve),
        }
    }

    /// Deletes job `id` if `lease_token` still holds it; whether it did.
    pub(crate) async fn complete(&self, id: &str, lease_token: &str) -> Result<bool, StoreError> {
        self.batcher
            .call((id.to_owned(), lease_token.to_owned()))
            .await
    }

    /// Statements run so far.
    #[cfg(all(test, posthorn_pg_tests))]
    pub(crate) fn batches(&self) -> u64 {
        self.batcher.batches()
    }
}

/// Completes every lease of `leases` in one statement (one transaction: all or none); a
/// failed statement fails every completion of the batch, and each job keeps its lease, so
/// completing it again is safe.
async fn complete_all(pool: &PgPool, leases: Vec<Lease>) -> Vec<Result<bool, StoreError>> {
    let (ids, tokens): (Vec<&str>, Vec<&str>) = leases
        .iter()
        .map(|(id, token)| (id.as_str(), token.as_str()))
        .unzip();
    let deleted = sqlx::query(COMPLETE)
        .bind(&ids)
        .bind(&tokens)
        .fetch_all(pool)
        .await
        .map_err(error::store)
        .and_then(|rows| {
            rows.iter()
                .map(|row| row.try_get::<String, _>(0).map_err(error::store))
                .collect::<Result<HashSet<String>, _>>()
        });
    match deleted {
        Ok(deleted) => leases
            .iter()
            .map(|(id, _)| Ok(deleted.contains(id)))
            .collect(),
        Err(failure) => fail_all(leases.len(), &failure),
    }
}

#[cfg(all(test, posthorn_pg_tests))]
mod tests;
