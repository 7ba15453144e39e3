//! The one place that turns configuration into adapters.

use std::sync::Arc;
use std::time::Duration;

use posthorn_core::ports::{Cache, Jobs, RateLimiter, Store, SystemClock};
use posthorn_core::{Engine, Settings};
use posthorn_memory::{MemoryCache, MemoryRateLimiter, MemoryStore};

use crate::config::Config;

/// Why the configuration cannot be composed.
#[derive(Debug, thiserror::Error)]
pub enum ComposeError {
    /// `POSTHORN_STORE` is neither `memory` nor a known URL.
    #[error("POSTHORN_STORE must be `memory` or a postgres:// URL, got `{0}`")]
    UnknownStore(String),
    /// `POSTHORN_TRANSPORT` is invalid.
    #[error("POSTHORN_TRANSPORT: {0}")]
    Transport(String),
    /// An adapter could not start.
    #[error("{0}")]
    Adapter(String),
}

/// Builds the engine the configuration describes.
pub async fn build_engine(config: &Config) -> Result<Engine, ComposeError> {
    // Errors are scrubbed of the URLs' credentials: drivers may echo what they were given.
    let store_url = &config.store;
    let (store, jobs): (Arc<dyn Store>, Arc<dyn Jobs>) =
        match store_url.expose() {
            "memory" => {
                let store = Arc::new(MemoryStore::new());
                (store.clone(), store)
            }
            url if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                let store = Arc::new(posthorn_postgres::PgStore::connect(url).await.map_err(
                    |e| ComposeError::Adapter(store_url.scrub(&format!("PostgreSQL: {e}"))),
                )?);
                (store.clone(), store)
            }
            _ => return Err(ComposeError::UnknownStore(store_url.to_string())),
        };
    let (rate_limiter, cache): (Arc<dyn RateLimiter>, Arc<dyn Cache>) = match &config.redis_url {
        None => (
            Arc::new(MemoryRateLimiter::new()),
            Arc::new(MemoryCache::new()),
        ),
        Some(url) => {
            let redis =
                posthorn_redis::RedisConnection::connect(url.expose(), &config.redis_prefix)
                    .await
                    .map_err(|e| ComposeError::Adapter(url.scrub(&format!("Redis: {e}"))))?;
            (Arc::new(redis.rate_limiter()), Arc::new(redis.cache()))
        }
    };
    let transport = posthorn_smtp::transport_from_spec(config.transport.expose())
        .map_err(|e| ComposeError::Transport(config.transport.scrub(&e.to_string())))?;
    let dns = Arc::new(posthorn_dns::HickoryDns::from_system_conf(
        Duration::from_millis(config.dns_timeout_ms),
    ));
    Ok(Engine {
        store,
        jobs,
        transport,
        clock: Arc::new(SystemClock),
        dns,
        rate_limiter,
        cache,
        settings: Settings {
            job_lease: Duration::from_secs(config.job_lease_secs),
            ..Settings::default()
        },
    })
}
