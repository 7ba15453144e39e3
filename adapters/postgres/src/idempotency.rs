//! `Idempotency-Key` records: written inside a change set's transaction, read on a repeated
//! key, purged once expired.

use chrono::{DateTime, Utc};
use posthorn_core::model::{IdempotencyRecord, StoredAnswer};
use posthorn_core::ports::StoreError;
use sqlx::{PgConnection, PgPool};

use crate::error;

/// Inserts `record`, replacing an expired record of the same key; `Conflict` when an
/// unexpired one holds the key.
pub(crate) async fn put(
    conn: &mut PgConnection,
    record: &IdempotencyRecord,
) -> Result<(), StoreError> {
    let written = sqlx::query(
        "INSERT INTO idempotency_records \
           (scope, key, fingerprint, status, content_type, body, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (scope, key) DO UPDATE SET \
           fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, \
           content_type = EXCLUDED.content_type, body = EXCLUDED.body, \
           created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at \
         WHERE idempotency_records.expires_at <= EXCLUDED.created_at",
    )
    .bind(&record.scope)
    .bind(&record.key)
    .bind(&record.fingerprint)
    .bind(i32::from(record.answer.status))
    .bind(&record.answer.content_type)
    .bind(&record.answer.body)
    .bind(record.created_at)
    .bind(record.expires_at)
    .execute(conn)
    .await
    .map_err(error::store)?
    .rows_affected();
    if written == 0 {
        return Err(StoreError::Conflict(format!(
            "idempotency key {:?} is already recorded",
            record.key
        )));
    }
    Ok(())
}

type Row = (
    String,
    String,
    String,
    i32,
    Option<String>,
    Vec<u8>,
    DateTime<Utc>,
    DateTime<Utc>,
);

/// The unexpired record of (`scope`, `key`).
pub(crate) async fn get(
    pool: &PgPool,
    scope: &str,
    key: &str,
    now: DateTime<Utc>,
) -> Result<Option<IdempotencyRecord>, StoreError> {
    let row: Option<Row> = sqlx::query_as(
        "SELECT scope, key, fingerprint, status, content_type, body, created_at, expires_at \
         FROM idempotency_records WHERE scope = $1 AND key = $2 AND expires_at > $3",
    )
    .bind(scope)
    .bind(key)
    .bind(now)
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.map(record).transpose()
}

fn record(row: Row) -> Result<IdempotencyRecord, StoreError> {
    let (scope, key, fingerprint, status, content_type, body, created_at, expires_at) = row;
    let status = u16::try_from(status)
        .map_err(|e| error::corrupt(&format!("idempotency_records.status of {key:?}"), e))?;
    Ok(IdempotencyRecord {
        scope,
        key,
        fingerprint,
        answer: StoredAnswer {
            status,
            content_type,
            body,
        },
        created_at,
        expires_at,
    })
}

/// Deletes the records expired at `now`; how many.
pub(crate) async fn purge(pool: &PgPool, now: DateTime<Utc>) -> Result<u64, StoreError> {
    Ok(
        sqlx::query("DELETE FROM idempotency_records WHERE expires_at <= $1")
            .bind(now)
            .execute(pool)
            .await
            .map_err(error::store)?
            .rows_affected(),
    )
}
