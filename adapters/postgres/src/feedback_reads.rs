//! `Store::feedback_reads` in one statement: the email without its content, whether the
//! workspace tracks any segment, and whether the event concerns a workflow. The tracked
//! segments themselves take a second statement only when there are some (as for
//! `event_reads`).

use posthorn_core::model::{EmailId, WorkspaceId};
use posthorn_core::ports::{FeedbackReads, StoreError};
use sqlx::{PgPool, Row};

use crate::rows::{self, email_cols_without_content};
use crate::{error, segments};

/// $1 workspace, $2 email id, $3 event name: the email's row (none when there is no such
/// email) with `has_tracked` and `event_interest` (`workflows::EVENT_INTEREST` for the
/// email's contact).
const FEEDBACK_READS: &str = concat!(
    "SELECT ",
    email_cols_without_content!(),
    ", EXISTS (SELECT 1 FROM segments s WHERE s.workspace_id = $1 \
       AND s.segment_type = 'DYNAMIC' AND s.track_membership) AS has_tracked, \
     (EXISTS (SELECT 1 FROM workflows w WHERE w.workspace_id = $1 \
       AND w.trigger_event_name = $3 AND w.enabled) \
      OR EXISTS (SELECT 1 FROM workflow_executions x WHERE x.workspace_id = $1 \
       AND x.contact_id = emails.contact_id AND x.wait_event_name = $3 \
       AND x.status = 'WAITING')) AS event_interest \
     FROM emails WHERE workspace_id = $1 AND id = $2"
);

/// What recording feedback about the email `id` reads first (`Store::feedback_reads`).
pub(crate) async fn feedback_reads(
    pool: &PgPool,
    workspace_id: &WorkspaceId,
    id: &EmailId,
    event_name: &str,
) -> Result<FeedbackReads, StoreError> {
    let row = sqlx::query(FEEDBACK_READS)
        .bind(workspace_id.as_str())
        .bind(id.as_str())
        .bind(event_name)
        .fetch_optional(pool)
        .await
        .map_err(error::store)?;
    let Some(row) = row else {
        return Ok(FeedbackReads::no_email());
    };
    let email = rows::email(&row)?;
    let has_tracked: bool = row.try_get("has_tracked").map_err(error::store)?;
    let tracked_segments = if has_tracked {
        segments::tracked_segments(pool, workspace_id.as_str()).await?
    } else {
        Vec::new()
    };
    Ok(FeedbackReads {
        email: Some(email),
        tracked_segments,
        event_interest: row.try_get("event_interest").map_err(error::store)?,
    })
}
