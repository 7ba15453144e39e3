//! Applying a change set's writes in order inside an open transaction (the transaction
//! and its savepoints are [`crate::group`]'s).

use posthorn_core::model::{
    Campaign, Contact, DkimKeyPair, Domain, DomainId, EmailRecord, KeySet, Segment, Template,
    Workspace, WorkspaceId,
};
use posthorn_core::ports::{check_active_limit, ChangeSet, NewJob, StoreError, Write};
use sqlx::{QueryBuilder, SqliteConnection};

use crate::batch::{self, Inserts, OnConflict};
use crate::error;
use crate::idempotency;
use crate::inbound;
use crate::rows::{condition_text, enum_text, json_text, micros, opt_micros, to_i64};
use crate::workflow_commit;

/// Whether `changes` enqueues jobs.
pub(crate) fn enqueues(changes: &ChangeSet) -> bool {
    changes.enqueues()
}

/// Applies every write of `changes`, in order, inside the open transaction (or savepoint)
/// of `conn`; on an error the caller rolls back.
pub(crate) async fn apply_all(
    conn: &mut SqliteConnection,
    changes: &ChangeSet,
) -> Result<(), StoreError> {
    apply_group(conn, &[changes]).await
}

/// Applies the writes of every change set of `group`, in order, inside the open
/// transaction of `conn`: plain inserts are held back across change sets and written
/// together, before any other write (which could observe them) and at the end. A change
/// set's `GuardActiveLimit`s are checked after its last write. On an error (of any of
/// them) the caller rolls back.
pub(crate) async fn apply_group(
    conn: &mut SqliteConnection,
    group: &[&ChangeSet],
) -> Result<(), StoreError> {
    let mut held = Inserts::default();
    for changes in group {
        for write in &changes.writes {
            match write {
                Write::GuardActiveLimit { .. } => {}
                w if held.hold(w) => {}
                // Any other write first writes what was held back, in order.
                other => {
                    held.flush(&mut *conn).await?;
                    apply(&mut *conn, other).await?;
                }
            }
        }
        let limits = changes.active_limits();
        if !limits.is_empty() {
            held.flush(&mut *conn).await?;
            for (workspace_id, limit) in limits {
                within_active_limit(&mut *conn, workspace_id, limit).await?;
            }
        }
    }
    held.flush(&mut *conn).await
}

/// Applies one write inside the open transaction.
async fn apply(conn: &mut SqliteConnection, write: &Write) -> Result<(), StoreError> {
    match write {
        Write::PutWorkspace(w) => put_workspace(conn, w).await,
        Write::PutKeySet(k) => put_key_set(conn, k).await,
        Write::DeleteKeySet { workspace_id, id } => {
            delete(
                conn,
                "DELETE FROM key_sets WHERE workspace_id = ? AND id = ?",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await
        }
        Write::GuardDomain {
            workspace_id,
            id,
            updated_at,
        } => {
            let row = (workspace_id.as_str(), id.as_str(), *updated_at);
            guard_updated_at(conn, GUARD_DOMAINS, row, "domain").await
        }
        Write::GuardTemplate {
            workspace_id,
            id,
            updated_at,
        } => {
            let row = (workspace_id.as_str(), id.as_str(), *updated_at);
            guard_updated_at(conn, GUARD_TEMPLATES, row, "template").await
        }
        Write::KeepAKeySet { workspace_id } => keep_a_key_set(conn, workspace_id.as_str()).await,
        // Checked by `apply_group` after the change set's last write.
        Write::GuardActiveLimit { .. } => Ok(()),
        Write::InsertDomain(d) => insert_domain(conn, d).await,
        Write::UpdateDomain(d) => update_domain(conn, d).await,
        Write::DeleteDomain { workspace_id, id } => {
            delete(
                conn,
                "DELETE FROM domains WHERE workspace_id = ? AND id = ?",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await
        }
        Write::SetDomainDkimKey {
            workspace_id,
            id,
            key,
        } => set_dkim_key(conn, workspace_id, id, key).await,
        Write::UpdateContact(c) => update_contact(conn, c).await,
        Write::DeleteContact { workspace_id, id } => {
            delete(
                conn,
                "DELETE FROM contacts WHERE workspace_id = ? AND id = ?",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await?;
            delete(
                conn,
                "DELETE FROM segment_members WHERE workspace_id = ? AND contact_id = ?",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await
        }
        Write::PutTemplate(t) => put_template(conn, t).await,
        Write::DeleteTemplate { workspace_id, id } => {
            delete(
                conn,
                "DELETE FROM templates WHERE workspace_id = ? AND id = ?",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await
        }
        // Plain inserts are held back and written in bulk by `commit`; alone, they are a
        // bulk of one.
        Write::InsertContact(_)
        | Write::InsertEmail(_)
        | Write::EnqueueJob(_)
        | Write::AppendEvent(_) => {
            let mut one = Inserts::default();
            one.hold(write);
            one.flush(conn).await
        }
        Write::EnqueueJobUnlessPending(job) => enqueue_unless_pending(conn, job).await,
        Write::UpdateEmail(e) => update_email(conn, e).await,
        Write::GuardEmail {
            workspace_id,
            id,
            updated_at,
        } => {
            let row = (workspace_id.as_str(), id.as_str(), *updated_at);
            guard_updated_at(conn, GUARD_EMAILS, row, "email").await
        }
        Write::PutSegment(s) => put_segment(conn, s).await,
        Write::SegmentSynced {
            workspace_id,
            segment_id,
            tracking_since,
        } => {
            segment_synced(
                conn,
                workspace_id.as_str(),
                segment_id.as_str(),
                *tracking_since,
            )
            .await
        }
        Write::DeleteSegment { workspace_id, id } => {
            delete(
                conn,
                "DELETE FROM segments WHERE workspace_id = ? AND id = ?",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await?;
            delete(
                conn,
                "DELETE FROM segment_members WHERE workspace_id = ? AND segment_id = ?",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await
        }
        Write::AddSegmentMember {
            workspace_id,
            segment_id,
            contact_id,
        } => {
            add_member(
                conn,
                workspace_id.as_str(),
                segment_id.as_str(),
                contact_id.as_str(),
            )
            .await
        }
        Write::RemoveSegmentMember {
            workspace_id,
            segment_id,
            contact_id,
        } => {
            remove_member(
                conn,
                workspace_id.as_str(),
                segment_id.as_str(),
                contact_id.as_str(),
            )
            .await
        }
        Write::InsertCampaign(c) => insert_campaign(conn, c).await,
        Write::UpdateCampaign(c) => update_campaign(conn, c).await,
        Write::DeleteCampaign { workspace_id, id } => {
            delete(
                conn,
                "DELETE FROM campaigns WHERE workspace_id = ? AND id = ?",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await
        }
        Write::InsertInboundEmail(e) => inbound::insert(conn, e).await,
        Write::MarkInboundProcessed {
            workspace_id,
            id,
            at,
        } => inbound::mark_processed(conn, workspace_id, id, *at).await,
        Write::PurgeInboundRaw { before } => inbound::purge_raw(conn, *before).await,
        Write::PutWorkflow(_)
        | Write::DeleteWorkflow { .. }
        | Write::PutStep(_)
        | Write::DeleteStep { .. }
        | Write::PutTransition(_)
        | Write::DeleteTransition { .. }
        | Write::InsertExecution(_)
        | Write::UpdateExecution(_)
        | Write::InsertStepRun(_)
        | Write::UpdateStepRun(_)
        | Write::PutSigningKeys { .. }
        | Write::InsertSigningKeys { .. } => workflow_commit::apply(conn, write).await,
        Write::PutIdempotency(record) => idempotency::put(conn, record).await,
        Write::RecordSnsMessage {
            message_id,
            processed_at,
        } => crate::sns::record(conn, message_id, *processed_at).await,
    }
}

/// `Conflict` when a guarded write matched no row.
fn expect_one(rows: u64, what: impl FnOnce() -> String) -> Result<(), StoreError> {
    if rows == 0 {
        Err(StoreError::Conflict(what()))
    } else {
        Ok(())
    }
}

async fn delete(
    conn: &mut SqliteConnection,
    sql: &'static str,
    workspace_id: &str,
    id: &str,
) -> Result<(), StoreError> {
    sqlx::query(sql)
        .bind(workspace_id.to_string())
        .bind(id.to_string())
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}

async fn put_workspace(conn: &mut SqliteConnection, w: &Workspace) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO workspaces (id, name, disabled, active_contact_limit, \
         rate_limit_per_minute, send_rate_per_second, created_at, updated_at, track_opens, \
         track_clicks) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, disabled = excluded.disabled, \
         active_contact_limit = excluded.active_contact_limit, \
         rate_limit_per_minute = excluded.rate_limit_per_minute, \
         send_rate_per_second = excluded.send_rate_per_second, \
         created_at = excluded.created_at, updated_at = excluded.updated_at, \
         track_opens = excluded.track_opens, track_clicks = excluded.track_clicks",
    )
    .bind(w.id.as_str())
    .bind(w.name.clone())
    .bind(w.disabled)
    .bind(w.active_contact_limit.map(to_i64))
    .bind(i64::from(w.rate_limit_per_minute))
    .bind(w.send_rate_per_second)
    .bind(micros(w.created_at))
    .bind(micros(w.updated_at))
    .bind(w.track_opens)
    .bind(w.track_clicks)
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

async fn put_key_set(conn: &mut SqliteConnection, k: &KeySet) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO key_sets (workspace_id, id, name, domains, public_key_hash, \
         secret_key_hash, public_key_preview, secret_key_preview, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
         ON CONFLICT (workspace_id, id) DO UPDATE SET name = excluded.name, \
         domains = excluded.domains, public_key_hash = excluded.public_key_hash, \
         secret_key_hash = excluded.secret_key_hash, \
         public_key_preview = excluded.public_key_preview, \
         secret_key_preview = excluded.secret_key_preview, created_at = excluded.created_at",
    )
    .bind(k.workspace_id.as_str())
    .bind(k.id.as_str())
    .bind(k.name.clone())
    .bind(json_text(&k.domains))
    .bind(k.public_key_hash.clone())
    .bind(k.secret_key_hash.clone())
    .bind(k.public_key_preview.clone())
    .bind(k.secret_key_preview.clone())
    .bind(micros(k.created_at))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

async fn insert_domain(conn: &mut SqliteConnection, d: &Domain) -> Result<(), StoreError> {
    let (private, public) = d.dkim.as_ref().map(|k| k.to_stored()).unzip();
    sqlx::query(
        "INSERT INTO domains (workspace_id, id, domain, verified, inbound_enabled, created_at, \
         updated_at, verification_token, dkim_selector, dkim_private_key, dkim_public_key, \
         verified_by_operator, checks) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )
    .bind(d.workspace_id.as_str())
    .bind(d.id.as_str())
    .bind(d.domain.clone())
    .bind(d.verified)
    .bind(d.inbound_enabled)
    .bind(micros(d.created_at))
    .bind(micros(d.updated_at))
    .bind(d.verification_token.clone())
    .bind(d.dkim_selector.clone())
    .bind(private)
    .bind(public)
    .bind(d.verified_by_operator)
    .bind(json_text(&d.checks))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

async fn update_domain(conn: &mut SqliteConnection, d: &Domain) -> Result<(), StoreError> {
    let done = sqlx::query(
        "UPDATE domains SET domain = ?3, verified = ?4, inbound_enabled = ?5, created_at = ?6, \
         updated_at = ?7, verification_token = ?8, dkim_selector = ?9, \
         verified_by_operator = ?10, checks = ?11 WHERE workspace_id = ?1 AND id = ?2",
    )
    .bind(d.workspace_id.as_str())
    .bind(d.id.as_str())
    .bind(d.domain.clone())
    .bind(d.verified)
    .bind(d.inbound_enabled)
    .bind(micros(d.created_at))
    .bind(micros(d.updated_at))
    .bind(d.verification_token.clone())
    .bind(d.dkim_selector.clone())
    .bind(d.verified_by_operator)
    .bind(json_text(&d.checks))
    .execute(conn)
    .await
    .map_err(error::store)?;
    expect_one(done.rows_affected(), || format!("domain {} is gone", d.id))
}

/// Stores a DKIM key pair on a domain without one (a no-op otherwise).
async fn set_dkim_key(
    conn: &mut SqliteConnection,
    workspace_id: &WorkspaceId,
    id: &DomainId,
    key: &DkimKeyPair,
) -> Result<(), StoreError> {
    let (private, public) = key.to_stored();
    sqlx::query(
        "UPDATE domains SET dkim_private_key = ?3, dkim_public_key = ?4 \
         WHERE workspace_id = ?1 AND id = ?2 AND dkim_private_key IS NULL",
    )
    .bind(workspace_id.as_str())
    .bind(id.as_str())
    .bind(private)
    .bind(public)
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

async fn update_contact(conn: &mut SqliteConnection, c: &Contact) -> Result<(), StoreError> {
    let mut q = QueryBuilder::new("");
    batch::push_contact_update(&mut q, c, OnConflict::Abort);
    let done = q.build().execute(conn).await.map_err(error::store)?;
    expect_one(done.rows_affected(), || {
        format!("contact {} is gone or not at version {}", c.id, c.version)
    })
}

async fn put_template(conn: &mut SqliteConnection, t: &Template) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO templates (workspace_id, id, name, description, subject, body, text, \
         from_address, from_name, reply_to, template_type, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) \
         ON CONFLICT (workspace_id, id) DO UPDATE SET name = excluded.name, \
         description = excluded.description, subject = excluded.subject, \
         body = excluded.body, text = excluded.text, from_address = excluded.from_address, \
         from_name = excluded.from_name, reply_to = excluded.reply_to, \
         template_type = excluded.template_type, created_at = excluded.created_at, \
         updated_at = excluded.updated_at",
    )
    .bind(t.workspace_id.as_str())
    .bind(t.id.as_str())
    .bind(t.name.clone())
    .bind(t.description.clone())
    .bind(t.subject.clone())
    .bind(t.body.clone())
    .bind(t.text.clone())
    .bind(t.from.clone())
    .bind(t.from_name.clone())
    .bind(t.reply_to.clone())
    .bind(enum_text(&t.template_type))
    .bind(micros(t.created_at))
    .bind(micros(t.updated_at))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// Writes the email's state only: what it was accepted with is never rewritten (see
/// `Write::UpdateEmail`).
async fn update_email(conn: &mut SqliteConnection, e: &EmailRecord) -> Result<(), StoreError> {
    let mut q = QueryBuilder::new("");
    batch::push_email_update(&mut q, e, OnConflict::Abort);
    let done = q.build().execute(conn).await.map_err(error::store)?;
    expect_one(done.rows_affected(), || format!("email {} is gone", e.id))
}
/// `Write::GuardEmail`.
const GUARD_EMAILS: &str =
    "SELECT 1 FROM emails WHERE workspace_id = ? AND id = ? AND updated_at = ?";
/// `Write::GuardDomain`.
const GUARD_DOMAINS: &str =
    "SELECT 1 FROM domains WHERE workspace_id = ? AND id = ? AND updated_at = ?";
/// `Write::GuardTemplate`.
const GUARD_TEMPLATES: &str =
    "SELECT 1 FROM templates WHERE workspace_id = ? AND id = ? AND updated_at = ?";

/// A guard on a row's `updated_at` (`sql` selects the row `(workspace id, id)` stored with
/// it): `Conflict` unless it is.
async fn guard_updated_at(
    conn: &mut SqliteConnection,
    sql: &'static str,
    (workspace_id, id, updated_at): (&str, &str, chrono::DateTime<chrono::Utc>),
    what: &str,
) -> Result<(), StoreError> {
    let found: Option<i64> = sqlx::query_scalar(sql)
        .bind(workspace_id)
        .bind(id)
        .bind(micros(updated_at))
        .fetch_optional(&mut *conn)
        .await
        .map_err(error::store)?;
    expect_one(u64::from(found.is_some()), || {
        format!("{what} {id} changed since it was read")
    })
}

/// `Write::KeepAKeySet` (one writer: nothing else changes key sets meanwhile).
async fn keep_a_key_set(conn: &mut SqliteConnection, workspace_id: &str) -> Result<(), StoreError> {
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM key_sets WHERE workspace_id = ?")
        .bind(workspace_id)
        .fetch_one(&mut *conn)
        .await
        .map_err(error::store)?;
    if left == 0 {
        return Err(StoreError::Conflict(format!(
            "workspace {workspace_id} would have no key set left"
        )));
    }
    Ok(())
}

/// `Write::GuardActiveLimit`, after the change set's writes (one writer: no other commit
/// changes the count meanwhile). The kept counts (`contact_counts`) include this
/// transaction's own writes.
async fn within_active_limit(
    conn: &mut SqliteConnection,
    workspace_id: &WorkspaceId,
    limit: u64,
) -> Result<(), StoreError> {
    let active: i64 = sqlx::query_scalar(
        "SELECT coalesce(sum(n), 0) FROM contact_counts \
         WHERE workspace_id = ? AND status = 'ACTIVE'",
    )
    .bind(workspace_id.as_str())
    .fetch_one(&mut *conn)
    .await
    .map_err(error::store)?;
    check_active_limit(workspace_id, u64::try_from(active).unwrap_or(0), limit)
}

async fn put_segment(conn: &mut SqliteConnection, s: &Segment) -> Result<(), StoreError> {
    // The snapshot state is the store's: kept while tracking stays as it was (a write that
    // read the segment earlier cannot move it), reset when tracking is switched.
    sqlx::query(
        "INSERT INTO segments (workspace_id, id, name, description, segment_type, condition, \
         track_membership, created_at, updated_at, tracking_since) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
         ON CONFLICT (workspace_id, id) DO UPDATE SET name = excluded.name, \
         description = excluded.description, segment_type = excluded.segment_type, \
         condition = excluded.condition, track_membership = excluded.track_membership, \
         created_at = excluded.created_at, updated_at = excluded.updated_at, \
         tracking_since = CASE WHEN segments.track_membership = excluded.track_membership \
         THEN segments.tracking_since ELSE excluded.tracking_since END, \
         members_synced_for = CASE WHEN segments.track_membership = excluded.track_membership \
         THEN segments.members_synced_for END",
    )
    .bind(s.workspace_id.as_str())
    .bind(s.id.as_str())
    .bind(s.name.clone())
    .bind(s.description.clone())
    .bind(enum_text(&s.segment_type))
    .bind(s.condition.as_ref().map(condition_text))
    .bind(s.track_membership)
    .bind(micros(s.created_at))
    .bind(micros(s.updated_at))
    .bind(opt_micros(s.tracking_since))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// `Write::EnqueueJobUnlessPending`: a job with the id that is queued or running (inserted
/// earlier in this change set included) stays as it is; a dead one becomes the new job.
async fn enqueue_unless_pending(
    conn: &mut SqliteConnection,
    job: &NewJob,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO jobs (id, payload, run_at) VALUES (?1, ?2, ?3) \
         ON CONFLICT (id) DO UPDATE SET payload = excluded.payload, \
         run_at = excluded.run_at, attempts = 0, claims = 0, state = 'queued', \
         lease_token = NULL, lease_until = NULL, last_error = NULL \
         WHERE jobs.state = 'dead'",
    )
    .bind(job.id.as_str())
    .bind(json_text(&job.payload))
    .bind(micros(job.run_at))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// `Write::SegmentSynced`: only for the tracking period the snapshot began in.
async fn segment_synced(
    conn: &mut SqliteConnection,
    workspace_id: &str,
    segment_id: &str,
    tracking_since: chrono::DateTime<chrono::Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE segments SET members_synced_for = tracking_since \
         WHERE workspace_id = ?1 AND id = ?2 AND track_membership \
         AND tracking_since = ?3",
    )
    .bind(workspace_id)
    .bind(segment_id)
    .bind(micros(tracking_since))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

async fn add_member(
    conn: &mut SqliteConnection,
    workspace_id: &str,
    segment_id: &str,
    contact_id: &str,
) -> Result<(), StoreError> {
    // Only for a contact and a segment that exist (one writer: nothing deletes them
    // between this check and the commit), so a membership never outlives them.
    let done = sqlx::query(
        "INSERT INTO segment_members (workspace_id, segment_id, contact_id) \
         SELECT s.workspace_id, s.id, c.id FROM segments s, contacts c \
         WHERE s.workspace_id = ?1 AND s.id = ?2 AND c.workspace_id = ?1 AND c.id = ?3 \
         ON CONFLICT DO NOTHING",
    )
    .bind(workspace_id.to_string())
    .bind(segment_id.to_string())
    .bind(contact_id.to_string())
    .execute(conn)
    .await
    .map_err(error::store)?;
    expect_one(done.rows_affected(), || {
        format!(
            "contact {contact_id} is already a member of segment {segment_id}, or one of \
             them is gone"
        )
    })
}

async fn remove_member(
    conn: &mut SqliteConnection,
    workspace_id: &str,
    segment_id: &str,
    contact_id: &str,
) -> Result<(), StoreError> {
    let done = sqlx::query(
        "DELETE FROM segment_members \
         WHERE workspace_id = ?1 AND segment_id = ?2 AND contact_id = ?3",
    )
    .bind(workspace_id.to_string())
    .bind(segment_id.to_string())
    .bind(contact_id.to_string())
    .execute(conn)
    .await
    .map_err(error::store)?;
    expect_one(done.rows_affected(), || {
        format!("contact {contact_id} is not a member of segment {segment_id}")
    })
}

/// Binds every column of a campaign but `version`, in `campaign_cols!` order
/// (?1 = workspace, ?2 = id, ..., ?21 = updated_at).
macro_rules! bind_campaign {
    ($query:expr, $c:expr) => {
        $query
            .bind($c.workspace_id.as_str())
            .bind($c.id.as_str())
            .bind($c.name.clone())
            .bind($c.description.clone())
            .bind($c.subject.clone())
            .bind($c.body.clone())
            .bind($c.from.clone())
            .bind($c.from_name.clone())
            .bind($c.reply_to.clone())
            .bind(enum_text(&$c.audience_type))
            .bind($c.segment_id.as_ref().map(|id| id.as_str()))
            .bind($c.audience_condition.as_ref().map(condition_text))
            .bind(enum_text(&$c.status))
            .bind(opt_micros($c.scheduled_for))
            .bind(opt_micros($c.sent_at))
            .bind(to_i64($c.total_recipients))
            .bind($c.audience_until_id.as_ref().map(|id| id.as_str()))
            .bind($c.expanded_through_id.as_ref().map(|id| id.as_str()))
            .bind($c.expansion_done)
            .bind(micros($c.created_at))
            .bind(micros($c.updated_at))
    };
}

async fn insert_campaign(conn: &mut SqliteConnection, c: &Campaign) -> Result<(), StoreError> {
    let query = sqlx::query(concat!(
        "INSERT INTO campaigns (",
        crate::rows::campaign_cols!(),
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
         ?17, ?18, ?19, ?20, ?21, 0)"
    ));
    bind_campaign!(query, c)
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}

async fn update_campaign(conn: &mut SqliteConnection, c: &Campaign) -> Result<(), StoreError> {
    let query = sqlx::query(
        "UPDATE campaigns SET name = ?3, description = ?4, subject = ?5, body = ?6, \
         from_address = ?7, from_name = ?8, reply_to = ?9, audience_type = ?10, \
         segment_id = ?11, audience_condition = ?12, status = ?13, scheduled_for = ?14, \
         sent_at = ?15, total_recipients = ?16, audience_until_id = ?17, \
         expanded_through_id = ?18, expansion_done = ?19, created_at = ?20, \
         updated_at = ?21, version = version + 1 \
         WHERE workspace_id = ?1 AND id = ?2 AND version = ?22",
    );
    let done = bind_campaign!(query, c)
        .bind(to_i64(c.version))
        .execute(conn)
        .await
        .map_err(error::store)?;
    expect_one(done.rows_affected(), || {
        format!("campaign {} is gone or not at version {}", c.id, c.version)
    })
}
