//! Ending a step: its record, the execution's new state and the next step's job, committed
//! together with the step's side effects.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::app::workflows::step_job;
use crate::app::StepError;
use crate::model::EmailId;
use crate::ports::{ChangeSet, NewJob, Write};
use crate::workflow::{
    next_transition, Execution, ExecutionStatus, Step, StepAction, StepRun, StepRunStatus,
    Transition, TransitionCondition, Wait,
};
use crate::Engine;

/// What running a step decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    /// The step is done: its output, and the branch or outcome the next edge is chosen by.
    Complete {
        /// What the step produced.
        output: Value,
        /// The branch or outcome taken (`None` for steps without one).
        taken: Option<TransitionCondition>,
        /// The email it queued.
        email_id: Option<EmailId>,
    },
    /// The step waits (DELAY or WAIT_FOR_EVENT); its job runs again at `wait.until`.
    Wait(Wait),
    /// The step failed for good, and with it the execution.
    Fail(String),
}

/// A new record of `step` for `execution`.
pub(super) fn new_run(execution: &Execution, step: &Step, now: DateTime<Utc>) -> StepRun {
    StepRun {
        execution_id: execution.id.clone(),
        workspace_id: execution.workspace_id.clone(),
        step_id: step.id.clone(),
        step_type: step.action.step_type(),
        status: StepRunStatus::Running,
        output: None,
        error: None,
        email_id: None,
        attempts: Vec::new(),
        started_at: now,
        completed_at: None,
    }
}

impl Engine {
    /// Commits `decision` for `step` of `execution` (read at its current version) with
    /// `changes` (the step's side effects). `run` is the step's existing record, if any.
    /// A conflict means another writer moved the execution (or recorded the step) first:
    /// the caller re-reads and decides again.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn settle_step(
        &self,
        mut execution: Execution,
        step: &Step,
        run: Option<StepRun>,
        transitions: &[Transition],
        decision: Decision,
        mut changes: ChangeSet,
        now: DateTime<Utc>,
    ) -> Result<(), StepError> {
        let is_new = run.is_none();
        let mut run = run.unwrap_or_else(|| new_run(&execution, step, now));
        execution.updated_at = now;
        match decision {
            Decision::Complete {
                output,
                taken,
                email_id,
            } => {
                run.status = StepRunStatus::Completed;
                run.output = Some(output);
                run.email_id = email_id.or(run.email_id);
                run.completed_at = Some(now);
                execution.waiting = None;
                let next = match &step.action {
                    StepAction::Exit { reason } => {
                        execution.reason = Some(reason.clone().unwrap_or_else(|| "exit".into()));
                        None
                    }
                    _ => next_transition(transitions, &step.id, taken.as_ref()),
                };
                match next {
                    Some(edge) => {
                        execution.status = ExecutionStatus::Running;
                        execution.current_step_id = Some(edge.to_step_id.clone());
                        changes.push(Write::EnqueueJob(NewJob::at(
                            &*self.clock,
                            step_job(&execution, &edge.to_step_id),
                            now,
                        )));
                    }
                    None => {
                        execution.status = ExecutionStatus::Completed;
                        execution.current_step_id = None;
                        execution.completed_at = Some(now);
                    }
                }
            }
            Decision::Wait(wait) => {
                run.status = StepRunStatus::Waiting;
                if let Some(until) = wait.until {
                    changes.push(Write::EnqueueJob(NewJob::at(
                        &*self.clock,
                        step_job(&execution, &step.id),
                        until,
                    )));
                }
                execution.status = ExecutionStatus::Waiting;
                execution.waiting = Some(wait);
            }
            Decision::Fail(error) => {
                run.status = StepRunStatus::Failed;
                run.error = Some(error.clone());
                run.completed_at = Some(now);
                execution.status = ExecutionStatus::Failed;
                execution.current_step_id = None;
                execution.waiting = None;
                execution.reason = Some(error);
                execution.completed_at = Some(now);
            }
        }
        changes.push(if is_new {
            Write::InsertStepRun(run)
        } else {
            Write::UpdateStepRun(run)
        });
        changes.push(Write::UpdateExecution(execution));
        self.commit(changes).await?;
        Ok(())
    }
}
