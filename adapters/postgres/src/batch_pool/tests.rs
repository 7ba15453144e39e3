//! The batchers' statements run generic plans; the main pool keeps PostgreSQL's default.

use chrono::Utc;
use posthorn_conformance::fixtures::{contact, email_record};
use posthorn_core::model::WorkspaceId;
use posthorn_core::ports::{ChangeSet, Store, SystemClock, Write};
use sqlx::{AssertSqlSafe, Row};

use crate::record_reads::EMAILS_OF;

use crate::test_db::{finish, fresh};

/// Generic and custom plans of the statements on `conn` that read contacts.
async fn contact_read_plans(conn: &mut sqlx::PgConnection) -> (i64, i64) {
    sqlx::query_as(
        "SELECT COALESCE(sum(generic_plans), 0)::int8, COALESCE(sum(custom_plans), 0)::int8 \
         FROM pg_prepared_statements WHERE statement LIKE '%FROM contacts%'",
    )
    .fetch_one(conn)
    .await
    .expect("prepared statements")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batched_reads_run_a_generic_plan_and_other_statements_the_default() {
    let (store, name) = fresh().await;
    let ws = WorkspaceId::generate(&SystemClock);
    // One after another, so each is a batch of its own; more than the five custom plans
    // after which PostgreSQL would weigh the generic one.
    let reads = 12;
    for i in 0..reads {
        store
            .event_reads(&ws, &format!("c{i}@example.test"), Some("signup"))
            .await
            .expect("event read");
    }
    // Hold every open connection of the batchers at once, so each is looked at once.
    let mut held = Vec::new();
    let (mut generic, mut custom) = (0, 0);
    for _ in 0..store.batch_pool.size() {
        let mut conn = store.batch_pool.acquire().await.expect("batch connection");
        let (g, c) = contact_read_plans(&mut conn).await;
        generic += g;
        custom += c;
        held.push(conn);
    }
    assert_eq!(custom, 0, "no batched read planned for its values");
    assert!(
        generic >= reads,
        "{generic} generic plans for {reads} reads"
    );
    drop(held);

    let mode: String = sqlx::query_scalar("SHOW plan_cache_mode")
        .fetch_one(store.pool())
        .await
        .expect("show");
    assert_eq!(mode, "auto", "the main pool keeps the default");
    finish(store, name).await;
}

/// The plan `conn` runs for its prepared statement `probe` (two text arrays).
async fn probe_plan(conn: &mut sqlx::PgConnection) -> String {
    let rows = sqlx::raw_sql("EXPLAIN EXECUTE probe('{a}', '{b}')")
        .fetch_all(conn)
        .await
        .expect("explain");
    rows.iter()
        .map(|row| row.get::<String, _>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_made_on_an_empty_table_still_looks_rows_up_by_key_once_it_has_grown() {
    let (store, name) = fresh().await;
    let mut conn = store.batch_pool.acquire().await.expect("batch connection");
    // Planned while `emails` is empty, as on a new deployment.
    sqlx::raw_sql(AssertSqlSafe(format!(
        "PREPARE probe(text[], text[]) AS {EMAILS_OF}"
    )))
    .execute(&mut *conn)
    .await
    .expect("prepare");
    let empty = probe_plan(&mut conn).await;

    let ws = WorkspaceId::generate(&SystemClock);
    let someone = contact(&ws, "someone", true, Utc::now());
    let mut changes = ChangeSet::new();
    changes.push(Write::InsertContact(someone.clone()));
    for _ in 0..2_000 {
        changes.push(Write::InsertEmail(email_record(&someone, Utc::now())));
    }
    store.commit(changes).await.expect("seed emails");

    let grown = probe_plan(&mut conn).await;
    for plan in [&empty, &grown] {
        assert!(plan.contains("Index Scan"), "{plan}");
        assert!(!plan.contains("Seq Scan on emails"), "{plan}");
    }
    drop(conn);
    finish(store, name).await;
}
