//! Fresh PostgreSQL stores for tests: one uuid-named database per call.

use std::sync::Arc;

use posthorn_conformance::StorePorts;
use posthorn_postgres::{testing, PgStore};

/// The variable naming the test server's admin URL.
pub const URL_VAR: &str = "POSTHORN_TEST_DATABASE_URL";

/// The admin URL of the test server (see [`posthorn_conformance::test_service_url`]).
pub fn admin_url() -> String {
    posthorn_conformance::test_service_url(URL_VAR)
}

/// A store on its own new, migrated database, and that database's name.
pub async fn fresh() -> (PgStore, String) {
    testing::fresh_database(&admin_url())
        .await
        .unwrap_or_else(|e| panic!("cannot create a test database: {e}"))
}

/// Closes the store's pool and drops its database.
pub async fn finish(store: PgStore, name: String) {
    store.pool().close().await;
    drop(store);
    if let Err(e) = testing::drop_database(&admin_url(), &name).await {
        eprintln!("note: could not drop test database {name}: {e}");
    }
}

/// Fresh ports for the conformance suite (its databases are left to the throwaway server).
pub async fn make_ports() -> StorePorts {
    let (store, _name) = fresh().await;
    let store = Arc::new(store);
    StorePorts {
        store: store.clone(),
        jobs: store,
    }
}
