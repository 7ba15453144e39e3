//! Steps that read only what the execution already holds (TRIGGER, CONDITION with its
//! contact, EXIT) run in the commit that reaches them, not in a job of their own. A burst of
//! executions then costs one job, with its claim and commits, per step that has a side
//! effect or waits (SEND_EMAIL, UPDATE_CONTACT, WEBHOOK, DELAY, WAIT_FOR_EVENT), not one per
//! step. Their records are the same as when a job runs them.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::{
    evaluate_condition, next_transition, Execution, ExecutionStatus, Step, StepAction, StepRun,
    StepRunStatus, Transition, TransitionCondition,
};
use crate::model::{Contact, StepId};

/// How many steps one commit runs at most; the graph has no cycles, so this only bounds the
/// size of one change set in a very long chain (the rest goes on in a job).
pub const MAX_INLINE_STEPS: usize = 64;

/// What a step that needs nothing but its execution decided.
#[derive(Debug, Clone, PartialEq)]
pub struct PureOutcome {
    /// The step's output.
    pub output: Value,
    /// The branch taken (CONDITION); `None` for the others.
    pub taken: Option<TransitionCondition>,
}

/// The outcome of `action` when it is pure: TRIGGER, EXIT, or CONDITION given its contact.
/// `None` for the steps with side effects or waits, which run as jobs.
pub fn pure_outcome(
    action: &StepAction,
    contact: Option<&Contact>,
    event: &Value,
    now: DateTime<Utc>,
) -> Option<PureOutcome> {
    match action {
        StepAction::Trigger { .. } => Some(PureOutcome {
            output: json!({}),
            taken: None,
        }),
        StepAction::Exit { reason } => Some(PureOutcome {
            output: json!({ "reason": reason }),
            taken: None,
        }),
        StepAction::Condition(condition) => {
            let branch = evaluate_condition(condition, contact?, event, now);
            Some(PureOutcome {
                output: json!({ "branch": branch }),
                taken: Some(TransitionCondition::Branch { branch }),
            })
        }
        _ => None,
    }
}

/// A new record of `step` for `execution`, running since `now`.
pub fn new_step_run(execution: &Execution, step: &Step, now: DateTime<Utc>) -> StepRun {
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

/// Moves `execution` to the step after `step` given the branch `taken`: to the next edge's
/// target, or, with none (or out of EXIT), to its end.
pub fn move_past(
    execution: &mut Execution,
    step: &Step,
    transitions: &[Transition],
    taken: Option<&TransitionCondition>,
    now: DateTime<Utc>,
) {
    execution.waiting = None;
    let next = match &step.action {
        StepAction::Exit { reason } => {
            execution.reason = Some(reason.clone().unwrap_or_else(|| "exit".into()));
            None
        }
        _ => next_transition(transitions, &step.id, taken),
    };
    match next {
        Some(edge) => {
            execution.status = ExecutionStatus::Running;
            execution.current_step_id = Some(edge.to_step_id.clone());
        }
        None => {
            execution.status = ExecutionStatus::Completed;
            execution.current_step_id = None;
            execution.completed_at = Some(now);
        }
    }
}

/// Runs the pure steps from `execution`'s current step on, moving it past each, and
/// returns their completed records. It stops at the first step that needs a job (a step
/// with a side effect or a wait, a CONDITION whose contact is gone, a step no longer in
/// `steps`), which is then the execution's current step, or at the execution's end.
pub fn run_pure_steps(
    execution: &mut Execution,
    steps: &[Step],
    transitions: &[Transition],
    contact: Option<&Contact>,
    now: DateTime<Utc>,
) -> Vec<StepRun> {
    let mut runs = Vec::new();
    while runs.len() < MAX_INLINE_STEPS && execution.status == ExecutionStatus::Running {
        let Some(current) = execution.current_step_id.as_ref() else {
            break;
        };
        let Some(step) = steps.iter().find(|s| &s.id == current) else {
            break;
        };
        let Some(outcome) = pure_outcome(&step.action, contact, &execution.event, now) else {
            break;
        };
        let mut run = new_step_run(execution, step, now);
        run.status = StepRunStatus::Completed;
        run.output = Some(outcome.output);
        run.completed_at = Some(now);
        runs.push(run);
        move_past(execution, step, transitions, outcome.taken.as_ref(), now);
        execution.updated_at = now;
    }
    runs
}

/// The step `execution` stands at while it runs: after [`run_pure_steps`], the one its
/// next job runs.
pub fn needs_job(execution: &Execution) -> Option<&StepId> {
    match execution.status {
        ExecutionStatus::Running => execution.current_step_id.as_ref(),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
