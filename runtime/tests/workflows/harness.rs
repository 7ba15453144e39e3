//! A workspace on the memory store with a manual clock, a capturing transport and a
//! recording webhook sink; helpers to build workflows and drive the jobs.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::TimeZone;
use posthorn_core::app::contacts::UpsertContact;
use posthorn_core::app::templates::CreateTemplate;
use posthorn_core::app::track::TrackEvent;
use posthorn_core::app::workflows::{
    CreateStep, CreateTransition, CreateWorkflow, ExecutionView, StartExecution, WorkflowView,
};
use posthorn_core::app::workspaces::{AddDomain, CreateWorkspace};
use posthorn_core::app::Caller;
use posthorn_core::model::{
    Contact, ContactId, EmailAddress, EventName, ExecutionId, StepId, Template, TemplateId,
    TemplateType, WorkflowId,
};
use posthorn_core::ports::{
    Clock, ManualClock, RetrySchedule, WebhookError, WebhookRequest, WebhookResponse, WebhookSink,
};
use posthorn_core::segment::Operator;
use posthorn_core::workflow::{
    DelayUnit, Execution, Recipient, Step, StepAction, StepCondition, TransitionCondition, Trigger,
};
use posthorn_core::{Engine, Settings};
use posthorn_memory::{CapturingTransport, MemoryStore};
use posthorn_runtime::EngineExt;
use serde_json::{Map, Value};

/// A scripted answer of the test sink.
pub type Scripted = Result<WebhookResponse, WebhookError>;

/// Records every request; answers from a script, then 200.
#[derive(Default)]
pub struct RecordingSink {
    pub requests: Mutex<Vec<WebhookRequest>>,
    pub script: Mutex<VecDeque<Scripted>>,
}

/// A response with `status` (and optionally a `Retry-After`).
pub fn response(status: u16, retry_after: Option<Duration>) -> Scripted {
    Ok(WebhookResponse {
        status,
        body_excerpt: "{\"ok\":true}".into(),
        body_truncated: false,
        retry_after,
        location: None,
        latency: Duration::from_millis(3),
    })
}

impl RecordingSink {
    pub fn answer(&self, answers: impl IntoIterator<Item = Scripted>) {
        self.script.lock().expect("script").extend(answers);
    }

    pub fn requests(&self) -> Vec<WebhookRequest> {
        self.requests.lock().expect("requests").clone()
    }
}

#[async_trait]
impl WebhookSink for RecordingSink {
    async fn deliver(&self, request: &WebhookRequest) -> Result<WebhookResponse, WebhookError> {
        self.requests
            .lock()
            .expect("requests")
            .push(request.clone());
        self.script
            .lock()
            .expect("script")
            .pop_front()
            .unwrap_or_else(|| response(200, None))
    }
}

pub struct World {
    pub engine: Engine,
    pub clock: Arc<ManualClock>,
    pub transport: Arc<CapturingTransport>,
    pub hooks: Arc<RecordingSink>,
    pub caller: Caller,
}

/// Webhook retries after 10 s, 20 s and 30 s, without jitter.
pub fn short_retries() -> RetrySchedule {
    RetrySchedule::new(
        vec![
            Duration::from_secs(10),
            Duration::from_secs(20),
            Duration::from_secs(30),
        ],
        0.0,
    )
    .expect("valid schedule")
}

impl World {
    pub async fn new() -> Self {
        let store = Arc::new(MemoryStore::new());
        let start = chrono::Utc
            .with_ymd_and_hms(2026, 3, 2, 10, 0, 0)
            .single()
            .expect("date");
        let clock = Arc::new(ManualClock::new(start));
        let transport = Arc::new(CapturingTransport::new());
        let hooks = Arc::new(RecordingSink::default());
        let engine = Engine::builder()
            .store(store.clone())
            .jobs(store)
            .transport(transport.clone())
            .clock(clock.clone())
            .webhooks(hooks.clone())
            .settings(Settings {
                webhook_retry: short_retries(),
                schedule_batch: 2,
                ..Settings::default()
            })
            .build()
            .expect("engine");
        let (ws, keys) = engine
            .create_workspace(CreateWorkspace::named("wf"))
            .await
            .expect("workspace");
        engine
            .admin_add_domain(&ws.id, AddDomain::verified("example.com"))
            .await
            .expect("domain");
        let caller = Caller::with_secret_key(ws, keys.record);
        Self {
            engine,
            clock,
            transport,
            hooks,
            caller,
        }
    }

    /// Runs every due job.
    pub async fn run(&self) {
        self.engine.run_due_jobs().await.expect("jobs run");
    }

    /// Moves the clock and runs what became due.
    pub async fn after(&self, by: chrono::Duration) {
        self.clock.advance(by);
        self.run().await;
    }

    pub async fn contact(&self, email: &str, data: Value) -> Contact {
        self.engine
            .upsert_contact(
                &self.caller,
                UpsertContact {
                    email: EmailAddress::parse(email).expect("email"),
                    subscribed: None,
                    data: data.as_object().cloned(),
                },
            )
            .await
            .expect("contact")
            .contact
    }

    pub async fn track(&self, email: &str, name: &str, data: Value) {
        let mut cmd = TrackEvent::new(
            EmailAddress::parse(email).expect("email"),
            EventName::parse_custom(name).expect("name"),
        );
        cmd.data = data.as_object().cloned();
        self.engine.track(&self.caller, cmd).await.expect("tracked");
    }

    pub async fn template(&self, kind: TemplateType) -> Template {
        self.engine
            .create_template(
                &self.caller,
                CreateTemplate {
                    name: "Welcome".into(),
                    description: None,
                    subject: "Hi {{contact.data.name ?? 'there'}}".into(),
                    body: "<p>Plan {{event.plan}} for {{email}} in {{workflow.name}}</p>".into(),
                    text: None,
                    from: Some(EmailAddress::parse("team@example.com").expect("from")),
                    from_name: None,
                    reply_to: None,
                    template_type: kind,
                },
            )
            .await
            .expect("template")
    }

    /// An enabled EVENT workflow on `event`.
    pub async fn event_workflow(&self, event: &str, allow_reentry: bool) -> WorkflowView {
        self.engine
            .create_workflow(
                &self.caller,
                CreateWorkflow {
                    enabled: true,
                    allow_reentry,
                    ..CreateWorkflow::new(
                        "Flow",
                        Trigger::Event {
                            event_name: event.into(),
                        },
                    )
                },
            )
            .await
            .expect("workflow")
    }

    /// An enabled MANUAL workflow.
    pub async fn manual_workflow(&self) -> WorkflowView {
        self.engine
            .create_workflow(
                &self.caller,
                CreateWorkflow {
                    enabled: true,
                    ..CreateWorkflow::new("Manual", Trigger::Manual {})
                },
            )
            .await
            .expect("workflow")
    }

    pub async fn step(&self, wf: &WorkflowView, action: StepAction) -> Step {
        self.step_with(wf, action, None).await
    }

    pub async fn step_with(
        &self,
        wf: &WorkflowView,
        action: StepAction,
        template: Option<&Template>,
    ) -> Step {
        let name = action.step_type().to_string();
        self.engine
            .create_step(
                &self.caller,
                &wf.workflow.id,
                CreateStep {
                    template_id: template.map(|t| TemplateId::from(t.id.as_str())),
                    ..CreateStep::new(name, action)
                },
            )
            .await
            .expect("step")
    }

    /// A CONDITION step (`field operator value`) after `from`, leading to `yes` or `no`.
    pub async fn condition(
        &self,
        wf: &WorkflowView,
        from: &StepId,
        (field, operator, value): (&str, Operator, Value),
        yes: &Step,
        no: &Step,
    ) -> Step {
        let condition = StepCondition {
            field: field.into(),
            operator,
            value: Some(value),
        };
        let cond = self.step(wf, StepAction::Condition(condition)).await;
        self.edge(wf, from, &cond, None).await;
        let branch = |b: &str| Some(serde_json::json!({ "branch": b }));
        self.edge(wf, &cond.id, yes, branch("yes")).await;
        self.edge(wf, &cond.id, no, branch("no")).await;
        cond
    }

    pub async fn edge(
        &self,
        wf: &WorkflowView,
        from: &StepId,
        to: &Step,
        condition: Option<Value>,
    ) {
        let condition: Option<TransitionCondition> =
            condition.map(|c| serde_json::from_value(c).expect("condition"));
        self.engine
            .create_transition(
                &self.caller,
                &wf.workflow.id,
                CreateTransition {
                    from_step_id: from.clone(),
                    to_step_id: to.id.clone(),
                    condition,
                    priority: None,
                },
            )
            .await
            .expect("transition");
    }

    /// The workflow's TRIGGER step id.
    pub fn trigger(wf: &WorkflowView) -> StepId {
        wf.steps[0].step.id.clone()
    }

    pub async fn start(&self, wf: &WorkflowView, contact: &Contact, context: Value) -> Execution {
        self.engine
            .start_execution(
                &self.caller,
                &wf.workflow.id,
                StartExecution {
                    contact_id: ContactId::from(contact.id.as_str()),
                    context: context.as_object().cloned().or_else(|| Some(Map::new())),
                },
            )
            .await
            .expect("started")
    }

    pub async fn execution(&self, wf: &WorkflowId, id: &ExecutionId) -> ExecutionView {
        self.engine
            .execution(&self.caller, wf, id)
            .await
            .expect("execution")
    }

    /// Every execution of a workflow, newest first.
    pub async fn executions(&self, wf: &WorkflowView) -> Vec<Execution> {
        self.engine
            .list_executions(&self.caller, &wf.workflow.id, Default::default())
            .await
            .expect("list")
            .data
    }

    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }
}

/// A DELAY step's action.
pub fn delay(amount: u32, unit: DelayUnit) -> StepAction {
    StepAction::Delay { amount, unit }
}

/// An EXIT step's action.
pub fn exit(reason: Option<&str>) -> StepAction {
    StepAction::Exit {
        reason: reason.map(str::to_string),
    }
}

/// A SEND_EMAIL step's action, to the execution's contact.
pub fn send_to_contact() -> StepAction {
    StepAction::SendEmail {
        recipient: Recipient::Contact,
    }
}

/// A WEBHOOK step's action: POST to `url` with the default body.
pub fn webhook(url: &str) -> StepAction {
    StepAction::Webhook {
        url: url.into(),
        method: None,
        headers: Default::default(),
        body: None,
    }
}
