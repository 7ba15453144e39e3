//! Reads of every record but contacts: workspaces, keys, domains, templates, emails, events.

use posthorn_core::model::{
    ApiKey, Domain, EmailRecord, EmailStats, Event, KeyKind, KeySet, Template, Workspace,
};
use posthorn_core::ports::{EmailStatsQuery, EventQuery, StoreError, TemplateQuery};
use sqlx::{QueryBuilder, Sqlite, SqlitePool};

use crate::error;
use crate::rows::{
    self, count, domain_cols, email_cols, email_cols_without_content, emails_with_content,
    enum_text, event_cols, key_set_cols, sql_limit, template_cols, workspace_cols,
};

/// A case-insensitive substring pattern for SQLite's `REGEXP` (the `regex` crate, whose
/// case folding is Unicode's, where SQLite's own `lower()` and `LIKE` fold ASCII only).
pub(crate) fn case_insensitive_substring(needle: &str) -> String {
    format!("(?i){}", regex::escape(needle))
}

/// A workspace by id.
pub(crate) async fn workspace(
    pool: &SqlitePool,
    id: &str,
) -> Result<Option<Workspace>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        workspace_cols!(),
        " FROM workspaces WHERE id = ?"
    ))
    .bind(id.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::workspace).transpose()
}

/// Every workspace, oldest first (creation time, then id).
pub(crate) async fn workspaces(pool: &SqlitePool) -> Result<Vec<Workspace>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        workspace_cols!(),
        " FROM workspaces ORDER BY created_at, id"
    ))
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    rows::all(&found, rows::workspace)
}

/// The key set holding a key with this hash, and which key of the set it is.
pub(crate) async fn key_by_hash(
    pool: &SqlitePool,
    hash: &str,
) -> Result<Option<ApiKey>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        key_set_cols!(),
        " FROM key_sets WHERE public_key_hash = ?1 OR secret_key_hash = ?1 ORDER BY id LIMIT 1"
    ))
    .bind(hash.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    let Some(key_set) = row.as_ref().map(rows::key_set).transpose()? else {
        return Ok(None);
    };
    let kind = if key_set.secret_key_hash == hash {
        KeyKind::Secret
    } else {
        KeyKind::Public
    };
    Ok(Some(ApiKey { key_set, kind }))
}

/// The key sets of a workspace, oldest first (creation time, then id).
pub(crate) async fn key_sets(
    pool: &SqlitePool,
    workspace_id: &str,
) -> Result<Vec<KeySet>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        key_set_cols!(),
        " FROM key_sets WHERE workspace_id = ? ORDER BY created_at, id"
    ))
    .bind(workspace_id.to_string())
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    rows::all(&found, rows::key_set)
}

/// The domains of a workspace, oldest first (creation time, then id).
pub(crate) async fn domains(
    pool: &SqlitePool,
    workspace_id: &str,
) -> Result<Vec<Domain>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        domain_cols!(),
        " FROM domains WHERE workspace_id = ? ORDER BY created_at, id"
    ))
    .bind(workspace_id.to_string())
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    rows::all(&found, rows::domain)
}

/// The inbound-enabled domain of that name, in whichever workspace.
pub(crate) async fn inbound_domain(
    pool: &SqlitePool,
    name: &str,
) -> Result<Option<Domain>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        domain_cols!(),
        " FROM domains WHERE domain = ? AND inbound_enabled = 1 LIMIT 1"
    ))
    .bind(name.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::domain).transpose()
}

/// A template by id.
pub(crate) async fn template(
    pool: &SqlitePool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<Template>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        template_cols!(),
        " FROM templates WHERE workspace_id = ? AND id = ?"
    ))
    .bind(workspace_id.to_string())
    .bind(id.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::template).transpose()
}

/// Appends the `WHERE` clause for the filters of a template query.
fn push_template_filters(sql: &mut QueryBuilder<Sqlite>, workspace_id: &str, q: &TemplateQuery) {
    sql.push(" WHERE workspace_id = ")
        .push_bind(workspace_id.to_string());
    if let Some(kind) = &q.template_type {
        sql.push(" AND template_type = ").push_bind(enum_text(kind));
    }
    if let Some(search) = &q.search {
        let pattern = case_insensitive_substring(search);
        sql.push(" AND (name REGEXP ")
            .push_bind(pattern.clone())
            .push(" OR subject REGEXP ")
            .push_bind(pattern)
            .push(")");
    }
}

/// A newest-first (creation time, then id) page of templates and how many match the
/// filters in all.
pub(crate) async fn templates(
    pool: &SqlitePool,
    workspace_id: &str,
    q: &TemplateQuery,
) -> Result<(Vec<Template>, u64), StoreError> {
    let mut sql =
        QueryBuilder::<Sqlite>::new(concat!("SELECT ", template_cols!(), " FROM templates"));
    push_template_filters(&mut sql, workspace_id, q);
    sql.push(" ORDER BY created_at DESC, id DESC LIMIT ")
        .push_bind(sql_limit(q.limit))
        .push(" OFFSET ")
        .push_bind(sql_limit(q.offset));
    let found = sql.build().fetch_all(pool).await.map_err(error::store)?;
    let page = rows::all(&found, rows::template)?;

    let mut sql = QueryBuilder::<Sqlite>::new("SELECT count(*) FROM templates");
    push_template_filters(&mut sql, workspace_id, q);
    let total: i64 = sql
        .build_query_scalar()
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok((page, count(total)))
}

/// An email record by id.
pub(crate) async fn email(
    pool: &SqlitePool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<EmailRecord>, StoreError> {
    let sql = concat!(
        "SELECT ",
        email_cols!(),
        " FROM ",
        emails_with_content!(),
        " WHERE workspace_id = ? AND id = ?"
    );
    email_by_key(pool, sql, workspace_id, id).await
}

/// The email `id` of `workspace_id` without its content (`Store::email_without_content`).
pub(crate) async fn email_without_content(
    pool: &SqlitePool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<EmailRecord>, StoreError> {
    let sql = concat!(
        "SELECT ",
        email_cols_without_content!(),
        " FROM emails WHERE workspace_id = ? AND id = ?"
    );
    email_by_key(pool, sql, workspace_id, id).await
}

/// The email `sql` selects by (workspace id, id).
async fn email_by_key(
    pool: &SqlitePool,
    sql: &'static str,
    workspace_id: &str,
    id: &str,
) -> Result<Option<EmailRecord>, StoreError> {
    let row = sqlx::query(sql)
        .bind(workspace_id.to_string())
        .bind(id.to_string())
        .fetch_optional(pool)
        .await
        .map_err(error::store)?;
    row.as_ref().map(rows::email).transpose()
}

/// A stored event by id.
pub(crate) async fn event(
    pool: &SqlitePool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<Event>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        event_cols!(),
        " FROM events WHERE workspace_id = ? AND id = ?"
    ))
    .bind(workspace_id.to_string())
    .bind(id.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::event).transpose()
}

/// Events matching `q`, newest (greatest time-ordered id) first.
///
/// By name alone, the ids come from the two parts of the name index (migration 0011): the
/// newest `limit` of `event_names_filed` and every match in the small
/// `event_names_recent`. With a contact, `events_by_contact_name` serves the name as well.
pub(crate) async fn events(
    pool: &SqlitePool,
    workspace_id: &str,
    q: &EventQuery,
) -> Result<Vec<Event>, StoreError> {
    let mut sql = QueryBuilder::<Sqlite>::new("");
    push_events_query(&mut sql, workspace_id, q);
    let found = sql.build().fetch_all(pool).await.map_err(error::store)?;
    rows::all(&found, rows::event)
}

/// Appends the query of [`events`] to `sql`.
pub(crate) fn push_events_query(
    sql: &mut QueryBuilder<Sqlite>,
    workspace_id: &str,
    q: &EventQuery,
) {
    sql.push(concat!(
        "SELECT ",
        event_cols!(),
        " FROM events WHERE workspace_id = "
    ))
    .push_bind(workspace_id.to_string());
    match (&q.name, &q.contact_id) {
        (Some(name), None) => {
            sql.push(" AND id IN (SELECT id FROM (SELECT id FROM event_names_filed")
                .push(" WHERE workspace_id = ")
                .push_bind(workspace_id.to_string())
                .push(" AND name = ")
                .push_bind(name.clone())
                .push(" ORDER BY id DESC LIMIT ")
                .push_bind(sql_limit(q.limit))
                .push(") UNION ALL SELECT id FROM event_names_recent WHERE workspace_id = ")
                .push_bind(workspace_id.to_string())
                .push(" AND name = ")
                .push_bind(name.clone())
                .push(")");
        }
        (name, contact_id) => {
            if let Some(name) = name {
                sql.push(" AND name = ").push_bind(name.clone());
            }
            if let Some(contact_id) = contact_id {
                sql.push(" AND contact_id = ")
                    .push_bind(contact_id.as_str().to_string());
            }
        }
    }
    sql.push(" ORDER BY id DESC LIMIT ")
        .push_bind(sql_limit(q.limit));
}

/// [`event_names`]'s query: the filed part is read by skipping from each name to the next
/// (one index descent per distinct name, as PostgreSQL's adapter does), not by reading every
/// filed event; the recent part is small.
pub(crate) const EVENT_NAMES: &str = "\
    WITH RECURSIVE filed(name) AS ( \
        SELECT min(name) FROM event_names_filed WHERE workspace_id = ?1 \
        UNION ALL \
        SELECT (SELECT min(f.name) FROM event_names_filed f \
                WHERE f.workspace_id = ?1 AND f.name > filed.name) \
        FROM filed WHERE filed.name IS NOT NULL) \
    SELECT name FROM filed WHERE name IS NOT NULL \
    UNION SELECT name FROM event_names_recent WHERE workspace_id = ?1 ORDER BY name";

/// The distinct event names of a workspace, in byte order (BINARY collation), from both
/// parts of the name index.
pub(crate) async fn event_names(
    pool: &SqlitePool,
    workspace_id: &str,
) -> Result<Vec<String>, StoreError> {
    sqlx::query_scalar(EVENT_NAMES)
        .bind(workspace_id.to_string())
        .fetch_all(pool)
        .await
        .map_err(error::store)
}

/// Which id [`email_by`] looks an email up by.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EmailKey {
    /// The transport's id.
    ProviderMessageId,
    /// The RFC 5322 Message-ID.
    MessageId,
    /// The email id itself (unique in practice: UUIDv7).
    Id,
}

/// The newest email carrying `value` as its provider message id or Message-ID, in any
/// workspace.
pub(crate) async fn email_by(
    pool: &SqlitePool,
    key: EmailKey,
    value: &str,
) -> Result<Option<EmailRecord>, StoreError> {
    let sql = match key {
        EmailKey::ProviderMessageId => concat!(
            "SELECT ",
            email_cols_without_content!(),
            " FROM emails WHERE provider_message_id = ? ORDER BY id DESC LIMIT 1"
        ),
        EmailKey::MessageId => concat!(
            "SELECT ",
            email_cols_without_content!(),
            " FROM emails WHERE message_id = ? ORDER BY id DESC LIMIT 1"
        ),
        EmailKey::Id => concat!(
            "SELECT ",
            email_cols_without_content!(),
            " FROM emails WHERE id = ? ORDER BY id DESC LIMIT 1"
        ),
    };
    let row = sqlx::query(sql)
        .bind(value.to_string())
        .fetch_optional(pool)
        .await
        .map_err(error::store)?;
    row.as_ref().map(rows::email).transpose()
}

/// Outcome counts of the workspace's sent emails matching `q`.
pub(crate) async fn email_stats(
    pool: &SqlitePool,
    workspace_id: &str,
    q: &EmailStatsQuery,
) -> Result<EmailStats, StoreError> {
    let mut b = QueryBuilder::<Sqlite>::new(
        "SELECT count(*), \
         count(*) FILTER (WHERE delivered_at IS NOT NULL OR opened_at IS NOT NULL \
            OR clicked_at IS NOT NULL OR complained_at IS NOT NULL), \
         count(*) FILTER (WHERE opened_at IS NOT NULL OR clicked_at IS NOT NULL), \
         count(*) FILTER (WHERE clicked_at IS NOT NULL), \
         count(*) FILTER (WHERE bounce_type = 'Permanent'), \
         count(*) FILTER (WHERE complained_at IS NOT NULL) \
         FROM emails WHERE sent_at IS NOT NULL AND workspace_id = ",
    );
    b.push_bind(workspace_id.to_string());
    if let Some(campaign_id) = &q.campaign_id {
        b.push(" AND campaign_id = ")
            .push_bind(campaign_id.as_str().to_string());
    }
    if let Some(since) = q.sent_since {
        b.push(" AND sent_at >= ").push_bind(rows::micros(since));
    }
    let (sent, delivered, opened, clicked, bounced, complained): (i64, i64, i64, i64, i64, i64) = b
        .build_query_as()
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok(EmailStats {
        sent: count(sent),
        delivered: count(delivered),
        opened: count(opened),
        clicked: count(clicked),
        bounced: count(bounced),
        complained: count(complained),
    })
}

/// The secret `name` if stored.
pub(crate) async fn secret(pool: &SqlitePool, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
    let found: Option<(Vec<u8>,)> =
        sqlx::query_as("SELECT value FROM deployment_secrets WHERE name = ?")
            .bind(name.to_string())
            .fetch_optional(pool)
            .await
            .map_err(error::store)?;
    Ok(found.map(|(value,)| value))
}

/// Stores `candidate` as the secret `name` unless one is stored; returns the stored one.
pub(crate) async fn ensure_secret(
    writer: &SqlitePool,
    name: &str,
    candidate: &[u8],
) -> Result<Vec<u8>, StoreError> {
    sqlx::query(
        "INSERT INTO deployment_secrets (name, value) VALUES (?, ?) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(name.to_string())
    .bind(candidate.to_vec())
    .execute(writer)
    .await
    .map_err(error::store)?;
    secret(writer, name)
        .await?
        .ok_or_else(|| StoreError::Unavailable(format!("secret {name} vanished after insert")))
}
