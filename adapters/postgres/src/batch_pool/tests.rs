//! The batched reads run generic plans made for key lookups; the main pool keeps PostgreSQL's
//! defaults.

use posthorn_core::model::WorkspaceId;
use posthorn_core::ports::{Store, SystemClock};
use sqlx::{AssertSqlSafe, Row};

use crate::event_reads::EVENT_READS;
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
    // In PostgreSQL's default mode the first five executions on a connection are planned
    // for their values. (A connection may have been let go since its reads: not every read
    // is still counted.)
    assert_eq!(custom, 0, "no batched read planned for its values");
    assert!(generic > 0, "the reads' executions are counted");
    drop(held);

    let mode: String = sqlx::query_scalar("SHOW plan_cache_mode")
        .fetch_one(store.pool())
        .await
        .expect("show");
    assert_eq!(mode, "auto", "the main pool keeps the default");
    finish(store, name).await;
}

/// The plan `conn` runs for `sql` (`params` parameters) prepared on it now.
async fn plan_of(conn: &mut sqlx::PgConnection, name: &str, sql: &str, params: usize) -> String {
    sqlx::raw_sql(AssertSqlSafe(format!("PREPARE {name} AS {sql}")))
        .execute(&mut *conn)
        .await
        .expect("prepare");
    // A generic plan does not depend on the values.
    let nulls = vec!["NULL"; params].join(", ");
    let rows = sqlx::raw_sql(AssertSqlSafe(format!("EXPLAIN EXECUTE {name}({nulls})")))
        .fetch_all(&mut *conn)
        .await
        .expect("explain");
    rows.iter()
        .map(|row| row.get::<String, _>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_made_on_empty_tables_look_rows_up_by_key() {
    let (store, name) = fresh().await;
    let mut conn = store.batch_pool.acquire().await.expect("batch connection");
    // Planned while the tables are empty, as on a new deployment; PostgreSQL keeps such a
    // plan while the table grows.
    for (statement, sql, params, table) in [
        ("read_emails", EMAILS_OF, 2, "emails"),
        ("event_reads", EVENT_READS, 3, "contacts"),
    ] {
        let plan = plan_of(&mut conn, statement, sql, params).await;
        assert!(plan.contains("Index Scan"), "{statement}: {plan}");
        assert!(
            !plan.contains(&format!("Seq Scan on {table}")),
            "{statement}: {plan}"
        );
    }
    drop(conn);
    finish(store, name).await;
}
