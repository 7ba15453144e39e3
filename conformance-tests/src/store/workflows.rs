//! Workflow definitions: workflows, their steps and transitions, and cascade deletes.
//! The reads by event or template, signing keys, isolation and atomicity are in
//! `workflow_reads`.

use posthorn_core::model::{TemplateType, WorkflowId, WorkspaceId};
use posthorn_core::ports::Write;
use posthorn_core::segment::Operator;
use posthorn_core::workflow::{
    Branch, DelayUnit, Recipient, Step, StepAction, StepCondition, SubscriptionAction,
    TransitionCondition, Trigger, WaitOutcome, Workflow,
};
use serde_json::json;

use crate::fixtures::{
    commit, execution, insert_contact, now_ms, object, secs, step, step_run, template, transition,
    waiting_for, workflow, workflow_with, workspace,
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

pub(crate) async fn put_workflow(p: &StorePorts, w: &Workflow) {
    commit(
        p.store.as_ref(),
        "storing a workflow",
        vec![Write::PutWorkflow(w.clone())],
    )
    .await;
}

pub(crate) async fn read_workflow(
    p: &StorePorts,
    ws: &WorkspaceId,
    id: &WorkflowId,
) -> Option<Workflow> {
    p.store
        .workflow(ws, id)
        .await
        .unwrap_or_else(|e| panic!("reading workflow {id} failed: {e}"))
}

pub(crate) async fn steps_of(p: &StorePorts, ws: &WorkspaceId, id: &WorkflowId) -> Vec<Step> {
    p.store
        .workflow_steps(ws, id)
        .await
        .unwrap_or_else(|e| panic!("reading the steps of {id} failed: {e}"))
}

pub(crate) fn ids<T, I: Clone>(records: &[T], id: impl Fn(&T) -> &I) -> Vec<I> {
    records.iter().map(|r| id(r).clone()).collect()
}

/// A workflow of each trigger kind reads back as stored; a put replaces; unknown ids read
/// as `None`; pages are newest first with the workspace's total; a delete removes it and
/// deleting an absent workflow is a no-op.
pub async fn workflow_put_get_list_delete(p: &StorePorts) {
    let ws = workspace(p, "workflows").await;
    let wsid = ws.id.clone();
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
        read_workflow(p, &ws.id, &WorkflowId::generate(crate::fixtures::ids())).await,
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
    let wsid = ws.id.clone();
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
    steps[2].template_id = Some(tpl.id.clone());
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
    let wsid = ws.id.clone();
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
