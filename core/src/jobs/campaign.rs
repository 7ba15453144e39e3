//! Campaign jobs: start a scheduled campaign, expand the audience into emails batch by
//! batch, and mark the campaign SENT when every email has an outcome.

use chrono::{DateTime, Utc};

use crate::app::campaigns::{expand_job, finish_job, start_sending};
use crate::app::send::render_context;
use crate::model::{
    ascii_domain_address, Campaign, CampaignId, CampaignStatus, Contact, ContactId, EmailId,
    EmailRecord, EmailStatus, SourceType, WorkspaceId,
};
use crate::ports::{
    ChangeSet, ClaimedJob, Clock, JobPayload, Mailbox, MatchQuery, NewJob, StoreError, Write,
};
use crate::render::{Escape, RenderError, Template};
use crate::segment::Condition;
use crate::tracking::Tracker;
use crate::Engine;

use super::JobOutcome;

/// Recipients turned into emails per expansion batch (one commit).
pub const EXPANSION_BATCH: usize = 500;
/// Batches one `ExpandCampaign` job expands before it queues the next job (a job stays well
/// within its lease, and other campaigns get their turn).
pub const BATCHES_PER_JOB: usize = 8;
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
        ws: &WorkspaceId,
        id: &CampaignId,
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
            start_sending(&mut campaign, &*self.clock, now);
            self.freeze_audience(&mut campaign).await?;
            campaign.updated_at = now;
            let mut changes = ChangeSet::new();
            changes.push(Write::EnqueueJob(NewJob::at(
                &*self.clock,
                expand_job(&campaign),
                now,
            )));
            changes.push(Write::UpdateCampaign(campaign));
            self.store.commit(changes).await?;
            Ok(JobOutcome::Done)
        }
        .await;
        self.settle(job, result).await
    }

    /// Handles `ExpandCampaign`: the next batches of the audience become emails and
    /// delivery jobs, each batch in one commit guarded by the campaign's version, so a batch
    /// is expanded once. Up to [`BATCHES_PER_JOB`] batches per job, each read and rendered
    /// while the one before it is being committed; the last commit queues the next job.
    pub(super) async fn expand_campaign(
        &self,
        job: &ClaimedJob,
        ws: &WorkspaceId,
        id: &CampaignId,
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
                changes.push(Write::EnqueueJob(NewJob::at(
                    &*self.clock,
                    finish_job(&campaign),
                    now,
                )));
                changes.push(Write::UpdateCampaign(campaign));
                self.store.commit(changes).await?;
                return Ok(JobOutcome::Done);
            };
            let message = CampaignMessage::compile(&campaign);
            let mut batch = self
                .expansion_batch(&campaign, &audience, &message, now)
                .await?;
            for round in 1.. {
                let last_batch = batch.recipients < EXPANSION_BATCH;
                let hand_over = !last_batch && round >= BATCHES_PER_JOB;
                let mut changes = ChangeSet::new();
                if hand_over {
                    // Due since just before sending started: the queue hands out the oldest
                    // jobs first, so the next batches run before every delivery of the
                    // campaign instead of waiting behind all that are queued.
                    let ahead = campaign.sent_at.unwrap_or(now).min(now)
                        - chrono::Duration::milliseconds(1);
                    changes.push(Write::EnqueueJob(NewJob::at(
                        &*self.clock,
                        expand_job(&campaign),
                        ahead,
                    )));
                }
                for write in batch.writes {
                    changes.push(write);
                }
                if last_batch {
                    // After the deliveries, so that it finds them done more often than not.
                    changes.push(Write::EnqueueJob(NewJob::at(
                        &*self.clock,
                        finish_job(&campaign),
                        now,
                    )));
                }
                campaign.total_recipients += batch.recipients as u64;
                campaign.expansion_done = last_batch;
                if batch.last_contact_id.is_some() {
                    campaign.expanded_through_id = batch.last_contact_id;
                }
                campaign.updated_at = now;
                changes.push(Write::UpdateCampaign(campaign.clone()));
                if last_batch || hand_over {
                    self.store.commit(changes).await?;
                    break;
                }
                // Commit this batch while the next one is read and rendered (the database
                // works on the commit while this process renders).
                let (committed, next) = futures::future::join(
                    self.store.commit(changes),
                    self.expansion_batch(&campaign, &audience, &message, now),
                )
                .await;
                committed?;
                // The store keeps the campaign at the next version (the guard's contract).
                campaign.version += 1;
                batch = next?;
            }
            Ok(JobOutcome::Done)
        }
        .await;
        self.settle(job, result).await
    }

    /// Reads the recipients after `campaign.expanded_through_id` (one batch) and renders
    /// their emails and delivery jobs.
    async fn expansion_batch(
        &self,
        campaign: &Campaign,
        audience: &Condition,
        message: &CampaignMessage,
        now: DateTime<Utc>,
    ) -> Result<ExpansionBatch, StoreError> {
        let ws = &campaign.workspace_id;
        let query = MatchQuery {
            after_id: campaign.expanded_through_id.clone(),
            until_id: campaign.audience_until_id.clone(),
            audience_only: true,
            limit: EXPANSION_BATCH,
        };
        let recipients = self
            .store
            .contacts_matching(ws, audience, &query, now)
            .await?;
        let mut writes = Vec::with_capacity(recipients.len() * 2);
        let (opens, clicks) = match self.store.workspace(ws).await? {
            Some(w) => (w.track_opens, w.track_clicks),
            None => (true, true),
        };
        let tracker = self.tracker(opens, clicks).await?;
        for contact in &recipients {
            let email =
                message.email_with_links(&*self.clock, campaign, contact, Some(&tracker), now);
            if email.status == EmailStatus::Queued {
                writes.push(Write::EnqueueJob(NewJob::at(
                    &*self.clock,
                    JobPayload::DeliverEmail {
                        workspace_id: ws.clone(),
                        email_id: email.id.clone(),
                    },
                    now,
                )));
            }
            writes.push(Write::InsertEmail(email));
        }
        Ok(ExpansionBatch {
            recipients: recipients.len(),
            last_contact_id: recipients.last().map(|c| c.id.clone()),
            writes,
        })
    }

    /// Handles `FinishCampaign`: SENDING → SENT once no email is still queued.
    pub(super) async fn finish_campaign(
        &self,
        job: &ClaimedJob,
        ws: &WorkspaceId,
        id: &CampaignId,
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

/// One batch of a campaign's audience, ready to commit.
struct ExpansionBatch {
    /// Recipients read (a short batch is the last).
    recipients: usize,
    /// The last recipient's contact id, where the next batch starts.
    last_contact_id: Option<ContactId>,
    /// Their emails and delivery jobs.
    writes: Vec<Write>,
}

/// A campaign's subject and body compiled once, to render many recipients' emails.
#[derive(Debug, Clone)]
pub struct CampaignMessage {
    /// The compiled subject and body, or why they do not compile.
    compiled: Result<(Template, Template), RenderError>,
}

impl CampaignMessage {
    /// Compiles `campaign`'s subject and body.
    pub fn compile(campaign: &Campaign) -> Self {
        let compiled = Template::compile(&campaign.subject, Escape::None)
            .and_then(|subject| Ok((subject, Template::compile(&campaign.body, Escape::Html)?)));
        Self { compiled }
    }

    /// The email of one recipient, rendered with the contact's data. A message that cannot
    /// be rendered is recorded as FAILED instead of stopping the whole campaign. The text
    /// part is left to delivery, which derives it from the HTML (see [`EmailRecord::text`]).
    pub fn email_for(
        &self,
        clock: &dyn Clock,
        campaign: &Campaign,
        contact: &Contact,
        now: chrono::DateTime<chrono::Utc>,
    ) -> EmailRecord {
        self.email_with_links(clock, campaign, contact, None, now)
    }

    /// [`Self::email_for`] with `{{unsubscribeUrl}}`, the `List-Unsubscribe` headers, the
    /// footer link and the tracking `tracker` switches on (none of them without one).
    pub fn email_with_links(
        &self,
        clock: &dyn Clock,
        campaign: &Campaign,
        contact: &Contact,
        tracker: Option<&Tracker>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> EmailRecord {
        let id = EmailId::generate(clock);
        let unsubscribe =
            tracker.map(|t| t.unsubscribe_url(&campaign.workspace_id, &contact.id, &id));
        let rendered = self
            .compiled
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|(subject, body)| {
                let mut ctx = render_context(&contact.data, contact);
                if let (serde_json::Value::Object(map), Some(url)) = (&mut ctx, &unsubscribe) {
                    map.insert("unsubscribeUrl".into(), serde_json::json!(url));
                }
                Ok((subject.render(&ctx)?, body.render(&ctx)?))
            });
        let (subject, html, status, error) = match rendered {
            Ok((subject, html)) if !subject.chars().any(|c| c.is_control() && c != '\t') => {
                (subject, html, EmailStatus::Queued, None)
            }
            Ok(_) => (
                String::new(),
                String::new(),
                EmailStatus::Failed,
                Some("the rendered subject contains a line break".to_string()),
            ),
            Err(e) => (
                String::new(),
                String::new(),
                EmailStatus::Failed,
                Some(e.to_string()),
            ),
        };
        // ASCII also for a sender stored before addresses were canonical.
        let from = ascii_domain_address(&campaign.from);
        let domain = from.rsplit_once('@').map(|(_, d)| d).unwrap_or("localhost");
        let mut email = EmailRecord {
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
            text: None,
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
            lifecycle: Default::default(),
        };
        if let (Some(tracker), EmailStatus::Queued) = (tracker, email.status) {
            tracker.decorate(&mut email, unsubscribe.as_deref());
        }
        email
    }
}
