//! Event reads on a real server: concurrent reads share statements, and each caller gets
//! the answer for its own workspace, address and event.

use std::sync::Arc;

use chrono::Utc;
use posthorn_conformance::fixtures::contact;
use posthorn_core::model::WorkspaceId;
use posthorn_core::ports::{ChangeSet, Store, SystemClock, Write};

use crate::test_db::{assert_batched, finish, fresh};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_event_reads_share_statements_and_keep_their_answers() {
    let (store, name) = fresh().await;
    let store = Arc::new(store);
    let (a, b) = (
        WorkspaceId::generate(&SystemClock),
        WorkspaceId::generate(&SystemClock),
    );
    // Even reads ask for an address with a contact in workspace `a` only; odd ones for an
    // address with none anywhere.
    let n = 300;
    let mut changes = ChangeSet::new();
    let mut addresses = Vec::new();
    let mut known = Vec::new();
    for i in 0..n {
        let c = contact(&a, &format!("c{i}"), true, Utc::now());
        addresses.push(c.email.to_string());
        if i % 2 == 0 {
            known.push(c.id.clone());
            changes.push(Write::InsertContact(c));
        }
    }
    store.commit(changes).await.expect("seed contacts");
    let before = store.event_reads.batches();
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let store = Arc::clone(&store);
            let ws = if i % 3 == 0 { b.clone() } else { a.clone() };
            // In another case: the reads are by the lower-cased address.
            let email = addresses[i].to_uppercase();
            tokio::spawn(async move {
                let reads = store.event_reads(&ws, &email, Some("signup")).await;
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
    assert_batched(store.event_reads.batches() - before, n, "event reads");
    let store = Arc::into_inner(store).expect("sole owner");
    finish(store, name).await;
}

/// The plan PostgreSQL caches for the statement probes the unique index once per read: a
/// plain join, planned generically while the table was small, hashed a scan of the whole
/// table instead, and kept doing so while the table grew.
#[tokio::test]
async fn the_cached_plan_probes_the_address_index() {
    let (store, name) = fresh().await;
    let ws = WorkspaceId::generate(&SystemClock);
    let mut changes = ChangeSet::new();
    for i in 0..1000 {
        changes.push(Write::InsertContact(contact(
            &ws,
            &format!("p{i}"),
            true,
            Utc::now(),
        )));
    }
    store.commit(changes).await.expect("seed contacts");
    let mut conn = store.pool().acquire().await.expect("connection");
    let prepare = format!(
        "PREPARE event_reads_plan(text[], text[], text[]) AS {}",
        super::EVENT_READS
    );
    for statement in [
        "ANALYZE contacts".to_string(),
        "SET plan_cache_mode = force_generic_plan".to_string(),
        prepare,
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(statement))
            .execute(&mut *conn)
            .await
            .expect("set-up statement");
    }
    let plan: Vec<String> = sqlx::query_scalar(
        "EXPLAIN EXECUTE event_reads_plan(ARRAY['w'], ARRAY['a@example.com'], ARRAY['e'])",
    )
    .fetch_all(&mut *conn)
    .await
    .expect("explain");
    let plan = plan.join("\n");
    assert!(
        plan.contains("contacts_workspace_id_email_key") && !plan.contains("Hash"),
        "the generic plan does not probe the address index:\n{plan}"
    );
    drop(conn);
    finish(store, name).await;
}
