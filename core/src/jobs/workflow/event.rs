//! `DispatchWorkflowEvent`: a stored event starts the workflows it triggers for its contact
//! and resumes that contact's executions waiting for it.

use serde_json::{json, Value};

use super::ids::derived_id;
use super::settle::Decision;
use super::step::StepContext;
use crate::app::workflows::{enrolment, Enrolee};
use crate::app::StepError;
use crate::jobs::JobOutcome;
use crate::model::{ContactId, Event, EventId, ExecutionId, WorkspaceId};
use crate::ports::{ChangeSet, ClaimedJob, StoreError};
use crate::workflow::{StepAction, StepRunStatus, TransitionCondition, WaitOutcome};
use crate::Engine;

impl Engine {
    /// Handles `DispatchWorkflowEvent`. Idempotent: a start's execution id is derived from
    /// (event, workflow), so a second run finds it made; a resumed execution waits no more.
    pub(crate) async fn dispatch_workflow_event(
        &self,
        job: &ClaimedJob,
        workspace_id: &WorkspaceId,
        event_id: &EventId,
    ) -> crate::Result<JobOutcome> {
        if let Some(event) = self.store.event(workspace_id, event_id).await? {
            if let Some(contact_id) = event.contact_id.clone() {
                self.start_event_workflows(workspace_id, &event, &contact_id)
                    .await?;
                for waiting in self
                    .store
                    .waiting_executions(workspace_id, &contact_id, &event.name)
                    .await?
                {
                    self.on_conflict_retry(|| {
                        self.resume_on_event(workspace_id, &waiting.id, &event)
                    })
                    .await?;
                }
            }
        }
        self.jobs.complete(job).await?;
        Ok(JobOutcome::Done)
    }

    /// Enrols the event's contact in every enabled workflow the event triggers; the re-entry
    /// rule (enforced by the store) skips contacts already enrolled.
    async fn start_event_workflows(
        &self,
        ws: &WorkspaceId,
        event: &Event,
        contact_id: &ContactId,
    ) -> crate::Result<()> {
        let workflows = self.store.event_workflows(ws, &event.name).await?;
        if workflows.is_empty() {
            return Ok(());
        }
        let contact = self.store.contact(ws, contact_id).await?;
        for workflow in workflows {
            let graph = self.workflow_graph(&workflow).await?;
            let id = derived_id(event.created_at, &[event.id.as_str(), workflow.id.as_str()]);
            let enrolee = Enrolee {
                contact_id: contact_id.clone(),
                contact: contact.as_ref(),
                event: match &event.data {
                    Value::Object(_) => event.data.clone(),
                    _ => json!({}),
                },
            };
            let now = self.clock.now();
            let (_, changes) = enrolment(&*self.clock, &workflow, &graph, enrolee, id, now)?;
            match self.commit(changes).await {
                Ok(()) | Err(StoreError::Conflict(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Resumes one execution waiting for `event`'s name: the event's data is merged into
    /// the execution's `event`, and the EVENT outcome is taken. An execution that no longer
    /// waits (the timeout won, or it was cancelled) is left alone, and so is a wait that
    /// started after the event happened or timed out before it (its timeout's job late).
    async fn resume_on_event(
        &self,
        ws: &WorkspaceId,
        execution_id: &ExecutionId,
        event: &Event,
    ) -> Result<(), StepError> {
        let Some(execution) = self.store.execution(ws, execution_id).await? else {
            return Ok(());
        };
        let Some(wait) = execution.waiting.clone() else {
            return Ok(());
        };
        if wait.event_name.as_deref() != Some(event.name.as_str()) {
            return Ok(());
        }
        let Some((mut ctx, run)) = self.step_context(ws, execution_id, &wait.step_id).await? else {
            return Ok(());
        };
        let Some(run) = run.filter(|r| r.status == StepRunStatus::Waiting) else {
            return Ok(());
        };
        // Made before the wait started, or after its timeout (whose job has not yet run):
        // not this wait's event, as the timeout's own look agrees.
        if event.created_at < run.started_at
            || wait.until.is_some_and(|until| event.created_at > until)
            || !matches!(ctx.step.action, StepAction::WaitForEvent { .. })
        {
            return Ok(());
        }
        let decision = resumed_by(&mut ctx, event);
        let now = self.clock.now();
        self.settle_decision(ctx, Some(run), decision, ChangeSet::new(), now)
            .await
    }
}

/// The EVENT outcome of a WAIT_FOR_EVENT that `event` ends: the event's data is merged
/// into the execution's `event`.
pub(super) fn resumed_by(ctx: &mut StepContext, event: &Event) -> Decision {
    if let (Value::Object(into), Value::Object(from)) = (&mut ctx.execution.event, &event.data) {
        for (k, v) in from {
            into.insert(k.clone(), v.clone());
        }
    }
    Decision::Complete {
        output: json!({ "outcome": WaitOutcome::Event, "eventId": event.id }),
        taken: Some(TransitionCondition::Outcome {
            outcome: WaitOutcome::Event,
        }),
        email_id: None,
    }
}
