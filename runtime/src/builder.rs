//! `Engine::builder()`: the required adapters, and in-process defaults for the rest.

use std::sync::Arc;
use std::time::Duration;

use posthorn_core::ports::{
    Cache, Clock, Dns, InboundCheckers, Jobs, MailTransport, RateLimiter, RefusingWebhookSink,
    Store, SystemClock, WebhookSink,
};
use posthorn_core::{Engine, Settings};
use posthorn_dns::HickoryDns;
use posthorn_memory::{MemoryCache, MemoryRateLimiter};

/// Time-out of each DNS lookup of the default resolver.
const DEFAULT_DNS_TIMEOUT: Duration = Duration::from_secs(2);

/// A port that must be given before [`EngineBuilder::build`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// No `Store` was given.
    #[error("Engine::builder(): a store is required (.store(..))")]
    MissingStore,
    /// No `Jobs` queue was given.
    #[error("Engine::builder(): a job queue is required (.jobs(..), usually the store's adapter)")]
    MissingJobs,
    /// No `MailTransport` was given.
    #[error("Engine::builder(): a mail transport is required (.transport(..))")]
    MissingTransport,
}

/// Builds an [`Engine`]: store, jobs and transport are required; clock, rate limiter, cache
/// and DNS default to in-process adapters ([`SystemClock`], [`MemoryRateLimiter`],
/// [`MemoryCache`], [`HickoryDns`] on the system's resolver). Webhooks default to
/// [`RefusingWebhookSink`]: an embedded engine sends no HTTP request unless it is given a
/// sink (`posthorn_webhook::HttpWebhookSink`, with its SSRF guard), so a WEBHOOK step fails
/// with a message saying so instead of reaching the network unexpectedly.
#[derive(Default)]
#[must_use]
pub struct EngineBuilder {
    store: Option<Arc<dyn Store>>,
    jobs: Option<Arc<dyn Jobs>>,
    transport: Option<Arc<dyn MailTransport>>,
    clock: Option<Arc<dyn Clock>>,
    dns: Option<Arc<dyn Dns>>,
    rate_limiter: Option<Arc<dyn RateLimiter>>,
    cache: Option<Arc<dyn Cache>>,
    webhooks: Option<Arc<dyn WebhookSink>>,
    inbound: Option<InboundCheckers>,
    settings: Settings,
}

impl EngineBuilder {
    /// The durable store (required).
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// The job queue fed by the store's commits (required; usually the same adapter).
    pub fn jobs(mut self, jobs: Arc<dyn Jobs>) -> Self {
        self.jobs = Some(jobs);
        self
    }

    /// Where messages go (required).
    pub fn transport(mut self, transport: Arc<dyn MailTransport>) -> Self {
        self.transport = Some(transport);
        self
    }

    /// The clock (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// DNS lookups for verification (default: the system resolver, 2 s time-out).
    pub fn dns(mut self, dns: Arc<dyn Dns>) -> Self {
        self.dns = Some(dns);
        self
    }

    /// API and send budgets (default: in this process; use Redis to share them).
    pub fn rate_limiter(mut self, rate_limiter: Arc<dyn RateLimiter>) -> Self {
        self.rate_limiter = Some(rate_limiter);
        self
    }

    /// Idempotency records and other short-lived values (default: in this process).
    pub fn cache(mut self, cache: Arc<dyn Cache>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Outbound HTTP of WEBHOOK steps (default: [`RefusingWebhookSink`], which sends
    /// nothing).
    pub fn webhooks(mut self, webhooks: Arc<dyn WebhookSink>) -> Self {
        self.webhooks = Some(webhooks);
        self
    }

    /// The checks of received mail (default: none, every verdict GRAY).
    pub fn inbound(mut self, checkers: InboundCheckers) -> Self {
        self.inbound = Some(checkers);
        self
    }

    /// Tunables (default: [`Settings::default`]).
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }

    /// The engine, or which required port is missing.
    pub fn build(self) -> Result<Engine, BuildError> {
        Ok(Engine {
            store: self.store.ok_or(BuildError::MissingStore)?,
            jobs: self.jobs.ok_or(BuildError::MissingJobs)?,
            transport: self.transport.ok_or(BuildError::MissingTransport)?,
            clock: self.clock.unwrap_or_else(|| Arc::new(SystemClock)),
            dns: self
                .dns
                .unwrap_or_else(|| Arc::new(HickoryDns::from_system_conf(DEFAULT_DNS_TIMEOUT))),
            rate_limiter: self
                .rate_limiter
                .unwrap_or_else(|| Arc::new(MemoryRateLimiter::new())),
            cache: self.cache.unwrap_or_else(|| Arc::new(MemoryCache::new())),
            webhooks: self
                .webhooks
                .unwrap_or_else(|| Arc::new(RefusingWebhookSink)),
            inbound: self.inbound.unwrap_or_default(),
            settings: self.settings,
        })
    }
}

/// `Engine::builder()`, with this trait in scope.
pub trait EngineExt {
    /// A builder for an engine.
    fn builder() -> EngineBuilder;
}

impl EngineExt for Engine {
    fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use posthorn_memory::{CapturingTransport, MemoryStore};

    #[test]
    fn required_ports_are_named_when_missing() {
        let store = Arc::new(MemoryStore::new());
        assert_eq!(
            Engine::builder().build().err(),
            Some(BuildError::MissingStore)
        );
        assert_eq!(
            Engine::builder().store(store.clone()).build().err(),
            Some(BuildError::MissingJobs)
        );
        assert_eq!(
            Engine::builder()
                .store(store.clone())
                .jobs(store.clone())
                .build()
                .err(),
            Some(BuildError::MissingTransport)
        );
        let engine = Engine::builder()
            .store(store.clone())
            .jobs(store)
            .transport(Arc::new(CapturingTransport::new()))
            .settings(Settings {
                max_job_claims: 2,
                ..Settings::default()
            })
            .build();
        assert_eq!(engine.map(|e| e.settings.max_job_claims).ok(), Some(2));
    }

    #[tokio::test]
    async fn deployment_secrets_are_read_from_the_store_once() {
        let store = Arc::new(MemoryStore::new());
        let engine = Engine::builder()
            .store(store.clone())
            .jobs(store)
            .transport(Arc::new(CapturingTransport::new()))
            .build()
            .expect("engine");
        let tracking = engine.tracking_key().await.expect("tracking key");
        let bounce = engine.bounce_key().await.expect("bounce key");
        // Another store would make other keys: the same settings answer without asking it.
        let elsewhere = Arc::new(MemoryStore::new());
        let moved = Engine {
            store: elsewhere.clone(),
            jobs: elsewhere,
            ..engine
        };
        assert_eq!(moved.tracking_key().await.expect("kept"), tracking);
        assert_eq!(moved.bounce_key().await.expect("kept"), bounce);
    }
}
