//! Job leases under concurrent claimers, lease expiry, wake-ups and unreadable payloads.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use posthorn_core::ports::{JobPayload, Jobs, NewJob, Store, Write};

use super::{changes, now};
use crate::support;

fn job(n: usize) -> NewJob {
    NewJob::at(
        JobPayload::DeliverEmail {
            workspace_id: "w".into(),
            email_id: format!("e{n}"),
        },
        now() - TimeDelta::seconds(1),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_claimers_never_share_a_job() {
    let (store, db) = support::fresh().await;
    let store = Arc::new(store);
    let total = 60;
    let writes = (0..total).map(|n| Write::EnqueueJob(job(n))).collect();
    store.commit(changes(writes)).await.expect("enqueue");

    let claimers: Vec<_> = (0..6)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let batch = store
                        .claim(now(), Duration::from_secs(60), 4)
                        .await
                        .expect("claim");
                    if batch.is_empty() {
                        return mine;
                    }
                    mine.extend(batch.into_iter().map(|j| j.id));
                }
            })
        })
        .collect();
    let mut seen = HashSet::new();
    let mut claimed = 0;
    for claimer in claimers {
        for id in claimer.await.expect("claimer") {
            claimed += 1;
            assert!(seen.insert(id.clone()), "job {id} was claimed twice");
        }
    }
    assert_eq!(claimed, total);
    let stats = store.stats(now()).await.expect("stats");
    assert_eq!((stats.queued, stats.running), (0, total as u64));
    let store = Arc::into_inner(store).expect("claimers are done");
    support::finish(store, db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_lease_is_claimable_and_the_old_token_is_stale() {
    let (store, db) = support::fresh().await;
    let t0 = now();
    store
        .commit(changes(vec![Write::EnqueueJob(job(1))]))
        .await
        .expect("enqueue");
    let lease = Duration::from_secs(30);

    let first = store.claim(t0, lease, 10).await.expect("claim");
    assert_eq!(first.len(), 1);
    let within = store
        .claim(t0 + TimeDelta::seconds(29), lease, 10)
        .await
        .expect("claim");
    assert!(within.is_empty(), "a live lease must not be claimed again");
    let stats = store
        .stats(t0 + TimeDelta::seconds(29))
        .await
        .expect("stats");
    assert_eq!((stats.queued, stats.running), (0, 1));
    let stats = store
        .stats(t0 + TimeDelta::seconds(30))
        .await
        .expect("stats");
    assert_eq!((stats.queued, stats.running), (1, 0));

    let second = store
        .claim(t0 + TimeDelta::seconds(30), lease, 10)
        .await
        .expect("claim");
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].id, first[0].id);
    assert_ne!(second[0].lease_token, first[0].lease_token);
    assert_eq!(
        second[0].attempts, 0,
        "an expired lease is not a failed attempt"
    );

    assert!(!store.complete(&first[0]).await.expect("complete"));
    assert!(!store
        .retry(&first[0], t0, true, "late")
        .await
        .expect("retry"));
    assert!(!store.dead_letter(&first[0], "late").await.expect("dead"));
    assert!(store.complete(&second[0]).await.expect("complete"));
    assert_eq!(store.stats(t0).await.expect("stats"), Default::default());
    support::finish(store, db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_with_a_job_wakes_a_waiting_worker() {
    let (store, db) = support::fresh().await;
    let store = Arc::new(store);
    store.wait_for_work(Duration::from_millis(300)).await;
    let waiter = {
        let store = store.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            store.wait_for_work(Duration::from_secs(20)).await;
            started.elapsed()
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    store
        .commit(changes(vec![Write::EnqueueJob(job(1))]))
        .await
        .expect("enqueue");
    let waited = waiter.await.expect("waiter");
    assert!(
        waited < Duration::from_secs(10),
        "waited {waited:?}: not woken by the commit"
    );
    let store = Arc::into_inner(store).expect("waiter is done");
    support::finish(store, db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_payload_is_parked_not_handed_out() {
    let (store, db) = support::fresh().await;
    let mut raw = support::raw(&store).await;
    sqlx::query(
        "INSERT INTO jobs (id, payload, run_at) VALUES ('x', '{\"kind\":\"from_the_future\"}', ?)",
    )
    .bind((now() - TimeDelta::seconds(1)).timestamp_micros())
    .execute(&mut raw)
    .await
    .expect("raw insert");
    drop(raw);
    store
        .commit(changes(vec![Write::EnqueueJob(job(1))]))
        .await
        .expect("enqueue");
    let claimed = store
        .claim(now(), Duration::from_secs(60), 10)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    assert!(matches!(
        claimed[0].payload,
        JobPayload::DeliverEmail { .. }
    ));
    let stats = store.stats(now()).await.expect("stats");
    assert_eq!((stats.running, stats.dead), (1, 1));
    support::finish(store, db).await;
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
