//! Ending a step: its record, the execution's new state, the pure steps after it and the
//! next job, committed together with the step's side effects.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::step::StepContext;
use crate::app::workflows::{advance, step_job};
use crate::app::StepError;
use crate::model::EmailId;
use crate::ports::{ChangeSet, NewJob, Write};
use crate::workflow::{
    move_past, new_step_run, ExecutionStatus, StepAction, StepRun, StepRunStatus,
    TransitionCondition, Wait,
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
    /// The step waits (DELAY or WAIT_FOR_EVENT); its job runs again at
    /// [`Wait::first_wake`].
    Wait(Wait),
    /// The step failed for good, and with it the execution.
    Fail(String),
}

impl Engine {
    /// Commits `decision` for the context's step (its execution read at its current
    /// version) with `changes` (the step's side effects). `run` is the step's existing
    /// record, if any. A completed step moves the execution on through the pure steps after
    /// it (see [`advance`]). A conflict means another writer moved the execution (or
    /// recorded the step) first: the caller re-reads and decides again.
    pub(super) async fn settle_decision(
        &self,
        ctx: StepContext,
        run: Option<StepRun>,
        decision: Decision,
        mut changes: ChangeSet,
        now: DateTime<Utc>,
    ) -> Result<(), StepError> {
        let StepContext {
            mut execution,
            step,
            graph,
            contact,
            ran,
            ..
        } = ctx;
        let is_new = run.is_none();
        let mut run = run.unwrap_or_else(|| new_step_run(&execution, &step, now));
        let mut follow_up = Vec::new();
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
                move_past(
                    &mut execution,
                    &step,
                    &graph.transitions,
                    taken.as_ref(),
                    now,
                );
                // The contact as read: an UPDATE_CONTACT step's change is in `changes`, so a
                // CONDITION after it waits for its own job, which reads the new contact.
                let contact = match step.action {
                    StepAction::UpdateContact { .. } => None,
                    _ => contact.as_ref(),
                };
                follow_up = advance(&*self.clock, &mut execution, &graph, contact, now, &ran);
            }
            Decision::Wait(wait) => {
                run.status = StepRunStatus::Waiting;
                if let Some(at) = wait.first_wake(now) {
                    changes.push(Write::EnqueueJob(NewJob::at(
                        &*self.clock,
                        step_job(&execution, &step.id),
                        at,
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
        for write in follow_up {
            changes.push(write);
        }
        changes.push(Write::UpdateExecution(execution));
        self.commit(changes).await?;
        Ok(())
    }
}
