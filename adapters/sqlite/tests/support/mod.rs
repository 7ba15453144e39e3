//! Fresh SQLite stores for tests: one temporary directory per call.

use std::sync::Arc;

use posthorn_conformance::StorePorts;
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
    StorePorts {
        store: store.clone(),
        jobs: store,
    }
}
