//! Received mail: one inbound email record per (message, receiving workspace).

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{EmailId, WorkspaceId};

/// A message received for one workspace, kept with its raw bytes until the retention ends.
///
/// Its id is an [`EmailId`]: events about it carry it as `emailId`, and its source type is
/// INBOUND.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundEmail {
    /// Record id.
    pub id: EmailId,
    /// The receiving workspace.
    pub workspace_id: WorkspaceId,
    /// The envelope sender (`MAIL FROM`); `None` for the null sender `<>`.
    pub envelope_from: Option<String>,
    /// The envelope recipients at this workspace's inbound domains (lower-case).
    pub recipients: Vec<String>,
    /// The address of the client that handed the message over, when known.
    pub client_ip: Option<std::net::IpAddr>,
    /// The name the client gave in HELO/EHLO, when known.
    pub helo: Option<String>,
    /// The message as received; `None` once the retention period purged it.
    pub raw: Option<Vec<u8>>,
    /// When the message was accepted.
    pub received_at: DateTime<Utc>,
    /// When its `email.received` events were emitted; `None` while pending.
    pub processed_at: Option<DateTime<Utc>>,
}

/// The outcome of one check of a received message (SPF, DKIM, DMARC, spam, virus).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// The check passed.
    Pass,
    /// The check failed (or the message is spam or infected).
    Fail,
    /// The check could not say either way (nothing to check, or no checker configured).
    Gray,
    /// The check could not be carried out (a DNS time-out, the scanner unreachable).
    ProcessingFailed,
}

impl Verdict {
    /// The value as events carry it (`PASS`, `FAIL`, `GRAY`, `PROCESSING_FAILED`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Gray => "GRAY",
            Verdict::ProcessingFailed => "PROCESSING_FAILED",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
