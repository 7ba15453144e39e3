//! Transitions of a workflow: create (under the graph rules) and delete.

use super::CreateTransition;
use crate::app::Caller;
use crate::error::{Error, Resource, Result};
use crate::model::{TransitionId, WorkflowId};
use crate::ports::{ChangeSet, Write};
use crate::workflow::{check_transition, Transition};
use crate::Engine;

impl Engine {
    /// `POST /workflows/{id}/transitions`: unknown steps are 404 `NOT_FOUND`; a broken graph
    /// rule is 400 `INVALID_STATE` naming the rule.
    pub async fn create_transition(
        &self,
        caller: &Caller,
        workflow_id: &WorkflowId,
        cmd: CreateTransition,
    ) -> Result<Transition> {
        let workflow = self.workflow_record(caller, workflow_id).await?;
        let ws = &workflow.workspace_id;
        let steps = self.store.workflow_steps(ws, &workflow.id).await?;
        let find = |id| {
            steps
                .iter()
                .find(|s| &s.id == id)
                .ok_or(Error::NotFound(Resource::Step))
        };
        let from = find(&cmd.from_step_id)?;
        let to = find(&cmd.to_step_id)?;
        let existing = self.store.workflow_transitions(ws, &workflow.id).await?;
        check_transition(&existing, from, to, cmd.condition.as_ref())
            .map_err(|rule| Error::InvalidState(rule.to_string()))?;
        let now = self.clock.now();
        let transition = Transition {
            id: TransitionId::generate(&*self.clock),
            workspace_id: ws.clone(),
            workflow_id: workflow.id.clone(),
            from_step_id: from.id.clone(),
            to_step_id: to.id.clone(),
            condition: cmd.condition,
            priority: cmd.priority.unwrap_or(0),
            created_at: now,
            updated_at: now,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::PutTransition(transition.clone()));
        self.store.commit(changes).await?;
        Ok(transition)
    }

    /// `DELETE /workflows/{id}/transitions/{transitionId}`.
    pub async fn delete_transition(
        &self,
        caller: &Caller,
        workflow_id: &WorkflowId,
        transition_id: &TransitionId,
    ) -> Result<()> {
        let workflow = self.workflow_record(caller, workflow_id).await?;
        let ws = &workflow.workspace_id;
        let exists = self
            .store
            .workflow_transitions(ws, &workflow.id)
            .await?
            .iter()
            .any(|t| &t.id == transition_id);
        if !exists {
            return Err(Error::NotFound(Resource::Transition));
        }
        let mut changes = ChangeSet::new();
        changes.push(Write::DeleteTransition {
            workspace_id: ws.clone(),
            workflow_id: workflow.id,
            id: transition_id.clone(),
        });
        self.store.commit(changes).await?;
        Ok(())
    }
}
