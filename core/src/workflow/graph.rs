//! The rules a workflow's graph obeys, checked before a transition is added: no self-loop,
//! no cycle, nothing out of EXIT, branch edges only out of CONDITION, outcome edges only out
//! of WAIT_FOR_EVENT, one edge per branch or outcome, one plain edge per step.

use std::collections::{HashMap, HashSet};

use super::{Step, StepType, Transition, TransitionCondition};
use crate::model::StepId;

/// A graph rule a new transition would break; the message names the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GraphRule {
    /// `from` and `to` are the same step.
    #[error("no self-loops: a transition cannot lead from a step to itself")]
    SelfLoop,
    /// `to` already leads back to `from`.
    #[error("no cycles: this transition would close a cycle (the target step already leads back to the source step)")]
    Cycle,
    /// EXIT ends the execution.
    #[error("no edge out of EXIT: an EXIT step ends the execution")]
    OutOfExit,
    /// `{branch}` on a step that is not a CONDITION.
    #[error(
        "branch edges only out of CONDITION: a {{branch}} condition needs a CONDITION source step"
    )]
    BranchOutsideCondition,
    /// `{outcome}` on a step that is not a WAIT_FOR_EVENT.
    #[error("outcome edges only out of WAIT_FOR_EVENT: an {{outcome}} condition needs a WAIT_FOR_EVENT source step")]
    OutcomeOutsideWait,
    /// The step already has an edge for that branch or outcome.
    #[error("at most one edge per branch or outcome: the source step already has an edge with this condition")]
    DuplicateCondition,
    /// The step already has its plain edge.
    #[error("at most one plain edge per step: the source step already has a transition without condition")]
    DuplicatePlain,
    /// Nothing may lead into the TRIGGER step: it is where executions start.
    #[error("no edge into TRIGGER: executions start at the TRIGGER step")]
    IntoTrigger,
}

/// Checks that a transition `from` → `to` with `condition` may join `existing` (the
/// workflow's transitions).
pub fn check_transition(
    existing: &[Transition],
    from: &Step,
    to: &Step,
    condition: Option<&TransitionCondition>,
) -> Result<(), GraphRule> {
    if from.id == to.id {
        return Err(GraphRule::SelfLoop);
    }
    let from_type = from.action.step_type();
    if from_type == StepType::Exit {
        return Err(GraphRule::OutOfExit);
    }
    if to.action.step_type() == StepType::Trigger {
        return Err(GraphRule::IntoTrigger);
    }
    match condition {
        Some(TransitionCondition::Branch { .. }) if from_type != StepType::Condition => {
            return Err(GraphRule::BranchOutsideCondition)
        }
        Some(TransitionCondition::Outcome { .. }) if from_type != StepType::WaitForEvent => {
            return Err(GraphRule::OutcomeOutsideWait)
        }
        _ => {}
    }
    let out_of_from = existing.iter().filter(|t| t.from_step_id == from.id);
    for t in out_of_from {
        match (t.condition.as_ref(), condition) {
            (None, None) => return Err(GraphRule::DuplicatePlain),
            (Some(a), Some(b)) if a == b => return Err(GraphRule::DuplicateCondition),
            _ => {}
        }
    }
    if reaches(existing, &to.id, &from.id) {
        return Err(GraphRule::Cycle);
    }
    Ok(())
}

/// Whether `target` can be reached from `start` along `edges`.
fn reaches(edges: &[Transition], start: &StepId, target: &StepId) -> bool {
    let mut next: HashMap<&StepId, Vec<&StepId>> = HashMap::new();
    for t in edges {
        next.entry(&t.from_step_id).or_default().push(&t.to_step_id);
    }
    let mut seen: HashSet<&StepId> = HashSet::new();
    let mut stack = vec![start];
    while let Some(step) = stack.pop() {
        if step == target {
            return true;
        }
        if seen.insert(step) {
            stack.extend(next.get(step).into_iter().flatten().copied());
        }
    }
    false
}

/// The edge an execution follows out of `from`: among the plain edge and the edges whose
/// condition is `taken`, the one with the lowest priority (the oldest on a tie, as
/// `transitions` is ordered by priority then age).
pub fn next_transition<'t>(
    transitions: &'t [Transition],
    from: &StepId,
    taken: Option<&TransitionCondition>,
) -> Option<&'t Transition> {
    transitions
        .iter()
        .filter(|t| &t.from_step_id == from)
        .filter(|t| t.condition.is_none() || t.condition.as_ref() == taken)
        .min_by_key(|t| t.priority)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::fixtures::{edge, step};
    use crate::workflow::{Branch, StepAction, StepCondition, WaitOutcome};

    fn exit(id: &str) -> Step {
        step(id, StepAction::Exit { reason: None })
    }

    fn cond(id: &str) -> Step {
        step(
            id,
            StepAction::Condition(StepCondition {
                field: "email".into(),
                operator: crate::segment::Operator::Exists,
                value: None,
            }),
        )
    }

    const YES: TransitionCondition = TransitionCondition::Branch {
        branch: Branch::Yes,
    };

    #[test]
    fn each_rule_is_refused_by_name() {
        let trigger = step("t", StepAction::Trigger { event_name: None });
        let a = cond("a");
        let b = exit("b");
        let c = exit("c");
        assert_eq!(
            check_transition(&[], &a, &a, None),
            Err(GraphRule::SelfLoop)
        );
        assert_eq!(
            check_transition(&[], &b, &a, None),
            Err(GraphRule::OutOfExit)
        );
        assert_eq!(
            check_transition(&[], &a, &trigger, None),
            Err(GraphRule::IntoTrigger)
        );
        assert_eq!(
            check_transition(&[], &trigger, &a, Some(&YES)),
            Err(GraphRule::BranchOutsideCondition)
        );
        let timeout = TransitionCondition::Outcome {
            outcome: WaitOutcome::Timeout,
        };
        assert_eq!(
            check_transition(&[], &a, &b, Some(&timeout)),
            Err(GraphRule::OutcomeOutsideWait)
        );
        let existing = vec![edge("a", "b", Some(YES), 0), edge("t", "a", None, 0)];
        assert_eq!(
            check_transition(&existing, &a, &c, Some(&YES)),
            Err(GraphRule::DuplicateCondition)
        );
        assert_eq!(
            check_transition(&existing, &trigger, &c, None),
            Err(GraphRule::DuplicatePlain)
        );
        let no = TransitionCondition::Branch { branch: Branch::No };
        assert_eq!(check_transition(&existing, &a, &c, Some(&no)), Ok(()));
        assert!(GraphRule::Cycle.to_string().starts_with("no cycles"));
    }

    #[test]
    fn a_cycle_through_several_steps_is_refused() {
        let d = step(
            "d",
            StepAction::Delay {
                amount: 1,
                unit: crate::workflow::DelayUnit::Minutes,
            },
        );
        let e = step(
            "e",
            StepAction::Delay {
                amount: 1,
                unit: crate::workflow::DelayUnit::Minutes,
            },
        );
        let existing = vec![edge("d", "e", None, 0), edge("e", "f", None, 0)];
        let f = step(
            "f",
            StepAction::Delay {
                amount: 1,
                unit: crate::workflow::DelayUnit::Minutes,
            },
        );
        assert_eq!(
            check_transition(&existing, &f, &d, None),
            Err(GraphRule::Cycle)
        );
        let g = exit("g");
        assert_eq!(check_transition(&existing, &f, &g, None), Ok(()));
        // With only d → e, e → d closes a two-step cycle.
        assert_eq!(
            check_transition(&existing[..1], &e, &d, None),
            Err(GraphRule::Cycle)
        );
    }

    #[test]
    fn the_lowest_priority_matching_edge_is_followed() {
        let no = TransitionCondition::Branch { branch: Branch::No };
        let edges = vec![
            edge("a", "x", Some(no), 0),
            edge("a", "y", Some(YES), 5),
            edge("a", "z", None, 9),
        ];
        let a = StepId::from("a");
        assert_eq!(
            next_transition(&edges, &a, Some(&YES)).map(|t| t.to_step_id.as_str()),
            Some("y")
        );
        assert_eq!(
            next_transition(&edges, &a, Some(&no)).map(|t| t.to_step_id.as_str()),
            Some("x")
        );
        assert_eq!(
            next_transition(&edges, &a, None).map(|t| t.to_step_id.as_str()),
            Some("z")
        );
        assert!(next_transition(&edges, &StepId::from("q"), None).is_none());
    }
}
