//! Campaigns: one message to an audience, sent now or at a scheduled time.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{CampaignId, ContactId, SegmentId, WorkspaceId};
use crate::segment::Condition;

/// Where a campaign is in its life. DRAFT → SCHEDULED | SENDING; SCHEDULED → SENDING |
/// SCHEDULED (new time) | CANCELLED; SENDING → SENT | CANCELLED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CampaignStatus {
    /// Being written; editable.
    Draft,
    /// Waiting for `scheduledFor`; editable.
    Scheduled,
    /// Recipients are being expanded and mailed.
    Sending,
    /// Every recipient has an outcome.
    Sent,
    /// Stopped; nothing more is handed to the transport.
    Cancelled,
}

impl CampaignStatus {
    /// Parses the upper-case name.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "DRAFT" => Some(Self::Draft),
            "SCHEDULED" => Some(Self::Scheduled),
            "SENDING" => Some(Self::Sending),
            "SENT" => Some(Self::Sent),
            "CANCELLED" => Some(Self::Cancelled),
            _ => None,
        }
    }

    /// The upper-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "DRAFT",
            Self::Scheduled => "SCHEDULED",
            Self::Sending => "SENDING",
            Self::Sent => "SENT",
            Self::Cancelled => "CANCELLED",
        }
    }
}

/// Who receives a campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AudienceType {
    /// Every subscribed, ACTIVE contact.
    All,
    /// The members of `segmentId`.
    Segment,
    /// The contacts matching `audienceCondition`.
    Filtered,
}

impl AudienceType {
    /// Parses the upper-case name.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "ALL" => Some(Self::All),
            "SEGMENT" => Some(Self::Segment),
            "FILTERED" => Some(Self::Filtered),
            _ => None,
        }
    }
}

/// A broadcast to an audience.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Campaign {
    /// Campaign id.
    pub id: CampaignId,
    /// Owning workspace.
    #[serde(rename = "projectId")]
    pub workspace_id: WorkspaceId,
    /// Name.
    pub name: String,
    /// Optional description.
    pub description: Option<String>,
    /// Subject (placeholders allowed).
    pub subject: String,
    /// HTML body (placeholders allowed).
    pub body: String,
    /// Sender address on a verified domain.
    pub from: String,
    /// Sender name.
    pub from_name: Option<String>,
    /// Reply-To.
    pub reply_to: Option<String>,
    /// ALL, SEGMENT or FILTERED.
    pub audience_type: AudienceType,
    /// The segment for SEGMENT audiences.
    pub segment_id: Option<SegmentId>,
    /// The condition for FILTERED audiences.
    pub audience_condition: Option<Condition>,
    /// Current status.
    pub status: CampaignStatus,
    /// When a SCHEDULED campaign starts.
    #[serde(with = "super::timestamp::option")]
    pub scheduled_for: Option<DateTime<Utc>>,
    /// When sending started.
    #[serde(with = "super::timestamp::option")]
    pub sent_at: Option<DateTime<Utc>>,
    /// Recipients expanded so far (exact once expansion is done).
    pub total_recipients: u64,
    /// Contacts with an id up to this one were in the audience when sending started.
    #[serde(skip_serializing, default)]
    pub audience_until_id: Option<ContactId>,
    /// Last contact id expanded into an email.
    #[serde(skip_serializing, default)]
    pub expanded_through_id: Option<ContactId>,
    /// Whether every recipient has an email record.
    #[serde(skip_serializing, default)]
    pub expansion_done: bool,
    /// Creation time.
    #[serde(with = "super::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "super::timestamp")]
    pub updated_at: DateTime<Utc>,
    /// Optimistic-concurrency version, bumped by every stored update.
    #[serde(skip_serializing, default)]
    pub version: u64,
}

/// How many of a campaign's emails are in each status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailCounts {
    /// Waiting for delivery.
    pub queued: u64,
    /// Handed to the transport, no later news.
    pub sent: u64,
    /// Delivery confirmed.
    pub delivered: u64,
    /// Opened.
    pub opened: u64,
    /// Clicked.
    pub clicked: u64,
    /// Bounced.
    pub bounced: u64,
    /// Complained.
    pub complained: u64,
    /// Failed before reaching the provider.
    pub failed: u64,
    /// Cancelled before being handed over (campaign cancelled, recipient unsubscribed).
    pub cancelled: u64,
}

impl EmailCounts {
    /// Adds one email of `status`.
    pub fn add(&mut self, status: super::EmailStatus, n: u64) {
        use super::EmailStatus as S;
        let slot = match status {
            S::Queued => &mut self.queued,
            S::Sent => &mut self.sent,
            S::Delivered => &mut self.delivered,
            S::Opened => &mut self.opened,
            S::Clicked => &mut self.clicked,
            S::Bounced => &mut self.bounced,
            S::Complained => &mut self.complained,
            S::Failed => &mut self.failed,
            S::Cancelled => &mut self.cancelled,
        };
        *slot += n;
    }

    /// Emails that reached the provider (sent or any later state).
    pub fn handed_over(&self) -> u64 {
        self.sent + self.delivered + self.opened + self.clicked + self.bounced + self.complained
    }
}
