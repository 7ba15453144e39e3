//! Campaign jobs: start a scheduled campaign, expand the audience into emails batch by
//! batch, and mark the campaign SENT when every email has an outcome.

use crate::app::campaigns::{expand_job, finish_job, start_sending};
use crate::app::send::render_context;
use crate::model::{
    new_id, Campaign, CampaignStatus, Contact, EmailRecord, EmailStatus, SourceType,
};
use crate::ports::{
    ChangeSet, ClaimedJob, JobPayload, Mailbox, MatchQuery, NewJob, StoreError, Write,
};
use crate::render::{html_to_text, render, Escape};
use crate::Engine;

use super::JobOutcome;

/// Recipients turned into emails per expansion job.
pub const EXPANSION_BATCH: usize = 500;
/// How often an unfinished campaign is checked for completion.
const FINISH_POLL_SECONDS: i64 = 5;

impl Engine {
    async fn settle(
        &self,
        job: &ClaimedJob,
        result: Result<JobOutcome, StoreError>,
    ) -> crate::Result<JobOutcome> {
        match result {
            Ok(JobOutcome::Done) => {
                self.jobs.complete(job).await?;
                Ok(JobOutcome::Done)
            }
            Ok(other) => Ok(other),
            // Someone changed the campaign meanwhile (a cancel, or this very batch done by
            // a worker whose lease expired): run again and look at the new state.
            Err(StoreError::Conflict(why)) => {
                let at = self.clock.now() + chrono::Duration::milliseconds(100);
                self.jobs.retry(job, at, false, &why).await?;
                Ok(JobOutcome::Retried)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Handles `StartCampaign`: a SCHEDULED campaign whose time has come starts sending.
    pub(super) async fn start_campaign(
        &self,
        job: &ClaimedJob,
        ws: &str,
        id: &str,
    ) -> crate::Result<JobOutcome> {
        let result = async {
            let Some(mut campaign) = self.store.campaign(ws, id).await? else {
                return Ok(JobOutcome::Done);
            };
            let now = self.clock.now();
            // Rescheduled to later, sent, or cancelled: this job is stale.
            let due = campaign.status == CampaignStatus::Scheduled
                && campaign.scheduled_for.is_some_and(|at| at <= now);
            if !due {
                return Ok(JobOutcome::Done);
            }
            start_sending(&mut campaign, now);
            campaign.updated_at = now;
            let mut changes = ChangeSet::new();
            changes.push(Write::EnqueueJob(NewJob::at(expand_job(&campaign), now)));
            changes.push(Write::UpdateCampaign(campaign));
            self.store.commit(changes).await?;
            Ok(JobOutcome::Done)
        }
        .await;
        self.settle(job, result).await
    }

    /// Handles `ExpandCampaign`: the next batch of the audience becomes emails and delivery
    /// jobs, in one commit guarded by the campaign's version, so a batch is expanded once.
    pub(super) async fn expand_campaign(
        &self,
        job: &ClaimedJob,
        ws: &str,
        id: &str,
    ) -> crate::Result<JobOutcome> {
        let result = async {
            let Some(mut campaign) = self.store.campaign(ws, id).await? else {
                return Ok(JobOutcome::Done);
            };
            if campaign.status != CampaignStatus::Sending || campaign.expansion_done {
                return Ok(JobOutcome::Done);
            }
            let now = self.clock.now();
            let Some(audience) = self.audience_condition(&campaign).await? else {
                // The segment vanished: nobody more to add.
                campaign.expansion_done = true;
                let mut changes = ChangeSet::new();
                changes.push(Write::EnqueueJob(NewJob::at(finish_job(&campaign), now)));
                changes.push(Write::UpdateCampaign(campaign));
                self.store.commit(changes).await?;
                return Ok(JobOutcome::Done);
            };
            let query = MatchQuery {
                after_id: campaign.expanded_through_id.clone(),
                until_id: campaign.audience_until_id.clone(),
                audience_only: true,
                limit: EXPANSION_BATCH,
            };
            let recipients = self
                .store
                .contacts_matching(ws, &audience, &query, now)
                .await?;
            let mut changes = ChangeSet::new();
            for contact in &recipients {
                let email = campaign_email(&campaign, contact, now);
                if email.status == EmailStatus::Queued {
                    changes.push(Write::EnqueueJob(NewJob::at(
                        JobPayload::DeliverEmail {
                            workspace_id: ws.to_string(),
                            email_id: email.id.clone(),
                        },
                        now,
                    )));
                }
                changes.push(Write::InsertEmail(email));
            }
            campaign.total_recipients += recipients.len() as u64;
            if let Some(last) = recipients.last() {
                campaign.expanded_through_id = Some(last.id.clone());
            }
            let next = if recipients.len() < EXPANSION_BATCH {
                campaign.expansion_done = true;
                finish_job(&campaign)
            } else {
                expand_job(&campaign)
            };
            changes.push(Write::EnqueueJob(NewJob::at(next, now)));
            campaign.updated_at = now;
            changes.push(Write::UpdateCampaign(campaign));
            self.store.commit(changes).await?;
            Ok(JobOutcome::Done)
        }
        .await;
        self.settle(job, result).await
    }

    /// Handles `FinishCampaign`: SENDING → SENT once no email is still queued.
    pub(super) async fn finish_campaign(
        &self,
        job: &ClaimedJob,
        ws: &str,
        id: &str,
    ) -> crate::Result<JobOutcome> {
        let result = async {
            let Some(mut campaign) = self.store.campaign(ws, id).await? else {
                return Ok(JobOutcome::Done);
            };
            if campaign.status != CampaignStatus::Sending || !campaign.expansion_done {
                return Ok(JobOutcome::Done);
            }
            let counts = self.store.campaign_email_counts(ws, id).await?;
            if counts.queued > 0 {
                let at = self.clock.now() + chrono::Duration::seconds(FINISH_POLL_SECONDS);
                self.jobs
                    .retry(job, at, false, "emails still queued")
                    .await
                    .map_err(|e| StoreError::Unavailable(e.to_string()))?;
                return Ok(JobOutcome::Retried);
            }
            campaign.status = CampaignStatus::Sent;
            campaign.updated_at = self.clock.now();
            let mut changes = ChangeSet::new();
            changes.push(Write::UpdateCampaign(campaign));
            self.store.commit(changes).await?;
            Ok(JobOutcome::Done)
        }
        .await;
        self.settle(job, result).await
    }
}

/// The email of one campaign recipient, rendered with the contact's data. A message that
/// cannot be rendered is recorded as FAILED instead of stopping the whole campaign.
pub fn campaign_email(
    campaign: &Campaign,
    contact: &Contact,
    now: chrono::DateTime<chrono::Utc>,
) -> EmailRecord {
    let ctx = render_context(&contact.data, contact);
    let rendered = render(&campaign.subject, &ctx, Escape::None)
        .and_then(|subject| Ok((subject, render(&campaign.body, &ctx, Escape::Html)?)));
    let (subject, html, text, status, error) = match rendered {
        Ok((subject, html)) if !subject.chars().any(|c| c.is_control() && c != '\t') => {
            let text = html_to_text(&html);
            (subject, html, Some(text), EmailStatus::Queued, None)
        }
        Ok(_) => (
            String::new(),
            String::new(),
            None,
            EmailStatus::Failed,
            Some("the rendered subject contains a line break".to_string()),
        ),
        Err(e) => (
            String::new(),
            String::new(),
            None,
            EmailStatus::Failed,
            Some(e.to_string()),
        ),
    };
    let id = new_id();
    let domain = campaign
        .from
        .rsplit_once('@')
        .map(|(_, d)| d)
        .unwrap_or("localhost");
    EmailRecord {
        message_id: format!("{id}@{domain}"),
        id,
        workspace_id: campaign.workspace_id.clone(),
        contact_id: contact.id.clone(),
        to: Mailbox {
            name: None,
            email: contact.email.to_string(),
        },
        from: Mailbox {
            name: campaign.from_name.clone(),
            email: campaign.from.clone(),
        },
        reply_to: campaign.reply_to.clone(),
        subject,
        html,
        text,
        headers: Vec::new(),
        attachments: Vec::new(),
        template_id: None,
        campaign_id: Some(campaign.id.clone()),
        source_type: SourceType::Campaign,
        status,
        provider_message_id: None,
        error,
        created_at: now,
        sent_at: None,
        updated_at: now,
    }
}
