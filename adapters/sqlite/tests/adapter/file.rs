//! The database file: the lock beside it, read-only opens next to a live store, backups,
//! and reopening a file with its data and pending jobs.

use std::time::Duration;

use chrono::TimeDelta;
use posthorn_core::ports::{JobPayload, Jobs, NewJob, Store, StoreError, Write};
use posthorn_sqlite::{Durability, SqliteError, SqliteOptions, SqliteStore};

use super::{changes, contact, now, workspace};

fn job() -> NewJob {
    NewJob::at(
        &posthorn_core::ports::SystemClock,
        JobPayload::DeliverEmail {
            workspace_id: "w".into(),
            email_id: "e1".into(),
        },
        now() - TimeDelta::seconds(1),
    )
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_creates_directories_and_the_lock_refuses_a_second_open() {
    let dir = temp_dir();
    let path = dir.path().join("nested/deeper/posthorn.db");
    let store = SqliteStore::open(&path, SqliteOptions::default())
        .await
        .expect("open");
    assert!(path.is_file());
    assert!(dir.path().join("nested/deeper/posthorn.db.lock").is_file());

    let second = SqliteStore::open(&path, SqliteOptions::default()).await;
    match second {
        Err(err @ SqliteError::Locked { .. }) => {
            let message = err.to_string();
            assert!(
                message.contains("another Posthorn server is using")
                    && message.contains("posthorn.db"),
                "{message}"
            );
        }
        other => panic!("a second open must be refused, got {other:?}"),
    }

    // A clone keeps the lock; dropping the last one releases it.
    let clone = store.clone();
    drop(store);
    assert!(matches!(
        SqliteStore::open(&path, SqliteOptions::default()).await,
        Err(SqliteError::Locked { .. })
    ));
    clone.close().await;
    drop(clone);
    let again = SqliteStore::open(&path, SqliteOptions::default())
        .await
        .expect("open after the first store is gone");
    again.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_open_works_beside_the_writer() {
    let dir = temp_dir();
    let path = dir.path().join("posthorn.db");
    let store = SqliteStore::open(&path, SqliteOptions::default())
        .await
        .expect("open");
    let ws = workspace();
    store
        .commit(changes(vec![Write::PutWorkspace(ws.clone())]))
        .await
        .expect("put");

    let reader = SqliteStore::open_read_only(&path)
        .await
        .expect("read-only open beside the writer");
    assert!(reader.is_read_only());
    assert_eq!(reader.workspace(&ws.id).await, Ok(Some(ws.clone())));

    // Later commits of the writer are seen by the reader.
    let c = contact(&ws.id, "later@example.com");
    store
        .commit(changes(vec![Write::InsertContact(c.clone())]))
        .await
        .expect("insert");
    assert_eq!(
        reader
            .contact(&ws.id, &c.id)
            .await
            .expect("read")
            .map(|c| c.id),
        Some(c.id.clone())
    );

    // Writes through the read-only store fail as `Unavailable` and change nothing.
    let result = reader
        .commit(changes(vec![Write::PutWorkspace(workspace())]))
        .await;
    assert!(
        matches!(result, Err(StoreError::Unavailable(_))),
        "{result:?}"
    );
    assert!(reader
        .claim(now(), Duration::from_secs(5), 1)
        .await
        .is_err());
    assert_eq!(store.workspaces().await.expect("list").len(), 1);

    let missing = SqliteStore::open_read_only(dir.path().join("missing.db")).await;
    assert!(
        matches!(missing, Err(SqliteError::Io { .. })),
        "{missing:?}"
    );
    reader.close().await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_holds_the_same_rows() {
    let dir = temp_dir();
    let path = dir.path().join("posthorn.db");
    let store = SqliteStore::open(&path, SqliteOptions::default())
        .await
        .expect("open");
    let ws = workspace();
    let contacts: Vec<_> = (0..5)
        .map(|i| contact(&ws.id, &format!("c{i}@example.com")))
        .collect();
    let mut writes = vec![Write::PutWorkspace(ws.clone()), Write::EnqueueJob(job())];
    writes.extend(contacts.iter().cloned().map(Write::InsertContact));
    store.commit(changes(writes)).await.expect("seed");

    let backup = dir.path().join("backups/copy.db");
    store.backup_to(&backup).await.expect("backup");
    assert!(backup.is_file());
    assert!(matches!(
        store.backup_to(&backup).await,
        Err(SqliteError::DestinationExists { .. })
    ));

    // A backup taken through a read-only open, while the writer holds the lock.
    let reader = SqliteStore::open_read_only(&path)
        .await
        .expect("read-only open");
    let second = dir.path().join("backups/from-reader.db");
    reader
        .backup_to(&second)
        .await
        .expect("backup from read-only");
    reader.close().await;
    store.close().await;
    drop(store);

    for copy in [backup, second] {
        let restored = SqliteStore::open(&copy, SqliteOptions::default())
            .await
            .expect("open the copy");
        assert_eq!(restored.workspace(&ws.id).await, Ok(Some(ws.clone())));
        for c in &contacts {
            let found = restored.contact(&ws.id, &c.id).await.expect("read");
            assert_eq!(found.map(|f| f.email), Some(c.email.clone()));
        }
        assert_eq!(restored.stats(now()).await.expect("stats").queued, 1);
        restored.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_keeps_data_and_pending_jobs() {
    let dir = temp_dir();
    let path = dir.path().join("posthorn.db");
    let options = SqliteOptions::default().with_durability(Durability::Normal);
    let store = SqliteStore::open(&path, options.clone())
        .await
        .expect("open");
    let ws = workspace();
    let c = contact(&ws.id, "kept@example.com");
    let pending = job();
    store
        .commit(changes(vec![
            Write::PutWorkspace(ws.clone()),
            Write::InsertContact(c.clone()),
            Write::EnqueueJob(pending.clone()),
        ]))
        .await
        .expect("seed");
    // A claimed, unsettled job is claimable again after its lease once reopened.
    let claimed = store
        .claim(now(), Duration::from_secs(30), 1)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    store.close().await;
    drop(store);

    let reopened = SqliteStore::open(&path, SqliteOptions::default())
        .await
        .expect("reopen (migrations already applied)");
    assert_eq!(reopened.workspace(&ws.id).await, Ok(Some(ws.clone())));
    let stored = reopened.contact(&ws.id, &c.id).await.expect("read");
    assert_eq!(stored.map(|s| s.version), Some(0));
    let later = now() + TimeDelta::seconds(31);
    let again = reopened
        .claim(later, Duration::from_secs(30), 10)
        .await
        .expect("claim");
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].id, pending.id);
    assert_eq!(again[0].claims, 2);
    assert!(reopened.complete(&again[0]).await.expect("complete"));
    reopened.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_is_in_wal_mode_and_a_held_lock_is_waited_out() {
    let (store, db) = crate::support::fresh().await;
    let mut raw = crate::support::raw(&store).await;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut raw)
        .await
        .expect("journal mode");
    assert_eq!(mode, "wal");

    // Another connection holds the write lock for a while: the commit waits (busy
    // timeout) instead of failing with SQLITE_BUSY, and lands once the lock is released.
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut raw)
        .await
        .expect("take the write lock");
    let ws = workspace();
    let pending = {
        let store = store.clone();
        let ws = ws.clone();
        tokio::spawn(async move { store.commit(changes(vec![Write::PutWorkspace(ws)])).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !pending.is_finished(),
        "the commit cannot have the lock yet"
    );
    sqlx::query("COMMIT")
        .execute(&mut raw)
        .await
        .expect("release the write lock");
    assert_eq!(pending.await.expect("commit task"), Ok(()));
    assert_eq!(store.workspace(&ws.id).await, Ok(Some(ws)));
    drop(raw);
    crate::support::finish(store, db).await;
}
