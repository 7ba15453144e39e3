//! What the in-process benchmarks (`posthorn-scale`, `posthorn-feedback-read`) share: an
//! engine on the store under test with in-memory everything else, and a workspace without
//! practical limits whose domain `example.com` is verified.

use std::sync::Arc;

use posthorn_core::app::workspaces::{AddDomain, CreateWorkspace};
use posthorn_core::app::Caller;
use posthorn_core::model::Workspace;
use posthorn_core::ports::{Jobs, RefusingWebhookSink, Store, SystemClock};
use posthorn_core::{Engine, Settings};
use posthorn_memory::{CapturingTransport, MemoryCache, MemoryRateLimiter};

/// Errors of any step; a benchmark stops on the first one.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An engine on `store` and `jobs`, capturing its mail, with static DNS and no webhooks.
pub fn engine(store: Arc<dyn Store>, jobs: Arc<dyn Jobs>) -> Engine {
    Engine {
        store,
        jobs,
        transport: Arc::new(CapturingTransport::new()),
        clock: Arc::new(SystemClock),
        dns: Arc::new(posthorn_dns::StaticDns::new()),
        rate_limiter: Arc::new(MemoryRateLimiter::new()),
        cache: Arc::new(MemoryCache::new()),
        webhooks: Arc::new(RefusingWebhookSink),
        inbound: Default::default(),
        settings: Settings::default(),
    }
}

/// A new workspace `name` without practical limits, `example.com` verified, and its
/// secret key's caller.
pub async fn workspace(engine: &Engine, name: &str) -> Result<(Workspace, Caller), BoxError> {
    let (ws, keys) = engine
        .create_workspace(CreateWorkspace {
            name: name.into(),
            rate_limit_per_minute: Some(10_000_000),
            send_rate_per_second: Some(100_000.0),
            ..CreateWorkspace::default()
        })
        .await?;
    engine
        .admin_add_domain(
            &ws.id,
            AddDomain {
                domain: "example.com".into(),
                verified: true,
                inbound_enabled: false,
            },
        )
        .await?;
    let caller = engine
        .authenticate(&keys.secret_key)
        .await
        .map_err(|e| format!("authenticating the new key: {e:?}"))?;
    Ok((ws, caller))
}
