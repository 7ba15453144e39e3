//! `WorkflowStore` for [`MemoryStore`]: reads of one workspace's workflow records under
//! the store's read lock.

use async_trait::async_trait;
use posthorn_core::model::{ContactId, ExecutionId, StepId, TemplateId, WorkflowId, WorkspaceId};
use posthorn_core::ports::{SigningKeys, StoreError, WorkflowStore};
use posthorn_core::workflow::{
    Execution, ExecutionStatus, Step, StepRun, Transition, Trigger, Workflow,
};

use super::{NumberedRun, WorkflowData};
use crate::store::MemoryStore;

/// Sorts by `key` and returns the page `offset..offset + limit`.
fn page<T: Clone, K: Ord>(
    mut all: Vec<&T>,
    key: impl Fn(&T) -> K,
    offset: usize,
    limit: usize,
) -> (Vec<T>, u64) {
    all.sort_by_key(|x| key(x));
    let total = u64::try_from(all.len()).unwrap_or(u64::MAX);
    let page = all.into_iter().skip(offset).take(limit).cloned().collect();
    (page, total)
}

#[async_trait]
impl WorkflowStore for MemoryStore {
    async fn workflow(
        &self,
        workspace_id: &WorkspaceId,
        id: &WorkflowId,
    ) -> Result<Option<Workflow>, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| d.workflows.get(id).cloned()))
    }

    async fn workflows(
        &self,
        workspace_id: &WorkspaceId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Workflow>, u64), StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            let all = d.workflows.values().collect();
            page(
                all,
                |w| std::cmp::Reverse((w.created_at, w.id.clone())),
                offset,
                limit,
            )
        }))
    }

    async fn workflow_steps(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<Vec<Step>, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            let mine = d
                .steps
                .values()
                .filter(|s| s.workflow_id == *workflow_id)
                .collect();
            page(mine, |s| (s.created_at, s.id.clone()), 0, usize::MAX).0
        }))
    }

    async fn workflow_transitions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<Vec<Transition>, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            let mine = d
                .transitions
                .values()
                .filter(|t| t.workflow_id == *workflow_id)
                .collect();
            page(
                mine,
                |t| (t.priority, t.created_at, t.id.clone()),
                0,
                usize::MAX,
            )
            .0
        }))
    }

    async fn event_workflows(
        &self,
        workspace_id: &WorkspaceId,
        event_name: &str,
    ) -> Result<Vec<Workflow>, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            let mine = d
                .workflows
                .values()
                .filter(|w| w.enabled && triggered_by(w, event_name))
                .collect();
            page(mine, |w| (w.created_at, w.id.clone()), 0, usize::MAX).0
        }))
    }

    async fn has_event_interest(
        &self,
        workspace_id: &WorkspaceId,
        event_name: &str,
        contact_id: &ContactId,
    ) -> Result<bool, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            d.workflows
                .values()
                .any(|w| w.enabled && triggered_by(w, event_name))
                || d.executions_of(d.waiting.get(contact_id))
                    .any(|e| waits_for(e, event_name))
        }))
    }

    async fn waiting_executions(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
        event_name: &str,
    ) -> Result<Vec<Execution>, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            let mine = d
                .executions_of(d.waiting.get(contact_id))
                .filter(|e| waits_for(e, event_name))
                .collect();
            page(mine, |e| (e.started_at, e.id.clone()), 0, usize::MAX).0
        }))
    }

    async fn execution(
        &self,
        workspace_id: &WorkspaceId,
        id: &ExecutionId,
    ) -> Result<Option<Execution>, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| d.executions.get(id).cloned()))
    }

    async fn executions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Execution>, u64), StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            let mine = d.executions_of(d.by_workflow.get(workflow_id)).collect();
            page(
                mine,
                |e| std::cmp::Reverse((e.started_at, e.id.clone())),
                offset,
                limit,
            )
        }))
    }

    async fn active_executions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<u64, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            let n = d
                .executions_of(d.by_workflow.get(workflow_id))
                .filter(|e| e.status.is_active())
                .count();
            u64::try_from(n).unwrap_or(u64::MAX)
        }))
    }

    async fn step_run(
        &self,
        workspace_id: &WorkspaceId,
        execution_id: &ExecutionId,
        step_id: &StepId,
    ) -> Result<Option<StepRun>, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            d.runs
                .get(execution_id)
                .and_then(|r| r.get(step_id))
                .map(|(_, run)| run.clone())
        }))
    }

    async fn step_runs(
        &self,
        workspace_id: &WorkspaceId,
        execution_id: &ExecutionId,
    ) -> Result<Vec<StepRun>, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            let mut runs: Vec<&NumberedRun> = d
                .runs
                .get(execution_id)
                .into_iter()
                .flat_map(|r| r.values())
                .collect();
            runs.sort_by_key(|(n, run)| (run.started_at, *n));
            runs.into_iter().map(|(_, run)| run.clone()).collect()
        }))
    }

    async fn template_in_workflows(
        &self,
        workspace_id: &WorkspaceId,
        template_id: &TemplateId,
    ) -> Result<bool, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| {
            d.steps
                .values()
                .any(|s| s.template_id.as_ref() == Some(template_id))
        }))
    }

    async fn signing_keys(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Option<SigningKeys>, StoreError> {
        Ok(self.workflow_read(workspace_id, |d| d.signing_keys.clone()))
    }
}

impl MemoryStore {
    /// Runs `read` on the workspace's workflow records (empty ones when it has none).
    fn workflow_read<T>(
        &self,
        workspace_id: &WorkspaceId,
        read: impl FnOnce(&WorkflowData) -> T,
    ) -> T {
        let state = self.read();
        match state.workflows.get(workspace_id) {
            Some(data) => read(data),
            None => read(&WorkflowData::default()),
        }
    }
}

/// Whether `w` is an EVENT workflow on `event_name`.
fn triggered_by(w: &Workflow, event_name: &str) -> bool {
    matches!(&w.trigger, Trigger::Event { event_name: name } if name == event_name)
}

/// Whether `e` is WAITING for an event named `event_name`.
fn waits_for(e: &Execution, event_name: &str) -> bool {
    e.status == ExecutionStatus::Waiting
        && e.waiting.as_ref().and_then(|w| w.event_name.as_deref()) == Some(event_name)
}
