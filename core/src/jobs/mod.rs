//! Job handlers: the work a worker does for each claimed job.

mod campaign;
mod deliver;

pub use campaign::{campaign_email, CampaignMessage, BATCHES_PER_JOB, EXPANSION_BATCH};
pub use deliver::{email_event_data, send_quota};

use crate::ports::{ClaimedJob, JobPayload};
use crate::Engine;

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
    pub async fn run_job(&self, job: &ClaimedJob) -> crate::Result<JobOutcome> {
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
        }
    }

    /// Claims and runs every job due now, one batch after another, until none is due.
    /// For tests and the embedded mode's `drain`; workers use `claim` + `run_job` directly.
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
            for job in &claimed {
                self.run_job(job).await?;
                ran += 1;
            }
        }
    }
}
