//! The kept contact counts (migrations 0016 and 0017) against counting the contacts:
//! contacts the store inserts, alone and in groups, status and subscription changes, other
//! updates, deletions, a transaction rolled back, folds, rows of unknown subscription (from
//! a server older than 0017), and a rebuild after contacts loaded around the store.

use posthorn_core::model::{Contact, ContactStatus, WorkspaceId};
use posthorn_core::ports::{ChangeSet, ContactQuery, Store, SystemClock, Write};
use sqlx::PgPool;

use crate::contact_counts::{fold, rebuild};
use crate::contacts::{count, count_active};
use posthorn_conformance::fixtures::contact_at;

use crate::test_db::{finish, fresh};
use crate::PgStore;

fn contact(ws: &WorkspaceId, i: usize, status: ContactStatus) -> Contact {
    let mut c = contact_at(ws, &format!("c{i}@example.com"));
    c.status = status;
    c
}

/// Inserts contacts `from..to` of `ws` through the store, in one change set.
async fn insert(store: &PgStore, ws: &WorkspaceId, from: usize, to: usize) {
    let mut changes = ChangeSet::new();
    for i in from..to {
        let status = if i % 3 == 0 {
            ContactStatus::Pending
        } else {
            ContactStatus::Active
        };
        changes.push(Write::InsertContact(contact(ws, i, status)));
    }
    store.commit(changes).await.expect("insert");
}

/// What counting the contacts says: all, ACTIVE, subscribed, unsubscribed.
async fn counted(pool: &PgPool, ws: &str) -> [u64; 4] {
    let counts: (i64, i64, i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE status = 'ACTIVE'), \
                count(*) FILTER (WHERE subscribed), count(*) FILTER (WHERE NOT subscribed) \
         FROM contacts WHERE workspace_id = $1",
    )
    .bind(ws)
    .fetch_one(pool)
    .await
    .expect("count");
    [counts.0, counts.1, counts.2, counts.3].map(|n| n.try_into().expect("count"))
}

/// The store's answer for the same four counts.
async fn answered(pool: &PgPool, ws: &str) -> [u64; 4] {
    let by = |subscribed| ContactQuery {
        subscribed,
        ..ContactQuery::default()
    };
    [
        count(pool, ws, &by(None)).await.expect("kept"),
        count_active(pool, ws).await.expect("kept active"),
        count(pool, ws, &by(Some(true)))
            .await
            .expect("kept subscribed"),
        count(pool, ws, &by(Some(false)))
            .await
            .expect("kept unsubscribed"),
    ]
}

/// The kept counts agree with counting, for both workspaces.
async fn agree(pool: &PgPool, workspaces: &[&WorkspaceId]) {
    for ws in workspaces {
        let ws = ws.as_str();
        assert_eq!(
            answered(pool, ws).await,
            counted(pool, ws).await,
            "workspace {ws}"
        );
    }
}

async fn rows(pool: &PgPool, ws: &WorkspaceId) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM contact_counts WHERE workspace_id = $1")
        .bind(ws.as_str())
        .fetch_one(pool)
        .await
        .expect("rows")
}

async fn run(pool: &PgPool, sql: &'static str, ws: &WorkspaceId) {
    sqlx::query(sql)
        .bind(ws.as_str())
        .execute(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[tokio::test]
async fn kept_counts_equal_counting_the_contacts() {
    let (store, name) = fresh().await;
    let pool = store.pool().clone();
    let ws = WorkspaceId::generate(&SystemClock);
    let other = WorkspaceId::generate(&SystemClock);
    let both = [&ws, &other];
    insert(&store, &other, 0, 3).await;
    insert(&store, &ws, 0, 50).await;
    agree(&pool, &both).await;
    // One at a time, more rows than a count lets gather before it folds them.
    for i in 50..130 {
        insert(&store, &ws, i, i + 1).await;
    }
    assert!(rows(&pool, &ws).await > 64);
    agree(&pool, &both).await;
    assert!(
        rows(&pool, &ws).await <= 4,
        "folded into one row per status and subscription"
    );
    // Promotions, an update that changes no status, deletions.
    run(
        &pool,
        "UPDATE contacts SET status = 'ACTIVE' WHERE workspace_id = $1 AND email < 'c5'",
        &ws,
    )
    .await;
    run(
        &pool,
        "UPDATE contacts SET subscribed = false WHERE workspace_id = $1 AND email < 'c7'",
        &ws,
    )
    .await;
    agree(&pool, &both).await;
    let before = rows(&pool, &ws).await;
    run(
        &pool,
        "UPDATE contacts SET data = '{\"plan\": \"pro\"}' WHERE workspace_id = $1",
        &ws,
    )
    .await;
    assert_eq!(
        rows(&pool, &ws).await,
        before,
        "no status or subscription changed: no row"
    );
    run(
        &pool,
        "DELETE FROM contacts WHERE workspace_id = $1 AND email LIKE 'c1%'",
        &ws,
    )
    .await;
    agree(&pool, &both).await;
    // A transaction rolled back leaves no count behind.
    let mut tx = pool.begin().await.expect("begin");
    sqlx::query("DELETE FROM contacts WHERE workspace_id = $1")
        .bind(ws.as_str())
        .execute(&mut *tx)
        .await
        .expect("delete all");
    tx.rollback().await.expect("rollback");
    agree(&pool, &both).await;
    // Folding twice changes no count; contacts loaded around the store count once rebuilt.
    fold(&pool, ws.as_str()).await.expect("fold");
    fold(&pool, ws.as_str()).await.expect("fold again");
    agree(&pool, &both).await;
    // A row of unknown subscription, as a server older than migration 0017 writes it with
    // the contact it inserts: the filtered counts then count the contacts.
    run(
        &pool,
        "WITH added AS (INSERT INTO contacts (workspace_id, id, email, subscribed, data, \
         status, created_at, updated_at, version) VALUES ($1, 'old-server', \
         'old-server@example.com', true, '{}', 'ACTIVE', now(), now(), 0) \
         RETURNING workspace_id, status) \
         INSERT INTO contact_counts (workspace_id, status, n) \
         SELECT workspace_id, status, 1 FROM added",
        &ws,
    )
    .await;
    agree(&pool, &both).await;
    fold(&pool, ws.as_str())
        .await
        .expect("fold with an unknown row");
    agree(&pool, &both).await;
    run(
        &pool,
        "INSERT INTO contacts (workspace_id, id, email, subscribed, data, status, created_at, \
         updated_at, version) SELECT $1, 'copied' || i, 'copied' || i || '@example.com', true, \
         '{}', 'ACTIVE', now(), now(), 0 FROM generate_series(1, 5) AS i",
        &ws,
    )
    .await;
    let mut conn = pool.acquire().await.expect("connection");
    rebuild(&mut conn).await.expect("rebuild");
    drop(conn);
    agree(&pool, &both).await;
    run(&pool, "DELETE FROM contacts WHERE workspace_id = $1", &ws).await;
    fold(&pool, ws.as_str()).await.expect("fold");
    assert_eq!(rows(&pool, &ws).await, 0, "nothing left to count");
    agree(&pool, &both).await;
    finish(store, name).await;
}
