//! Bounce messages: the per-email bounce address outgoing mail carries as its envelope
//! sender (VERP), and the reading of what comes back to it: delivery status notifications
//! (RFC 3464), the common human-readable bounces, and ARF complaint reports (RFC 5965).
//! Pure: the engine matches a [`Report`] to its email and records it
//! (`Engine::receive_bounce_message`).

mod arf;
mod dsn;
mod fields;
mod original;
mod plain;
mod status;
pub mod token;

use mail_parser::{MessageParser, MimeHeaders};

pub use status::{classify, StatusCode};

use crate::model::{BounceType, EmailId};

/// The header outgoing mail names its email in (written by the transports).
pub const EMAIL_ID_HEADER: &str = "X-Posthorn-Email-Id";
/// Longest bounce detail kept, in characters (a diagnostic can be a whole transcript).
const MAX_DETAIL: usize = 500;
/// Name of the deployment secret that signs bounce tokens.
pub const BOUNCE_SECRET: &str = "bounce-tokens";

/// What a report tells of the message it is about, to find its email by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OriginalMessage {
    /// The original `Message-ID`, without angle brackets.
    pub message_id: Option<String>,
    /// The original `X-Posthorn-Email-Id`.
    pub email_id: Option<EmailId>,
}

/// The failure of one recipient, as a bounce reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The failed address (`Final-Recipient`, `X-Failed-Recipients`), lower-cased.
    pub recipient: Option<String>,
    /// The enhanced status code, when the report gives one.
    pub status: Option<StatusCode>,
    /// The receiving side's words (the diagnostic), if any.
    pub detail: Option<String>,
}

impl Failure {
    /// Permanent only for a recipient-specific failure (see [`classify`]).
    pub fn bounce_type(&self) -> BounceType {
        classify(self.status)
    }
}

/// A report Posthorn understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// A bounce: one failure or more (a report may cover several recipients).
    Bounce {
        /// The failed recipients; never empty.
        failures: Vec<Failure>,
        /// The message that bounced.
        original: OriginalMessage,
    },
    /// A spam (or fraud) complaint.
    Complaint {
        /// The recipient who complained, when the report says.
        recipient: Option<String>,
        /// The message complained about.
        original: OriginalMessage,
    },
}

impl Report {
    /// The message the report is about.
    pub fn original(&self) -> &OriginalMessage {
        match self {
            Report::Bounce { original, .. } | Report::Complaint { original, .. } => original,
        }
    }
}

/// Reads a raw message as a report: ARF when it has a `message/feedback-report` part, a
/// DSN when it has a `message/delivery-status` part (`None` when that says nothing failed:
/// a delivery or relay notice), otherwise a human-readable bounce when it looks like one
/// (a mailer-daemon sender, `X-Failed-Recipients`, a bounce subject) and says it failed.
/// `None` for anything else, such as an out-of-office reply. Never panics.
pub fn read_report(raw: &[u8]) -> Option<Report> {
    let message = MessageParser::new().parse(raw)?;
    let has_part = |ctype: &str, subtype: &str| {
        message
            .parts
            .iter()
            .any(|part| part.is_content_type(ctype, subtype))
    };
    if has_part("message", "feedback-report") {
        return arf::read(raw);
    }
    if has_part("message", "delivery-status") || has_part("message", "global-delivery-status") {
        return dsn::read(&message);
    }
    plain::read(&message)
}

#[cfg(test)]
mod tests;
