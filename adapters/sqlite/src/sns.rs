//! The record of processed SNS messages (`sns_messages`).

use chrono::{DateTime, Utc};
use posthorn_core::ports::StoreError;
use sqlx::{SqliteConnection, SqlitePool};

use crate::error;
use crate::rows::micros;

/// Whether `message_id` was recorded.
pub(crate) async fn seen(pool: &SqlitePool, message_id: &str) -> Result<bool, StoreError> {
    let found: Option<(i64,)> = sqlx::query_as("SELECT 1 FROM sns_messages WHERE message_id = ?")
        .bind(message_id.to_string())
        .fetch_optional(pool)
        .await
        .map_err(error::store)?;
    Ok(found.is_some())
}

/// Records `message_id`; the primary key makes a second record a `Conflict`.
pub(crate) async fn record(
    conn: &mut SqliteConnection,
    message_id: &str,
    processed_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO sns_messages (message_id, processed_at) VALUES (?, ?)")
        .bind(message_id.to_string())
        .bind(micros(processed_at))
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}

/// Deletes the records of messages processed before `before`; how many.
pub(crate) async fn purge(pool: &SqlitePool, before: DateTime<Utc>) -> Result<u64, StoreError> {
    Ok(
        sqlx::query("DELETE FROM sns_messages WHERE processed_at < ?")
            .bind(micros(before))
            .execute(pool)
            .await
            .map_err(error::store)?
            .rows_affected(),
    )
}
