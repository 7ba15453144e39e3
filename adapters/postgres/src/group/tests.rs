//! Group commit on a real server: concurrent commits share transactions, a change set that
//! fails inside its savepoint fails alone, and a lost transaction (a killed backend, a
//! failed `COMMIT`) fails every member with `Unavailable`, commits none of them, and
//! leaves the store committing.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use posthorn_core::model::{Contact, EmailAddress, EmailRecord, EmailStatus, WorkspaceId};
use posthorn_core::ports::{ChangeSet, Store, StoreError, SystemClock, Write};
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection, PgConnection};

use super::transaction::commit_all;
use posthorn_conformance::fixtures::{contact_at, email_record, event};

use crate::test_db::{admin_url, finish, fresh};
use crate::PgStore;

/// Another connection to the store's database (to set up faults from outside).
async fn raw(name: &str) -> PgConnection {
    let options: PgConnectOptions = admin_url().parse().expect("admin URL");
    options
        .database(name)
        .connect()
        .await
        .expect("raw connection")
}

fn workspace() -> WorkspaceId {
    WorkspaceId::generate(&SystemClock)
}

fn insert(ws: &WorkspaceId, email: &str) -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes.push(Write::InsertContact(contact_at(ws, email)));
    changes
}

async fn visible(store: &PgStore, ws: &WorkspaceId, email: &str) -> bool {
    store
        .contact_by_email(ws, email)
        .await
        .expect("read")
        .is_some()
}

/// Commits `group` as one group; whether each change set was committed.
async fn committed(store: &PgStore, group: Vec<ChangeSet>) -> Vec<bool> {
    let outcomes = commit_all(store.pool(), &group.iter().collect::<Vec<_>>()).await;
    outcomes.iter().map(Result::is_ok).collect()
}

/// Commits one new contact and checks a reader sees it: the store is not stuck.
async fn still_commits(store: &PgStore, ws: &WorkspaceId, email: &str) {
    store
        .commit(insert(ws, email))
        .await
        .unwrap_or_else(|e| panic!("commit after the fault: {e}"));
    assert!(
        visible(store, ws, email).await,
        "{email} committed but not visible"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_commits_share_transactions() {
    let (store, name) = fresh().await;
    let store = Arc::new(store);
    let ws = workspace();
    let n = 200;
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (store, ws) = (Arc::clone(&store), ws.clone());
            tokio::spawn(async move {
                store
                    .commit(insert(&ws, &format!("c{i}@example.com")))
                    .await
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task").expect("commit");
    }
    for i in 0..n {
        assert!(visible(&store, &ws, &format!("c{i}@example.com")).await);
    }
    let groups = store.group.groups();
    assert!(
        groups < n / 4,
        "{n} concurrent commits took {groups} transactions"
    );
    let store = Arc::into_inner(store).expect("sole owner");
    finish(store, name).await;
}

#[tokio::test]
async fn a_failing_change_set_fails_alone() {
    let (store, name) = fresh().await;
    let ws = workspace();
    store
        .commit(insert(&ws, "taken@example.com"))
        .await
        .expect("first");
    // Two break the unique email: an error that aborts the transaction. The first one
    // fails the group's first try (without savepoints); the second fails inside its
    // savepoint on the second try.
    let group = [
        insert(&ws, "a@example.com"),
        insert(&ws, "taken@example.com"),
        insert(&ws, "b@example.com"),
        insert(&ws, "taken@example.com"),
        insert(&ws, "c@example.com"),
    ];
    let outcomes = commit_all(store.pool(), &group.iter().collect::<Vec<_>>()).await;
    for (i, outcome) in outcomes.iter().enumerate() {
        if i % 2 == 1 {
            assert!(
                matches!(outcome, Err(StoreError::Conflict(_))),
                "{outcome:?}"
            );
        } else {
            assert!(outcome.is_ok(), "{i}: {outcome:?}");
        }
    }
    for email in ["a@example.com", "b@example.com", "c@example.com"] {
        assert!(visible(&store, &ws, email).await, "{email}");
    }
    still_commits(&store, &ws, "after@example.com").await;
    finish(store, name).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_backend_fails_the_whole_group() {
    let (store, name) = fresh().await;
    let ws = workspace();
    // An open transaction elsewhere holds the email the group's second change set
    // inserts, so the group's backend waits on it until it is terminated.
    let mut holder = raw(&name).await;
    sqlx::query("BEGIN")
        .execute(&mut holder)
        .await
        .expect("begin");
    let held = insert(&ws, "held@example.com");
    crate::commit::apply_all(&mut holder, &held)
        .await
        .expect("held insert");

    let group = [
        insert(&ws, "first@example.com"),
        insert(&ws, "held@example.com"),
        insert(&ws, "third@example.com"),
    ];
    let pool = store.pool().clone();
    let task = tokio::spawn(async move {
        let refs: Vec<&ChangeSet> = group.iter().collect();
        commit_all(&pool, &refs).await
    });
    let mut killer = raw(&name).await;
    let mut killed = false;
    for _ in 0..200 {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock' \
             AND pid <> pg_backend_pid()",
        )
        .fetch_one(&mut killer)
        .await
        .expect("terminate");
        if n > 0 {
            killed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(killed, "the group never waited on the held row");
    let outcomes = task.await.expect("task");
    for outcome in &outcomes {
        assert!(
            matches!(outcome, Err(StoreError::Unavailable(_))),
            "{outcome:?}"
        );
    }
    sqlx::query("ROLLBACK")
        .execute(&mut holder)
        .await
        .expect("rollback");
    assert!(!visible(&store, &ws, "first@example.com").await);
    assert!(!visible(&store, &ws, "held@example.com").await);
    assert!(!visible(&store, &ws, "third@example.com").await);
    still_commits(&store, &ws, "after@example.com").await;
    let _ = holder.close().await;
    let _ = killer.close().await;
    finish(store, name).await;
}

#[tokio::test]
async fn a_failed_commit_fails_every_member() {
    let (store, name) = fresh().await;
    let ws = workspace();
    // A deferred constraint trigger runs at COMMIT: it fails the COMMIT of any
    // transaction that inserted this address.
    let mut setup = raw(&name).await;
    sqlx::raw_sql(
        "CREATE FUNCTION fail_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN IF NEW.email = 'doomed@example.com' THEN \
         RAISE EXCEPTION 'refused at commit'; END IF; RETURN NEW; END $$; \
         CREATE CONSTRAINT TRIGGER fail_at_commit AFTER INSERT ON contacts \
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail_at_commit();",
    )
    .execute(&mut setup)
    .await
    .expect("trigger");
    let _ = setup.close().await;

    let group = [
        insert(&ws, "one@example.com"),
        insert(&ws, "doomed@example.com"),
        insert(&ws, "two@example.com"),
    ];
    let outcomes = commit_all(store.pool(), &group.iter().collect::<Vec<_>>()).await;
    for outcome in &outcomes {
        assert!(
            matches!(outcome, Err(StoreError::Unavailable(_))),
            "{outcome:?}"
        );
    }
    for email in ["one@example.com", "doomed@example.com", "two@example.com"] {
        assert!(!visible(&store, &ws, email).await, "{email} was stored");
    }
    // Alone, too.
    let alone = commit_all(store.pool(), &[&insert(&ws, "doomed@example.com")]).await;
    assert!(
        matches!(alone[0], Err(StoreError::Unavailable(_))),
        "{alone:?}"
    );
    still_commits(&store, &ws, "after@example.com").await;
    finish(store, name).await;
}

#[tokio::test]
async fn jobs_enqueued_in_a_group_wake_workers() {
    use posthorn_core::ports::Jobs;
    let (store, name) = fresh().await;
    let ws = workspace();
    // Start listening before the commits.
    let waiting = {
        let store = store.clone();
        tokio::spawn(async move { store.wait_for_work(Duration::from_secs(10)).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    let mut with_job = insert(&ws, "job@example.com");
    with_job.push(Write::EnqueueJob(posthorn_conformance::fixtures::job(
        &ws,
        Utc::now(),
    )));
    let group = [insert(&ws, "plain@example.com"), with_job];
    let outcomes = commit_all(store.pool(), &group.iter().collect::<Vec<_>>()).await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    waiting.await.expect("wait");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the worker was not woken by the group's commit"
    );
    finish(store, name).await;
}

/// A change set updating `email` to `status`, with `error` to tell the updates apart.
fn update(email: &EmailRecord, error: &str, status: EmailStatus) -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes.push(Write::UpdateEmail(EmailRecord {
        error: Some(error.to_string()),
        status,
        ..email.clone()
    }));
    changes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_updates_in_a_group_keep_the_order_of_one_commit_each() {
    let (store, name) = fresh().await;
    let ws = workspace();
    let at = Utc::now();
    let contact = contact_at(&ws, "to@example.com");
    let emails: Vec<EmailRecord> = (0..5).map(|_| email_record(&contact, at)).collect();
    let mut seed = insert(&ws, "to@example.com");
    for email in &emails[..3] {
        seed.push(Write::InsertEmail(email.clone()));
    }
    store.commit(seed).await.expect("seed");
    let commit = |group: Vec<ChangeSet>| committed(&store, group);
    let read = |i: usize| {
        let (store, email) = (&store, &emails[i]);
        async move {
            let stored = store.email(&email.workspace_id, &email.id).await;
            stored.expect("read").map(|e| (e.error, e.status))
        }
    };
    // One pass: email 0 is updated twice, and the later update wins.
    let group = vec![
        update(&emails[0], "first", EmailStatus::Sent),
        update(&emails[1], "one", EmailStatus::Sent),
        update(&emails[0], "second", EmailStatus::Failed),
    ];
    assert_eq!(commit(group).await, [true, true, true]);
    let second = Some((Some("second".to_string()), EmailStatus::Failed));
    assert_eq!(read(0).await, second);
    assert_eq!(
        read(1).await,
        Some((Some("one".to_string()), EmailStatus::Sent))
    );
    // Email 3 was never stored: its update fails alone.
    let group = vec![
        update(&emails[2], "two", EmailStatus::Sent),
        update(&emails[3], "ghost", EmailStatus::Sent),
    ];
    assert_eq!(commit(group).await, [true, false]);
    assert_eq!(
        read(2).await,
        Some((Some("two".to_string()), EmailStatus::Sent))
    );
    assert_eq!(read(3).await, None);
    // Updated before it is inserted (email 4, never stored): the update finds
    // nothing, as it would in a commit of its own, so the change set fails.
    let mut update_then_insert = update(&emails[4], "early", EmailStatus::Sent);
    update_then_insert.push(Write::InsertEmail(emails[4].clone()));
    assert_eq!(commit(vec![update_then_insert]).await, [false]);
    assert_eq!(read(4).await, None);
    finish(store, name).await;
}

/// A change set updating `contact` (as read) with `data.tag = tag`.
fn retag(contact: &Contact, tag: &str) -> ChangeSet {
    let mut contact = contact.clone();
    contact.data.insert("tag".to_string(), tag.into());
    let mut changes = ChangeSet::new();
    changes.push(Write::UpdateContact(contact));
    changes
}

/// Contact updates in one group are one statement (with the group's inserts before it),
/// and give what one commit each would: a second update from the same version conflicts,
/// an update at a stale version fails alone, a changed address is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contact_updates_in_a_group_keep_the_guards_of_one_commit_each() {
    let (store, name) = fresh().await;
    let ws = workspace();
    let contacts: Vec<Contact> = (0..4)
        .map(|i| contact_at(&ws, &format!("c{i}@example.com")))
        .collect();
    let mut seed = ChangeSet::new();
    for contact in &contacts {
        seed.push(Write::InsertContact(contact.clone()));
    }
    store.commit(seed).await.expect("seed");
    let commit = |group: Vec<ChangeSet>| committed(&store, group);
    let read = |address: &str| {
        let (store, ws, address) = (&store, &ws, address.to_string());
        async move {
            let stored = store.contact_by_email(ws, &address).await.expect("read");
            stored.map(|c| (c.version, c.data.get("tag").cloned()))
        }
    };
    // Contact 0 twice from version 0: the first is committed, the second conflicts.
    let group = vec![
        retag(&contacts[0], "first"),
        retag(&contacts[1], "one"),
        retag(&contacts[0], "second"),
    ];
    assert_eq!(commit(group).await, [true, true, false]);
    assert_eq!(
        read("c0@example.com").await,
        Some((1, Some("first".into())))
    );
    assert_eq!(read("c1@example.com").await, Some((1, Some("one".into()))));
    // A stale version fails alone; a new address and an event go with the others.
    let mut moved = contacts[2].clone();
    moved.email = EmailAddress::parse("moved@example.com").expect("address");
    let mut move_and_track = ChangeSet::new();
    move_and_track.push(Write::UpdateContact(moved));
    move_and_track.push(Write::AppendEvent(event(
        &ws,
        "moved",
        Some(&contacts[2].id),
        Utc::now(),
    )));
    let mut stale = contacts[3].clone();
    stale.version = 7;
    let group = vec![
        move_and_track,
        retag(&stale, "stale"),
        insert(&ws, "new@example.com"),
    ];
    assert_eq!(commit(group).await, [true, false, true]);
    assert_eq!(read("moved@example.com").await, Some((1, None)));
    assert_eq!(read("c2@example.com").await, None);
    assert_eq!(read("c3@example.com").await, Some((0, None)));
    assert!(visible(&store, &ws, "new@example.com").await);
    // A contact inserted and then updated in one group: the insert goes first.
    let fresh_contact = contact_at(&ws, "fresh@example.com");
    let mut insert_fresh = ChangeSet::new();
    insert_fresh.push(Write::InsertContact(fresh_contact.clone()));
    let group = vec![insert_fresh, retag(&fresh_contact, "after")];
    assert_eq!(commit(group).await, [true, true]);
    assert_eq!(
        read("fresh@example.com").await,
        Some((1, Some("after".into())))
    );
    finish(store, name).await;
}

/// A stored workspace whose change sets below guard an active contact limit.
async fn limited_workspace(store: &PgStore, name: &str) -> WorkspaceId {
    let workspace = posthorn_core::model::Workspace::new(&SystemClock, name.into(), Utc::now());
    let mut changes = ChangeSet::new();
    changes.push(Write::PutWorkspace(workspace.clone()));
    store.commit(changes).await.expect("workspace stored");
    workspace.id
}

/// A new ACTIVE contact of `ws` under its active limit.
fn insert_limited(ws: &WorkspaceId, email: &str) -> ChangeSet {
    let mut changes = insert(ws, email);
    changes.push(Write::GuardActiveLimit {
        workspace_id: ws.clone(),
        limit: 100,
    });
    changes
}

/// Deadlocks the server has broken in the database so far (its statistics are flushed a
/// little after the fact, so a caller waiting for one polls).
async fn deadlocks(conn: &mut PgConnection) -> i64 {
    sqlx::query_scalar(
        "SELECT coalesce(deadlocks, 0)::bigint FROM pg_stat_database \
         WHERE datname = current_database()",
    )
    .fetch_one(conn)
    .await
    .expect("deadlock count")
}

/// Two groups guarding the limits of two workspaces in opposite orders, let go at the same
/// moment, both commit without a deadlock: each group takes the workspaces' locks in id
/// order before anything else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_guarding_two_limits_in_opposite_orders_do_not_deadlock() {
    let (store, name) = fresh().await;
    let a = limited_workspace(&store, "limited-a").await;
    let b = limited_workspace(&store, "limited-b").await;
    // Both groups wait on the workspaces' rows held here, then go at once.
    let mut holder = raw(&name).await;
    sqlx::query("BEGIN")
        .execute(&mut holder)
        .await
        .expect("begin");
    sqlx::query("SELECT 1 FROM workspaces WHERE id = ANY($1) FOR NO KEY UPDATE")
        .bind(vec![a.as_str().to_owned(), b.as_str().to_owned()])
        .execute(&mut holder)
        .await
        .expect("rows held");
    let mut watcher = raw(&name).await;
    let before = deadlocks(&mut watcher).await;
    let spawn_group = |group: [ChangeSet; 2]| {
        let pool = store.pool().clone();
        tokio::spawn(async move {
            let refs: Vec<&ChangeSet> = group.iter().collect();
            commit_all(&pool, &refs).await
        })
    };
    let first = spawn_group([
        insert_limited(&a, "a1@example.com"),
        insert_limited(&b, "b1@example.com"),
    ]);
    let second = spawn_group([
        insert_limited(&b, "b2@example.com"),
        insert_limited(&a, "a2@example.com"),
    ]);
    let mut waiting = 0;
    for _ in 0..200 {
        waiting = sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
             AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
        )
        .fetch_one(&mut watcher)
        .await
        .expect("waiting backends");
        if waiting == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(waiting, 2, "both groups wait on the held rows");
    sqlx::query("ROLLBACK")
        .execute(&mut holder)
        .await
        .expect("rollback");
    for outcomes in [first.await.expect("first"), second.await.expect("second")] {
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    }
    // A deadlock would have been broken by now (one group starts over and commits too), so
    // only the server's count tells; it is flushed within a second or so.
    let mut broken = 0;
    for _ in 0..12 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        broken = deadlocks(&mut watcher).await - before;
        if broken > 0 {
            break;
        }
    }
    assert_eq!(broken, 0, "deadlocks broken by the server");
    for (ws, email) in [(&a, "a1"), (&a, "a2"), (&b, "b1"), (&b, "b2")] {
        assert!(visible(&store, ws, &format!("{email}@example.com")).await);
    }
    let _ = holder.close().await;
    let _ = watcher.close().await;
    finish(store, name).await;
}
