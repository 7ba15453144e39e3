//! Job handlers: the work a worker does for each claimed job.

mod campaign;
mod deliver;
mod heartbeat;
mod inbound;
mod workflow;

pub use campaign::{CampaignMessage, BATCHES_PER_JOB, EXPANSION_BATCH};
pub use deliver::{email_event_data, send_quota};
pub use workflow::derived_id;

use crate::model::EmailStatus;
use crate::ports::{ClaimedJob, JobPayload};
use crate::Engine;

/// Failed attempts after which a job whose handler fails with an internal error is
/// dead-lettered. Above the most a delivery (8) or a webhook step (its retry schedule, at
/// most 20 retries) counts on its own, so this only ends jobs nothing else would end; with
/// the retry backoff (up to an hour) that is about a day of failing.
pub const MAX_FAILED_RUNS: u32 = 30;

/// What became of a job run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobOutcome {
    /// Finished (or nothing left to do); the job was completed.
    Done,
    /// Put back to run later (throttled or a transient failure).
    Retried,
    /// Given up; the job is dead-lettered.
    Dead,
}

impl Engine {
    /// Runs one claimed job and settles it with the queue (complete, retry or dead-letter).
    ///
    /// A job claimed more than `max_job_claims` times in a row without being settled is not
    /// run again: each of those runs ended with its worker (a crash, a kill, a lease run
    /// out), so it is dead-lettered instead of taking down one worker after another.
    ///
    /// While the handler runs, its lease is renewed every third of `Settings::job_lease`
    /// (`Jobs::extend`), so a job that outlasts one lease (a slow SMTP server or webhook)
    /// is not claimed again by another worker meanwhile; the lease then bounds how long a
    /// crashed worker's job waits, not how long a job may run. Callers of `run_job` get this
    /// without doing anything; it needs a tokio runtime with time enabled.
    ///
    /// A handler that fails (a store or limiter error) has its job put back with the retry
    /// backoff at once rather than left to its lease: the error is returned for the caller
    /// to log. It counts a failed attempt unless the store or the limiter was unreachable:
    /// an outage says nothing of the job, and counting it would spend a delivery's attempts
    /// before it ever reached the mail server. A job whose handler keeps failing with an
    /// internal error (a stored record that does not decode: retrying cannot help) is
    /// dead-lettered once it has [`MAX_FAILED_RUNS`] failed attempts, rather than retried
    /// for ever out of sight of `GET /health` and `/admin/jobs/dead`.
    pub async fn run_job(&self, job: &ClaimedJob) -> crate::Result<JobOutcome> {
        if job.claims > self.settings.max_job_claims {
            return self.give_up_unsettled(job).await;
        }
        let result = self.with_heartbeat(job, self.dispatch(job)).await;
        if let Err(error) = &result {
            let attempts = job.attempts.saturating_add(1);
            if matches!(error, crate::Error::Internal(_)) && attempts >= MAX_FAILED_RUNS {
                let reason = format!("given up after {attempts} failed attempts: {error}");
                if let Err(e) = self.give_up(job, reason).await {
                    tracing::warn!(job_id = %job.id, error = %e, "could not dead-letter a failing job; its lease will expire");
                }
                return result;
            }
            let at = self.clock.now() + self.retry_delay(attempts);
            let failed = !matches!(error, crate::Error::Unavailable(_));
            // A stale lease (the handler settled before failing) makes this a no-op.
            if let Err(retry_error) = self.jobs.retry(job, at, failed, &error.to_string()).await {
                tracing::warn!(job_id = %job.id, error = %retry_error, "could not put a failed job back; its lease will expire");
            }
        }
        result
    }

    /// Runs the handler of `job`'s kind.
    async fn dispatch(&self, job: &ClaimedJob) -> crate::Result<JobOutcome> {
        match &job.payload {
            JobPayload::DeliverEmail {
                workspace_id,
                email_id,
            } => self.deliver_email(job, workspace_id, email_id).await,
            JobPayload::ReevaluateContact {
                workspace_id,
                contact_id,
            } => {
                let settled = self.reevaluate_contact(workspace_id, contact_id).await?;
                self.settle_membership_job(job, settled).await
            }
            JobPayload::SyncSegment {
                workspace_id,
                segment_id,
                announce,
            } => {
                let settled = self
                    .sync_segment(workspace_id, segment_id, *announce)
                    .await?;
                self.settle_membership_job(job, settled).await
            }
            JobPayload::StartCampaign {
                workspace_id,
                campaign_id,
            } => self.start_campaign(job, workspace_id, campaign_id).await,
            JobPayload::ExpandCampaign {
                workspace_id,
                campaign_id,
            } => self.expand_campaign(job, workspace_id, campaign_id).await,
            JobPayload::FinishCampaign {
                workspace_id,
                campaign_id,
            } => self.finish_campaign(job, workspace_id, campaign_id).await,
            JobPayload::ProcessInboundEmail {
                workspace_id,
                email_id,
            } => {
                self.process_inbound_email(job, workspace_id, email_id)
                    .await
            }
            JobPayload::PurgeInboundRaw => self.purge_inbound_raw(job).await,
            JobPayload::RecheckDomains => {
                self.recheck_domains(job).await?;
                Ok(JobOutcome::Done)
            }
            JobPayload::DispatchWorkflowEvent {
                workspace_id,
                event_id,
            } => {
                self.dispatch_workflow_event(job, workspace_id, event_id)
                    .await
            }
            JobPayload::RunWorkflowStep {
                workspace_id,
                execution_id,
                step_id,
            } => {
                self.run_workflow_step(job, workspace_id, execution_id, step_id)
                    .await
            }
            JobPayload::WorkflowScheduleTick {
                workspace_id,
                workflow_id,
                fire_at,
                generation,
                after_contact_id,
            } => {
                self.workflow_schedule_tick(
                    job,
                    workspace_id,
                    workflow_id,
                    *fire_at,
                    *generation,
                    after_contact_id.as_ref(),
                )
                .await
            }
        }
    }

    /// Dead-letters a job whose runs keep ending without settling it; see [`Engine::give_up`].
    async fn give_up_unsettled(&self, job: &ClaimedJob) -> crate::Result<JobOutcome> {
        let reason = format!(
            "given up after {} claims in a row that ended without a result (worker crashed \
             or the job outran its lease)",
            job.claims - 1
        );
        self.give_up(job, reason).await
    }

    /// Dead-letters `job` for `reason`; a delivery's email becomes FAILED (when it can be
    /// read), so that its campaign can still finish.
    async fn give_up(&self, job: &ClaimedJob, reason: String) -> crate::Result<JobOutcome> {
        tracing::error!(job_id = %job.id, payload = ?job.payload, %reason, "job given up");
        if let JobPayload::DeliverEmail {
            workspace_id,
            email_id,
        } = &job.payload
        {
            let moved = self
                .move_email(
                    workspace_id,
                    email_id,
                    EmailStatus::Queued,
                    EmailStatus::Failed,
                    Some(reason.clone()),
                )
                .await;
            match moved {
                Ok(()) => {}
                // An email that does not decode cannot be moved; the job is parked anyway.
                Err(crate::Error::Internal(e)) => {
                    tracing::warn!(job_id = %job.id, error = %e, "the given-up delivery's email could not be marked FAILED");
                }
                Err(e) => return Err(e),
            }
        }
        self.jobs.dead_letter(job, &reason).await?;
        Ok(JobOutcome::Dead)
    }

    /// Claims and runs every job due now, one batch after another, until none is due.
    /// For tests and the embedded mode's `drain`; workers use `claim` + `run_job` directly.
    /// A failing job does not stop its batch (the rest would stay leased, their claims
    /// counted as if they had killed a worker): the batch is run out, then the first error
    /// is returned.
    pub async fn run_due_jobs(&self) -> crate::Result<usize> {
        let mut ran = 0;
        loop {
            let claimed = self
                .jobs
                .claim(self.clock.now(), self.settings.job_lease, 64)
                .await?;
            if claimed.is_empty() {
                return Ok(ran);
            }
            let mut first_error = None;
            for job in &claimed {
                if let Err(e) = self.run_job(job).await {
                    first_error.get_or_insert(e);
                }
                ran += 1;
            }
            if let Some(e) = first_error {
                return Err(e);
            }
        }
    }
}
