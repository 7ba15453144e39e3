//! Job leases under concurrent claimers, lease expiry, wake-ups and unreadable payloads.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use posthorn_core::ports::{JobPayload, Jobs, NewJob, Store, Write};
use posthorn_postgres::PgStore;

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

/// Returns once a session of database `db` has finished `LISTEN`ing (the shared job
/// listener is subscribed, so a `NOTIFY` from now on reaches it); panics after 10 s.
async fn listener_subscribed(store: &PgStore, db: &str) {
    let started = Instant::now();
    let mut poll = tokio::time::interval(Duration::from_millis(10));
    loop {
        poll.tick().await;
        let listening: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = $1 AND state = 'idle' AND query ILIKE 'LISTEN %'",
        )
        .bind(db)
        .fetch_one(store.pool())
        .await
        .expect("pg_stat_activity");
        if listening > 0 {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the job listener did not subscribe within 10 s"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_with_a_job_wakes_a_waiting_worker() {
    let (store, db) = support::fresh().await;
    let store = Arc::new(store);
    // Its own timeout is far beyond the bound below: only a wake-up ends it in time.
    let waiter = {
        let store = store.clone();
        tokio::spawn(async move { store.wait_for_work(Duration::from_secs(120)).await })
    };
    // The waiter starts the shared listener after it has registered for wake-ups, so once
    // the listener is subscribed the waiter is waiting: one commit must wake it.
    listener_subscribed(&store, &db).await;
    assert!(!waiter.is_finished(), "woken with no work at all");
    store
        .commit(changes(vec![Write::EnqueueJob(job(1))]))
        .await
        .expect("enqueue");
    tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("not woken by the commit within 10 s")
        .expect("waiter");
    let store = Arc::into_inner(store).expect("waiter is done");
    support::finish(store, db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_payload_is_parked_not_handed_out() {
    let (store, db) = support::fresh().await;
    sqlx::query("INSERT INTO jobs (id, payload, run_at) VALUES ('x', '{\"kind\":\"from_the_future\"}', now() - interval '1 second')")
        .execute(store.pool())
        .await
        .expect("raw insert");
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
