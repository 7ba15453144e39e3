//! The event name index in two parts (migration 0011): reads by name see every event
//! whether its name is still recent or already filed, the committer files names once
//! enough events came in, and opening the store files what the last run left recent.

use chrono::{SubsecRound, TimeDelta, Utc};
use posthorn_core::model::{ContactId, Event, WorkspaceId};
use posthorn_core::ports::{ChangeSet, EventQuery, Store, SystemClock, Write};
use sqlx::Connection;

use super::tests::raw;
use super::{file_event_names, FILE_EVERY};
use crate::options::SqliteOptions;
use crate::{testing, SqliteStore};

const NAMES: [&str; 4] = ["signup", "purchase", "Beta", "email.sent"];

fn event(ws: &WorkspaceId, name: &str, contact: Option<&ContactId>, n: i64) -> Event {
    Event::new(
        &SystemClock,
        ws,
        name,
        serde_json::json!({ "n": n }),
        contact.cloned(),
        None,
        // Stored to the microsecond.
        (Utc::now() + TimeDelta::milliseconds(n)).trunc_subsecs(6),
    )
}

async fn append(store: &SqliteStore, events: &[Event]) {
    let mut changes = ChangeSet::new();
    for e in events {
        changes.push(Write::AppendEvent(e.clone()));
    }
    store.commit(changes).await.expect("commit events");
}

async fn rows(store: &SqliteStore, table: &str) -> i64 {
    let mut conn = raw(store).await;
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
        .fetch_one(&mut conn)
        .await
        .expect("count")
}

/// What `events` must answer for `name` in `ws`: the newest `limit` of `all`.
fn expected(all: &[Event], ws: &WorkspaceId, name: &str, limit: usize) -> Vec<Event> {
    let mut found: Vec<Event> = all
        .iter()
        .filter(|e| &e.workspace_id == ws && e.name == name)
        .cloned()
        .collect();
    found.sort_by(|a, b| b.id.as_str().cmp(a.id.as_str()));
    found.truncate(limit);
    found
}

async fn check(store: &SqliteStore, all: &[Event], workspaces: &[WorkspaceId], step: &str) {
    for ws in workspaces {
        for name in NAMES.iter().chain(&["never"]) {
            for limit in [1, 3, 1000] {
                let q = EventQuery {
                    name: Some(name.to_string()),
                    contact_id: None,
                    limit,
                };
                let found = store.events(ws, &q).await.expect("events");
                assert_eq!(
                    found,
                    expected(all, ws, name, limit),
                    "{step}: events named {name}, limit {limit}"
                );
            }
        }
        let mut names: Vec<String> = all
            .iter()
            .filter(|e| &e.workspace_id == ws)
            .map(|e| e.name.clone())
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(
            store.event_names(ws).await.expect("names"),
            names,
            "{step}: names"
        );
    }
}

/// Every event of `all` (all of `ws`) is filed, none is recent, and reads see them all.
async fn all_filed(store: &SqliteStore, all: &[Event], ws: &WorkspaceId, step: &str) {
    assert_eq!(rows(store, "event_names_recent").await, 0, "{step}");
    let filed = usize::try_from(rows(store, "event_names_filed").await).unwrap_or(0);
    assert_eq!(filed, all.len(), "{step}");
    check(store, all, std::slice::from_ref(ws), step).await;
}

/// Batches of events in two workspaces, filed after some batches and not others: after
/// each batch, every read by name equals the newest events of that name, and the names.
#[tokio::test]
async fn reads_by_name_see_recent_and_filed_events_alike() {
    let store = testing::temporary().await.expect("store");
    let workspaces = [
        WorkspaceId::generate(&SystemClock),
        WorkspaceId::generate(&SystemClock),
    ];
    let contact = ContactId::generate(&SystemClock);
    let mut all = Vec::new();
    check(&store, &all, &workspaces, "empty").await;
    for batch in 0..6_i64 {
        let events: Vec<Event> = (0..9_i64)
            .map(|i| {
                let n = batch * 9 + i;
                let ws = &workspaces[usize::from(n % 3 == 0)];
                let name = NAMES[usize::try_from((n * 7) % 4).unwrap_or(0)];
                event(ws, name, (n % 2 == 0).then_some(&contact), n)
            })
            .collect();
        append(&store, &events).await;
        all.extend(events);
        if batch % 3 == 1 {
            file_event_names(store.writer().expect("writer"))
                .await
                .expect("filing");
            assert_eq!(rows(&store, "event_names_recent").await, 0, "after filing");
        }
        check(&store, &all, &workspaces, &format!("after batch {batch}")).await;
    }
    assert!(rows(&store, "event_names_filed").await > 0);
    assert!(rows(&store, "event_names_recent").await > 0);
    store.close().await;
}

/// Once `FILE_EVERY` events were committed, the committer files their names.
#[tokio::test]
async fn the_committer_files_names_after_enough_events() {
    let store = testing::temporary().await.expect("store");
    let ws = WorkspaceId::generate(&SystemClock);
    let total = FILE_EVERY + 40;
    let all: Vec<Event> = (0..total)
        .map(|n| {
            let n = i64::try_from(n).unwrap_or(0);
            event(&ws, NAMES[usize::try_from(n % 4).unwrap_or(0)], None, n)
        })
        .collect();
    for chunk in all.chunks(100) {
        append(&store, chunk).await;
    }
    // The filing follows the answers of the group that crossed the mark; the committer
    // takes the next change set only after it.
    let last = event(&ws, NAMES[0], None, i64::try_from(total).unwrap_or(0));
    append(&store, std::slice::from_ref(&last)).await;
    let all = [all, vec![last]].concat();
    let total = all.len();
    let recent = rows(&store, "event_names_recent").await;
    let filed = rows(&store, "event_names_filed").await;
    assert!(
        usize::try_from(recent).unwrap_or(usize::MAX) < FILE_EVERY,
        "{recent} names still recent"
    );
    assert_eq!(recent + filed, i64::try_from(total).unwrap_or(0));
    check(&store, &all, &[ws], "after the committer filed").await;
    store.close().await;
}

/// Names a run left recent are filed when the file is opened again.
#[tokio::test]
async fn opening_the_store_files_names_left_recent() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("posthorn.db");
    let ws = WorkspaceId::generate(&SystemClock);
    let all: Vec<Event> = (0..10).map(|n| event(&ws, NAMES[0], None, n)).collect();
    let store = SqliteStore::open(&path, SqliteOptions::default())
        .await
        .expect("open");
    append(&store, &all).await;
    assert_eq!(rows(&store, "event_names_recent").await, 10);
    store.close().await;
    drop(store);
    let store = SqliteStore::open(&path, SqliteOptions::default())
        .await
        .expect("open again");
    all_filed(&store, &all, &ws, "after opening again").await;
    store.close().await;
}

/// A filing that cannot take the write lock (held past the busy timeout) fails and leaves
/// the writer usable: the names stay recent and are read as before, the next commit goes
/// through, and the next filing files them.
#[tokio::test]
async fn a_filing_that_fails_leaves_the_names_recent_and_the_writer_usable() {
    let options = SqliteOptions {
        busy_timeout: std::time::Duration::from_millis(200),
        ..SqliteOptions::default()
    };
    let store = testing::temporary_with(options).await.expect("store");
    let ws = WorkspaceId::generate(&SystemClock);
    let mut all: Vec<Event> = (0..5).map(|n| event(&ws, NAMES[1], None, n)).collect();
    append(&store, &all).await;
    let mut lock = raw(&store).await;
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut lock)
        .await
        .expect("lock");
    let writer = store.writer().expect("writer");
    assert!(
        file_event_names(writer).await.is_err(),
        "a filing succeeded while another connection held the write lock"
    );
    sqlx::query("ROLLBACK")
        .execute(&mut lock)
        .await
        .expect("unlock");
    lock.close().await.expect("close");
    assert_eq!(rows(&store, "event_names_recent").await, 5);
    check(
        &store,
        &all,
        std::slice::from_ref(&ws),
        "after a failed filing",
    )
    .await;
    let more: Vec<Event> = (5..8).map(|n| event(&ws, NAMES[1], None, n)).collect();
    append(&store, &more).await;
    all.extend(more);
    file_event_names(writer)
        .await
        .expect("filing after the lock");
    all_filed(&store, &all, &ws, "after filing again").await;
    store.close().await;
}
