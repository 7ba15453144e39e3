//! The record of processed SNS messages (`sns_messages`).

use chrono::{DateTime, Utc};
use posthorn_core::ports::StoreError;
use sqlx::{PgConnection, PgPool};

use crate::error;

/// Whether `message_id` was recorded.
pub(crate) async fn seen(pool: &PgPool, message_id: &str) -> Result<bool, StoreError> {
    let found: Option<(i32,)> = sqlx::query_as("SELECT 1 FROM sns_messages WHERE message_id = $1")
        .bind(message_id)
        .fetch_optional(pool)
        .await
        .map_err(error::store)?;
    Ok(found.is_some())
}

/// Records `message_id`; the primary key makes a second record a `Conflict`.
pub(crate) async fn record(
    conn: &mut PgConnection,
    message_id: &str,
    processed_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO sns_messages (message_id, processed_at) VALUES ($1, $2)")
        .bind(message_id)
        .bind(processed_at)
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}

/// Deletes the records of messages processed before `before`; how many.
pub(crate) async fn purge(pool: &PgPool, before: DateTime<Utc>) -> Result<u64, StoreError> {
    Ok(
        sqlx::query("DELETE FROM sns_messages WHERE processed_at < $1")
            .bind(before)
            .execute(pool)
            .await
            .map_err(error::store)?
            .rows_affected(),
    )
}
