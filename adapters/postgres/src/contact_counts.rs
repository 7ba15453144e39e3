//! How many contacts each workspace has, by status and subscription (`contact_counts`,
//! migrations 0016 and 0017): rows of changes, summed by a count and folded once they are
//! many.

use sqlx::{PgConnection, PgPool};

use posthorn_core::ports::StoreError;

use crate::error;

/// Rows a workspace may gather before a count folds them into one per status and
/// subscription: a sum over this many rows is still a few index entries' work.
const FOLD_AFTER: i64 = 64;

/// Which contacts a kept count counts.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counted<'a> {
    /// Of this status only.
    pub status: Option<&'a str>,
    /// Subscribed (or unsubscribed) only.
    pub subscribed: Option<bool>,
}

/// How many contacts of the workspace `which` counts; `None` when the counts cannot say:
/// a subscription filter while the workspace still has rows of unknown subscription
/// (written by a server older than migration 0017), so the caller counts the contacts.
pub(crate) async fn kept(
    pool: &PgPool,
    workspace_id: &str,
    which: Counted<'_>,
) -> Result<Option<u64>, StoreError> {
    let (n, rows, unknown): (Option<i64>, i64, i64) = sqlx::query_as(
        "SELECT sum(n) FILTER (WHERE $3::boolean IS NULL OR subscribed = $3)::bigint, \
                count(*), count(*) FILTER (WHERE subscribed IS NULL) \
         FROM contact_counts \
         WHERE workspace_id = $1 AND ($2::text IS NULL OR status = $2)",
    )
    .bind(workspace_id)
    .bind(which.status)
    .bind(which.subscribed)
    .fetch_one(pool)
    .await
    .map_err(error::store)?;
    if rows > FOLD_AFTER {
        // Only speed depends on it: the sum is the same before and after.
        if let Err(err) = fold(pool, workspace_id).await {
            tracing::warn!(error = %err, "folding the contact counts failed");
        }
    }
    if which.subscribed.is_some() && unknown > 0 {
        return Ok(None);
    }
    Ok(Some(u64::try_from(n.unwrap_or(0)).unwrap_or(0)))
}

/// Replaces the workspace's rows by one per status and subscription, in one statement:
/// rows added meanwhile are not in its snapshot and stay, and a concurrent fold finds the
/// rows this one deleted gone, so every change is counted once.
pub(crate) async fn fold(pool: &PgPool, workspace_id: &str) -> Result<(), StoreError> {
    sqlx::query(
        "WITH gone AS (DELETE FROM contact_counts WHERE workspace_id = $1 \
                       RETURNING status, subscribed, n) \
         INSERT INTO contact_counts (workspace_id, status, subscribed, n) \
         SELECT $1, status, subscribed, sum(n) FROM gone GROUP BY status, subscribed \
         HAVING sum(n) <> 0",
    )
    .bind(workspace_id)
    .execute(pool)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// Counts every contact again, for contacts that were loaded around the store (`COPY`, a
/// `posthorn export`), which only the store's own inserts count as they go.
pub async fn rebuild(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM contact_counts")
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO contact_counts (workspace_id, status, subscribed, n) \
         SELECT workspace_id, status, subscribed, count(*) FROM contacts \
         GROUP BY workspace_id, status, subscribed",
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}
