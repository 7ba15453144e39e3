//! Commit atomicity and guarded writes under real concurrency.

use std::sync::Arc;

use posthorn_core::ports::{JobPayload, Jobs, NewJob, Store, StoreError, Write};

use super::{changes, contact, now, workspace};
use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_guard_rolls_back_every_earlier_write() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let first = contact(&ws.id, "first@example.com");
    let taken = contact(&ws.id, "taken@example.com");
    store
        .commit(changes(vec![Write::InsertContact(taken.clone())]))
        .await
        .expect("seed contact");

    let job = NewJob::at(
        JobPayload::DeliverEmail {
            workspace_id: ws.id.clone(),
            email_id: "e1".into(),
        },
        now(),
    );
    let duplicate = contact(&ws.id, "taken@example.com");
    let result = store
        .commit(changes(vec![
            Write::PutWorkspace(ws.clone()),
            Write::InsertContact(first.clone()),
            Write::EnqueueJob(job),
            Write::InsertContact(duplicate),
        ]))
        .await;

    assert!(
        matches!(result, Err(StoreError::Conflict(_))),
        "got {result:?}"
    );
    assert_eq!(store.workspace(&ws.id).await.expect("read"), None);
    assert_eq!(store.contact(&ws.id, &first.id).await.expect("read"), None);
    assert_eq!(store.stats(now()).await.expect("stats").queued, 0);
    support::finish(store, db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_of_one_email_have_one_winner() {
    let (store, db) = support::fresh().await;
    let store = Arc::new(store);
    let ws = workspace();
    let tasks: Vec<_> = (0..12)
        .map(|_| {
            let store = store.clone();
            let c = contact(&ws.id, "race@example.com");
            tokio::spawn(async move { store.commit(changes(vec![Write::InsertContact(c)])).await })
        })
        .collect();
    let mut won = 0;
    for task in tasks {
        match task.await.expect("task") {
            Ok(()) => won += 1,
            Err(StoreError::Conflict(_)) => {}
            Err(other) => panic!("expected Conflict, got {other:?}"),
        }
    }
    assert_eq!(won, 1);
    let stored = store
        .contact_by_email(&ws.id, "RACE@example.com")
        .await
        .expect("read")
        .expect("one contact");
    assert_eq!(stored.version, 0);
    let store = Arc::into_inner(store).expect("tasks are done");
    support::finish(store, db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_updates_at_one_version_have_one_winner() {
    let (store, db) = support::fresh().await;
    let store = Arc::new(store);
    let ws = workspace();
    let c = contact(&ws.id, "versioned@example.com");
    store
        .commit(changes(vec![Write::InsertContact(c.clone())]))
        .await
        .expect("insert");
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let store = store.clone();
            let mut update = c.clone();
            update.subscribed = i % 2 == 0;
            tokio::spawn(async move {
                store
                    .commit(changes(vec![Write::UpdateContact(update)]))
                    .await
            })
        })
        .collect();
    let mut won = 0;
    for task in tasks {
        match task.await.expect("task") {
            Ok(()) => won += 1,
            Err(StoreError::Conflict(_)) => {}
            Err(other) => panic!("expected Conflict, got {other:?}"),
        }
    }
    assert_eq!(won, 1);
    let stored = store
        .contact(&ws.id, &c.id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(stored.version, 1);
    let store = Arc::into_inner(store).expect("tasks are done");
    support::finish(store, db).await;
}
