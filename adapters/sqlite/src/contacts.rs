//! Contact reads: by id or email, newest-first keyset pages, counts, pending contacts.

use posthorn_core::model::Contact;
use posthorn_core::ports::{ContactPage, ContactQuery, StoreError};
use sqlx::{QueryBuilder, Sqlite, SqlitePool};

use crate::error;
use crate::rows::{self, contact_cols, count, sql_limit};

/// Appends the `WHERE` clause for the filters of `query` (not its position or limit).
fn push_filters(sql: &mut QueryBuilder<Sqlite>, workspace_id: &str, query: &ContactQuery) {
    sql.push(" WHERE c.workspace_id = ")
        .push_bind(workspace_id.to_string());
    if let Some(subscribed) = query.subscribed {
        sql.push(" AND c.subscribed = ").push_bind(subscribed);
    }
    if let Some(search) = &query.search {
        // Stored emails are lower-cased by `EmailAddress`, so lower-casing the needle the
        // same way (in Rust) makes a byte-exact `instr` a case-insensitive substring match
        // (SQLite's own case folding is ASCII-only).
        sql.push(" AND instr(c.email, ")
            .push_bind(search.to_lowercase())
            .push(") > 0");
    }
}

/// A contact by id.
pub(crate) async fn by_id(
    pool: &SqlitePool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<Contact>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        contact_cols!(),
        " FROM contacts c WHERE c.workspace_id = ? AND c.id = ?"
    ))
    .bind(workspace_id.to_string())
    .bind(id.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::contact).transpose()
}

/// A newest-first page after `query.before_id`; reads one row more to learn `has_more`.
pub(crate) async fn page(
    pool: &SqlitePool,
    workspace_id: &str,
    query: &ContactQuery,
) -> Result<ContactPage, StoreError> {
    let mut sql =
        QueryBuilder::<Sqlite>::new(concat!("SELECT ", contact_cols!(), " FROM contacts c"));
    push_filters(&mut sql, workspace_id, query);
    if let Some(before) = &query.before_id {
        sql.push(" AND c.id < ").push_bind(before.as_str());
    }
    sql.push(" ORDER BY c.id DESC LIMIT ")
        .push_bind(sql_limit(query.limit).saturating_add(1));
    let found = sql.build().fetch_all(pool).await.map_err(error::store)?;
    let mut contacts = rows::all(&found, rows::contact)?;
    let has_more = contacts.len() > query.limit;
    contacts.truncate(query.limit);
    Ok(ContactPage { contacts, has_more })
}

/// How many contacts match the filters of `query` (without a search, from the counts the
/// triggers of `contact_counts` keep by status and subscription).
pub(crate) async fn count_matching_filters(
    pool: &SqlitePool,
    workspace_id: &str,
    query: &ContactQuery,
) -> Result<u64, StoreError> {
    if query.search.is_none() {
        let n: i64 = sqlx::query_scalar(
            "SELECT coalesce(sum(n), 0) FROM contact_counts \
             WHERE workspace_id = ?1 AND (?2 IS NULL OR subscribed = ?2)",
        )
        .bind(workspace_id.to_string())
        .bind(query.subscribed)
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
        return Ok(count(n));
    }
    let mut sql = QueryBuilder::<Sqlite>::new("SELECT count(*) FROM contacts c");
    push_filters(&mut sql, workspace_id, query);
    let n: i64 = sql
        .build_query_scalar()
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok(count(n))
}

/// How many ACTIVE contacts the workspace has (from `contact_counts`).
pub(crate) async fn count_active(pool: &SqlitePool, workspace_id: &str) -> Result<u64, StoreError> {
    let n: i64 = sqlx::query_scalar(
        "SELECT coalesce(sum(n), 0) FROM contact_counts \
         WHERE workspace_id = ? AND status = 'ACTIVE'",
    )
    .bind(workspace_id.to_string())
    .fetch_one(pool)
    .await
    .map_err(error::store)?;
    Ok(count(n))
}

/// The query of [`pending`], served by the partial index `contacts_pending`.
pub(crate) const PENDING: &str = concat!(
    "SELECT ",
    contact_cols!(),
    " FROM contacts c WHERE c.workspace_id = ? AND c.status = 'PENDING' \
     ORDER BY c.created_at, c.id LIMIT ?"
);

/// Up to `limit` PENDING contacts, oldest first (creation time, then id).
pub(crate) async fn pending(
    pool: &SqlitePool,
    workspace_id: &str,
    limit: usize,
) -> Result<Vec<Contact>, StoreError> {
    let found = sqlx::query(PENDING)
        .bind(workspace_id.to_string())
        .bind(sql_limit(limit))
        .fetch_all(pool)
        .await
        .map_err(error::store)?;
    rows::all(&found, rows::contact)
}
