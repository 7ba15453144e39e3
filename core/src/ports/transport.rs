//! The `MailTransport` port: hands one fully described message to a delivery provider.

use async_trait::async_trait;

use crate::model::EmailId;

/// A display name and address, as used in From, To and Reply-To.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mailbox {
    /// Optional display name.
    pub name: Option<String>,
    /// The address, already validated and lower-cased.
    pub email: String,
}

/// A file attached to a message; `content` is the decoded bytes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Attachment {
    /// File name shown to the recipient.
    pub filename: String,
    /// MIME type, e.g. `application/pdf`.
    pub content_type: String,
    /// Decoded content.
    #[serde(with = "crate::model::base64_bytes")]
    pub content: Vec<u8>,
    /// Content-ID for inline parts referenced as `cid:` in the HTML.
    pub content_id: Option<String>,
    /// True for `Content-Disposition: inline`.
    pub inline: bool,
}

/// Everything a transport needs to build and send one message to one recipient.
#[derive(Debug, Clone, PartialEq)]
pub struct OutgoingMessage {
    /// Posthorn's email record id; transports put it in `X-Posthorn-Email-Id`.
    pub email_id: EmailId,
    /// RFC 5322 Message-ID to use (without angle brackets), stable across retries.
    pub message_id: String,
    /// Sender.
    pub from: Mailbox,
    /// The one recipient.
    pub to: Mailbox,
    /// Optional Reply-To address.
    pub reply_to: Option<String>,
    /// Subject line (no CR/LF: validated at the edge).
    pub subject: String,
    /// HTML body.
    pub html: String,
    /// Plain-text body; `None` means no text part.
    pub text: Option<String>,
    /// Extra headers, validated to contain no CR/LF.
    pub headers: Vec<(String, String)>,
    /// Attachments and inline parts.
    pub attachments: Vec<Attachment>,
}

/// How a delivery attempt failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// Worth retrying later (connection refused, 4xx SMTP reply, time-out).
    #[error("transient delivery failure: {0}")]
    Transient(String),
    /// Retrying cannot help (5xx SMTP reply, rejected recipient).
    #[error("permanent delivery failure: {0}")]
    Permanent(String),
}

/// Sends built messages.
///
/// Contract: on `Ok(id)` the provider has accepted responsibility for the message and `id`
/// identifies it there (it is stored as the email's `messageId`). A call may be repeated for
/// the same `email_id` after a crash: providers see at-least-once delivery.
#[async_trait]
pub trait MailTransport: Send + Sync {
    /// Sends one message and returns the provider's message id.
    async fn send(&self, message: &OutgoingMessage) -> Result<String, TransportError>;
}
