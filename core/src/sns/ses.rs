//! Amazon SES notifications (the `Message` of an SNS notification): identity notifications
//! (`notificationType`) and configuration-set events (`eventType`), parsed into typed values
//! and mapped onto Posthorn's [`Feedback`].

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::app::lifecycle::Feedback;
use crate::model::{BounceType, ProviderVerdicts, Verdict};
use crate::ports::is_recipient_failure;

/// The `mail` object every SES notification carries: which message it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SesMail {
    /// SES's message id (what the SES SMTP interface answered, Posthorn's provider id).
    pub message_id: String,
    /// The `Message-ID` header as it appears (`<…>`), from `commonHeaders.messageId`.
    pub message_id_header: Option<String>,
    /// The envelope sender.
    pub source: Option<String>,
    /// The envelope recipients.
    pub destination: Vec<String>,
}

/// A message SES received for a domain (`Received`), to hand to inbound processing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SesReceived {
    /// The recipients of the receipt rule that matched.
    pub recipients: Vec<String>,
    /// The raw message, when the SNS action included it (decoded from base64 or UTF-8).
    pub content: Option<Vec<u8>>,
    /// SES's spam, virus, SPF, DKIM and DMARC verdicts, those given (a status other than
    /// `PASS`, `FAIL`, `GRAY` or `PROCESSING_FAILED`, such as `DISABLED`, counts as not
    /// given).
    pub verdicts: ProviderVerdicts,
}

/// What an SES notification reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SesEvent {
    /// The receiving server accepted the message.
    Delivery {
        /// When.
        at: DateTime<Utc>,
    },
    /// The message bounced.
    Bounce {
        /// When.
        at: DateTime<Utc>,
        /// Posthorn's classification (see [`classify_bounce`]).
        bounce_type: BounceType,
        /// SES's words: type, subtype and the recipient's diagnostic.
        detail: String,
    },
    /// The recipient marked it as spam.
    Complaint {
        /// When.
        at: DateTime<Utc>,
    },
    /// SES's own open tracking.
    Open {
        /// When.
        at: DateTime<Utc>,
    },
    /// SES's own click tracking.
    Click {
        /// When.
        at: DateTime<Utc>,
        /// The original link.
        link: String,
    },
    /// Inbound mail.
    Received(SesReceived),
    /// A type Posthorn does not act on (`Send`, `Reject`, `DeliveryDelay`, …), by name.
    Other(String),
}

/// One SES notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SesNotification {
    /// The message it is about.
    pub mail: SesMail,
    /// What happened.
    pub event: SesEvent,
}

/// Why a `Message` is not an SES notification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SesError {
    /// Not the JSON of an SES notification.
    #[error("the SNS message is not an SES notification: {0}")]
    NotSes(String),
    /// A field the notification type needs is missing.
    #[error("the SES {kind} notification has no {field}")]
    Missing {
        /// The notification type.
        kind: &'static str,
        /// The missing field.
        field: &'static str,
    },
    /// A timestamp is not RFC 3339.
    #[error("the SES notification's timestamp {0:?} is not RFC 3339")]
    BadTimestamp(String),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    notification_type: Option<String>,
    event_type: Option<String>,
    mail: Option<RawMail>,
    bounce: Option<RawBounce>,
    complaint: Option<RawComplaint>,
    delivery: Option<RawStamp>,
    open: Option<RawStamp>,
    click: Option<RawClick>,
    receipt: Option<RawReceipt>,
    content: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMail {
    message_id: Option<String>,
    source: Option<String>,
    #[serde(default)]
    destination: Vec<String>,
    common_headers: Option<RawCommonHeaders>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCommonHeaders {
    message_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawStamp {
    timestamp: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawComplaint {
    timestamp: Option<String>,
    /// The ARF feedback type the mailbox provider gave, when it gave one.
    complaint_feedback_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawClick {
    timestamp: Option<String>,
    link: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBounce {
    bounce_type: Option<String>,
    bounce_sub_type: Option<String>,
    timestamp: Option<String>,
    #[serde(default)]
    bounced_recipients: Vec<RawBounced>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBounced {
    status: Option<String>,
    diagnostic_code: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawReceipt {
    #[serde(default)]
    recipients: Vec<String>,
    spam_verdict: Option<RawVerdict>,
    virus_verdict: Option<RawVerdict>,
    spf_verdict: Option<RawVerdict>,
    dkim_verdict: Option<RawVerdict>,
    dmarc_verdict: Option<RawVerdict>,
    action: Option<RawAction>,
}

#[derive(Deserialize)]
struct RawVerdict {
    status: Option<String>,
}

/// The verdict a receipt's `{"status": …}` gives, if it names one.
fn verdict(raw: Option<RawVerdict>) -> Option<Verdict> {
    raw.and_then(|v| v.status).and_then(|s| Verdict::parse(&s))
}

#[derive(Deserialize)]
struct RawAction {
    encoding: Option<String>,
}

fn stamp(kind: &'static str, raw: Option<String>) -> Result<DateTime<Utc>, SesError> {
    let text = raw.ok_or(SesError::Missing {
        kind,
        field: "timestamp",
    })?;
    DateTime::parse_from_rfc3339(&text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| SesError::BadTimestamp(text))
}

/// Posthorn's reading of an SES bounce: permanent only when SES says `Permanent` for a
/// recipient-specific reason (`General`, `NoEmail`, `Suppressed`, `OnAccountSuppressionList`)
/// and the recipient's enhanced status, when SES gives one, is about the recipient (5.1.x,
/// 5.2.1) as for SMTP replies; `Undetermined`, `Transient` and everything else are transient,
/// so a policy or configuration failure never unsubscribes anyone.
pub fn classify_bounce(
    bounce_type: &str,
    sub_type: &str,
    recipient_status: Option<&str>,
) -> BounceType {
    let recipient_reason = matches!(
        sub_type,
        "General" | "NoEmail" | "Suppressed" | "OnAccountSuppressionList"
    );
    let status_agrees = match recipient_status.map(str::trim).filter(|s| !s.is_empty()) {
        None => true,
        Some(status) => is_recipient_failure(status),
    };
    if bounce_type == "Permanent" && recipient_reason && status_agrees {
        BounceType::Permanent
    } else {
        BounceType::Transient
    }
}

impl SesNotification {
    /// Parses the `Message` of an SNS notification from SES.
    pub fn parse(message: &str) -> Result<Self, SesError> {
        let raw: Raw =
            serde_json::from_str(message).map_err(|e| SesError::NotSes(e.to_string()))?;
        let kind = raw
            .notification_type
            .or(raw.event_type)
            .ok_or_else(|| SesError::NotSes("no notificationType or eventType".into()))?;
        let mail = raw.mail.ok_or(SesError::Missing {
            kind: "any",
            field: "mail",
        })?;
        let mail = SesMail {
            message_id: mail
                .message_id
                .filter(|m| !m.is_empty())
                .ok_or(SesError::Missing {
                    kind: "any",
                    field: "mail.messageId",
                })?,
            message_id_header: mail.common_headers.and_then(|h| h.message_id),
            source: mail.source,
            destination: mail.destination,
        };
        let missing = |kind, field| SesError::Missing { kind, field };
        let event = match kind.as_str() {
            "Delivery" => {
                let d = raw.delivery.ok_or(missing("Delivery", "delivery"))?;
                SesEvent::Delivery {
                    at: stamp("Delivery", d.timestamp)?,
                }
            }
            "Bounce" => {
                let b = raw.bounce.ok_or(missing("Bounce", "bounce"))?;
                let bounce_type = b.bounce_type.unwrap_or_default();
                let sub_type = b.bounce_sub_type.unwrap_or_default();
                let first = b.bounced_recipients.first();
                let status = first.and_then(|r| r.status.as_deref());
                let diagnostic = first.and_then(|r| r.diagnostic_code.as_deref());
                let mut detail = format!("SES {bounce_type}/{sub_type}");
                if let Some(d) = diagnostic.or(status) {
                    detail.push_str(": ");
                    detail.push_str(d);
                }
                SesEvent::Bounce {
                    at: stamp("Bounce", b.timestamp)?,
                    bounce_type: classify_bounce(&bounce_type, &sub_type, status),
                    detail: without_nul(&detail),
                }
            }
            "Complaint" => {
                let c = raw.complaint.ok_or(missing("Complaint", "complaint"))?;
                match c.complaint_feedback_type.as_deref() {
                    // As for an ARF report read from mail: only `abuse` and `fraud` (or no
                    // type given) complain about the mail; `not-spam`, `virus`,
                    // `auth-failure` and `other` do not.
                    Some(kind)
                        if !kind.eq_ignore_ascii_case("abuse")
                            && !kind.eq_ignore_ascii_case("fraud") =>
                    {
                        SesEvent::Other(format!("Complaint ({})", without_nul(kind)))
                    }
                    _ => SesEvent::Complaint {
                        at: stamp("Complaint", c.timestamp)?,
                    },
                }
            }
            "Open" => {
                let o = raw.open.ok_or(missing("Open", "open"))?;
                SesEvent::Open {
                    at: stamp("Open", o.timestamp)?,
                }
            }
            "Click" => {
                let c = raw.click.ok_or(missing("Click", "click"))?;
                SesEvent::Click {
                    at: stamp("Click", c.timestamp)?,
                    link: without_nul(&c.link.ok_or(missing("Click", "click.link"))?),
                }
            }
            "Received" => {
                let r = raw.receipt.ok_or(missing("Received", "receipt"))?;
                let encoding = r.action.and_then(|a| a.encoding);
                let content = match raw.content {
                    None => None,
                    Some(text) if encoding.as_deref() == Some("BASE64") => {
                        Some(base64_decode(&text).ok_or(missing("Received", "content in base64"))?)
                    }
                    Some(text) => Some(text.into_bytes()),
                };
                SesEvent::Received(SesReceived {
                    recipients: r.recipients,
                    content,
                    verdicts: ProviderVerdicts {
                        spam: verdict(r.spam_verdict),
                        virus: verdict(r.virus_verdict),
                        spf: verdict(r.spf_verdict),
                        dkim: verdict(r.dkim_verdict),
                        dmarc: verdict(r.dmarc_verdict),
                    },
                })
            }
            other => SesEvent::Other(other.to_owned()),
        };
        Ok(Self { mail, event })
    }

    /// The feedback this notification reports about a sent email, with its time; `None` for
    /// inbound mail and types Posthorn does not act on.
    pub fn feedback(&self) -> Option<(Feedback, DateTime<Utc>)> {
        match &self.event {
            SesEvent::Delivery { at } => Some((Feedback::Delivery, *at)),
            SesEvent::Bounce {
                at,
                bounce_type,
                detail,
            } => Some((
                Feedback::Bounce {
                    bounce_type: *bounce_type,
                    detail: Some(detail.clone()),
                },
                *at,
            )),
            SesEvent::Complaint { at } => Some((Feedback::Complaint, *at)),
            SesEvent::Open { at } => Some((Feedback::Open, *at)),
            SesEvent::Click { at, link } => Some((Feedback::Click { link: link.clone() }, *at)),
            SesEvent::Received(_) | SesEvent::Other(_) => None,
        }
    }
}

/// `text` without NUL characters, which no durable store keeps in text.
fn without_nul(text: &str) -> String {
    text.replace('\0', "")
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let compact: String = text.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()
}

#[cfg(test)]
mod tests;
