//! Delivering one email: throttle, hand to the transport, record `email.sent`.

use chrono::{DateTime, Utc};
use serde_json::json;

use super::JobOutcome;
use crate::app::commit::ReadAhead;
use crate::model::{
    ascii_domain_address, timestamp, BounceType, CampaignStatus, ContactStatus, Domain, EmailId,
    EmailRecord, EmailStatus, Event, WorkspaceId,
};
use crate::ports::{
    ChangeSet, ClaimedJob, DkimSigning, Mailbox, OutgoingMessage, Quota, RateDecision, StoreError,
    TransportError, Write,
};
use crate::render::html_to_text;
use crate::send_class::SendClass;
use crate::Engine;

/// The event a handed-over email records.
const SENT: &str = "email.sent";

/// The workspace's sending budget as a rate-limiter quota.
pub fn send_quota(per_second: f64) -> Quota {
    if per_second >= 1.0 {
        Quota {
            limit: per_second.floor() as u32,
            window: std::time::Duration::from_secs(1),
        }
    } else {
        let secs = (1.0 / per_second.max(1e-6)).ceil();
        Quota {
            limit: 1,
            window: std::time::Duration::from_secs_f64(secs),
        }
    }
}

/// The data of an email event: the base fields every email event carries.
pub fn email_event_data(email: &EmailRecord) -> serde_json::Value {
    json!({
        "subject": email.subject,
        "from": email.from.email,
        "fromName": email.from.name,
        "messageId": email.provider_message_id.clone().unwrap_or_else(|| email.message_id.clone()),
        "emailId": email.id,
        "templateId": email.template_id,
        "campaignId": email.campaign_id,
        "sourceType": email.source_type,
    })
}

impl Engine {
    /// Moves an email from status `from` to `to`, with `error`, if it is still in `from`
    /// (an email in any other state, or gone, is left alone). Guarded on the `updated_at`
    /// read: a worker whose lease ran out may record SENT meanwhile, and giving up must not
    /// write FAILED over that (it reads again and leaves the email alone).
    pub(crate) async fn move_email(
        &self,
        workspace_id: &WorkspaceId,
        email_id: &EmailId,
        from: EmailStatus,
        to: EmailStatus,
        error: Option<String>,
    ) -> crate::Result<()> {
        self.on_conflict_retry(|| async {
            let Some(mut email) = self.store.email(workspace_id, email_id).await? else {
                return Ok(());
            };
            if email.status != from {
                return Ok(());
            }
            let mut changes = ChangeSet::new();
            changes.push(Write::GuardEmail {
                workspace_id: workspace_id.clone(),
                id: email_id.clone(),
                updated_at: email.updated_at,
            });
            self.set_email_status(&mut email, to, error.clone());
            changes.push(Write::UpdateEmail(email));
            self.store.commit(changes).await?;
            Ok(())
        })
        .await
    }

    /// Gives `email` a new status and error, changed now.
    fn set_email_status(
        &self,
        email: &mut EmailRecord,
        status: EmailStatus,
        error: Option<String>,
    ) {
        email.status = status;
        email.error = error;
        email.updated_at = EmailRecord::updated_after(email.updated_at, self.clock.now());
    }

    /// Why a campaign email must not go out any more: the campaign was cancelled, or the
    /// recipient unsubscribed or is PENDING (checked again just before delivery).
    async fn campaign_stop_reason(
        &self,
        email: &EmailRecord,
    ) -> crate::Result<Option<&'static str>> {
        let Some(campaign_id) = &email.campaign_id else {
            return Ok(None);
        };
        let campaign = self
            .store
            .campaign(&email.workspace_id, campaign_id)
            .await?;
        if campaign.is_none_or(|c| c.status == CampaignStatus::Cancelled) {
            return Ok(Some("the campaign was cancelled"));
        }
        let contact = self
            .store
            .contact(&email.workspace_id, &email.contact_id)
            .await?;
        Ok(match contact {
            None => Some("the contact was deleted"),
            Some(c) if !c.subscribed => Some("the contact unsubscribed"),
            Some(c) if c.status == ContactStatus::Pending => Some("the contact is pending"),
            Some(_) => None,
        })
    }

    /// Takes one delivery of `class` from `workspace`'s sending budget: campaign mail first
    /// from its own share, then, like all mail, from the whole budget. (Campaign mail refused
    /// by the whole budget has used a unit of its share: in that window other mail came
    /// first, which is the point.)
    async fn take_send_budget(
        &self,
        workspace: &WorkspaceId,
        class: SendClass,
        quota: Quota,
        now: DateTime<Utc>,
    ) -> crate::Result<RateDecision> {
        if let Some(key) = class.share_key(workspace.as_str()) {
            let share = self
                .rate_limiter
                .take(&key, 1, class.quota(quota), now)
                .await?;
            if !share.allowed {
                return Ok(share);
            }
        }
        let key = format!("send:{workspace}");
        Ok(self.rate_limiter.take(&key, 1, quota, now).await?)
    }

    /// Handles `DeliverEmail`. Idempotent: an email no longer QUEUED is left alone.
    pub(super) async fn deliver_email(
        &self,
        job: &ClaimedJob,
        workspace_id: &WorkspaceId,
        email_id: &EmailId,
    ) -> crate::Result<JobOutcome> {
        let Some(mut email) = self.store.email(workspace_id, email_id).await? else {
            self.jobs.complete(job).await?;
            return Ok(JobOutcome::Done);
        };
        if email.status != EmailStatus::Queued {
            self.jobs.complete(job).await?;
            return Ok(JobOutcome::Done);
        }
        let Some(ws) = self.store.workspace(workspace_id).await? else {
            self.jobs.complete(job).await?;
            return Ok(JobOutcome::Done);
        };
        let now = self.clock.now();
        if let Some(reason) = self.campaign_stop_reason(&email).await? {
            let reason = Some(reason.to_string());
            self.move_email(
                workspace_id,
                &email.id,
                email.status,
                EmailStatus::Cancelled,
                reason,
            )
            .await?;
            self.jobs.complete(job).await?;
            return Ok(JobOutcome::Done);
        }
        // Throttle: wait for a coming window instead of dropping the mail, the window the
        // pacer hands out, so that a backlog is spread over as many windows as it needs.
        let class = SendClass::of(&email);
        let quota = send_quota(ws.send_rate_per_second);
        let decision = self.take_send_budget(&ws.id, class, quota, now).await?;
        if !decision.allowed {
            let at = self.settings.send_pacer.next_window(
                &ws.id,
                class,
                class.quota(quota),
                decision.reset_at,
            );
            self.jobs.retry(job, at, false, "throttled").await?;
            return Ok(JobOutcome::Retried);
        }
        let sender_domain = self.sender_domain(&email).await?;
        // Addresses are canonical (A-label domains) since they were parsed; one stored
        // before with a Unicode domain goes out in ASCII form too, which any relay takes.
        let ascii = |mailbox: &Mailbox| Mailbox {
            name: mailbox.name.clone(),
            email: ascii_domain_address(&mailbox.email).into_owned(),
        };
        let message = OutgoingMessage {
            email_id: email.id.clone(),
            message_id: email.message_id.clone(),
            from: ascii(&email.from),
            envelope_from: self.envelope_sender(&email, sender_domain.as_ref()).await?,
            to: ascii(&email.to),
            reply_to: email.reply_to.clone(),
            subject: email.subject.clone(),
            html: email.html.clone(),
            text: text_part(&email),
            headers: email.headers.clone(),
            attachments: email.attachments.clone(),
            dkim: self.dkim_signing(&email, sender_domain).await?,
        };
        match self.transport.send(&message).await {
            Ok(provider_id) => {
                let read_at = email.updated_at;
                let sent_at = self.clock.now();
                email.status = EmailStatus::Sent;
                email.provider_message_id = Some(provider_id);
                email.sent_at = Some(sent_at);
                email.updated_at = EmailRecord::updated_after(read_at, sent_at);
                email.error = None;
                let mut data = email_event_data(&email);
                data["sentAt"] = json!(timestamp::format(&sent_at));
                let event = Event::new(
                    &*self.clock,
                    &ws.id,
                    SENT,
                    data,
                    Some(email.contact_id.clone()),
                    Some(email.id.clone()),
                    sent_at,
                );
                self.record_sent(&ws.id, email, read_at, event).await?;
                self.jobs.complete(job).await?;
                Ok(JobOutcome::Done)
            }
            Err(TransportError::Transient(why))
                if job.attempts + 1 < self.settings.max_delivery_attempts =>
            {
                tracing::warn!(email_id = %email.id, attempt = job.attempts + 1, %why, "delivery failed, will retry");
                let at = now + self.retry_delay(job.attempts + 1);
                self.jobs.retry(job, at, true, &why).await?;
                Ok(JobOutcome::Retried)
            }
            Err(TransportError::Rejected { reply, recipient }) => {
                tracing::warn!(email_id = %email.id, %reply, recipient, "receiving server refused the message");
                self.record_rejection(email, reply, recipient).await?;
                self.jobs.complete(job).await?;
                Ok(JobOutcome::Done)
            }
            Err(e) => {
                tracing::warn!(email_id = %email.id, error = %e, "delivery failed for good");
                let (id, read_status) = (email.id.clone(), email.status);
                self.move_email(
                    &email.workspace_id,
                    &id,
                    read_status,
                    EmailStatus::Failed,
                    Some(e.to_string()),
                )
                .await?;
                match e {
                    TransportError::Transient(why) => {
                        self.jobs.dead_letter(job, &why).await?;
                        Ok(JobOutcome::Dead)
                    }
                    TransportError::Permanent(_) | TransportError::Rejected { .. } => {
                        self.jobs.complete(job).await?;
                        Ok(JobOutcome::Done)
                    }
                }
            }
        }
    }
}

impl Engine {
    /// The record of the sender's domain, `None` when it was removed since.
    async fn sender_domain(&self, email: &EmailRecord) -> crate::Result<Option<Domain>> {
        let sender = email.from.email.rsplit_once('@').map_or("", |(_, d)| d);
        Ok(self
            .store
            .domains(&email.workspace_id)
            .await?
            .into_iter()
            .find(|d| d.name_is(sender)))
    }

    /// The DKIM key of `email`'s sender `domain` (made now if the domain has none yet);
    /// `None`, with a warning, when the workspace no longer has that domain.
    async fn dkim_signing(
        &self,
        email: &EmailRecord,
        domain: Option<Domain>,
    ) -> crate::Result<Option<DkimSigning>> {
        let Some(domain) = domain else {
            let sender = email.from.email.rsplit_once('@').map_or("", |(_, d)| d);
            tracing::warn!(email_id = %email.id, sender, "sender domain gone: sent without DKIM");
            return Ok(None);
        };
        let domain = self.ensure_dkim_key(domain).await?;
        let name = domain.ascii_name().into_owned();
        Ok(domain.dkim.map(|key| DkimSigning {
            domain: name,
            selector: domain.dkim_selector,
            key,
        }))
    }

    /// A permanent SMTP reply at hand-over. About the recipient (5.1.x, 5.2.1): a permanent
    /// bounce, which unsubscribes the contact. Anything else (relay denied, policy, size):
    /// the email FAILED with the reply, and a transient bounce that unsubscribes nobody.
    /// Either way the email leaves QUEUED in the first commit, so a crash in between
    /// never sends it twice.
    async fn record_rejection(
        &self,
        email: EmailRecord,
        reply: String,
        recipient: bool,
    ) -> crate::Result<()> {
        let (workspace_id, email_id) = (email.workspace_id.clone(), email.id.clone());
        let at = self.clock.now();
        if recipient {
            // One commit: BOUNCED, `email.bounce`, and the unsubscribe.
            let recorded = self
                .record_bounce(
                    &workspace_id,
                    &email_id,
                    BounceType::Permanent,
                    Some(reply.clone()),
                    at,
                )
                .await?;
            // The reply as the error too, under the guard: feedback recorded in between (a
            // complaint) is kept, not overwritten by this copy.
            if let Some(recorded) = recorded {
                let status = recorded.email.status;
                self.move_email(&workspace_id, &email_id, status, status, Some(reply))
                    .await?;
            }
        } else {
            let failed = Some(reply.clone());
            self.move_email(
                &workspace_id,
                &email_id,
                email.status,
                EmailStatus::Failed,
                failed,
            )
            .await?;
            self.record_bounce(
                &workspace_id,
                &email_id,
                BounceType::Transient,
                Some(reply),
                at,
            )
            .await?;
        }
        Ok(())
    }
}

/// The plain-text part sent with `email`: its own, none when it is empty, or one derived
/// from the HTML when the record left it to delivery.
fn text_part(email: &EmailRecord) -> Option<String> {
    match email.text.as_deref() {
        Some("") => None,
        Some(text) => Some(text.to_owned()),
        None => Some(html_to_text(&email.html)).filter(|text| !text.is_empty()),
    }
}

/// How many times the record of a sent email is tried once the transport took the message,
/// and the wait before the second try (doubled each time: about 6 s in all, well within a
/// job's lease).
const RECORD_ATTEMPTS: u32 = 6;
const RECORD_FIRST_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

impl Engine {
    /// Records that `sent` was sent (its state and its `email.sent` event), guarded by the
    /// `updated_at` it was read with. The transport already took the message, so a failure
    /// here is retried in place, not left to the job's retry, which would send the message
    /// again; only a store down for longer than the attempts leaves that to the job
    /// (delivery is at least once). Feedback that came in meanwhile (a delivery report
    /// right after the hand-over) makes the guard conflict: the email is read again and the
    /// sending facts are set on what is stored, so that feedback is kept.
    async fn record_sent(
        &self,
        workspace_id: &WorkspaceId,
        sent: EmailRecord,
        read_at: DateTime<Utc>,
        event: Event,
    ) -> crate::Result<()> {
        let mut wait = RECORD_FIRST_WAIT;
        let mut attempt = 1;
        let (mut state, mut guard_at) = (sent.clone(), read_at);
        loop {
            let outcome = self
                .try_record_sent(workspace_id, &state, guard_at, &event)
                .await;
            match outcome {
                Ok(()) => return Ok(()),
                Err(e) if attempt < RECORD_ATTEMPTS => {
                    tracing::warn!(email_id = %sent.id, attempt, error = %e,
                        "recording a sent email failed; trying again before the job would resend it");
                    if matches!(e, StoreError::Conflict(_)) {
                        match self
                            .store
                            .email_without_content(workspace_id, &sent.id)
                            .await
                        {
                            // An earlier try did commit (its answer was lost): done.
                            Ok(Some(stored))
                                if stored.sent_at.is_some()
                                    && stored.provider_message_id == sent.provider_message_id =>
                            {
                                return Ok(());
                            }
                            Ok(Some(stored)) => {
                                guard_at = stored.updated_at;
                                state = with_sending_facts(stored, &sent, self.clock.now());
                            }
                            // Gone since: nothing is left to record.
                            Ok(None) => return Ok(()),
                            Err(_) => {}
                        }
                    } else {
                        self.clock.sleep(wait).await;
                        wait *= 2;
                    }
                    attempt += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    async fn try_record_sent(
        &self,
        workspace_id: &WorkspaceId,
        email: &EmailRecord,
        read_at: DateTime<Utc>,
        event: &Event,
    ) -> std::result::Result<(), StoreError> {
        // What the commit's follow-up work reads (the tracked segments, whether a workflow
        // waits for `email.sent`), read in the store's one batched round trip for events;
        // the contact is the recipient's when its address still is.
        let reads = self
            .store
            .event_reads(workspace_id, &email.to.email, Some(SENT))
            .await?;
        let recipient = reads
            .contact
            .as_ref()
            .map(|c| &c.id)
            .filter(|id| **id == email.contact_id);
        let ahead = ReadAhead {
            workspace_id,
            tracked_segments: &reads.tracked_segments,
            event: recipient.map(|id| (SENT, id)),
            event_interest: reads.event_interest,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::GuardEmail {
            workspace_id: workspace_id.clone(),
            id: email.id.clone(),
            updated_at: read_at,
        });
        changes.push(Write::UpdateEmail(email.clone()));
        changes.push(Write::AppendEvent(event.clone()));
        self.commit_read_ahead(changes, Some(ahead)).await
    }
}

/// `stored` with the facts of its hand-over to the transport taken from `sent`: SENT unless
/// feedback already moved it on, the provider's id, the sending time, no error.
fn with_sending_facts(
    mut stored: EmailRecord,
    sent: &EmailRecord,
    now: DateTime<Utc>,
) -> EmailRecord {
    // Feedback may have moved it on (a delivery report); a give-up or a cancel may have
    // marked it while the message was on its way, and it went out all the same.
    if matches!(
        stored.status,
        EmailStatus::Queued | EmailStatus::Failed | EmailStatus::Cancelled
    ) {
        stored.status = EmailStatus::Sent;
    }
    stored.provider_message_id = sent.provider_message_id.clone();
    stored.sent_at = sent.sent_at;
    stored.error = None;
    stored.updated_at = EmailRecord::updated_after(stored.updated_at, now);
    stored
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sending_facts_keep_the_feedback_that_came_first() {
        let at = Utc::now();
        let mut sent = EmailRecord::sample_sent(at);
        sent.provider_message_id = Some("ses-1".into());
        // A delivery report recorded between the hand-over and this record.
        let mut stored = EmailRecord::sample_sent(at);
        stored.status = EmailStatus::Delivered;
        stored.provider_message_id = None;
        stored.sent_at = None;
        stored.lifecycle.delivered_at = Some(at);
        let later = at + chrono::TimeDelta::seconds(1);
        let merged = with_sending_facts(stored.clone(), &sent, later);
        assert_eq!(merged.status, EmailStatus::Delivered);
        assert_eq!(merged.lifecycle.delivered_at, Some(at));
        assert_eq!(merged.provider_message_id.as_deref(), Some("ses-1"));
        assert_eq!(merged.sent_at, Some(at));
        assert_eq!(merged.updated_at, later);
        for marked in [
            EmailStatus::Queued,
            EmailStatus::Failed,
            EmailStatus::Cancelled,
        ] {
            stored.status = marked;
            let merged = with_sending_facts(stored.clone(), &sent, at);
            assert_eq!(merged.status, EmailStatus::Sent, "{marked:?}");
            // The clock did not move on: the record still moves past what was read.
            assert!(merged.updated_at > stored.updated_at);
        }
    }

    #[test]
    fn quotas_cover_fractional_rates() {
        assert_eq!(send_quota(14.0).limit, 14);
        assert_eq!(send_quota(14.7).limit, 14);
        let slow = send_quota(0.5);
        assert_eq!((slow.limit, slow.window.as_secs()), (1, 2));
    }
}
