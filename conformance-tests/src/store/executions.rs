//! Workflow executions and their step records: the re-entry rules (also under racing
//! commits), optimistic versions, once-per-(execution, step) records, and their reads.

use posthorn_core::model::{ContactId, EmailId, ExecutionId};
use posthorn_core::ports::{StoreError, Write};
use posthorn_core::workflow::{ExecutionStatus, StepRunStatus, Wait, WebhookAttempt};
use serde_json::json;

use super::races::race;
use super::workflows::every_action;
use crate::fixtures::{
    commit, commit_conflicts, execution, insert_contact, now_ms, secs, step, step_run, waiting_for,
    workflow, workspace,
};
use crate::StorePorts;

/// An execution reads back as inserted with version 0 (whatever version it carried); a
/// second insert of its id conflicts; an update at the stored version stores every field
/// with the version moved by one; a stale update and an update of a missing execution
/// conflict and change nothing.
pub async fn execution_insert_update_get(p: &StorePorts) {
    let ws = workspace(p, "executions").await;
    let wsid = ws.id.clone();
    let now = now_ms();
    let s = p.store.as_ref();
    let contact = insert_contact(p, &ws.id, "runner", true, now).await;
    let w = workflow(&ws.id, "flow", "signup", now);
    let wait = step(&w, "wait", every_action()[5].clone(), now);
    let mut new = execution(&w, &contact.id, now);
    new.version = 7; // the store must ignore it and store 0
    commit(
        s,
        "inserting an execution",
        vec![
            Write::PutWorkflow(w.clone()),
            Write::InsertExecution(new.clone()),
        ],
    )
    .await;
    let mut stored = new.clone();
    stored.version = 0;
    assert_eq!(s.execution(&wsid, &new.id).await, Ok(Some(stored.clone())));
    assert_eq!(
        s.execution(&wsid, &ExecutionId::generate(crate::fixtures::ids()))
            .await,
        Ok(None),
        "an unknown execution id must read as None"
    );
    let mut same_id = stored.clone();
    same_id.contact_id = ContactId::generate(crate::fixtures::ids());
    commit_conflicts(
        s,
        "inserting the same execution id again",
        vec![Write::InsertExecution(same_id)],
    )
    .await;

    let mut changed = stored.clone();
    changed.status = ExecutionStatus::Waiting;
    changed.event = json!({"plan": "pro", "order": {"total": 12.5, "items": [1, 2]}});
    changed.current_step_id = Some(wait.id.clone());
    changed.waiting = Some(Wait {
        step_id: wait.id.clone(),
        event_name: Some("purchase".into()),
        until: Some(secs(now, 3600)),
    });
    changed.reason = Some("because".into());
    changed.updated_at = secs(now, 5);
    commit(
        s,
        "updating at version 0",
        vec![Write::UpdateExecution(changed.clone())],
    )
    .await;
    changed.version = 1;
    assert_eq!(s.execution(&wsid, &new.id).await, Ok(Some(changed.clone())));

    let mut stale = stored.clone();
    stale.status = ExecutionStatus::Failed;
    commit_conflicts(
        s,
        "updating at a stale version",
        vec![Write::UpdateExecution(stale)],
    )
    .await;
    let mut ended = changed.clone();
    ended.status = ExecutionStatus::Completed;
    ended.current_step_id = None;
    ended.waiting = None;
    ended.reason = None;
    ended.completed_at = Some(secs(now, 9));
    commit(
        s,
        "completing at version 1",
        vec![Write::UpdateExecution(ended.clone())],
    )
    .await;
    ended.version = 2;
    assert_eq!(s.execution(&wsid, &new.id).await, Ok(Some(ended.clone())));

    let mut missing = execution(&w, &contact.id, now);
    missing.status = ExecutionStatus::Completed;
    commit_conflicts(
        s,
        "updating an execution never stored",
        vec![Write::UpdateExecution(missing.clone())],
    )
    .await;
    assert_eq!(s.execution(&wsid, &missing.id).await, Ok(None));
}

/// Re-entry: with re-entry allowed, a contact has one RUNNING or WAITING execution of a
/// workflow at a time but may enter again once it ended; single entry refuses any second
/// execution; other contacts and other workflows are independent.
pub async fn execution_reentry_rules(p: &StorePorts) {
    let ws = workspace(p, "reentry").await;
    let wsid = ws.id.clone();
    let now = now_ms();
    let s = p.store.as_ref();
    let alice = insert_contact(p, &ws.id, "alice", true, now).await;
    let bob = insert_contact(p, &ws.id, "bob", true, now).await;
    let again = workflow(&ws.id, "again", "signup", now);
    let mut once = workflow(&ws.id, "once", "signup", now);
    once.allow_reentry = false;
    let wait = step(&again, "wait", every_action()[5].clone(), now);
    commit(
        s,
        "storing workflows",
        vec![
            Write::PutWorkflow(again.clone()),
            Write::PutWorkflow(once.clone()),
        ],
    )
    .await;

    // Re-entry allowed.
    let first = execution(&again, &alice.id, now);
    commit(
        s,
        "first entry",
        vec![Write::InsertExecution(first.clone())],
    )
    .await;
    commit_conflicts(
        s,
        "a second entry while RUNNING",
        vec![Write::InsertExecution(execution(&again, &alice.id, now))],
    )
    .await;
    let waiting = waiting_for(first.clone(), &wait.id, "purchase");
    commit(s, "waiting", vec![Write::UpdateExecution(waiting.clone())]).await;
    commit_conflicts(
        s,
        "a second entry while WAITING",
        vec![Write::InsertExecution(execution(&again, &alice.id, now))],
    )
    .await;
    commit(
        s,
        "bob enters the same workflow",
        vec![Write::InsertExecution(execution(&again, &bob.id, now))],
    )
    .await;
    let mut cancelled = waiting.clone();
    cancelled.version = 1;
    cancelled.status = ExecutionStatus::Cancelled;
    cancelled.waiting = None;
    cancelled.completed_at = Some(secs(now, 1));
    commit(s, "cancelling", vec![Write::UpdateExecution(cancelled)]).await;
    let second = execution(&again, &alice.id, secs(now, 2));
    commit(
        s,
        "entering again once the first ended",
        vec![Write::InsertExecution(second.clone())],
    )
    .await;
    // Single entry.
    let only = execution(&once, &alice.id, now);
    assert!(only.single_entry);
    commit(
        s,
        "single entry",
        vec![Write::InsertExecution(only.clone())],
    )
    .await;
    let mut done = only.clone();
    done.status = ExecutionStatus::Completed;
    done.completed_at = Some(secs(now, 1));
    commit(s, "completing it", vec![Write::UpdateExecution(done)]).await;
    commit_conflicts(
        s,
        "a single-entry workflow enrols a contact once, ever",
        vec![Write::InsertExecution(execution(&once, &alice.id, now))],
    )
    .await;
    commit(
        s,
        "another contact enters the single-entry workflow",
        vec![Write::InsertExecution(execution(&once, &bob.id, now))],
    )
    .await;
    // A single-entry start also counts executions made while re-entry was allowed.
    let carol = insert_contact(p, &ws.id, "carol", true, now).await;
    let mut carols = execution(&again, &carol.id, now);
    carols.status = ExecutionStatus::Completed;
    carols.completed_at = Some(secs(now, 1));
    commit(
        s,
        "an ended execution",
        vec![Write::InsertExecution(carols)],
    )
    .await;
    let mut strict = again.clone();
    strict.allow_reentry = false;
    let late = execution(&strict, &carol.id, secs(now, 3));
    commit_conflicts(
        s,
        "single entry after an earlier execution of the contact",
        vec![Write::InsertExecution(late)],
    )
    .await;
    assert_eq!(s.active_executions(&wsid, &again.id).await, Ok(2));
    assert_eq!(s.active_executions(&wsid, &once.id).await, Ok(1));
}

/// Racing starts of one (workflow, contact): with re-entry allowed and with single entry,
/// exactly one of 8 concurrent inserts commits and the others conflict.
pub async fn execution_racing_inserts_one_winner(p: &StorePorts) {
    let ws = workspace(p, "execution-race").await;
    let wsid = ws.id.clone();
    let now = now_ms();
    let contact = insert_contact(p, &ws.id, "racer", true, now).await;
    for allow_reentry in [true, false] {
        let mut w = workflow(&ws.id, "raced", "signup", now);
        w.allow_reentry = allow_reentry;
        commit(
            p.store.as_ref(),
            "storing the workflow",
            vec![Write::PutWorkflow(w.clone())],
        )
        .await;
        let writes = (0..8)
            .map(|_| Write::InsertExecution(execution(&w, &contact.id, now)))
            .collect();
        let what = format!("racing starts (allow_reentry {allow_reentry})");
        assert_eq!(race(p, &what, writes).await, 1, "{what}: winners");
        let (page, total) = p
            .store
            .executions(&wsid, &w.id, 0, 20)
            .await
            .expect("executions failed");
        assert_eq!((page.len(), total), (1, 1), "{what}: stored executions");
    }
}

/// Racing updates of one execution at one version: exactly one commits.
pub async fn execution_racing_updates_one_winner(p: &StorePorts) {
    let ws = workspace(p, "execution-update-race").await;
    let wsid = ws.id.clone();
    let now = now_ms();
    let contact = insert_contact(p, &ws.id, "updated", true, now).await;
    let w = workflow(&ws.id, "raced", "signup", now);
    let wait = step(&w, "wait", every_action()[5].clone(), now);
    let run = waiting_for(execution(&w, &contact.id, now), &wait.id, "purchase");
    commit(
        p.store.as_ref(),
        "storing a waiting execution",
        vec![
            Write::PutWorkflow(w.clone()),
            Write::InsertExecution(run.clone()),
        ],
    )
    .await;
    // An arriving event and a timeout (and more) race to resume it.
    let writes = (0..8)
        .map(|i| {
            let mut resumed = run.clone();
            resumed.status = ExecutionStatus::Running;
            resumed.waiting = None;
            resumed.event = json!({ "winner": i });
            Write::UpdateExecution(resumed)
        })
        .collect();
    assert_eq!(race(p, "racing resumes", writes).await, 1, "winners");
    let stored = p
        .store
        .execution(&wsid, &run.id)
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(stored.version, 1);
    assert_eq!(stored.status, ExecutionStatus::Running);
}

/// Executions are paged newest first (by start) with the workflow's total; only that
/// workflow's; `active_executions` counts the RUNNING and WAITING ones.
pub async fn executions_newest_first_and_active_count(p: &StorePorts) {
    let ws = workspace(p, "execution-pages").await;
    let wsid = ws.id.clone();
    let now = now_ms();
    let s = p.store.as_ref();
    let w = workflow(&ws.id, "paged", "signup", now);
    let other = workflow(&ws.id, "other", "signup", now);
    let wait = step(&w, "wait", every_action()[5].clone(), now);
    let mut writes = vec![
        Write::PutWorkflow(w.clone()),
        Write::PutWorkflow(other.clone()),
    ];
    let mut runs = Vec::new();
    for i in 0..5_i64 {
        let c = insert_contact(p, &ws.id, "paged", true, now).await;
        let mut run = execution(&w, &c.id, secs(now, 10 - i));
        match i {
            0 => run = waiting_for(run, &wait.id, "purchase"),
            1 | 2 => {
                run.status = ExecutionStatus::Completed;
                run.completed_at = Some(secs(now, 20));
            }
            3 => run.status = ExecutionStatus::Failed,
            _ => {}
        }
        writes.push(Write::InsertExecution(run.clone()));
        writes.push(Write::InsertExecution(execution(&other, &c.id, now)));
        runs.push(run);
    }
    commit(s, "storing executions", writes).await;
    // Started at now+10, now+9, ... : the list order is the insertion order.
    let (page, total) = s.executions(&wsid, &w.id, 0, 10).await.expect("read");
    assert_eq!(total, 5);
    assert_eq!(page, runs, "executions must be listed newest first");
    let (page, total) = s.executions(&wsid, &w.id, 2, 2).await.expect("read");
    assert_eq!((page, total), (runs[2..4].to_vec(), 5));
    assert_eq!(s.active_executions(&wsid, &w.id).await, Ok(2));
    assert_eq!(s.active_executions(&wsid, &other.id).await, Ok(5));
}

/// `waiting_executions` gives a contact's WAITING executions waiting for that event name,
/// oldest first; not RUNNING ones, delays, other names, other contacts.
pub async fn waiting_executions_of_contact(p: &StorePorts) {
    let ws = workspace(p, "waiting").await;
    let wsid = ws.id.clone();
    let now = now_ms();
    let s = p.store.as_ref();
    let alice = insert_contact(p, &ws.id, "alice", true, now).await;
    let bob = insert_contact(p, &ws.id, "bob", true, now).await;
    let flows: Vec<_> = (0..5)
        .map(|i| workflow(&ws.id, &format!("flow {i}"), "signup", now))
        .collect();
    let wait = step(&flows[0], "wait", every_action()[5].clone(), now);
    let late = waiting_for(
        execution(&flows[0], &alice.id, secs(now, 5)),
        &wait.id,
        "buy",
    );
    let early = waiting_for(
        execution(&flows[1], &alice.id, secs(now, 1)),
        &wait.id,
        "buy",
    );
    let other_name = waiting_for(execution(&flows[2], &alice.id, now), &wait.id, "refund");
    let mut delay = waiting_for(execution(&flows[3], &alice.id, now), &wait.id, "buy");
    if let Some(w) = delay.waiting.as_mut() {
        w.event_name = None;
        w.until = Some(secs(now, 60));
    }
    let running = execution(&flows[4], &alice.id, now);
    let bobs = waiting_for(execution(&flows[4], &bob.id, now), &wait.id, "buy");
    let mut writes: Vec<Write> = flows.iter().cloned().map(Write::PutWorkflow).collect();
    for e in [&late, &early, &other_name, &delay, &running, &bobs] {
        writes.push(Write::InsertExecution(e.clone()));
    }
    commit(s, "storing executions", writes).await;
    let a = alice.id.clone();
    assert_eq!(
        s.waiting_executions(&wsid, &a, "buy").await,
        Ok(vec![early.clone(), late.clone()])
    );
    assert_eq!(
        s.waiting_executions(&wsid, &a, "refund").await,
        Ok(vec![other_name])
    );
    assert_eq!(s.waiting_executions(&wsid, &a, "BUY").await, Ok(vec![]));
    let b = bob.id.clone();
    assert_eq!(s.waiting_executions(&wsid, &b, "buy").await, Ok(vec![bobs]));
    let mut resumed = early.clone();
    resumed.status = ExecutionStatus::Running;
    commit(s, "resuming one", vec![Write::UpdateExecution(resumed)]).await;
    assert_eq!(s.waiting_executions(&wsid, &a, "buy").await, Ok(vec![late]));
}

/// A step record reads back as inserted; a second insert of the same (execution, step)
/// conflicts; an update replaces it (attempts included); updating a record never stored
/// conflicts; an execution's records come in the order the steps started.
pub async fn step_runs_once_per_step(p: &StorePorts) {
    let ws = workspace(p, "step-runs").await;
    let wsid = ws.id.clone();
    let now = now_ms();
    let s = p.store.as_ref();
    let contact = insert_contact(p, &ws.id, "stepped", true, now).await;
    let w = workflow(&ws.id, "stepped", "signup", now);
    let steps: Vec<_> = every_action()
        .into_iter()
        .take(4)
        .map(|a| step(&w, "s", a, now))
        .collect();
    let run = execution(&w, &contact.id, now);
    let other_run = execution(&workflow(&ws.id, "other", "signup", now), &contact.id, now);
    let later = step_run(&run, &steps[0], secs(now, 3));
    let earlier = step_run(&run, &steps[1], secs(now, 1));
    let same_time = step_run(&run, &steps[2], secs(now, 3));
    commit(
        s,
        "storing step records",
        vec![
            Write::PutWorkflow(w.clone()),
            Write::InsertExecution(run.clone()),
            Write::InsertExecution(other_run.clone()),
            Write::InsertStepRun(later.clone()),
            Write::InsertStepRun(earlier.clone()),
            Write::InsertStepRun(same_time.clone()),
            Write::InsertStepRun(step_run(&other_run, &steps[0], now)),
        ],
    )
    .await;
    assert_eq!(
        s.step_run(&wsid, &run.id, &steps[0].id).await,
        Ok(Some(later.clone()))
    );
    assert_eq!(s.step_run(&wsid, &run.id, &steps[3].id).await, Ok(None));
    assert_eq!(
        s.step_runs(&wsid, &run.id).await,
        Ok(vec![earlier.clone(), later.clone(), same_time.clone()]),
        "records come in the order the steps started (ties in insertion order)"
    );
    let mut twice = later.clone();
    twice.status = StepRunStatus::Completed;
    commit_conflicts(
        s,
        "a second record of the same (execution, step)",
        vec![Write::InsertStepRun(twice)],
    )
    .await;

    let mut done = later.clone();
    done.status = StepRunStatus::Failed;
    done.output = Some(json!({"status": 503, "body": "unavailable", "n": 1.25}));
    done.error = Some("gave up after 2 attempts".into());
    done.email_id = Some(EmailId::generate(crate::fixtures::ids()));
    done.attempts = vec![
        WebhookAttempt {
            at: secs(now, 3),
            status_code: None,
            latency_ms: 10_000,
            error: Some("timed out".into()),
        },
        WebhookAttempt {
            at: secs(now, 8),
            status_code: Some(503),
            latency_ms: 12,
            error: Some("status 503".into()),
        },
    ];
    done.completed_at = Some(secs(now, 9));
    commit(
        s,
        "updating the record",
        vec![Write::UpdateStepRun(done.clone())],
    )
    .await;
    assert_eq!(
        s.step_run(&wsid, &run.id, &steps[0].id).await,
        Ok(Some(done.clone()))
    );
    let missing = step_run(&run, &steps[3], now);
    match s
        .commit(posthorn_core::ports::ChangeSet {
            writes: vec![Write::UpdateStepRun(missing)],
        })
        .await
    {
        Err(StoreError::Conflict(_)) => {}
        other => panic!("updating a record never stored: expected Conflict, got {other:?}"),
    }
    assert_eq!(s.step_run(&wsid, &run.id, &steps[3].id).await, Ok(None));
    assert_eq!(
        s.step_runs(&wsid, &other_run.id).await.map(|r| r.len()),
        Ok(1)
    );
}
