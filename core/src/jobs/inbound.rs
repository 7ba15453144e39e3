//! Handlers of received mail: judge a message and emit its `email.received` events, and
//! drop raw messages past the retention period.

use std::time::Instant;

use chrono::{DateTime, Timelike, Utc};
use serde_json::{json, Value};

use super::JobOutcome;
use crate::app::contacts::{plan_upsert, ActiveRoom, Upsert};
use crate::app::inbound::{summarize, MessageSummary};
use crate::error::Result;
use crate::model::{
    timestamp, ContactId, EmailAddress, EmailId, Event, InboundEmail, Verdict, WorkspaceId,
};
use crate::ports::{
    AuthVerdicts, ChangeSet, ClaimedJob, InboundContext, JobPayload, NewJob, StoreError, Write,
};
use crate::Engine;

/// How many times a message's changes are planned against a conflicting write before the
/// job is put back to run again later.
const PLAN_ATTEMPTS: u32 = 3;

/// The verdicts of one message and how long they took.
struct Judgement {
    auth: AuthVerdicts,
    spam: Verdict,
    virus: Verdict,
    millis: u64,
}

impl Judgement {
    /// Whether the message is spam or carries a virus: its sender does not become a contact.
    fn refused(&self) -> bool {
        self.spam == Verdict::Fail || self.virus == Verdict::Fail
    }
}

impl Engine {
    /// Handles `ProcessInboundEmail`: once per record (the processed mark is written in the
    /// same commit as the events, and refuses a second writer), judges the message, makes
    /// the sender a contact (unsubscribed when new; not created for spam) and emits one
    /// `email.received` per recipient.
    pub(crate) async fn process_inbound_email(
        &self,
        job: &ClaimedJob,
        workspace_id: &WorkspaceId,
        email_id: &EmailId,
    ) -> Result<JobOutcome> {
        let record = self.store.inbound_email(workspace_id, email_id).await?;
        let ws = self.store.workspace(workspace_id).await?;
        let (Some(record), Some(ws)) = (record, ws) else {
            self.jobs.complete(job).await?;
            return Ok(JobOutcome::Done);
        };
        if record.processed_at.is_some() {
            self.jobs.complete(job).await?;
            return Ok(JobOutcome::Done);
        }
        let raw = record.raw.clone().unwrap_or_default();
        let started = Instant::now();
        let summary = summarize(&raw);
        let judgement = self.judge(&record, &raw, started).await;
        // A conflict is either another run that processed the record first (its events
        // stand) or a write this plan raced (the sender became a contact meanwhile): then
        // the plan is made again from what is stored now, so the events are not lost.
        let mut attempt = 1;
        loop {
            let changes = self
                .received_changes(&ws, &record, &summary, &judgement)
                .await?;
            match self.commit(changes).await {
                Ok(()) => break,
                Err(StoreError::Conflict(cause)) => {
                    let now_stored = self.store.inbound_email(workspace_id, email_id).await?;
                    if now_stored.is_none_or(|r| r.processed_at.is_some()) {
                        break;
                    }
                    if attempt >= PLAN_ATTEMPTS {
                        return Err(StoreError::Conflict(cause).into());
                    }
                    attempt += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.schedule_inbound_purge(record.received_at).await?;
        self.jobs.complete(job).await?;
        Ok(JobOutcome::Done)
    }

    /// The change set of a judged message: its sender as a contact, one `email.received`
    /// per recipient, and the record marked processed (the mark refuses a second writer).
    async fn received_changes(
        &self,
        ws: &crate::model::Workspace,
        record: &InboundEmail,
        summary: &MessageSummary,
        judgement: &Judgement,
    ) -> Result<ChangeSet> {
        let now = self.clock.now();
        let mut changes = ChangeSet::new();
        let contact_id = self
            .sender_contact(ws, record, summary, judgement.refused(), now, &mut changes)
            .await?;
        for to in &record.recipients {
            let data = received_data(record, summary, judgement, to);
            changes.push(Write::AppendEvent(Event::new(
                &*self.clock,
                &ws.id,
                "email.received",
                data,
                contact_id.clone(),
                Some(record.id.clone()),
                now,
            )));
        }
        changes.push(Write::MarkInboundProcessed {
            workspace_id: ws.id.clone(),
            id: record.id.clone(),
            at: now,
        });
        Ok(changes)
    }

    /// Runs the authenticator and both scanners at once, each only when the provider that
    /// received the message did not already give its verdicts.
    async fn judge(&self, record: &InboundEmail, raw: &[u8], started: Instant) -> Judgement {
        let ctx = InboundContext {
            raw,
            client_ip: record.client_ip,
            helo: record.helo.as_deref(),
            envelope_from: record.envelope_from.as_deref(),
            recipients: &record.recipients,
        };
        let given = record.provider_verdicts;
        let authenticate = async {
            match (given.spf, given.dkim, given.dmarc) {
                (Some(spf), Some(dkim), Some(dmarc)) => AuthVerdicts { spf, dkim, dmarc },
                _ => {
                    let own = self.inbound.authenticator.authenticate(&ctx).await;
                    AuthVerdicts {
                        spf: given.spf.unwrap_or(own.spf),
                        dkim: given.dkim.unwrap_or(own.dkim),
                        dmarc: given.dmarc.unwrap_or(own.dmarc),
                    }
                }
            }
        };
        let spam = async {
            match given.spam {
                Some(v) => v,
                None => self.inbound.spam.scan(&ctx).await,
            }
        };
        let virus = async {
            match given.virus {
                Some(v) => v,
                None => self.inbound.virus.scan(&ctx).await,
            }
        };
        let (auth, spam, virus) = futures::join!(authenticate, spam, virus);
        Judgement {
            auth,
            spam,
            virus,
            millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// The sender's contact: the From address (the envelope sender when there is none),
    /// created unsubscribed when new, unless the message is spam or infected (`refused`).
    async fn sender_contact(
        &self,
        ws: &crate::model::Workspace,
        record: &InboundEmail,
        summary: &MessageSummary,
        refused: bool,
        now: DateTime<Utc>,
        changes: &mut ChangeSet,
    ) -> Result<Option<ContactId>> {
        let candidate = summary
            .from_address
            .as_deref()
            .or(record.envelope_from.as_deref());
        let Some(email) = candidate.and_then(|a| EmailAddress::parse(a).ok()) else {
            return Ok(None);
        };
        if refused {
            return Ok(self
                .store
                .contact_by_email(&ws.id, email.as_str())
                .await?
                .map(|c| c.id));
        }
        let upsert = Upsert {
            email,
            subscribed: None,
            data: None,
            default_subscribed: false,
        };
        let mut room = ActiveRoom::default();
        let done = plan_upsert(self, ws, &upsert, &mut room, now, changes).await?;
        Ok(Some(done.contact.id))
    }

    /// Handles `PurgeInboundRaw`: drops raw messages received before the retention cut-off.
    pub(crate) async fn purge_inbound_raw(&self, job: &ClaimedJob) -> Result<JobOutcome> {
        let days = i64::from(self.settings.inbound.retention_days);
        let before = self.clock.now() - chrono::Duration::days(days);
        let mut changes = ChangeSet::new();
        changes.push(Write::PurgeInboundRaw { before });
        self.store.commit(changes).await?;
        self.jobs.complete(job).await?;
        Ok(JobOutcome::Done)
    }

    /// Enqueues the purge that drops a message received at `received_at`: one job per hour
    /// slot (its id names the slot), due just after the slot's messages expire.
    pub(crate) async fn schedule_inbound_purge(&self, received_at: DateTime<Utc>) -> Result<()> {
        let days = i64::from(self.settings.inbound.retention_days);
        let slot = received_at
            .with_nanosecond(0)
            .and_then(|t| t.with_second(0))
            .and_then(|t| t.with_minute(0))
            .unwrap_or(received_at);
        let run_at = slot + chrono::Duration::days(days) + chrono::Duration::hours(1);
        let job = NewJob {
            id: crate::model::JobId::from(format!("inbound-purge-{}", slot.format("%Y%m%d%H"))),
            payload: JobPayload::PurgeInboundRaw,
            run_at,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::EnqueueJob(job));
        match self.store.commit(changes).await {
            Ok(()) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// The `email.received` data for recipient `to` (interface.md "Event data"), plus the
/// record's `emailId` and `sourceType`.
fn received_data(
    record: &InboundEmail,
    summary: &MessageSummary,
    judgement: &Judgement,
    to: &str,
) -> Value {
    let from = record
        .envelope_from
        .clone()
        .or_else(|| summary.from_address.clone())
        .unwrap_or_default();
    json!({
        "messageId": summary.message_id.clone().unwrap_or_else(|| format!("{}@inbound.posthorn", record.id)),
        "from": from,
        "fromHeader": summary.from_header.clone().unwrap_or_default(),
        "to": to,
        "subject": summary.subject.clone().unwrap_or_default(),
        "timestamp": timestamp::format(&record.received_at),
        "recipients": record.recipients,
        "hasContent": summary.has_content,
        "body": summary.body.clone().unwrap_or_default(),
        "spamVerdict": judgement.spam,
        "virusVerdict": judgement.virus,
        "spfVerdict": judgement.auth.spf,
        "dkimVerdict": judgement.auth.dkim,
        "dmarcVerdict": judgement.auth.dmarc,
        "processingTimeMillis": judgement.millis,
        "emailId": record.id,
        "sourceType": "INBOUND",
    })
}
