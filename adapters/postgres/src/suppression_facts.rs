//! `Store::suppression_facts` in one statement: the newest subscription, complaint,
//! permanent bounce and unsubscription of a contact, each from the `(workspace_id,
//! contact_id, name, created_at)` index of its events.

use posthorn_core::model::{ContactId, WorkspaceId};
use posthorn_core::ports::{StoreError, SuppressionFacts};
use sqlx::{PgPool, Row};

use crate::error;

/// The newest id of the contact's events of one name (and `extra` condition): `max` of an
/// expression, not of `id`, so that the planner walks the `(workspace_id, contact_id, name,
/// created_at)` index (a few entries) and not the `(workspace_id, contact_id, id DESC)` one
/// backwards until it meets the name, which for a contact with a million tracked events and
/// no such event reads them all (seen in `EXPLAIN ANALYZE`).
macro_rules! newest_id {
    ($name:literal, $extra:literal) => {
        concat!(
            "(SELECT max((id || '') COLLATE \"C\") FROM events WHERE workspace_id = $1 \
             AND contact_id = $2 AND name = '",
            $name,
            "'",
            $extra,
            ")"
        )
    };
}

/// $1 workspace, $2 contact id. Newest is the greatest id, as `Store::events` orders.
const SUPPRESSION_FACTS: &str = concat!(
    "SELECT ",
    newest_id!("contact.subscribed", ""),
    " AS subscribed, ",
    newest_id!("email.complaint", ""),
    " AS complained, ",
    newest_id!("email.bounce", " AND data->>'bounceType' = 'Permanent'"),
    " AS bounced, (SELECT data->>'reason' FROM events WHERE workspace_id = $1 AND id = ",
    newest_id!("contact.unsubscribed", ""),
    ") AS unsubscribe_reason"
);

/// What deciding whether mail to the contact is suppressed reads.
pub(crate) async fn suppression_facts(
    pool: &PgPool,
    workspace_id: &WorkspaceId,
    contact_id: &ContactId,
) -> Result<SuppressionFacts, StoreError> {
    let row = sqlx::query(SUPPRESSION_FACTS)
        .bind(workspace_id.as_str())
        .bind(contact_id.as_str())
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    let column = |name: &str| row.try_get(name).map_err(error::store);
    Ok(SuppressionFacts::from_columns([
        column("subscribed")?,
        column("complained")?,
        column("bounced")?,
        column("unsubscribe_reason")?,
    ]))
}
