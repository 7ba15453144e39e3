//! Event reads on a real server: concurrent reads share statements, and each caller gets
//! the answer for its own workspace, address and event.

use std::sync::Arc;

use chrono::Utc;
use posthorn_core::model::{Contact, EmailAddress, WorkspaceId};
use posthorn_core::ports::{ChangeSet, Store, SystemClock, Write};

use crate::testing;

fn admin_url() -> String {
    std::env::var("POSTHORN_TEST_DATABASE_URL").unwrap_or_else(|_| {
        panic!("POSTHORN_TEST_DATABASE_URL was set at build time but is unset now")
    })
}

fn contact(ws: &WorkspaceId, email: &str) -> Contact {
    let email = EmailAddress::parse(email).expect("email");
    Contact::new(
        &SystemClock,
        ws,
        email,
        true,
        Default::default(),
        false,
        Utc::now(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_event_reads_share_statements_and_keep_their_answers() {
    let (store, name) = testing::fresh_database(&admin_url())
        .await
        .unwrap_or_else(|e| panic!("cannot create a test database: {e}"));
    let store = Arc::new(store);
    let (a, b) = (
        WorkspaceId::generate(&SystemClock),
        WorkspaceId::generate(&SystemClock),
    );
    // Even addresses have a contact in workspace `a` only; odd ones have none anywhere.
    let n = 300;
    let mut changes = ChangeSet::new();
    let mut known = Vec::new();
    for i in (0..n).step_by(2) {
        let c = contact(&a, &format!("c{i}@example.com"));
        known.push(c.id.clone());
        changes.push(Write::InsertContact(c));
    }
    store.commit(changes).await.expect("seed contacts");
    let before = store.event_reads.batches();
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let store = Arc::clone(&store);
            let ws = if i % 3 == 0 { b.clone() } else { a.clone() };
            tokio::spawn(async move {
                let email = format!("C{i}@Example.com");
                let reads = store.event_reads(&ws, &email, "signup").await;
                (i, ws, reads)
            })
        })
        .collect();
    for task in tasks {
        let (i, ws, reads) = task.await.expect("task");
        let reads = reads.unwrap_or_else(|e| panic!("read {i}: {e}"));
        let expected = (i % 2 == 0 && ws == a).then(|| known[i / 2].clone());
        assert_eq!(reads.contact.map(|c| c.id), expected, "read {i}");
        assert!(reads.tracked_segments.is_empty());
        assert!(!reads.event_interest);
    }
    let statements = store.event_reads.batches() - before;
    assert!(
        statements < n as u64 / 4,
        "{n} concurrent event reads took {statements} statements"
    );
    let store = Arc::into_inner(store).expect("sole owner");
    store.pool().close().await;
    drop(store);
    if let Err(e) = testing::drop_database(&admin_url(), &name).await {
        eprintln!("note: could not drop test database {name}: {e}");
    }
}
