//! The typed commands and views of the workflow API.

use serde_json::{Map, Value};

use crate::app::{PageRequest, Patch};
use crate::model::{ContactId, StepId, TemplateId};
use crate::workflow::{
    Execution, Step, StepAction, StepRun, Transition, TransitionCondition, Trigger, Workflow,
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
#[derive(Debug, Clone, PartialEq)]
pub struct CreateWorkflow {
    /// Name (one line, required).
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// What starts executions (checked by [`crate::workflow::check_trigger`]; a SCHEDULE
    /// trigger's segment must be in the workspace).
    pub trigger: Trigger,
    /// Whether executions start; `false` by default.
    pub enabled: bool,
    /// Whether a contact may be enrolled again; `false` by default.
    pub allow_reentry: bool,
}

impl CreateWorkflow {
    /// A disabled workflow without re-entry or description.
    pub fn new(name: impl Into<String>, trigger: Trigger) -> Self {
        Self {
            name: name.into(),
            description: None,
            trigger,
            enabled: false,
            allow_reentry: false,
        }
    }
}

/// `PATCH /workflows/{id}`: each field kept when absent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkflowPatch {
    /// New name.
    pub name: Option<String>,
    /// New description, or cleared.
    pub description: Patch<String>,
    /// A new trigger, of any kind (the TRIGGER step follows it).
    pub trigger: Option<Trigger>,
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
    /// Name (one line).
    pub name: String,
    /// The kind with its configuration (not TRIGGER: every workflow has its one), checked by
    /// [`crate::workflow::check_action`].
    pub action: StepAction,
    /// Editor position, `{x, y}`; `{x: 0, y: 0}` when `None`.
    pub position: Option<Value>,
    /// The template a SEND_EMAIL step sends (required for it, refused for others).
    pub template_id: Option<TemplateId>,
}

impl CreateStep {
    /// A step at the origin, without a template.
    pub fn new(name: impl Into<String>, action: StepAction) -> Self {
        Self {
            name: name.into(),
            action,
            position: None,
            template_id: None,
        }
    }
}

/// `PATCH /workflows/{id}/steps/{stepId}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepPatch {
    /// New name.
    pub name: Option<String>,
    /// A replacement configuration. A step's kind never changes: an action of another kind
    /// is refused with [`crate::Error::StepKindMismatch`].
    pub config: Option<StepAction>,
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
