//! Domain reads on a real server: concurrent reads share statements, and each caller gets
//! its own workspace's domains, oldest first.

use std::sync::Arc;

use posthorn_core::model::{Domain, WorkspaceId};
use posthorn_core::ports::{ChangeSet, Store, SystemClock, Write};

use crate::test_db::{assert_batched, finish, fresh};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_domain_reads_share_statements_and_keep_their_answers() {
    let (store, name) = fresh().await;
    let store = Arc::new(store);
    let clock = SystemClock;
    let (a, b, none) = (
        WorkspaceId::generate(&clock),
        WorkspaceId::generate(&clock),
        WorkspaceId::generate(&clock),
    );
    let mut changes = ChangeSet::new();
    let mut expected = std::collections::HashMap::new();
    for (ws, names) in [
        (&a, ["a1.example", "a2.example"]),
        (&b, ["b1.example", "b2.example"]),
    ] {
        let mut domains = Vec::new();
        for (k, name) in names.into_iter().enumerate() {
            // Inserted newest first: the reads answer oldest first.
            let at = chrono::Utc::now() - chrono::Duration::seconds(k as i64);
            let domain = posthorn_conformance::fixtures::domain(ws, name, at);
            changes.push(Write::InsertDomain(domain.clone()));
            domains.insert(0, domain.domain);
        }
        expected.insert(ws.clone(), domains);
    }
    expected.insert(none.clone(), Vec::new());
    store.commit(changes).await.expect("seed domains");
    let before = store.domain_reads.batches();
    let n = 300;
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let store = Arc::clone(&store);
            let ws = [&a, &b, &none][i % 3].clone();
            tokio::spawn(async move { (ws.clone(), store.domains(&ws).await) })
        })
        .collect();
    for task in tasks {
        let (ws, read) = task.await.expect("task");
        let names: Vec<String> = read
            .expect("domains")
            .into_iter()
            .map(|d: Domain| d.domain)
            .collect();
        assert_eq!(Some(&names), expected.get(&ws), "workspace {ws}");
    }
    assert_batched(store.domain_reads.batches() - before, n, "domain reads");
    let store = Arc::into_inner(store).expect("sole owner");
    finish(store, name).await;
}
