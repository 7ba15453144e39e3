//! `Store::event_reads` in one round trip: the contact by address, whether the workspace
//! tracks any segment, and whether the event concerns a workflow, as one statement. The
//! tracked segments themselves take a second statement only when there are some.

use posthorn_core::model::WorkspaceId;
use posthorn_core::ports::{EventReads, StoreError};
use sqlx::{PgPool, Row};

use crate::rows::{self, contact_cols};
use crate::{error, segments};

/// $1 workspace, $2 lower-cased address, $3 event name; always one row, whose contact
/// columns are NULL when no contact has the address. The interest is
/// `workflows::EVENT_INTEREST` for the contact found (none waits for a missing one).
const EVENT_READS: &str = concat!(
    "SELECT ",
    contact_cols!(),
    ", EXISTS (SELECT 1 FROM segments s WHERE s.workspace_id = $1 \
       AND s.segment_type = 'DYNAMIC' AND s.track_membership) AS has_tracked, \
     (EXISTS (SELECT 1 FROM workflows w WHERE w.workspace_id = $1 \
       AND w.trigger_event_name = $3 AND w.enabled) \
      OR EXISTS (SELECT 1 FROM workflow_executions x WHERE x.workspace_id = $1 \
       AND x.contact_id = c.id AND x.wait_event_name = $3 AND x.status = 'WAITING')) \
       AS event_interest \
     FROM (SELECT 1) AS one \
     LEFT JOIN contacts c ON c.workspace_id = $1 AND c.email = $2"
);

/// The reads of storing an event named `event_name` for the contact with address `email`.
pub(crate) async fn event_reads(
    pool: &PgPool,
    workspace_id: &WorkspaceId,
    email: &str,
    event_name: &str,
) -> Result<EventReads, StoreError> {
    let row = sqlx::query(EVENT_READS)
        .bind(workspace_id.as_str())
        .bind(email.to_lowercase())
        .bind(event_name)
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    let found: Option<String> = row.try_get("id").map_err(error::store)?;
    let contact = found.map(|_| rows::contact(&row)).transpose()?;
    let has_tracked: bool = row.try_get("has_tracked").map_err(error::store)?;
    let tracked_segments = if has_tracked {
        segments::tracked_segments(pool, workspace_id.as_str()).await?
    } else {
        Vec::new()
    };
    Ok(EventReads {
        contact,
        tracked_segments,
        event_interest: row.try_get("event_interest").map_err(error::store)?,
    })
}
