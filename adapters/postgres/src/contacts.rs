//! Contact reads: by id or email, newest-first keyset pages, counts, pending contacts.

use posthorn_core::model::Contact;
use posthorn_core::ports::{ContactPage, ContactQuery, StoreError};
use sqlx::{PgPool, Postgres, QueryBuilder};

use crate::contact_counts::{self, Counted};
use crate::error;
use crate::rows::{self, contact_cols};

/// A page size or count as a SQL `LIMIT` (saturating).
pub(crate) fn sql_limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `raw` as a `LIKE` pattern matching it as a substring: `\`, `%` and `_` are escaped so
/// that they match themselves (used with `ESCAPE '\'`).
pub(crate) fn substring_pattern(raw: &str) -> String {
    let mut pattern = String::with_capacity(raw.len() + 2);
    pattern.push('%');
    for c in raw.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// Appends the `WHERE` clause for the filters of `query` (not its position or limit).
fn push_filters(sql: &mut QueryBuilder<Postgres>, workspace_id: &str, query: &ContactQuery) {
    sql.push(" WHERE workspace_id = ")
        .push_bind(workspace_id.to_string());
    if let Some(subscribed) = query.subscribed {
        sql.push(" AND subscribed = ").push_bind(subscribed);
    }
    if let Some(search) = &query.search {
        // Stored emails are lower-cased by `EmailAddress`, so lower-casing the needle the
        // same way (in Rust) makes a case-sensitive LIKE exactly a case-insensitive
        // substring match, independent of the database's locale; pg_trgm indexes LIKE.
        sql.push(" AND email LIKE ")
            .push_bind(substring_pattern(&search.to_lowercase()))
            .push(" ESCAPE '\\'");
    }
}

/// A contact by id.
pub(crate) async fn by_id(
    pool: &PgPool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<Contact>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        contact_cols!(),
        " FROM contacts WHERE workspace_id = $1 AND id = $2"
    ))
    .bind(workspace_id)
    .bind(id)
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::contact).transpose()
}

/// A contact by email; the needle is lower-cased like stored emails are.
pub(crate) async fn by_email(
    pool: &PgPool,
    workspace_id: &str,
    email: &str,
) -> Result<Option<Contact>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        contact_cols!(),
        " FROM contacts WHERE workspace_id = $1 AND email = $2"
    ))
    .bind(workspace_id)
    .bind(email.to_lowercase())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::contact).transpose()
}

/// A newest-first page after `query.before_id`; reads one row more to learn `has_more`.
pub(crate) async fn page(
    pool: &PgPool,
    workspace_id: &str,
    query: &ContactQuery,
) -> Result<ContactPage, StoreError> {
    let mut sql =
        QueryBuilder::<Postgres>::new(concat!("SELECT ", contact_cols!(), " FROM contacts"));
    push_filters(&mut sql, workspace_id, query);
    if let Some(before) = &query.before_id {
        sql.push(" AND id < ").push_bind(before.as_str());
    }
    sql.push(" ORDER BY id DESC LIMIT ")
        .push_bind(sql_limit(query.limit).saturating_add(1));
    let found = sql.build().fetch_all(pool).await.map_err(error::store)?;
    let mut contacts = rows::all(&found, rows::contact)?;
    let has_more = contacts.len() > query.limit;
    contacts.truncate(query.limit);
    Ok(ContactPage { contacts, has_more })
}

/// How many contacts match the filters of `query`: without a search, from the kept counts
/// (migrations 0016 and 0017), not by counting the workspace's contacts.
pub(crate) async fn count(
    pool: &PgPool,
    workspace_id: &str,
    query: &ContactQuery,
) -> Result<u64, StoreError> {
    if query.search.is_none() {
        let which = Counted {
            status: None,
            subscribed: query.subscribed,
        };
        if let Some(n) = contact_counts::kept(pool, workspace_id, which).await? {
            return Ok(n);
        }
    }
    let mut sql = QueryBuilder::<Postgres>::new("SELECT count(*) FROM contacts");
    push_filters(&mut sql, workspace_id, query);
    let n: i64 = sql
        .build_query_scalar()
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// How many ACTIVE contacts the workspace has (from the kept counts).
pub(crate) async fn count_active(pool: &PgPool, workspace_id: &str) -> Result<u64, StoreError> {
    let which = Counted {
        status: Some("ACTIVE"),
        subscribed: None,
    };
    // Without a subscription filter the kept counts always answer.
    Ok(contact_counts::kept(pool, workspace_id, which)
        .await?
        .unwrap_or_default())
}

/// Up to `limit` PENDING contacts, oldest first (creation time, then id).
pub(crate) async fn pending(
    pool: &PgPool,
    workspace_id: &str,
    limit: usize,
) -> Result<Vec<Contact>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        contact_cols!(),
        " FROM contacts WHERE workspace_id = $1 AND status = 'PENDING' \
         ORDER BY created_at, id LIMIT $2"
    ))
    .bind(workspace_id)
    .bind(sql_limit(limit))
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    rows::all(&found, rows::contact)
}

#[cfg(test)]
mod tests {
    use super::substring_pattern;

    #[test]
    fn wildcards_match_themselves() {
        assert_eq!(substring_pattern("a%b_c\\d"), "%a\\%b\\_c\\\\d%");
        assert_eq!(substring_pattern(""), "%%");
    }
}
