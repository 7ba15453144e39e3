//! Writers, claimers and readers of one file at once.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use posthorn_core::ports::{JobPayload, Jobs, NewJob, Store, Write};

use super::{changes, now};
use crate::support;

fn job(n: usize) -> NewJob {
    NewJob::at(
        &posthorn_core::ports::SystemClock,
        JobPayload::DeliverEmail {
            workspace_id: "w".into(),
            email_id: format!("e{n}").into(),
        },
        now() - TimeDelta::seconds(1),
    )
}

/// Writers, claimers and readers at once (and a read-only store beside them): one writer
/// connection serializes the writes, so nothing fails with `SQLITE_BUSY`, and every job
/// is claimed exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_claims_and_reads_together_never_fail() {
    let (store, db) = support::fresh().await;
    let store = Arc::new(store);
    let reader = Arc::new(
        posthorn_sqlite::SqliteStore::open_read_only(store.path())
            .await
            .expect("read-only open"),
    );
    let (writers, per_writer) = (4, 40);
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for w in 0..writers {
        let store = store.clone();
        let done = done.clone();
        tasks.push(tokio::spawn(async move {
            for n in 0..per_writer {
                store
                    .commit(changes(vec![Write::EnqueueJob(job(w * 1000 + n))]))
                    .await
                    .expect("commit");
            }
            done.fetch_add(1, Ordering::SeqCst);
            Vec::new()
        }));
    }
    for _ in 0..2 {
        let store = store.clone();
        let done = done.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                // Read before claiming: an empty claim after every writer finished is final.
                let finished = done.load(Ordering::SeqCst) == writers;
                let batch = store
                    .claim(now(), Duration::from_secs(600), 3)
                    .await
                    .expect("claim");
                if batch.is_empty() {
                    if finished {
                        return mine;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                for job in batch {
                    assert!(store.complete(&job).await.expect("complete"));
                    mine.push(job.id);
                }
            }
        }));
    }
    for source in [store.clone(), reader.clone()] {
        tasks.push(tokio::spawn(async move {
            for _ in 0..100 {
                source.stats(now()).await.expect("stats");
                source.workspaces().await.expect("read");
            }
            Vec::new()
        }));
    }
    let mut seen = HashSet::new();
    for task in tasks {
        for id in task.await.expect("task") {
            assert!(seen.insert(id.clone()), "job {id} was claimed twice");
        }
    }
    assert_eq!(seen.len(), writers * per_writer);
    assert_eq!(store.stats(now()).await.expect("stats"), Default::default());
    reader.close().await;
    drop(reader);
    let store = Arc::into_inner(store).expect("tasks are done");
    support::finish(store, db).await;
}
