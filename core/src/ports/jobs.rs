//! The `Jobs` port: durable work items claimed with a lease.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::time::Duration;

use super::{Clock, PortError};
use crate::model::{
    CampaignId, ContactId, EmailId, EventId, ExecutionId, JobId, SegmentId, StepId, WorkflowId,
    WorkspaceId,
};

/// What a job does. Every handler is idempotent: it is keyed by the record it acts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobPayload {
    /// Render and hand one email record to the transport.
    DeliverEmail {
        /// Workspace of the email.
        workspace_id: WorkspaceId,
        /// The email record.
        email_id: EmailId,
    },
    /// Re-evaluate one contact against the workspace's tracked segments and emit
    /// `segment.<slug>.entry|exit` for each transition.
    ReevaluateContact {
        /// Workspace of the contact.
        workspace_id: WorkspaceId,
        /// The contact.
        contact_id: ContactId,
    },
    /// Bring a DYNAMIC segment's stored members in line with its condition (all members
    /// removed when it is no longer tracked); `announce` emits entry and exit events.
    SyncSegment {
        /// Workspace of the segment.
        workspace_id: WorkspaceId,
        /// The segment.
        segment_id: SegmentId,
        /// Whether transitions are announced as events.
        announce: bool,
    },
    /// Move a campaign from SCHEDULED (or just-sent DRAFT) to SENDING and start expanding it.
    StartCampaign {
        /// Workspace of the campaign.
        workspace_id: WorkspaceId,
        /// The campaign.
        campaign_id: CampaignId,
    },
    /// Turn the next batch of a SENDING campaign's audience into emails.
    ExpandCampaign {
        /// Workspace of the campaign.
        workspace_id: WorkspaceId,
        /// The campaign.
        campaign_id: CampaignId,
    },
    /// Mark a campaign SENT once every email has an outcome.
    FinishCampaign {
        /// Workspace of the campaign.
        workspace_id: WorkspaceId,
        /// The campaign.
        campaign_id: CampaignId,
    },
    /// Re-check every domain's DNS records and enqueue the next re-check an hour on.
    RecheckDomains,
    /// Start the workflows a stored event triggers and resume the executions of its contact
    /// that wait for it.
    DispatchWorkflowEvent {
        /// Workspace of the event.
        workspace_id: WorkspaceId,
        /// The stored event.
        event_id: EventId,
    },
    /// Run (or go on with: a delay's end, a wait's timeout, a webhook's next attempt) one
    /// step of one execution; idempotent by the step's record of that execution.
    RunWorkflowStep {
        /// Workspace of the execution.
        workspace_id: WorkspaceId,
        /// The execution.
        execution_id: ExecutionId,
        /// The step.
        step_id: StepId,
    },
    /// One tick of a SCHEDULE workflow: enrol a batch of its segment's members.
    WorkflowScheduleTick {
        /// Workspace of the workflow.
        workspace_id: WorkspaceId,
        /// The workflow.
        workflow_id: WorkflowId,
        /// The fire time this tick stands for.
        fire_at: DateTime<Utc>,
        /// The workflow's `updated_at` when the tick was planned: a tick of an older
        /// version (disabled, schedule changed) stops.
        generation: DateTime<Utc>,
        /// Members after this contact id are next (a tick's continuation batch).
        after_contact_id: Option<ContactId>,
    },
    /// Judge a received message (SPF, DKIM, DMARC, spam, virus) and emit its
    /// `email.received` events; idempotent by the record's processed mark.
    ProcessInboundEmail {
        /// The receiving workspace.
        workspace_id: WorkspaceId,
        /// The inbound email record.
        email_id: EmailId,
    },
    /// Drop the raw bytes of received messages older than the retention period.
    PurgeInboundRaw,
}

/// A job to enqueue (through `Write::EnqueueJob`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewJob {
    /// Job id.
    pub id: JobId,
    /// What to do.
    pub payload: JobPayload,
    /// Not claimable before this time.
    pub run_at: DateTime<Utc>,
}

impl NewJob {
    /// A job due at `run_at`, its id taken from `clock`.
    pub fn at(clock: &dyn Clock, payload: JobPayload, run_at: DateTime<Utc>) -> Self {
        Self {
            id: JobId::generate(clock),
            payload,
            run_at,
        }
    }
}

/// A job claimed by a worker, valid while its lease lasts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedJob {
    /// Job id.
    pub id: JobId,
    /// What to do.
    pub payload: JobPayload,
    /// Failed attempts so far (0 on the first run).
    pub attempts: u32,
    /// Times the job was claimed since it was enqueued or last put back with `retry`, this
    /// claim included: above 1, earlier leases ran out unsettled (their worker died, or the
    /// job outran its lease).
    pub claims: u32,
    /// Proves this claim; completing with a stale token fails.
    pub lease_token: String,
}

/// A dead-lettered job, as listed for an operator (`Jobs::dead`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadJob {
    /// Job id.
    pub id: JobId,
    /// What it was to do.
    pub payload: JobPayload,
    /// Failed attempts counted before it was parked.
    pub attempts: u32,
    /// The error it was parked with (the last one recorded), if any.
    pub last_error: Option<String>,
}

/// Counts of jobs by state, for health and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobStats {
    /// Waiting to run (due or not).
    pub queued: u64,
    /// Claimed with a live lease.
    pub running: u64,
    /// Given up after too many attempts.
    pub dead: u64,
}

/// A durable queue.
///
/// Contract: a job enqueued by a committed change set is claimed at least once after its
/// `run_at`. A claim holds a lease until `now + lease`, which `extend` renews while the job
/// runs; when it expires without `complete`, `retry` or `dead_letter`, the job is claimable
/// again (the worker crashed). Each claim counts in `ClaimedJob::claims`; `retry` starts
/// the count again. Operations with a stale lease token return `Ok(false)` and change
/// nothing.
///
/// A dead-lettered job stays parked until an operator looks at it: `dead` lists dead jobs
/// (and no job in another state), `revive` puts one back in the queue as if newly enqueued
/// at `at` (no attempts, no claims), waking workers as a commit that enqueues does.
#[async_trait]
pub trait Jobs: Send + Sync {
    /// Claims up to `max` due jobs, oldest `run_at` first.
    async fn claim(
        &self,
        now: DateTime<Utc>,
        lease: Duration,
        max: usize,
    ) -> Result<Vec<ClaimedJob>, PortError>;
    /// Renews the lease of a running job to `now + lease` (a heartbeat, so a job that runs
    /// longer than one lease is not claimed again while it runs); the token stays the same.
    /// `Ok(false)` and no change when the claim is no longer current: the job was settled
    /// (completed, retried, dead-lettered) or claimed again by someone else after its lease
    /// ran out. A lease that ran out but was not claimed again may or may not be renewable,
    /// as it may or may not still be completable.
    async fn extend(
        &self,
        job: &ClaimedJob,
        now: DateTime<Utc>,
        lease: Duration,
    ) -> Result<bool, PortError>;
    /// Removes a finished job.
    async fn complete(&self, job: &ClaimedJob) -> Result<bool, PortError>;
    /// Releases the job to run again at `at`; counts a failed attempt when `failed`; resets
    /// the job's claim count.
    async fn retry(
        &self,
        job: &ClaimedJob,
        at: DateTime<Utc>,
        failed: bool,
        error: &str,
    ) -> Result<bool, PortError>;
    /// Parks a job that will not succeed; it stays visible in `stats` as dead.
    async fn dead_letter(&self, job: &ClaimedJob, error: &str) -> Result<bool, PortError>;
    /// Waits until new work may be due or `timeout` passes, whichever is first.
    async fn wait_for_work(&self, timeout: Duration);
    /// Counts jobs by state at `now`.
    async fn stats(&self, now: DateTime<Utc>) -> Result<JobStats, PortError>;
    /// Lists dead jobs, oldest first by id, at most `limit`. A dead job whose payload this
    /// version cannot read (written by a newer one, or corrupt) is left out.
    async fn dead(&self, limit: usize) -> Result<Vec<DeadJob>, PortError>;
    /// The dead job `id`, or `None` when no dead job has that id (or its payload cannot be
    /// read, as in `dead`).
    async fn dead_job(&self, id: &JobId) -> Result<Option<DeadJob>, PortError>;
    /// Makes the dead job `id` queued again, claimable from `at`, with its attempts and
    /// claims back to 0 (its `last_error` is kept until it runs again). `Ok(false)` and no
    /// change when no dead job has that id (unknown, queued or running).
    async fn revive(&self, id: &JobId, at: DateTime<Utc>) -> Result<bool, PortError>;
}
