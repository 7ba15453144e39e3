//! Ports: the traits through which the core reaches storage, queues, mail, time and DNS.
//! Adapters implement them; the server picks adapters at run time.

mod cache;
mod clock;
mod dns;
mod event_reads;
mod feedback_reads;
mod inbound;
mod jobs;
mod rate_limit;
mod sns;
mod store;
mod suppression_facts;
mod transport;
mod webhook;
mod workflow_store;

pub use cache::Cache;
pub use clock::{Clock, ManualClock, SystemClock};
pub use dns::{Dns, DnsError, RecordKind};
pub use event_reads::EventReads;
pub use feedback_reads::FeedbackReads;
pub use inbound::{
    AuthVerdicts, ContentScanner, InboundAuthenticator, InboundCheckers, InboundContext,
    StaticVerdicts,
};
pub use jobs::{ClaimedJob, DeadJob, JobPayload, JobStats, Jobs, NewJob};
pub use rate_limit::{window_bounds, Quota, RateDecision, RateLimiter};
pub use sns::{SnsFetchError, SnsFetcher};
pub use store::{
    check_active_limit, ChangeSet, ContactPage, ContactQuery, EmailStatsQuery, EventQuery,
    MatchQuery, Store, StoreError, TemplateQuery, Write,
};
pub use suppression_facts::SuppressionFacts;
pub use transport::{
    is_recipient_failure, Attachment, DkimSigning, MailTransport, Mailbox, OutgoingMessage,
    TransportError,
};
pub use webhook::{
    body_excerpt, classify_attempt, classify_status, parse_retry_after, sign, signature_headers,
    AttemptVerdict, RefusingWebhookSink, RetrySchedule, ScheduleError, SecretError, SigningKeys,
    UnknownMethod, WebhookError, WebhookMethod, WebhookRequest, WebhookResponse, WebhookSecret,
    WebhookSink, BODY_EXCERPT_LIMIT, DEFAULT_WEBHOOK_TIMEOUT, SECRET_PREFIX, WEBHOOK_ID_HEADER,
    WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER,
};
pub use workflow_store::WorkflowStore;

/// An infrastructure failure of a port that has no richer error of its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PortError {
    /// The backing service could not be reached or failed.
    #[error("backend unavailable: {0}")]
    Unavailable(String),
}
