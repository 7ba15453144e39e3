//! `Jobs::complete` and `Jobs::retry` shared by concurrent workers: the settlements that
//! arrive while one statement is in flight are made by the next (see [`crate::batcher`]).
//! Each was its own durable commit, so a burst of deliveries cost one WAL flush per job,
//! and so did a campaign's backlog put back by the send throttle.

use std::collections::HashSet;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use posthorn_core::ports::StoreError;
use sqlx::{PgPool, Row};

use crate::batcher::{fail_all, Batcher};
use crate::error;

/// Most settlements made by one statement.
const MAX_BATCH: usize = 128;

/// Most statements in flight at once (each holds a pooled connection).
const RUNNERS: usize = 1;

/// Deletes the running jobs of the (id, lease token) pairs in $1 and $2, and queues again
/// those of $3 and $4 to run at $5 (counting a failed attempt where $6, keeping the error
/// $7), each only while its lease is held; answers the (id, lease token) pairs settled, so a
/// stale token batched beside the current one of the same job is told it settled nothing.
/// A job is settled once per lease, so no row is both deleted and updated.
const SETTLE: &str = "\
    WITH done AS ( \
        DELETE FROM jobs AS j \
        USING unnest($1::text[], $2::text[]) AS s(id, lease_token) \
        WHERE j.id = s.id AND j.lease_token = s.lease_token AND j.state = 'running' \
        RETURNING j.id, s.lease_token), \
    later AS ( \
        UPDATE jobs AS j SET state = 'queued', run_at = s.run_at, \
            attempts = j.attempts + CASE WHEN s.failed THEN 1 ELSE 0 END, \
            last_error = s.error, claims = 0, lease_token = NULL, lease_until = NULL \
        FROM unnest($3::text[], $4::text[], $5::timestamptz[], $6::bool[], $7::text[]) \
            AS s(id, lease_token, run_at, failed, error) \
        WHERE j.id = s.id AND j.lease_token = s.lease_token AND j.state = 'running' \
        RETURNING j.id, s.lease_token) \
    SELECT id, lease_token FROM done UNION ALL SELECT id, lease_token FROM later";

/// What becomes of a leased job.
#[derive(Debug, Clone)]
pub(crate) enum Settlement {
    /// Done: deleted.
    Complete,
    /// Queued again to run at `run_at`, counting a failed attempt when `failed`, with
    /// `error` kept.
    Retry {
        run_at: DateTime<Utc>,
        failed: bool,
        error: String,
    },
}

/// A job's id, the lease token it was claimed with, and its settlement.
type Pending = (String, String, Settlement);

/// The queue of settlements waiting for their statement.
pub(crate) struct JobSettlements {
    batcher: Batcher<Pending, bool>,
}

impl JobSettlements {
    /// Settlements on `pool`.
    pub(crate) fn new(pool: PgPool) -> Self {
        let serve = Arc::new(move |pending: Vec<Pending>| {
            let pool = pool.clone();
            Box::pin(async move { settle_all(&pool, pending).await }) as _
        });
        Self {
            batcher: Batcher::new(MAX_BATCH, RUNNERS, serve),
        }
    }

    /// Settles job `id` if `lease_token` still holds it; whether it did.
    pub(crate) async fn settle(
        &self,
        id: &str,
        lease_token: &str,
        settlement: Settlement,
    ) -> Result<bool, StoreError> {
        self.batcher
            .call((id.to_owned(), lease_token.to_owned(), settlement))
            .await
    }

    /// Statements run so far.
    #[cfg(all(test, posthorn_pg_tests))]
    pub(crate) fn batches(&self) -> u64 {
        self.batcher.batches()
    }
}

/// The columns of the completions, then of the retries, of one batch.
#[derive(Default)]
struct Columns<'a> {
    done_ids: Vec<&'a str>,
    done_tokens: Vec<&'a str>,
    later_ids: Vec<&'a str>,
    later_tokens: Vec<&'a str>,
    run_at: Vec<DateTime<Utc>>,
    failed: Vec<bool>,
    errors: Vec<&'a str>,
}

impl<'a> Columns<'a> {
    fn of(pending: &'a [Pending]) -> Self {
        let mut columns = Self::default();
        for (id, token, settlement) in pending {
            match settlement {
                Settlement::Complete => {
                    columns.done_ids.push(id);
                    columns.done_tokens.push(token);
                }
                Settlement::Retry {
                    run_at,
                    failed,
                    error,
                } => {
                    columns.later_ids.push(id);
                    columns.later_tokens.push(token);
                    columns.run_at.push(*run_at);
                    columns.failed.push(*failed);
                    columns.errors.push(error);
                }
            }
        }
        columns
    }
}

/// Makes every settlement of `pending` in one statement (one transaction: all or none); a
/// failed statement fails every settlement of the batch, and each job keeps its lease, so
/// settling it again is safe.
async fn settle_all(pool: &PgPool, pending: Vec<Pending>) -> Vec<Result<bool, StoreError>> {
    let columns = Columns::of(&pending);
    let settled = sqlx::query(SETTLE)
        .bind(&columns.done_ids)
        .bind(&columns.done_tokens)
        .bind(&columns.later_ids)
        .bind(&columns.later_tokens)
        .bind(&columns.run_at)
        .bind(&columns.failed)
        .bind(&columns.errors)
        .fetch_all(pool)
        .await
        .map_err(error::store)
        .and_then(|rows| {
            rows.iter()
                .map(|row| {
                    let id = row.try_get::<String, _>(0).map_err(error::store)?;
                    let token = row.try_get::<String, _>(1).map_err(error::store)?;
                    Ok((id, token))
                })
                .collect::<Result<HashSet<(String, String)>, _>>()
        });
    match settled {
        Ok(settled) => pending
            .iter()
            .map(|(id, token, _)| Ok(settled.contains(&(id.clone(), token.clone()))))
            .collect(),
        Err(failure) => fail_all(pending.len(), &failure),
    }
}

#[cfg(all(test, posthorn_pg_tests))]
mod tests;
