use chrono::Utc;
use serde_json::json;

use super::*;
use crate::model::{ContactId, EmailAddress, ExecutionId, WorkflowId, WorkspaceId};
use crate::segment::Operator;
use crate::workflow::fixtures::{self, step};
use crate::workflow::{Branch, DelayUnit, StepCondition};

fn edge(from: &str, to: &str, branch: Option<Branch>) -> Transition {
    fixtures::edge(
        from,
        to,
        branch.map(|branch| TransitionCondition::Branch { branch }),
        0,
    )
}

/// trigger → plan equals "pro"? → yes: `yes`, no: `no`.
fn graph(yes: StepAction, no: StepAction) -> (Vec<Step>, Vec<Transition>) {
    let condition = StepAction::Condition(StepCondition {
        field: "event.plan".into(),
        operator: Operator::Equals,
        value: Some(json!("pro")),
    });
    let steps = vec![
        step("t", StepAction::Trigger { event_name: None }),
        step("c", condition),
        step("yes", yes),
        step("no", no),
    ];
    let transitions = vec![
        edge("t", "c", None),
        edge("c", "yes", Some(Branch::Yes)),
        edge("c", "no", Some(Branch::No)),
    ];
    (steps, transitions)
}

fn contact() -> Contact {
    let email = EmailAddress::parse("ann@example.com").expect("valid");
    let ws = WorkspaceId::from("ws");
    let clock = crate::ports::SystemClock;
    Contact::new(
        &clock,
        &ws,
        email,
        true,
        Default::default(),
        false,
        Utc::now(),
    )
}

fn execution(plan: &str) -> Execution {
    let now = Utc::now();
    Execution {
        id: ExecutionId::from("ex"),
        workspace_id: WorkspaceId::from("ws"),
        workflow_id: WorkflowId::from("wf"),
        contact_id: ContactId::from("c"),
        status: ExecutionStatus::Running,
        event: json!({ "plan": plan }),
        current_step_id: Some(StepId::from("t")),
        waiting: None,
        reason: None,
        single_entry: true,
        started_at: now,
        completed_at: None,
        updated_at: now,
        version: 0,
    }
}

fn delay() -> StepAction {
    StepAction::Delay {
        amount: 1,
        unit: DelayUnit::Hours,
    }
}

fn exit(reason: &str) -> StepAction {
    StepAction::Exit {
        reason: Some(reason.into()),
    }
}

fn ran(runs: &[StepRun]) -> Vec<(&str, Option<&Value>)> {
    runs.iter()
        .map(|r| (r.step_id.as_str(), r.output.as_ref()))
        .collect()
}

#[test]
fn a_chain_of_pure_steps_runs_to_the_exit_of_its_branch() {
    let (steps, transitions) = graph(exit("upgraded"), exit("free"));
    let now = Utc::now();
    let mut ex = execution("pro");
    let runs = run_pure_steps(&mut ex, &steps, &transitions, Some(&contact()), now);
    assert_eq!(
        ran(&runs),
        vec![
            ("t", Some(&json!({}))),
            ("c", Some(&json!({ "branch": "yes" }))),
            ("yes", Some(&json!({ "reason": "upgraded" }))),
        ]
    );
    assert!(runs
        .iter()
        .all(|r| r.status == StepRunStatus::Completed && r.completed_at == Some(now)));
    assert_eq!(ex.status, ExecutionStatus::Completed);
    assert_eq!(ex.reason.as_deref(), Some("upgraded"));
    assert_eq!(ex.current_step_id, None);
    assert_eq!(ex.completed_at, Some(now));
    assert_eq!(needs_job(&ex), None);

    let mut ex = execution("free");
    let runs = run_pure_steps(&mut ex, &steps, &transitions, Some(&contact()), now);
    assert_eq!(runs.last().map(|r| r.step_id.as_str()), Some("no"));
    assert_eq!(ex.reason.as_deref(), Some("free"));
}

#[test]
fn the_chain_stops_at_the_first_step_that_needs_a_job() {
    let (steps, transitions) = graph(delay(), exit("free"));
    let mut ex = execution("pro");
    let runs = run_pure_steps(&mut ex, &steps, &transitions, Some(&contact()), Utc::now());
    assert_eq!(ran(&runs).len(), 2);
    assert_eq!(ex.status, ExecutionStatus::Running);
    assert_eq!(needs_job(&ex).map(StepId::as_str), Some("yes"));
}

#[test]
fn a_condition_without_its_contact_is_left_to_its_job() {
    let (steps, transitions) = graph(exit("a"), exit("b"));
    let mut ex = execution("pro");
    let runs = run_pure_steps(&mut ex, &steps, &transitions, None, Utc::now());
    assert_eq!(ran(&runs), vec![("t", Some(&json!({})))]);
    assert_eq!(needs_job(&ex).map(StepId::as_str), Some("c"));
}

#[test]
fn a_missing_step_or_branch_is_where_the_chain_ends() {
    let (mut steps, mut transitions) = graph(exit("a"), exit("b"));
    // The step the execution stands at was deleted: its job fails the execution.
    steps.retain(|s| s.id.as_str() != "c");
    let mut ex = execution("pro");
    run_pure_steps(&mut ex, &steps, &transitions, Some(&contact()), Utc::now());
    assert_eq!(needs_job(&ex).map(StepId::as_str), Some("c"));

    // No edge for the branch taken: the execution is over after the condition.
    let (steps, _) = graph(exit("a"), exit("b"));
    transitions.retain(|t| t.to_step_id.as_str() != "no");
    let mut ex = execution("free");
    let runs = run_pure_steps(&mut ex, &steps, &transitions, Some(&contact()), Utc::now());
    assert_eq!(runs.len(), 2);
    assert_eq!(ex.status, ExecutionStatus::Completed);
    assert_eq!(ex.reason, None);
}

#[test]
fn side_effects_and_waits_are_never_pure() {
    let now = Utc::now();
    let c = contact();
    for action in [
        delay(),
        StepAction::WaitForEvent {
            event_name: "paid".into(),
            timeout: None,
        },
    ] {
        assert_eq!(pure_outcome(&action, Some(&c), &json!({}), now), None);
    }
}
