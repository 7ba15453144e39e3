//! `Jobs` for [`PgStore`]: leases claimed with `FOR UPDATE SKIP LOCKED`.
//!
//! States: `queued` (waits for `run_at`), `running` (leased until `lease_until`, then
//! claimable again), `dead` (parked). A finished job is deleted. Every lease operation
//! matches on the lease token, so a worker whose lease was taken over changes nothing.

use posthorn_core::model::JobId;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use posthorn_core::ports::{ClaimedJob, DeadJob, JobPayload, JobStats, Jobs, PortError};
use serde_json::Value;
use sqlx::types::Json;
use sqlx::{PgPool, Row};

use crate::contacts::sql_limit;
use crate::error::port as port_error;
use crate::job_settlements::Settlement;
use crate::{PgStore, JOBS_CHANNEL};

/// Claims due jobs and expired leases, oldest `run_at` first, skipping rows that other
/// claimers hold locked right now. Each kind is its own index-ordered scan (`jobs_queued`,
/// `jobs_leased`): one `OR` over both made PostgreSQL read and sort the whole table, which
/// took a second per claim with a million jobs waiting. Each CTE runs once, so each row is
/// locked at most once; rows locked but not chosen are released when the statement ends.
const CLAIM: &str = "\
    WITH queued AS ( \
        SELECT id, run_at FROM jobs \
        WHERE state = 'queued' AND run_at <= $1 \
        ORDER BY run_at, id \
        LIMIT $3 \
        FOR UPDATE SKIP LOCKED), \
    expired AS ( \
        SELECT id, run_at FROM jobs \
        WHERE state = 'running' AND lease_until <= $1 \
        ORDER BY lease_until, id \
        LIMIT $3 \
        FOR UPDATE SKIP LOCKED), \
    due AS ( \
        SELECT id FROM (SELECT * FROM queued UNION ALL SELECT * FROM expired) AS d \
        ORDER BY run_at, id \
        LIMIT $3) \
    UPDATE jobs AS j \
    SET state = 'running', lease_token = gen_random_uuid()::text, lease_until = $2, \
        claims = j.claims + 1 \
    FROM due WHERE j.id = due.id \
    RETURNING j.id, j.payload, j.attempts, j.claims, j.lease_token, j.run_at";

#[async_trait]
impl Jobs for PgStore {
    async fn claim(
        &self,
        now: DateTime<Utc>,
        lease: Duration,
        max: usize,
    ) -> Result<Vec<ClaimedJob>, PortError> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let lease_until = lease_end(now, lease);
        let rows = sqlx::query(CLAIM)
            .bind(now)
            .bind(lease_until)
            .bind(sql_limit(max))
            .fetch_all(&self.pool)
            .await
            .map_err(port_error)?;

        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            let id: String = row.try_get("id").map_err(port_error)?;
            let token: String = row.try_get("lease_token").map_err(port_error)?;
            let run_at: DateTime<Utc> = row.try_get("run_at").map_err(port_error)?;
            let attempts: i32 = row.try_get("attempts").map_err(port_error)?;
            let claims: i32 = row.try_get("claims").map_err(port_error)?;
            let payload: Json<Value> = row.try_get("payload").map_err(port_error)?;
            match serde_json::from_value::<JobPayload>(payload.0) {
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
                    park(&self.pool, &id, &token, &reason).await?;
                }
            }
        }
        // RETURNING does not keep the CTE's order.
        claimed.sort_by(|(a_at, a), (b_at, b)| a_at.cmp(b_at).then_with(|| a.id.cmp(&b.id)));
        Ok(claimed.into_iter().map(|(_, job)| job).collect())
    }

    async fn extend(
        &self,
        job: &ClaimedJob,
        now: DateTime<Utc>,
        lease: Duration,
    ) -> Result<bool, PortError> {
        let done = sqlx::query(
            "UPDATE jobs SET lease_until = $3 \
             WHERE id = $1 AND lease_token = $2 AND state = 'running'",
        )
        .bind(job.id.as_str())
        .bind(&job.lease_token)
        .bind(lease_end(now, lease))
        .execute(&self.pool)
        .await
        .map_err(port_error)?;
        Ok(done.rows_affected() > 0)
    }

    async fn complete(&self, job: &ClaimedJob) -> Result<bool, PortError> {
        self.settlements
            .settle(job.id.as_str(), &job.lease_token, Settlement::Complete)
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))
    }

    async fn retry(
        &self,
        job: &ClaimedJob,
        at: DateTime<Utc>,
        failed: bool,
        error: &str,
    ) -> Result<bool, PortError> {
        let later = Settlement::Retry {
            run_at: at,
            failed,
            error: error.to_owned(),
        };
        self.settlements
            .settle(job.id.as_str(), &job.lease_token, later)
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))
    }

    async fn dead_letter(&self, job: &ClaimedJob, error: &str) -> Result<bool, PortError> {
        park(&self.pool, job.id.as_str(), &job.lease_token, error).await
    }

    async fn wait_for_work(&self, timeout: Duration) {
        self.wake.wait(timeout).await;
    }

    async fn stats(&self, now: DateTime<Utc>) -> Result<JobStats, PortError> {
        // A running job whose lease has expired waits to run again: it counts as queued.
        let (queued, running, dead): (i64, i64, i64) = sqlx::query_as(
            "SELECT \
               count(*) FILTER (WHERE state = 'queued' \
                                   OR (state = 'running' AND lease_until <= $1)), \
               count(*) FILTER (WHERE state = 'running' AND lease_until > $1), \
               count(*) FILTER (WHERE state = 'dead') \
             FROM jobs",
        )
        .bind(now)
        .fetch_one(&self.pool)
        .await
        .map_err(port_error)?;
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
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
             WHERE state = 'dead' ORDER BY id LIMIT $1",
        )
        .bind(sql_limit(limit))
        .fetch_all(&self.pool)
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
            "SELECT id, payload, attempts, last_error FROM jobs WHERE id = $1 AND state = 'dead'",
        )
        .bind(id.as_str())
        .fetch_optional(&self.pool)
        .await
        .map_err(port_error)?;
        match row {
            Some(row) => dead_job_from_row(&row),
            None => Ok(None),
        }
    }

    async fn revive(&self, id: &JobId, at: DateTime<Utc>) -> Result<bool, PortError> {
        // One statement: the guarded UPDATE, and a NOTIFY (delivered when it commits) that
        // wakes idle workers as a commit that enqueues does, only when a job was revived.
        let rows = sqlx::query(
            "WITH revived AS ( \
                 UPDATE jobs SET state = 'queued', run_at = $2, attempts = 0, claims = 0, \
                 lease_token = NULL, lease_until = NULL \
                 WHERE id = $1 AND state = 'dead' RETURNING id) \
             SELECT pg_notify($3, '') FROM revived",
        )
        .bind(id.as_str())
        .bind(at)
        .bind(JOBS_CHANNEL)
        .fetch_all(&self.pool)
        .await
        .map_err(port_error)?;
        Ok(!rows.is_empty())
    }
}

/// `now + lease`, or the end of time when that overflows.
fn lease_end(now: DateTime<Utc>, lease: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(lease)
        .ok()
        .and_then(|lease| now.checked_add_signed(lease))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// Moves a leased job to `dead`; `false` when the lease token is stale.
async fn park(pool: &PgPool, id: &str, lease_token: &str, error: &str) -> Result<bool, PortError> {
    let done = sqlx::query(
        "UPDATE jobs SET state = 'dead', last_error = $3, lease_token = NULL, \
         lease_until = NULL WHERE id = $1 AND lease_token = $2 AND state = 'running'",
    )
    .bind(id)
    .bind(lease_token)
    .bind(error)
    .execute(pool)
    .await
    .map_err(port_error)?;
    Ok(done.rows_affected() > 0)
}

/// A dead job from a row of `id, payload, attempts, last_error`; `None` (logged) when this
/// version cannot read its payload.
fn dead_job_from_row(row: &sqlx::postgres::PgRow) -> Result<Option<DeadJob>, PortError> {
    let id: String = row.try_get("id").map_err(port_error)?;
    let attempts: i32 = row.try_get("attempts").map_err(port_error)?;
    let last_error: Option<String> = row.try_get("last_error").map_err(port_error)?;
    let payload: Json<Value> = row.try_get("payload").map_err(port_error)?;
    match serde_json::from_value::<JobPayload>(payload.0) {
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
