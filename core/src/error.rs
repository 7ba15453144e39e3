//! The one domain error type. The server maps each variant to a status and `error.code`
//! in a single table; nothing else decides statuses.

use crate::ports::{PortError, StoreError};

/// A failing field of a request, reported all at once.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FieldError {
    /// JSON path of the field, dot separated (`to.3.email`).
    #[cfg_attr(feature = "openapi", schema(example = "to.3.email"))]
    pub field: String,
    /// What is wrong, for people.
    pub message: String,
    /// What is wrong, for programs (`required`, `invalid_type`, `invalid_email`,
    /// `out_of_range`, `too_long`, `too_many`, `invalid_enum`, ...).
    #[cfg_attr(feature = "openapi", schema(example = "invalid_email"))]
    pub code: String,
}

impl FieldError {
    /// A field error.
    pub fn new(field: impl Into<String>, code: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
            code: code.to_string(),
        }
    }
}

/// Which kind of record was not found (it picks the error code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// A contact.
    Contact,
    /// A template.
    Template,
    /// A campaign.
    Campaign,
    /// A segment.
    Segment,
    /// A workflow.
    Workflow,
    /// A step of a workflow.
    Step,
    /// A transition of a workflow.
    Transition,
    /// An execution of a workflow.
    Execution,
    /// A workspace.
    Workspace,
    /// A key set.
    KeySet,
    /// A domain.
    Domain,
    /// An email record.
    Email,
    /// A job (operator API: only dead jobs are addressed by id).
    Job,
    /// A tracking or unsubscribe link whose token is not valid (forged, tampered, cut).
    Link,
}

impl Resource {
    /// The singular English noun, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Resource::Contact => "contact",
            Resource::Template => "template",
            Resource::Campaign => "campaign",
            Resource::Segment => "segment",
            Resource::Workflow => "workflow",
            Resource::Step => "step",
            Resource::Transition => "transition",
            Resource::Execution => "execution",
            Resource::Workspace => "workspace",
            Resource::KeySet => "key set",
            Resource::Domain => "domain",
            Resource::Email => "email",
            Resource::Job => "job",
            Resource::Link => "link",
        }
    }
}

/// Everything a use case can refuse or fail with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// Request fields failed validation (422).
    #[error("request validation failed")]
    Validation(Vec<FieldError>),
    /// The request is well formed but makes no sense (400).
    #[error("{0}")]
    BadRequest(String),
    /// The current state forbids the operation (400).
    #[error("{0}")]
    InvalidState(String),
    /// No such record in this workspace (404).
    #[error("{} not found", .0.noun())]
    NotFound(Resource),
    /// A step's replacement configuration is for another kind than the step's own (a
    /// step's kind never changes; 422 on `config`).
    #[error("the step is a {step} step; its config cannot be replaced by a {given} configuration")]
    StepKindMismatch {
        /// The stored step's kind.
        step: crate::workflow::StepType,
        /// The kind of the configuration given.
        given: crate::workflow::StepType,
    },
    /// The key may not do this (403).
    #[error("{0}")]
    Forbidden(String),
    /// The sender domain is not verified for the workspace (403).
    #[error("{0}")]
    DomainNotVerified(String),
    /// The change collides with existing state (409).
    #[error("{0}")]
    Conflict(String),
    /// A rate limit was exceeded; the same request may succeed after `retry_after_secs`
    /// (429 over HTTP, a 4xx reply over SMTP so the sending server retries).
    #[error("{message}")]
    RateLimited {
        /// What was limited, for people.
        message: String,
        /// Seconds until the budget is whole again.
        retry_after_secs: u64,
    },
    /// A backing service (database, Redis) is unreachable or failing; retrying later may
    /// succeed. The message is for logs only (503).
    #[error("service unavailable: {0}")]
    Unavailable(String),
    /// Something failed that should not have; the message is for logs only (500).
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// A validation error about one field.
    pub fn field(field: impl Into<String>, code: &str, message: impl Into<String>) -> Self {
        Error::Validation(vec![FieldError::new(field, code, message)])
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(_) => Error::Unavailable(e.to_string()),
            // Use cases retry or translate the conflicts they expect; any other is a bug.
            StoreError::Conflict(_) => Error::Internal(e.to_string()),
            // Not an outage: a 500 whose cause (table, column, id) is logged.
            StoreError::Corrupt(_) => Error::Internal(e.to_string()),
        }
    }
}

impl From<PortError> for Error {
    fn from(e: PortError) -> Self {
        match e {
            PortError::Unavailable(_) => Error::Unavailable(e.to_string()),
        }
    }
}

/// Result with the domain error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
