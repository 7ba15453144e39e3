//! What happens to an email after it was sent: delivery, opens, clicks, bounces and
//! complaints, from whichever source reports them (tracking endpoints, provider
//! notifications, SMTP replies). Every source goes through [`Engine::record_feedback`], so
//! the rules (status only moves forward, first-open flags, the event cap, the automatic
//! unsubscribe) live once.

mod bounces;
mod decide;
mod links;

use chrono::{DateTime, Utc};
use serde_json::json;

pub use decide::{Decision, MAX_STORED_ENGAGEMENT_EVENTS};
pub use links::STATS_WINDOWS;

use crate::app::commit::ReadAhead;
use crate::app::StepError;
use crate::error::Result;
use crate::model::{BounceType, EmailId, EmailRecord, Event, WorkspaceId};
use crate::ports::{ChangeSet, Write};
use crate::Engine;

/// One piece of news about a sent email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Feedback {
    /// The provider confirmed delivery.
    Delivery,
    /// The recipient opened it.
    Open,
    /// The recipient followed a link.
    Click {
        /// The original URL.
        link: String,
    },
    /// The receiving side refused it.
    Bounce {
        /// Permanent (unsubscribes the contact) or transient (recorded only).
        bounce_type: BounceType,
        /// The provider's or the server's words, if any.
        detail: Option<String>,
    },
    /// The recipient marked it as spam (unsubscribes the contact).
    Complaint,
}

impl Feedback {
    /// The name of the event this feedback stores when it changes the email.
    pub fn event_name(&self) -> &'static str {
        match self {
            Feedback::Delivery => "email.delivery",
            Feedback::Open => "email.open",
            Feedback::Click { .. } => "email.click",
            Feedback::Bounce { .. } => "email.bounce",
            Feedback::Complaint => "email.complaint",
        }
    }
}

/// What recording a piece of feedback did.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The email as stored afterwards, without its content
    /// ([`EmailRecord::without_content`]).
    pub email: EmailRecord,
    /// Whether the record changed (false for a repeat that changes nothing).
    pub changed: bool,
    /// The name of the event stored, if one was.
    pub event: Option<&'static str>,
    /// Whether the contact was unsubscribed by this feedback.
    pub unsubscribed: bool,
}

impl Engine {
    /// Records `feedback` that happened `at` for an email. `Ok(None)` when the email does
    /// not exist. Safe to call again with the same news: a repeated delivery, permanent
    /// bounce or complaint changes nothing, repeated opens or clicks within a second
    /// collapse, and the contact is unsubscribed (with one `contact.unsubscribed
    /// {reason}`) only while it is subscribed.
    pub async fn record_feedback(
        &self,
        workspace_id: &WorkspaceId,
        email_id: &EmailId,
        feedback: &Feedback,
        at: DateTime<Utc>,
    ) -> Result<Option<Recorded>> {
        self.on_conflict_retry(|| {
            self.record_feedback_step(workspace_id, email_id, feedback, at, &[])
        })
        .await
    }

    /// One attempt of [`Engine::record_feedback`] that also commits `extra` (in the same
    /// change set, even when the feedback changes nothing): a `Conflict` is the caller's to
    /// retry, so a caller whose `extra` is guarded can re-read before trying again.
    pub(crate) async fn record_feedback_step(
        &self,
        workspace_id: &WorkspaceId,
        email_id: &EmailId,
        feedback: &Feedback,
        at: DateTime<Utc>,
        extra: &[Write],
    ) -> std::result::Result<Option<Recorded>, StepError> {
        // The state is all that changes: bodies and attachments are not read. What the
        // commit's follow-up work needs (tracked segments, a workflow's interest in the
        // event) comes along, in one round trip where the store can.
        let event_name = feedback.event_name();
        let reads = self
            .store
            .feedback_reads(workspace_id, email_id, event_name)
            .await?;
        let Some(mut email) = reads.email else {
            return Ok(None);
        };
        let contact_id = email.contact_id.clone();
        let ahead = ReadAhead {
            workspace_id,
            tracked_segments: &reads.tracked_segments,
            event: Some((event_name, &contact_id)),
            event_interest: reads.event_interest,
        };
        let read_at = email.updated_at;
        let decision = decide::apply(&mut email, feedback, at);
        let Some(decision) = decision else {
            if !extra.is_empty() {
                let extra = ChangeSet {
                    writes: extra.to_vec(),
                };
                self.commit_read_ahead(extra, Some(ahead)).await?;
            }
            return Ok(Some(Recorded {
                email,
                changed: false,
                event: None,
                unsubscribed: false,
            }));
        };
        let now = self.clock.now();
        email.updated_at = EmailRecord::updated_after(read_at, now);
        let mut changes = ChangeSet::new();
        changes.writes.extend_from_slice(extra);
        // Decided from this read: a concurrent piece of feedback for the same email (two
        // clicks of a link scanner, an open racing a delivery report) conflicts, and
        // `on_conflict_retry` decides again from the other's result instead of overwriting it.
        changes.push(Write::GuardEmail {
            workspace_id: workspace_id.clone(),
            id: email.id.clone(),
            updated_at: read_at,
        });
        changes.push(Write::UpdateEmail(email.clone()));
        if let Some((name, data)) = &decision.event {
            changes.push(Write::AppendEvent(Event::new(
                &*self.clock,
                workspace_id,
                *name,
                data.clone(),
                Some(email.contact_id.clone()),
                Some(email.id.clone()),
                at,
            )));
        }
        let mut unsubscribed = false;
        if let Some(reason) = decision.unsubscribe {
            // The address bounced or complained, so whoever holds it now is unsubscribed:
            // the email's contact may have changed its address since (its new one is fine),
            // and another contact may have taken the old one.
            let contact = self
                .store
                .contact_by_email(workspace_id, &email.to.email)
                .await?;
            if let Some(mut contact) = contact.filter(|c| c.subscribed) {
                contact.subscribed = false;
                contact.updated_at = now;
                changes.push(Write::AppendEvent(Event::new(
                    &*self.clock,
                    workspace_id,
                    "contact.unsubscribed",
                    json!({ "reason": reason }),
                    Some(contact.id.clone()),
                    None,
                    now,
                )));
                changes.push(Write::UpdateContact(contact));
                unsubscribed = true;
            }
        }
        self.commit_read_ahead(changes, Some(ahead)).await?;
        Ok(Some(Recorded {
            email,
            changed: true,
            event: decision.event.map(|(name, _)| name),
            unsubscribed,
        }))
    }

    /// The provider confirmed delivery; emits `email.delivery {deliveredAt}` once.
    pub async fn record_delivery(
        &self,
        workspace_id: &WorkspaceId,
        email_id: &EmailId,
        at: DateTime<Utc>,
    ) -> Result<Option<Recorded>> {
        self.record_feedback(workspace_id, email_id, &Feedback::Delivery, at)
            .await
    }

    /// An open; emits `email.open {openedAt, opens, isFirstOpen}` for the first
    /// [`MAX_STORED_ENGAGEMENT_EVENTS`] counted opens.
    pub async fn record_open(
        &self,
        workspace_id: &WorkspaceId,
        email_id: &EmailId,
        at: DateTime<Utc>,
    ) -> Result<Option<Recorded>> {
        self.record_feedback(workspace_id, email_id, &Feedback::Open, at)
            .await
    }

    /// A click on `link`; emits `email.click {link, clickedAt, clicks, isFirstClick}` for
    /// the first [`MAX_STORED_ENGAGEMENT_EVENTS`] counted clicks.
    pub async fn record_click(
        &self,
        workspace_id: &WorkspaceId,
        email_id: &EmailId,
        link: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Recorded>> {
        let feedback = Feedback::Click {
            link: link.to_owned(),
        };
        self.record_feedback(workspace_id, email_id, &feedback, at)
            .await
    }

    /// A bounce; a permanent one unsubscribes the contact (`reason: bounce`).
    pub async fn record_bounce(
        &self,
        workspace_id: &WorkspaceId,
        email_id: &EmailId,
        bounce_type: BounceType,
        detail: Option<String>,
        at: DateTime<Utc>,
    ) -> Result<Option<Recorded>> {
        let feedback = Feedback::Bounce {
            bounce_type,
            detail,
        };
        self.record_feedback(workspace_id, email_id, &feedback, at)
            .await
    }

    /// A spam complaint; unsubscribes the contact (`reason: complaint`).
    pub async fn record_complaint(
        &self,
        workspace_id: &WorkspaceId,
        email_id: &EmailId,
        at: DateTime<Utc>,
    ) -> Result<Option<Recorded>> {
        self.record_feedback(workspace_id, email_id, &Feedback::Complaint, at)
            .await
    }

    /// The email a provider notification is about, without its content: by the provider's
    /// message id first, then by the `Message-ID` header (angle brackets and surrounding
    /// space accepted).
    pub async fn find_email_for_feedback(
        &self,
        provider_message_id: Option<&str>,
        message_id_header: Option<&str>,
    ) -> Result<Option<EmailRecord>> {
        if let Some(id) = provider_message_id.map(str::trim).filter(|s| !s.is_empty()) {
            if let Some(email) = self.store.email_by_provider_id(id).await? {
                return Ok(Some(email));
            }
        }
        let bare = message_id_header
            .map(|h| {
                h.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .trim()
            })
            .filter(|s| !s.is_empty());
        match bare {
            Some(id) => Ok(self.store.email_by_message_id(id).await?),
            None => Ok(None),
        }
    }
}
