//! Job settlements on a real server: concurrent completions and retries share statements
//! (what each answers is the conformance suite's check, run here).

use std::sync::Arc;

use posthorn_conformance::store::{
    job_concurrent_completions_honour_their_leases,
    job_concurrent_retries_honour_their_leases_and_times,
};
use posthorn_conformance::StorePorts;

use crate::test_db::{assert_batched, finish, fresh};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_completions_share_statements() {
    let (store, name) = fresh().await;
    let store = Arc::new(store);
    let before = store.settlements.batches();
    job_concurrent_completions_honour_their_leases(&StorePorts::of(Arc::clone(&store))).await;
    assert_batched(store.settlements.batches() - before, 300, "completions");
    let store = Arc::into_inner(store).expect("sole owner");
    finish(store, name).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_retries_share_statements() {
    let (store, name) = fresh().await;
    let store = Arc::new(store);
    let before = store.settlements.batches();
    job_concurrent_retries_honour_their_leases_and_times(&StorePorts::of(Arc::clone(&store))).await;
    assert_batched(store.settlements.batches() - before, 120, "retries");
    let store = Arc::into_inner(store).expect("sole owner");
    finish(store, name).await;
}
