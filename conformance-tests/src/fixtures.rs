//! Generated records and small helpers shared by the checks.
//!
//! Timestamps are whole milliseconds so that records survive a round trip through any
//! backend (PostgreSQL keeps microseconds) and compare equal.

use chrono::{DateTime, TimeDelta, Utc};
use posthorn_core::model::{
    AudienceType, Campaign, CampaignStatus, Contact, Domain, EmailAddress, EmailRecord,
    EmailStatus, Event, Segment, SegmentType, SourceType, Template, TemplateType, Workspace,
};
use posthorn_core::model::{
    CampaignId, ContactId, EmailId, ExecutionId, SegmentId, StepId, TemplateId, TransitionId,
    WorkflowId, WorkspaceId,
};
use posthorn_core::ports::{
    ChangeSet, Clock, JobPayload, Mailbox, NewJob, Store, StoreError, SystemClock, Write,
};
use posthorn_core::segment::{parse_condition, Condition};
use posthorn_core::workflow::{
    Execution, ExecutionStatus, Step, StepAction, StepRun, Transition, TransitionCondition,
    Trigger, Wait, Workflow,
};
use serde_json::{json, Map, Value};

use crate::StorePorts;

/// The current time, truncated to whole milliseconds.
pub fn now_ms() -> DateTime<Utc> {
    let now = Utc::now();
    DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
}

/// `base` plus `secs` seconds.
pub fn secs(base: DateTime<Utc>, secs: i64) -> DateTime<Utc> {
    base + TimeDelta::seconds(secs)
}

/// The clock fixtures take record ids from. Its ids increase in the order records are made
/// (one process-wide sequence), whatever creation time a fixture is given.
pub fn ids() -> &'static dyn Clock {
    &SystemClock
}

/// A fresh id of any kind from [`ids`]: for records a check builds by hand, and for ids
/// that name nothing stored.
pub fn fresh_id<T: From<String>>() -> T {
    T::from(ids().new_uuid().to_string())
}

/// A short random suffix.
pub fn unique() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_string()
}

/// A fresh address `{tag}-{random}@example.com`.
pub fn email(tag: &str) -> EmailAddress {
    EmailAddress::parse(&format!("{tag}-{}@example.com", unique()))
        .unwrap_or_else(|e| panic!("generated address for {tag:?} is invalid: {e}"))
}

/// A JSON object from `value` (which must be one).
pub fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("fixture data must be a JSON object, got {other}"),
    }
}

/// Commits `writes`, panicking with `what` on failure.
pub async fn commit(store: &dyn Store, what: &str, writes: Vec<Write>) {
    if let Err(e) = store.commit(ChangeSet { writes }).await {
        panic!("{what}: commit failed: {e}");
    }
}

/// Commits `writes` and expects a `Conflict`.
pub async fn commit_conflicts(store: &dyn Store, what: &str, writes: Vec<Write>) {
    match store.commit(ChangeSet { writes }).await {
        Err(StoreError::Conflict(_)) => {}
        Err(other) => panic!("{what}: expected StoreError::Conflict, got {other:?}"),
        Ok(()) => panic!("{what}: expected StoreError::Conflict, but the commit succeeded"),
    }
}

/// Creates and stores a workspace named `name-{random}` created at `at`.
pub async fn workspace_at(p: &StorePorts, name: &str, at: DateTime<Utc>) -> Workspace {
    let workspace = Workspace::new(ids(), format!("{name}-{}", unique()), at);
    commit(
        p.store.as_ref(),
        "storing a workspace",
        vec![Write::PutWorkspace(workspace.clone())],
    )
    .await;
    workspace
}

/// Creates and stores a workspace created now.
pub async fn workspace(p: &StorePorts, name: &str) -> Workspace {
    workspace_at(p, name, now_ms()).await
}

/// A new ACTIVE contact (not stored).
pub fn contact(
    workspace_id: &WorkspaceId,
    tag: &str,
    subscribed: bool,
    at: DateTime<Utc>,
) -> Contact {
    Contact::new(
        ids(),
        workspace_id,
        email(tag),
        subscribed,
        Map::new(),
        false,
        at,
    )
}

/// A new subscribed ACTIVE contact at exactly `address` (not stored), for tests whose
/// addresses must collide or be looked up by name.
pub fn contact_at(workspace_id: &WorkspaceId, address: &str) -> Contact {
    let address = EmailAddress::parse(address)
        .unwrap_or_else(|e| panic!("test address {address:?} is invalid: {e}"));
    Contact::new(
        ids(),
        workspace_id,
        address,
        true,
        Map::new(),
        false,
        Utc::now(),
    )
}

/// Stores a new ACTIVE contact and returns it as stored (version 0).
pub async fn insert_contact(
    p: &StorePorts,
    workspace_id: &WorkspaceId,
    tag: &str,
    subscribed: bool,
    at: DateTime<Utc>,
) -> Contact {
    let contact = contact(workspace_id, tag, subscribed, at);
    commit(
        p.store.as_ref(),
        "inserting a contact",
        vec![Write::InsertContact(contact.clone())],
    )
    .await;
    contact
}

/// Reads a contact that must exist.
pub async fn must_read_contact(
    store: &dyn Store,
    workspace_id: &WorkspaceId,
    id: &ContactId,
) -> Contact {
    store
        .contact(workspace_id, id)
        .await
        .unwrap_or_else(|e| panic!("reading contact {id} failed: {e}"))
        .unwrap_or_else(|| panic!("contact {id} should exist"))
}

/// A new domain (not stored).
pub fn domain(workspace_id: &WorkspaceId, name: &str, at: DateTime<Utc>) -> Domain {
    Domain::new(ids(), workspace_id.clone(), name.to_string(), at)
}

/// A new template (not stored).
pub fn template(
    workspace_id: &WorkspaceId,
    name: &str,
    subject: &str,
    template_type: TemplateType,
    at: DateTime<Utc>,
) -> Template {
    Template {
        id: TemplateId::generate(ids()),
        workspace_id: workspace_id.clone(),
        name: name.to_string(),
        description: None,
        subject: subject.to_string(),
        body: "<p>Hello {{name}}</p>".to_string(),
        text: Some("Hello {{name}}".to_string()),
        from: Some("news@example.com".to_string()),
        from_name: Some("News".to_string()),
        reply_to: None,
        template_type,
        created_at: at,
        updated_at: at,
    }
}

/// A new queued email record to `contact` (not stored).
pub fn email_record(contact: &Contact, at: DateTime<Utc>) -> EmailRecord {
    let id = EmailId::generate(ids());
    EmailRecord {
        message_id: format!("{id}@example.com"),
        id,
        workspace_id: contact.workspace_id.clone(),
        contact_id: contact.id.clone(),
        to: Mailbox {
            name: None,
            email: contact.email.to_string(),
        },
        from: Mailbox {
            name: Some("Sender".to_string()),
            email: "sender@example.com".to_string(),
        },
        reply_to: None,
        subject: "Hello".to_string(),
        html: "<p>Hello</p>".to_string(),
        text: Some("Hello".to_string()),
        headers: vec![("X-Test".to_string(), "1".to_string())],
        attachments: vec![],
        template_id: None,
        campaign_id: None,
        source_type: SourceType::Transactional,
        status: EmailStatus::Queued,
        provider_message_id: None,
        error: None,
        created_at: at,
        sent_at: None,
        updated_at: at,
        lifecycle: Default::default(),
    }
}

/// A new event (not stored).
pub fn event(
    workspace_id: &WorkspaceId,
    name: &str,
    contact_id: Option<&ContactId>,
    at: DateTime<Utc>,
) -> Event {
    Event::new(
        ids(),
        workspace_id,
        name,
        serde_json::json!({ "n": unique() }),
        contact_id.cloned(),
        None,
        at,
    )
}

/// A job due at `run_at`.
pub fn job(workspace_id: &WorkspaceId, run_at: DateTime<Utc>) -> NewJob {
    NewJob::at(
        ids(),
        JobPayload::DeliverEmail {
            workspace_id: workspace_id.clone(),
            email_id: EmailId::generate(ids()),
        },
        run_at,
    )
}

/// A condition from its API JSON shape (which must be valid).
pub fn condition(value: Value) -> Condition {
    parse_condition(&value, "condition")
        .unwrap_or_else(|e| panic!("fixture condition {value} is invalid: {e:?}"))
}

/// `data.plan equals "pro"`.
pub fn plan_is_pro() -> Condition {
    condition(json!({"logic": "AND", "groups": [{"filters": [
        {"field": "data.plan", "operator": "equals", "value": "pro"}
    ]}]}))
}

/// A new segment (not stored): DYNAMIC ones get [`plan_is_pro`] as their condition.
pub fn segment(
    workspace_id: &WorkspaceId,
    name: &str,
    segment_type: SegmentType,
    track_membership: bool,
    at: DateTime<Utc>,
) -> Segment {
    Segment {
        id: SegmentId::generate(ids()),
        workspace_id: workspace_id.clone(),
        name: name.to_string(),
        description: Some(format!("{name} segment")),
        segment_type,
        condition: (segment_type == SegmentType::Dynamic).then(plan_is_pro),
        track_membership,
        created_at: at,
        updated_at: at,
        tracking_since: track_membership.then_some(at),
        members_synced: false,
    }
}

/// A new DRAFT campaign to everyone (not stored).
pub fn campaign(workspace_id: &WorkspaceId, name: &str, at: DateTime<Utc>) -> Campaign {
    Campaign {
        id: CampaignId::generate(ids()),
        workspace_id: workspace_id.clone(),
        name: name.to_string(),
        description: None,
        subject: "News for {{email}}".to_string(),
        body: "<p>Hello</p>".to_string(),
        from: "news@example.com".to_string(),
        from_name: Some("News".to_string()),
        reply_to: None,
        audience_type: AudienceType::All,
        segment_id: None,
        audience_condition: None,
        status: CampaignStatus::Draft,
        scheduled_for: None,
        sent_at: None,
        total_recipients: 0,
        audience_until_id: None,
        expanded_through_id: None,
        expansion_done: false,
        created_at: at,
        updated_at: at,
        version: 0,
    }
}

/// A new queued email of `campaign_id` to `contact` (not stored).
pub fn campaign_email(
    contact: &Contact,
    campaign_id: &CampaignId,
    at: DateTime<Utc>,
) -> EmailRecord {
    let mut email = email_record(contact, at);
    email.campaign_id = Some(campaign_id.clone());
    email.source_type = SourceType::Campaign;
    email
}

/// Stores that `contact_id` is a member of `segment_id`.
pub fn add_member(
    workspace_id: &WorkspaceId,
    segment_id: &SegmentId,
    contact_id: &ContactId,
) -> Write {
    Write::AddSegmentMember {
        workspace_id: workspace_id.clone(),
        segment_id: segment_id.clone(),
        contact_id: contact_id.clone(),
    }
}

/// Removes the stored membership of `contact_id` in `segment_id`.
pub fn remove_member(
    workspace_id: &WorkspaceId,
    segment_id: &SegmentId,
    contact_id: &ContactId,
) -> Write {
    Write::RemoveSegmentMember {
        workspace_id: workspace_id.clone(),
        segment_id: segment_id.clone(),
        contact_id: contact_id.clone(),
    }
}

/// A new enabled workflow started by events named `event_name` (not stored).
pub fn workflow(
    workspace_id: &WorkspaceId,
    name: &str,
    event_name: &str,
    at: DateTime<Utc>,
) -> Workflow {
    workflow_with(
        workspace_id,
        name,
        Trigger::Event {
            event_name: event_name.to_string(),
        },
        at,
    )
}

/// A new enabled workflow with `trigger`, re-entry allowed (not stored).
pub fn workflow_with(
    workspace_id: &WorkspaceId,
    name: &str,
    trigger: Trigger,
    at: DateTime<Utc>,
) -> Workflow {
    Workflow {
        id: WorkflowId::generate(crate::fixtures::ids()),
        workspace_id: workspace_id.clone(),
        name: name.to_string(),
        description: Some(format!("{name} workflow")),
        enabled: true,
        trigger,
        allow_reentry: true,
        created_at: at,
        updated_at: at,
    }
}

/// A new step of `workflow` doing `action` (not stored).
pub fn step(workflow: &Workflow, name: &str, action: StepAction, at: DateTime<Utc>) -> Step {
    Step {
        id: StepId::generate(crate::fixtures::ids()),
        workspace_id: workflow.workspace_id.clone(),
        workflow_id: workflow.id.clone(),
        name: name.to_string(),
        position: json!({"x": 10, "y": 20.5}),
        action,
        template_id: None,
        created_at: at,
        updated_at: at,
    }
}

/// A new plain transition `from` → `to` (not stored).
pub fn transition(
    from: &Step,
    to: &Step,
    condition: Option<TransitionCondition>,
    priority: i32,
    at: DateTime<Utc>,
) -> Transition {
    Transition {
        id: TransitionId::generate(crate::fixtures::ids()),
        workspace_id: from.workspace_id.clone(),
        workflow_id: from.workflow_id.clone(),
        from_step_id: from.id.clone(),
        to_step_id: to.id.clone(),
        condition,
        priority,
        created_at: at,
        updated_at: at,
    }
}

/// A new RUNNING execution of `workflow` for `contact_id` (not stored); single entry when
/// the workflow does not allow re-entry.
pub fn execution(workflow: &Workflow, contact_id: &ContactId, at: DateTime<Utc>) -> Execution {
    Execution {
        id: ExecutionId::generate(crate::fixtures::ids()),
        workspace_id: workflow.workspace_id.clone(),
        workflow_id: workflow.id.clone(),
        contact_id: contact_id.clone(),
        status: ExecutionStatus::Running,
        event: json!({"plan": "pro", "n": 1, "nested": {"list": [1, "two", null]}}),
        current_step_id: None,
        waiting: None,
        reason: None,
        single_entry: !workflow.allow_reentry,
        started_at: at,
        completed_at: None,
        updated_at: at,
        version: 0,
    }
}

/// `execution` made WAITING at `step_id` for an event named `event_name`.
pub fn waiting_for(mut execution: Execution, step_id: &StepId, event_name: &str) -> Execution {
    execution.status = ExecutionStatus::Waiting;
    execution.current_step_id = Some(step_id.clone());
    execution.waiting = Some(Wait {
        step_id: step_id.clone(),
        event_name: Some(event_name.to_string()),
        until: None,
    });
    execution
}

/// A new RUNNING record of `step` in `execution` (not stored).
pub fn step_run(execution: &Execution, step: &Step, at: DateTime<Utc>) -> StepRun {
    posthorn_core::workflow::new_step_run(execution, step, at)
}
