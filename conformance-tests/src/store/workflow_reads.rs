//! What reads workflows by event or template, signing keys, and the isolation and
//! atomicity of workflow records.

use posthorn_core::model::TemplateId;
use posthorn_core::ports::{SigningKeys, WebhookSecret, Write};
use posthorn_core::workflow::Trigger;

use super::workflows::{every_action, ids, put_workflow};
use crate::fixtures::{
    commit, commit_conflicts, execution, insert_contact, now_ms, secs, step, step_run, transition,
    waiting_for, workflow, workflow_with, workspace,
};
use crate::StorePorts;

/// `event_workflows` returns the enabled EVENT workflows on that name, oldest first: not
/// disabled ones, not other names, not other trigger kinds, not other workspaces.
pub async fn event_workflows_enabled_by_name(p: &StorePorts) {
    let ws = workspace(p, "event-workflows").await;
    let other_ws = workspace(p, "event-workflows-other").await;
    let wsid = ws.id.clone();
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
    let wsid = ws.id.clone();
    let now = now_ms();
    let s = p.store.as_ref();
    let alice = insert_contact(p, &ws.id, "alice", true, now).await;
    let bob = insert_contact(p, &ws.id, "bob", true, now).await;
    let (a, b) = (alice.id.clone(), bob.id.clone());
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
    let other_wsid = other_ws.id.clone();
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
    let wsid = ws.id.clone();
    let now = now_ms();
    let s = p.store.as_ref();
    let used = TemplateId::generate(crate::fixtures::ids());
    let unused = TemplateId::generate(crate::fixtures::ids());
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
    let wsid = ws.id.clone();
    let other = other_ws.id.clone();
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

/// `InsertSigningKeys` stores a workspace's first keys and never replaces stored ones:
/// racing first uses all end up signing with the first stored.
pub async fn first_signing_keys_are_never_replaced(p: &StorePorts) {
    let ws = workspace(p, "first-signing").await;
    let wsid = ws.id.clone();
    let s = p.store.as_ref();
    let mut rng = rand::thread_rng();
    let first = SigningKeys::new(WebhookSecret::generate(&mut rng));
    let second = SigningKeys::new(WebhookSecret::generate(&mut rng));
    for keys in [&first, &second] {
        commit(
            s,
            "inserting first signing keys",
            vec![Write::InsertSigningKeys {
                workspace_id: wsid.clone(),
                keys: keys.clone(),
            }],
        )
        .await;
    }
    assert_eq!(s.signing_keys(&wsid).await, Ok(Some(first.clone())));
    // A rotation (a put) still replaces them.
    let rotated = first.rotate(WebhookSecret::generate(&mut rng), now_ms());
    commit(
        s,
        "rotating",
        vec![Write::PutSigningKeys {
            workspace_id: wsid.clone(),
            keys: rotated.clone(),
        }],
    )
    .await;
    assert_eq!(s.signing_keys(&wsid).await, Ok(Some(rotated)));
}

/// Another workspace sees none of a workspace's workflows, steps, transitions, executions
/// or step records, and its deletes with a foreign workspace id change nothing.
pub async fn workflow_isolation_between_workspaces(p: &StorePorts) {
    let ws = workspace(p, "wf-isolation").await;
    let intruder = workspace(p, "wf-intruder").await;
    let wsid = ws.id.clone();
    let other = intruder.id.clone();
    let now = now_ms();
    let s = p.store.as_ref();
    let contact = insert_contact(p, &ws.id, "isolated", true, now).await;
    let w = workflow(&ws.id, "private", "signup", now);
    let first = step(&w, "trigger", every_action()[0].clone(), now);
    let mut send = step(&w, "send", every_action()[2].clone(), secs(now, 1));
    let tpl = TemplateId::generate(crate::fixtures::ids());
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
    let wsid = ws.id.clone();
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

/// `event_reads` answers what `contact_by_email`, `tracked_segments` and
/// `has_event_interest` answer one by one: for an address with no contact (only the
/// workflows the event triggers count), for a contact found whatever the address's case, with
/// a tracked segment, an enabled workflow and a waiting execution, and never with another
/// workspace's; without an event name the interest is `false` and the rest the same.
pub async fn event_reads_equal_the_reads_one_by_one(p: &StorePorts) {
    let ws = workspace(p, "event-reads").await;
    let other_ws = workspace(p, "event-reads-other").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let alice = insert_contact(p, &ws.id, "alice", true, now).await;
    let bob = insert_contact(p, &ws.id, "bob", true, now).await;
    let check = |stage: &'static str| {
        let wsid = ws.id.clone();
        let (alice, bob) = (alice.clone(), bob.clone());
        async move {
            let mut unknown = alice.email.as_str().to_string();
            unknown.insert_str(0, "nobody-");
            let shouting = alice.email.as_str().to_uppercase();
            for address in [
                alice.email.as_str(),
                bob.email.as_str(),
                &unknown,
                &shouting,
            ] {
                for name in [Some("signup"), Some("purchase"), Some("refund"), None] {
                    let reads = s
                        .event_reads(&wsid, address, name)
                        .await
                        .unwrap_or_else(|e| panic!("{stage}: event_reads failed: {e}"));
                    let contact = s.contact_by_email(&wsid, address).await;
                    assert_eq!(Ok(reads.contact.clone()), contact, "{stage}: {address}");
                    let tracked = s.tracked_segments(&wsid).await;
                    assert_eq!(Ok(reads.tracked_segments.clone()), tracked, "{stage}");
                    let interest = match (name, &reads.contact) {
                        (None, _) => Ok(false),
                        (Some(name), Some(c)) => s.has_event_interest(&wsid, name, &c.id).await,
                        // bob has nothing waiting: for a new contact only triggers count.
                        (Some(name), None) => s.has_event_interest(&wsid, name, &bob.id).await,
                    };
                    assert_eq!(
                        Ok(reads.event_interest),
                        interest,
                        "{stage}: {address} {name:?}"
                    );
                }
            }
        }
    };
    check("an empty workspace").await;
    let reads = s
        .event_reads(&ws.id, "nobody@example.com", Some("signup"))
        .await;
    assert_eq!(
        reads.map(|r| (r.contact, r.tracked_segments, r.event_interest)),
        Ok((None, vec![], false))
    );

    // Another workspace's tracked segment and workflows are not this one's.
    commit(
        s,
        "another workspace's tracked segment",
        vec![Write::PutSegment(crate::fixtures::segment(
            &other_ws.id,
            "foreign",
            posthorn_core::model::SegmentType::Dynamic,
            true,
            now,
        ))],
    )
    .await;
    put_workflow(p, &workflow(&other_ws.id, "foreign", "signup", now)).await;
    check("another workspace's records").await;
    assert_eq!(
        s.event_reads(&ws.id, alice.email.as_str(), Some("signup"))
            .await
            .map(|r| (r.tracked_segments.len(), r.event_interest)),
        Ok((0, false))
    );

    let tracked = crate::fixtures::segment(
        &ws.id,
        "tracked",
        posthorn_core::model::SegmentType::Dynamic,
        true,
        now,
    );
    commit(s, "a tracked segment", vec![Write::PutSegment(tracked)]).await;
    put_workflow(p, &workflow(&ws.id, "on signup", "signup", now)).await;
    check("a tracked segment and an enabled workflow").await;
    assert_eq!(
        s.event_reads(&ws.id, "nobody@example.com", Some("signup"))
            .await
            .map(|r| (r.tracked_segments.len(), r.event_interest)),
        Ok((1, true))
    );
    assert_eq!(
        s.event_reads(&ws.id, "nobody@example.com", None)
            .await
            .map(|r| (r.tracked_segments.len(), r.event_interest)),
        Ok((1, false)),
        "no event: no interest, the same segments"
    );

    let manual = workflow_with(&ws.id, "manual", Trigger::Manual {}, now);
    put_workflow(p, &manual).await;
    let wait = step(&manual, "wait", every_action()[5].clone(), now);
    let run = execution(&manual, &alice.id, now);
    commit(
        s,
        "an execution of alice's waiting for `purchase`",
        vec![
            Write::PutStep(wait.clone()),
            Write::InsertExecution(waiting_for(run, &wait.id, "purchase")),
        ],
    )
    .await;
    check("a waiting execution").await;
    assert_eq!(
        s.event_reads(&ws.id, alice.email.as_str(), Some("purchase"))
            .await
            .map(|r| r.event_interest),
        Ok(true)
    );
    assert_eq!(
        s.event_reads(&ws.id, alice.email.as_str(), None)
            .await
            .map(|r| (r.contact.map(|c| c.id), r.event_interest)),
        Ok((Some(alice.id.clone()), false))
    );
}
