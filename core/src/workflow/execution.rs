//! Executions: one run of a workflow for one contact, and the record of each step it ran.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{ContactId, EmailId, ExecutionId, StepId, WorkflowId, WorkspaceId};

/// Where an execution stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExecutionStatus {
    /// A step is due or running.
    Running,
    /// Waiting for a DELAY to pass or an event to arrive.
    Waiting,
    /// Reached a step with no edge to follow, or an EXIT step.
    Completed,
    /// A step failed for good.
    Failed,
    /// Cancelled through the API.
    Cancelled,
}

impl ExecutionStatus {
    /// Whether the execution still holds its contact (RUNNING or WAITING): such executions
    /// block a workflow's deletion and a re-entry.
    pub fn is_active(self) -> bool {
        matches!(self, Self::Running | Self::Waiting)
    }
}

/// What a WAITING execution waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Wait {
    /// The step that waits.
    pub step_id: StepId,
    /// The awaited event name, for WAIT_FOR_EVENT; `None` for a DELAY.
    pub event_name: Option<String>,
    /// When the delay ends or the wait times out; `None` waits for the event forever.
    #[serde(with = "crate::model::timestamp::option")]
    pub until: Option<DateTime<Utc>>,
}

impl Wait {
    /// How long after a WAIT_FOR_EVENT starts its step job looks for an awaited event that
    /// no dispatch resumed it with: one tracked while the wait was being committed, whose
    /// request read "nobody waits" just before (see [`Wait::first_wake`]).
    pub const LATE_EVENT_CHECK: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

    /// When the waiting step's job first runs, for a wait that starts at `now`: a DELAY at
    /// its end; a WAIT_FOR_EVENT at its timeout or [`Wait::LATE_EVENT_CHECK`] after `now`,
    /// whichever is sooner, so that even a wait without a timeout is looked at once after
    /// the events that raced its start have been committed.
    pub fn first_wake(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if self.event_name.is_none() {
            return self.until;
        }
        let check = now + Self::LATE_EVENT_CHECK;
        Some(self.until.map_or(check, |until| until.min(check)))
    }
}

/// One run of a workflow for one contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Execution {
    /// Execution id.
    pub id: ExecutionId,
    /// Owning workspace.
    #[serde(rename = "projectId")]
    pub workspace_id: WorkspaceId,
    /// The workflow run.
    pub workflow_id: WorkflowId,
    /// The contact it runs for.
    pub contact_id: ContactId,
    /// Where it stands.
    pub status: ExecutionStatus,
    /// The trigger's data (a MANUAL start's `context`), merged with the data of every
    /// waited-for event that arrived: what `{{event.x}}` reads.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub event: Value,
    /// The step due or waiting, while RUNNING or WAITING.
    pub current_step_id: Option<StepId>,
    /// What a WAITING execution waits for.
    pub waiting: Option<Wait>,
    /// Why it ended, for FAILED, CANCELLED and EXIT-completed executions.
    pub reason: Option<String>,
    /// Copied from the workflow at start: when `true`, the store refuses a second execution
    /// of the same (workflow, contact), whatever its status.
    #[serde(skip)]
    pub single_entry: bool,
    /// Started at.
    #[serde(with = "crate::model::timestamp")]
    pub started_at: DateTime<Utc>,
    /// Ended at (COMPLETED, FAILED, CANCELLED).
    #[serde(with = "crate::model::timestamp::option")]
    pub completed_at: Option<DateTime<Utc>>,
    /// Last change.
    #[serde(with = "crate::model::timestamp")]
    pub updated_at: DateTime<Utc>,
    /// Optimistic concurrency: a step, an arriving event and a timeout may race; each
    /// update names the version it read.
    #[serde(skip)]
    pub version: i64,
}

/// Where one step run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepRunStatus {
    /// Started; for a webhook, attempts may be under way.
    Running,
    /// Waiting for a delay, an event or a timeout.
    Waiting,
    /// Done; `output` holds what it produced.
    Completed,
    /// Failed for good; `error` says why.
    Failed,
    /// The execution was cancelled while this step was running or waiting.
    Cancelled,
}

/// One HTTP attempt of a WEBHOOK step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookAttempt {
    /// When it started.
    #[serde(with = "crate::model::timestamp")]
    pub at: DateTime<Utc>,
    /// The response status, when a response came.
    pub status_code: Option<u16>,
    /// How long it took, in milliseconds.
    pub latency_ms: u64,
    /// Why it failed, when it did (no response, or a non-2xx status).
    pub error: Option<String>,
}

/// The record of one step of one execution, keyed by (execution, step): a step runs at most
/// once per execution, so its side effect (an email queued) happens once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StepRun {
    /// The execution.
    #[serde(skip)]
    pub execution_id: ExecutionId,
    /// Owning workspace.
    #[serde(skip)]
    pub workspace_id: WorkspaceId,
    /// The step.
    pub step_id: StepId,
    /// The step's kind when it ran.
    #[serde(rename = "type")]
    pub step_type: super::StepType,
    /// Where it stands.
    pub status: StepRunStatus,
    /// What it produced (the branch taken, the email queued, the webhook response, ...).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub output: Option<Value>,
    /// Why it failed.
    pub error: Option<String>,
    /// The email a SEND_EMAIL step queued.
    #[serde(skip)]
    pub email_id: Option<EmailId>,
    /// Every attempt of a WEBHOOK step, oldest first.
    pub attempts: Vec<WebhookAttempt>,
    /// Started at.
    #[serde(with = "crate::model::timestamp")]
    pub started_at: DateTime<Utc>,
    /// Ended at.
    #[serde(with = "crate::model::timestamp::option")]
    pub completed_at: Option<DateTime<Utc>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeDelta;

    fn wait(event: Option<&str>, until: Option<DateTime<Utc>>) -> Wait {
        Wait {
            step_id: StepId::from("s"),
            event_name: event.map(str::to_string),
            until,
        }
    }

    #[test]
    fn an_event_wait_is_looked_at_once_before_its_timeout() {
        let now = DateTime::<Utc>::UNIX_EPOCH;
        let check = now + Wait::LATE_EVENT_CHECK;
        let long = now + TimeDelta::hours(1);
        let short = now + TimeDelta::seconds(5);
        assert_eq!(wait(Some("paid"), Some(long)).first_wake(now), Some(check));
        assert_eq!(wait(Some("paid"), Some(short)).first_wake(now), Some(short));
        assert_eq!(wait(Some("paid"), None).first_wake(now), Some(check));
        // A DELAY has nothing to look for: it wakes at its end.
        assert_eq!(wait(None, Some(long)).first_wake(now), Some(long));
    }
}
