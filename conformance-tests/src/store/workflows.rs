//! Workflow definitions: workflows, their steps and transitions, what reads them by event
//! or template, cascade deletes, signing keys, and atomicity of workflow writes.

use posthorn_core::model::{ContactId, TemplateId, TemplateType, WorkflowId, WorkspaceId};
use posthorn_core::ports::{SigningKeys, WebhookSecret, Write};
use posthorn_core::segment::Operator;
use posthorn_core::workflow::{
    Branch, DelayUnit, Recipient, Step, StepAction, StepCondition, SubscriptionAction,
    TransitionCondition, Trigger, WaitOutcome, Workflow,
};
use serde_json::json;

use crate::fixtures::{
    commit, commit_conflicts, execution, insert_contact, now_ms, object, secs, step, step_run,
    template, transition, waiting_for, workflow, workflow_with, workspace,
};
use crate::StorePorts;

/// One action of every kind, with every optional part set where it has one.
pub(crate) fn every_action() -> Vec<StepAction> {
    vec![
        StepAction::Trigger {
            event_name: Some("signup".into()),
        },
        StepAction::Trigger { event_name: None },
        StepAction::SendEmail {
            recipient: Recipient::Contact,
        },
        StepAction::SendEmail {
            recipient: Recipient::Custom {
                email: "{{data.manager}}@example.com".into(),
            },
        },
        StepAction::Delay {
            amount: 3,
            unit: DelayUnit::Days,
        },
        StepAction::WaitForEvent {
            event_name: "purchase".into(),
            timeout: Some(86_400),
        },
        StepAction::Condition(StepCondition {
            field: "data.plan".into(),
            operator: Operator::Equals,
            value: Some(json!("pro")),
        }),
        StepAction::Condition(StepCondition {
            field: "event.amount".into(),
            operator: Operator::NotExists,
            value: None,
        }),
        StepAction::UpdateContact {
            updates: object(json!({"stage": "trial", "score": 1.5, "tags": ["a", "b"]})),
            subscription_action: SubscriptionAction::Unsubscribe,
        },
        StepAction::Webhook {
            url: "https://hooks.example.com/{{contact.id}}?q=1".into(),
            method: Some("PUT".into()),
            headers: object(json!({"X-Team": "growth"})),
            body: Some(json!({"id": "{{contact.id}}", "n": 12345678901234_i64, "x": null})),
        },
        StepAction::Exit {
            reason: Some("done".into()),
        },
        StepAction::Exit { reason: None },
    ]
}

async fn put_workflow(p: &StorePorts, w: &Workflow) {
    commit(
        p.store.as_ref(),
        "storing a workflow",
        vec![Write::PutWorkflow(w.clone())],
    )
    .await;
}

async fn read_workflow(p: &StorePorts, ws: &str, id: &WorkflowId) -> Option<Workflow> {
    p.store
        .workflow(&WorkspaceId::from(ws), id)
        .await
        .unwrap_or_else(|e| panic!("reading workflow {id} failed: {e}"))
}

async fn steps_of(p: &StorePorts, ws: &str, id: &WorkflowId) -> Vec<Step> {
    p.store
        .workflow_steps(&WorkspaceId::from(ws), id)
        .await
        .unwrap_or_else(|e| panic!("reading the steps of {id} failed: {e}"))
}

fn ids<T, I: Clone>(records: &[T], id: impl Fn(&T) -> &I) -> Vec<I> {
    records.iter().map(|r| id(r).clone()).collect()
}

/// A workflow of each trigger kind reads back as stored; a put replaces; unknown ids read
/// as `None`; pages are newest first with the workspace's total; a delete removes it and
/// deleting an absent workflow is a no-op.
pub async fn workflow_put_get_list_delete(p: &StorePorts) {
    let ws = workspace(p, "workflows").await;
    let wsid = WorkspaceId::from(ws.id.as_str());
    let now = now_ms();
    let s = p.store.as_ref();
    let event = workflow(&ws.id, "on signup", "signup", now);
    let manual = workflow_with(&ws.id, "manual", Trigger::Manual {}, secs(now, 1));
    let mut scheduled = workflow_with(
        &ws.id,
        "nightly",
        Trigger::Schedule {
            cron: "0 3 * * *".into(),
            timezone: Some("Europe/Berlin".into()),
            segment_id: "segment-1".into(),
        },
        secs(now, 2),
    );
    scheduled.enabled = false;
    scheduled.allow_reentry = false;
    scheduled.description = None;
    for w in [&event, &manual, &scheduled] {
        put_workflow(p, w).await;
        assert_eq!(read_workflow(p, &ws.id, &w.id).await.as_ref(), Some(w));
    }
    assert_eq!(
        read_workflow(p, &ws.id, &WorkflowId::from(posthorn_core::model::new_id())).await,
        None,
        "an unknown workflow id must read as None"
    );

    let mut renamed = manual.clone();
    renamed.name = "manual v2".into();
    renamed.trigger = Trigger::Event {
        event_name: "email.open".into(),
    };
    renamed.updated_at = secs(now, 10);
    put_workflow(p, &renamed).await;
    assert_eq!(
        read_workflow(p, &ws.id, &manual.id).await,
        Some(renamed.clone())
    );

    let (page, total) = s.workflows(&wsid, 0, 10).await.expect("workflows failed");
    assert_eq!(total, 3);
    assert_eq!(
        ids(&page, |w| &w.id),
        vec![scheduled.id.clone(), manual.id.clone(), event.id.clone()],
        "workflows must be listed newest first"
    );
    let (page, total) = s.workflows(&wsid, 1, 1).await.expect("workflows failed");
    assert_eq!((ids(&page, |w| &w.id), total), (vec![manual.id.clone()], 3));
    let (page, total) = s.workflows(&wsid, 3, 5).await.expect("workflows failed");
    assert_eq!((page.len(), total), (0, 3), "a page past the end is empty");

    commit(
        s,
        "deleting a workflow",
        vec![Write::DeleteWorkflow {
            workspace_id: wsid.clone(),
            id: event.id.clone(),
        }],
    )
    .await;
    assert_eq!(read_workflow(p, &ws.id, &event.id).await, None);
    commit(
        s,
        "deleting an absent workflow",
        vec![Write::DeleteWorkflow {
            workspace_id: wsid.clone(),
            id: event.id.clone(),
        }],
    )
    .await;
    let (_, total) = s.workflows(&wsid, 0, 10).await.expect("workflows failed");
    assert_eq!(total, 2);
}

/// Steps of every kind read back exactly, oldest first; a put replaces a step; transitions
/// come by ascending priority, then oldest first; a transition put replaces; deleting a
/// transition removes only it; deleting a step removes the transitions into and out of it
/// and nothing else.
pub async fn workflow_steps_and_transitions(p: &StorePorts) {
    let ws = workspace(p, "workflow-graph").await;
    let wsid = WorkspaceId::from(ws.id.as_str());
    let now = now_ms();
    let s = p.store.as_ref();
    let w = workflow(&ws.id, "graph", "signup", now);
    let other = workflow(&ws.id, "other", "signup", now);
    put_workflow(p, &w).await;
    put_workflow(p, &other).await;
    let mut steps: Vec<Step> = every_action()
        .into_iter()
        .enumerate()
        .map(|(i, action)| {
            let at = secs(now, 100 - i64::try_from(i).unwrap_or(0));
            step(&w, &format!("step {i}"), action, at)
        })
        .collect();
    let tpl = template(&ws.id, "welcome", "Hi", TemplateType::Marketing, now);
    steps[2].template_id = Some(TemplateId::from(tpl.id.as_str()));
    let foreign = step(&other, "elsewhere", StepAction::Exit { reason: None }, now);
    let mut writes: Vec<Write> = steps.iter().cloned().map(Write::PutStep).collect();
    writes.push(Write::PutStep(foreign.clone()));
    commit(s, "storing steps", writes).await;
    // Created in reverse order of the list: oldest first is the list reversed.
    let mut expected = steps.clone();
    expected.reverse();
    assert_eq!(steps_of(p, &ws.id, &w.id).await, expected, "steps differ");
    assert_eq!(steps_of(p, &ws.id, &other.id).await, vec![foreign.clone()]);

    let mut changed = steps[4].clone();
    changed.name = "wait longer".into();
    changed.position = json!({"x": -1, "y": 0});
    changed.action = StepAction::Delay {
        amount: 7,
        unit: DelayUnit::Minutes,
    };
    changed.updated_at = secs(now, 500);
    commit(s, "replacing a step", vec![Write::PutStep(changed.clone())]).await;
    let read = steps_of(p, &ws.id, &w.id).await;
    assert_eq!(
        read.len(),
        steps.len(),
        "a put of a stored step must replace it"
    );
    assert!(read.contains(&changed), "the replaced step differs");

    let (a, b, c, d) = (&steps[0], &steps[6], &steps[5], &steps[10]);
    let t_late_low = transition(a, b, None, 0, secs(now, 3));
    let t_yes = transition(
        b,
        c,
        Some(TransitionCondition::Branch {
            branch: Branch::Yes,
        }),
        1,
        secs(now, 1),
    );
    let t_no = transition(
        b,
        d,
        Some(TransitionCondition::Branch { branch: Branch::No }),
        1,
        secs(now, 2),
    );
    let t_timeout = transition(
        c,
        d,
        Some(TransitionCondition::Outcome {
            outcome: WaitOutcome::Timeout,
        }),
        -5,
        secs(now, 4),
    );
    let t_other = transition(&foreign, &foreign, None, 0, now);
    commit(
        s,
        "storing transitions",
        [&t_yes, &t_no, &t_late_low, &t_timeout, &t_other]
            .into_iter()
            .cloned()
            .map(Write::PutTransition)
            .collect(),
    )
    .await;
    let read = s
        .workflow_transitions(&wsid, &w.id)
        .await
        .expect("workflow_transitions failed");
    assert_eq!(
        read,
        vec![
            t_timeout.clone(),
            t_late_low.clone(),
            t_yes.clone(),
            t_no.clone()
        ],
        "transitions must come by priority, then oldest first"
    );

    let mut moved = t_no.clone();
    moved.priority = -10;
    moved.condition = Some(TransitionCondition::Outcome {
        outcome: WaitOutcome::Event,
    });
    moved.updated_at = secs(now, 9);
    commit(
        s,
        "replacing a transition",
        vec![Write::PutTransition(moved.clone())],
    )
    .await;
    let read = s.workflow_transitions(&wsid, &w.id).await.expect("read");
    assert_eq!(
        read.first(),
        Some(&moved),
        "the replaced transition differs"
    );
    assert_eq!(read.len(), 4);

    commit(
        s,
        "deleting a transition",
        vec![Write::DeleteTransition {
            workspace_id: wsid.clone(),
            workflow_id: w.id.clone(),
            id: t_late_low.id.clone(),
        }],
    )
    .await;
    let read = s.workflow_transitions(&wsid, &w.id).await.expect("read");
    assert_eq!(
        ids(&read, |t| &t.id),
        vec![moved.id.clone(), t_timeout.id.clone(), t_yes.id.clone()]
    );

    // Deleting c removes the edge into it (b → c) and out of it (c → d), not b → d.
    commit(
        s,
        "deleting a step",
        vec![Write::DeleteStep {
            workspace_id: wsid.clone(),
            workflow_id: w.id.clone(),
            id: c.id.clone(),
        }],
    )
    .await;
    let read = s.workflow_transitions(&wsid, &w.id).await.expect("read");
    assert_eq!(ids(&read, |t| &t.id), vec![moved.id.clone()]);
    let remaining = steps_of(p, &ws.id, &w.id).await;
    assert_eq!(remaining.len(), steps.len() - 1);
    assert!(remaining.iter().all(|x| x.id != c.id));
    assert_eq!(
        s.workflow_transitions(&wsid, &other.id)
            .await
            .expect("read"),
        vec![t_other],
        "another workflow's transitions must stay"
    );
    commit(
        s,
        "deleting an absent step and transition",
        vec![
            Write::DeleteStep {
                workspace_id: wsid.clone(),
                workflow_id: w.id.clone(),
                id: c.id.clone(),
            },
            Write::DeleteTransition {
                workspace_id: wsid.clone(),
                workflow_id: w.id.clone(),
                id: t_late_low.id.clone(),
            },
        ],
    )
    .await;
}

/// Deleting a workflow removes its steps, transitions, executions and step records, and
/// leaves another workflow's untouched.
pub async fn workflow_delete_cascades(p: &StorePorts) {
    let ws = workspace(p, "workflow-cascade").await;
    let wsid = WorkspaceId::from(ws.id.as_str());
    let now = now_ms();
    let s = p.store.as_ref();
    let contact = insert_contact(p, &ws.id, "enrolled", true, now).await;
    let mut kept = Vec::new();
    let mut doomed = Vec::new();
    for (name, list) in [("doomed", &mut doomed), ("kept", &mut kept)] {
        let w = workflow(&ws.id, name, "signup", now);
        let first = step(&w, "trigger", every_action()[0].clone(), now);
        let wait = step(&w, "wait", every_action()[5].clone(), secs(now, 1));
        let edge = transition(&first, &wait, None, 0, now);
        let run = execution(&w, &contact.id, now);
        let waiting = waiting_for(run.clone(), &wait.id, "purchase");
        let record = step_run(&run, &first, now);
        commit(
            s,
            "storing a workflow with its graph and an execution",
            vec![
                Write::PutWorkflow(w.clone()),
                Write::PutStep(first.clone()),
                Write::PutStep(wait.clone()),
                Write::PutTransition(edge),
                Write::InsertExecution(run.clone()),
                Write::InsertStepRun(record),
                Write::UpdateExecution(waiting),
            ],
        )
        .await;
        list.push((w, run));
    }
    let (w, run) = doomed.remove(0);
    let (kw, krun) = kept.remove(0);
    commit(
        s,
        "deleting the workflow",
        vec![Write::DeleteWorkflow {
            workspace_id: wsid.clone(),
            id: w.id.clone(),
        }],
    )
    .await;
    assert_eq!(read_workflow(p, &ws.id, &w.id).await, None);
    assert_eq!(steps_of(p, &ws.id, &w.id).await, vec![]);
    assert_eq!(s.workflow_transitions(&wsid, &w.id).await, Ok(vec![]));
    assert_eq!(s.execution(&wsid, &run.id).await, Ok(None));
    assert_eq!(s.executions(&wsid, &w.id, 0, 10).await, Ok((vec![], 0)));
    assert_eq!(s.active_executions(&wsid, &w.id).await, Ok(0));
    assert_eq!(s.step_runs(&wsid, &run.id).await, Ok(vec![]));
    let contact_id = run.contact_id.clone();
    let waiting = s
        .waiting_executions(&wsid, &contact_id, "purchase")
        .await
        .expect("waiting_executions failed");
    assert_eq!(
        ids(&waiting, |e| &e.id),
        vec![krun.id.clone()],
        "only the kept workflow's execution still waits"
    );
    assert!(read_workflow(p, &ws.id, &kw.id).await.is_some());
    assert_eq!(steps_of(p, &ws.id, &kw.id).await.len(), 2);
    assert_eq!(
        s.workflow_transitions(&wsid, &kw.id).await.map(|t| t.len()),
        Ok(1)
    );
    assert_eq!(s.step_runs(&wsid, &krun.id).await.map(|r| r.len()), Ok(1));
    assert_eq!(s.active_executions(&wsid, &kw.id).await, Ok(1));
    // A new execution of the deleted workflow's (workflow, contact) is not blocked by the
    // execution that went with it.
    commit(
        s,
        "re-storing the workflow and enrolling the contact again",
        vec![
            Write::PutWorkflow(w.clone()),
            Write::InsertExecution(execution(&w, &contact.id, secs(now, 5))),
        ],
    )
    .await;
}

/// `event_workflows` returns the enabled EVENT workflows on that name, oldest first: not
/// disabled ones, not other names, not other trigger kinds, not other workspaces.
pub async fn event_workflows_enabled_by_name(p: &StorePorts) {
    let ws = workspace(p, "event-workflows").await;
    let other_ws = workspace(p, "event-workflows-other").await;
    let wsid = WorkspaceId::from(ws.id.as_str());
    let now = now_ms();
    let s = p.store.as_ref();
    let second = workflow(&ws.id, "second", "signup", secs(now, 2));
    let first = workflow(&ws.id, "first", "signup", secs(now, 1));
    let mut disabled = workflow(&ws.id, "disabled", "signup", now);
    disabled.enabled = false;
    let other_name = workflow(&ws.id, "other name", "signup.done", now);
    let manual = workflow_with(&ws.id, "manual", Trigger::Manual {}, now);
    let foreign = workflow(&other_ws.id, "foreign", "signup", now);
    for w in [&second, &first, &disabled, &other_name, &manual, &foreign] {
        put_workflow(p, w).await;
    }
    let found = s
        .event_workflows(&wsid, "signup")
        .await
        .expect("event_workflows failed");
    assert_eq!(
        ids(&found, |w| &w.id),
        vec![first.id.clone(), second.id.clone()]
    );
    assert_eq!(found[0], first);
    assert_eq!(s.event_workflows(&wsid, "SIGNUP").await, Ok(vec![]));
    assert_eq!(s.event_workflows(&wsid, "sign").await, Ok(vec![]));

    let mut enabled = disabled.clone();
    enabled.enabled = true;
    put_workflow(p, &enabled).await;
    let mut off = first.clone();
    off.enabled = false;
    put_workflow(p, &off).await;
    let found = s.event_workflows(&wsid, "signup").await.expect("read");
    assert_eq!(
        ids(&found, |w| &w.id),
        vec![enabled.id.clone(), second.id.clone()]
    );
}

/// `has_event_interest` is true for an enabled workflow triggered by the name, or a WAITING
/// execution of that contact waiting for that name; false for a disabled workflow, another
/// name, another contact, an execution waiting for another event or no longer waiting, and
/// another workspace.
pub async fn has_event_interest_cases(p: &StorePorts) {
    let ws = workspace(p, "interest").await;
    let other_ws = workspace(p, "interest-other").await;
    let wsid = WorkspaceId::from(ws.id.as_str());
    let now = now_ms();
    let s = p.store.as_ref();
    let alice = insert_contact(p, &ws.id, "alice", true, now).await;
    let bob = insert_contact(p, &ws.id, "bob", true, now).await;
    let (a, b) = (
        ContactId::from(alice.id.as_str()),
        ContactId::from(bob.id.as_str()),
    );
    let interest = |name: &'static str, contact| {
        let wsid = wsid.clone();
        async move {
            s.has_event_interest(&wsid, name, contact)
                .await
                .unwrap_or_else(|e| panic!("has_event_interest({name}) failed: {e}"))
        }
    };
    assert!(!interest("signup", &a).await, "an empty workspace has none");

    let mut w = workflow(&ws.id, "on signup", "signup", now);
    w.enabled = false;
    put_workflow(p, &w).await;
    put_workflow(p, &workflow(&other_ws.id, "foreign", "signup", now)).await;
    let manual = workflow_with(&ws.id, "manual", Trigger::Manual {}, now);
    put_workflow(p, &manual).await;
    assert!(
        !interest("signup", &a).await,
        "a disabled workflow or another workspace's is no interest"
    );
    w.enabled = true;
    put_workflow(p, &w).await;
    assert!(interest("signup", &a).await, "an enabled EVENT workflow");
    assert!(interest("signup", &b).await, "whoever the contact is");
    assert!(!interest("purchase", &a).await, "another event name");

    let wait = step(&manual, "wait", every_action()[5].clone(), now);
    let run = execution(&manual, &alice.id, now);
    commit(
        s,
        "a RUNNING execution",
        vec![
            Write::PutStep(wait.clone()),
            Write::InsertExecution(run.clone()),
        ],
    )
    .await;
    assert!(
        !interest("purchase", &a).await,
        "a RUNNING execution does not wait"
    );
    let waiting = waiting_for(run.clone(), &wait.id, "purchase");
    commit(
        s,
        "making it WAIT",
        vec![Write::UpdateExecution(waiting.clone())],
    )
    .await;
    assert!(interest("purchase", &a).await, "alice's execution waits");
    assert!(!interest("purchase", &b).await, "bob has none waiting");
    assert!(!interest("refund", &a).await, "it waits for another name");
    let other_wsid = WorkspaceId::from(other_ws.id.as_str());
    assert_eq!(
        s.has_event_interest(&other_wsid, "purchase", &a).await,
        Ok(false)
    );
    // A DELAY wait names no event.
    let mut delayed = waiting.clone();
    delayed.version = 1;
    if let Some(wait) = delayed.waiting.as_mut() {
        wait.event_name = None;
        wait.until = Some(secs(now, 60));
    }
    commit(
        s,
        "a DELAY wait",
        vec![Write::UpdateExecution(delayed.clone())],
    )
    .await;
    assert!(
        !interest("purchase", &a).await,
        "a delay waits for no event"
    );
    let mut done = waiting_for(delayed, &wait.id, "purchase");
    done.version = 2;
    done.status = posthorn_core::workflow::ExecutionStatus::Completed;
    done.completed_at = Some(secs(now, 70));
    commit(s, "completing it", vec![Write::UpdateExecution(done)]).await;
    assert!(
        !interest("purchase", &a).await,
        "a completed execution waits no more, even with a wait left on it"
    );
}

/// `template_in_workflows` is true while a step of the workspace sends the template; false
/// for another template, another workspace, and once the step is gone.
pub async fn template_in_workflows_cases(p: &StorePorts) {
    let ws = workspace(p, "template-use").await;
    let other_ws = workspace(p, "template-use-other").await;
    let wsid = WorkspaceId::from(ws.id.as_str());
    let now = now_ms();
    let s = p.store.as_ref();
    let used = TemplateId::from(posthorn_core::model::new_id());
    let unused = TemplateId::from(posthorn_core::model::new_id());
    assert_eq!(s.template_in_workflows(&wsid, &used).await, Ok(false));
    let w = workflow(&ws.id, "mailer", "signup", now);
    let mut send = step(&w, "send", every_action()[2].clone(), now);
    send.template_id = Some(used.clone());
    let foreign_w = workflow(&other_ws.id, "foreign", "signup", now);
    let mut foreign = step(&foreign_w, "send", every_action()[2].clone(), now);
    foreign.template_id = Some(unused.clone());
    commit(
        s,
        "storing sending steps",
        vec![
            Write::PutWorkflow(w.clone()),
            Write::PutStep(send.clone()),
            Write::PutWorkflow(foreign_w),
            Write::PutStep(foreign),
        ],
    )
    .await;
    assert_eq!(s.template_in_workflows(&wsid, &used).await, Ok(true));
    assert_eq!(
        s.template_in_workflows(&wsid, &unused).await,
        Ok(false),
        "another workspace's step does not count"
    );
    let mut cleared = send.clone();
    cleared.template_id = None;
    commit(s, "clearing the template", vec![Write::PutStep(cleared)]).await;
    assert_eq!(s.template_in_workflows(&wsid, &used).await, Ok(false));
    commit(s, "setting it again", vec![Write::PutStep(send.clone())]).await;
    assert_eq!(s.template_in_workflows(&wsid, &used).await, Ok(true));
    commit(
        s,
        "deleting the step",
        vec![Write::DeleteStep {
            workspace_id: wsid.clone(),
            workflow_id: w.id.clone(),
            id: send.id.clone(),
        }],
    )
    .await;
    assert_eq!(s.template_in_workflows(&wsid, &used).await, Ok(false));
}

/// Signing keys: none at first; a put stores the current secret; a rotation stores the
/// previous one with its expiry; each reads back equal; other workspaces see none.
pub async fn signing_keys_round_trip(p: &StorePorts) {
    let ws = workspace(p, "signing").await;
    let other_ws = workspace(p, "signing-other").await;
    let wsid = WorkspaceId::from(ws.id.as_str());
    let other = WorkspaceId::from(other_ws.id.as_str());
    let now = now_ms();
    let s = p.store.as_ref();
    assert_eq!(s.signing_keys(&wsid).await, Ok(None));
    let mut rng = rand::thread_rng();
    let first = SigningKeys::new(WebhookSecret::generate(&mut rng));
    commit(
        s,
        "storing signing keys",
        vec![Write::PutSigningKeys {
            workspace_id: wsid.clone(),
            keys: first.clone(),
        }],
    )
    .await;
    assert_eq!(s.signing_keys(&wsid).await, Ok(Some(first.clone())));
    assert_eq!(s.signing_keys(&other).await, Ok(None));
    let rotated = first.clone().rotate(WebhookSecret::generate(&mut rng), now);
    commit(
        s,
        "rotating",
        vec![Write::PutSigningKeys {
            workspace_id: wsid.clone(),
            keys: rotated.clone(),
        }],
    )
    .await;
    let read = s.signing_keys(&wsid).await.expect("signing_keys failed");
    assert_eq!(read.as_ref(), Some(&rotated));
    assert_eq!(
        read.as_ref()
            .and_then(|k| k.previous().map(|(p, _)| p.clone())),
        Some(first.current().clone()),
        "the previous secret is the one replaced"
    );
    // A 64-byte key parsed from text survives too.
    let long = WebhookSecret::from_key((0u8..64).collect()).expect("64-byte key");
    let keys = SigningKeys::new(long);
    commit(
        s,
        "replacing with one secret",
        vec![Write::PutSigningKeys {
            workspace_id: wsid.clone(),
            keys: keys.clone(),
        }],
    )
    .await;
    assert_eq!(s.signing_keys(&wsid).await, Ok(Some(keys)));
    assert_eq!(s.signing_keys(&other).await, Ok(None));
}

/// Another workspace sees none of a workspace's workflows, steps, transitions, executions
/// or step records, and its deletes with a foreign workspace id change nothing.
pub async fn workflow_isolation_between_workspaces(p: &StorePorts) {
    let ws = workspace(p, "wf-isolation").await;
    let intruder = workspace(p, "wf-intruder").await;
    let wsid = WorkspaceId::from(ws.id.as_str());
    let other = WorkspaceId::from(intruder.id.as_str());
    let now = now_ms();
    let s = p.store.as_ref();
    let contact = insert_contact(p, &ws.id, "isolated", true, now).await;
    let w = workflow(&ws.id, "private", "signup", now);
    let first = step(&w, "trigger", every_action()[0].clone(), now);
    let mut send = step(&w, "send", every_action()[2].clone(), secs(now, 1));
    let tpl = TemplateId::from(posthorn_core::model::new_id());
    send.template_id = Some(tpl.clone());
    let edge = transition(&first, &send, None, 0, now);
    let wait = step(&w, "wait", every_action()[5].clone(), now);
    let run = waiting_for(execution(&w, &contact.id, now), &wait.id, "purchase");
    let record = step_run(&run, &first, now);
    commit(
        s,
        "storing a private workflow",
        vec![
            Write::PutWorkflow(w.clone()),
            Write::PutStep(first.clone()),
            Write::PutStep(send.clone()),
            Write::PutStep(wait.clone()),
            Write::PutTransition(edge.clone()),
            Write::InsertExecution(run.clone()),
            Write::InsertStepRun(record.clone()),
        ],
    )
    .await;
    let cid = run.contact_id.clone();
    assert_eq!(s.workflow(&other, &w.id).await, Ok(None));
    assert_eq!(s.workflows(&other, 0, 10).await, Ok((vec![], 0)));
    assert_eq!(s.workflow_steps(&other, &w.id).await, Ok(vec![]));
    assert_eq!(s.workflow_transitions(&other, &w.id).await, Ok(vec![]));
    assert_eq!(s.event_workflows(&other, "signup").await, Ok(vec![]));
    assert_eq!(
        s.has_event_interest(&other, "signup", &cid).await,
        Ok(false)
    );
    assert_eq!(
        s.has_event_interest(&other, "purchase", &cid).await,
        Ok(false)
    );
    assert_eq!(
        s.waiting_executions(&other, &cid, "purchase").await,
        Ok(vec![])
    );
    assert_eq!(s.execution(&other, &run.id).await, Ok(None));
    assert_eq!(s.executions(&other, &w.id, 0, 10).await, Ok((vec![], 0)));
    assert_eq!(s.active_executions(&other, &w.id).await, Ok(0));
    assert_eq!(s.step_run(&other, &run.id, &first.id).await, Ok(None));
    assert_eq!(s.step_runs(&other, &run.id).await, Ok(vec![]));
    assert_eq!(s.template_in_workflows(&other, &tpl).await, Ok(false));

    // Writes naming the intruder's workspace do not reach the owner's records.
    commit(
        s,
        "deleting through another workspace",
        vec![
            Write::DeleteTransition {
                workspace_id: other.clone(),
                workflow_id: w.id.clone(),
                id: edge.id.clone(),
            },
            Write::DeleteStep {
                workspace_id: other.clone(),
                workflow_id: w.id.clone(),
                id: first.id.clone(),
            },
            Write::DeleteWorkflow {
                workspace_id: other.clone(),
                id: w.id.clone(),
            },
        ],
    )
    .await;
    let mut foreign_update = run.clone();
    foreign_update.workspace_id = other.clone();
    commit_conflicts(
        s,
        "updating an execution through another workspace",
        vec![Write::UpdateExecution(foreign_update)],
    )
    .await;
    let mut foreign_record = record.clone();
    foreign_record.workspace_id = other.clone();
    commit_conflicts(
        s,
        "updating a step record through another workspace",
        vec![Write::UpdateStepRun(foreign_record)],
    )
    .await;
    assert_eq!(s.workflow(&wsid, &w.id).await, Ok(Some(w.clone())));
    assert_eq!(s.workflow_steps(&wsid, &w.id).await.map(|x| x.len()), Ok(3));
    assert_eq!(s.workflow_transitions(&wsid, &w.id).await, Ok(vec![edge]));
    assert_eq!(s.execution(&wsid, &run.id).await, Ok(Some(run.clone())));
    assert_eq!(s.step_runs(&wsid, &run.id).await, Ok(vec![record]));
    assert_eq!(s.template_in_workflows(&wsid, &tpl).await, Ok(true));
}

/// A change set with workflow writes and a failing write applies nothing: not the
/// workflow, its steps, transitions, executions, step records or signing keys, and not the
/// replacement of a stored workflow or the update of a stored execution.
pub async fn workflow_commit_is_all_or_nothing(p: &StorePorts) {
    let ws = workspace(p, "wf-atomic").await;
    let wsid = WorkspaceId::from(ws.id.as_str());
    let now = now_ms();
    let s = p.store.as_ref();
    let contact = insert_contact(p, &ws.id, "atomic", true, now).await;
    let stored = workflow(&ws.id, "stored", "signup", now);
    let stored_step = step(&stored, "trigger", every_action()[0].clone(), now);
    let stored_run = execution(&stored, &contact.id, now);
    commit(
        s,
        "storing a workflow and an execution",
        vec![
            Write::PutWorkflow(stored.clone()),
            Write::PutStep(stored_step.clone()),
            Write::InsertExecution(stored_run.clone()),
        ],
    )
    .await;

    let fresh = workflow(&ws.id, "fresh", "signup", secs(now, 1));
    let a = step(&fresh, "trigger", every_action()[0].clone(), now);
    let b = step(&fresh, "exit", every_action()[10].clone(), now);
    let fresh_run = execution(&fresh, &contact.id, now);
    let mut renamed = stored.clone();
    renamed.name = "renamed".into();
    renamed.enabled = false;
    let mut advanced = stored_run.clone();
    advanced.current_step_id = Some(stored_step.id.clone());
    let keys = SigningKeys::new(WebhookSecret::generate(&mut rand::thread_rng()));
    // The last write conflicts: the same (workflow, contact) is RUNNING already.
    let duplicate = execution(&stored, &contact.id, secs(now, 2));
    commit_conflicts(
        s,
        "a change set whose last write conflicts",
        vec![
            Write::PutWorkflow(fresh.clone()),
            Write::PutStep(a.clone()),
            Write::PutStep(b.clone()),
            Write::PutTransition(transition(&a, &b, None, 0, now)),
            Write::InsertExecution(fresh_run.clone()),
            Write::InsertStepRun(step_run(&fresh_run, &a, now)),
            Write::PutWorkflow(renamed),
            Write::UpdateExecution(advanced),
            Write::DeleteStep {
                workspace_id: wsid.clone(),
                workflow_id: stored.id.clone(),
                id: stored_step.id.clone(),
            },
            Write::PutSigningKeys {
                workspace_id: wsid.clone(),
                keys,
            },
            Write::InsertExecution(duplicate),
        ],
    )
    .await;
    assert_eq!(s.workflow(&wsid, &fresh.id).await, Ok(None));
    assert_eq!(s.workflow_steps(&wsid, &fresh.id).await, Ok(vec![]));
    assert_eq!(s.workflow_transitions(&wsid, &fresh.id).await, Ok(vec![]));
    assert_eq!(s.execution(&wsid, &fresh_run.id).await, Ok(None));
    assert_eq!(s.step_runs(&wsid, &fresh_run.id).await, Ok(vec![]));
    assert_eq!(s.signing_keys(&wsid).await, Ok(None));
    assert_eq!(
        s.workflow(&wsid, &stored.id).await,
        Ok(Some(stored.clone()))
    );
    assert_eq!(
        s.workflow_steps(&wsid, &stored.id).await,
        Ok(vec![stored_step])
    );
    assert_eq!(
        s.execution(&wsid, &stored_run.id).await,
        Ok(Some(stored_run))
    );
    assert_eq!(s.workflows(&wsid, 0, 10).await.map(|(_, n)| n), Ok(1));
}
