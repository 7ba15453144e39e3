//! Reads of every record but contacts: workspaces, keys, domains, templates, emails, events.

use posthorn_core::model::{
    ApiKey, Domain, EmailRecord, EmailStats, Event, KeyKind, KeySet, Template, Workspace,
};
use posthorn_core::ports::{EmailStatsQuery, EventQuery, StoreError, TemplateQuery};
use sqlx::{PgPool, Postgres, QueryBuilder};

use crate::contacts::{sql_limit, substring_pattern};
use crate::error;
use crate::rows::{
    self, domain_cols, email_cols_without_content, enum_text, event_cols, key_set_cols,
    template_cols, workspace_cols,
};

/// Every workspace, oldest first (creation time, then id).
pub(crate) async fn workspaces(pool: &PgPool) -> Result<Vec<Workspace>, StoreError> {
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
pub(crate) async fn key_by_hash(pool: &PgPool, hash: &str) -> Result<Option<ApiKey>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        key_set_cols!(),
        " FROM key_sets WHERE public_key_hash = $1 OR secret_key_hash = $1 ORDER BY id LIMIT 1"
    ))
    .bind(hash)
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
pub(crate) async fn key_sets(pool: &PgPool, workspace_id: &str) -> Result<Vec<KeySet>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        key_set_cols!(),
        " FROM key_sets WHERE workspace_id = $1 ORDER BY created_at, id"
    ))
    .bind(workspace_id)
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    rows::all(&found, rows::key_set)
}

/// The inbound-enabled domain of that name, in whichever workspace.
pub(crate) async fn inbound_domain(
    pool: &PgPool,
    name: &str,
) -> Result<Option<Domain>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        domain_cols!(),
        " FROM domains WHERE domain = $1 AND inbound_enabled LIMIT 1"
    ))
    .bind(name)
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::domain).transpose()
}

/// A template by id.
pub(crate) async fn template(
    pool: &PgPool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<Template>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        template_cols!(),
        " FROM templates WHERE workspace_id = $1 AND id = $2"
    ))
    .bind(workspace_id)
    .bind(id)
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::template).transpose()
}

/// Appends the `WHERE` clause for the filters of a template query.
fn push_template_filters(sql: &mut QueryBuilder<Postgres>, workspace_id: &str, q: &TemplateQuery) {
    sql.push(" WHERE workspace_id = ")
        .push_bind(workspace_id.to_string());
    if let Some(kind) = &q.template_type {
        sql.push(" AND template_type = ").push_bind(enum_text(kind));
    }
    if let Some(search) = &q.search {
        let pattern = substring_pattern(search);
        sql.push(" AND (name ILIKE ")
            .push_bind(pattern.clone())
            .push(" ESCAPE '\\' OR subject ILIKE ")
            .push_bind(pattern)
            .push(" ESCAPE '\\')");
    }
}

/// A newest-first (creation time, then id) page of templates and how many match the filters in all.
pub(crate) async fn templates(
    pool: &PgPool,
    workspace_id: &str,
    q: &TemplateQuery,
) -> Result<(Vec<Template>, u64), StoreError> {
    let mut sql =
        QueryBuilder::<Postgres>::new(concat!("SELECT ", template_cols!(), " FROM templates"));
    push_template_filters(&mut sql, workspace_id, q);
    sql.push(" ORDER BY created_at DESC, id DESC LIMIT ")
        .push_bind(sql_limit(q.limit))
        .push(" OFFSET ")
        .push_bind(sql_limit(q.offset));
    let found = sql.build().fetch_all(pool).await.map_err(error::store)?;
    let page = rows::all(&found, rows::template)?;

    let mut sql = QueryBuilder::<Postgres>::new("SELECT count(*) FROM templates");
    push_template_filters(&mut sql, workspace_id, q);
    let total: i64 = sql
        .build_query_scalar()
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok((page, u64::try_from(total).unwrap_or(0)))
}

/// A stored event by id.
pub(crate) async fn event(
    pool: &PgPool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<Event>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        event_cols!(),
        " FROM events WHERE workspace_id = $1 AND id = $2"
    ))
    .bind(workspace_id)
    .bind(id)
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::event).transpose()
}

/// Events matching `q`, newest (greatest time-ordered id) first.
pub(crate) async fn events(
    pool: &PgPool,
    workspace_id: &str,
    q: &EventQuery,
) -> Result<Vec<Event>, StoreError> {
    let mut sql = QueryBuilder::<Postgres>::new(concat!("SELECT ", event_cols!(), " FROM events"));
    sql.push(" WHERE workspace_id = ")
        .push_bind(workspace_id.to_string());
    if let Some(name) = &q.name {
        sql.push(" AND name = ").push_bind(name.clone());
    }
    if let Some(contact_id) = &q.contact_id {
        sql.push(" AND contact_id = ")
            .push_bind(contact_id.as_str());
    }
    sql.push(" ORDER BY id DESC LIMIT ")
        .push_bind(sql_limit(q.limit));
    let found = sql.build().fetch_all(pool).await.map_err(error::store)?;
    rows::all(&found, rows::event)
}

/// The distinct event names of a workspace, in byte order (the column is `COLLATE "C"`).
///
/// A loose index scan: one index probe per distinct name instead of reading every event.
pub(crate) async fn event_names(
    pool: &PgPool,
    workspace_id: &str,
) -> Result<Vec<String>, StoreError> {
    sqlx::query_scalar(
        "WITH RECURSIVE names(name) AS ( \
           (SELECT name FROM events WHERE workspace_id = $1 ORDER BY name LIMIT 1) \
           UNION ALL \
           SELECT (SELECT e.name FROM events e WHERE e.workspace_id = $1 AND e.name > n.name \
                   ORDER BY e.name LIMIT 1) \
           FROM names n WHERE n.name IS NOT NULL) \
         SELECT name FROM names WHERE name IS NOT NULL",
    )
    .bind(workspace_id)
    .fetch_all(pool)
    .await
    .map_err(error::store)
}

/// The email `id` of `workspace_id` without its content (`Store::email_without_content`).
pub(crate) async fn email_without_content(
    pool: &PgPool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<EmailRecord>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        email_cols_without_content!(),
        " FROM emails WHERE workspace_id = $1 AND id = $2"
    ))
    .bind(workspace_id)
    .bind(id)
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::email).transpose()
}

/// The newest email whose `column` (`provider_message_id`, `message_id` or `id`) is
/// `value`, in any workspace, without its content.
pub(crate) async fn email_by(
    pool: &PgPool,
    column: EmailKey,
    value: &str,
) -> Result<Option<EmailRecord>, StoreError> {
    let sql = match column {
        EmailKey::ProviderMessageId => concat!(
            "SELECT ",
            email_cols_without_content!(),
            " FROM emails WHERE provider_message_id = $1 ORDER BY id DESC LIMIT 1"
        ),
        EmailKey::MessageId => concat!(
            "SELECT ",
            email_cols_without_content!(),
            " FROM emails WHERE message_id = $1 ORDER BY id DESC LIMIT 1"
        ),
        EmailKey::Id => concat!(
            "SELECT ",
            email_cols_without_content!(),
            " FROM emails WHERE id = $1 ORDER BY id DESC LIMIT 1"
        ),
    };
    let row = sqlx::query(sql)
        .bind(value)
        .fetch_optional(pool)
        .await
        .map_err(error::store)?;
    row.as_ref().map(rows::email).transpose()
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

/// Outcome counts of the workspace's sent emails matching `q`.
pub(crate) async fn email_stats(
    pool: &PgPool,
    workspace_id: &str,
    q: &EmailStatsQuery,
) -> Result<EmailStats, StoreError> {
    let mut b: QueryBuilder<Postgres> = QueryBuilder::new(
        "SELECT count(*), \
         count(*) FILTER (WHERE delivered_at IS NOT NULL OR opened_at IS NOT NULL \
            OR clicked_at IS NOT NULL OR complained_at IS NOT NULL), \
         count(*) FILTER (WHERE opened_at IS NOT NULL OR clicked_at IS NOT NULL), \
         count(*) FILTER (WHERE clicked_at IS NOT NULL), \
         count(*) FILTER (WHERE bounce_type = 'Permanent'), \
         count(*) FILTER (WHERE complained_at IS NOT NULL) \
         FROM emails WHERE sent_at IS NOT NULL AND workspace_id = ",
    );
    b.push_bind(workspace_id);
    if let Some(campaign_id) = &q.campaign_id {
        b.push(" AND campaign_id = ")
            .push_bind(campaign_id.as_str());
    }
    if let Some(since) = q.sent_since {
        b.push(" AND sent_at >= ").push_bind(since);
    }
    let (sent, delivered, opened, clicked, bounced, complained): (i64, i64, i64, i64, i64, i64) = b
        .build_query_as()
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(EmailStats {
        sent: n(sent),
        delivered: n(delivered),
        opened: n(opened),
        clicked: n(clicked),
        bounced: n(bounced),
        complained: n(complained),
    })
}

/// The secret `name`, storing `candidate` first when there is none. Reads first, so the
/// usual call (every tracking hit) writes nothing.
pub(crate) async fn ensure_secret(
    pool: &PgPool,
    name: &str,
    candidate: &[u8],
) -> Result<Vec<u8>, StoreError> {
    if let Some(value) = secret(pool, name).await? {
        return Ok(value);
    }
    sqlx::query(
        "INSERT INTO deployment_secrets (name, value) VALUES ($1, $2) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind(candidate)
    .execute(pool)
    .await
    .map_err(error::store)?;
    secret(pool, name)
        .await?
        .ok_or_else(|| StoreError::Unavailable(format!("secret {name} vanished after insert")))
}

async fn secret(pool: &PgPool, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
    let found: Option<(Vec<u8>,)> =
        sqlx::query_as("SELECT value FROM deployment_secrets WHERE name = $1")
            .bind(name)
            .fetch_optional(pool)
            .await
            .map_err(error::store)?;
    Ok(found.map(|(value,)| value))
}
