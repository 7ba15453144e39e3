//! `Store::commit`'s writes: a change set's writes applied in order inside the transaction
//! (and savepoint) of its group (see [`crate::group`]).

use posthorn_core::model::{
    Campaign, Contact, DkimKeyPair, Domain, DomainId, KeySet, Segment, Template, Workspace,
    WorkspaceId,
};
use posthorn_core::ports::{check_active_limit, ChangeSet, NewJob, StoreError, Write};
use sqlx::types::Json;
use sqlx::PgConnection;

use crate::batch::Inserts;
use crate::error;
use crate::idempotency;
use crate::inbound;
use crate::rows::{condition_text, enum_text, to_i64};
use crate::workflow_commit;
use crate::{ACCESS_CHANNEL, JOBS_CHANNEL};

/// Applies every write of `changes`, in order, inside the open transaction (or savepoint)
/// of `conn`, and announces its jobs and access changes; on an error the caller rolls back.
pub(crate) async fn apply_all(
    conn: &mut PgConnection,
    changes: &ChangeSet,
) -> Result<(), StoreError> {
    apply_group(conn, &[changes]).await
}

/// Applies the writes of every change set of `group`, in order, inside the open
/// transaction of `conn`: plain inserts are held back across change sets and written
/// together; a change set's `GuardActiveLimit`s are checked after its last write; each
/// notification is sent once for the group. On an error (of any of them) the caller rolls
/// back.
pub(crate) async fn apply_group(
    conn: &mut PgConnection,
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
                    held.flush(conn).await?;
                    apply(conn, other).await?;
                }
            }
        }
        // In workspace order: one order for the row locks of several workspaces.
        let limits = changes.active_limits();
        if !limits.is_empty() {
            held.flush(conn).await?;
            for (workspace_id, limit) in limits {
                within_active_limit(conn, workspace_id, limit).await?;
            }
        }
    }
    held.flush(conn).await?;
    for (channel, wanted) in [
        (JOBS_CHANNEL, group.iter().any(|c| enqueues(c))),
        (ACCESS_CHANNEL, group.iter().any(|c| c.changes_access())),
    ] {
        if wanted {
            sqlx::query("SELECT pg_notify($1, '')")
                .bind(channel)
                .execute(&mut *conn)
                .await
                .map_err(error::store)?;
        }
    }
    Ok(())
}

/// Whether `changes` enqueues jobs.
pub(crate) fn enqueues(changes: &ChangeSet) -> bool {
    changes.enqueues()
}

/// Applies one write inside the open transaction.
async fn apply(conn: &mut PgConnection, write: &Write) -> Result<(), StoreError> {
    match write {
        Write::PutWorkspace(w) => put_workspace(conn, w).await,
        Write::PutKeySet(k) => put_key_set(conn, k).await,
        Write::DeleteKeySet { workspace_id, id } => {
            delete(
                conn,
                "DELETE FROM key_sets WHERE workspace_id = $1 AND id = $2",
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
            guard_row(conn, GUARD_DOMAIN, row, "domain").await
        }
        Write::GuardTemplate {
            workspace_id,
            id,
            updated_at,
        } => {
            let row = (workspace_id.as_str(), id.as_str(), *updated_at);
            guard_row(conn, GUARD_TEMPLATE, row, "template").await
        }
        Write::KeepAKeySet { workspace_id } => keep_a_key_set(conn, workspace_id.as_str()).await,
        // Checked by `apply_group` after the change set's last write.
        Write::GuardActiveLimit { .. } => Ok(()),
        Write::InsertDomain(d) => insert_domain(conn, d).await,
        Write::UpdateDomain(d) => update_domain(conn, d).await,
        Write::DeleteDomain { workspace_id, id } => delete_domain(conn, workspace_id, id).await,
        Write::SetDomainDkimKey {
            workspace_id,
            id,
            key,
        } => set_dkim_key(conn, workspace_id, id, key).await,
        Write::UpdateContact(c) => update_contact(conn, c).await,
        Write::DeleteContact { workspace_id, id } => {
            delete(
                conn,
                "DELETE FROM contacts WHERE workspace_id = $1 AND id = $2",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await?;
            delete(
                conn,
                "DELETE FROM segment_members WHERE workspace_id = $1 AND contact_id = $2",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await
        }
        Write::PutTemplate(t) => put_template(conn, t).await,
        Write::DeleteTemplate { workspace_id, id } => {
            delete(
                conn,
                "DELETE FROM templates WHERE workspace_id = $1 AND id = $2",
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
        Write::UpdateEmail(e) => {
            crate::batch::update_emails(conn, &[e], &std::collections::HashMap::new()).await
        }
        Write::GuardEmail {
            workspace_id,
            id,
            updated_at,
        } => crate::batch::guard_email(conn, workspace_id.as_str(), id.as_str(), *updated_at).await,
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
                "DELETE FROM segments WHERE workspace_id = $1 AND id = $2",
                workspace_id.as_str(),
                id.as_str(),
            )
            .await?;
            delete(
                conn,
                "DELETE FROM segment_members WHERE workspace_id = $1 AND segment_id = $2",
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
                "DELETE FROM campaigns WHERE workspace_id = $1 AND id = $2",
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

/// `Conflict` when a guarded update matched no row.
fn expect_one(rows: u64, what: impl FnOnce() -> String) -> Result<(), StoreError> {
    if rows == 0 {
        Err(StoreError::Conflict(what()))
    } else {
        Ok(())
    }
}

async fn delete(
    conn: &mut PgConnection,
    sql: &'static str,
    workspace_id: &str,
    id: &str,
) -> Result<(), StoreError> {
    sqlx::query(sql)
        .bind(workspace_id)
        .bind(id)
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}

async fn put_workspace(conn: &mut PgConnection, w: &Workspace) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO workspaces (id, name, disabled, active_contact_limit, \
         rate_limit_per_minute, send_rate_per_second, created_at, updated_at, track_opens, \
         track_clicks) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, disabled = EXCLUDED.disabled, \
         active_contact_limit = EXCLUDED.active_contact_limit, \
         rate_limit_per_minute = EXCLUDED.rate_limit_per_minute, \
         send_rate_per_second = EXCLUDED.send_rate_per_second, \
         created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, \
         track_opens = EXCLUDED.track_opens, track_clicks = EXCLUDED.track_clicks",
    )
    .bind(w.id.as_str())
    .bind(&w.name)
    .bind(w.disabled)
    .bind(w.active_contact_limit.map(to_i64))
    .bind(i64::from(w.rate_limit_per_minute))
    .bind(w.send_rate_per_second)
    .bind(w.created_at)
    .bind(w.updated_at)
    .bind(w.track_opens)
    .bind(w.track_clicks)
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

async fn put_key_set(conn: &mut PgConnection, k: &KeySet) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO key_sets (workspace_id, id, name, domains, public_key_hash, \
         secret_key_hash, public_key_preview, secret_key_preview, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT (workspace_id, id) DO UPDATE SET name = EXCLUDED.name, \
         domains = EXCLUDED.domains, public_key_hash = EXCLUDED.public_key_hash, \
         secret_key_hash = EXCLUDED.secret_key_hash, \
         public_key_preview = EXCLUDED.public_key_preview, \
         secret_key_preview = EXCLUDED.secret_key_preview, created_at = EXCLUDED.created_at",
    )
    .bind(k.workspace_id.as_str())
    .bind(k.id.as_str())
    .bind(&k.name)
    .bind(Json(&k.domains))
    .bind(&k.public_key_hash)
    .bind(&k.secret_key_hash)
    .bind(&k.public_key_preview)
    .bind(&k.secret_key_preview)
    .bind(k.created_at)
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

async fn insert_domain(conn: &mut PgConnection, d: &Domain) -> Result<(), StoreError> {
    let (private, public) = d.dkim.as_ref().map(|k| k.to_stored()).unzip();
    sqlx::query(
        "INSERT INTO domains (workspace_id, id, domain, verified, inbound_enabled, created_at, \
         updated_at, verification_token, dkim_selector, dkim_private_key, dkim_public_key, \
         verified_by_operator, checks) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(d.workspace_id.as_str())
    .bind(d.id.as_str())
    .bind(&d.domain)
    .bind(d.verified)
    .bind(d.inbound_enabled)
    .bind(d.created_at)
    .bind(d.updated_at)
    .bind(&d.verification_token)
    .bind(&d.dkim_selector)
    .bind(private)
    .bind(public)
    .bind(d.verified_by_operator)
    .bind(Json(&d.checks))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

async fn update_domain(conn: &mut PgConnection, d: &Domain) -> Result<(), StoreError> {
    let done = sqlx::query(
        "UPDATE domains SET domain = $3, verified = $4, inbound_enabled = $5, created_at = $6, \
         updated_at = $7, verification_token = $8, dkim_selector = $9, \
         verified_by_operator = $10, checks = $11 WHERE workspace_id = $1 AND id = $2",
    )
    .bind(d.workspace_id.as_str())
    .bind(d.id.as_str())
    .bind(&d.domain)
    .bind(d.verified)
    .bind(d.inbound_enabled)
    .bind(d.created_at)
    .bind(d.updated_at)
    .bind(&d.verification_token)
    .bind(&d.dkim_selector)
    .bind(d.verified_by_operator)
    .bind(Json(&d.checks))
    .execute(conn)
    .await
    .map_err(error::store)?;
    expect_one(done.rows_affected(), || format!("domain {} is gone", d.id))
}

async fn delete_domain(
    conn: &mut PgConnection,
    workspace_id: &WorkspaceId,
    id: &DomainId,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM domains WHERE workspace_id = $1 AND id = $2")
        .bind(workspace_id.as_str())
        .bind(id.as_str())
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}

/// Stores a DKIM key pair on a domain without one (a no-op otherwise).
async fn set_dkim_key(
    conn: &mut PgConnection,
    workspace_id: &WorkspaceId,
    id: &DomainId,
    key: &DkimKeyPair,
) -> Result<(), StoreError> {
    let (private, public) = key.to_stored();
    sqlx::query(
        "UPDATE domains SET dkim_private_key = $3, dkim_public_key = $4 \
         WHERE workspace_id = $1 AND id = $2 AND dkim_private_key IS NULL",
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

async fn update_contact(conn: &mut PgConnection, c: &Contact) -> Result<(), StoreError> {
    let done = sqlx::query(
        "UPDATE contacts SET email = $4, subscribed = $5, data = $6, status = $7, \
         expires_at = $8, created_at = $9, updated_at = $10, version = version + 1 \
         WHERE workspace_id = $1 AND id = $2 AND version = $3",
    )
    .bind(c.workspace_id.as_str())
    .bind(c.id.as_str())
    .bind(to_i64(c.version))
    .bind(c.email.as_str())
    .bind(c.subscribed)
    .bind(Json(&c.data))
    .bind(enum_text(&c.status))
    .bind(c.expires_at)
    .bind(c.created_at)
    .bind(c.updated_at)
    .execute(conn)
    .await
    .map_err(error::store)?;
    expect_one(done.rows_affected(), || {
        format!("contact {} is gone or not at version {}", c.id, c.version)
    })
}

async fn put_template(conn: &mut PgConnection, t: &Template) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO templates (workspace_id, id, name, description, subject, body, text, \
         from_address, from_name, reply_to, template_type, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
         ON CONFLICT (workspace_id, id) DO UPDATE SET name = EXCLUDED.name, \
         description = EXCLUDED.description, subject = EXCLUDED.subject, \
         body = EXCLUDED.body, text = EXCLUDED.text, from_address = EXCLUDED.from_address, \
         from_name = EXCLUDED.from_name, reply_to = EXCLUDED.reply_to, \
         template_type = EXCLUDED.template_type, created_at = EXCLUDED.created_at, \
         updated_at = EXCLUDED.updated_at",
    )
    .bind(t.workspace_id.as_str())
    .bind(t.id.as_str())
    .bind(&t.name)
    .bind(&t.description)
    .bind(&t.subject)
    .bind(&t.body)
    .bind(&t.text)
    .bind(&t.from)
    .bind(&t.from_name)
    .bind(&t.reply_to)
    .bind(enum_text(&t.template_type))
    .bind(t.created_at)
    .bind(t.updated_at)
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}
/// `Write::GuardDomain`.
const GUARD_DOMAIN: &str = "SELECT 1 FROM domains WHERE workspace_id = $1 AND id = $2 \
     AND updated_at = $3 FOR UPDATE";
/// `Write::GuardTemplate`.
const GUARD_TEMPLATE: &str = "SELECT 1 FROM templates WHERE workspace_id = $1 AND id = $2 \
     AND updated_at = $3 FOR UPDATE";

/// A guard on a row's `updated_at` (`sql` selects it `FOR UPDATE`): the row stays locked
/// until the commit, so the write that follows the guard cannot overwrite a change made
/// after it.
pub(crate) async fn guard_row(
    conn: &mut PgConnection,
    sql: &'static str,
    (workspace_id, id, updated_at): (&str, &str, chrono::DateTime<chrono::Utc>),
    what: &str,
) -> Result<(), StoreError> {
    let found: Option<i32> = sqlx::query_scalar(sql)
        .bind(workspace_id)
        .bind(id)
        .bind(updated_at)
        .fetch_optional(&mut *conn)
        .await
        .map_err(error::store)?;
    match found {
        Some(_) => Ok(()),
        None => Err(StoreError::Conflict(format!(
            "{what} {id} changed since it was read"
        ))),
    }
}

/// `Write::KeepAKeySet`. Revocations in one workspace take turns on its row, so the later
/// one counts what the earlier one left (read committed: each statement sees the commits
/// made before it started).
async fn keep_a_key_set(conn: &mut PgConnection, workspace_id: &str) -> Result<(), StoreError> {
    sqlx::query("SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE")
        .bind(workspace_id)
        .execute(&mut *conn)
        .await
        .map_err(error::store)?;
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM key_sets WHERE workspace_id = $1")
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

/// Takes the row locks of every workspace whose active contact limit a change set of
/// `group` guards, all at once and in the order of their ids, before anything else of the
/// group's transaction: change sets guarding different workspaces in different orders in
/// two groups would otherwise take them in opposite orders and deadlock (the server
/// breaks it after `deadlock_timeout`, a second, and one group starts over). The guard
/// itself ([`within_active_limit`]) then finds its lock held.
pub(crate) async fn lock_limited_workspaces(
    conn: &mut PgConnection,
    group: &[&ChangeSet],
) -> Result<(), StoreError> {
    let mut ids: Vec<&str> = group
        .iter()
        .flat_map(|c| c.active_limits())
        .map(|(workspace_id, _)| workspace_id.as_str())
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    ids.sort_unstable();
    ids.dedup();
    // One row at a time: the order of a single statement's row locks is the plan's.
    for id in ids {
        sqlx::query("SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE")
            .bind(id)
            .execute(&mut *conn)
            .await
            .map_err(error::store)?;
    }
    Ok(())
}

/// `Write::GuardActiveLimit`, after the change set's writes. Commits that carry it for one
/// workspace take turns on the workspace's row (`FOR NO KEY UPDATE`: plain reads and key
/// shares go on), and the count is a statement of its own, made once the turn came: under
/// read committed it sees every commit made before it started, so also the ACTIVE contacts
/// of the commit that had the turn before; the kept counts (`contact_counts`, written by
/// the same statements as the contacts) include this transaction's own. Commits that add
/// contacts without the guard (PENDING ones, workspaces without a limit) never wait here.
async fn within_active_limit(
    conn: &mut PgConnection,
    workspace_id: &WorkspaceId,
    limit: u64,
) -> Result<(), StoreError> {
    sqlx::query("SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE")
        .bind(workspace_id.as_str())
        .execute(&mut *conn)
        .await
        .map_err(error::store)?;
    let active: i64 = sqlx::query_scalar(
        "SELECT coalesce(sum(n), 0)::bigint FROM contact_counts \
         WHERE workspace_id = $1 AND status = 'ACTIVE'",
    )
    .bind(workspace_id.as_str())
    .fetch_one(&mut *conn)
    .await
    .map_err(error::store)?;
    check_active_limit(workspace_id, u64::try_from(active).unwrap_or(0), limit)
}

async fn put_segment(conn: &mut PgConnection, s: &Segment) -> Result<(), StoreError> {
    // The snapshot state is the store's: kept while tracking stays as it was (a write that
    // read the segment earlier cannot move it), reset when tracking is switched.
    sqlx::query(
        "INSERT INTO segments (workspace_id, id, name, description, segment_type, condition, \
         track_membership, created_at, updated_at, tracking_since) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT (workspace_id, id) DO UPDATE SET name = EXCLUDED.name, \
         description = EXCLUDED.description, segment_type = EXCLUDED.segment_type, \
         condition = EXCLUDED.condition, track_membership = EXCLUDED.track_membership, \
         created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, \
         tracking_since = CASE WHEN segments.track_membership = EXCLUDED.track_membership \
         THEN segments.tracking_since ELSE EXCLUDED.tracking_since END, \
         members_synced_for = CASE WHEN segments.track_membership = EXCLUDED.track_membership \
         THEN segments.members_synced_for END",
    )
    .bind(s.workspace_id.as_str())
    .bind(s.id.as_str())
    .bind(&s.name)
    .bind(&s.description)
    .bind(enum_text(&s.segment_type))
    .bind(s.condition.as_ref().map(condition_text))
    .bind(s.track_membership)
    .bind(s.created_at)
    .bind(s.updated_at)
    .bind(s.tracking_since)
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// `Write::EnqueueJobUnlessPending`: a job with the id that is queued or running (inserted
/// earlier in this change set included) stays as it is; a dead one becomes the new job.
/// Not `ON CONFLICT DO UPDATE ... WHERE`: that locks the pending job's row, whose worker
/// then waits on this commit to renew or settle its lease. `DO NOTHING` locks nothing, and
/// two commits racing on an absent id serialize on its unique index (the second finds the
/// job pending).
async fn enqueue_unless_pending(conn: &mut PgConnection, job: &NewJob) -> Result<(), StoreError> {
    sqlx::query(
        "WITH replaced AS ( \
             UPDATE jobs SET payload = $2, run_at = $3, attempts = 0, claims = 0, \
                 state = 'queued', lease_token = NULL, lease_until = NULL, \
                 last_error = NULL, created_at = now() \
             WHERE id = $1 AND state = 'dead' RETURNING id) \
         INSERT INTO jobs (id, payload, run_at) \
         SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM replaced) \
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(job.id.as_str())
    .bind(Json(&job.payload))
    .bind(job.run_at)
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// `Write::SegmentSynced`: only for the tracking period the snapshot began in.
async fn segment_synced(
    conn: &mut PgConnection,
    workspace_id: &str,
    segment_id: &str,
    tracking_since: chrono::DateTime<chrono::Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE segments SET members_synced_for = tracking_since \
         WHERE workspace_id = $1 AND id = $2 AND track_membership \
         AND tracking_since = $3",
    )
    .bind(workspace_id)
    .bind(segment_id)
    .bind(tracking_since)
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

async fn add_member(
    conn: &mut PgConnection,
    workspace_id: &str,
    segment_id: &str,
    contact_id: &str,
) -> Result<(), StoreError> {
    // Only for a contact and a segment that exist, locked against a concurrent delete
    // until this commits: a membership never outlives them (no orphan rows).
    let done = sqlx::query(
        "INSERT INTO segment_members (workspace_id, segment_id, contact_id) \
         SELECT s.workspace_id, s.id, c.id FROM segments s, contacts c \
         WHERE s.workspace_id = $1 AND s.id = $2 AND c.workspace_id = $1 AND c.id = $3 \
         FOR KEY SHARE OF s, c \
         ON CONFLICT DO NOTHING",
    )
    .bind(workspace_id)
    .bind(segment_id)
    .bind(contact_id)
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
    conn: &mut PgConnection,
    workspace_id: &str,
    segment_id: &str,
    contact_id: &str,
) -> Result<(), StoreError> {
    let done = sqlx::query(
        "DELETE FROM segment_members \
         WHERE workspace_id = $1 AND segment_id = $2 AND contact_id = $3",
    )
    .bind(workspace_id)
    .bind(segment_id)
    .bind(contact_id)
    .execute(conn)
    .await
    .map_err(error::store)?;
    expect_one(done.rows_affected(), || {
        format!("contact {contact_id} is not a member of segment {segment_id}")
    })
}

/// Binds every column of a campaign but `version` in `campaign_cols!` order
/// ($1 = workspace, $2 = id, ..., $21 = updated_at).
macro_rules! bind_campaign {
    ($query:expr, $c:expr) => {
        $query
            .bind($c.workspace_id.as_str())
            .bind($c.id.as_str())
            .bind(&$c.name)
            .bind(&$c.description)
            .bind(&$c.subject)
            .bind(&$c.body)
            .bind(&$c.from)
            .bind(&$c.from_name)
            .bind(&$c.reply_to)
            .bind(enum_text(&$c.audience_type))
            .bind($c.segment_id.as_ref().map(|id| id.as_str()))
            .bind($c.audience_condition.as_ref().map(condition_text))
            .bind(enum_text(&$c.status))
            .bind($c.scheduled_for)
            .bind($c.sent_at)
            .bind(to_i64($c.total_recipients))
            .bind($c.audience_until_id.as_ref().map(|id| id.as_str()))
            .bind($c.expanded_through_id.as_ref().map(|id| id.as_str()))
            .bind($c.expansion_done)
            .bind($c.created_at)
            .bind($c.updated_at)
    };
}

async fn insert_campaign(conn: &mut PgConnection, c: &Campaign) -> Result<(), StoreError> {
    let query = sqlx::query(concat!(
        "INSERT INTO campaigns (",
        crate::rows::campaign_cols!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
         $17, $18, $19, $20, $21, 0)"
    ));
    bind_campaign!(query, c)
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}

async fn update_campaign(conn: &mut PgConnection, c: &Campaign) -> Result<(), StoreError> {
    let query = sqlx::query(
        "UPDATE campaigns SET name = $3, description = $4, subject = $5, body = $6, \
         from_address = $7, from_name = $8, reply_to = $9, audience_type = $10, \
         segment_id = $11, audience_condition = $12, status = $13, scheduled_for = $14, \
         sent_at = $15, total_recipients = $16, audience_until_id = $17, \
         expanded_through_id = $18, expansion_done = $19, created_at = $20, \
         updated_at = $21, version = version + 1 \
         WHERE workspace_id = $1 AND id = $2 AND version = $22",
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
