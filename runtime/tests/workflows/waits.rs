//! DELAY and WAIT_FOR_EVENT: time through the manual clock, events through /v1/track.

use posthorn_core::app::workflows::WorkflowView;
use posthorn_core::model::{Contact, Event};
use posthorn_core::ports::{ChangeSet, Write};
use posthorn_core::workflow::{
    DelayUnit, Execution, ExecutionStatus, Step, StepAction, StepRunStatus, Wait,
};
use serde_json::{json, Value};

use crate::harness::{delay, exit, World};

#[tokio::test]
async fn a_delay_holds_the_execution_until_its_time() {
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let delay = w.step(&wf, delay(2, DelayUnit::Hours)).await;
    let exit = w.step(&wf, exit(None)).await;
    w.edge(&wf, &World::trigger(&wf), &delay, None).await;
    w.edge(&wf, &delay.id, &exit, None).await;
    let exec = w
        .start(&wf, &w.contact("a@example.org", json!({})).await, json!({}))
        .await;
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Waiting);
    let until = view.execution.waiting.as_ref().and_then(|wt| wt.until);
    assert_eq!(until, Some(exec.started_at + chrono::Duration::hours(2)));

    w.after(chrono::Duration::minutes(119)).await;
    assert_eq!(
        w.execution(&wf.workflow.id, &exec.id)
            .await
            .execution
            .status,
        ExecutionStatus::Waiting
    );
    w.after(chrono::Duration::minutes(1)).await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    assert_eq!(view.steps.len(), 3);
    assert!(view
        .steps
        .iter()
        .all(|r| r.status == StepRunStatus::Completed));
}

/// TRIGGER → WAIT_FOR_EVENT(paid, 1 h) → EVENT: exit "paid", TIMEOUT: exit "late".
async fn waiting_flow(w: &World) -> posthorn_core::app::workflows::WorkflowView {
    let wf = w.event_workflow("checkout", false).await;
    let wait = w
        .step(
            &wf,
            StepAction::WaitForEvent {
                event_name: "paid".into(),
                timeout: Some(3600),
            },
        )
        .await;
    let paid = w.step(&wf, exit(Some("paid"))).await;
    let late = w.step(&wf, exit(Some("late"))).await;
    w.edge(&wf, &World::trigger(&wf), &wait, None).await;
    w.edge(&wf, &wait.id, &paid, Some(json!({"outcome": "EVENT"})))
        .await;
    w.edge(&wf, &wait.id, &late, Some(json!({"outcome": "TIMEOUT"})))
        .await;
    wf
}

#[tokio::test]
async fn the_awaited_event_resumes_the_execution_with_its_data_merged() {
    let w = World::new().await;
    let wf = waiting_flow(&w).await;
    w.track(
        "b@example.org",
        "checkout",
        json!({"cart": "c1", "total": 10}),
    )
    .await;
    w.run().await;
    let exec = w.executions(&wf).await.remove(0);
    assert_eq!(exec.status, ExecutionStatus::Waiting);
    // Another contact's event, or another name, changes nothing.
    w.track("other@example.org", "paid", json!({})).await;
    w.track("b@example.org", "viewed", json!({})).await;
    w.run().await;
    assert_eq!(
        w.execution(&wf.workflow.id, &exec.id)
            .await
            .execution
            .status,
        ExecutionStatus::Waiting
    );

    w.after(chrono::Duration::minutes(10)).await;
    w.track(
        "b@example.org",
        "paid",
        json!({"total": 12, "method": "card"}),
    )
    .await;
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    assert_eq!(view.execution.reason.as_deref(), Some("paid"));
    assert_eq!(
        view.execution.event,
        json!({"cart": "c1", "total": 12, "method": "card"})
    );
    assert_eq!(
        view.steps[1].output.as_ref().map(|o| o["outcome"].clone()),
        Some(json!("EVENT"))
    );
    // The timeout job finds the execution moved on.
    w.after(chrono::Duration::hours(2)).await;
    let again = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(again.execution.reason.as_deref(), Some("paid"));
    assert_eq!(again.steps.len(), 3);
}

#[tokio::test]
async fn the_timeout_wins_when_no_event_comes() {
    let w = World::new().await;
    let wf = waiting_flow(&w).await;
    w.track("c@example.org", "checkout", json!({})).await;
    w.run().await;
    w.after(chrono::Duration::minutes(59)).await;
    let exec = w.executions(&wf).await.remove(0);
    assert_eq!(exec.status, ExecutionStatus::Waiting);
    w.after(chrono::Duration::minutes(1)).await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    assert_eq!(view.execution.reason.as_deref(), Some("late"));
    // An event after the timeout resumes nothing.
    w.track("c@example.org", "paid", json!({})).await;
    w.run().await;
    assert_eq!(
        w.execution(&wf.workflow.id, &exec.id)
            .await
            .execution
            .reason
            .as_deref(),
        Some("late")
    );
}

#[tokio::test]
async fn an_early_wake_up_neither_ends_nor_loses_a_delay() {
    use posthorn_core::ports::{ChangeSet, JobPayload, NewJob, Write};
    let w = World::new().await;
    let wf = w.manual_workflow().await;
    let delay = w.step(&wf, delay(1, DelayUnit::Days)).await;
    w.edge(&wf, &World::trigger(&wf), &delay, None).await;
    let exec = w
        .start(&wf, &w.contact("d@example.org", json!({})).await, json!({}))
        .await;
    w.run().await;
    let early = JobPayload::RunWorkflowStep {
        workspace_id: exec.workspace_id.clone(),
        execution_id: exec.id.clone(),
        step_id: delay.id.clone(),
    };
    let mut changes = ChangeSet::new();
    changes.push(Write::EnqueueJob(NewJob::at(&*w.clock, early, w.now())));
    w.engine.store.commit(changes).await.expect("early job");
    w.run().await;
    assert_eq!(
        w.execution(&wf.workflow.id, &exec.id)
            .await
            .execution
            .status,
        ExecutionStatus::Waiting
    );
    w.after(chrono::Duration::days(1)).await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    assert_eq!(view.steps.len(), 2);
}

/// Stores a `paid` event of `contact` the way a track that raced the wait's commit does:
/// its request read that nobody waited, so no dispatch was queued with it.
async fn paid_without_dispatch(w: &World, contact: &Contact, data: Value) -> Event {
    let event = Event::new(
        &*w.clock,
        &contact.workspace_id,
        "paid",
        data,
        Some(contact.id.clone()),
        None,
        w.now(),
    );
    let mut changes = ChangeSet::new();
    changes.push(Write::AppendEvent(event.clone()));
    w.engine.store.commit(changes).await.expect("event stored");
    event
}

/// `email`'s contact, made now, checks out (entering `wf`'s wait); its execution.
async fn checkout(w: &World, wf: &WorkflowView, email: &str, data: Value) -> (Contact, Execution) {
    let contact = w.contact(email, json!({})).await;
    w.track(email, "checkout", data).await;
    w.run().await;
    let exec = w.executions(wf).await.remove(0);
    (contact, exec)
}

async fn status(w: &World, wf: &WorkflowView, exec: &Execution) -> ExecutionStatus {
    w.execution(&wf.workflow.id, &exec.id)
        .await
        .execution
        .status
}

#[tokio::test]
async fn an_event_that_raced_the_wait_ends_it_within_a_minute() {
    let w = World::new().await;
    let wf = waiting_flow(&w).await;
    let (contact, exec) = checkout(&w, &wf, "e@example.org", json!({"cart": "c9"})).await;
    assert_eq!(exec.status, ExecutionStatus::Waiting);
    paid_without_dispatch(&w, &contact, json!({"total": 3})).await;
    w.after(Wait::LATE_EVENT_CHECK - chrono::Duration::seconds(1))
        .await;
    assert_eq!(
        status(&w, &wf, &exec).await,
        ExecutionStatus::Waiting,
        "nothing dispatched it: only the late-event look can end it"
    );
    w.after(chrono::Duration::seconds(1)).await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.reason.as_deref(), Some("paid"));
    assert_eq!(view.execution.event, json!({"cart": "c9", "total": 3}));
    // The timeout job finds it moved on.
    w.after(chrono::Duration::hours(2)).await;
    let again = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(again.execution.reason.as_deref(), Some("paid"));
    assert_eq!(again.steps.len(), 3);
}

/// TRIGGER(checkout) → WAIT_FOR_EVENT(paid, no timeout) → EVENT: exit "paid"; the wait.
async fn untimed_flow(w: &World) -> (WorkflowView, Step) {
    let wf = w.event_workflow("checkout", false).await;
    let wait = w
        .step(
            &wf,
            StepAction::WaitForEvent {
                event_name: "paid".into(),
                timeout: None,
            },
        )
        .await;
    let paid = w.step(&wf, exit(Some("paid"))).await;
    w.edge(&wf, &World::trigger(&wf), &wait, None).await;
    w.edge(&wf, &wait.id, &paid, Some(json!({"outcome": "EVENT"})))
        .await;
    (wf, wait)
}

#[tokio::test]
async fn a_wait_without_timeout_is_looked_at_too() {
    let w = World::new().await;
    let (wf, _) = untimed_flow(&w).await;
    let (contact, exec) = checkout(&w, &wf, "f@example.org", json!({})).await;
    paid_without_dispatch(&w, &contact, json!({})).await;
    w.after(Wait::LATE_EVENT_CHECK).await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.reason.as_deref(), Some("paid"));
}

#[tokio::test]
async fn at_the_timeout_an_event_made_in_time_wins_over_the_timeout() {
    let w = World::new().await;
    let wf = waiting_flow(&w).await;
    let (contact, exec) = checkout(&w, &wf, "g@example.org", json!({})).await;
    // Past the late-event look; the event's dispatch never ran (queued behind a backlog,
    // or lost to the race): the timeout's job finds the event made in time.
    w.after(chrono::Duration::minutes(30)).await;
    paid_without_dispatch(&w, &contact, json!({})).await;
    w.after(chrono::Duration::minutes(30)).await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.reason.as_deref(), Some("paid"));
}

#[tokio::test]
async fn an_event_made_before_the_wait_does_not_end_it() {
    let w = World::new().await;
    let wf = waiting_flow(&w).await;
    let contact = w.contact("h@example.org", json!({})).await;
    paid_without_dispatch(&w, &contact, json!({})).await;
    w.after(chrono::Duration::milliseconds(1)).await;
    w.track("h@example.org", "checkout", json!({})).await;
    w.run().await;
    let exec = w.executions(&wf).await.remove(0);
    w.after(Wait::LATE_EVENT_CHECK).await;
    assert_eq!(status(&w, &wf, &exec).await, ExecutionStatus::Waiting);
    w.after(chrono::Duration::hours(1)).await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.reason.as_deref(), Some("late"));
}

#[tokio::test]
async fn an_event_made_after_the_timeout_does_not_end_it() {
    let w = World::new().await;
    let wf = waiting_flow(&w).await;
    let (contact, exec) = checkout(&w, &wf, "i@example.org", json!({})).await;
    w.after(chrono::Duration::minutes(30)).await;
    // The timeout's job runs late: an event made after the timeout is stored first.
    w.clock.advance(chrono::Duration::minutes(31));
    paid_without_dispatch(&w, &contact, json!({})).await;
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.reason.as_deref(), Some("late"));
}

#[tokio::test]
async fn a_dispatch_of_an_event_made_after_the_timeout_does_not_end_it() {
    use posthorn_core::ports::{JobPayload, NewJob};
    let w = World::new().await;
    let wf = waiting_flow(&w).await;
    let (contact, exec) = checkout(&w, &wf, "j@example.org", json!({})).await;
    w.after(chrono::Duration::minutes(30)).await;
    // An event made a minute after the timeout, its dispatch claimed before the timeout's
    // job (due earlier here, as a busy queue may hand them out).
    w.clock.advance(chrono::Duration::minutes(31));
    let event = paid_without_dispatch(&w, &contact, json!({})).await;
    let dispatch = JobPayload::DispatchWorkflowEvent {
        workspace_id: event.workspace_id.clone(),
        event_id: event.id.clone(),
    };
    let mut changes = ChangeSet::new();
    let early = w.now() - chrono::Duration::minutes(2);
    changes.push(Write::EnqueueJob(NewJob::at(&*w.clock, dispatch, early)));
    w.engine
        .store
        .commit(changes)
        .await
        .expect("dispatch queued");
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.reason.as_deref(), Some("late"));
}

#[tokio::test]
async fn deleting_an_untimed_wait_fails_the_executions_waiting_there() {
    let w = World::new().await;
    let (wf, wait) = untimed_flow(&w).await;
    w.track("k@example.org", "checkout", json!({})).await;
    w.run().await;
    let exec = w.executions(&wf).await.remove(0);
    // Past the late-event look: no job of the wait's is left.
    w.after(chrono::Duration::minutes(2)).await;
    assert_eq!(status(&w, &wf, &exec).await, ExecutionStatus::Waiting);
    w.engine
        .delete_step(&w.caller, &wf.workflow.id, &wait.id)
        .await
        .expect("deleted");
    w.run().await;
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Failed);
    assert!(
        view.execution
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("deleted")),
        "{:?}",
        view.execution.reason
    );
}
