//! Executions of a workflow: start (manual), list, read with step records, cancel; and the
//! one way every trigger enrols a contact.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{ExecutionView, ListExecutions, StartExecution};
use crate::app::segments::Page;
use crate::app::{check_page, Caller, PageRequest, StepError};
use crate::error::{Error, Resource, Result};
use crate::model::{Contact, ContactId, ExecutionId, StepId, WorkflowId, WorkspaceId};
use crate::ports::{ChangeSet, Clock, JobPayload, NewJob, StoreError, Write};
use crate::workflow::{
    needs_job, new_step_run, run_pure_steps, Execution, ExecutionStatus, Step, StepAction,
    StepRunStatus, Transition, Workflow,
};
use crate::Engine;

/// A workflow's steps and transitions (by priority), read together to run its executions.
pub(crate) struct WorkflowGraph {
    /// Every step.
    pub(crate) steps: Vec<Step>,
    /// Every edge, by priority then age.
    pub(crate) transitions: Vec<Transition>,
}

/// Who is enrolled, and with what: the contact (`None` when it was deleted meanwhile; its
/// steps then fail in their job) and the execution's `event`.
pub(crate) struct Enrolee<'a> {
    /// The contact's id.
    pub(crate) contact_id: ContactId,
    /// The contact, when it still exists.
    pub(crate) contact: Option<&'a Contact>,
    /// The trigger's data: the event's, a manual start's context, a schedule's time.
    pub(crate) event: Value,
}

/// The writes that enrol a contact in `workflow`: the execution, run at once through its
/// pure steps (TRIGGER, CONDITION, EXIT; see [`run_pure_steps`]), their records, and the job
/// of the first step that needs one. The store refuses the execution (`Conflict`) when the
/// re-entry rule forbids it.
pub(crate) fn enrolment(
    clock: &dyn Clock,
    workflow: &Workflow,
    graph: &WorkflowGraph,
    enrolee: Enrolee<'_>,
    id: ExecutionId,
    now: DateTime<Utc>,
) -> Result<(Execution, ChangeSet), StoreError> {
    let trigger = graph
        .steps
        .iter()
        .find(|s| matches!(s.action, StepAction::Trigger { .. }))
        .ok_or_else(|| {
            StoreError::Corrupt(format!("workflow {} has no TRIGGER step", workflow.id))
        })?;
    let mut execution = Execution {
        id,
        workspace_id: workflow.workspace_id.clone(),
        workflow_id: workflow.id.clone(),
        contact_id: enrolee.contact_id,
        status: ExecutionStatus::Running,
        event: enrolee.event,
        current_step_id: Some(trigger.id.clone()),
        waiting: None,
        reason: None,
        single_entry: !workflow.allow_reentry,
        started_at: now,
        completed_at: None,
        updated_at: now,
        version: 0,
    };
    let writes = advance(
        clock,
        &mut execution,
        graph,
        enrolee.contact,
        now,
        &HashSet::new(),
    );
    let mut changes = ChangeSet::new();
    // The execution first: the records of its steps refer to it.
    changes.push(Write::InsertExecution(execution.clone()));
    for write in writes {
        changes.push(write);
    }
    Ok((execution, changes))
}

/// Takes `execution`, at a step it has just reached, through the pure steps from there
/// (see [`run_pure_steps`]); returns the writes of their records and of the job of the step
/// it then stands at. A WEBHOOK step there gets its RUNNING record in the same commit, so its
/// job goes straight to the call (each attempt is recorded on that record).
///
/// `ran` holds the steps the execution already has records of. A step runs at most once
/// per execution (its record is keyed by execution and step), so when the edges, edited
/// under a running execution, lead it back to one of them, the execution fails there with
/// the reason ([`came_back`]) instead of standing at a step whose job can do nothing.
pub(crate) fn advance(
    clock: &dyn Clock,
    execution: &mut Execution,
    graph: &WorkflowGraph,
    contact: Option<&Contact>,
    now: DateTime<Utc>,
    ran: &HashSet<StepId>,
) -> Vec<Write> {
    let runs = run_pure_steps(execution, &graph.steps, &graph.transitions, contact, now);
    let back = runs
        .iter()
        .map(|r| &r.step_id)
        .chain(needs_job(execution))
        .find(|id| ran.contains(*id))
        .cloned();
    if let Some(step_id) = back {
        let before = runs.into_iter().take_while(|r| r.step_id != step_id);
        let writes = before.map(Write::InsertStepRun).collect();
        came_back(execution, &step_id, now);
        return writes;
    }
    let mut writes: Vec<Write> = runs.into_iter().map(Write::InsertStepRun).collect();
    let Some(step_id) = needs_job(execution) else {
        return writes;
    };
    let step = graph.steps.iter().find(|s| &s.id == step_id);
    if let Some(step) = step.filter(|s| matches!(s.action, StepAction::Webhook { .. })) {
        writes.push(Write::InsertStepRun(new_step_run(execution, step, now)));
    }
    writes.push(Write::EnqueueJob(NewJob::at(
        clock,
        step_job(execution, step_id),
        now,
    )));
    writes
}

/// Fails `execution`, which edges changed under it led back to `step_id`, a step it
/// already ran.
pub(crate) fn came_back(execution: &mut Execution, step_id: &StepId, now: DateTime<Utc>) {
    execution.status = ExecutionStatus::Failed;
    execution.reason = Some(format!(
        "the workflow was changed so that this execution came back to step {step_id}, which it already ran; a step runs at most once per execution"
    ));
    execution.current_step_id = None;
    execution.waiting = None;
    execution.completed_at = Some(now);
    execution.updated_at = now;
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
    /// A workflow's steps and transitions.
    pub(crate) async fn workflow_graph(
        &self,
        workflow: &Workflow,
    ) -> Result<WorkflowGraph, StoreError> {
        let ws = &workflow.workspace_id;
        Ok(WorkflowGraph {
            steps: self.store.workflow_steps(ws, &workflow.id).await?,
            transitions: self.store.workflow_transitions(ws, &workflow.id).await?,
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
        let graph = self.workflow_graph(&workflow).await?;
        let now = self.clock.now();
        let enrolee = Enrolee {
            contact_id: contact.id.clone(),
            contact: Some(&contact),
            event: Value::Object(cmd.context.unwrap_or_default()),
        };
        let id = ExecutionId::generate(&*self.clock);
        let (execution, changes) = enrolment(&*self.clock, &workflow, &graph, enrolee, id, now)?;
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
