//! Compiles the Redis test suite in only when a test server is configured.
//!
//! The shared conformance macros generate plain tests that must get an adapter, so a
//! missing `POSTHORN_TEST_REDIS_URL` cannot be turned into a skip at run time. Instead the
//! suite is compiled in under `cfg(posthorn_redis_tests)`; without it the test binary holds
//! an ignored test whose reason says why, and a test that fails when `CI=true`.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(posthorn_redis_tests)");
    println!("cargo::rerun-if-env-changed=POSTHORN_TEST_REDIS_URL");
    let configured = std::env::var("POSTHORN_TEST_REDIS_URL").is_ok_and(|url| !url.is_empty());
    if configured {
        println!("cargo::rustc-cfg=posthorn_redis_tests");
    }
}
