//! Applying an SES notification: find the email, record the feedback through the lifecycle
//! rules, and remember the SNS message in the same commit so a redelivery does nothing.

use crate::app::inbound::InboundMessage;
use crate::app::lifecycle::Feedback;
use crate::app::StepError;
use crate::error::{Error, Result};
use crate::model::{EmailId, EmailRecord};
use crate::ports::Write;
use crate::sns::{SesEvent, SesMail, SesNotification, SesReceived};
use crate::Engine;

/// What one SES notification did.
#[derive(Debug, Clone, PartialEq)]
pub enum SesOutcome {
    /// The notification was processed before (same SNS `MessageId`).
    Duplicate,
    /// Recorded on the email.
    Recorded {
        /// The email it was about.
        email_id: EmailId,
        /// The event stored, if one was (`email.bounce`, …).
        event: Option<&'static str>,
        /// Whether the contact was unsubscribed by it.
        unsubscribed: bool,
    },
    /// The email already knew (a repeated delivery, a bounce after a permanent bounce, …).
    Unchanged {
        /// The email it was about.
        email_id: EmailId,
    },
    /// No email matches the SES message id or the `Message-ID` header.
    NoEmail,
    /// An SES open or click of an email Posthorn tracks itself (not counted twice).
    TrackedByPosthorn {
        /// The email it was about.
        email_id: EmailId,
    },
    /// Inbound mail, taken in by inbound intake: one record per receiving workspace, each
    /// processed into `email.received` by a job.
    Inbound {
        /// The inbound email records.
        accepted: Vec<EmailId>,
    },
    /// Inbound mail that cannot be taken in: the notification carries no content (a
    /// receipt rule with an S3 action, or a message over SNS's 150 KB), or no recipient is
    /// at an inbound-enabled domain. Acknowledged, so SNS does not redeliver it.
    InboundNotStored {
        /// Why, for the log and the answer.
        reason: String,
    },
    /// A notification type Posthorn does not act on (`Send`, `Reject`, …).
    Ignored(String),
}

impl Engine {
    /// Applies an SES notification that came in SNS message `sns_message_id` (whose
    /// signature and topic were checked). Processed once per SNS message: the record of it
    /// is committed with the change it causes.
    pub async fn apply_ses_notification(
        &self,
        sns_message_id: &str,
        notification: &SesNotification,
    ) -> Result<SesOutcome> {
        if self.store.sns_message_seen(sns_message_id).await? {
            return Ok(SesOutcome::Duplicate);
        }
        let feedback = match &notification.event {
            SesEvent::Received(received) => {
                return self
                    .take_ses_inbound(sns_message_id, &notification.mail, received)
                    .await;
            }
            SesEvent::Other(kind) => {
                return self
                    .marked(sns_message_id, SesOutcome::Ignored(kind.clone()))
                    .await;
            }
            _ => notification.feedback(),
        };
        let Some((feedback, at)) = feedback else {
            return self
                .marked(sns_message_id, SesOutcome::Ignored(String::new()))
                .await;
        };
        let mail = &notification.mail;
        let Some(email) = self
            .find_email_for_feedback(Some(&mail.message_id), mail.message_id_header.as_deref())
            .await?
        else {
            return self.marked(sns_message_id, SesOutcome::NoEmail).await;
        };
        if self.tracks_itself(&email, &feedback).await? {
            let outcome = SesOutcome::TrackedByPosthorn {
                email_id: email.id.clone(),
            };
            return self.marked(sns_message_id, outcome).await;
        }
        self.on_conflict_retry(|| async {
            // A racing redelivery that won leaves its record: this one then is a duplicate.
            if self.store.sns_message_seen(sns_message_id).await? {
                return Ok(SesOutcome::Duplicate);
            }
            let mark = Write::RecordSnsMessage {
                message_id: sns_message_id.to_owned(),
                processed_at: self.clock.now(),
            };
            let recorded = self
                .record_feedback_step(&email.workspace_id, &email.id, &feedback, at, &[mark])
                .await?;
            Ok::<_, StepError>(match recorded {
                None => SesOutcome::NoEmail,
                Some(r) if r.changed => SesOutcome::Recorded {
                    email_id: r.email.id,
                    event: r.event,
                    unsubscribed: r.unsubscribed,
                },
                Some(r) => SesOutcome::Unchanged {
                    email_id: r.email.id,
                },
            })
        })
        .await
    }

    /// Takes in an SES `Received` notification (mail SES accepted for a domain) through
    /// inbound intake, with the SNS message recorded in the same commit: a redelivery finds
    /// it and stores nothing twice.
    async fn take_ses_inbound(
        &self,
        sns_message_id: &str,
        mail: &SesMail,
        received: &SesReceived,
    ) -> Result<SesOutcome> {
        let Some(raw) = &received.content else {
            let reason = "the notification carries no message content (an S3 action, or \
                          over SNS's 150 KB): use an SNS action with the content included"
                .to_owned();
            tracing::warn!(ses_message_id = %mail.message_id, "{reason}");
            return self
                .marked(sns_message_id, SesOutcome::InboundNotStored { reason })
                .await;
        };
        let recipients = if received.recipients.is_empty() {
            mail.destination.clone()
        } else {
            received.recipients.clone()
        };
        let message = InboundMessage {
            envelope_from: mail.source.clone().filter(|s| !s.is_empty()),
            recipients,
            raw: raw.clone(),
            client_ip: None,
            helo: None,
            provider_verdicts: received.verdicts,
        };
        let mark = Write::RecordSnsMessage {
            message_id: sns_message_id.to_owned(),
            processed_at: self.clock.now(),
        };
        match self.receive_provider_inbound(message, vec![mark]).await {
            // Only bounce reports (recorded on their emails): nothing carried the record.
            Ok(receipt) if receipt.accepted.is_empty() => {
                self.marked(
                    sns_message_id,
                    SesOutcome::Inbound {
                        accepted: Vec::new(),
                    },
                )
                .await
            }
            Ok(receipt) => Ok(SesOutcome::Inbound {
                accepted: receipt.accepted.into_iter().map(|a| a.id).collect(),
            }),
            Err(Error::Validation(fields)) => {
                let reason = fields
                    .iter()
                    .map(|f| format!("{}: {}", f.field, f.message))
                    .collect::<Vec<_>>()
                    .join("; ");
                tracing::warn!(ses_message_id = %mail.message_id, %reason, "SES inbound mail not stored");
                self.marked(sns_message_id, SesOutcome::InboundNotStored { reason })
                    .await
            }
            // A racing redelivery committed first.
            Err(Error::Conflict(_)) if self.store.sns_message_seen(sns_message_id).await? => {
                Ok(SesOutcome::Duplicate)
            }
            Err(other) => Err(other),
        }
    }

    /// Whether Posthorn's own pixel or click redirect is in `email`'s HTML, so SES's report
    /// of the same open or click would count it twice. The lookup found the email without
    /// its content: the HTML is read for an open or a click only (deliveries, bounces and
    /// complaints, most of SES's reports, read no content).
    async fn tracks_itself(&self, email: &EmailRecord, feedback: &Feedback) -> Result<bool> {
        let path = match feedback {
            Feedback::Open => "/t/o/",
            Feedback::Click { .. } => "/t/c/",
            _ => return Ok(false),
        };
        let Some(whole) = self.store.email(&email.workspace_id, &email.id).await? else {
            return Ok(false);
        };
        let base = self.settings.public_url.trim_end_matches('/');
        Ok(whole.html.contains(&format!("{base}{path}")))
    }

    /// Records the SNS message as handled and answers `outcome` (or `Duplicate` when a
    /// racing redelivery recorded it first).
    async fn marked(&self, sns_message_id: &str, outcome: SesOutcome) -> Result<SesOutcome> {
        Ok(if self.mark_sns_message(sns_message_id).await? {
            outcome
        } else {
            SesOutcome::Duplicate
        })
    }
}
