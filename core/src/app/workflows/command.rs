//! The typed commands and views of the workflow API.

use serde_json::{Map, Value};

use crate::app::{PageRequest, Patch};
use crate::model::{ContactId, StepId, TemplateId};
use crate::workflow::{
    Execution, Step, StepRun, StepType, Transition, TransitionCondition, Workflow,
};

/// What kind of trigger starts a workflow (`triggerType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TriggerType {
    /// A stored event with the trigger's `eventName`.
    #[default]
    Event,
    /// `POST /workflows/{id}/executions`.
    Manual,
    /// A cron schedule over a segment.
    Schedule,
}

impl TriggerType {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Event => "EVENT",
            Self::Manual => "MANUAL",
            Self::Schedule => "SCHEDULE",
        }
    }

    /// Reads `EVENT`, `MANUAL` or `SCHEDULE`.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "EVENT" => Some(Self::Event),
            "MANUAL" => Some(Self::Manual),
            "SCHEDULE" => Some(Self::Schedule),
            _ => None,
        }
    }
}

/// `POST /workflows`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateWorkflow {
    /// Name (one line, required).
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// Trigger kind; EVENT when `None`.
    pub trigger_type: Option<TriggerType>,
    /// Trigger configuration (`{eventName}`, `{cron, timezone?, segmentId}`, `{}`).
    pub trigger_config: Option<Map<String, Value>>,
    /// Shorthand for `triggerConfig.eventName`.
    pub event_name: Option<String>,
    /// Whether executions start; `false` by default.
    pub enabled: bool,
    /// Whether a contact may be enrolled again; `false` by default.
    pub allow_reentry: bool,
}

/// `PATCH /workflows/{id}`: each field kept when absent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkflowPatch {
    /// New name.
    pub name: Option<String>,
    /// New description, or cleared.
    pub description: Patch<String>,
    /// New trigger kind (its configuration from `trigger_config`, or the stored one when
    /// the kind is unchanged).
    pub trigger_type: Option<TriggerType>,
    /// New trigger configuration.
    pub trigger_config: Option<Map<String, Value>>,
    /// Enable or disable.
    pub enabled: Option<bool>,
    /// Allow re-entry or not.
    pub allow_reentry: Option<bool>,
}

/// `GET /workflows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListWorkflows {
    /// Page and page size.
    pub page: PageRequest,
}

/// `POST /workflows/{id}/steps`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateStep {
    /// The kind (not TRIGGER: every workflow has its one).
    pub step_type: StepType,
    /// Name (one line).
    pub name: String,
    /// Configuration for the kind; `null` reads as `{}`.
    pub config: Value,
    /// Editor position, `{x, y}`.
    pub position: Option<Value>,
    /// The template a SEND_EMAIL step sends (required for it, refused for others).
    pub template_id: Option<TemplateId>,
}

/// `PATCH /workflows/{id}/steps/{stepId}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepPatch {
    /// New name.
    pub name: Option<String>,
    /// New configuration (checked for the step's kind).
    pub config: Option<Value>,
    /// New editor position.
    pub position: Option<Value>,
    /// New template (SEND_EMAIL only; cannot be cleared on it).
    pub template_id: Patch<TemplateId>,
}

/// `POST /workflows/{id}/transitions`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTransition {
    /// Source step.
    pub from_step_id: StepId,
    /// Target step.
    pub to_step_id: StepId,
    /// Branch or outcome; `None` for the plain edge.
    pub condition: Option<TransitionCondition>,
    /// Lower wins; 0 when `None`.
    pub priority: Option<i32>,
}

/// `POST /workflows/{id}/executions`.
#[derive(Debug, Clone, PartialEq)]
pub struct StartExecution {
    /// The contact to run for.
    pub contact_id: ContactId,
    /// Becomes the execution's `event` (what `{{event.x}}` reads); `{}` when `None`.
    pub context: Option<Map<String, Value>>,
}

/// `GET /workflows/{id}/executions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListExecutions {
    /// Page and page size.
    pub page: PageRequest,
}

/// A template as a step shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateRef {
    /// Template id.
    pub id: TemplateId,
    /// Template name.
    pub name: String,
}

/// A step with its template and edges, as `GET /workflows/{id}` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepView {
    /// The step.
    pub step: Step,
    /// The template it sends, when it still exists.
    pub template: Option<TemplateRef>,
    /// Edges leaving it, by priority.
    pub outgoing_transitions: Vec<Transition>,
    /// Edges entering it, by priority.
    pub incoming_transitions: Vec<Transition>,
}

/// A workflow with its steps.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowView {
    /// The workflow.
    pub workflow: Workflow,
    /// Its steps, oldest first (the TRIGGER step first).
    pub steps: Vec<StepView>,
}

/// An execution with the record of each step it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionView {
    /// The execution.
    pub execution: Execution,
    /// Its step records, in the order the steps started.
    pub steps: Vec<StepRun>,
}

/// The workspace's webhook signing secret, as `GET /workflows/signing-secret` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningSecretView {
    /// The current `whsec_...` secret.
    pub secret: String,
    /// Until when the previous secret still signs, after a rotation.
    pub previous_expires_at: Option<chrono::DateTime<chrono::Utc>>,
}
