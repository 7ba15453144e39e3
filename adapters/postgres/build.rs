//! Compiles the PostgreSQL test suite in only when a test server is configured.
//!
//! The shared conformance macro generates plain tests that must get a store, so a missing
//! `POSTHORN_TEST_DATABASE_URL` cannot be turned into a skip at run time. Instead the
//! suite is compiled in under `cfg(posthorn_pg_tests)`; without it the test binary holds
//! an ignored test whose reason says why, and a test that fails when `CI=true`.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(posthorn_pg_tests)");
    println!("cargo::rerun-if-env-changed=POSTHORN_TEST_DATABASE_URL");
    // `sqlx::migrate!` embeds these files: rebuild when they change.
    println!("cargo::rerun-if-changed=migrations");
    let configured = std::env::var("POSTHORN_TEST_DATABASE_URL").is_ok_and(|url| !url.is_empty());
    if configured {
        println!("cargo::rustc-cfg=posthorn_pg_tests");
    }
}
