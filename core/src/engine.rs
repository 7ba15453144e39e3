//! The `Engine`: the ports bundled with the settings every use case needs.

use std::sync::Arc;
use std::time::Duration;

use crate::app::inbound::InboundSettings;
use crate::ports::{
    Cache, Clock, Dns, InboundCheckers, Jobs, MailTransport, RateLimiter, RetrySchedule, Store,
    WebhookSink,
};
use crate::secret_cell::SecretCell;
use crate::send_pacer::SendPacer;

/// Tunables of the engine; the defaults are what production uses.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Delivery attempts before an email is marked FAILED and its job dead-lettered.
    pub max_delivery_attempts: u32,
    /// How long a claimed job is leased to its worker.
    pub job_lease: Duration,
    /// First retry delay; doubled per attempt up to `max_retry_delay`.
    pub base_retry_delay: Duration,
    /// Longest retry delay.
    pub max_retry_delay: Duration,
    /// Claims in a row that may end without the job being settled (its worker died or it
    /// outran its lease) before the job is given up as one that kills its worker.
    pub max_job_claims: u32,
    /// The host domains with inbound mail should name in their MX (`POSTHORN_MX_HOST`).
    pub mx_host: Option<String>,
    /// Public base URL of the tracking, redirect and unsubscribe links in sent mail.
    pub public_url: String,
    /// When a WEBHOOK step tries again after a failed attempt (tests use short delays).
    pub webhook_retry: RetrySchedule,
    /// Members a SCHEDULE tick enrols per job.
    pub schedule_batch: usize,
    /// Limits and retention of received mail.
    pub inbound: InboundSettings,
    /// The domain of bounce addresses for mail whose sender domain has no inbound
    /// (`POSTHORN_BOUNCE_DOMAIN`; its MX must point at this server). `None`: such mail
    /// carries the sender's own address and its bounces are not collected.
    pub bounce_domain: Option<String>,
    /// The bounce-token key once read from the store (see `Engine::bounce_key`).
    pub bounce_key: SecretCell,
    /// The link-signing key once read from the store (see `Engine::tracking_key`).
    pub tracking_key: SecretCell,
    /// The windows handed out to deliveries over their workspace's sending rate.
    pub send_pacer: SendPacer,
}

/// The `public_url` of [`Settings::default`]: reachable from this machine only.
pub const LOOPBACK_PUBLIC_URL: &str = "http://127.0.0.1:8080";

impl Default for Settings {
    fn default() -> Self {
        Self {
            max_delivery_attempts: 8,
            job_lease: Duration::from_secs(60),
            base_retry_delay: Duration::from_secs(30),
            max_retry_delay: Duration::from_secs(3600),
            max_job_claims: 5,
            mx_host: None,
            public_url: LOOPBACK_PUBLIC_URL.to_owned(),
            webhook_retry: RetrySchedule::standard(),
            schedule_batch: 500,
            inbound: InboundSettings::default(),
            bounce_domain: None,
            bounce_key: SecretCell::default(),
            tracking_key: SecretCell::default(),
            send_pacer: SendPacer::default(),
        }
    }
}

/// The ports a use case may reach, shared by the HTTP handlers and the workers.
#[derive(Clone)]
pub struct Engine {
    /// Durable records.
    pub store: Arc<dyn Store>,
    /// Durable job queue (usually the same adapter as `store`).
    pub jobs: Arc<dyn Jobs>,
    /// Outbound mail.
    pub transport: Arc<dyn MailTransport>,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// DNS lookups.
    pub dns: Arc<dyn Dns>,
    /// Request and send budgets.
    pub rate_limiter: Arc<dyn RateLimiter>,
    /// Idempotency records and other short-lived values.
    pub cache: Arc<dyn Cache>,
    /// Outbound HTTP for WEBHOOK steps.
    pub webhooks: Arc<dyn WebhookSink>,
    /// The checks of received mail (SPF, DKIM, DMARC, spam, virus).
    pub inbound: InboundCheckers,
    /// Tunables.
    pub settings: Settings,
}

impl Engine {
    /// Delay before retry number `attempt` (1-based): exponential, capped.
    pub fn retry_delay(&self, attempt: u32) -> chrono::Duration {
        let base = self.settings.base_retry_delay.as_millis() as u64;
        let factor = 1u64 << attempt.saturating_sub(1).min(20);
        let ms = base
            .saturating_mul(factor)
            .min(self.settings.max_retry_delay.as_millis() as u64);
        chrono::Duration::milliseconds(i64::try_from(ms).unwrap_or(i64::MAX))
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}
