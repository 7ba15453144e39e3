//! Executions of a workflow: start (manual), list, read with step records, cancel; and the
//! one way every trigger enrols a contact.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{ExecutionView, ListExecutions, StartExecution};
use crate::app::segments::Page;
use crate::app::{check_page, Caller, PageRequest, StepError};
use crate::error::{Error, Resource, Result};
use crate::model::{ContactId, ExecutionId, StepId, WorkflowId, WorkspaceId};
use crate::ports::{ChangeSet, Clock, JobPayload, NewJob, StoreError, Write};
use crate::workflow::{Execution, ExecutionStatus, Step, StepAction, StepRunStatus, Workflow};
use crate::Engine;

/// The writes that enrol `contact_id` in `workflow`: the RUNNING execution at the TRIGGER
/// step, and the job that runs that step. The store refuses the execution (`Conflict`) when
/// the re-entry rule forbids it.
pub(crate) fn enrolment(
    clock: &dyn Clock,
    workflow: &Workflow,
    trigger_step: &StepId,
    contact_id: ContactId,
    event: Value,
    id: ExecutionId,
    now: DateTime<Utc>,
) -> (Execution, ChangeSet) {
    let execution = Execution {
        id,
        workspace_id: workflow.workspace_id.clone(),
        workflow_id: workflow.id.clone(),
        contact_id,
        status: ExecutionStatus::Running,
        event,
        current_step_id: Some(trigger_step.clone()),
        waiting: None,
        reason: None,
        single_entry: !workflow.allow_reentry,
        started_at: now,
        completed_at: None,
        updated_at: now,
        version: 0,
    };
    let mut changes = ChangeSet::new();
    changes.push(Write::InsertExecution(execution.clone()));
    changes.push(Write::EnqueueJob(NewJob::at(
        clock,
        step_job(&execution, trigger_step),
        now,
    )));
    (execution, changes)
}

/// The job that runs `step` of `execution`.
pub(crate) fn step_job(execution: &Execution, step: &StepId) -> JobPayload {
    JobPayload::RunWorkflowStep {
        workspace_id: execution.workspace_id.clone(),
        execution_id: execution.id.clone(),
        step_id: step.clone(),
    }
}

impl Engine {
    /// The TRIGGER step of a workflow (every workflow has one, made with it).
    pub(crate) async fn trigger_step(&self, workflow: &Workflow) -> Result<Step, StoreError> {
        self.store
            .workflow_steps(&workflow.workspace_id, &workflow.id)
            .await?
            .into_iter()
            .find(|s| matches!(s.action, StepAction::Trigger { .. }))
            .ok_or_else(|| {
                StoreError::Corrupt(format!("workflow {} has no TRIGGER step", workflow.id))
            })
    }

    /// `POST /workflows/{id}/executions {contactId, context?}`: starts an execution now; the
    /// context becomes its `event`. Refused on a disabled workflow, and (409) when the
    /// re-entry rule forbids enrolling the contact again.
    pub async fn start_execution(
        &self,
        caller: &Caller,
        workflow_id: &WorkflowId,
        cmd: StartExecution,
    ) -> Result<Execution> {
        let workflow = self.workflow_record(caller, workflow_id).await?;
        if !workflow.enabled {
            return Err(Error::InvalidState(
                "the workflow is disabled; enable it (PATCH enabled: true) to start executions"
                    .into(),
            ));
        }
        let contact = self
            .store
            .contact(caller.workspace_id(), &cmd.contact_id)
            .await?
            .ok_or(Error::NotFound(Resource::Contact))?;
        let trigger = self.trigger_step(&workflow).await?;
        let now = self.clock.now();
        let event = Value::Object(cmd.context.unwrap_or_default());
        let (execution, changes) = enrolment(
            &*self.clock,
            &workflow,
            &trigger.id,
            contact.id,
            event,
            ExecutionId::generate(&*self.clock),
            now,
        );
        match self.commit(changes).await {
            Ok(()) => Ok(execution),
            Err(StoreError::Conflict(_)) => Err(Error::Conflict(if workflow.allow_reentry {
                "the contact already has a running or waiting execution of this workflow".into()
            } else {
                "the contact was already enrolled in this workflow, which does not allow re-entry"
                    .into()
            })),
            Err(e) => Err(e.into()),
        }
    }

    /// `GET /workflows/{id}/executions`: page style, newest first.
    pub async fn list_executions(
        &self,
        caller: &Caller,
        workflow_id: &WorkflowId,
        query: ListExecutions,
    ) -> Result<Page<Execution>> {
        check_page(&query.page)?;
        let workflow = self.workflow_record(caller, workflow_id).await?;
        let PageRequest { page, page_size } = query.page;
        let (executions, total) = self
            .store
            .executions(
                &workflow.workspace_id,
                &workflow.id,
                ((page - 1) * page_size) as usize,
                page_size as usize,
            )
            .await?;
        Ok(Page::new(executions, page, page_size, total))
    }

    /// An execution of a workflow of the caller's workspace (404 `NOT_FOUND` otherwise).
    async fn execution_record(
        &self,
        ws: &WorkspaceId,
        workflow_id: &WorkflowId,
        execution_id: &ExecutionId,
    ) -> Result<Execution, StepError> {
        self.store
            .execution(ws, execution_id)
            .await?
            .filter(|e| &e.workflow_id == workflow_id)
            .ok_or(StepError::Domain(Error::NotFound(Resource::Execution)))
    }

    /// `GET /workflows/{id}/executions/{executionId}`: with each step's record.
    pub async fn execution(
        &self,
        caller: &Caller,
        workflow_id: &WorkflowId,
        execution_id: &ExecutionId,
    ) -> Result<ExecutionView> {
        let workflow = self.workflow_record(caller, workflow_id).await?;
        let ws = workflow.workspace_id;
        let execution = match self.execution_record(&ws, &workflow.id, execution_id).await {
            Ok(e) => e,
            Err(StepError::Domain(e)) => return Err(e),
            Err(StepError::Store(e)) => return Err(e.into()),
        };
        let steps = self.store.step_runs(&ws, &execution.id).await?;
        Ok(ExecutionView { execution, steps })
    }

    /// `DELETE /workflows/{id}/executions/{executionId}`: cancels a RUNNING or WAITING
    /// execution; its pending step jobs then find it ended and do nothing.
    pub async fn cancel_execution(
        &self,
        caller: &Caller,
        workflow_id: &WorkflowId,
        execution_id: &ExecutionId,
    ) -> Result<Execution> {
        let workflow = self.workflow_record(caller, workflow_id).await?;
        let ws = workflow.workspace_id;
        self.on_conflict_retry(|| async {
            let mut execution = self.execution_record(&ws, &workflow.id, execution_id).await?;
            if !execution.status.is_active() {
                let status = serde_json::to_value(execution.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                return Err(StepError::Domain(Error::InvalidState(format!(
                    "the execution is {status} and can no longer be cancelled; only RUNNING and WAITING executions can"
                ))));
            }
            let now = self.clock.now();
            let mut changes = ChangeSet::new();
            if let Some(step) = &execution.current_step_id {
                if let Some(mut run) = self.store.step_run(&ws, &execution.id, step).await? {
                    if matches!(run.status, StepRunStatus::Running | StepRunStatus::Waiting) {
                        run.status = StepRunStatus::Cancelled;
                        run.completed_at = Some(now);
                        changes.push(Write::UpdateStepRun(run));
                    }
                }
            }
            execution.status = ExecutionStatus::Cancelled;
            execution.current_step_id = None;
            execution.waiting = None;
            execution.reason = Some("cancelled".into());
            execution.completed_at = Some(now);
            execution.updated_at = now;
            changes.push(Write::UpdateExecution(execution.clone()));
            self.store.commit(changes).await?;
            execution.version += 1;
            Ok(execution)
        })
        .await
    }
}
