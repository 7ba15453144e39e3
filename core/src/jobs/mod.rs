//! Job handlers: the work a worker does for each claimed job.

mod deliver;

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
            // Filled in by the segment and campaign handlers.
            _ => Err(crate::Error::Internal("job kind not handled yet".into())),
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
