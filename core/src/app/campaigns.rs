//! Campaigns: create, read, list, update, delete, send (now or scheduled), cancel, stats.

use chrono::{DateTime, Utc};

use super::segments::Page;
use super::templates::message_text_problems;
use super::{check_page, Caller, PageRequest, Patch, StepError};
use crate::error::{Error, Resource, Result};
use crate::model::{
    AudienceType, Campaign, CampaignId, CampaignStatus, ContactId, EmailAddress, EmailCounts,
    EmailStats, Segment, SegmentId, SegmentType,
};
use crate::ports::{ChangeSet, Clock, EmailStatsQuery, JobPayload, NewJob, StoreError, Write};
use crate::segment::{Condition, Field, Filter, Group, Logic, Operator};
use crate::send_class::SendClass;
use crate::Engine;

/// A campaign with its counters and embedded segment, as the API shows it.
#[derive(Debug, Clone)]
pub struct CampaignView {
    /// The campaign.
    pub campaign: Campaign,
    /// Its emails by status.
    pub counts: EmailCounts,
    /// Its recipients by outcome (delivered, first open, first click, bounce, complaint).
    pub outcomes: EmailStats,
    /// The audience segment, when SEGMENT.
    pub segment: Option<Segment>,
}

/// `POST /campaigns`: a DRAFT campaign.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateCampaign {
    /// Name (one line).
    pub name: String,
    /// Description (one line).
    pub description: Option<String>,
    /// Subject, a template string (one line).
    pub subject: String,
    /// HTML body, a template string.
    pub body: String,
    /// Sender; on a verified domain of the workspace.
    pub from: EmailAddress,
    /// Sender display name.
    pub from_name: Option<String>,
    /// Reply-To address.
    pub reply_to: Option<EmailAddress>,
    /// ALL, SEGMENT (needs `segment_id`) or FILTERED (needs `audience_condition`).
    pub audience_type: AudienceType,
    /// The audience segment.
    pub segment_id: Option<SegmentId>,
    /// The audience condition.
    pub audience_condition: Option<Condition>,
}

/// `PUT|PATCH /campaigns/{id}`: each field left, cleared (optional ones) or set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CampaignPatch {
    /// New name.
    pub name: Option<String>,
    /// New description.
    pub description: Patch<String>,
    /// New subject.
    pub subject: Option<String>,
    /// New HTML body.
    pub body: Option<String>,
    /// New sender.
    pub from: Option<EmailAddress>,
    /// New sender display name.
    pub from_name: Patch<String>,
    /// New Reply-To.
    pub reply_to: Patch<EmailAddress>,
    /// New audience type.
    pub audience_type: Option<AudienceType>,
    /// New audience segment.
    pub segment_id: Patch<SegmentId>,
    /// New audience condition.
    pub audience_condition: Patch<Condition>,
}

/// `GET /campaigns`: a page, optionally of one status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListCampaigns {
    /// Page and page size.
    pub page: PageRequest,
    /// Only campaigns in this status.
    pub status: Option<CampaignStatus>,
}

/// `POST /campaigns/{id}/send`: now, or at a future time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SendCampaign {
    /// When to start; now when `None`. Must lie in the future.
    pub scheduled_for: Option<DateTime<Utc>>,
}

/// One filter as a condition: `segment.<id> memberOfSegment`.
pub(crate) fn member_of(segment_id: &SegmentId) -> Condition {
    Condition {
        logic: Logic::And,
        groups: vec![Group {
            filters: vec![Filter {
                field: Field::Segment(segment_id.clone()),
                op: Operator::MemberOfSegment,
                value: None,
                unit: None,
            }],
            conditions: None,
        }],
    }
}

impl Engine {
    /// The condition a campaign's audience matches (subscribed and ACTIVE are added by the
    /// query). `None` when its segment is gone. A SEGMENT campaign that started sending
    /// matches the condition its DYNAMIC segment had then ([`Engine::freeze_audience`]).
    pub async fn audience_condition(
        &self,
        campaign: &Campaign,
    ) -> Result<Option<Condition>, StoreError> {
        Ok(match campaign.audience_type {
            AudienceType::All => Some(Condition::default()),
            AudienceType::Filtered => Some(campaign.audience_condition.clone().unwrap_or_default()),
            AudienceType::Segment if campaign.audience_condition.is_some() => {
                campaign.audience_condition.clone()
            }
            AudienceType::Segment => {
                let Some(id) = &campaign.segment_id else {
                    return Ok(None);
                };
                match self.store.segment(&campaign.workspace_id, id).await? {
                    None => None,
                    // A DYNAMIC segment's condition is exact now; stored members may lag.
                    Some(s) if s.segment_type == SegmentType::Dynamic => s.condition,
                    Some(s) => Some(member_of(&s.id)),
                }
            }
        })
    }

    /// Checks the audience fields together, after defaults are applied.
    async fn check_audience(&self, campaign: &Campaign) -> Result<()> {
        match campaign.audience_type {
            AudienceType::Segment => {
                let Some(id) = &campaign.segment_id else {
                    return Err(Error::BadRequest(
                        "audienceType SEGMENT needs a segmentId; create a segment first or use ALL or FILTERED".into(),
                    ));
                };
                if self
                    .store
                    .segment(&campaign.workspace_id, id)
                    .await?
                    .is_none()
                {
                    return Err(Error::NotFound(Resource::Segment));
                }
            }
            AudienceType::Filtered if campaign.audience_condition.is_none() => {
                return Err(Error::BadRequest(
                    "audienceType FILTERED needs an audienceCondition (a segment condition object)"
                        .into(),
                ));
            }
            _ => {}
        }
        if let Some(cond) = &campaign.audience_condition {
            // The segments it names must exist and keep stored members (STATIC or tracked),
            // as for a segment's own condition: otherwise they match nobody.
            self.check_references(&campaign.workspace_id, cond, None, "audienceCondition")
                .await?;
        }
        Ok(())
    }

    /// The campaign with counters and segment.
    pub async fn campaign_view(&self, campaign: Campaign) -> Result<CampaignView> {
        let counts = self
            .store
            .campaign_email_counts(&campaign.workspace_id, &campaign.id)
            .await?;
        let query = EmailStatsQuery {
            campaign_id: Some(campaign.id.clone()),
            sent_since: None,
        };
        let outcomes = self
            .store
            .email_stats(&campaign.workspace_id, &query)
            .await?;
        let segment = match &campaign.segment_id {
            Some(id) => self.store.segment(&campaign.workspace_id, id).await?,
            None => None,
        };
        Ok(CampaignView {
            campaign,
            counts,
            outcomes,
            segment,
        })
    }

    async fn campaign_record(&self, caller: &Caller, id: &CampaignId) -> Result<Campaign> {
        self.store
            .campaign(caller.workspace_id(), id)
            .await?
            .ok_or(Error::NotFound(Resource::Campaign))
    }

    /// `POST /campaigns`.
    pub async fn create_campaign(
        &self,
        caller: &Caller,
        cmd: CreateCampaign,
    ) -> Result<CampaignView> {
        message_text_problems(
            Some(&cmd.name),
            cmd.description.as_deref(),
            Some(&cmd.subject),
            Some(&cmd.body),
            None,
            cmd.from_name.as_deref(),
        )?;
        let from = cmd.from.clone();
        self.check_sender(caller, &from).await?;
        let now = self.clock.now();
        let mut campaign = Campaign {
            id: CampaignId::generate(&*self.clock),
            workspace_id: caller.workspace_id().clone(),
            name: cmd.name,
            description: cmd.description,
            subject: cmd.subject,
            body: cmd.body,
            from: from.to_string(),
            from_name: cmd.from_name,
            reply_to: cmd.reply_to.map(|e| e.to_string()),
            audience_type: cmd.audience_type,
            segment_id: cmd.segment_id,
            audience_condition: cmd.audience_condition,
            status: CampaignStatus::Draft,
            scheduled_for: None,
            sent_at: None,
            total_recipients: 0,
            audience_until_id: None,
            expanded_through_id: None,
            expansion_done: false,
            created_at: now,
            updated_at: now,
            version: 0,
        };
        drop_unused_audience(&mut campaign);
        self.check_audience(&campaign).await?;
        let mut changes = ChangeSet::new();
        changes.push(Write::InsertCampaign(campaign.clone()));
        self.store.commit(changes).await?;
        self.campaign_view(campaign).await
    }

    /// `GET /campaigns/{id}`.
    pub async fn campaign(&self, caller: &Caller, id: &CampaignId) -> Result<CampaignView> {
        let campaign = self.campaign_record(caller, id).await?;
        self.campaign_view(campaign).await
    }

    /// `GET /campaigns`: page style, `status` filter.
    pub async fn list_campaigns(
        &self,
        caller: &Caller,
        query: ListCampaigns,
    ) -> Result<Page<CampaignView>> {
        check_page(&query.page)?;
        let PageRequest {
            page,
            page_size: size,
        } = query.page;
        let status = query.status;
        let (campaigns, total) = self
            .store
            .campaigns(
                caller.workspace_id(),
                status,
                ((page - 1) * size) as usize,
                size as usize,
            )
            .await?;
        let mut data = Vec::with_capacity(campaigns.len());
        for campaign in campaigns {
            data.push(self.campaign_view(campaign).await?);
        }
        Ok(Page::new(data, page, size, total))
    }

    /// `PUT /campaigns/{id}`: only in DRAFT or SCHEDULED.
    pub async fn update_campaign(
        &self,
        caller: &Caller,
        id: &CampaignId,
        patch: CampaignPatch,
    ) -> Result<CampaignView> {
        message_text_problems(
            patch.name.as_deref(),
            patch.description.as_set().map(String::as_str),
            patch.subject.as_deref(),
            patch.body.as_deref(),
            None,
            patch.from_name.as_set().map(String::as_str),
        )?;
        let mut campaign = self.campaign_record(caller, id).await?;
        if !matches!(
            campaign.status,
            CampaignStatus::Draft | CampaignStatus::Scheduled
        ) {
            return Err(Error::InvalidState(format!(
                "a {} campaign cannot be edited; only DRAFT and SCHEDULED campaigns can",
                campaign.status.as_str()
            )));
        }
        match &patch.from {
            Some(from) => {
                self.check_sender(caller, from).await?;
                campaign.from = from.to_string();
            }
            // A key limited to some domains edits only the campaigns it could send.
            None => self.check_sender_scope(caller, &campaign)?,
        }
        let CampaignPatch {
            name,
            description,
            subject,
            body,
            from_name,
            reply_to,
            audience_type,
            segment_id,
            audience_condition,
            ..
        } = patch;
        for (value, slot) in [
            (name, &mut campaign.name),
            (subject, &mut campaign.subject),
            (body, &mut campaign.body),
        ] {
            if let Some(v) = value {
                *slot = v;
            }
        }
        if let Some(v) = audience_type {
            campaign.audience_type = v;
        }
        description.apply_to(&mut campaign.description);
        from_name.apply_to(&mut campaign.from_name);
        reply_to
            .map(|e| e.to_string())
            .apply_to(&mut campaign.reply_to);
        segment_id.apply_to(&mut campaign.segment_id);
        audience_condition.apply_to(&mut campaign.audience_condition);
        drop_unused_audience(&mut campaign);
        self.check_audience(&campaign).await?;
        campaign.updated_at = self.clock.now();
        let mut changes = ChangeSet::new();
        changes.push(Write::UpdateCampaign(campaign.clone()));
        self.commit_campaign(changes).await?;
        campaign.version += 1;
        self.campaign_view(campaign).await
    }

    /// Commits a change to a campaign read earlier; a conflict means it changed meanwhile.
    async fn commit_campaign(&self, changes: ChangeSet) -> Result<()> {
        match self.store.commit(changes).await {
            Ok(()) => Ok(()),
            Err(StoreError::Conflict(_)) => Err(Error::Conflict(
                "the campaign changed while this request ran; read it again and retry".into(),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// `DELETE /campaigns/{id}`: only in DRAFT.
    pub async fn delete_campaign(&self, caller: &Caller, id: &CampaignId) -> Result<()> {
        let campaign = self.campaign_record(caller, id).await?;
        if campaign.status != CampaignStatus::Draft {
            return Err(Error::InvalidState(format!(
                "a {} campaign cannot be deleted; only DRAFT campaigns can (cancel it instead)",
                campaign.status.as_str()
            )));
        }
        let mut changes = ChangeSet::new();
        changes.push(Write::DeleteCampaign {
            workspace_id: campaign.workspace_id,
            id: campaign.id,
        });
        self.store.commit(changes).await?;
        Ok(())
    }

    /// Refuses a caller whose key may not send from the campaign's sender domain.
    fn check_sender_scope(&self, caller: &Caller, campaign: &Campaign) -> Result<()> {
        let from = campaign_sender(campaign)?;
        if caller.key.may_send_from(from.domain()) {
            return Ok(());
        }
        Err(Error::Forbidden(format!(
            "This API key may not change a campaign sent from {}; its key set is limited to: {}",
            from.domain(),
            caller.key.key_set.domains.join(", ")
        )))
    }

    /// `POST /campaigns/{id}/send {scheduledFor?}`: now, or at a future time.
    pub async fn send_campaign(
        &self,
        caller: &Caller,
        id: &CampaignId,
        cmd: SendCampaign,
    ) -> Result<(CampaignView, String)> {
        let now = self.clock.now();
        let scheduled_for = cmd.scheduled_for;
        if scheduled_for.is_some_and(|at| at <= now) {
            return Err(Error::field(
                "scheduledFor",
                "in_the_past",
                "scheduledFor is in the past; omit it (or send null) to send now",
            ));
        }
        let mut campaign = self.campaign_record(caller, id).await?;
        if !matches!(
            campaign.status,
            CampaignStatus::Draft | CampaignStatus::Scheduled
        ) {
            return Err(Error::InvalidState(format!(
                "a {} campaign cannot be sent; only DRAFT and SCHEDULED campaigns can",
                campaign.status.as_str()
            )));
        }
        // Checked again: the domain may have been deleted or have lost its verification
        // since the campaign was written, and the caller's key may be limited to others.
        self.check_sender(caller, &campaign_sender(&campaign)?)
            .await?;
        let Some(audience) = self.audience_condition(&campaign).await? else {
            return Err(Error::BadRequest(
                "the campaign's segment no longer exists; choose another audience".into(),
            ));
        };
        if let Some(cond) = &campaign.audience_condition {
            // A segment it names may have been deleted since the campaign was written.
            self.check_references(&campaign.workspace_id, cond, None, "audienceCondition")
                .await?;
        }
        if self
            .store
            .count_matching(&campaign.workspace_id, &audience, true, now)
            .await?
            == 0
        {
            return Err(Error::BadRequest(
                "the campaign has no recipients: its audience has no subscribed, active contacts"
                    .into(),
            ));
        }
        let mut changes = ChangeSet::new();
        let message = match scheduled_for {
            Some(at) => {
                campaign.status = CampaignStatus::Scheduled;
                campaign.scheduled_for = Some(at);
                changes.push(Write::EnqueueJob(NewJob::at(
                    &*self.clock,
                    start_job(&campaign),
                    at,
                )));
                format!(
                    "Campaign scheduled for {}",
                    crate::model::timestamp::format(&at)
                )
            }
            None => {
                start_sending(&mut campaign, &*self.clock, now);
                self.freeze_audience(&mut campaign).await?;
                changes.push(Write::EnqueueJob(NewJob::at(
                    &*self.clock,
                    expand_job(&campaign),
                    now,
                )));
                "Campaign is sending".to_string()
            }
        };
        campaign.updated_at = now;
        changes.push(Write::UpdateCampaign(campaign.clone()));
        self.commit_campaign(changes).await?;
        campaign.version += 1;
        Ok((self.campaign_view(campaign).await?, message))
    }

    /// `POST /campaigns/{id}/cancel`: SCHEDULED or SENDING → CANCELLED.
    pub async fn cancel_campaign(
        &self,
        caller: &Caller,
        id: &CampaignId,
    ) -> Result<(CampaignView, String)> {
        // The expansion commits a batch after batch, each moving the campaign's version:
        // a cancel that loses to one reads again and cancels then, rather than answering
        // 409 while the campaign is sending, when a stop matters most.
        let campaign = self
            .on_conflict_retry(|| async {
                let mut campaign = self.campaign_record(caller, id).await?;
                if !matches!(
                    campaign.status,
                    CampaignStatus::Scheduled | CampaignStatus::Sending
                ) {
                    return Err(StepError::Domain(Error::InvalidState(format!(
                        "a {} campaign cannot be cancelled; only SCHEDULED and SENDING campaigns can",
                        campaign.status.as_str()
                    ))));
                }
                campaign.status = CampaignStatus::Cancelled;
                campaign.updated_at = self.clock.now();
                let mut changes = ChangeSet::new();
                changes.push(Write::UpdateCampaign(campaign.clone()));
                self.store.commit(changes).await?;
                campaign.version += 1;
                Ok(campaign)
            })
            .await?;
        // Its queued emails are cancelled as they come due, before the throttle: the
        // windows they were paced into are free for the workspace's other campaigns.
        self.settings
            .send_pacer
            .forget(&campaign.workspace_id, SendClass::Bulk);
        Ok((
            self.campaign_view(campaign).await?,
            "Campaign cancelled".to_string(),
        ))
    }
}

impl Engine {
    /// Fixes a SEGMENT campaign's audience as it starts sending: a DYNAMIC segment's
    /// condition is copied into the campaign's `audience_condition`, so that editing the
    /// segment meanwhile does not change who the rest of the campaign reaches. (A STATIC
    /// segment's members are read as they are when each batch is expanded.)
    pub(crate) async fn freeze_audience(&self, campaign: &mut Campaign) -> Result<(), StoreError> {
        if campaign.audience_type != AudienceType::Segment {
            return Ok(());
        }
        let Some(id) = &campaign.segment_id else {
            return Ok(());
        };
        if let Some(segment) = self.store.segment(&campaign.workspace_id, id).await? {
            if segment.segment_type == SegmentType::Dynamic {
                campaign.audience_condition = segment.condition;
            }
        }
        Ok(())
    }
}

/// Forgets the audience field its type does not use (`segmentId` but for SEGMENT,
/// `audienceCondition` but for FILTERED): kept, it was shown, checked at send and held its
/// segment against deletion, though it chose nobody.
fn drop_unused_audience(campaign: &mut Campaign) {
    if campaign.audience_type != AudienceType::Segment {
        campaign.segment_id = None;
    }
    if campaign.audience_type != AudienceType::Filtered {
        campaign.audience_condition = None;
    }
}

/// Moves a campaign to SENDING and fixes its audience to the contacts existing now.
pub fn start_sending(campaign: &mut Campaign, clock: &dyn Clock, now: DateTime<Utc>) {
    campaign.status = CampaignStatus::Sending;
    campaign.sent_at = Some(now);
    // Ids are time-ordered: every contact created before this instant has a smaller id.
    campaign.audience_until_id = Some(ContactId::generate(clock));
    campaign.expanded_through_id = None;
    campaign.expansion_done = false;
}

/// The job that starts a scheduled campaign.
pub fn start_job(c: &Campaign) -> JobPayload {
    JobPayload::StartCampaign {
        workspace_id: c.workspace_id.clone(),
        campaign_id: c.id.clone(),
    }
}

/// The job that expands the next batch of a campaign.
pub fn expand_job(c: &Campaign) -> JobPayload {
    JobPayload::ExpandCampaign {
        workspace_id: c.workspace_id.clone(),
        campaign_id: c.id.clone(),
    }
}

/// The job that marks a campaign SENT when done.
pub fn finish_job(c: &Campaign) -> JobPayload {
    JobPayload::FinishCampaign {
        workspace_id: c.workspace_id.clone(),
        campaign_id: c.id.clone(),
    }
}

/// The campaign's sender as an address (stored as text, checked when written).
fn campaign_sender(campaign: &Campaign) -> Result<EmailAddress> {
    EmailAddress::parse(&campaign.from)
        .map_err(|e| Error::Internal(format!("campaign {} has a bad sender: {e}", campaign.id)))
}
