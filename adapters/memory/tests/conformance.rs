//! The conformance suite against the in-memory adapters.

use std::sync::Arc;

use posthorn_conformance::{
    cache_suite, rate_limiter_suite, store_probe_suite, store_suite, ProbedStore, StorePorts,
};
use posthorn_core::ports::{Cache, RateLimiter};
use posthorn_memory::{MemoryCache, MemoryRateLimiter, MemoryStore};

async fn store_ports() -> StorePorts {
    let store = Arc::new(MemoryStore::new());
    StorePorts::of(store)
}

/// The memory store has nothing below its ports to probe: commits are heard at once (an
/// in-process signal), payloads are kept typed (none can be unreadable), and memberships
/// are no rows apart from what the ports show. It stores any string, NUL included.
async fn probed_store() -> ProbedStore {
    ProbedStore {
        ports: store_ports().await,
        commits_heard: None,
        plant_unreadable_job: None,
        membership_rows: None,
        stores_nul: true,
    }
}

async fn rate_limiter() -> Arc<dyn RateLimiter> {
    Arc::new(MemoryRateLimiter::new())
}

async fn cache() -> Arc<dyn Cache> {
    Arc::new(MemoryCache::new())
}

store_suite!(store_ports);
store_probe_suite!(probed_store);
rate_limiter_suite!(rate_limiter);
cache_suite!(cache);
