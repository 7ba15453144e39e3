//! `Store::email` and `Store::workspace` shared by concurrent callers: every delivery reads
//! its email and its workspace first, so the reads that arrive while one is in flight are
//! answered by one statement each (see [`crate::batcher`]), not one round trip per job.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use posthorn_core::model::{EmailRecord, Workspace};
use posthorn_core::ports::StoreError;
use sqlx::postgres::PgRow;
use sqlx::PgPool;

use crate::batcher::{fail_all, Batcher};
use crate::error;
use crate::rows::{self, email_cols, workspace_cols};

/// Most reads answered by one statement.
const MAX_BATCH: usize = 128;

/// Most batches of a kind in flight at once (each holds a pooled connection).
pub(crate) const RUNNERS: usize = 1;

/// Kinds of record read batched apart (emails, workspaces).
pub(crate) const KINDS: usize = 2;

/// The emails of the (workspace, id) pairs in $1 and $2.
pub(crate) const EMAILS_OF: &str = concat!(
    "SELECT ",
    email_cols!(),
    " FROM emails WHERE (workspace_id, id) IN \
     (SELECT * FROM unnest($1::text[], $2::text[]))"
);

/// The workspaces whose ids are in $1.
const WORKSPACES_OF: &str = concat!(
    "SELECT ",
    workspace_cols!(),
    " FROM workspaces WHERE id = ANY($1)"
);

/// A (workspace, email) pair.
type EmailKey = (String, String);

/// The queues of email and workspace reads waiting for their statements.
pub(crate) struct RecordReadBatches {
    emails: Batcher<EmailKey, Option<EmailRecord>>,
    workspaces: Batcher<String, Option<Workspace>>,
}

impl RecordReadBatches {
    /// Email and workspace reads on `pool`.
    pub(crate) fn new(pool: PgPool) -> Self {
        let email_pool = pool.clone();
        let emails = Arc::new(move |keys: Vec<EmailKey>| {
            let pool = email_pool.clone();
            Box::pin(async move { read_emails(&pool, keys).await }) as _
        });
        let workspaces = Arc::new(move |ids: Vec<String>| {
            let pool = pool.clone();
            Box::pin(async move { read_workspaces(&pool, ids).await }) as _
        });
        Self {
            emails: Batcher::new(MAX_BATCH, RUNNERS, emails),
            workspaces: Batcher::new(MAX_BATCH, RUNNERS, workspaces),
        }
    }

    /// The email `id` of `workspace_id`.
    pub(crate) async fn email(
        &self,
        workspace_id: &str,
        id: &str,
    ) -> Result<Option<EmailRecord>, StoreError> {
        self.emails
            .call((workspace_id.to_owned(), id.to_owned()))
            .await
    }

    /// The workspace `id`.
    pub(crate) async fn workspace(&self, id: &str) -> Result<Option<Workspace>, StoreError> {
        self.workspaces.call(id.to_owned()).await
    }

    /// Statements run so far (emails, workspaces).
    #[cfg(all(test, posthorn_pg_tests))]
    pub(crate) fn batches(&self) -> (u64, u64) {
        (self.emails.batches(), self.workspaces.batches())
    }
}

async fn read_emails(
    pool: &PgPool,
    keys: Vec<EmailKey>,
) -> Vec<Result<Option<EmailRecord>, StoreError>> {
    let (workspaces, ids): (Vec<&str>, Vec<&str>) = keys
        .iter()
        .map(|(ws, id)| (ws.as_str(), id.as_str()))
        .unzip();
    let found = sqlx::query(EMAILS_OF)
        .bind(&workspaces)
        .bind(&ids)
        .fetch_all(pool)
        .await;
    answer(keys, found, rows::email, |e: &EmailRecord| {
        (e.workspace_id.to_string(), e.id.to_string())
    })
}

async fn read_workspaces(
    pool: &PgPool,
    ids: Vec<String>,
) -> Vec<Result<Option<Workspace>, StoreError>> {
    let found = sqlx::query(WORKSPACES_OF).bind(&ids).fetch_all(pool).await;
    answer(ids, found, rows::workspace, |w: &Workspace| {
        w.id.to_string()
    })
}

/// Each key's record among the rows `found` (none when no row has its key); a failed
/// statement or row fails every read of the batch (a read has no side effect, so each
/// caller may simply try again).
fn answer<K, V>(
    keys: Vec<K>,
    found: Result<Vec<PgRow>, sqlx::Error>,
    decode: fn(&PgRow) -> Result<V, StoreError>,
    key_of: impl Fn(&V) -> K,
) -> Vec<Result<Option<V>, StoreError>>
where
    K: Eq + Hash,
    V: Clone,
{
    let records = found
        .map_err(error::store)
        .and_then(|found| rows::all(&found, decode));
    match records {
        Ok(records) => {
            let by_key: HashMap<K, V> = records.into_iter().map(|r| (key_of(&r), r)).collect();
            keys.iter().map(|k| Ok(by_key.get(k).cloned())).collect()
        }
        Err(failure) => fail_all(keys.len(), &failure),
    }
}

#[cfg(all(test, posthorn_pg_tests))]
mod tests;
