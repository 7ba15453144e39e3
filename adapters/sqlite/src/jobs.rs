//! `Jobs` for [`SqliteStore`]: leases taken on the one writer connection.
//!
//! States: `queued` (waits for `run_at`), `running` (leased until `lease_until`, then
//! claimable again), `dead` (parked). A finished job is deleted. Every lease operation
//! matches on the lease token, so a worker whose lease was taken over changes nothing.
//! Claims are serialized by the single writer, so no row locking is needed: a claim's
//! `UPDATE ... RETURNING` runs alone.

use posthorn_core::model::JobId;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use posthorn_core::ports::{ClaimedJob, DeadJob, JobPayload, JobStats, Jobs, PortError};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqlitePool};

use crate::error::{port as port_error, store_to_port};
use crate::group::Settlement;
use crate::rows::{count, micros, sql_limit};
use crate::SqliteStore;

/// Leases due jobs and expired leases, oldest `run_at` first. Each kind is read in index
/// order from its own partial index (`jobs_queued`, `jobs_leased`), so a claim touches
/// only the rows it may take however many jobs wait. The token is random per job.
const CLAIM: &str = "\
    UPDATE jobs \
    SET state = 'running', lease_token = lower(hex(randomblob(16))), lease_until = ?2, \
        claims = claims + 1 \
    WHERE id IN ( \
        SELECT id FROM ( \
            SELECT id, run_at FROM (SELECT id, run_at FROM jobs \
                WHERE state = 'queued' AND run_at <= ?1 ORDER BY run_at, id LIMIT ?3) \
            UNION ALL \
            SELECT id, run_at FROM (SELECT id, run_at FROM jobs \
                WHERE state = 'running' AND lease_until <= ?1 \
                ORDER BY lease_until, id LIMIT ?3)) \
        ORDER BY run_at, id LIMIT ?3) \
    RETURNING id, payload, attempts, claims, lease_token, run_at";

#[async_trait]
impl Jobs for SqliteStore {
    async fn claim(
        &self,
        now: DateTime<Utc>,
        lease: Duration,
        max: usize,
    ) -> Result<Vec<ClaimedJob>, PortError> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let writer = self.direct_writer().map_err(store_to_port)?;
        let lease_until = lease_end(now, lease);
        let rows = sqlx::query(CLAIM)
            .bind(micros(now))
            .bind(lease_until)
            .bind(sql_limit(max))
            .fetch_all(&*writer)
            .await
            .map_err(port_error)?;

        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            let id: String = row.try_get("id").map_err(port_error)?;
            let token: String = row.try_get("lease_token").map_err(port_error)?;
            let run_at: i64 = row.try_get("run_at").map_err(port_error)?;
            let attempts: i64 = row.try_get("attempts").map_err(port_error)?;
            let claims: i64 = row.try_get("claims").map_err(port_error)?;
            let payload: String = row.try_get("payload").map_err(port_error)?;
            match serde_json::from_str::<JobPayload>(&payload) {
                Ok(payload) => claimed.push((
                    run_at,
                    ClaimedJob {
                        id: id.into(),
                        payload,
                        attempts: u32::try_from(attempts).unwrap_or(0),
                        claims: u32::try_from(claims).unwrap_or(0),
                        lease_token: token,
                    },
                )),
                Err(err) => {
                    // A payload this version cannot read (written by a newer one, or
                    // corrupt) would fail forever: park it instead of handing it out.
                    let reason = format!("undecodable payload: {err}");
                    park(&writer, &id, &token, &reason).await?;
                }
            }
        }
        // RETURNING does not keep the subquery's order.
        claimed.sort_by(|(a_at, a), (b_at, b)| a_at.cmp(b_at).then_with(|| a.id.cmp(&b.id)));
        Ok(claimed.into_iter().map(|(_, job)| job).collect())
    }

    async fn extend(
        &self,
        job: &ClaimedJob,
        now: DateTime<Utc>,
        lease: Duration,
    ) -> Result<bool, PortError> {
        let writer = self.direct_writer().map_err(store_to_port)?;
        let done = sqlx::query(
            "UPDATE jobs SET lease_until = ?3 \
             WHERE id = ?1 AND lease_token = ?2 AND state = 'running'",
        )
        .bind(job.id.as_str())
        .bind(job.lease_token.clone())
        .bind(lease_end(now, lease))
        .execute(&*writer)
        .await
        .map_err(port_error)?;
        Ok(done.rows_affected() > 0)
    }

    async fn complete(&self, job: &ClaimedJob) -> Result<bool, PortError> {
        let writer = self.writer().map_err(store_to_port)?;
        // Through the group committer: the settlements of concurrent workers share a
        // transaction, one sync of the WAL.
        self.group
            .settle(
                writer,
                job.id.as_str(),
                &job.lease_token,
                Settlement::Complete,
            )
            .await
            .map_err(store_to_port)
    }

    async fn retry(
        &self,
        job: &ClaimedJob,
        at: DateTime<Utc>,
        failed: bool,
        error: &str,
    ) -> Result<bool, PortError> {
        let writer = self.writer().map_err(store_to_port)?;
        let settlement = Settlement::Retry {
            run_at: micros(at),
            failed,
            error: error.to_string(),
        };
        let retried = self
            .group
            .settle(writer, job.id.as_str(), &job.lease_token, settlement)
            .await
            .map_err(store_to_port)?;
        if retried {
            // The job may be due at once (a release on shutdown): as the memory adapter.
            self.wake.notify();
        }
        Ok(retried)
    }

    async fn dead_letter(&self, job: &ClaimedJob, error: &str) -> Result<bool, PortError> {
        let writer = self.direct_writer().map_err(store_to_port)?;
        park(&writer, job.id.as_str(), &job.lease_token, error).await
    }

    async fn wait_for_work(&self, timeout: Duration) {
        self.wake.wait(timeout).await;
    }

    async fn stats(&self, now: DateTime<Utc>) -> Result<JobStats, PortError> {
        // A running job whose lease has expired waits to run again: it counts as queued.
        let (queued, running, dead): (i64, i64, i64) = sqlx::query_as(
            "SELECT \
               count(*) FILTER (WHERE state = 'queued' \
                                   OR (state = 'running' AND lease_until <= ?1)), \
               count(*) FILTER (WHERE state = 'running' AND lease_until > ?1), \
               count(*) FILTER (WHERE state = 'dead') \
             FROM jobs",
        )
        .bind(micros(now))
        .fetch_one(&self.readers)
        .await
        .map_err(port_error)?;
        Ok(JobStats {
            queued: count(queued),
            running: count(running),
            dead: count(dead),
        })
    }

    async fn dead(&self, limit: usize) -> Result<Vec<DeadJob>, PortError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT id, payload, attempts, last_error FROM jobs \
             WHERE state = 'dead' ORDER BY id LIMIT ?",
        )
        .bind(sql_limit(limit))
        .fetch_all(&self.readers)
        .await
        .map_err(port_error)?;
        let mut dead = Vec::with_capacity(rows.len());
        for row in &rows {
            dead.extend(dead_job_from_row(row)?);
        }
        Ok(dead)
    }

    async fn dead_job(&self, id: &JobId) -> Result<Option<DeadJob>, PortError> {
        let row = sqlx::query(
            "SELECT id, payload, attempts, last_error FROM jobs WHERE id = ? AND state = 'dead'",
        )
        .bind(id.to_string())
        .fetch_optional(&self.readers)
        .await
        .map_err(port_error)?;
        match row {
            Some(row) => dead_job_from_row(&row),
            None => Ok(None),
        }
    }

    async fn revive(&self, id: &JobId, at: DateTime<Utc>) -> Result<bool, PortError> {
        let writer = self.direct_writer().map_err(store_to_port)?;
        let done = sqlx::query(
            "UPDATE jobs SET state = 'queued', run_at = ?2, attempts = 0, claims = 0, \
             lease_token = NULL, lease_until = NULL WHERE id = ?1 AND state = 'dead'",
        )
        .bind(id.to_string())
        .bind(micros(at))
        .execute(&*writer)
        .await
        .map_err(port_error)?;
        let revived = done.rows_affected() > 0;
        if revived {
            self.wake.notify();
        }
        Ok(revived)
    }
}

/// `now + lease` in stored microseconds, or the end of time when that overflows.
fn lease_end(now: DateTime<Utc>, lease: Duration) -> i64 {
    chrono::Duration::from_std(lease)
        .ok()
        .and_then(|lease| now.checked_add_signed(lease))
        .map_or(i64::MAX, micros)
}

/// Moves a leased job to `dead`; `false` when the lease token is stale.
async fn park(
    writer: &SqlitePool,
    id: &str,
    lease_token: &str,
    error: &str,
) -> Result<bool, PortError> {
    let done = sqlx::query(
        "UPDATE jobs SET state = 'dead', last_error = ?3, lease_token = NULL, \
         lease_until = NULL WHERE id = ?1 AND lease_token = ?2 AND state = 'running'",
    )
    .bind(id.to_string())
    .bind(lease_token.to_string())
    .bind(error.to_string())
    .execute(writer)
    .await
    .map_err(port_error)?;
    Ok(done.rows_affected() > 0)
}

/// A dead job from a row of `id, payload, attempts, last_error`; `None` (logged) when this
/// version cannot read its payload.
fn dead_job_from_row(row: &SqliteRow) -> Result<Option<DeadJob>, PortError> {
    let id: String = row.try_get("id").map_err(port_error)?;
    let attempts: i64 = row.try_get("attempts").map_err(port_error)?;
    let last_error: Option<String> = row.try_get("last_error").map_err(port_error)?;
    let payload: String = row.try_get("payload").map_err(port_error)?;
    match serde_json::from_str::<JobPayload>(&payload) {
        Ok(payload) => Ok(Some(DeadJob {
            id: id.into(),
            payload,
            attempts: u32::try_from(attempts).unwrap_or(0),
            last_error,
        })),
        Err(err) => {
            tracing::warn!(job_id = %id, error = %err, "dead job with an undecodable payload left out");
            Ok(None)
        }
    }
}
