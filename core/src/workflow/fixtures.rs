//! Steps and transitions for the workflow module's tests.

use chrono::Utc;
use serde_json::json;

use super::{Step, StepAction, Transition, TransitionCondition};
use crate::model::{StepId, TransitionId, WorkflowId, WorkspaceId};

/// A step `id` of workflow `wf` in workspace `ws`.
pub(crate) fn step(id: &str, action: StepAction) -> Step {
    Step {
        id: StepId::from(id),
        workspace_id: WorkspaceId::from("ws"),
        workflow_id: WorkflowId::from("wf"),
        name: id.into(),
        position: json!({}),
        action,
        template_id: None,
        created_at: Utc::now(),
        updated_at: Utc::now(),
    }
}

/// An edge `from` → `to`, taken on `condition`, with priority `p`.
pub(crate) fn edge(
    from: &str,
    to: &str,
    condition: Option<TransitionCondition>,
    p: i32,
) -> Transition {
    Transition {
        id: TransitionId::from(format!("{from}-{to}")),
        workspace_id: WorkspaceId::from("ws"),
        workflow_id: WorkflowId::from("wf"),
        from_step_id: StepId::from(from),
        to_step_id: StepId::from(to),
        condition,
        priority: p,
        created_at: Utc::now(),
        updated_at: Utc::now(),
    }
}
