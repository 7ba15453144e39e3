//! Job completions on a real server: concurrent completions share statements (what each
//! answers is the conformance suite's check, run here).

use std::sync::Arc;

use posthorn_conformance::store::job_concurrent_completions_honour_their_leases;
use posthorn_conformance::StorePorts;

use crate::test_db::{assert_batched, finish, fresh};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_completions_share_statements() {
    let (store, name) = fresh().await;
    let store = Arc::new(store);
    let before = store.completions.batches();
    job_concurrent_completions_honour_their_leases(&StorePorts::of(Arc::clone(&store))).await;
    assert_batched(store.completions.batches() - before, 300, "completions");
    let store = Arc::into_inner(store).expect("sole owner");
    finish(store, name).await;
}
