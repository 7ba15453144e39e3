//! Limits and retention of received mail.

use std::time::Duration;

use crate::ports::Quota;

/// How much mail the engine takes in and how long it keeps the raw messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundSettings {
    /// Days a received message's raw bytes are kept (`POSTHORN_INBOUND_RETENTION_DAYS`).
    pub retention_days: u32,
    /// Messages one envelope sender may hand over (`POSTHORN_INBOUND_SENDER_RATE`, per minute).
    pub per_sender: Quota,
    /// Messages one workspace may receive (`POSTHORN_INBOUND_WORKSPACE_RATE`, per minute).
    pub per_workspace: Quota,
    /// Largest message accepted, in bytes (the API's `POSTHORN_MAX_BODY_BYTES`).
    pub max_message_bytes: usize,
    /// Most envelope recipients of one message.
    pub max_recipients: usize,
}

impl Default for InboundSettings {
    fn default() -> Self {
        Self {
            retention_days: 30,
            per_sender: Quota {
                limit: 60,
                window: Duration::from_secs(60),
            },
            per_workspace: Quota {
                limit: 600,
                window: Duration::from_secs(60),
            },
            max_message_bytes: 15 * 1024 * 1024,
            max_recipients: 100,
        }
    }
}
