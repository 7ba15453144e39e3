//! The workflow API use cases: defaults, rules and refusals.

use posthorn_core::app::workflows::{
    CreateStep, CreateTransition, CreateWorkflow, StepPatch, WorkflowPatch,
};
use posthorn_core::error::Resource;
use posthorn_core::model::{StepId, TemplateId, TemplateType, WorkflowId};
use posthorn_core::ports::WebhookSecret;
use posthorn_core::workflow::{DelayUnit, StepAction, StepType, Trigger};
use posthorn_core::Error;
use serde_json::json;

use crate::harness::{delay, exit, send_to_contact, World};

fn fields(result: Result<impl std::fmt::Debug, Error>) -> Vec<String> {
    match result {
        Err(Error::Validation(errors)) => errors.into_iter().map(|e| e.field).collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_new_workflow_is_a_disabled_event_workflow_with_its_trigger_step() {
    let w = World::new().await;
    let view = w
        .engine
        .create_workflow(
            &w.caller,
            CreateWorkflow::new(
                "Welcome",
                Trigger::Event {
                    event_name: "signup".into(),
                },
            ),
        )
        .await
        .expect("created");
    assert!(!view.workflow.enabled);
    assert!(!view.workflow.allow_reentry);
    assert_eq!(
        view.workflow.trigger,
        Trigger::Event {
            event_name: "signup".into()
        }
    );
    assert_eq!(view.steps.len(), 1);
    assert_eq!(
        view.steps[0].step.action,
        StepAction::Trigger {
            event_name: Some("signup".into())
        }
    );

    let missing = w
        .engine
        .create_workflow(
            &w.caller,
            CreateWorkflow::new(
                "x",
                Trigger::Event {
                    event_name: " ".into(),
                },
            ),
        )
        .await;
    assert_eq!(fields(missing), ["triggerConfig.eventName"]);
    let unknown = w
        .engine
        .workflow(&w.caller, &WorkflowId::from("nope"))
        .await;
    assert!(matches!(unknown, Err(Error::NotFound(Resource::Workflow))));

    let patched = w
        .engine
        .patch_workflow(
            &w.caller,
            &view.workflow.id,
            WorkflowPatch {
                trigger: Some(Trigger::Manual {}),
                enabled: Some(true),
                ..WorkflowPatch::default()
            },
        )
        .await
        .expect("patched");
    assert_eq!(patched.trigger, Trigger::Manual {});
    let listed = w
        .engine
        .list_workflows(&w.caller, Default::default())
        .await
        .expect("list");
    assert_eq!((listed.total, listed.data.len()), (1, 1));
}

#[tokio::test]
async fn steps_are_checked_for_their_kind_and_template() {
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let create = |action, template: Option<&str>| CreateStep {
        template_id: template.map(TemplateId::from),
        ..CreateStep::new("s", action)
    };
    let bad = w
        .engine
        .create_step(
            &w.caller,
            &wf.workflow.id,
            create(delay(0, DelayUnit::Hours), None),
        )
        .await;
    assert_eq!(fields(bad), ["config.amount"]);
    let no_template = w
        .engine
        .create_step(
            &w.caller,
            &wf.workflow.id,
            create(send_to_contact(), Some("missing")),
        )
        .await;
    assert_eq!(fields(no_template), ["templateId"]);
    let second_trigger = w
        .engine
        .create_step(
            &w.caller,
            &wf.workflow.id,
            create(StepAction::Trigger { event_name: None }, None),
        )
        .await;
    assert!(matches!(second_trigger, Err(Error::InvalidState(_))));
    let trigger = World::trigger(&wf);
    let undeletable = w
        .engine
        .delete_step(&w.caller, &wf.workflow.id, &trigger)
        .await;
    assert!(matches!(undeletable, Err(Error::InvalidState(_))));
    let unknown = w
        .engine
        .delete_step(&w.caller, &wf.workflow.id, &StepId::from("nope"))
        .await;
    assert!(matches!(unknown, Err(Error::NotFound(Resource::Step))));
}

#[tokio::test]
async fn a_step_patch_keeps_the_step_kind_and_its_rules() {
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let step = w.step(&wf, delay(1, DelayUnit::Minutes)).await;
    let patch = |action| StepPatch {
        config: Some(action),
        ..StepPatch::default()
    };
    let mismatch = w
        .engine
        .patch_step(&w.caller, &wf.workflow.id, &step.id, patch(exit(None)))
        .await;
    assert_eq!(
        mismatch,
        Err(Error::StepKindMismatch {
            step: StepType::Delay,
            given: StepType::Exit
        })
    );
    let out_of_range = w
        .engine
        .patch_step(
            &w.caller,
            &wf.workflow.id,
            &step.id,
            patch(delay(10_001, DelayUnit::Days)),
        )
        .await;
    assert_eq!(fields(out_of_range), ["config.amount"]);
    let patched = w
        .engine
        .patch_step(
            &w.caller,
            &wf.workflow.id,
            &step.id,
            patch(delay(3, DelayUnit::Days)),
        )
        .await
        .expect("patched");
    assert_eq!(patched.action, delay(3, DelayUnit::Days));
    // The TRIGGER step follows the workflow's trigger, whatever config is offered.
    let trigger = World::trigger(&wf);
    let refused = w
        .engine
        .patch_step(
            &w.caller,
            &wf.workflow.id,
            &trigger,
            patch(StepAction::Trigger { event_name: None }),
        )
        .await;
    assert!(
        matches!(refused, Err(Error::InvalidState(_))),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_trigger_patch_is_checked_and_moves_the_trigger_step() {
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let patch = |trigger| WorkflowPatch {
        trigger: Some(trigger),
        ..WorkflowPatch::default()
    };
    let bad_cron = w
        .engine
        .patch_workflow(
            &w.caller,
            &wf.workflow.id,
            patch(Trigger::Schedule {
                cron: "every day".into(),
                timezone: None,
                segment_id: "s1".into(),
            }),
        )
        .await;
    assert_eq!(fields(bad_cron), ["triggerConfig.cron"]);
    let unknown_segment = w
        .engine
        .patch_workflow(
            &w.caller,
            &wf.workflow.id,
            patch(Trigger::Schedule {
                cron: "0 9 * * *".into(),
                timezone: Some("Europe/Berlin".into()),
                segment_id: "missing".into(),
            }),
        )
        .await;
    assert_eq!(fields(unknown_segment), ["triggerConfig.segmentId"]);
    w.engine
        .patch_workflow(
            &w.caller,
            &wf.workflow.id,
            patch(Trigger::Event {
                event_name: "paid".into(),
            }),
        )
        .await
        .expect("patched");
    let view = w
        .engine
        .workflow(&w.caller, &wf.workflow.id)
        .await
        .expect("view");
    assert_eq!(
        view.steps[0].step.action,
        StepAction::Trigger {
            event_name: Some("paid".into())
        }
    );
}

#[tokio::test]
async fn graph_rules_are_refused_by_name() {
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let trigger = World::trigger(&wf);
    let a = w.step(&wf, delay(1, DelayUnit::Minutes)).await;
    let b = w.step(&wf, delay(1, DelayUnit::Minutes)).await;
    let exit = w.step(&wf, exit(None)).await;
    w.edge(&wf, &trigger, &a, None).await;
    w.edge(&wf, &a.id, &b, None).await;
    let refuse =
        |from: &StepId, to: &StepId, condition: Option<serde_json::Value>| CreateTransition {
            from_step_id: from.clone(),
            to_step_id: to.clone(),
            condition: condition.map(|c| serde_json::from_value(c).expect("condition")),
            priority: None,
        };
    let cases = [
        (refuse(&b.id, &a.id, None), "no cycles"),
        (refuse(&a.id, &a.id, None), "no self-loops"),
        (refuse(&exit.id, &a.id, None), "no edge out of EXIT"),
        (refuse(&a.id, &exit.id, None), "at most one plain edge"),
        (
            refuse(&b.id, &exit.id, Some(json!({"branch": "yes"}))),
            "branch edges only out of CONDITION",
        ),
        (
            refuse(&b.id, &exit.id, Some(json!({"outcome": "EVENT"}))),
            "outcome edges only out of WAIT_FOR_EVENT",
        ),
    ];
    for (cmd, rule) in cases {
        match w
            .engine
            .create_transition(&w.caller, &wf.workflow.id, cmd)
            .await
        {
            Err(Error::InvalidState(message)) => assert!(message.starts_with(rule), "{message}"),
            other => panic!("expected {rule}, got {other:?}"),
        }
    }
    let unknown = w
        .engine
        .create_transition(
            &w.caller,
            &wf.workflow.id,
            refuse(&a.id, &StepId::from("nope"), None),
        )
        .await;
    assert!(matches!(unknown, Err(Error::NotFound(Resource::Step))));
    let view = w
        .engine
        .workflow(&w.caller, &wf.workflow.id)
        .await
        .expect("view");
    let a_view = view.steps.iter().find(|s| s.step.id == a.id).expect("a");
    assert_eq!(
        (
            a_view.incoming_transitions.len(),
            a_view.outgoing_transitions.len()
        ),
        (1, 1)
    );
}

#[tokio::test]
async fn a_template_used_by_a_step_cannot_be_deleted() {
    let w = World::new().await;
    let template = w.template(TemplateType::Transactional).await;
    let wf = w.manual_workflow().await;
    let step = w.step_with(&wf, send_to_contact(), Some(&template)).await;
    let refused = w.engine.delete_template(&w.caller, &template.id).await;
    assert!(matches!(refused, Err(Error::Conflict(_))), "{refused:?}");
    let view = w
        .engine
        .workflow(&w.caller, &wf.workflow.id)
        .await
        .expect("view");
    let shown = view
        .steps
        .iter()
        .find(|s| s.step.id == step.id)
        .and_then(|s| s.template.clone());
    assert_eq!(shown.map(|t| t.name), Some("Welcome".to_string()));
    w.engine
        .delete_step(&w.caller, &wf.workflow.id, &step.id)
        .await
        .expect("step deleted");
    w.engine
        .delete_template(&w.caller, &template.id)
        .await
        .expect("now deletable");
}

#[tokio::test]
async fn the_signing_secret_is_made_once_and_rotates_with_an_overlap() {
    let w = World::new().await;
    let first = w.engine.signing_secret(&w.caller).await.expect("secret");
    assert!(first.secret.starts_with("whsec_"));
    assert!(WebhookSecret::parse(&first.secret).is_ok());
    assert_eq!(
        w.engine
            .signing_secret(&w.caller)
            .await
            .expect("again")
            .secret,
        first.secret
    );
    let rotated = w
        .engine
        .rotate_signing_secret(&w.caller)
        .await
        .expect("rotated");
    assert_ne!(rotated.secret, first.secret);
    assert_eq!(
        rotated.previous_expires_at,
        Some(w.now() + chrono::Duration::hours(24))
    );
}
