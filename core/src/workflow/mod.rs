//! Workflows: automations started by a trigger, made of steps joined by transitions, run
//! for one contact at a time as durable executions.

mod execution;
mod model;

pub use execution::{Execution, ExecutionStatus, StepRun, StepRunStatus, Wait, WebhookAttempt};
pub use model::{
    Branch, DelayUnit, Recipient, Step, StepAction, StepCondition, StepType, SubscriptionAction,
    Transition, TransitionCondition, Trigger, WaitOutcome, Workflow,
};
