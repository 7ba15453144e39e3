//! Workflow records in memory: definitions, executions (indexed by workflow, by
//! (workflow, contact) for the re-entry rule, and by contact while WAITING), step records
//! and signing keys; their writes with undo, and the `WorkflowStore` reads.

use std::collections::{BTreeSet, HashMap};

use async_trait::async_trait;
use posthorn_core::model::{
    ContactId, ExecutionId, StepId, TemplateId, TransitionId, WorkflowId, WorkspaceId,
};
use posthorn_core::ports::{SigningKeys, StoreError, WorkflowStore, Write};
use posthorn_core::workflow::{
    Execution, ExecutionStatus, Step, StepRun, Transition, Trigger, Workflow,
};

use super::MemoryStore;

/// A step record with its insertion number (orders records that started together).
type NumberedRun = (u64, StepRun);

/// The workflow records of one workspace.
#[derive(Debug, Default)]
pub(crate) struct WorkflowData {
    workflows: HashMap<WorkflowId, Workflow>,
    steps: HashMap<StepId, Step>,
    transitions: HashMap<TransitionId, Transition>,
    executions: HashMap<ExecutionId, Execution>,
    /// Workflow → its executions.
    by_workflow: HashMap<WorkflowId, BTreeSet<ExecutionId>>,
    /// (workflow, contact) → every execution of the pair (never empty).
    by_pair: HashMap<(WorkflowId, ContactId), BTreeSet<ExecutionId>>,
    /// Contact → its WAITING executions (never empty).
    waiting: HashMap<ContactId, BTreeSet<ExecutionId>>,
    /// Execution → step → record (never empty).
    runs: HashMap<ExecutionId, HashMap<StepId, NumberedRun>>,
    next_run: u64,
    signing_keys: Option<SigningKeys>,
}

/// How to put back what one applied workflow write changed.
#[derive(Debug)]
pub(crate) enum WorkflowUndo {
    Workflow(WorkflowId, Option<Workflow>),
    Step(StepId, Option<Step>),
    Transition(TransitionId, Option<Transition>),
    Execution(ExecutionId, Option<Execution>),
    Run(ExecutionId, StepId, Option<NumberedRun>),
    Keys(Option<SigningKeys>),
}

fn conflict(message: String) -> StoreError {
    StoreError::Conflict(message)
}

/// Adds or removes `id` in the set under `key`, dropping emptied sets.
fn index<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, BTreeSet<ExecutionId>>,
    key: K,
    id: &ExecutionId,
    present: bool,
) {
    if present {
        map.entry(key).or_default().insert(id.clone());
    } else if let Some(set) = map.get_mut(&key) {
        set.remove(id);
        if set.is_empty() {
            map.remove(&key);
        }
    }
}

impl WorkflowData {
    fn replace_workflow(&mut self, id: &WorkflowId, new: Option<Workflow>) -> Option<Workflow> {
        match new {
            Some(w) => self.workflows.insert(id.clone(), w),
            None => self.workflows.remove(id),
        }
    }

    fn replace_step(&mut self, id: &StepId, new: Option<Step>) -> Option<Step> {
        match new {
            Some(s) => self.steps.insert(id.clone(), s),
            None => self.steps.remove(id),
        }
    }

    fn replace_transition(
        &mut self,
        id: &TransitionId,
        new: Option<Transition>,
    ) -> Option<Transition> {
        match new {
            Some(t) => self.transitions.insert(id.clone(), t),
            None => self.transitions.remove(id),
        }
    }

    /// Stores `new` (or removes) the execution `id`, keeping its indexes in step.
    fn replace_execution(&mut self, id: &ExecutionId, new: Option<Execution>) -> Option<Execution> {
        let old = match new.clone() {
            Some(e) => self.executions.insert(id.clone(), e),
            None => self.executions.remove(id),
        };
        for (e, present) in [(&old, false), (&new, true)] {
            let Some(e) = e else { continue };
            index(&mut self.by_workflow, e.workflow_id.clone(), id, present);
            index(
                &mut self.by_pair,
                (e.workflow_id.clone(), e.contact_id.clone()),
                id,
                present,
            );
            if e.status == ExecutionStatus::Waiting {
                index(&mut self.waiting, e.contact_id.clone(), id, present);
            }
        }
        old
    }

    fn replace_run(
        &mut self,
        execution_id: &ExecutionId,
        step_id: &StepId,
        new: Option<NumberedRun>,
    ) -> Option<NumberedRun> {
        match new {
            Some(run) => self
                .runs
                .entry(execution_id.clone())
                .or_default()
                .insert(step_id.clone(), run),
            None => {
                let runs = self.runs.get_mut(execution_id)?;
                let old = runs.remove(step_id);
                if runs.is_empty() {
                    self.runs.remove(execution_id);
                }
                old
            }
        }
    }

    /// Whether another execution than `except` of (workflow, contact) is RUNNING or
    /// WAITING.
    fn other_active(&self, e: &Execution, except: Option<&ExecutionId>) -> bool {
        self.by_pair
            .get(&(e.workflow_id.clone(), e.contact_id.clone()))
            .into_iter()
            .flatten()
            .filter(|id| Some(*id) != except)
            .filter_map(|id| self.executions.get(id))
            .any(|other| other.status.is_active())
    }

    /// Whether another single-entry execution than `except` of (workflow, contact) exists.
    fn other_single_entry(&self, e: &Execution, except: Option<&ExecutionId>) -> bool {
        self.by_pair
            .get(&(e.workflow_id.clone(), e.contact_id.clone()))
            .into_iter()
            .flatten()
            .filter(|id| Some(*id) != except)
            .filter_map(|id| self.executions.get(id))
            .any(|other| other.single_entry)
    }

    /// Applies one workflow write, recording how to undo it.
    pub(crate) fn apply(
        &mut self,
        write: Write,
        undo: &mut Vec<WorkflowUndo>,
    ) -> Result<(), StoreError> {
        match write {
            Write::PutWorkflow(w) => {
                let id = w.id.clone();
                let old = self.replace_workflow(&id, Some(w));
                undo.push(WorkflowUndo::Workflow(id, old));
            }
            Write::DeleteWorkflow { id, .. } => self.delete_workflow(&id, undo),
            Write::PutStep(s) => {
                let id = s.id.clone();
                let old = self.replace_step(&id, Some(s));
                undo.push(WorkflowUndo::Step(id, old));
            }
            Write::DeleteStep {
                workflow_id, id, ..
            } => {
                let edges: Vec<TransitionId> = self
                    .transitions
                    .values()
                    .filter(|t| {
                        t.workflow_id == workflow_id && (t.from_step_id == id || t.to_step_id == id)
                    })
                    .map(|t| t.id.clone())
                    .collect();
                for edge in edges {
                    let old = self.replace_transition(&edge, None);
                    undo.push(WorkflowUndo::Transition(edge, old));
                }
                if self
                    .steps
                    .get(&id)
                    .is_some_and(|s| s.workflow_id == workflow_id)
                {
                    let old = self.replace_step(&id, None);
                    undo.push(WorkflowUndo::Step(id, old));
                }
            }
            Write::PutTransition(t) => {
                let id = t.id.clone();
                let old = self.replace_transition(&id, Some(t));
                undo.push(WorkflowUndo::Transition(id, old));
            }
            Write::DeleteTransition {
                workflow_id, id, ..
            } => {
                if self
                    .transitions
                    .get(&id)
                    .is_some_and(|t| t.workflow_id == workflow_id)
                {
                    let old = self.replace_transition(&id, None);
                    undo.push(WorkflowUndo::Transition(id, old));
                }
            }
            Write::InsertExecution(mut e) => {
                let id = e.id.clone();
                if self.executions.contains_key(&id) {
                    return Err(conflict(format!("execution {id} already exists")));
                }
                let pair = (e.workflow_id.clone(), e.contact_id.clone());
                if e.single_entry && self.by_pair.contains_key(&pair) {
                    return Err(conflict(format!(
                        "contact {} entered workflow {} before, and it allows one entry",
                        e.contact_id, e.workflow_id
                    )));
                }
                if (e.status.is_active() && self.other_active(&e, None))
                    || (e.single_entry && self.other_single_entry(&e, None))
                {
                    return Err(conflict(format!(
                        "contact {} already has an active execution of workflow {}",
                        e.contact_id, e.workflow_id
                    )));
                }
                e.version = 0;
                let old = self.replace_execution(&id, Some(e));
                undo.push(WorkflowUndo::Execution(id, old));
            }
            Write::UpdateExecution(mut e) => {
                let id = e.id.clone();
                let Some(stored) = self.executions.get(&id) else {
                    return Err(conflict(format!("execution {id} is gone")));
                };
                if stored.version != e.version {
                    return Err(conflict(format!(
                        "execution {id} is at version {}, not {}",
                        stored.version, e.version
                    )));
                }
                if (e.status.is_active() && self.other_active(&e, Some(&id)))
                    || (e.single_entry && self.other_single_entry(&e, Some(&id)))
                {
                    return Err(conflict(format!(
                        "contact {} already has an active execution of workflow {}",
                        e.contact_id, e.workflow_id
                    )));
                }
                e.version += 1;
                let old = self.replace_execution(&id, Some(e));
                undo.push(WorkflowUndo::Execution(id, old));
            }
            Write::InsertStepRun(run) => {
                let (execution_id, step_id) = (run.execution_id.clone(), run.step_id.clone());
                if self
                    .runs
                    .get(&execution_id)
                    .is_some_and(|r| r.contains_key(&step_id))
                {
                    return Err(conflict(format!(
                        "step {step_id} of execution {execution_id} already has a record"
                    )));
                }
                self.next_run += 1;
                let old = self.replace_run(&execution_id, &step_id, Some((self.next_run, run)));
                undo.push(WorkflowUndo::Run(execution_id, step_id, old));
            }
            Write::UpdateStepRun(run) => {
                let (execution_id, step_id) = (run.execution_id.clone(), run.step_id.clone());
                let Some(number) = self
                    .runs
                    .get(&execution_id)
                    .and_then(|r| r.get(&step_id))
                    .map(|(n, _)| *n)
                else {
                    return Err(conflict(format!(
                        "the record of step {step_id} of execution {execution_id} is gone"
                    )));
                };
                let old = self.replace_run(&execution_id, &step_id, Some((number, run)));
                undo.push(WorkflowUndo::Run(execution_id, step_id, old));
            }
            Write::PutSigningKeys { keys, .. } => {
                let old = self.signing_keys.replace(keys);
                undo.push(WorkflowUndo::Keys(old));
            }
            Write::InsertSigningKeys { keys, .. } => {
                if self.signing_keys.is_none() {
                    let old = self.signing_keys.replace(keys);
                    undo.push(WorkflowUndo::Keys(old));
                }
            }
            _ => {
                return Err(StoreError::Unavailable(
                    "a write that is not a workflow write reached the workflow commit".into(),
                ))
            }
        }
        Ok(())
    }

    /// Removes a workflow with its steps, transitions, executions and step records.
    fn delete_workflow(&mut self, id: &WorkflowId, undo: &mut Vec<WorkflowUndo>) {
        let executions: Vec<ExecutionId> = self
            .by_workflow
            .get(id)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default();
        for execution_id in executions {
            let steps: Vec<StepId> = self
                .runs
                .get(&execution_id)
                .map(|r| r.keys().cloned().collect())
                .unwrap_or_default();
            for step_id in steps {
                let old = self.replace_run(&execution_id, &step_id, None);
                undo.push(WorkflowUndo::Run(execution_id.clone(), step_id, old));
            }
            let old = self.replace_execution(&execution_id, None);
            undo.push(WorkflowUndo::Execution(execution_id, old));
        }
        let edges: Vec<TransitionId> = self
            .transitions
            .values()
            .filter(|t| t.workflow_id == *id)
            .map(|t| t.id.clone())
            .collect();
        for edge in edges {
            let old = self.replace_transition(&edge, None);
            undo.push(WorkflowUndo::Transition(edge, old));
        }
        let steps: Vec<StepId> = self
            .steps
            .values()
            .filter(|s| s.workflow_id == *id)
            .map(|s| s.id.clone())
            .collect();
        for step in steps {
            let old = self.replace_step(&step, None);
            undo.push(WorkflowUndo::Step(step, old));
        }
        let old = self.replace_workflow(id, None);
        undo.push(WorkflowUndo::Workflow(id.clone(), old));
    }

    /// Puts back what one write changed.
    pub(crate) fn undo(&mut self, step: WorkflowUndo) {
        match step {
            WorkflowUndo::Workflow(id, old) => {
                self.replace_workflow(&id, old);
            }
            WorkflowUndo::Step(id, old) => {
                self.replace_step(&id, old);
            }
            WorkflowUndo::Transition(id, old) => {
                self.replace_transition(&id, old);
            }
            WorkflowUndo::Execution(id, old) => {
                self.replace_execution(&id, old);
            }
            WorkflowUndo::Run(execution_id, step_id, old) => {
                self.replace_run(&execution_id, &step_id, old);
            }
            WorkflowUndo::Keys(old) => self.signing_keys = old,
        }
    }

    fn executions_of<'a>(
        &'a self,
        ids: Option<&'a BTreeSet<ExecutionId>>,
    ) -> impl Iterator<Item = &'a Execution> + 'a {
        ids.into_iter()
            .flatten()
            .filter_map(|id| self.executions.get(id))
    }
}

/// The workspace a workflow write belongs to, or `None` for any other write.
pub(crate) fn workspace_of(write: &Write) -> Option<WorkspaceId> {
    Some(match write {
        Write::PutWorkflow(w) => w.workspace_id.clone(),
        Write::PutStep(s) => s.workspace_id.clone(),
        Write::PutTransition(t) => t.workspace_id.clone(),
        Write::InsertExecution(e) | Write::UpdateExecution(e) => e.workspace_id.clone(),
        Write::InsertStepRun(r) | Write::UpdateStepRun(r) => r.workspace_id.clone(),
        Write::DeleteWorkflow { workspace_id, .. }
        | Write::DeleteStep { workspace_id, .. }
        | Write::DeleteTransition { workspace_id, .. }
        | Write::PutSigningKeys { workspace_id, .. }
        | Write::InsertSigningKeys { workspace_id, .. } => workspace_id.clone(),
        _ => return None,
    })
}

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
            event_interest(d, event_name, Some(contact_id))
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

    async fn event(
        &self,
        workspace_id: &WorkspaceId,
        id: &posthorn_core::model::EventId,
    ) -> Result<Option<posthorn_core::model::Event>, StoreError> {
        let state = self.read();
        Ok(state.data.get(workspace_id).and_then(|d| {
            d.event_keys
                .get(id)
                .and_then(|key| d.events.get(key))
                .map(super::stored_event::StoredEvent::to_event)
        }))
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

/// Whether an event named `event_name` of `contact_id` (`None`: a contact not stored yet,
/// for whom no execution waits) concerns a workflow of `d`.
pub(super) fn event_interest(
    d: &WorkflowData,
    event_name: &str,
    contact_id: Option<&ContactId>,
) -> bool {
    d.workflows
        .values()
        .any(|w| w.enabled && triggered_by(w, event_name))
        || contact_id.is_some_and(|id| {
            d.executions_of(d.waiting.get(id))
                .any(|e| waits_for(e, event_name))
        })
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
