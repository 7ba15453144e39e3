//! Fresh SQLite stores for tests: one temporary directory per call, and the probes below
//! the ports that some conformance checks need.

use std::sync::Arc;

use posthorn_conformance::{probe, ProbedStore, StorePorts};
use posthorn_sqlite::{testing, SqliteStore};
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::Connection;

/// A store on its own new, migrated database (the second value mirrors the PostgreSQL
/// suite's database name: nothing to drop here, the directory goes with the store).
pub async fn fresh() -> (SqliteStore, ()) {
    let store = testing::temporary()
        .await
        .unwrap_or_else(|e| panic!("cannot create a test database: {e}"));
    (store, ())
}

/// Closes the store; its directory is removed when it is dropped.
pub async fn finish(store: SqliteStore, _db: ()) {
    store.close().await;
}

/// A separate read-write connection to the store's file, for what the ports cannot do
/// (writing a row this version cannot read, counting raw rows).
pub async fn raw(store: &SqliteStore) -> SqliteConnection {
    SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(store.path()))
        .await
        .expect("raw connection")
}

/// Fresh ports for the conformance suite.
pub async fn make_ports() -> StorePorts {
    let (store, ()) = fresh().await;
    let store = Arc::new(store);
    StorePorts::of(store)
}

/// Fresh ports with probes of the same file: its `jobs` and `segment_members` tables
/// through a raw connection. Commits are heard at once (an in-process signal), so there is
/// no `commits_heard` probe.
pub async fn make_probed() -> ProbedStore {
    let (store, ()) = fresh().await;
    let store = Arc::new(store);
    let plant_unreadable_job = probe(store.clone(), |store| async move {
        let due = chrono::Utc::now() - chrono::TimeDelta::seconds(1);
        sqlx::query(
            "INSERT INTO jobs (id, payload, run_at) \
             VALUES ('x', '{\"kind\":\"from_the_future\"}', ?)",
        )
        .bind(due.timestamp_micros())
        .execute(&mut raw(&store).await)
        .await
        .expect("raw insert of an unreadable job");
    });
    let membership_rows = probe(store.clone(), |store| async move {
        let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM segment_members")
            .fetch_one(&mut raw(&store).await)
            .await
            .expect("counting segment_members");
        u64::try_from(rows).expect("a count is never negative")
    });
    ProbedStore {
        ports: StorePorts::of(store),
        commits_heard: None,
        plant_unreadable_job: Some(plant_unreadable_job),
        membership_rows: Some(membership_rows),
        stores_nul: true,
    }
}
