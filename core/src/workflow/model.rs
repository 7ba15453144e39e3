//! Workflow definitions: a workflow, its steps (each with a typed action) and the
//! transitions between them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::{SegmentId, StepId, TemplateId, TransitionId, WorkflowId, WorkspaceId};
use crate::segment::Operator;

/// What starts a workflow's executions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "triggerType", content = "triggerConfig")]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Trigger {
    /// Every stored event with this name (custom or internal) starts an execution for the
    /// event's contact.
    Event {
        /// The event name (`signup`, `email.open`, `segment.vip.entry`, ...).
        #[serde(rename = "eventName")]
        event_name: String,
    },
    /// Started by `POST /workflows/{id}/executions` only.
    Manual {},
    /// Each tick of `cron` (five fields, in `timezone`) enrols the segment's members.
    Schedule {
        /// Five-field cron expression (minute hour day-of-month month day-of-week).
        cron: String,
        /// IANA time zone the expression is read in; UTC when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timezone: Option<String>,
        /// The segment whose members are enrolled at each tick.
        #[serde(rename = "segmentId")]
        segment_id: SegmentId,
    },
}

/// A workflow: a trigger and a graph of steps, starting at its TRIGGER step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Workflow {
    /// Workflow id.
    pub id: WorkflowId,
    /// Owning workspace.
    #[serde(rename = "projectId")]
    pub workspace_id: WorkspaceId,
    /// Name.
    pub name: String,
    /// Optional description.
    pub description: Option<String>,
    /// Whether new executions start (running ones go on either way).
    pub enabled: bool,
    /// What starts executions.
    #[serde(flatten)]
    pub trigger: Trigger,
    /// `false`: a contact is enrolled at most once, ever. `true`: again, but only while it
    /// has no RUNNING or WAITING execution of this workflow.
    pub allow_reentry: bool,
    /// Creation time.
    #[serde(with = "crate::model::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "crate::model::timestamp")]
    pub updated_at: DateTime<Utc>,
}

/// Unit of a DELAY step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum DelayUnit {
    /// Minutes.
    Minutes,
    /// Hours.
    Hours,
    /// Days.
    Days,
}

/// Who a SEND_EMAIL step writes to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Recipient {
    /// The execution's contact (the default).
    #[default]
    Contact,
    /// A fixed address (variables allowed).
    Custom {
        /// The address, possibly with `{{...}}` variables.
        email: String,
    },
}

/// What UPDATE_CONTACT does to the subscription flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum SubscriptionAction {
    /// Leaves it.
    #[default]
    None,
    /// Subscribes the contact.
    Subscribe,
    /// Unsubscribes the contact.
    Unsubscribe,
}

/// The test of a CONDITION step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StepCondition {
    /// `email`, `subscribed` (or `contact.email`, `contact.subscribed`), `data.<key>` for
    /// contact data, or `event.<key>` for the execution's event data.
    pub field: String,
    /// One of the segment filters' operators.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub operator: Operator,
    /// The operand, absent for operators that take none (`exists`, `notExists`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

/// A step's kind and its configuration, stored and shown as `type` plus `config`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", content = "config", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepAction {
    /// The entry point; every workflow has exactly one, made with the workflow.
    Trigger {
        /// The trigger's event name, when the workflow is EVENT-triggered.
        #[serde(rename = "eventName", default, skip_serializing_if = "Option::is_none")]
        event_name: Option<String>,
    },
    /// Sends the step's template (`Step::template_id`) through the `/v1/send` path.
    SendEmail {
        /// Who receives it.
        #[serde(default)]
        recipient: Recipient,
    },
    /// Waits, then goes on.
    Delay {
        /// How many units (at least 1).
        amount: u32,
        /// Minutes, hours or days.
        unit: DelayUnit,
    },
    /// Waits for the contact's next event with this name, or the timeout.
    WaitForEvent {
        /// The awaited event name.
        #[serde(rename = "eventName")]
        event_name: String,
        /// Seconds to wait before taking the TIMEOUT outcome; forever when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    /// Branches `yes` or `no`.
    Condition(StepCondition),
    /// Merges data into the contact and optionally changes its subscription.
    UpdateContact {
        /// Data merged into the contact's data (variables allowed in string values).
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        updates: Map<String, Value>,
        /// Subscription change.
        #[serde(rename = "subscriptionAction", default)]
        subscription_action: SubscriptionAction,
    },
    /// Calls a customer's endpoint, signed, retried.
    Webhook {
        /// Target URL (variables allowed in path and query).
        url: String,
        /// HTTP method; POST when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        method: Option<String>,
        /// Extra headers, names to values (variables allowed in values).
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        headers: Map<String, Value>,
        /// A custom body; the default body of the spec when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<Value>,
    },
    /// Ends the execution.
    Exit {
        /// Why, recorded on the execution.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// The kind of a step, without its configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepType {
    /// See [`StepAction::Trigger`].
    Trigger,
    /// See [`StepAction::SendEmail`].
    SendEmail,
    /// See [`StepAction::Delay`].
    Delay,
    /// See [`StepAction::WaitForEvent`].
    WaitForEvent,
    /// See [`StepAction::Condition`].
    Condition,
    /// See [`StepAction::UpdateContact`].
    UpdateContact,
    /// See [`StepAction::Webhook`].
    Webhook,
    /// See [`StepAction::Exit`].
    Exit,
}

impl StepType {
    /// The name on the wire (`SEND_EMAIL`, `DELAY`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Trigger => "TRIGGER",
            Self::SendEmail => "SEND_EMAIL",
            Self::Delay => "DELAY",
            Self::WaitForEvent => "WAIT_FOR_EVENT",
            Self::Condition => "CONDITION",
            Self::UpdateContact => "UPDATE_CONTACT",
            Self::Webhook => "WEBHOOK",
            Self::Exit => "EXIT",
        }
    }
}

impl std::fmt::Display for StepType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl StepAction {
    /// The kind of this action.
    pub fn step_type(&self) -> StepType {
        match self {
            Self::Trigger { .. } => StepType::Trigger,
            Self::SendEmail { .. } => StepType::SendEmail,
            Self::Delay { .. } => StepType::Delay,
            Self::WaitForEvent { .. } => StepType::WaitForEvent,
            Self::Condition(_) => StepType::Condition,
            Self::UpdateContact { .. } => StepType::UpdateContact,
            Self::Webhook { .. } => StepType::Webhook,
            Self::Exit { .. } => StepType::Exit,
        }
    }
}

/// One step of a workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// Step id.
    pub id: StepId,
    /// Owning workspace.
    #[serde(skip)]
    pub workspace_id: WorkspaceId,
    /// The workflow it belongs to.
    pub workflow_id: WorkflowId,
    /// Name shown in editors.
    pub name: String,
    /// Editor position (`{x, y}`), kept as given.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub position: Value,
    /// Kind and configuration (`type` and `config` on the wire).
    #[serde(flatten)]
    pub action: StepAction,
    /// The template a SEND_EMAIL step sends.
    pub template_id: Option<TemplateId>,
    /// Creation time.
    #[serde(with = "crate::model::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "crate::model::timestamp")]
    pub updated_at: DateTime<Utc>,
}

/// Which edge out of a step a transition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum TransitionCondition {
    /// Out of a CONDITION step: taken when the test gave this branch.
    Branch {
        /// `yes` or `no`.
        branch: Branch,
    },
    /// Out of a WAIT_FOR_EVENT step: taken on this outcome.
    Outcome {
        /// `EVENT` or `TIMEOUT`.
        outcome: WaitOutcome,
    },
}

/// A CONDITION step's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Branch {
    /// The test held.
    Yes,
    /// It did not.
    No,
}

/// How a WAIT_FOR_EVENT step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WaitOutcome {
    /// The awaited event arrived.
    Event,
    /// The timeout passed first.
    Timeout,
}

/// An edge between two steps of one workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Transition {
    /// Transition id.
    pub id: TransitionId,
    /// Owning workspace.
    #[serde(skip)]
    pub workspace_id: WorkspaceId,
    /// The workflow both steps belong to.
    #[serde(skip)]
    pub workflow_id: WorkflowId,
    /// Where it leaves.
    pub from_step_id: StepId,
    /// Where it leads.
    pub to_step_id: StepId,
    /// Branch or outcome it is taken on; `None` for the plain edge.
    pub condition: Option<TransitionCondition>,
    /// Lower wins when several edges could be taken.
    pub priority: i32,
    /// Creation time.
    #[serde(with = "crate::model::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "crate::model::timestamp")]
    pub updated_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn step_type_names_are_the_serde_names() {
        use StepType as T;
        for t in [
            T::Trigger,
            T::SendEmail,
            T::Delay,
            T::WaitForEvent,
            T::Condition,
            T::UpdateContact,
            T::Webhook,
            T::Exit,
        ] {
            assert_eq!(serde_json::to_value(t).ok(), Some(json!(t.as_str())));
        }
    }

    #[test]
    fn trigger_and_action_read_as_type_plus_config() {
        let trigger: Trigger = serde_json::from_value(
            json!({"triggerType": "EVENT", "triggerConfig": {"eventName": "signup"}}),
        )
        .unwrap_or(Trigger::Manual {});
        assert_eq!(
            trigger,
            Trigger::Event {
                event_name: "signup".into()
            }
        );
        let action = StepAction::Delay {
            amount: 2,
            unit: DelayUnit::Hours,
        };
        assert_eq!(
            serde_json::to_value(&action).ok(),
            Some(json!({"type": "DELAY", "config": {"amount": 2, "unit": "hours"}}))
        );
        let condition: Option<TransitionCondition> =
            serde_json::from_value(json!({"branch": "yes"})).ok();
        assert_eq!(
            condition,
            Some(TransitionCondition::Branch {
                branch: Branch::Yes
            })
        );
    }
}
