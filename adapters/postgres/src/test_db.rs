//! A fresh database per test for this crate's own tests (`POSTHORN_TEST_DATABASE_URL`).

use crate::{testing, PgStore};

/// The server the test databases are made on.
pub(crate) fn admin_url() -> String {
    std::env::var("POSTHORN_TEST_DATABASE_URL").unwrap_or_else(|_| {
        panic!("POSTHORN_TEST_DATABASE_URL was set at build time but is unset now")
    })
}

/// A store on a new, migrated database, and the database's name (for [`finish`]).
pub(crate) async fn fresh() -> (PgStore, String) {
    testing::fresh_database(&admin_url())
        .await
        .unwrap_or_else(|e| panic!("cannot create a test database: {e}"))
}

/// Closes the store and drops its database.
pub(crate) async fn finish(store: PgStore, name: String) {
    store.close().await;
    drop(store);
    if let Err(e) = testing::drop_database(&admin_url(), &name).await {
        eprintln!("note: could not drop test database {name}: {e}");
    }
}

/// Fails unless `n` concurrent calls went through their batcher (at least one statement)
/// and took fewer than a quarter as many statements: under load they must share batches.
pub(crate) fn assert_batched(statements: u64, n: usize, what: &str) {
    assert!(
        (1..n as u64 / 4).contains(&statements),
        "{n} concurrent {what} took {statements} statements of their batcher"
    );
}
