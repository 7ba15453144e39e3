//! Workflows: automations started by a trigger, made of steps joined by transitions, run
//! for one contact at a time as durable executions.

mod condition;
mod config;
mod execution;
#[cfg(test)]
mod fixtures;
mod graph;
mod inline;
mod model;
mod schedule;
mod trigger_rules;
mod variables;
mod webhook_request;
mod webhook_url;

pub use condition::evaluate as evaluate_condition;
pub use config::{
    action_problems, check_action, condition_field_allowed, condition_operator_allowed,
    CONDITION_OPERATOR_MESSAGE, MAX_CONDITION_FIELD_CHARS, MAX_DELAY_AMOUNT, MAX_EVENT_NAME_CHARS,
    MAX_EXIT_REASON_CHARS, MAX_HEADER_VALUE_CHARS, MAX_RECIPIENT_CHARS, MAX_URL_CHARS,
    MAX_WAIT_TIMEOUT_SECS,
};
pub use execution::{Execution, ExecutionStatus, StepRun, StepRunStatus, Wait, WebhookAttempt};
pub use graph::{check_transition, next_transition, GraphRule};
pub use inline::{
    move_past, needs_job, new_step_run, pure_outcome, run_pure_steps, PureOutcome, MAX_INLINE_STEPS,
};
pub use model::{
    Branch, DelayUnit, Recipient, Step, StepAction, StepCondition, StepType, SubscriptionAction,
    Transition, TransitionCondition, Trigger, WaitOutcome, Workflow,
};
pub use schedule::{Schedule, ScheduleError};
pub use trigger_rules::{
    check_trigger, trigger_problems, MAX_CRON_CHARS, MAX_SEGMENT_ID_CHARS, MAX_TIMEZONE_CHARS,
};
pub use variables::{
    contact_value, lookup, render_json, render_updates, sole_placeholder, variables,
};
pub use webhook_request::{
    build_request, default_body, webhook_id, WebhookBuildError, WebhookConfig,
};
pub use webhook_url::{render_url, url_template_problem};
