//! The query plans of the reads whose indexes group commit depends on: the event name
//! index in two parts (migration 0011) and the partial index of PENDING contacts (0012).
//! A `SCAN` of `events` or `contacts` would read a whole workspace per request.

use posthorn_core::model::ContactId;
use posthorn_core::ports::EventQuery;
use sqlx::{QueryBuilder, Sqlite};

use crate::{contacts, records, testing, SqliteStore};

async fn plan(store: &SqliteStore, mut sql: QueryBuilder<Sqlite>) -> String {
    let rows: Vec<(i64, i64, i64, String)> = sql
        .build_query_as()
        .fetch_all(&store.readers)
        .await
        .expect("explain");
    rows.into_iter()
        .map(|(_, _, _, detail)| detail)
        .collect::<Vec<_>>()
        .join("\n")
}

async fn events_plan(store: &SqliteStore, q: &EventQuery) -> String {
    let mut sql = QueryBuilder::new("EXPLAIN QUERY PLAN ");
    records::push_events_query(&mut sql, "ws", q);
    plan(store, sql).await
}

#[tokio::test]
async fn reads_by_name_and_pending_contacts_use_their_indexes() {
    let store = testing::temporary().await.expect("store");
    let by_name = events_plan(
        &store,
        &EventQuery {
            name: Some("signup".to_string()),
            contact_id: None,
            limit: 50,
        },
    )
    .await;
    for expected in [
        "SEARCH events USING INDEX sqlite_autoindex_events_1 (workspace_id=? AND id=?)",
        "SEARCH event_names_filed USING PRIMARY KEY (workspace_id=? AND name=?)",
        "SEARCH event_names_recent USING PRIMARY KEY (workspace_id=?)",
    ] {
        assert!(by_name.contains(expected), "{expected} not in:\n{by_name}");
    }
    assert!(!by_name.contains("SCAN events"), "{by_name}");
    let by_contact_and_name = events_plan(
        &store,
        &EventQuery {
            name: Some("signup".to_string()),
            contact_id: Some(ContactId::from("c".to_string())),
            limit: 50,
        },
    )
    .await;
    // Either index by contact (the planner's choice depends on its statistics).
    assert!(
        by_contact_and_name.contains("SEARCH events USING INDEX events_by_contact"),
        "{by_contact_and_name}"
    );
    let mut pending = QueryBuilder::new("EXPLAIN QUERY PLAN ");
    pending.push(contacts::PENDING);
    let mut pending = pending.build_query_as::<(i64, i64, i64, String)>();
    pending = pending.bind("ws").bind(10_i64);
    let details: Vec<String> = pending
        .fetch_all(&store.readers)
        .await
        .expect("explain")
        .into_iter()
        .map(|(_, _, _, d)| d)
        .collect();
    assert_eq!(
        details,
        ["SEARCH c USING INDEX contacts_pending (workspace_id=?)"],
        "pending contacts"
    );
    store.close().await;
}
