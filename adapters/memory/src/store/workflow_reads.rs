//! The `WorkflowStore` reads of the memory store.

use async_trait::async_trait;
use posthorn_core::model::{
    ContactId, Event, ExecutionId, StepId, TemplateId, WorkflowId, WorkspaceId,
};
use posthorn_core::ports::{SigningKeys, StoreError, WorkflowStore};
use posthorn_core::workflow::{Execution, Step, StepRun, Transition, Trigger, Workflow};

use super::workflows::WorkflowData;
use super::MemoryStore;

impl MemoryStore {
    /// Runs `f` on the workflow records of `ws` (empty ones when the workspace has none).
    fn with_workflows<T>(&self, ws: &WorkspaceId, f: impl FnOnce(&WorkflowData) -> T) -> T {
        let state = self.read();
        match state.data.get(ws.as_str()) {
            Some(data) => f(&data.workflows),
            None => f(&WorkflowData::default()),
        }
    }
}

fn page<T: Clone>(items: Vec<T>, offset: usize, limit: usize) -> (Vec<T>, u64) {
    let total = items.len() as u64;
    (items.into_iter().skip(offset).take(limit).collect(), total)
}

#[async_trait]
impl WorkflowStore for MemoryStore {
    async fn workflow(
        &self,
        ws: &WorkspaceId,
        id: &WorkflowId,
    ) -> Result<Option<Workflow>, StoreError> {
        Ok(self.with_workflows(ws, |d| d.workflows.get(id).cloned()))
    }

    async fn workflows(
        &self,
        ws: &WorkspaceId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Workflow>, u64), StoreError> {
        let mut all =
            self.with_workflows(ws, |d| d.workflows.values().cloned().collect::<Vec<_>>());
        all.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        Ok(page(all, offset, limit))
    }

    async fn workflow_steps(
        &self,
        ws: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<Vec<Step>, StoreError> {
        let mut steps = self.with_workflows(ws, |d| {
            d.steps
                .values()
                .filter(|s| &s.workflow_id == workflow_id)
                .cloned()
                .collect::<Vec<_>>()
        });
        steps.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(steps)
    }

    async fn workflow_transitions(
        &self,
        ws: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<Vec<Transition>, StoreError> {
        let mut edges = self.with_workflows(ws, |d| {
            d.transitions
                .values()
                .filter(|t| &t.workflow_id == workflow_id)
                .cloned()
                .collect::<Vec<_>>()
        });
        edges.sort_by(|a, b| {
            (a.priority, a.created_at, &a.id).cmp(&(b.priority, b.created_at, &b.id))
        });
        Ok(edges)
    }

    async fn event_workflows(
        &self,
        ws: &WorkspaceId,
        event_name: &str,
    ) -> Result<Vec<Workflow>, StoreError> {
        let mut found = self.with_workflows(ws, |d| {
            d.workflows
                .values()
                .filter(|w| w.enabled && triggered_by(w, event_name))
                .cloned()
                .collect::<Vec<_>>()
        });
        found.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(found)
    }

    async fn has_event_interest(
        &self,
        ws: &WorkspaceId,
        event_name: &str,
        contact_id: &ContactId,
    ) -> Result<bool, StoreError> {
        Ok(self.with_workflows(ws, |d| {
            d.waiting
                .contains_key(&(contact_id.clone(), event_name.to_string()))
                || d.workflows
                    .values()
                    .any(|w| w.enabled && triggered_by(w, event_name))
        }))
    }

    async fn waiting_executions(
        &self,
        ws: &WorkspaceId,
        contact_id: &ContactId,
        event_name: &str,
    ) -> Result<Vec<Execution>, StoreError> {
        Ok(self.with_workflows(ws, |d| {
            d.waiting
                .get(&(contact_id.clone(), event_name.to_string()))
                .into_iter()
                .flatten()
                .filter_map(|(_, id)| d.executions.get(id).cloned())
                .collect()
        }))
    }

    async fn execution(
        &self,
        ws: &WorkspaceId,
        id: &ExecutionId,
    ) -> Result<Option<Execution>, StoreError> {
        Ok(self.with_workflows(ws, |d| d.executions.get(id).cloned()))
    }

    async fn executions(
        &self,
        ws: &WorkspaceId,
        workflow_id: &WorkflowId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Execution>, u64), StoreError> {
        Ok(self.with_workflows(ws, |d| {
            let ids = d.executions_by_workflow.get(workflow_id);
            let total = ids.map_or(0, |s| s.len() as u64);
            let items = ids
                .into_iter()
                .flatten()
                .rev()
                .skip(offset)
                .take(limit)
                .filter_map(|(_, id)| d.executions.get(id).cloned())
                .collect();
            (items, total)
        }))
    }

    async fn active_executions(
        &self,
        ws: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<u64, StoreError> {
        Ok(self.with_workflows(ws, |d| {
            d.executions_by_workflow
                .get(workflow_id)
                .into_iter()
                .flatten()
                .filter(|(_, id)| d.executions.get(id).is_some_and(|e| e.status.is_active()))
                .count() as u64
        }))
    }

    async fn step_run(
        &self,
        ws: &WorkspaceId,
        execution_id: &ExecutionId,
        step_id: &StepId,
    ) -> Result<Option<StepRun>, StoreError> {
        Ok(self.with_workflows(ws, |d| {
            d.step_runs
                .get(&(execution_id.clone(), step_id.clone()))
                .cloned()
        }))
    }

    async fn step_runs(
        &self,
        ws: &WorkspaceId,
        execution_id: &ExecutionId,
    ) -> Result<Vec<StepRun>, StoreError> {
        let mut runs = self.with_workflows(ws, |d| {
            d.step_runs
                .iter()
                .filter(|((e, _), _)| e == execution_id)
                .map(|(_, r)| r.clone())
                .collect::<Vec<_>>()
        });
        runs.sort_by(|a, b| (a.started_at, &a.step_id).cmp(&(b.started_at, &b.step_id)));
        Ok(runs)
    }

    async fn template_in_workflows(
        &self,
        ws: &WorkspaceId,
        template_id: &TemplateId,
    ) -> Result<bool, StoreError> {
        Ok(self.with_workflows(ws, |d| {
            d.steps
                .values()
                .any(|s| s.template_id.as_ref() == Some(template_id))
        }))
    }

    async fn event(&self, ws: &WorkspaceId, id: &str) -> Result<Option<Event>, StoreError> {
        let state = self.read();
        Ok(state.data.get(ws.as_str()).and_then(|d| {
            d.event_keys
                .get(id)
                .and_then(|key| d.events.get(key))
                .cloned()
        }))
    }

    async fn signing_keys(&self, ws: &WorkspaceId) -> Result<Option<SigningKeys>, StoreError> {
        Ok(self.with_workflows(ws, |d| d.signing_keys.clone()))
    }
}

/// Whether `workflow` is EVENT-triggered by `event_name`.
fn triggered_by(workflow: &Workflow, event_name: &str) -> bool {
    matches!(&workflow.trigger, Trigger::Event { event_name: name } if name == event_name)
}
