//! Campaigns: create, read, list, update, delete, send (now or scheduled), cancel, stats.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::segments::{page_params, Page};
use super::Caller;
use crate::error::{Error, Resource, Result};
use crate::model::{
    new_id, AudienceType, Campaign, CampaignStatus, EmailAddress, EmailCounts, Segment, SegmentType,
};
use crate::ports::{ChangeSet, JobPayload, NewJob, StoreError, Write};
use crate::render::validate as validate_syntax;
use crate::segment::{parse_condition, Condition, Field, Filter, Group, Logic, Operator};
use crate::validate::Checker;
use crate::Engine;

/// A campaign with its counters and embedded segment, as the API shows it.
#[derive(Debug, Clone)]
pub struct CampaignView {
    /// The campaign.
    pub campaign: Campaign,
    /// Its emails by status.
    pub counts: EmailCounts,
    /// The audience segment, when SEGMENT.
    pub segment: Option<Segment>,
}

/// Fields read from a create or update body.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    description: Option<Option<String>>,
    subject: Option<String>,
    body: Option<String>,
    from: Option<EmailAddress>,
    from_name: Option<Option<String>>,
    reply_to: Option<Option<String>>,
    audience_type: Option<AudienceType>,
    segment_id: Option<Option<String>>,
    audience_condition: Option<Option<Condition>>,
}

fn read_fields(body: &Value, creating: bool) -> Result<Fields> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let mut f = Fields {
        name: c.line(obj, "name", "", creating, 255).map(str::to_string),
        description: c.nullable_line(obj, "description", 2000),
        subject: c
            .line(obj, "subject", "", creating, 998)
            .map(str::to_string),
        body: c.string(obj, "body", "", creating).map(str::to_string),
        from: c.email(obj, "from", "", creating),
        from_name: c.nullable_line(obj, "fromName", 256),
        ..Fields::default()
    };
    f.reply_to = match obj.get("replyTo") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(_) => c
            .email(obj, "replyTo", "", false)
            .map(|e| Some(e.to_string())),
    };
    f.audience_type = c.string(obj, "audienceType", "", creating).and_then(|raw| {
        let parsed = AudienceType::parse(raw);
        if parsed.is_none() {
            c.fail(
                "audienceType",
                "invalid_enum",
                "audienceType must be ALL, SEGMENT or FILTERED",
            );
        }
        parsed
    });
    f.segment_id = match obj.get("segmentId") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(_) => c
            .string(obj, "segmentId", "", false)
            .map(|s| Some(s.trim().to_string())),
    };
    f.audience_condition = match obj.get("audienceCondition") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(value) => match parse_condition(value, "audienceCondition") {
            Ok(cond) => Some(Some(cond)),
            Err(errors) => {
                for e in errors {
                    c.fail(e.field, &e.code, e.message);
                }
                None
            }
        },
    };
    for (key, source) in [("subject", &f.subject), ("body", &f.body)] {
        if let Some(Err(e)) = source.as_deref().map(validate_syntax) {
            c.fail(key, "invalid_template", e.to_string());
        }
    }
    c.finish()?;
    Ok(f)
}

/// One filter as a condition: `segment.<id> memberOfSegment`.
fn member_of(segment_id: &str) -> Condition {
    Condition {
        logic: Logic::And,
        groups: vec![Group {
            filters: vec![Filter {
                field: Field::Segment(segment_id.to_string()),
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
    /// query). `None` when its segment is gone.
    pub async fn audience_condition(
        &self,
        campaign: &Campaign,
    ) -> Result<Option<Condition>, StoreError> {
        Ok(match campaign.audience_type {
            AudienceType::All => Some(Condition::default()),
            AudienceType::Filtered => Some(campaign.audience_condition.clone().unwrap_or_default()),
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
        let segment = match &campaign.segment_id {
            Some(id) => self.store.segment(&campaign.workspace_id, id).await?,
            None => None,
        };
        Ok(CampaignView {
            campaign,
            counts,
            segment,
        })
    }

    async fn campaign_record(&self, caller: &Caller, id: &str) -> Result<Campaign> {
        self.store
            .campaign(caller.workspace_id(), id)
            .await?
            .ok_or(Error::NotFound(Resource::Campaign))
    }

    /// `POST /campaigns`.
    pub async fn create_campaign(&self, caller: &Caller, body: &Value) -> Result<CampaignView> {
        let f = read_fields(body, true)?;
        let from = f
            .from
            .ok_or_else(|| Error::Internal("from checked above".into()))?;
        self.check_sender(caller, &from).await?;
        let now = self.clock.now();
        let campaign = Campaign {
            id: new_id(),
            workspace_id: caller.workspace_id().to_string(),
            name: f.name.unwrap_or_default(),
            description: f.description.flatten(),
            subject: f.subject.unwrap_or_default(),
            body: f.body.unwrap_or_default(),
            from: from.to_string(),
            from_name: f.from_name.flatten(),
            reply_to: f.reply_to.flatten(),
            audience_type: f.audience_type.unwrap_or(AudienceType::All),
            segment_id: f.segment_id.flatten(),
            audience_condition: f.audience_condition.flatten(),
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
        self.check_audience(&campaign).await?;
        let mut changes = ChangeSet::new();
        changes.push(Write::InsertCampaign(campaign.clone()));
        self.store.commit(changes).await?;
        self.campaign_view(campaign).await
    }

    /// `GET /campaigns/{id}`.
    pub async fn campaign(&self, caller: &Caller, id: &str) -> Result<CampaignView> {
        let campaign = self.campaign_record(caller, id).await?;
        self.campaign_view(campaign).await
    }

    /// `GET /campaigns`: page style, `status` filter.
    pub async fn list_campaigns(
        &self,
        caller: &Caller,
        query: &HashMap<String, String>,
    ) -> Result<Page<CampaignView>> {
        let mut c = Checker::new();
        let (page, size) = page_params(&mut c, query);
        let status = c.query_enum(
            query,
            "status",
            CampaignStatus::parse,
            "status must be DRAFT, SCHEDULED, SENDING, SENT or CANCELLED",
        );
        c.finish()?;
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
        id: &str,
        body: &Value,
    ) -> Result<CampaignView> {
        let f = read_fields(body, false)?;
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
        if let Some(from) = f.from {
            self.check_sender(caller, &from).await?;
            campaign.from = from.to_string();
        }
        macro_rules! set {
            ($field:ident) => {
                if let Some(v) = f.$field {
                    campaign.$field = v;
                }
            };
        }
        set!(name);
        set!(description);
        set!(subject);
        set!(body);
        set!(from_name);
        set!(reply_to);
        set!(audience_type);
        set!(segment_id);
        set!(audience_condition);
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
    pub async fn delete_campaign(&self, caller: &Caller, id: &str) -> Result<()> {
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

    /// `POST /campaigns/{id}/send {scheduledFor?}`: now, or at a future time.
    pub async fn send_campaign(
        &self,
        caller: &Caller,
        id: &str,
        body: &Value,
    ) -> Result<(CampaignView, String)> {
        let obj = Checker::body(body)?;
        let now = self.clock.now();
        let scheduled_for = read_schedule(obj, now)?;
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
                changes.push(Write::EnqueueJob(NewJob::at(start_job(&campaign), at)));
                format!(
                    "Campaign scheduled for {}",
                    crate::model::timestamp::format(&at)
                )
            }
            None => {
                start_sending(&mut campaign, now);
                changes.push(Write::EnqueueJob(NewJob::at(expand_job(&campaign), now)));
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
        id: &str,
    ) -> Result<(CampaignView, String)> {
        let mut campaign = self.campaign_record(caller, id).await?;
        if !matches!(
            campaign.status,
            CampaignStatus::Scheduled | CampaignStatus::Sending
        ) {
            return Err(Error::InvalidState(format!(
                "a {} campaign cannot be cancelled; only SCHEDULED and SENDING campaigns can",
                campaign.status.as_str()
            )));
        }
        campaign.status = CampaignStatus::Cancelled;
        campaign.updated_at = self.clock.now();
        let mut changes = ChangeSet::new();
        changes.push(Write::UpdateCampaign(campaign.clone()));
        self.commit_campaign(changes).await?;
        campaign.version += 1;
        Ok((
            self.campaign_view(campaign).await?,
            "Campaign cancelled".to_string(),
        ))
    }
}

/// Moves a campaign to SENDING and fixes its audience to the contacts existing now.
pub fn start_sending(campaign: &mut Campaign, now: DateTime<Utc>) {
    campaign.status = CampaignStatus::Sending;
    campaign.sent_at = Some(now);
    // Ids are time-ordered: every contact created before this instant has a smaller id.
    campaign.audience_until_id = Some(new_id());
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

fn read_schedule(obj: &Map<String, Value>, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>> {
    match obj.get("scheduledFor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(raw)) => {
            let at = DateTime::parse_from_rfc3339(raw.trim())
                .map(|t| t.with_timezone(&Utc))
                .map_err(|_| {
                    Error::field(
                        "scheduledFor",
                        "invalid_date",
                        "scheduledFor must be an ISO 8601 date-time",
                    )
                })?;
            if at <= now {
                return Err(Error::field(
                    "scheduledFor",
                    "in_the_past",
                    "scheduledFor is in the past; omit it (or send null) to send now",
                ));
            }
            Ok(Some(at))
        }
        Some(_) => Err(Error::field(
            "scheduledFor",
            "invalid_type",
            "scheduledFor must be a date-time string or null",
        )),
    }
}
