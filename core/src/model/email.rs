//! Email records: one per recipient of every send, campaign or workflow message.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{CampaignId, ContactId, EmailId, TemplateId, WorkspaceId};
use crate::ports::{Attachment, Mailbox};

/// Where an email came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SourceType {
    /// `POST /v1/send`.
    Transactional,
    /// A campaign.
    Campaign,
    /// A workflow step.
    Workflow,
    /// Received mail.
    Inbound,
}

/// Lifecycle of an email; it only moves forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EmailStatus {
    /// Accepted, waiting for its delivery job.
    Queued,
    /// Handed to the transport.
    Sent,
    /// The provider confirmed delivery.
    Delivered,
    /// Opened at least once.
    Opened,
    /// Clicked at least once.
    Clicked,
    /// Bounced.
    Bounced,
    /// Marked as spam.
    Complained,
    /// Permanently failed before reaching the provider.
    Failed,
    /// Cancelled before it was handed to the transport.
    Cancelled,
}

/// One outbound message to one recipient.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailRecord {
    /// Email id (`emailId` in events).
    pub id: EmailId,
    /// Owning workspace.
    #[serde(rename = "projectId")]
    pub workspace_id: WorkspaceId,
    /// Recipient contact.
    pub contact_id: ContactId,
    /// Recipient mailbox.
    pub to: Mailbox,
    /// Sender mailbox.
    pub from: Mailbox,
    /// Reply-To address.
    pub reply_to: Option<String>,
    /// Rendered subject.
    pub subject: String,
    /// Rendered HTML body.
    pub html: String,
    /// Plain text part: `None` means derived from `html` when the email is delivered (so
    /// accepting and expanding mail does not pay for it), `Some("")` means no text part.
    pub text: Option<String>,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Attachments.
    pub attachments: Vec<Attachment>,
    /// Template used, if any.
    pub template_id: Option<TemplateId>,
    /// Campaign that produced it, if any.
    pub campaign_id: Option<CampaignId>,
    /// Origin of the email.
    pub source_type: SourceType,
    /// Current status.
    pub status: EmailStatus,
    /// RFC 5322 Message-ID (stable across delivery retries).
    pub message_id: String,
    /// The provider's id once sent.
    pub provider_message_id: Option<String>,
    /// Last delivery error, if any.
    pub error: Option<String>,
    /// Creation time.
    #[serde(with = "crate::model::timestamp")]
    pub created_at: DateTime<Utc>,
    /// When the transport accepted it.
    #[serde(with = "crate::model::timestamp::option")]
    pub sent_at: Option<DateTime<Utc>>,
    /// Last change.
    #[serde(with = "crate::model::timestamp")]
    pub updated_at: DateTime<Utc>,
}
