//! The query plans of the reads whose indexes group commit depends on: the event name
//! index in two parts (migration 0011) and the partial indexes of PENDING contacts (0012)
//! and of campaign mail (0015).
//! A `SCAN` of `events`, `contacts` or `event_names_filed` would read a whole workspace
//! per request.

use posthorn_core::model::ContactId;
use posthorn_core::ports::EventQuery;
use sqlx::QueryBuilder;

use crate::testing::{self, query_plan};
use crate::{contacts, records, segments, SqliteStore};

async fn events_plan(store: &SqliteStore, q: &EventQuery) -> String {
    let mut sql = QueryBuilder::new("");
    records::push_events_query(&mut sql, "ws", q);
    query_plan(store, sql.sql().as_str(), &[])
        .await
        .expect("explain")
}

/// `plan` has every step of `expected` and no `unwanted` one.
fn assert_plan(plan: &str, expected: &[&str], unwanted: &str) {
    for step in expected {
        assert!(plan.contains(step), "{step} not in:\n{plan}");
    }
    assert!(!plan.contains(unwanted), "{unwanted} in:\n{plan}");
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
    assert_plan(
        &by_name,
        &[
            "SEARCH events USING INDEX sqlite_autoindex_events_1 (workspace_id=? AND id=?)",
            "SEARCH event_names_filed USING PRIMARY KEY (workspace_id=? AND name=?)",
            "SEARCH event_names_recent USING PRIMARY KEY (workspace_id=?)",
        ],
        "SCAN events",
    );
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
    // The names skip from one to the next through the filed index, never scanning it.
    let names = query_plan(&store, records::EVENT_NAMES, &["ws"])
        .await
        .expect("explain");
    assert_plan(
        &names,
        &[
            "SEARCH event_names_filed USING PRIMARY KEY (workspace_id=?)",
            "SEARCH f USING PRIMARY KEY (workspace_id=? AND name>?)",
            "SEARCH event_names_recent USING PRIMARY KEY (workspace_id=?)",
        ],
        "SCAN event_names_filed",
    );
    let pending = query_plan(&store, contacts::PENDING, &["ws", "10"])
        .await
        .expect("explain");
    assert_eq!(
        pending, "SEARCH c USING INDEX contacts_pending (workspace_id=?)",
        "pending contacts"
    );
    let campaign_counts = query_plan(&store, segments::CAMPAIGN_EMAIL_COUNTS, &["ws", "k"])
        .await
        .expect("explain");
    assert_plan(
        &campaign_counts,
        &["SEARCH emails USING COVERING INDEX emails_campaign_status (workspace_id=? AND campaign_id=?)"],
        "SCAN emails",
    );
    store.close().await;
}
