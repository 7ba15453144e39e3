//! Job completions on a real server: concurrent completions share statements, a stale lease
//! completes nothing, and each worker learns whether its own job was completed.

use std::sync::Arc;
use std::time::Duration;

use posthorn_conformance::fixtures::{self, now_ms};
use posthorn_core::model::Workspace;
use posthorn_core::ports::{Jobs, Write};

use crate::test_db::{assert_batched, finish, fresh};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_completions_share_statements_and_honour_leases() {
    let (store, name) = fresh().await;
    let store = Arc::new(store);
    let at = now_ms();
    let ws = Workspace::new(fixtures::ids(), "completions".to_string(), at);
    let n = 300;
    let writes = (0..n)
        .map(|_| Write::EnqueueJob(fixtures::job(&ws.id, at)))
        .collect();
    fixtures::commit(store.as_ref(), "enqueue", writes).await;
    let claimed = store
        .claim(at, Duration::from_secs(60), n)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), n);
    let before = store.completions.batches();
    let tasks: Vec<_> = claimed
        .into_iter()
        .enumerate()
        .map(|(i, mut job)| {
            let store = Arc::clone(&store);
            // Every third worker holds a lease that is no longer (or never was) its own.
            let stale = i % 3 == 0;
            if stale {
                job.lease_token = format!("stale-{i}");
            }
            tokio::spawn(async move {
                let done = store.complete(&job).await.expect("complete");
                assert_eq!(done, !stale, "job {i}");
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    assert_batched(store.completions.batches() - before, n, "completions");
    let stats = store.stats(at).await.expect("stats");
    assert_eq!((stats.queued, stats.running), (0, n as u64 / 3));
    let store = Arc::into_inner(store).expect("sole owner");
    finish(store, name).await;
}
