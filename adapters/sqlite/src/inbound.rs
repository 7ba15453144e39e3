//! Received mail (`inbound_emails`): its writes and its one read.

use posthorn_core::model::{EmailId, InboundEmail, ProviderVerdicts, WorkspaceId};
use posthorn_core::ports::StoreError;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection, SqlitePool};

use crate::error::{self, corrupt};
use crate::rows::{instant, json_text, micros};

/// Inserts a received message; `Conflict` when the id exists.
pub(crate) async fn insert(
    conn: &mut SqliteConnection,
    e: &InboundEmail,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO inbound_emails (workspace_id, id, envelope_from, recipients, client_ip, \
         helo, raw, received_at, processed_at, provider_verdicts) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )
    .bind(e.workspace_id.as_str())
    .bind(e.id.as_str())
    .bind(e.envelope_from.clone())
    .bind(json_text(&e.recipients))
    .bind(e.client_ip.map(|ip| ip.to_string()))
    .bind(e.helo.clone())
    .bind(e.raw.clone())
    .bind(micros(e.received_at))
    .bind(e.processed_at.map(micros))
    .bind((!e.provider_verdicts.is_empty()).then(|| json_text(&e.provider_verdicts)))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// Sets `processed_at` of an unprocessed message; `Conflict` when gone or processed.
pub(crate) async fn mark_processed(
    conn: &mut SqliteConnection,
    workspace_id: &WorkspaceId,
    id: &EmailId,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<(), StoreError> {
    let done = sqlx::query(
        "UPDATE inbound_emails SET processed_at = ?3 \
         WHERE workspace_id = ?1 AND id = ?2 AND processed_at IS NULL",
    )
    .bind(workspace_id.as_str())
    .bind(id.as_str())
    .bind(micros(at))
    .execute(conn)
    .await
    .map_err(error::store)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Conflict(format!(
            "inbound email {id} is gone or already processed"
        )));
    }
    Ok(())
}

/// Drops the raw bytes of processed messages received before `before`.
pub(crate) async fn purge_raw(
    conn: &mut SqliteConnection,
    before: chrono::DateTime<chrono::Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE inbound_emails SET raw = NULL \
         WHERE raw IS NOT NULL AND processed_at IS NOT NULL AND received_at < ?1",
    )
    .bind(micros(before))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// A received message by id.
pub(crate) async fn get(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    id: &EmailId,
) -> Result<Option<InboundEmail>, StoreError> {
    let row = sqlx::query(
        "SELECT workspace_id, id, envelope_from, recipients, client_ip, helo, raw, received_at, \
         processed_at, provider_verdicts FROM inbound_emails WHERE workspace_id = ? AND id = ?",
    )
    .bind(workspace_id.as_str())
    .bind(id.as_str())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(decode).transpose()
}

fn decode(row: &SqliteRow) -> Result<InboundEmail, StoreError> {
    let bad = |c: &str, e: sqlx::Error| corrupt(&format!("inbound_emails.{c}"), e);
    let recipients: String = row
        .try_get("recipients")
        .map_err(|e| bad("recipients", e))?;
    let client_ip: Option<String> = row.try_get("client_ip").map_err(|e| bad("client_ip", e))?;
    let received_at: i64 = row
        .try_get("received_at")
        .map_err(|e| bad("received_at", e))?;
    let processed_at: Option<i64> = row
        .try_get("processed_at")
        .map_err(|e| bad("processed_at", e))?;
    let verdicts: Option<String> = row
        .try_get("provider_verdicts")
        .map_err(|e| bad("provider_verdicts", e))?;
    Ok(InboundEmail {
        id: EmailId::from(row.try_get::<String, _>("id").map_err(|e| bad("id", e))?),
        workspace_id: WorkspaceId::from(
            row.try_get::<String, _>("workspace_id")
                .map_err(|e| bad("workspace_id", e))?,
        ),
        envelope_from: row
            .try_get("envelope_from")
            .map_err(|e| bad("envelope_from", e))?,
        recipients: serde_json::from_str(&recipients)
            .map_err(|e| corrupt("inbound_emails.recipients", e))?,
        client_ip: client_ip
            .map(|ip| {
                ip.parse()
                    .map_err(|e| corrupt("inbound_emails.client_ip", e))
            })
            .transpose()?,
        helo: row.try_get("helo").map_err(|e| bad("helo", e))?,
        raw: row.try_get("raw").map_err(|e| bad("raw", e))?,
        received_at: instant("inbound_emails.received_at", received_at)?,
        processed_at: processed_at
            .map(|v| instant("inbound_emails.processed_at", v))
            .transpose()?,
        provider_verdicts: verdicts
            .map(|v| {
                serde_json::from_str::<ProviderVerdicts>(&v)
                    .map_err(|e| corrupt("inbound_emails.provider_verdicts", e))
            })
            .transpose()?
            .unwrap_or_default(),
    })
}
