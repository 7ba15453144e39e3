//! Workflow records of one workspace: workflows, steps, transitions, executions (indexed
//! for the re-entry rule and for waits by contact and event name), step records and the
//! signing keys. Each kind has one `replace_*` primitive, as the other records do.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use posthorn_core::model::{ContactId, ExecutionId, StepId, TransitionId, WorkflowId};
use posthorn_core::ports::{SigningKeys, StoreError, Write};
use posthorn_core::workflow::{Execution, ExecutionStatus, Step, StepRun, Transition, Workflow};

/// (started or created at, id): listing order.
type Ordered<I> = (DateTime<Utc>, I);

/// The workflow records of one workspace.
#[derive(Debug, Default)]
pub(crate) struct WorkflowData {
    pub(crate) workflows: HashMap<WorkflowId, Workflow>,
    pub(crate) steps: HashMap<StepId, Step>,
    pub(crate) transitions: HashMap<TransitionId, Transition>,
    pub(crate) executions: HashMap<ExecutionId, Execution>,
    /// Workflow → its executions by (started_at, id).
    pub(crate) executions_by_workflow: HashMap<WorkflowId, BTreeSet<Ordered<ExecutionId>>>,
    /// (workflow, contact) → the executions of that pair.
    pub(crate) executions_by_pair: HashMap<(WorkflowId, ContactId), BTreeSet<ExecutionId>>,
    /// (contact, awaited event name) → WAITING executions by (started_at, id).
    pub(crate) waiting: HashMap<(ContactId, String), BTreeSet<Ordered<ExecutionId>>>,
    pub(crate) step_runs: HashMap<(ExecutionId, StepId), StepRun>,
    pub(crate) signing_keys: Option<SigningKeys>,
}

/// How to put back what one workflow write changed.
#[derive(Debug)]
pub(crate) enum WorkflowUndo {
    Workflow(WorkflowId, Option<Workflow>),
    Step(StepId, Option<Step>),
    Transition(TransitionId, Option<Transition>),
    Execution(ExecutionId, Option<Execution>),
    StepRun((ExecutionId, StepId), Option<StepRun>),
    SigningKeys(Option<SigningKeys>),
}

fn conflict(message: String) -> StoreError {
    StoreError::Conflict(message)
}

impl WorkflowData {
    pub(crate) fn replace_workflow(
        &mut self,
        id: &WorkflowId,
        new: Option<Workflow>,
    ) -> Option<Workflow> {
        match new {
            Some(w) => self.workflows.insert(id.clone(), w),
            None => self.workflows.remove(id),
        }
    }

    pub(crate) fn replace_step(&mut self, id: &StepId, new: Option<Step>) -> Option<Step> {
        match new {
            Some(s) => self.steps.insert(id.clone(), s),
            None => self.steps.remove(id),
        }
    }

    pub(crate) fn replace_transition(
        &mut self,
        id: &TransitionId,
        new: Option<Transition>,
    ) -> Option<Transition> {
        match new {
            Some(t) => self.transitions.insert(id.clone(), t),
            None => self.transitions.remove(id),
        }
    }

    pub(crate) fn replace_execution(
        &mut self,
        id: &ExecutionId,
        new: Option<Execution>,
    ) -> Option<Execution> {
        let old = self.executions.remove(id);
        if let Some(old) = &old {
            let key = (old.started_at, id.clone());
            remove_key(&mut self.executions_by_workflow, &old.workflow_id, &key);
            remove_key(
                &mut self.executions_by_pair,
                &(old.workflow_id.clone(), old.contact_id.clone()),
                id,
            );
            if let Some(name) = waiting_for(old) {
                remove_key(&mut self.waiting, &(old.contact_id.clone(), name), &key);
            }
        }
        if let Some(new) = new {
            let key = (new.started_at, id.clone());
            self.executions_by_workflow
                .entry(new.workflow_id.clone())
                .or_default()
                .insert(key.clone());
            self.executions_by_pair
                .entry((new.workflow_id.clone(), new.contact_id.clone()))
                .or_default()
                .insert(id.clone());
            if let Some(name) = waiting_for(&new) {
                self.waiting
                    .entry((new.contact_id.clone(), name))
                    .or_default()
                    .insert(key);
            }
            self.executions.insert(id.clone(), new);
        }
        old
    }

    pub(crate) fn replace_step_run(
        &mut self,
        key: &(ExecutionId, StepId),
        new: Option<StepRun>,
    ) -> Option<StepRun> {
        match new {
            Some(r) => self.step_runs.insert(key.clone(), r),
            None => self.step_runs.remove(key),
        }
    }

    /// Puts back one change.
    pub(crate) fn undo(&mut self, undo: WorkflowUndo) {
        match undo {
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
            WorkflowUndo::StepRun(key, old) => {
                self.replace_step_run(&key, old);
            }
            WorkflowUndo::SigningKeys(old) => self.signing_keys = old,
        }
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
            Write::DeleteStep { id, .. } => {
                let edges: Vec<TransitionId> = self
                    .transitions
                    .values()
                    .filter(|t| t.from_step_id == id || t.to_step_id == id)
                    .map(|t| t.id.clone())
                    .collect();
                for edge in edges {
                    let old = self.replace_transition(&edge, None);
                    undo.push(WorkflowUndo::Transition(edge, old));
                }
                let old = self.replace_step(&id, None);
                undo.push(WorkflowUndo::Step(id, old));
            }
            Write::PutTransition(t) => {
                let id = t.id.clone();
                let old = self.replace_transition(&id, Some(t));
                undo.push(WorkflowUndo::Transition(id, old));
            }
            Write::DeleteTransition { id, .. } => {
                let old = self.replace_transition(&id, None);
                undo.push(WorkflowUndo::Transition(id, old));
            }
            Write::InsertExecution(mut e) => {
                if self.executions.contains_key(&e.id) {
                    return Err(conflict(format!("execution {} already exists", e.id)));
                }
                let pair = (e.workflow_id.clone(), e.contact_id.clone());
                let others = self.executions_by_pair.get(&pair);
                let blocked = others.into_iter().flatten().any(|other| {
                    self.executions
                        .get(other)
                        .is_some_and(|o| e.single_entry || o.status.is_active())
                });
                if blocked {
                    return Err(conflict(format!(
                        "contact {} is already enrolled in workflow {}",
                        e.contact_id, e.workflow_id
                    )));
                }
                e.version = 0;
                let id = e.id.clone();
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
                // The re-entry flag is fixed at start.
                e.single_entry = stored.single_entry;
                e.version += 1;
                let old = self.replace_execution(&id, Some(e));
                undo.push(WorkflowUndo::Execution(id, old));
            }
            Write::InsertStepRun(r) => {
                let key = (r.execution_id.clone(), r.step_id.clone());
                if self.step_runs.contains_key(&key) {
                    return Err(conflict(format!(
                        "step {} of execution {} already has a record",
                        key.1, key.0
                    )));
                }
                let old = self.replace_step_run(&key, Some(r));
                undo.push(WorkflowUndo::StepRun(key, old));
            }
            Write::UpdateStepRun(r) => {
                let key = (r.execution_id.clone(), r.step_id.clone());
                if !self.step_runs.contains_key(&key) {
                    return Err(conflict(format!(
                        "the record of step {} of execution {} is gone",
                        key.1, key.0
                    )));
                }
                let old = self.replace_step_run(&key, Some(r));
                undo.push(WorkflowUndo::StepRun(key, old));
            }
            Write::PutSigningKeys { keys, .. } => {
                let old = self.signing_keys.replace(keys);
                undo.push(WorkflowUndo::SigningKeys(old));
            }
            other => {
                return Err(StoreError::Unavailable(format!(
                    "not a workflow write: {other:?}"
                )))
            }
        }
        Ok(())
    }

    /// Deletes a workflow with its steps, transitions, executions and step records.
    fn delete_workflow(&mut self, id: &WorkflowId, undo: &mut Vec<WorkflowUndo>) {
        let steps: Vec<StepId> = self
            .steps
            .values()
            .filter(|s| &s.workflow_id == id)
            .map(|s| s.id.clone())
            .collect();
        let edges: Vec<TransitionId> = self
            .transitions
            .values()
            .filter(|t| &t.workflow_id == id)
            .map(|t| t.id.clone())
            .collect();
        let executions: Vec<ExecutionId> = self
            .executions_by_workflow
            .get(id)
            .into_iter()
            .flatten()
            .map(|(_, e)| e.clone())
            .collect();
        let runs: Vec<(ExecutionId, StepId)> = self
            .step_runs
            .keys()
            .filter(|(e, _)| executions.contains(e))
            .cloned()
            .collect();
        for key in runs {
            let old = self.replace_step_run(&key, None);
            undo.push(WorkflowUndo::StepRun(key, old));
        }
        for e in executions {
            let old = self.replace_execution(&e, None);
            undo.push(WorkflowUndo::Execution(e, old));
        }
        for t in edges {
            let old = self.replace_transition(&t, None);
            undo.push(WorkflowUndo::Transition(t, old));
        }
        for s in steps {
            let old = self.replace_step(&s, None);
            undo.push(WorkflowUndo::Step(s, old));
        }
        let old = self.replace_workflow(id, None);
        undo.push(WorkflowUndo::Workflow(id.clone(), old));
    }
}

/// The event name a WAITING execution waits for.
fn waiting_for(e: &Execution) -> Option<String> {
    if e.status != ExecutionStatus::Waiting {
        return None;
    }
    e.waiting.as_ref().and_then(|w| w.event_name.clone())
}

fn remove_key<K: std::hash::Hash + Eq, V: Ord>(
    index: &mut HashMap<K, BTreeSet<V>>,
    key: &K,
    value: &V,
) {
    if let Some(set) = index.get_mut(key) {
        set.remove(value);
        if set.is_empty() {
            index.remove(key);
        }
    }
}

/// The workspace a workflow write belongs to.
pub(crate) fn workspace_of(write: &Write) -> Option<String> {
    Some(
        match write {
            Write::PutWorkflow(w) => &w.workspace_id,
            Write::DeleteWorkflow { workspace_id, .. }
            | Write::DeleteStep { workspace_id, .. }
            | Write::DeleteTransition { workspace_id, .. }
            | Write::PutSigningKeys { workspace_id, .. } => workspace_id,
            Write::PutStep(s) => &s.workspace_id,
            Write::PutTransition(t) => &t.workspace_id,
            Write::InsertExecution(e) | Write::UpdateExecution(e) => &e.workspace_id,
            Write::InsertStepRun(r) | Write::UpdateStepRun(r) => &r.workspace_id,
            _ => return None,
        }
        .as_str()
        .to_string(),
    )
}
