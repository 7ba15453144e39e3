//! Test support: a fresh store in its own temporary directory per call.
//!
//! Used by this crate's tests and by any crate that runs its tests against SQLite. Each
//! store lives in a new directory that is removed when the last clone of the store is
//! dropped, so tests never see each other's rows and need no cleaning up.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use posthorn_core::ports::StoreError;
use sqlx::{QueryBuilder, Sqlite};

use crate::error::{self, SqliteError};
use crate::options::SqliteOptions;
use crate::{matching, open, rows, SqliteStore};

/// The database file's name inside a temporary store's directory.
pub const TEMPORARY_FILE_NAME: &str = "posthorn.db";

/// A store on a new, migrated database in a new temporary directory (removed with the
/// store), opened with `options`.
pub async fn temporary_with(options: SqliteOptions) -> Result<SqliteStore, SqliteError> {
    let dir = tempfile::Builder::new()
        .prefix("posthorn-sqlite-")
        .tempdir()
        .map_err(|source| SqliteError::Io {
            action: "cannot create a temporary directory in",
            path: std::env::temp_dir(),
            source,
        })?;
    let path = dir.path().join(TEMPORARY_FILE_NAME);
    open::open(&path, &options, Some(Arc::new(dir))).await
}

/// A store on a new, migrated database in a new temporary directory (removed with the
/// store), with the default options.
pub async fn temporary() -> Result<SqliteStore, SqliteError> {
    temporary_with(SqliteOptions::default()).await
}

/// What the SQL that recognises timestamps in contact data makes of each string: the
/// instant, or `None` when it is not a timestamp. For checking it against
/// `posthorn_core::segment::parse_timestamp`.
pub async fn sql_timestamps(
    store: &SqliteStore,
    candidates: &[String],
) -> Result<Vec<Option<DateTime<Utc>>>, StoreError> {
    let mut out = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        let mut sql = QueryBuilder::<Sqlite>::new("SELECT ");
        matching::push_timestamp(&mut sql, "t");
        sql.push(" FROM (SELECT ")
            .push_bind(candidate.clone())
            .push(" AS t)");
        let micros: Option<i64> = sql
            .build_query_scalar()
            .fetch_one(&store.readers)
            .await
            .map_err(error::store)?;
        out.push(micros.map(|m| rows::instant("timestamp", m)).transpose()?);
    }
    Ok(out)
}

/// The query plans SQLite makes for the workflow reads that run on every stored event
/// (`has_event_interest`, then `waiting_executions`), one `EXPLAIN QUERY PLAN` detail per
/// line: a `SCAN` means no index serves the read.
pub async fn event_read_plans(store: &SqliteStore) -> Result<Vec<String>, StoreError> {
    let mut plans = Vec::new();
    // Constant statements of this crate; the values are bound.
    for (sql, binds) in [
        (
            crate::workflows::EVENT_INTEREST,
            ["ws", "signup", "contact"],
        ),
        (crate::workflows::WAITING, ["ws", "contact", "signup"]),
    ] {
        plans.push(query_plan(store, sql, &binds).await?);
    }
    Ok(plans)
}

/// The plan SQLite makes for `sql` with `binds` (parameters left over stay unbound, which
/// `EXPLAIN QUERY PLAN` does not need), one detail per line.
pub(crate) async fn query_plan(
    store: &SqliteStore,
    sql: &str,
    binds: &[&str],
) -> Result<String, StoreError> {
    let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(sqlx::AssertSqlSafe(format!(
        "EXPLAIN QUERY PLAN {sql}"
    )));
    for value in binds {
        query = query.bind(value.to_string());
    }
    let rows = query
        .fetch_all(&store.readers)
        .await
        .map_err(error::store)?;
    let details: Vec<String> = rows.into_iter().map(|(_, _, _, detail)| detail).collect();
    Ok(details.join("\n"))
}
