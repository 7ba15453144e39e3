//! Group commit under faults: a statement that aborts the whole transaction mid-group, a
//! `COMMIT` that fails, a lock held past the busy timeout, callers that give up, and a
//! writer connection left inside a transaction. After each, every change set answered `Ok`
//! is stored and visible to readers, and the store keeps committing.

use std::time::Duration;

use chrono::Utc;
use posthorn_conformance::fixtures::{contact_at, email_record, event};
use posthorn_core::model::{Contact, WorkspaceId};
use posthorn_core::ports::{ChangeSet, Store, StoreError, SystemClock, Write};
use serde_json::json;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::Connection;

use crate::options::SqliteOptions;
use crate::{testing, SqliteStore};

fn workspace() -> WorkspaceId {
    WorkspaceId::generate(&SystemClock)
}

fn insert(ws: &WorkspaceId, email: &str) -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes.push(Write::InsertContact(contact_at(ws, email)));
    changes
}

/// A second read-write connection to the store's file (for faults set up from outside).
pub(super) async fn raw(store: &SqliteStore) -> SqliteConnection {
    SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(store.path()))
        .await
        .expect("raw connection")
}

async fn visible(store: &SqliteStore, ws: &WorkspaceId, email: &str) -> bool {
    store
        .contact_by_email(ws, email)
        .await
        .expect("read")
        .is_some()
}

/// Commits one new contact and checks a reader sees it: the store is not stuck.
async fn still_commits(store: &SqliteStore, ws: &WorkspaceId, email: &str) {
    store
        .commit(insert(ws, email))
        .await
        .unwrap_or_else(|e| panic!("commit after the fault: {e}"));
    assert!(
        visible(store, ws, email).await,
        "{email} was committed but readers do not see it"
    );
}

/// Commits `n` change sets at once, those with `i % every == 0` for `faulty`, the others
/// for `c{i}@example.org`; checks that exactly the faulty ones failed and the others are
/// stored, and that they shared transactions.
async fn concurrent(store: &SqliteStore, ws: &WorkspaceId, n: usize, every: usize, faulty: &str) {
    let before = store.group.groups();
    let mut tasks = Vec::new();
    for i in 0..n {
        let store = store.clone();
        let ws = ws.clone();
        let email = if i % every == 0 {
            faulty.to_string()
        } else {
            format!("c{i}@example.org")
        };
        tasks.push(tokio::spawn(async move {
            store.commit(insert(&ws, &email)).await
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        match task.await.expect("task") {
            Ok(()) => assert!(i % every != 0, "faulty change set {i} was answered Ok"),
            Err(e) => assert_eq!(i % every, 0, "change set {i} failed: {e}"),
        }
    }
    for i in (0..n).filter(|i| i % every != 0) {
        let email = format!("c{i}@example.org");
        assert!(
            visible(store, ws, &email).await,
            "{email} was answered Ok but is not stored"
        );
    }
    let groups = store.group.groups() - before;
    assert!(
        groups < n as u64,
        "{groups} transactions for {n} change sets: nothing was grouped"
    );
}

/// Concurrent change sets share transactions, and one that conflicts fails alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflict_fails_only_its_own_change_set_of_a_group() {
    let store = testing::temporary().await.expect("store");
    let ws = workspace();
    store
        .commit(insert(&ws, "taken@example.org"))
        .await
        .expect("first");
    concurrent(&store, &ws, 200, 10, "taken@example.org").await;
    still_commits(&store, &ws, "after@example.org").await;
    store.close().await;
}

/// The one-trip statement of a group's shape is cached: after it failed (a conflict, in
/// the middle of the transaction), the same cached statement commits the next group of
/// that shape, and nothing of the failed one is left behind.
#[tokio::test]
async fn a_cached_group_statement_that_failed_commits_the_next_group() {
    let store = testing::temporary().await.expect("store");
    let ws = workspace();
    for round in 0..3 {
        still_commits(&store, &ws, &format!("ok{round}@example.org")).await;
        let again = store
            .commit(insert(&ws, &format!("ok{round}@example.org")))
            .await;
        assert!(
            matches!(again, Err(StoreError::Conflict(_))),
            "round {round}: the same address twice is a conflict, got {again:?}"
        );
    }
    still_commits(&store, &ws, "last@example.org").await;
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM contacts")
        .fetch_one(&mut raw(&store).await)
        .await
        .expect("count");
    assert_eq!(count, 4, "four contacts committed, none twice");
    store.close().await;
}

/// A statement that makes SQLite roll back the whole transaction (as `SQLITE_FULL`,
/// `SQLITE_IOERR` or `SQLITE_NOMEM` may), here `RAISE(ROLLBACK)` in a trigger: its change
/// set fails, the others of its group are committed anyway, and the store keeps working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_that_aborts_the_transaction_fails_only_its_own_change_set() {
    let store = testing::temporary().await.expect("store");
    let ws = workspace();
    let mut raw = raw(&store).await;
    sqlx::query(
        "CREATE TRIGGER fault_abort AFTER INSERT ON contacts \
         WHEN NEW.email = 'abort@fault.test' BEGIN SELECT RAISE(ROLLBACK, 'injected'); END",
    )
    .execute(&mut raw)
    .await
    .expect("trigger");
    // Alone first: it fails, and the next commit must not find the writer in a state
    // left over from it.
    assert!(store.commit(insert(&ws, "abort@fault.test")).await.is_err());
    still_commits(&store, &ws, "alone@example.org").await;
    concurrent(&store, &ws, 200, 10, "abort@fault.test").await;
    still_commits(&store, &ws, "after@example.org").await;
    raw.close().await.expect("close");
    store.close().await;
}

/// A `COMMIT` that fails (a deferred constraint checked only then; the transaction stays
/// open, as after a failed sync): the change set that caused it fails, the others of its
/// group are committed, and the writer is not left inside the failed transaction.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_commit_fails_only_its_own_change_set() {
    let store = testing::temporary().await.expect("store");
    let ws = workspace();
    let mut raw = raw(&store).await;
    for sql in [
        "CREATE TABLE fault_parent (id TEXT PRIMARY KEY)",
        "CREATE TABLE fault_child (parent TEXT REFERENCES fault_parent (id) \
         DEFERRABLE INITIALLY DEFERRED)",
        "CREATE TRIGGER fault_commit AFTER INSERT ON contacts \
         WHEN NEW.email = 'commit@fault.test' \
         BEGIN INSERT INTO fault_child (parent) VALUES ('missing'); END",
    ] {
        sqlx::query(sql).execute(&mut raw).await.expect("fault");
    }
    let writer = store.writer.as_ref().expect("writer");
    sqlx::query("PRAGMA foreign_keys = ON")
        .execute(writer)
        .await
        .expect("pragma");
    concurrent(&store, &ws, 200, 10, "commit@fault.test").await;
    still_commits(&store, &ws, "after@example.org").await;
    raw.close().await.expect("close");
    store.close().await;
}

/// Another connection holds the write lock past the busy timeout: the commits waiting
/// meanwhile fail with `Unavailable`, and once the lock is free the store commits again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_held_past_the_busy_timeout_fails_the_group_and_passes() {
    let options = SqliteOptions {
        busy_timeout: Duration::from_millis(300),
        ..SqliteOptions::default()
    };
    let store = testing::temporary_with(options).await.expect("store");
    let ws = workspace();
    let mut raw = raw(&store).await;
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut raw)
        .await
        .expect("lock");
    let mut tasks = Vec::new();
    for i in 0..20 {
        let store = store.clone();
        let ws = ws.clone();
        tasks.push(tokio::spawn(async move {
            store
                .commit(insert(&ws, &format!("busy{i}@example.org")))
                .await
        }));
    }
    for task in tasks {
        match task.await.expect("task") {
            Err(StoreError::Unavailable(_)) => {}
            other => panic!("a commit while the lock is held: {other:?}"),
        }
    }
    sqlx::query("ROLLBACK")
        .execute(&mut raw)
        .await
        .expect("unlock");
    still_commits(&store, &ws, "after@example.org").await;
    raw.close().await.expect("close");
    store.close().await;
}

/// Callers that give up (a request cancelled by its time limit) do not disturb the
/// others: what was answered `Ok` is stored, and the store keeps committing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_that_give_up_leave_the_writer_usable() {
    let store = testing::temporary().await.expect("store");
    let ws = workspace();
    let mut tasks = Vec::new();
    for i in 0..300u64 {
        let store = store.clone();
        let ws = ws.clone();
        let email = format!("c{i}@example.org");
        tasks.push(tokio::spawn(async move {
            let commit = store.commit(insert(&ws, &email));
            // Every other caller gives up after 0 to 2 ms, some mid-group.
            let outcome = if i % 2 == 0 {
                tokio::time::timeout(Duration::from_micros((i % 5) * 500), commit)
                    .await
                    .ok()
            } else {
                Some(commit.await)
            };
            (email, outcome)
        }));
    }
    for task in tasks {
        let (email, outcome) = task.await.expect("task");
        match outcome {
            Some(Ok(())) => assert!(visible(&store, &ws, &email).await, "{email} lost"),
            Some(Err(e)) => panic!("{email}: {e}"),
            None => {}
        }
    }
    still_commits(&store, &ws, "after@example.org").await;
    store.close().await;
}

/// The writer connection handed back inside an open transaction (what a bug, a panic or a
/// cancelled future could leave): the next commit rolls it back and commits, and readers
/// see it (a writer stuck in a transaction would hide every later commit from them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_left_inside_a_transaction_is_recovered() {
    let store = testing::temporary().await.expect("store");
    let ws = workspace();
    let writer = store.writer.as_ref().expect("writer");
    sqlx::query("BEGIN").execute(writer).await.expect("begin");
    still_commits(&store, &ws, "after@example.org").await;
    still_commits(&store, &ws, "again@example.org").await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_job_completions_share_transactions() {
    use posthorn_conformance::store::job_concurrent_completions_honour_their_leases;
    let store = std::sync::Arc::new(testing::temporary().await.expect("store"));
    let ports = posthorn_conformance::StorePorts::of(std::sync::Arc::clone(&store));
    // Through the committer (at least one transaction), in shared transactions.
    let before = store.group.settlement_batches();
    job_concurrent_completions_honour_their_leases(&ports).await;
    let transactions = store.group.settlement_batches() - before;
    assert!(
        (1..300 / 4).contains(&transactions),
        "300 completions took {transactions} transactions of the committer"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_retries_share_transactions() {
    use posthorn_conformance::store::job_concurrent_retries_honour_their_leases_and_times;
    let store = std::sync::Arc::new(testing::temporary().await.expect("store"));
    let ports = posthorn_conformance::StorePorts::of(std::sync::Arc::clone(&store));
    // Through the committer (at least one transaction), in shared transactions.
    let before = store.group.settlement_batches();
    job_concurrent_retries_honour_their_leases_and_times(&ports).await;
    let transactions = store.group.settlement_batches() - before;
    assert!(
        (1..120 / 4).contains(&transactions),
        "120 retries took {transactions} transactions of the committer"
    );
}

/// The committer keeps the writer connection from one group to the next, but a job claim
/// (which takes the connection from the pool) waits for the group in flight, not for every
/// group a steady stream of commits brings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_claim_waits_for_the_group_in_flight_not_for_the_stream() {
    use posthorn_core::ports::Jobs;
    let store = std::sync::Arc::new(testing::temporary().await.expect("store"));
    let ws = workspace();
    store
        .commit(insert(&ws, "seed@example.org"))
        .await
        .expect("seed");
    let (writers, each) = (48, 60);
    let mut stream = Vec::new();
    for w in 0..writers {
        let (store, ws) = (std::sync::Arc::clone(&store), ws.clone());
        stream.push(tokio::spawn(async move {
            for i in 0..each {
                let email = format!("s{w}-{i}@example.org");
                store
                    .commit(insert(&ws, &email))
                    .await
                    .expect("stream commit");
            }
        }));
    }
    let started = store.group.groups();
    while store.group.groups() < started + 8 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut waited = Vec::new();
    for _ in 0..5 {
        let before = store.group.groups();
        store
            .claim(chrono::Utc::now(), Duration::from_secs(30), 1)
            .await
            .expect("claim");
        waited.push(store.group.groups() - before);
    }
    let streamed = store.group.groups() - started;
    for task in stream {
        task.await.expect("stream");
    }
    // Still streaming when the claims were done: they did not just wait for the end.
    let total = store.group.groups() - started;
    assert!(
        streamed < total,
        "the stream ended before the claims: {streamed} of {total}"
    );
    assert!(
        waited.iter().all(|&groups| groups <= 3),
        "groups committed while each claim waited: {waited:?}"
    );
}

/// Stores `n` new contacts `u{i}@example.org`, each at version 0.
async fn stored_contacts(store: &SqliteStore, ws: &WorkspaceId, n: usize) -> Vec<Contact> {
    let mut contacts = Vec::with_capacity(n);
    for i in 0..n {
        let contact = contact_at(ws, &format!("u{i}@example.org"));
        let mut changes = ChangeSet::new();
        changes.push(Write::InsertContact(contact.clone()));
        store.commit(changes).await.expect("insert");
        contacts.push(contact);
    }
    contacts
}

/// What `/v1/track` writes for a contact that exists: its update, and the event.
fn tracked(ws: &WorkspaceId, contact: &Contact) -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes.push(Write::UpdateContact(contact.clone()));
    changes.push(Write::AppendEvent(event(
        ws,
        "tracked",
        Some(&contact.id),
        Utc::now(),
    )));
    changes
}

async fn tracked_events(store: &SqliteStore) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM events WHERE name = 'tracked'")
        .fetch_one(&mut raw(store).await)
        .await
        .expect("count")
}

/// A group of contact updates with their events goes to the writer as one query, each
/// update's version guard checked in SQL: an update at a stale version fails alone, with
/// `Conflict`, and writes nothing (neither the update nor its event); the others of its
/// group are committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_contact_update_fails_alone_in_a_group_of_updates() {
    let store = testing::temporary().await.expect("store");
    let ws = workspace();
    let n = 140;
    let stale = |i: usize| i.is_multiple_of(7);
    let contacts = stored_contacts(&store, &ws, n).await;
    let before = store.group.groups();
    let mut tasks = Vec::new();
    for (i, mut contact) in contacts.into_iter().enumerate() {
        let (store, ws) = (store.clone(), ws.clone());
        if stale(i) {
            contact.version = 5;
        }
        contact.data.insert("seq".to_string(), json!(i));
        tasks.push(tokio::spawn(async move {
            store.commit(tracked(&ws, &contact)).await
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        match task.await.expect("task") {
            Err(StoreError::Conflict(_)) if stale(i) => {}
            Ok(()) if !stale(i) => {}
            other => panic!("change set {i} (stale: {}): {other:?}", stale(i)),
        }
    }
    for i in 0..n {
        let stored = store
            .contact_by_email(&ws, &format!("u{i}@example.org"))
            .await
            .expect("read")
            .expect("contact");
        let (version, seq) = if stale(i) {
            (0, None)
        } else {
            (1, Some(json!(i)))
        };
        assert_eq!(stored.version, version, "contact {i}");
        assert_eq!(stored.data.get("seq").cloned(), seq, "contact {i}");
    }
    let committed = (0..n).filter(|&i| !stale(i)).count();
    assert_eq!(tracked_events(&store).await, committed as i64);
    let groups = store.group.groups() - before;
    assert!(
        groups < n as u64,
        "{groups} transactions for {n} change sets"
    );
    store.close().await;
}

/// Two updates of one contact from the same version, committed at once (possibly in one
/// group): one is committed, the other conflicts, whichever order they take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_updates_from_one_version_one_is_committed() {
    let store = testing::temporary().await.expect("store");
    let ws = workspace();
    let n = 60;
    let contacts = stored_contacts(&store, &ws, n).await;
    let mut tasks = Vec::new();
    for contact in &contacts {
        for twin in 0..2 {
            let (store, ws, mut contact) = (store.clone(), ws.clone(), contact.clone());
            contact.data.insert("twin".to_string(), json!(twin));
            tasks.push(tokio::spawn(async move {
                store.commit(tracked(&ws, &contact)).await
            }));
        }
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("task"));
    }
    for (i, pair) in outcomes.chunks(2).enumerate() {
        let committed = pair.iter().filter(|o| o.is_ok()).count();
        let conflicts = pair
            .iter()
            .filter(|o| matches!(o, Err(StoreError::Conflict(_))))
            .count();
        assert_eq!((committed, conflicts), (1, 1), "contact {i}: {pair:?}");
        let stored = store
            .contact_by_email(&ws, &format!("u{i}@example.org"))
            .await
            .expect("read")
            .expect("contact");
        assert_eq!(stored.version, 1, "contact {i}");
    }
    assert_eq!(tracked_events(&store).await, n as i64);
    store.close().await;
}

/// A group of email updates (what deliveries and delivery reports write), each with an
/// event, goes as one query too: the update of an email that is gone fails alone, with
/// `Conflict`, and writes nothing; the others of its group are committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_of_an_email_that_is_gone_fails_alone_in_a_group_of_updates() {
    let store = testing::temporary().await.expect("store");
    let ws = workspace();
    let contact = stored_contacts(&store, &ws, 1).await.remove(0);
    let n = 140;
    let gone = |i: usize| i.is_multiple_of(9);
    let mut emails = Vec::with_capacity(n);
    for i in 0..n {
        let email = email_record(&contact, Utc::now());
        if !gone(i) {
            let mut changes = ChangeSet::new();
            changes.push(Write::InsertEmail(email.clone()));
            store.commit(changes).await.expect("insert");
        }
        emails.push(email);
    }
    let mut tasks = Vec::new();
    for (i, mut email) in emails.clone().into_iter().enumerate() {
        let (store, ws, contact_id) = (store.clone(), ws.clone(), contact.id.clone());
        email.provider_message_id = Some(format!("provider-{i}"));
        tasks.push(tokio::spawn(async move {
            let mut changes = ChangeSet::new();
            changes.push(Write::UpdateEmail(email));
            changes.push(Write::AppendEvent(event(
                &ws,
                "tracked",
                Some(&contact_id),
                Utc::now(),
            )));
            store.commit(changes).await
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        match task.await.expect("task") {
            Err(StoreError::Conflict(_)) if gone(i) => {}
            Ok(()) if !gone(i) => {}
            other => panic!("change set {i} (gone: {}): {other:?}", gone(i)),
        }
    }
    for (i, email) in emails.iter().enumerate() {
        let stored = store.email(&ws, &email.id).await.expect("read");
        match stored {
            None => assert!(gone(i), "email {i} was lost"),
            Some(stored) => assert_eq!(
                stored.provider_message_id,
                Some(format!("provider-{i}")),
                "email {i}"
            ),
        }
    }
    let committed = (0..n).filter(|&i| !gone(i)).count();
    assert_eq!(tracked_events(&store).await, committed as i64);
    store.close().await;
}
