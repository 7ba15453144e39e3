//! SCHEDULE workflows: each tick of the cron enrols the segment's members, a batch per job,
//! and plans the next tick. A tick planned for an older version of the workflow (disabled
//! since, or its schedule changed: every change moves `updated_at`) stops.

use chrono::{DateTime, Utc};
use serde_json::json;

use super::ids::derived_id;
use crate::app::campaigns::member_of;
use crate::app::workflows::{enrolment, Enrolee};
use crate::jobs::JobOutcome;
use crate::model::{ContactId, SegmentType, WorkflowId, WorkspaceId};
use crate::ports::{ChangeSet, ClaimedJob, JobPayload, MatchQuery, NewJob, StoreError, Write};
use crate::workflow::{Schedule, Trigger, Workflow};
use crate::Engine;

/// Whether two `updated_at` values are the same version (stores keep milliseconds at least).
fn same_version(a: DateTime<Utc>, b: DateTime<Utc>) -> bool {
    a.timestamp_millis() == b.timestamp_millis()
}

fn tick(
    workflow: &Workflow,
    fire_at: DateTime<Utc>,
    generation: DateTime<Utc>,
    after: Option<ContactId>,
) -> JobPayload {
    JobPayload::WorkflowScheduleTick {
        workspace_id: workflow.workspace_id.clone(),
        workflow_id: workflow.id.clone(),
        fire_at,
        generation,
        after_contact_id: after,
    }
}

/// The parsed schedule of an enabled SCHEDULE workflow.
fn schedule_of(workflow: &Workflow) -> Option<Schedule> {
    match &workflow.trigger {
        Trigger::Schedule { cron, timezone, .. } if workflow.enabled => {
            Schedule::parse(cron, timezone.as_deref()).ok()
        }
        _ => None,
    }
}

impl Engine {
    /// Adds the first tick of an enabled SCHEDULE workflow (just created or changed) to
    /// `changes`; nothing for other workflows.
    pub(crate) fn schedule_next_tick(
        &self,
        workflow: &Workflow,
        now: DateTime<Utc>,
        changes: &mut ChangeSet,
    ) {
        if let Some(next) = schedule_of(workflow).and_then(|s| s.next_after(now)) {
            changes.push(Write::EnqueueJob(NewJob::at(
                &*self.clock,
                tick(workflow, next, workflow.updated_at, None),
                next,
            )));
        }
    }

    /// Handles `WorkflowScheduleTick`: enrols one batch of the segment's members (ids
    /// derived from (workflow, fire time, contact), so a repeated batch enrols nobody twice),
    /// then plans the next batch or, after the first batch, the next fire time.
    pub(crate) async fn workflow_schedule_tick(
        &self,
        job: &ClaimedJob,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
        fire_at: DateTime<Utc>,
        generation: DateTime<Utc>,
        after: Option<&ContactId>,
    ) -> crate::Result<JobOutcome> {
        let workflow = self.store.workflow(workspace_id, workflow_id).await?;
        let current = workflow.filter(|w| w.enabled && same_version(w.updated_at, generation));
        let (Some(workflow), Some(schedule)) =
            (current.clone(), current.as_ref().and_then(schedule_of))
        else {
            self.jobs.complete(job).await?;
            return Ok(JobOutcome::Done);
        };
        let Trigger::Schedule { segment_id, .. } = &workflow.trigger else {
            self.jobs.complete(job).await?;
            return Ok(JobOutcome::Done);
        };
        let now = self.clock.now();
        let mut follow_up = ChangeSet::new();
        if after.is_none() {
            if let Some(next) = schedule.next_after(fire_at.max(now)) {
                follow_up.push(Write::EnqueueJob(NewJob::at(
                    &*self.clock,
                    tick(&workflow, next, generation, None),
                    next,
                )));
            }
        }
        let ws = workspace_id;
        if let Some(segment) = self.store.segment(ws, segment_id).await? {
            let condition = match segment.segment_type {
                SegmentType::Dynamic => segment.condition.clone().unwrap_or_default(),
                SegmentType::Static => member_of(&segment.id),
            };
            let batch = self.settings.schedule_batch.max(1);
            let query = MatchQuery {
                after_id: after.cloned(),
                until_id: None,
                audience_only: false,
                limit: batch,
            };
            let members = self
                .store
                .contacts_matching(ws, &condition, &query, now)
                .await?;
            let graph = self.workflow_graph(&workflow).await?;
            let stamp = crate::model::timestamp::format(&fire_at);
            for contact in &members {
                let id = derived_id(
                    fire_at,
                    &[workflow.id.as_str(), &stamp, contact.id.as_str()],
                );
                let enrolee = Enrolee {
                    contact_id: contact.id.clone(),
                    contact: Some(contact),
                    event: json!({ "scheduledAt": stamp }),
                };
                let (_, changes) = enrolment(&*self.clock, &workflow, &graph, enrolee, id, now)?;
                match self.commit(changes).await {
                    Ok(()) | Err(StoreError::Conflict(_)) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            if members.len() == batch {
                let last = members.last().map(|c| c.id.clone());
                follow_up.push(Write::EnqueueJob(NewJob::at(
                    &*self.clock,
                    tick(&workflow, fire_at, generation, last),
                    now,
                )));
            }
        }
        if !follow_up.is_empty() {
            self.store.commit(follow_up).await?;
        }
        self.jobs.complete(job).await?;
        Ok(JobOutcome::Done)
    }
}
