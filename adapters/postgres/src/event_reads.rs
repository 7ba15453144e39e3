//! `Store::event_reads` in one round trip shared by concurrent callers: the contact by
//! address, whether the workspace tracks any segment, and whether the event concerns a
//! workflow, as one statement for every event read waiting (see [`crate::batcher`]). The
//! tracked segments themselves take a second statement only when there are some.

use std::sync::Arc;

use posthorn_core::model::{Contact, WorkspaceId};
use posthorn_core::ports::{EventReads, StoreError};
use sqlx::postgres::PgRow;
use sqlx::{PgPool, Row};

use crate::batcher::{fail_all, Batcher};
use crate::rows::{self, contact_cols};
use crate::{error, segments};

/// Most event reads answered by one statement.
const MAX_BATCH: usize = 128;

/// Most batches in flight at once (each holds a pooled connection).
pub(crate) const RUNNERS: usize = 1;

/// $1 workspaces, $2 lower-cased addresses, $3 event names (NULL for a read without an
/// event, whose interest is then false), one element per read; one row per read, in the
/// arrays' order, whose contact columns are NULL when no contact has the address. The
/// interest is `workflows::EVENT_INTEREST` for the contact found (none waits for a missing
/// one). The reads' own columns are prefixed `q_` so that the contact's
/// columns stay unambiguous. The contact is a `LATERAL` subquery with `LIMIT 1` (a fence
/// the planner does not flatten) so that every plan probes the unique index once per read:
/// as a plain join, a plan made while the table was small hashes a scan of the whole
/// table, and PostgreSQL keeps such a cached plan until the table's next `ANALYZE`, while
/// the table grows under it.
pub(crate) const EVENT_READS: &str = concat!(
    "SELECT ",
    contact_cols!(),
    ", EXISTS (SELECT 1 FROM segments s WHERE s.workspace_id = r.q_ws \
       AND s.segment_type = 'DYNAMIC' AND s.track_membership) AS has_tracked, \
     (EXISTS (SELECT 1 FROM workflows w WHERE w.workspace_id = r.q_ws \
       AND w.trigger_event_name = r.q_event AND w.enabled) \
      OR EXISTS (SELECT 1 FROM workflow_executions x WHERE x.workspace_id = r.q_ws \
       AND x.contact_id = c.id AND x.wait_event_name = r.q_event AND x.status = 'WAITING')) \
       AS event_interest \
     FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY \
       AS r(q_ws, q_email, q_event, q_ord) \
     LEFT JOIN LATERAL (SELECT * FROM contacts c WHERE c.workspace_id = r.q_ws \
       AND c.email = r.q_email LIMIT 1) c ON true \
     ORDER BY r.q_ord"
);

/// One event read: the workspace, the lower-cased address and the event's name, if any.
pub(crate) struct EventRead {
    workspace_id: String,
    email: String,
    event_name: Option<String>,
}

/// What one row answers before the tracked segments are read.
struct Answer {
    contact: Option<Contact>,
    has_tracked: bool,
    event_interest: bool,
}

/// The queue of event reads waiting for their statement.
pub(crate) struct EventReadBatches {
    batcher: Batcher<EventRead, Answer>,
    pool: PgPool,
}

impl EventReadBatches {
    /// Event reads batched on `batch_pool`; the rare reads one by one on `pool`.
    pub(crate) fn new(pool: PgPool, batch_pool: PgPool) -> Self {
        let serve = Arc::new(move |reads: Vec<EventRead>| {
            let pool = batch_pool.clone();
            Box::pin(async move { read_all(&pool, reads).await }) as _
        });
        Self {
            batcher: Batcher::new(MAX_BATCH, RUNNERS, serve),
            pool,
        }
    }

    /// The reads of storing an event named `event_name` (or none) for the contact with
    /// address `email`.
    pub(crate) async fn event_reads(
        &self,
        workspace_id: &WorkspaceId,
        email: &str,
        event_name: Option<&str>,
    ) -> Result<EventReads, StoreError> {
        let answer = self
            .batcher
            .call(EventRead {
                workspace_id: workspace_id.as_str().to_owned(),
                email: email.to_lowercase(),
                event_name: event_name.map(str::to_owned),
            })
            .await?;
        let tracked_segments = if answer.has_tracked {
            segments::tracked_segments(&self.pool, workspace_id.as_str()).await?
        } else {
            Vec::new()
        };
        Ok(EventReads {
            contact: answer.contact,
            tracked_segments,
            event_interest: answer.event_interest,
        })
    }

    /// Statements run so far.
    #[cfg(all(test, posthorn_pg_tests))]
    pub(crate) fn batches(&self) -> u64 {
        self.batcher.batches()
    }
}

/// Answers `reads` with one statement; a failed statement fails every read of the batch
/// (a read has no side effect, so each caller may simply try again).
async fn read_all(pool: &PgPool, reads: Vec<EventRead>) -> Vec<Result<Answer, StoreError>> {
    let count = reads.len();
    let mut workspaces = Vec::with_capacity(count);
    let mut emails = Vec::with_capacity(count);
    let mut events = Vec::with_capacity(count);
    for read in reads {
        workspaces.push(read.workspace_id);
        emails.push(read.email);
        events.push(read.event_name);
    }
    let rows = sqlx::query(EVENT_READS)
        .bind(workspaces)
        .bind(emails)
        .bind(events)
        .fetch_all(pool)
        .await;
    let failure = match rows {
        Ok(rows) if rows.len() == count => return rows.iter().map(answer).collect(),
        Ok(rows) => StoreError::Unavailable(format!(
            "{count} event reads answered with {} rows",
            rows.len()
        )),
        Err(err) => error::store(err),
    };
    fail_all(count, &failure)
}

fn answer(row: &PgRow) -> Result<Answer, StoreError> {
    let found: Option<String> = row.try_get("id").map_err(error::store)?;
    Ok(Answer {
        contact: found.map(|_| rows::contact(row)).transpose()?,
        has_tracked: row.try_get("has_tracked").map_err(error::store)?,
        event_interest: row.try_get("event_interest").map_err(error::store)?,
    })
}

#[cfg(all(test, posthorn_pg_tests))]
mod tests;
