//! Fresh PostgreSQL stores for tests: one uuid-named database per call, and the probes
//! below the ports that some conformance checks need.

use std::sync::Arc;
use std::time::{Duration, Instant};

use posthorn_conformance::{probe, ProbedStore, StorePorts};
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
    store.close().await;
    drop(store);
    if let Err(e) = testing::drop_database(&admin_url(), &name).await {
        eprintln!("note: could not drop test database {name}: {e}");
    }
}

/// Fresh ports for the conformance suite (its databases are left to the throwaway server).
pub async fn make_ports() -> StorePorts {
    let (store, _name) = fresh().await;
    let store = Arc::new(store);
    StorePorts::of(store)
}

/// Fresh ports with probes of the same database: its `LISTEN`ing session, its `jobs` and
/// `segment_members` tables.
pub async fn make_probed() -> ProbedStore {
    let (store, name) = fresh().await;
    let store = Arc::new(store);
    let commits_heard = probe(
        (store.clone(), name),
        |(store, name): (Arc<PgStore>, String)| async move {
            listener_subscribed(&store, &name).await;
        },
    );
    let plant_unreadable_job = probe(store.clone(), |store| async move {
        sqlx::query(
            "INSERT INTO jobs (id, payload, run_at) \
             VALUES ('x', '{\"kind\":\"from_the_future\"}', now() - interval '1 second')",
        )
        .execute(store.pool())
        .await
        .expect("raw insert of an unreadable job");
    });
    let membership_rows = probe(store.clone(), |store| async move {
        let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM segment_members")
            .fetch_one(store.pool())
            .await
            .expect("counting segment_members");
        u64::try_from(rows).expect("a count is never negative")
    });
    ProbedStore {
        ports: StorePorts::of(store),
        commits_heard: Some(commits_heard),
        plant_unreadable_job: Some(plant_unreadable_job),
        membership_rows: Some(membership_rows),
        stores_nul: false,
    }
}

/// Returns once a session of database `db` has finished `LISTEN`ing (the shared job
/// listener is subscribed, so a `NOTIFY` from now on reaches it); panics after 10 s.
async fn listener_subscribed(store: &PgStore, db: &str) {
    let started = Instant::now();
    let mut poll = tokio::time::interval(Duration::from_millis(10));
    loop {
        poll.tick().await;
        let listening: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = $1 AND state = 'idle' AND query ILIKE 'LISTEN %'",
        )
        .bind(db)
        .fetch_one(store.pool())
        .await
        .expect("pg_stat_activity");
        if listening > 0 {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the job listener did not subscribe within 10 s"
        );
    }
}
