//! `/workflows`: bodies into typed commands (steps, transitions, executions), and the shapes
//! of the answers. Each step kind's `config` and each trigger's `triggerConfig` are read into
//! core's typed `StepAction` and `Trigger` by [`super::workflow_config`], with field paths
//! such as `config.amount` and `triggerConfig.eventName`.

use chrono::{DateTime, Utc};
use deserr::{Deserr, IntoValue, Value as DValue, ValuePointerRef};
use posthorn_core::app::segments::Page;
use posthorn_core::app::workflows::{
    CreateStep, CreateTransition, CreateWorkflow, ExecutionView, StartExecution, StepPatch,
    StepView, TriggerType, WorkflowPatch, WorkflowView, MAX_WORKFLOW_DESCRIPTION_CHARS,
    MAX_WORKFLOW_NAME_CHARS,
};
use posthorn_core::model::{ContactId, StepId, TemplateId};
use posthorn_core::workflow::{
    Execution, Step, StepRun, StepType, Transition, TransitionCondition, Trigger, Workflow,
};
use posthorn_core::Error;
use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::de::{Filled, JsonObject, Line, Nullable, WireErrors};
use super::workflow_config::{patched_trigger, read_action, read_trigger};

type Name = Line<MAX_WORKFLOW_NAME_CHARS>;
type Description = Line<MAX_WORKFLOW_DESCRIPTION_CHARS>;
/// An id in a body (one line).
type IdText = Line<255>;
/// A transition's priority: any 32-bit integer, `3.0` included (JSON has one number type).
type Priority = super::admin::Integer<{ i32::MIN as i64 }, { i32::MAX as i64 }>;

/// `EVENT`, `MANUAL` or `SCHEDULE` (exact case), parsed by core's `TriggerType::parse`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TriggerKind(pub TriggerType);

impl Deserr<WireErrors> for TriggerKind {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        TriggerType::parse(&raw).map(TriggerKind).ok_or_else(|| {
            WireErrors::at(
                location,
                "invalid_enum",
                "triggerType must be EVENT, MANUAL or SCHEDULE",
            )
        })
    }
}

impl PartialSchema for TriggerKind {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["EVENT", "MANUAL", "SCHEDULE"]))
            .description(Some(
                "EVENT (`triggerConfig: {eventName}`, the default), MANUAL (`{}`) or SCHEDULE \
                 (`{cron, timezone?, segmentId}`).",
            ))
            .into()
    }
}

impl ToSchema for TriggerKind {}

const STEP_TYPES: [&str; 7] = [
    "SEND_EMAIL",
    "DELAY",
    "WAIT_FOR_EVENT",
    "CONDITION",
    "UPDATE_CONTACT",
    "WEBHOOK",
    "EXIT",
];

/// A step kind (exact case). TRIGGER reads too, and is refused by core (400
/// `INVALID_STATE`: every workflow has its one TRIGGER step).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepKind(pub StepType);

impl Deserr<WireErrors> for StepKind {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        serde_json::from_value::<StepType>(Value::String(raw))
            .map(StepKind)
            .map_err(|_| {
                WireErrors::at(
                    location,
                    "invalid_enum",
                    format!("type must be one of {}", STEP_TYPES.join(", ")),
                )
            })
    }
}

impl PartialSchema for StepKind {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(STEP_TYPES))
            .description(Some(
                "The step's kind; its `config` is checked for it (see docs/api.md).",
            ))
            .into()
    }
}

impl ToSchema for StepKind {}

/// Any JSON value (a step's `config`, a WEBHOOK body).
#[derive(Debug, Clone, PartialEq)]
pub struct AnyJson(pub Value);

impl Deserr<WireErrors> for AnyJson {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        _location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        Ok(AnyJson(Value::from(value)))
    }
}

impl PartialSchema for AnyJson {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "The configuration of the step's kind, e.g. `{\"amount\": 2, \"unit\": \"hours\"}` for DELAY.",
            ))
            .into()
    }
}

impl ToSchema for AnyJson {}

/// A transition's `condition`: `{branch: "yes"|"no"}` or `{outcome: "EVENT"|"TIMEOUT"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeCondition(pub TransitionCondition);

impl Deserr<WireErrors> for EdgeCondition {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        serde_json::from_value::<TransitionCondition>(Value::from(value))
            .map(EdgeCondition)
            .map_err(|_| {
                WireErrors::at(
                    location,
                    "invalid_value",
                    "condition must be null, {\"branch\": \"yes\"|\"no\"} or {\"outcome\": \"EVENT\"|\"TIMEOUT\"}",
                )
            })
    }
}

impl PartialSchema for EdgeCondition {
    fn schema() -> RefOr<Schema> {
        // One key and its values, as `TransitionCondition` reads them (other keys ignored).
        let one = |key: &str, values: [&str; 2]| {
            ObjectBuilder::new()
                .property(
                    key,
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some(values)),
                )
                .required(key)
        };
        // anyOf: with both keys, the first that reads wins, as serde's untagged enum does.
        utoipa::openapi::schema::AnyOfBuilder::new()
            .item(one("branch", ["yes", "no"]))
            .item(one("outcome", ["EVENT", "TIMEOUT"]))
            .description(Some(
                "`{\"branch\": \"yes\"|\"no\"}` out of a CONDITION step, `{\"outcome\": \
                 \"EVENT\"|\"TIMEOUT\"}` out of a WAIT_FOR_EVENT step; null or absent for the \
                 plain edge.",
            ))
            .into()
    }
}

impl ToSchema for EdgeCondition {}

/// Body of `POST /workflows`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = WorkflowCreate)]
#[schema(example = json!({
    "name": "Welcome",
    "triggerType": "EVENT",
    "triggerConfig": {"eventName": "signup"},
    "enabled": true
}))]
pub struct WorkflowCreateBody {
    /// Name (one line).
    #[schema(inline)]
    pub name: Filled<Name>,
    /// Description.
    #[deserr(default)]
    #[schema(inline)]
    pub description: Option<Description>,
    /// EVENT (default), MANUAL or SCHEDULE.
    #[deserr(default)]
    #[schema(inline)]
    pub trigger_type: Option<TriggerKind>,
    /// `{eventName}` (EVENT), `{}` (MANUAL), `{cron, timezone?, segmentId}` (SCHEDULE).
    #[deserr(default)]
    #[schema(inline)]
    pub trigger_config: Option<JsonObject>,
    /// Shorthand for `triggerConfig.eventName`.
    #[deserr(default)]
    pub event_name: Option<String>,
    /// Whether executions start (default false).
    #[deserr(default)]
    pub enabled: Option<bool>,
    /// Whether a contact may be enrolled again once its execution ended (default false).
    #[deserr(default)]
    pub allow_reentry: Option<bool>,
}

impl TryFrom<WorkflowCreateBody> for CreateWorkflow {
    type Error = Error;

    fn try_from(b: WorkflowCreateBody) -> Result<Self, Error> {
        let trigger = read_trigger(
            b.trigger_type.map_or(TriggerType::Event, |t| t.0),
            b.trigger_config.as_ref().map(|c| &c.0),
            b.event_name.as_deref(),
        )?;
        Ok(CreateWorkflow {
            name: b.name.0 .0,
            description: b.description.map(|d| d.0),
            trigger,
            enabled: b.enabled.unwrap_or(false),
            allow_reentry: b.allow_reentry.unwrap_or(false),
        })
    }
}

/// Body of `PATCH /workflows/{id}`: fields not given are left alone.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = WorkflowPatch)]
pub struct WorkflowPatchBody {
    /// Name (one line, not blank).
    #[deserr(default)]
    #[schema(inline)]
    pub name: Option<Filled<Name>>,
    /// Description; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub description: Nullable<Description>,
    /// A new trigger kind (with `triggerConfig`, or the stored one when the kind is the same).
    #[deserr(default)]
    #[schema(inline)]
    pub trigger_type: Option<TriggerKind>,
    /// A new trigger configuration.
    #[deserr(default)]
    #[schema(inline)]
    pub trigger_config: Option<JsonObject>,
    /// Enable or disable (disabling stops new enrolments only).
    #[deserr(default)]
    pub enabled: Option<bool>,
    /// Allow re-entry or not.
    #[deserr(default)]
    pub allow_reentry: Option<bool>,
}

impl WorkflowPatchBody {
    /// Whether the body names a trigger kind or configuration (then the stored trigger is
    /// needed to read it).
    pub fn touches_trigger(&self) -> bool {
        self.trigger_type.is_some() || self.trigger_config.is_some()
    }

    /// The typed patch; `current` is the stored trigger, needed when
    /// [`touches_trigger`](Self::touches_trigger).
    pub fn into_patch(self, current: Option<&Trigger>) -> Result<WorkflowPatch, Error> {
        let trigger = match current {
            Some(current) => patched_trigger(
                self.trigger_type.map(|t| t.0),
                self.trigger_config.as_ref().map(|c| &c.0),
                current,
            )?,
            None => None,
        };
        Ok(WorkflowPatch {
            name: self.name.map(|n| n.0 .0),
            description: self.description.into_patch().map(|d| d.0),
            trigger,
            enabled: self.enabled,
            allow_reentry: self.allow_reentry,
        })
    }
}

/// Body of `POST /workflows/{id}/steps`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = StepCreate)]
#[schema(example = json!({
    "type": "WEBHOOK",
    "name": "Notify CRM",
    "config": {"url": "https://crm.example.com/hooks/{{contact.email}}", "method": "POST"}
}))]
pub struct StepCreateBody {
    /// The kind.
    #[deserr(rename = "type")]
    #[serde(rename = "type")]
    #[schema(inline)]
    pub step_type: StepKind,
    /// Name (one line).
    #[schema(inline)]
    pub name: Filled<Name>,
    /// The kind's configuration; absent or `null` reads as `{}`.
    #[deserr(default)]
    #[schema(inline)]
    pub config: Option<AnyJson>,
    /// Editor position, `{x, y}`.
    #[deserr(default)]
    #[schema(inline)]
    pub position: Option<JsonObject>,
    /// The template a SEND_EMAIL step sends (required for it, refused for other kinds).
    #[deserr(default)]
    #[schema(inline)]
    pub template_id: Option<IdText>,
}

impl TryFrom<StepCreateBody> for CreateStep {
    type Error = Error;

    fn try_from(b: StepCreateBody) -> Result<Self, Error> {
        Ok(CreateStep {
            action: read_action(b.step_type.0, b.config.as_ref().map(|c| &c.0))?,
            name: b.name.0 .0,
            position: b.position.map(|p| Value::Object(p.0)),
            template_id: b.template_id.map(|t| TemplateId::from(t.0)),
        })
    }
}

/// Body of `PATCH /workflows/{id}/steps/{stepId}`: fields not given are left alone.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = StepPatch)]
pub struct StepPatchBody {
    /// Name (one line, not blank).
    #[deserr(default)]
    #[schema(inline)]
    pub name: Option<Filled<Name>>,
    /// A new configuration, checked for the step's kind (the kind never changes).
    #[deserr(default)]
    #[schema(inline)]
    pub config: Option<AnyJson>,
    /// Editor position.
    #[deserr(default)]
    #[schema(inline)]
    pub position: Option<JsonObject>,
    /// A new template (SEND_EMAIL only; `null` is refused on it).
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub template_id: Nullable<IdText>,
}

impl StepPatchBody {
    /// The typed patch; `kind` is the stored step's kind, needed when a `config` is given
    /// (it is read for that kind).
    pub fn into_patch(self, kind: Option<StepType>) -> Result<StepPatch, Error> {
        let config = match (self.config, kind) {
            (Some(config), Some(kind)) => Some(read_action(kind, Some(&config.0))?),
            _ => None,
        };
        Ok(StepPatch {
            name: self.name.map(|n| n.0 .0),
            config,
            position: self.position.map(|p| Value::Object(p.0)),
            template_id: self.template_id.into_patch().map(|t| TemplateId::from(t.0)),
        })
    }
}

/// Body of `POST /workflows/{id}/transitions`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = TransitionCreate)]
#[schema(example = json!({"fromStepId": "01J...", "toStepId": "01J...", "condition": {"branch": "yes"}}))]
pub struct TransitionCreateBody {
    /// Source step.
    #[schema(inline)]
    pub from_step_id: Filled<IdText>,
    /// Target step.
    #[schema(inline)]
    pub to_step_id: Filled<IdText>,
    /// Branch or outcome; absent or `null` for the plain edge.
    #[deserr(default)]
    #[schema(inline)]
    pub condition: Option<EdgeCondition>,
    /// Lower wins when several edges could be taken (default 0).
    #[deserr(default)]
    #[schema(inline)]
    pub priority: Option<Priority>,
}

impl From<TransitionCreateBody> for CreateTransition {
    fn from(b: TransitionCreateBody) -> Self {
        CreateTransition {
            from_step_id: StepId::from(b.from_step_id.0 .0),
            to_step_id: StepId::from(b.to_step_id.0 .0),
            condition: b.condition.map(|c| c.0),
            priority: b.priority.and_then(|p| i32::try_from(p.0).ok()),
        }
    }
}

/// Body of `POST /workflows/{id}/executions`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = ExecutionStart)]
#[schema(example = json!({"contactId": "01J...", "context": {"plan": "pro"}}))]
pub struct ExecutionStartBody {
    /// The contact to run for.
    #[schema(inline)]
    pub contact_id: Filled<IdText>,
    /// Becomes the execution's `event` (what `{{event.x}}` reads); `{}` when absent.
    #[deserr(default)]
    #[schema(inline)]
    pub context: Option<JsonObject>,
}

impl From<ExecutionStartBody> for StartExecution {
    fn from(b: ExecutionStartBody) -> Self {
        StartExecution {
            contact_id: ContactId::from(b.contact_id.0 .0),
            context: b.context.map(|c| c.0),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------

/// A template as a step shows it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = StepTemplate)]
pub struct TemplateRefBody {
    /// Template id.
    pub id: String,
    /// Template name.
    pub name: String,
}

/// A page of a workflow's executions, newest first.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionPage {
    /// The executions.
    pub executions: Vec<Execution>,
    /// Executions in all pages.
    pub total: u64,
    /// 1-based page number.
    pub page: u64,
    /// Page size.
    pub page_size: u64,
    /// Number of pages.
    pub total_pages: u64,
}

impl From<Page<Execution>> for ExecutionPage {
    fn from(p: Page<Execution>) -> Self {
        ExecutionPage {
            executions: p.data,
            total: p.total,
            page: p.page,
            page_size: p.page_size,
            total_pages: p.total_pages,
        }
    }
}

/// An execution with the record of each step it ran.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ExecutionWithSteps)]
pub struct ExecutionBody {
    /// The execution.
    #[serde(flatten)]
    pub execution: Execution,
    /// Each step it ran, in the order they started: status, output, error and, for WEBHOOK
    /// steps, every HTTP attempt.
    pub steps: Vec<StepRun>,
}

impl From<ExecutionView> for ExecutionBody {
    fn from(v: ExecutionView) -> Self {
        ExecutionBody {
            execution: v.execution,
            steps: v.steps,
        }
    }
}

/// The workspace's webhook signing secret.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningSecret {
    /// The `whsec_...` secret WEBHOOK steps sign with (Standard Webhooks).
    pub secret: String,
    /// After a rotation, until when the previous secret still signs beside it.
    #[schema(required = true)]
    #[serde(with = "posthorn_core::model::timestamp::option")]
    pub previous_expires_at: Option<DateTime<Utc>>,
}

// ---------------------------------------------------------------------------------------
// Workflow and step answers: core's records flatten a tagged trigger and a tagged action;
// the answers spell them out field by field, so the document states each field.
// ---------------------------------------------------------------------------------------

/// `EVENT`, `MANUAL` or `SCHEDULE`.
#[derive(Debug, Serialize, ToSchema)]
#[allow(clippy::upper_case_acronyms)]
pub enum TriggerTypeName {
    /// A stored event with `triggerConfig.eventName`.
    EVENT,
    /// `POST /workflows/{id}/executions` only.
    MANUAL,
    /// Each tick of `triggerConfig.cron` enrols `triggerConfig.segmentId`'s members.
    SCHEDULE,
}

/// The `content` half of a value serialized as `{tag, content}` (`{}` when absent).
fn tagged_content<T: Serialize>(value: &T, content: &str) -> Value {
    serde_json::to_value(value)
        .ok()
        .and_then(|mut v| v.get_mut(content).map(Value::take))
        .unwrap_or_else(|| Value::Object(Default::default()))
}

/// A workflow (without its steps).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Workflow)]
pub struct WorkflowRecord {
    /// Workflow id.
    pub id: String,
    /// Owning workspace.
    pub project_id: String,
    /// Name.
    pub name: String,
    /// Description.
    #[schema(required = true)]
    pub description: Option<String>,
    /// Whether new executions start.
    pub enabled: bool,
    /// What starts executions.
    pub trigger_type: TriggerTypeName,
    /// `{eventName}` (EVENT), `{}` (MANUAL), `{cron, timezone?, segmentId}` (SCHEDULE).
    #[schema(value_type = Object)]
    pub trigger_config: Value,
    /// Whether a contact may be enrolled again once its execution ended.
    pub allow_reentry: bool,
    /// Creation time.
    #[serde(with = "posthorn_core::model::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "posthorn_core::model::timestamp")]
    pub updated_at: DateTime<Utc>,
}

impl From<Workflow> for WorkflowRecord {
    fn from(w: Workflow) -> Self {
        let trigger_type = match &w.trigger {
            Trigger::Event { .. } => TriggerTypeName::EVENT,
            Trigger::Manual {} => TriggerTypeName::MANUAL,
            Trigger::Schedule { .. } => TriggerTypeName::SCHEDULE,
        };
        WorkflowRecord {
            trigger_config: tagged_content(&w.trigger, "triggerConfig"),
            trigger_type,
            id: w.id.into_string(),
            project_id: w.workspace_id.into_string(),
            name: w.name,
            description: w.description,
            enabled: w.enabled,
            allow_reentry: w.allow_reentry,
            created_at: w.created_at,
            updated_at: w.updated_at,
        }
    }
}

/// A step of a workflow.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Step)]
pub struct StepRecord {
    /// Step id.
    pub id: String,
    /// The workflow it belongs to.
    pub workflow_id: String,
    /// Name.
    pub name: String,
    /// Editor position, `{x, y}`.
    #[schema(value_type = Object)]
    pub position: Value,
    /// The kind (TRIGGER included).
    #[serde(rename = "type")]
    pub step_type: StepType,
    /// The kind's configuration.
    #[schema(value_type = Object)]
    pub config: Value,
    /// The template a SEND_EMAIL step sends.
    #[schema(required = true)]
    pub template_id: Option<String>,
    /// Creation time.
    #[serde(with = "posthorn_core::model::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "posthorn_core::model::timestamp")]
    pub updated_at: DateTime<Utc>,
}

impl From<Step> for StepRecord {
    fn from(s: Step) -> Self {
        StepRecord {
            step_type: s.action.step_type(),
            config: tagged_content(&s.action, "config"),
            id: s.id.into_string(),
            workflow_id: s.workflow_id.into_string(),
            name: s.name,
            position: s.position,
            template_id: s.template_id.map(TemplateId::into_string),
            created_at: s.created_at,
            updated_at: s.updated_at,
        }
    }
}

/// A step with its template and edges.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowStep {
    #[serde(flatten)]
    pub step: StepRecord,
    /// `{id, name}` of the template a SEND_EMAIL step sends; null for other kinds.
    #[schema(required = true)]
    pub template: Option<TemplateRefBody>,
    /// Edges leaving the step.
    pub outgoing_transitions: Vec<Transition>,
    /// Edges entering the step.
    pub incoming_transitions: Vec<Transition>,
}

impl From<StepView> for WorkflowStep {
    fn from(v: StepView) -> Self {
        WorkflowStep {
            step: v.step.into(),
            template: v.template.map(|t| TemplateRefBody {
                id: t.id.into(),
                name: t.name,
            }),
            outgoing_transitions: v.outgoing_transitions,
            incoming_transitions: v.incoming_transitions,
        }
    }
}

/// A workflow with its steps, the TRIGGER step first.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkflowWithSteps {
    #[serde(flatten)]
    pub workflow: WorkflowRecord,
    /// The steps.
    pub steps: Vec<WorkflowStep>,
}

impl From<WorkflowView> for WorkflowWithSteps {
    fn from(v: WorkflowView) -> Self {
        WorkflowWithSteps {
            workflow: v.workflow.into(),
            steps: v.steps.into_iter().map(WorkflowStep::from).collect(),
        }
    }
}

/// A page of workflows, newest first, without steps.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowPage {
    /// The workflows.
    pub data: Vec<WorkflowRecord>,
    /// 1-based page number.
    pub page: u64,
    /// Page size.
    pub page_size: u64,
    /// Workflows in all pages.
    pub total: u64,
    /// Number of pages.
    pub total_pages: u64,
}

impl From<Page<Workflow>> for WorkflowPage {
    fn from(p: Page<Workflow>) -> Self {
        WorkflowPage {
            data: p.data.into_iter().map(WorkflowRecord::from).collect(),
            page: p.page,
            page_size: p.page_size,
            total: p.total,
            total_pages: p.total_pages,
        }
    }
}
