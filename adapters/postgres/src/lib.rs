//! Posthorn's `Store` and `Jobs` ports on PostgreSQL (sqlx, runtime queries).
//!
//! One [`PgStore`] serves both ports from one connection pool (and a few connections of
//! its own for the batched reads, see `batch_pool`): a change set's jobs are
//! written in the same transaction as its records (a transactional outbox), claimed with
//! `FOR UPDATE SKIP LOCKED`, and announced on the `posthorn_jobs` channel so that waiting
//! workers wake up without polling.

mod batch;
mod batch_pool;
mod batcher;
mod commit;
pub mod contact_counts;
#[cfg(all(test, posthorn_pg_tests))]
mod contact_counts_tests;
mod contacts;
mod domain_reads;
mod error;
mod event_reads;
mod feedback_reads;
mod group;
mod idempotency;
mod inbound;
mod job_settlements;
mod jobs;
mod matching;
mod record_reads;
mod records;
mod rows;
mod segments;
mod sns;
mod store;
mod suppression_facts;
#[cfg(all(test, posthorn_pg_tests))]
mod test_db;
pub mod testing;
mod wake;
mod workflow_commit;
mod workflow_rows;
mod workflows;

use std::sync::Arc;
use std::time::Duration;

use posthorn_core::ports::StoreError;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;

/// The channel a commit that enqueued jobs notifies, and `wait_for_work` listens on.
pub const JOBS_CHANNEL: &str = "posthorn_jobs";

/// The channel a commit that changes workspaces or key sets notifies, so that every
/// process drops its cache of authenticated keys (a revoked key stops working at once).
pub const ACCESS_CHANNEL: &str = "posthorn_access";

/// Connections a pool opened by [`PgStore::connect`] keeps at most.
const MAX_CONNECTIONS: u32 = 16;

/// How long a statement may wait for a connection (a free one, or a new one while the
/// database is unreachable) before it fails as `Unavailable`.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// The PostgreSQL adapter: implements `Store` and `Jobs` over one pool.
///
/// Cheap to clone; clones share the pool and the job wake-up listener.
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    wake: Arc<wake::Wake>,
    /// The batched reads' connections, which use generic plans (see `batch_pool`).
    batch_pool: PgPool,
    /// Commits concurrent change sets together.
    group: Arc<group::Group>,
    /// Answers concurrent event reads together.
    event_reads: Arc<event_reads::EventReadBatches>,
    /// Answers concurrent reads of a workspace's domains together.
    domain_reads: Arc<domain_reads::DomainReadBatches>,
    /// Answers concurrent reads of an email or a workspace together.
    record_reads: Arc<record_reads::RecordReadBatches>,
    /// Completes the jobs that concurrent workers finish together.
    settlements: Arc<job_settlements::JobSettlements>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").finish_non_exhaustive()
    }
}

impl PgStore {
    /// Opens a pool to `url` (`postgres://user@host:port/db`) and applies the migrations.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let options: PgConnectOptions = url
            .parse()
            .map_err(|e| StoreError::Unavailable(format!("invalid PostgreSQL URL: {e}")))?;
        Self::connect_with(options).await
    }

    /// Opens a pool with ready-made connection options and applies the migrations.
    pub async fn connect_with(options: PgConnectOptions) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            // While the database is down sqlx keeps retrying the connection until this
            // deadline: short, so that requests are refused (503) rather than held.
            .acquire_timeout(ACQUIRE_TIMEOUT)
            // No ping before each use: a broken connection fails its query, which surfaces
            // as `Unavailable` (and jobs retry); the ping cost a round trip per request.
            .test_before_acquire(false)
            .connect_with(options)
            .await
            .map_err(error::store)?;
        let store = Self::from_pool(pool);
        store.migrate().await?;
        Ok(store)
    }

    /// Wraps an existing pool; does not migrate (call [`PgStore::migrate`]).
    pub fn from_pool(pool: PgPool) -> Self {
        let batches = batch_pool::batch_pool(&pool);
        Self {
            wake: Arc::new(wake::Wake::new(pool.clone())),
            group: Arc::new(group::Group::new(pool.clone())),
            event_reads: Arc::new(event_reads::EventReadBatches::new(
                pool.clone(),
                batches.clone(),
            )),
            domain_reads: Arc::new(domain_reads::DomainReadBatches::new(batches.clone())),
            record_reads: Arc::new(record_reads::RecordReadBatches::new(batches.clone())),
            settlements: Arc::new(job_settlements::JobSettlements::new(pool.clone())),
            batch_pool: batches,
            pool,
        }
    }

    /// Applies the embedded migrations that are not applied yet (safe to run concurrently:
    /// sqlx serialises migrators with an advisory lock).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        sqlx::migrate!("./migrations")
            .run(&self.pool)
            .await
            .map_err(|e| StoreError::Unavailable(format!("migration failed: {e}")))
    }

    /// The underlying pool, for health checks and operator tooling.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Closes the store's connections (the pool's and the batched reads'), waiting for those in
    /// use to come back.
    pub async fn close(&self) {
        self.batch_pool.close().await;
        self.pool.close().await;
    }
}
