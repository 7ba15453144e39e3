//! Step kinds, branches, re-entry and crash safety.

use posthorn_core::app::lifecycle::Feedback;
use posthorn_core::model::{BounceType, EmailId, ExecutionId, SourceType, TemplateType};
use posthorn_core::ports::{ChangeSet, JobPayload, NewJob, Write};
use posthorn_core::segment::Operator;
use posthorn_core::workflow::{
    DelayUnit, ExecutionStatus, Recipient, StepAction, StepRunStatus, SubscriptionAction,
};
use serde_json::json;

use crate::harness::{delay, exit, send_to_contact, webhook, World};

#[tokio::test]
async fn an_event_starts_the_workflow_and_sends_the_template_as_a_workflow_email() {
    let w = World::new().await;
    let template = w.template(TemplateType::Transactional).await;
    let wf = w.event_workflow("signup", false).await;
    let send = w.step_with(&wf, send_to_contact(), Some(&template)).await;
    w.edge(&wf, &World::trigger(&wf), &send, None).await;
    w.contact("ann@example.org", json!({"name": "Ann"})).await;
    w.track("ann@example.org", "signup", json!({"plan": "pro"}))
        .await;
    w.run().await;

    let executions = w.executions(&wf).await;
    assert_eq!(executions.len(), 1);
    let view = w.execution(&wf.workflow.id, &executions[0].id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    assert_eq!(view.execution.event, json!({"plan": "pro"}));
    assert_eq!(view.steps.len(), 2);
    let email_id = view.steps[1]
        .output
        .as_ref()
        .and_then(|o| o["emailId"].as_str())
        .map(posthorn_core::model::EmailId::from);
    let email_id = email_id.expect("the step records the email it queued");
    let record = w
        .engine
        .store
        .email(w.caller.workspace_id(), &email_id)
        .await
        .expect("read")
        .expect("email record");
    assert_eq!(record.source_type, SourceType::Workflow);
    assert_eq!(record.template_id.as_ref(), Some(&template.id));
    let sent = w.transport.messages_to("ann@example.org");
    assert_eq!(sent.len(), 1, "delivered through the send path");
    assert_eq!(sent[0].subject, "Hi Ann");
    assert!(
        sent[0]
            .html
            .contains("Plan pro for ann@example.org in Flow"),
        "{}",
        sent[0].html
    );
}

#[tokio::test]
async fn a_marketing_template_is_never_sent_to_an_unsubscribed_contact() {
    let w = World::new().await;
    let template = w.template(TemplateType::Marketing).await;
    let wf = w.manual_workflow().await;
    let send = w.step_with(&wf, send_to_contact(), Some(&template)).await;
    w.edge(&wf, &World::trigger(&wf), &send, None).await;
    let contact = w.contact("bob@example.org", json!({})).await;
    w.engine
        .patch_contact(
            &w.caller,
            &contact.id,
            posthorn_core::app::contacts::ContactPatch {
                subscribed: Some(false),
                ..Default::default()
            },
        )
        .await
        .expect("unsubscribed");
    let exec = w.start(&wf, &contact, json!({})).await;
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        view.steps[1].output.as_ref().map(|o| o["skipped"].clone()),
        Some(json!(true))
    );
    assert!(w.transport.messages().is_empty());
}

/// The email a SEND_EMAIL step (the execution's second step) queued.
async fn step_email(
    w: &World,
    wf: &posthorn_core::app::workflows::WorkflowView,
    id: &ExecutionId,
) -> Option<EmailId> {
    let view = w.execution(&wf.workflow.id, id).await;
    view.steps[1]
        .output
        .as_ref()
        .and_then(|o| o["emailId"].as_str())
        .map(EmailId::from)
}

#[tokio::test]
async fn no_workflow_email_goes_to_an_address_that_bounced_for_good() {
    let w = World::new().await;
    let template = w.template(TemplateType::Transactional).await;
    let wf = w.event_workflow("signup", true).await;
    let send = w.step_with(&wf, send_to_contact(), Some(&template)).await;
    w.edge(&wf, &World::trigger(&wf), &send, None).await;
    w.contact("ann@example.org", json!({})).await;
    w.track("ann@example.org", "signup", json!({})).await;
    w.run().await;
    let first = w.executions(&wf).await;
    let email_id = step_email(&w, &wf, &first[0].id)
        .await
        .expect("first email");
    let bounce = Feedback::Bounce {
        bounce_type: BounceType::Permanent,
        detail: None,
    };
    let now = w.engine.clock.now();
    w.engine
        .record_feedback(w.caller.workspace_id(), &email_id, &bounce, now)
        .await
        .expect("bounce recorded");
    assert_eq!(w.transport.messages_to("ann@example.org").len(), 1);

    w.track("ann@example.org", "signup", json!({})).await;
    w.run().await;
    let executions = w.executions(&wf).await;
    assert_eq!(executions.len(), 2);
    let second = executions
        .iter()
        .find(|e| e.id != first[0].id)
        .expect("second execution");
    let view = w.execution(&wf.workflow.id, &second.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    let output = view.steps[1].output.clone().unwrap_or_default();
    assert_eq!(output["skipped"], json!(true), "{output}");
    assert!(
        output["reason"]
            .as_str()
            .is_some_and(|r| r.contains("bounced for good")),
        "{output}"
    );
    assert_eq!(
        w.transport.messages_to("ann@example.org").len(),
        1,
        "nothing more sent"
    );
}

#[tokio::test]
async fn a_condition_takes_the_yes_or_the_no_branch() {
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let yes = w.step(&wf, exit(Some("big"))).await;
    let no = w.step(&wf, exit(Some("small"))).await;
    let test = ("event.total", Operator::GreaterThan, json!(100));
    w.condition(&wf, &World::trigger(&wf), test, &yes, &no)
        .await;

    let big = w
        .start(
            &wf,
            &w.contact("a@example.org", json!({})).await,
            json!({"total": 150}),
        )
        .await;
    let small = w
        .start(
            &wf,
            &w.contact("b@example.org", json!({})).await,
            json!({"total": 20}),
        )
        .await;
    let missing = w
        .start(&wf, &w.contact("c@example.org", json!({})).await, json!({}))
        .await;
    w.run().await;
    for (exec, reason, branch) in [
        (big, "big", "yes"),
        (small, "small", "no"),
        (missing, "small", "no"),
    ] {
        let view = w.execution(&wf.workflow.id, &exec.id).await;
        assert_eq!(view.execution.status, ExecutionStatus::Completed);
        assert_eq!(view.execution.reason.as_deref(), Some(reason));
        assert_eq!(view.steps[1].output, Some(json!({"branch": branch})));
    }
}

#[tokio::test]
async fn update_contact_merges_data_and_unsubscribes_with_the_usual_event() {
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let update = w
        .step(
            &wf,
            StepAction::UpdateContact {
                // Contact data is JSON by nature; only its values are given as JSON here.
                updates: [
                    ("plan", json!("{{event.plan}}")),
                    ("seats", json!("{{event.seats}}")),
                    ("source", json!("flow {{workflow.name}}")),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
                subscription_action: SubscriptionAction::Unsubscribe,
            },
        )
        .await;
    w.edge(&wf, &World::trigger(&wf), &update, None).await;
    let contact = w.contact("dee@example.org", json!({"keep": 1})).await;
    let exec = w
        .start(&wf, &contact, json!({"plan": "team", "seats": 5}))
        .await;
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    let after = w
        .engine
        .contact(&w.caller, &contact.id)
        .await
        .expect("contact");
    assert!(!after.subscribed);
    assert_eq!(
        serde_json::Value::Object(after.data),
        json!({"keep": 1, "plan": "team", "seats": 5, "source": "flow Manual"})
    );
    let events = w
        .engine
        .store
        .events(
            w.caller.workspace_id(),
            &posthorn_core::ports::EventQuery {
                name: Some("contact.unsubscribed".into()),
                contact_id: Some(contact.id.clone()),
                limit: 10,
            },
        )
        .await
        .expect("events");
    assert_eq!(events.len(), 1);
}

#[tokio::test]
async fn update_contact_leaves_a_key_whose_lone_variable_is_missing() {
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let update = w
        .step(
            &wf,
            StepAction::UpdateContact {
                updates: [
                    // Missing from the context: the stored value stays.
                    ("plan", json!("{{event.plan}}")),
                    // An explicit null in the context, or written in the updates, removes.
                    ("trial", json!("{{event.trial}}")),
                    ("legacy", json!(null)),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
                subscription_action: SubscriptionAction::None,
            },
        )
        .await;
    w.edge(&wf, &World::trigger(&wf), &update, None).await;
    let contact = w
        .contact(
            "kept@example.org",
            json!({"plan": "pro", "trial": true, "legacy": 1, "x": 1}),
        )
        .await;
    let exec = w.start(&wf, &contact, json!({"trial": null})).await;
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        view.steps[1].output.as_ref().map(|o| o["updated"].clone()),
        Some(json!(["legacy", "trial"]))
    );
    let after = w
        .engine
        .contact(&w.caller, &contact.id)
        .await
        .expect("contact");
    assert_eq!(
        serde_json::Value::Object(after.data),
        json!({"plan": "pro", "x": 1})
    );
}

#[tokio::test]
async fn a_disabled_workflow_starts_nothing() {
    let w = World::new().await;
    let wf = w.event_workflow("signup", false).await;
    w.engine
        .patch_workflow(
            &w.caller,
            &wf.workflow.id,
            posthorn_core::app::workflows::WorkflowPatch {
                enabled: Some(false),
                ..Default::default()
            },
        )
        .await
        .expect("disabled");
    w.track("e@example.org", "signup", json!({})).await;
    w.run().await;
    assert!(w.executions(&wf).await.is_empty());
    let contact = w.contact("e@example.org", json!({})).await;
    let manual = w
        .engine
        .start_execution(
            &w.caller,
            &wf.workflow.id,
            posthorn_core::app::workflows::StartExecution {
                contact_id: contact.id.as_str().into(),
                context: None,
            },
        )
        .await;
    assert!(matches!(manual, Err(posthorn_core::Error::InvalidState(_))));
}

#[tokio::test]
async fn without_reentry_a_contact_is_enrolled_once_ever() {
    let w = World::new().await;
    let wf = w.event_workflow("visit", false).await;
    w.track("f@example.org", "visit", json!({})).await;
    w.run().await;
    w.track("f@example.org", "visit", json!({})).await;
    w.run().await;
    let executions = w.executions(&wf).await;
    assert_eq!(executions.len(), 1);
    assert_eq!(executions[0].status, ExecutionStatus::Completed);
}

#[tokio::test]
async fn with_reentry_a_contact_is_enrolled_again_only_once_the_last_run_ended() {
    let w = World::new().await;
    let wf = w.event_workflow("visit", true).await;
    let delay = w.step(&wf, delay(1, DelayUnit::Hours)).await;
    w.edge(&wf, &World::trigger(&wf), &delay, None).await;
    w.track("g@example.org", "visit", json!({})).await;
    w.run().await;
    // Still waiting: a second event does not enrol again.
    w.track("g@example.org", "visit", json!({})).await;
    w.run().await;
    assert_eq!(w.executions(&wf).await.len(), 1);
    w.after(chrono::Duration::hours(1)).await;
    assert_eq!(
        w.executions(&wf).await[0].status,
        ExecutionStatus::Completed
    );
    w.track("g@example.org", "visit", json!({})).await;
    w.run().await;
    assert_eq!(w.executions(&wf).await.len(), 2);
}

#[tokio::test]
async fn running_a_step_job_twice_queues_one_email() {
    let w = World::new().await;
    let template = w.template(TemplateType::Transactional).await;
    let wf = w.manual_workflow().await;
    let send = w.step_with(&wf, send_to_contact(), Some(&template)).await;
    w.edge(&wf, &World::trigger(&wf), &send, None).await;
    let contact = w.contact("h@example.org", json!({})).await;
    let exec = w.start(&wf, &contact, json!({})).await;
    // The trigger step runs; then the send step's job is duplicated, as after a crash that
    // left its first run unsettled.
    let claimed = w
        .engine
        .jobs
        .claim(w.now(), std::time::Duration::from_secs(60), 1)
        .await
        .expect("claim");
    w.engine.run_job(&claimed[0]).await.expect("trigger step");
    let duplicate = JobPayload::RunWorkflowStep {
        workspace_id: exec.workspace_id.clone(),
        execution_id: exec.id.clone(),
        step_id: send.id.clone(),
    };
    let mut changes = ChangeSet::new();
    changes.push(Write::EnqueueJob(NewJob::at(
        &*w.clock,
        duplicate.clone(),
        w.now(),
    )));
    changes.push(Write::EnqueueJob(NewJob::at(&*w.clock, duplicate, w.now())));
    w.engine.store.commit(changes).await.expect("duplicates");
    w.run().await;
    assert_eq!(w.transport.messages_to("h@example.org").len(), 1);
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    assert_eq!(
        view.steps
            .iter()
            .filter(|r| r.status == StepRunStatus::Completed)
            .count(),
        2
    );
}

#[tokio::test]
async fn a_cancelled_execution_stops_where_it_waits() {
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let delay = w.step(&wf, delay(5, DelayUnit::Minutes)).await;
    let exit = w.step(&wf, exit(None)).await;
    w.edge(&wf, &World::trigger(&wf), &delay, None).await;
    w.edge(&wf, &delay.id, &exit, None).await;
    let exec = w
        .start(&wf, &w.contact("i@example.org", json!({})).await, json!({}))
        .await;
    w.run().await;
    assert_eq!(
        w.execution(&wf.workflow.id, &exec.id)
            .await
            .execution
            .status,
        ExecutionStatus::Waiting
    );
    let deleted = w.engine.delete_workflow(&w.caller, &wf.workflow.id).await;
    assert!(
        matches!(deleted, Err(posthorn_core::Error::Conflict(_))),
        "{deleted:?}"
    );
    w.engine
        .cancel_execution(&w.caller, &wf.workflow.id, &exec.id)
        .await
        .expect("cancelled");
    w.after(chrono::Duration::minutes(5)).await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Cancelled);
    assert_eq!(view.steps.len(), 2, "the exit step never ran");
    assert_eq!(view.steps[1].status, StepRunStatus::Cancelled);
    w.engine
        .delete_workflow(&w.caller, &wf.workflow.id)
        .await
        .expect("deletable once nothing runs");
}

#[tokio::test]
async fn an_internal_event_triggers_a_workflow_too() {
    let w = World::new().await;
    let wf = w.event_workflow("contact.unsubscribed", false).await;
    let contact = w.contact("j@example.org", json!({})).await;
    w.engine
        .patch_contact(
            &w.caller,
            &contact.id,
            posthorn_core::app::contacts::ContactPatch {
                subscribed: Some(false),
                ..Default::default()
            },
        )
        .await
        .expect("unsubscribed");
    w.run().await;
    let executions = w.executions(&wf).await;
    assert_eq!(executions.len(), 1);
    assert_eq!(executions[0].contact_id, contact.id);
    assert_eq!(executions[0].status, ExecutionStatus::Completed);
}

#[tokio::test]
async fn a_delivered_email_triggers_an_email_sent_workflow() {
    let w = World::new().await;
    let template = w.template(TemplateType::Transactional).await;
    let flow = w.event_workflow("signup", false).await;
    let send = w.step_with(&flow, send_to_contact(), Some(&template)).await;
    w.edge(&flow, &World::trigger(&flow), &send, None).await;
    let on_sent = w.event_workflow("email.sent", false).await;
    let ann = w.contact("ann@example.org", json!({"name": "Ann"})).await;
    w.track("ann@example.org", "signup", json!({"plan": "pro"}))
        .await;
    w.run().await;
    assert_eq!(w.transport.messages_to("ann@example.org").len(), 1);
    let executions = w.executions(&on_sent).await;
    assert_eq!(executions.len(), 1, "the delivery's email.sent starts it");
    assert_eq!(executions[0].contact_id, ann.id);
}

#[tokio::test]
async fn a_custom_recipient_is_rendered_and_gets_its_own_contact() {
    let w = World::new().await;
    let template = w.template(TemplateType::Transactional).await;
    let wf = w.manual_workflow().await;
    let send = w
        .step_with(
            &wf,
            StepAction::SendEmail {
                recipient: Recipient::Custom {
                    email: "{{event.manager}}".into(),
                },
            },
            Some(&template),
        )
        .await;
    w.edge(&wf, &World::trigger(&wf), &send, None).await;
    let contact = w.contact("k@example.org", json!({})).await;
    let exec = w
        .start(
            &wf,
            &contact,
            json!({"manager": "boss@example.org", "plan": "x"}),
        )
        .await;
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    let sent = w.transport.messages_to("boss@example.org");
    assert_eq!(sent.len(), 1);
    // The variables are the execution's: its contact's address, not the recipient's.
    assert!(
        sent[0].html.contains("for k@example.org"),
        "{}",
        sent[0].html
    );
    assert!(w.transport.messages_to("k@example.org").is_empty());
}

#[tokio::test]
async fn a_send_from_an_unverified_sender_fails_the_execution() {
    let w = World::new().await;
    let template = w.template(TemplateType::Transactional).await;
    // The domain loses its verification after the template was written.
    let mut domain = w
        .engine
        .store
        .domains(w.caller.workspace_id())
        .await
        .expect("domains")
        .remove(0);
    domain.verified = false;
    let mut changes = ChangeSet::new();
    changes.push(Write::UpdateDomain(domain));
    w.engine.store.commit(changes).await.expect("unverified");
    let wf = w.manual_workflow().await;
    let send = w.step_with(&wf, send_to_contact(), Some(&template)).await;
    w.edge(&wf, &World::trigger(&wf), &send, None).await;
    let exec = w
        .start(&wf, &w.contact("l@example.org", json!({})).await, json!({}))
        .await;
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Failed);
    assert!(view.steps[1]
        .error
        .as_deref()
        .is_some_and(|e| e.contains("not a verified domain")));
    assert!(w.transport.messages().is_empty());
}

/// trigger → `event.plan` equals "pro"? → yes: WEBHOOK, no: EXIT "free".
async fn plan_flow(w: &World) -> posthorn_core::app::workflows::WorkflowView {
    let wf = w.event_workflow("signup", true).await;
    let hook = w.step(&wf, webhook("https://hooks.example/in")).await;
    let free = w.step(&wf, exit(Some("free"))).await;
    let test = ("event.plan", Operator::Equals, json!("pro"));
    w.condition(&wf, &World::trigger(&wf), test, &hook, &free)
        .await;
    wf
}

async fn queued(w: &World) -> u64 {
    w.engine.jobs.stats(w.now()).await.expect("stats").queued
}

#[tokio::test]
async fn pure_steps_run_in_the_commit_that_reaches_them_one_job_per_side_effect() {
    let w = World::new().await;
    let wf = plan_flow(&w).await;
    w.contact("pro@example.org", json!({})).await;
    w.track("pro@example.org", "signup", json!({"plan": "pro"}))
        .await;
    w.track("free@example.org", "signup", json!({"plan": "free"}))
        .await;
    // Each event queues its dispatch; the dispatch enrols, runs the trigger and the
    // condition, and queues one job only where a webhook is to be called.
    assert_eq!(queued(&w).await, 2);
    let ran = w.engine.run_due_jobs().await.expect("jobs run");
    assert_eq!(
        ran, 3,
        "two dispatches and one webhook step, no job per pure step"
    );
    assert_eq!(queued(&w).await, 0);
    assert_eq!(w.hooks.requests().len(), 1);

    let executions = w.executions(&wf).await;
    for (plan, reason) in [("pro", None), ("free", Some("free"))] {
        let execution = executions
            .iter()
            .find(|e| e.event["plan"] == json!(plan))
            .expect("enrolled");
        let view = w.execution(&wf.workflow.id, &execution.id).await;
        assert_eq!(view.execution.status, ExecutionStatus::Completed);
        assert_eq!(view.execution.reason.as_deref(), reason);
        let statuses: Vec<_> = view.steps.iter().map(|s| s.status).collect();
        assert_eq!(statuses, [StepRunStatus::Completed; 3]);
        let branch = if plan == "pro" { "yes" } else { "no" };
        assert_eq!(view.steps[1].output, Some(json!({ "branch": branch })));
    }
}

#[tokio::test]
async fn a_condition_after_update_contact_reads_the_updated_contact() {
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let update = w
        .step(
            &wf,
            StepAction::UpdateContact {
                updates: [("plan".to_string(), json!("pro"))].into_iter().collect(),
                subscription_action: SubscriptionAction::None,
            },
        )
        .await;
    let pro = w.step(&wf, exit(Some("pro"))).await;
    let free = w.step(&wf, exit(Some("free"))).await;
    w.edge(&wf, &World::trigger(&wf), &update, None).await;
    let test = ("data.plan", Operator::Equals, json!("pro"));
    w.condition(&wf, &update.id, test, &pro, &free).await;
    let contact = w.contact("flip@example.org", json!({"plan": "free"})).await;
    let exec = w.start(&wf, &contact, json!({})).await;
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    assert_eq!(view.execution.reason.as_deref(), Some("pro"));
}

#[tokio::test]
async fn edges_that_lead_an_execution_back_to_a_step_it_ran_fail_it_with_the_reason() {
    let w = World::new().await;
    let template = w.template(TemplateType::Transactional).await;
    let wf = w.manual_workflow().await;
    let send = w.step_with(&wf, send_to_contact(), Some(&template)).await;
    let wait = w.step(&wf, delay(1, DelayUnit::Minutes)).await;
    w.edge(&wf, &World::trigger(&wf), &send, None).await;
    w.edge(&wf, &send.id, &wait, None).await;
    let contact = w.contact("back@example.org", json!({"name": "B"})).await;
    let exec = w.start(&wf, &contact, json!({})).await;
    w.run().await;
    // While it waits, the email is moved after the delay: D → A, no more A → D.
    let ws = w.caller.workspace_id().clone();
    let edges = w
        .engine
        .store
        .workflow_transitions(&ws, &wf.workflow.id)
        .await
        .expect("edges");
    let send_to_wait = edges
        .iter()
        .find(|t| t.from_step_id == send.id && t.to_step_id == wait.id)
        .expect("send → wait");
    w.engine
        .delete_transition(&w.caller, &wf.workflow.id, &send_to_wait.id)
        .await
        .expect("deleted");
    w.edge(&wf, &wait.id, &send, None).await;
    w.after(chrono::Duration::minutes(1)).await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Failed);
    let reason = view.execution.reason.clone().unwrap_or_default();
    assert!(
        reason.contains(send.id.as_str()) && reason.contains("already ran"),
        "{reason}"
    );
    assert_eq!(w.transport.messages_to("back@example.org").len(), 1);
    // The workflow is not held by an execution that can never end.
    w.after(chrono::Duration::days(1)).await;
    w.engine
        .delete_workflow(&w.caller, &wf.workflow.id)
        .await
        .expect("deletable");
}
