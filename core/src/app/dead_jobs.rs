//! The operator's view of dead-lettered jobs: list them, and revive one.

use crate::error::{Error, Resource, Result};
use crate::model::{EmailStatus, JobId};
use crate::ports::{DeadJob, JobPayload};
use crate::Engine;

impl Engine {
    /// `GET /admin/jobs/dead`: dead-lettered jobs, oldest first by id, at most `limit`.
    pub async fn dead_jobs(&self, limit: usize) -> Result<Vec<DeadJob>> {
        Ok(self.jobs.dead(limit).await?)
    }

    /// `POST /admin/jobs/{id}/revive`: queues the dead job `id` again, due now, with no
    /// attempts counted. A revived `DeliverEmail` job first has its FAILED email put back
    /// to QUEUED (error cleared), since delivery skips emails that are not QUEUED; the
    /// email is requeued before the job, so no worker can see the job with the email still
    /// FAILED. `NotFound(Job)` when no dead job has that id.
    pub async fn revive_job(&self, id: &JobId) -> Result<()> {
        let job = self
            .jobs
            .dead_job(id)
            .await?
            .ok_or(Error::NotFound(Resource::Job))?;
        if let JobPayload::DeliverEmail {
            workspace_id,
            email_id,
        } = &job.payload
        {
            self.move_email(
                workspace_id,
                email_id,
                EmailStatus::Failed,
                EmailStatus::Queued,
                None,
            )
            .await?;
        }
        if !self.jobs.revive(id, self.clock.now()).await? {
            // Revived (or gone) in the meantime: there is no dead job with this id any more.
            return Err(Error::NotFound(Resource::Job));
        }
        tracing::info!(job_id = %id, payload = ?job.payload, "dead job revived");
        Ok(())
    }
}
