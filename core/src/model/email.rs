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
    /// What happened to it after it was sent: delivery, opens, clicks, bounce, complaint.
    #[serde(flatten)]
    pub lifecycle: EmailLifecycle,
}

/// Whether a bounce is for good (the address does not exist) or may pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BounceType {
    /// The recipient cannot receive mail: the contact is unsubscribed.
    Permanent,
    /// A passing failure (mailbox full, policy, relay): recorded for visibility only.
    Transient,
}

/// The feedback an email collected after it was sent; every field starts empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailLifecycle {
    /// When the provider confirmed delivery (the first confirmation).
    #[serde(with = "crate::model::timestamp::option", default)]
    pub delivered_at: Option<DateTime<Utc>>,
    /// First open.
    #[serde(with = "crate::model::timestamp::option", default)]
    pub opened_at: Option<DateTime<Utc>>,
    /// Latest counted open (repeats within a second of it collapse into it).
    #[serde(with = "crate::model::timestamp::option", default)]
    pub last_opened_at: Option<DateTime<Utc>>,
    /// Counted opens.
    #[serde(default)]
    pub opens: u32,
    /// First click.
    #[serde(with = "crate::model::timestamp::option", default)]
    pub clicked_at: Option<DateTime<Utc>>,
    /// Latest counted click (repeats within a second of it collapse into it).
    #[serde(with = "crate::model::timestamp::option", default)]
    pub last_clicked_at: Option<DateTime<Utc>>,
    /// Counted clicks.
    #[serde(default)]
    pub clicks: u32,
    /// When the (latest recorded) bounce arrived.
    #[serde(with = "crate::model::timestamp::option", default)]
    pub bounced_at: Option<DateTime<Utc>>,
    /// Permanent or transient; a permanent bounce is never replaced by a transient one.
    #[serde(default)]
    pub bounce_type: Option<BounceType>,
    /// The provider's or the receiving server's words about the bounce.
    #[serde(default)]
    pub bounce_detail: Option<String>,
    /// When the recipient marked it as spam.
    #[serde(with = "crate::model::timestamp::option", default)]
    pub complained_at: Option<DateTime<Utc>>,
}

/// Recipient counts of a set of emails, by what happened to each (first open, first
/// click: an email counts once however often it was opened).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EmailStats {
    /// Emails handed to the transport (`sent_at` set).
    pub sent: u64,
    /// Of those, delivery confirmed (or proven by an open, click or complaint).
    pub delivered: u64,
    /// Opened at least once (or clicked).
    pub opened: u64,
    /// Clicked at least once.
    pub clicked: u64,
    /// Bounced permanently.
    pub bounced: u64,
    /// Marked as spam.
    pub complained: u64,
}

impl EmailRecord {
    /// A transactional email sent at `at` (tests).
    #[cfg(test)]
    pub(crate) fn sample_sent(at: DateTime<Utc>) -> EmailRecord {
        EmailRecord {
            id: "e1".into(),
            workspace_id: "w1".into(),
            contact_id: "c1".into(),
            to: Mailbox {
                name: None,
                email: "to@example.com".into(),
            },
            from: Mailbox {
                name: None,
                email: "from@example.com".into(),
            },
            reply_to: None,
            subject: "Hi".into(),
            html: "<p>Hi</p>".into(),
            text: None,
            headers: vec![],
            attachments: vec![],
            template_id: None,
            campaign_id: None,
            source_type: SourceType::Transactional,
            status: EmailStatus::Sent,
            message_id: "e1@example.com".into(),
            provider_message_id: Some("p1".into()),
            error: None,
            created_at: at,
            sent_at: Some(at),
            updated_at: at,
            lifecycle: Default::default(),
        }
    }

    /// The `updated_at` for a change decided from a read of the email at `read_at`
    /// ([`super::updated_after`]).
    pub fn updated_after(read_at: DateTime<Utc>, now: DateTime<Utc>) -> DateTime<Utc> {
        super::updated_after(read_at, now)
    }

    /// Takes `newer`'s state: status, provider id, error, sent and updated times and
    /// lifecycle. The rest (recipient, addresses, subject, bodies, headers, attachments,
    /// template, campaign, origin, Message-ID, creation time) is what the email was accepted
    /// with and never changes, so it is kept: stores write only the state back
    /// (`Write::UpdateEmail`), not bodies and attachments on every open and click.
    pub fn take_state(&mut self, newer: EmailRecord) {
        self.status = newer.status;
        self.provider_message_id = newer.provider_message_id;
        self.error = newer.error;
        self.sent_at = newer.sent_at;
        self.updated_at = newer.updated_at;
        self.lifecycle = newer.lifecycle;
    }

    /// A copy without the content: `html` empty, `text` `None`, no attachments. Enough to
    /// change the email's state and write it back ([`EmailRecord::take_state`] is all a
    /// store keeps of an update), without copying bodies and attachments that can weigh
    /// hundreds of kilobytes.
    pub fn without_content(&self) -> EmailRecord {
        EmailRecord {
            id: self.id.clone(),
            workspace_id: self.workspace_id.clone(),
            contact_id: self.contact_id.clone(),
            to: self.to.clone(),
            from: self.from.clone(),
            reply_to: self.reply_to.clone(),
            subject: self.subject.clone(),
            html: String::new(),
            text: None,
            headers: self.headers.clone(),
            attachments: Vec::new(),
            template_id: self.template_id.clone(),
            campaign_id: self.campaign_id.clone(),
            source_type: self.source_type,
            status: self.status,
            message_id: self.message_id.clone(),
            provider_message_id: self.provider_message_id.clone(),
            error: self.error.clone(),
            created_at: self.created_at,
            sent_at: self.sent_at,
            updated_at: self.updated_at,
            lifecycle: self.lifecycle.clone(),
        }
    }
}

impl EmailStatus {
    /// Whether the email reached an outcome that nothing later replaces.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Bounced | Self::Complained | Self::Failed | Self::Cancelled
        )
    }

    /// Position on the forward path QUEUED → SENT → DELIVERED → OPENED → CLICKED.
    fn rank(self) -> u8 {
        match self {
            Self::Queued => 0,
            Self::Sent => 1,
            Self::Delivered => 2,
            Self::Opened => 3,
            Self::Clicked => 4,
            _ => 5,
        }
    }

    /// The status after news of `next`: a terminal status stays, a terminal `next` wins
    /// over any non-terminal one, and otherwise the status only moves forward (a late
    /// delivery never undoes an open, nothing undoes a bounce).
    pub fn advance(self, next: EmailStatus) -> EmailStatus {
        if self.is_terminal() {
            self
        } else if next.is_terminal() || next.rank() > self.rank() {
            next
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::EmailStatus as S;

    #[test]
    fn status_only_moves_forward() {
        assert_eq!(S::Sent.advance(S::Delivered), S::Delivered);
        assert_eq!(S::Opened.advance(S::Delivered), S::Opened);
        assert_eq!(S::Bounced.advance(S::Delivered), S::Bounced);
        assert_eq!(S::Clicked.advance(S::Complained), S::Complained);
        assert_eq!(S::Complained.advance(S::Bounced), S::Complained);
        assert_eq!(S::Queued.advance(S::Bounced), S::Bounced);
    }
}
