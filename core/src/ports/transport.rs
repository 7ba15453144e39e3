//! The `MailTransport` port: hands one fully described message to a delivery provider.

use async_trait::async_trait;

use crate::model::{DkimKeyPair, EmailId};

/// A display name and address, as used in From, To and Reply-To.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mailbox {
    /// Optional display name.
    pub name: Option<String>,
    /// The address, already validated and lower-cased (its domain canonical: A-labels).
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
    /// The envelope sender (SMTP `MAIL FROM`, the `Return-Path` a final MTA writes):
    /// where bounces go. A per-email bounce address when they are collected, else the
    /// sender's address.
    pub envelope_from: String,
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
    /// The key that signs the message (DKIM); `None` sends it unsigned.
    pub dkim: Option<DkimSigning>,
}

/// The DKIM key of the sender domain, and where its public half is published
/// (`<selector>._domainkey.<domain>`). `Debug` never shows the private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DkimSigning {
    /// The signing domain (`d=`), in ASCII (A-label) form.
    pub domain: String,
    /// The selector (`s=`).
    pub selector: String,
    /// The key pair.
    pub key: DkimKeyPair,
}

/// How a delivery attempt failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// Worth retrying later (connection refused, 4xx SMTP reply, time-out).
    #[error("transient delivery failure: {0}")]
    Transient(String),
    /// Retrying cannot help, and no receiving server judged the message (an address the
    /// transport cannot use, a message it cannot build).
    #[error("permanent delivery failure: {0}")]
    Permanent(String),
    /// The receiving server refused the message with a permanent (5xx) reply: a bounce.
    #[error("rejected by the receiving server: {reply}")]
    Rejected {
        /// The server's reply, code first (`550 5.1.1 no such user`).
        reply: String,
        /// Whether the reply is about the recipient itself (enhanced status 5.1.x or
        /// 5.2.1): only then is the bounce permanent and the contact unsubscribed.
        recipient: bool,
    },
}

impl TransportError {
    /// A permanent SMTP reply, classified by its enhanced status code (RFC 3463): only
    /// recipient-specific failures (5.1.x bad mailbox, 5.2.1 mailbox disabled) count as
    /// being about the recipient; relay denials, policy (5.7.x), size and replies without
    /// an enhanced code do not, so a misconfigured relay cannot unsubscribe a list.
    pub fn rejected(reply: impl Into<String>) -> Self {
        let reply = reply.into();
        let recipient = is_recipient_failure(&reply);
        TransportError::Rejected { reply, recipient }
    }
}

/// Whether an SMTP reply or a bare enhanced status code (`5.1.1`) says the recipient itself
/// cannot receive mail (5.1.x bad mailbox, 5.2.1 mailbox disabled): the only permanent
/// failures that count as a permanent bounce, whoever reports them.
pub fn is_recipient_failure(reply: &str) -> bool {
    matches!(enhanced_status(reply), Some((5, 1, _)) | Some((5, 2, 1)))
}

/// The enhanced status code (`class.subject.detail`) of an SMTP reply: the first word,
/// or the word after a three-digit basic code (`550 5.1.1 …`, `550-5.1.1 …`).
fn enhanced_status(reply: &str) -> Option<(u16, u16, u16)> {
    let mut words = reply.split_whitespace();
    let first = words.next()?;
    let candidate = match first.split_once('-') {
        Some((code, rest)) if is_basic_code(code) => rest,
        _ if is_basic_code(first) => words.next()?,
        _ => first,
    };
    let mut parts = candidate.split('.');
    let class = parts.next()?.parse().ok()?;
    let subject = parts.next()?.parse().ok()?;
    let detail = parts.next()?.parse().ok()?;
    if parts.next().is_some() || !matches!(class, 2 | 4 | 5) {
        return None;
    }
    Some((class, subject, detail))
}

fn is_basic_code(word: &str) -> bool {
    word.len() == 3 && word.bytes().all(|b| b.is_ascii_digit())
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

#[cfg(test)]
mod tests {
    use super::TransportError;

    fn recipient(reply: &str) -> bool {
        match TransportError::rejected(reply) {
            TransportError::Rejected { recipient, .. } => recipient,
            other => panic!("not a rejection: {other:?}"),
        }
    }

    #[test]
    fn only_recipient_specific_replies_are_about_the_recipient() {
        assert!(recipient("550 5.1.1 <a@x.com>: no such user"));
        assert!(recipient("550-5.1.10 recipient not found"));
        assert!(recipient("552 5.2.1 mailbox disabled"));
        assert!(recipient("5.1.2 bad destination system"));
        assert!(!recipient("554 5.7.1 relay access denied"));
        assert!(!recipient("552 5.3.4 message too big"));
        assert!(!recipient("552 5.2.2 mailbox full"));
        assert!(!recipient("550 no such user"));
        assert!(!recipient("550 5.1 garbled"));
        assert!(!recipient(""));
    }
}
