//! The conformance suite against the in-memory adapters.

use std::sync::Arc;

use posthorn_conformance::{cache_suite, rate_limiter_suite, store_suite, StorePorts};
use posthorn_core::ports::{Cache, RateLimiter};
use posthorn_memory::{MemoryCache, MemoryRateLimiter, MemoryStore};

async fn store_ports() -> StorePorts {
    let store = Arc::new(MemoryStore::new());
    StorePorts {
        store: store.clone(),
        jobs: store,
    }
}

async fn rate_limiter() -> Arc<dyn RateLimiter> {
    Arc::new(MemoryRateLimiter::new())
}

async fn cache() -> Arc<dyn Cache> {
    Arc::new(MemoryCache::new())
}

store_suite!(store_ports);
rate_limiter_suite!(rate_limiter);
cache_suite!(cache);
