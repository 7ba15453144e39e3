//! Test support: a fresh, migrated database per test on a shared server.
//!
//! Used by this crate's tests and by any crate that runs its tests against PostgreSQL
//! (`POSTHORN_TEST_DATABASE_URL`). Each call creates a uniquely named database, so tests
//! never see each other's rows and never need cleaning up between them.

use posthorn_core::ports::StoreError;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{AssertSqlSafe, ConnectOptions, Connection};

use crate::PgStore;

/// Prefix of every database made by [`fresh_database`].
pub const TEST_DATABASE_PREFIX: &str = "posthorn_test_";

/// A store on a new, migrated database named `posthorn_test_<uuid>` on the server of
/// `admin_url` (whose own database is only used to run `CREATE DATABASE`).
/// Returns the store and the new database's name (for [`drop_database`]).
pub async fn fresh_database(admin_url: &str) -> Result<(PgStore, String), StoreError> {
    let admin: PgConnectOptions = admin_url
        .parse()
        .map_err(|e| StoreError::Unavailable(format!("invalid PostgreSQL URL: {e}")))?;
    let name = format!("{TEST_DATABASE_PREFIX}{}", uuid::Uuid::new_v4().simple());
    let mut conn = admin.connect().await.map_err(crate::error::store)?;
    // Identifiers cannot be bound; this one is made here of `[a-z0-9_]` only.
    sqlx::query(AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&mut conn)
        .await
        .map_err(crate::error::store)?;
    close(conn).await;
    let store = PgStore::connect_with(admin.database(&name)).await?;
    Ok((store, name))
}

/// Drops a database made by [`fresh_database`], disconnecting whoever still uses it.
/// Refuses names without the test prefix.
pub async fn drop_database(admin_url: &str, name: &str) -> Result<(), StoreError> {
    let safe = name.starts_with(TEST_DATABASE_PREFIX)
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !safe {
        return Err(StoreError::Unavailable(format!(
            "refusing to drop {name:?}: not a test database"
        )));
    }
    let admin: PgConnectOptions = admin_url
        .parse()
        .map_err(|e| StoreError::Unavailable(format!("invalid PostgreSQL URL: {e}")))?;
    let mut conn = admin.connect().await.map_err(crate::error::store)?;
    // Checked above to be a test database name of `[a-z0-9_]` only.
    sqlx::query(AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
    )))
    .execute(&mut conn)
    .await
    .map_err(crate::error::store)?;
    close(conn).await;
    Ok(())
}

/// The plans PostgreSQL makes, with sequential scans disabled, for the workflow reads that
/// run on every stored event (`has_event_interest`, then `waiting_executions`): a plan
/// that still scans a table means no index serves the read.
pub async fn event_read_plans(store: &PgStore) -> Result<Vec<String>, StoreError> {
    let mut tx = store.pool().begin().await.map_err(crate::error::store)?;
    sqlx::query("SET LOCAL enable_seqscan = off")
        .execute(&mut *tx)
        .await
        .map_err(crate::error::store)?;
    let mut plans = Vec::new();
    // Constant statements of this crate; the values are bound.
    for (sql, binds) in [
        (
            crate::workflows::EVENT_INTEREST,
            ["ws", "signup", "contact"],
        ),
        (crate::workflows::WAITING, ["ws", "contact", "signup"]),
    ] {
        let mut query =
            sqlx::query_scalar::<_, String>(AssertSqlSafe(format!("EXPLAIN (COSTS OFF) {sql}")));
        for value in binds {
            query = query.bind(value);
        }
        let lines = query
            .fetch_all(&mut *tx)
            .await
            .map_err(crate::error::store)?;
        plans.push(lines.join("\n"));
    }
    tx.rollback().await.map_err(crate::error::store)?;
    Ok(plans)
}

async fn close(conn: PgConnection) {
    if let Err(err) = conn.close().await {
        tracing::debug!(error = %err, "closing the admin connection failed");
    }
}
