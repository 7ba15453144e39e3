//! `Store::domains` shared by concurrent callers: every send checks its sender's domain and
//! every delivery reads it for its DKIM key, so the reads that arrive while one is in flight
//! are answered by one statement for all their workspaces (see [`crate::batcher`]).

use std::collections::HashMap;
use std::sync::Arc;

use posthorn_core::model::Domain;
use posthorn_core::ports::StoreError;
use sqlx::PgPool;

use crate::batcher::{fail_all, Batcher};
use crate::error;
use crate::rows::{self, domain_cols};

/// Most domain reads answered by one statement.
const MAX_BATCH: usize = 128;

/// Most batches in flight at once (each holds a pooled connection).
pub(crate) const RUNNERS: usize = 1;

/// The domains of the workspaces in $1, each workspace's oldest first (the order of a read
/// of one workspace).
const DOMAINS_OF: &str = concat!(
    "SELECT ",
    domain_cols!(),
    " FROM domains WHERE workspace_id = ANY($1) ORDER BY workspace_id, created_at, id"
);

/// The queue of domain reads waiting for their statement.
pub(crate) struct DomainReadBatches {
    batcher: Batcher<String, Vec<Domain>>,
}

impl DomainReadBatches {
    /// Domain reads on `pool`.
    pub(crate) fn new(pool: PgPool) -> Self {
        let serve = Arc::new(move |workspaces: Vec<String>| {
            let pool = pool.clone();
            Box::pin(async move { read_all(&pool, workspaces).await }) as _
        });
        Self {
            batcher: Batcher::new(MAX_BATCH, RUNNERS, serve),
        }
    }

    /// The domains of `workspace_id`, oldest first.
    pub(crate) async fn domains(&self, workspace_id: &str) -> Result<Vec<Domain>, StoreError> {
        self.batcher.call(workspace_id.to_owned()).await
    }

    /// Statements run so far.
    #[cfg(all(test, posthorn_pg_tests))]
    pub(crate) fn batches(&self) -> u64 {
        self.batcher.batches()
    }
}

/// Answers every read of `workspaces` with one statement; a failed statement fails every
/// read of the batch (a read has no side effect, so each caller may simply try again).
async fn read_all(pool: &PgPool, workspaces: Vec<String>) -> Vec<Result<Vec<Domain>, StoreError>> {
    let mut distinct = workspaces.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let found = sqlx::query(DOMAINS_OF)
        .bind(&distinct)
        .fetch_all(pool)
        .await
        .map_err(error::store)
        .and_then(|found| rows::all(&found, rows::domain));
    match found {
        Ok(domains) => {
            let mut by_workspace: HashMap<String, Vec<Domain>> = HashMap::new();
            for domain in domains {
                by_workspace
                    .entry(domain.workspace_id.to_string())
                    .or_default()
                    .push(domain);
            }
            workspaces
                .iter()
                .map(|ws| Ok(by_workspace.get(ws).cloned().unwrap_or_default()))
                .collect()
        }
        Err(failure) => fail_all(workspaces.len(), &failure),
    }
}

#[cfg(all(test, posthorn_pg_tests))]
mod tests;
