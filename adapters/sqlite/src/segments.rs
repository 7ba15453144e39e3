//! Segment and campaign reads: segments, stored memberships, event facts, campaigns.

use posthorn_core::model::{ContactId, SegmentId};
use std::collections::HashSet;

use posthorn_core::model::{Campaign, CampaignStatus, Contact, EmailCounts, EmailStatus, Segment};
use posthorn_core::ports::StoreError;
use posthorn_core::segment::EventFact;
use sqlx::{QueryBuilder, Sqlite, SqlitePool};

use crate::error;
use crate::rows::{
    self, campaign_cols, contact_cols, count, instant, segment_cols, sql_limit, text_enum,
};

/// A segment by id.
pub(crate) async fn segment(
    pool: &SqlitePool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<Segment>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        segment_cols!(),
        " FROM segments WHERE workspace_id = ? AND id = ?"
    ))
    .bind(workspace_id.to_string())
    .bind(id.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::segment).transpose()
}

/// A newest-first (creation time, then id) page of segments and how many there are.
pub(crate) async fn segments(
    pool: &SqlitePool,
    workspace_id: &str,
    offset: usize,
    limit: usize,
) -> Result<(Vec<Segment>, u64), StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        segment_cols!(),
        " FROM segments WHERE workspace_id = ? \
         ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"
    ))
    .bind(workspace_id.to_string())
    .bind(sql_limit(limit))
    .bind(sql_limit(offset))
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    let page = rows::all(&found, rows::segment)?;
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM segments WHERE workspace_id = ?")
        .bind(workspace_id.to_string())
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok((page, count(total)))
}

/// Every tracked DYNAMIC segment, oldest first (creation time, then id).
pub(crate) async fn tracked_segments(
    pool: &SqlitePool,
    workspace_id: &str,
) -> Result<Vec<Segment>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        segment_cols!(),
        " FROM segments WHERE workspace_id = ? AND segment_type = 'DYNAMIC' \
         AND track_membership ORDER BY created_at, id"
    ))
    .bind(workspace_id.to_string())
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    rows::all(&found, rows::segment)
}

/// How many stored members a segment has.
pub(crate) async fn member_count(
    pool: &SqlitePool,
    workspace_id: &str,
    segment_id: &str,
) -> Result<u64, StoreError> {
    let n: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM segment_members WHERE workspace_id = ? AND segment_id = ?",
    )
    .bind(workspace_id.to_string())
    .bind(segment_id.to_string())
    .fetch_one(pool)
    .await
    .map_err(error::store)?;
    Ok(count(n))
}

/// A page of a segment's stored members, newest (greatest id) contact first.
pub(crate) async fn members(
    pool: &SqlitePool,
    workspace_id: &str,
    segment_id: &str,
    offset: usize,
    limit: usize,
) -> Result<Vec<Contact>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        contact_cols!(),
        " FROM segment_members m JOIN contacts c \
         ON c.workspace_id = m.workspace_id AND c.id = m.contact_id \
         WHERE m.workspace_id = ?1 AND m.segment_id = ?2 \
         ORDER BY m.contact_id DESC LIMIT ?3 OFFSET ?4"
    ))
    .bind(workspace_id.to_string())
    .bind(segment_id.to_string())
    .bind(sql_limit(limit))
    .bind(sql_limit(offset))
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    rows::all(&found, rows::contact)
}

/// Stored member ids of a segment above `after_id`, ascending.
pub(crate) async fn member_ids(
    pool: &SqlitePool,
    workspace_id: &str,
    segment_id: &str,
    after_id: Option<&str>,
    limit: usize,
) -> Result<Vec<ContactId>, StoreError> {
    let mut sql =
        QueryBuilder::<Sqlite>::new("SELECT contact_id FROM segment_members WHERE workspace_id = ");
    sql.push_bind(workspace_id.to_string())
        .push(" AND segment_id = ")
        .push_bind(segment_id.to_string());
    if let Some(after) = after_id {
        sql.push(" AND contact_id > ").push_bind(after.to_string());
    }
    sql.push(" ORDER BY contact_id LIMIT ")
        .push_bind(sql_limit(limit));
    let ids: Vec<String> = sql
        .build_query_scalar()
        .fetch_all(pool)
        .await
        .map_err(error::store)?;
    Ok(ids.into_iter().map(ContactId::from).collect())
}

/// The segments a contact is a stored member of.
pub(crate) async fn memberships(
    pool: &SqlitePool,
    workspace_id: &str,
    contact_id: &str,
) -> Result<HashSet<SegmentId>, StoreError> {
    let ids: Vec<String> = sqlx::query_scalar(
        "SELECT segment_id FROM segment_members WHERE workspace_id = ? AND contact_id = ?",
    )
    .bind(workspace_id.to_string())
    .bind(contact_id.to_string())
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    Ok(ids.into_iter().map(SegmentId::from).collect())
}

/// Every event of a contact as (name, time), oldest first.
pub(crate) async fn event_facts(
    pool: &SqlitePool,
    workspace_id: &str,
    contact_id: &str,
) -> Result<Vec<EventFact>, StoreError> {
    let found: Vec<(String, i64)> = sqlx::query_as(
        "SELECT name, created_at FROM events WHERE workspace_id = ? AND contact_id = ? \
         ORDER BY created_at, id",
    )
    .bind(workspace_id.to_string())
    .bind(contact_id.to_string())
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    found
        .into_iter()
        .map(|(name, at)| {
            Ok(EventFact {
                name,
                at: instant("created_at", at)?,
            })
        })
        .collect()
}

/// A campaign by id.
pub(crate) async fn campaign(
    pool: &SqlitePool,
    workspace_id: &str,
    id: &str,
) -> Result<Option<Campaign>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        campaign_cols!(),
        " FROM campaigns WHERE workspace_id = ? AND id = ?"
    ))
    .bind(workspace_id.to_string())
    .bind(id.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::campaign).transpose()
}

/// A newest-first (creation time, then id) page of campaigns, optionally of one status,
/// and how many match.
pub(crate) async fn campaigns(
    pool: &SqlitePool,
    workspace_id: &str,
    status: Option<CampaignStatus>,
    offset: usize,
    limit: usize,
) -> Result<(Vec<Campaign>, u64), StoreError> {
    let filter = |sql: &mut QueryBuilder<Sqlite>| {
        sql.push(" WHERE workspace_id = ")
            .push_bind(workspace_id.to_string());
        if let Some(status) = status {
            sql.push(" AND status = ")
                .push_bind(status.as_str().to_string());
        }
    };
    let mut sql =
        QueryBuilder::<Sqlite>::new(concat!("SELECT ", campaign_cols!(), " FROM campaigns"));
    filter(&mut sql);
    sql.push(" ORDER BY created_at DESC, id DESC LIMIT ")
        .push_bind(sql_limit(limit))
        .push(" OFFSET ")
        .push_bind(sql_limit(offset));
    let found = sql.build().fetch_all(pool).await.map_err(error::store)?;
    let page = rows::all(&found, rows::campaign)?;

    let mut sql = QueryBuilder::<Sqlite>::new("SELECT count(*) FROM campaigns");
    filter(&mut sql);
    let total: i64 = sql
        .build_query_scalar()
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok((page, count(total)))
}

/// A campaign's emails counted by status ($1 workspace, $2 campaign): read from the partial
/// index of campaign mail (migration 0015).
pub(crate) const CAMPAIGN_EMAIL_COUNTS: &str =
    "SELECT status, count(*) FROM emails WHERE workspace_id = ? AND campaign_id = ? \
     GROUP BY status";

/// How many of a campaign's emails are in each status.
pub(crate) async fn campaign_email_counts(
    pool: &SqlitePool,
    workspace_id: &str,
    campaign_id: &str,
) -> Result<EmailCounts, StoreError> {
    let found: Vec<(String, i64)> = sqlx::query_as(CAMPAIGN_EMAIL_COUNTS)
        .bind(workspace_id.to_string())
        .bind(campaign_id.to_string())
        .fetch_all(pool)
        .await
        .map_err(error::store)?;
    let mut counts = EmailCounts::default();
    for (status, n) in found {
        let status: EmailStatus = text_enum("status", status)?;
        counts.add(status, count(n));
    }
    Ok(counts)
}
