//! Reads of workflows, their graphs and their executions. Writes go through the same
//! [`ChangeSet`](super::ChangeSet) as every other record (the `Write::*Workflow*`,
//! `*Step*`, `*Transition*`, `*Execution*` and `PutSigningKeys` variants), so a step's
//! record, its side effect (an email, a contact change) and the job for the next step
//! commit together.

use async_trait::async_trait;

use crate::model::{
    ContactId, Event, EventId, ExecutionId, StepId, TemplateId, WorkflowId, WorkspaceId,
};
use crate::workflow::{Execution, Step, StepRun, Transition, Workflow};

use super::{SigningKeys, StoreError};

/// Workflow reads every store adapter provides (part of [`Store`](super::Store)).
///
/// Same contract as `Store`: records of other workspaces are invisible, `Ok(None)` means
/// "no such record", and reads see every change set committed before they started.
#[async_trait]
pub trait WorkflowStore: Send + Sync {
    /// A workflow by id.
    async fn workflow(
        &self,
        workspace_id: &WorkspaceId,
        id: &WorkflowId,
    ) -> Result<Option<Workflow>, StoreError>;
    /// A page of workflows (newest first) and how many the workspace has.
    async fn workflows(
        &self,
        workspace_id: &WorkspaceId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Workflow>, u64), StoreError>;
    /// The steps of a workflow, oldest first.
    async fn workflow_steps(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<Vec<Step>, StoreError>;
    /// The transitions of a workflow, by ascending `priority`, then oldest first.
    async fn workflow_transitions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<Vec<Transition>, StoreError>;
    /// The enabled workflows with an EVENT trigger on `event_name`, oldest first.
    async fn event_workflows(
        &self,
        workspace_id: &WorkspaceId,
        event_name: &str,
    ) -> Result<Vec<Workflow>, StoreError>;
    /// Whether an event named `event_name` about `contact_id` concerns any workflow: an
    /// enabled workflow is triggered by that name, or an execution of that contact is
    /// WAITING for it. Called on every stored event, so it must be one cheap, indexed read.
    async fn has_event_interest(
        &self,
        workspace_id: &WorkspaceId,
        event_name: &str,
        contact_id: &ContactId,
    ) -> Result<bool, StoreError>;
    /// The WAITING executions of a contact whose wait is for an event named `event_name`,
    /// oldest first.
    async fn waiting_executions(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
        event_name: &str,
    ) -> Result<Vec<Execution>, StoreError>;
    /// An execution by id.
    async fn execution(
        &self,
        workspace_id: &WorkspaceId,
        id: &ExecutionId,
    ) -> Result<Option<Execution>, StoreError>;
    /// A page of a workflow's executions (newest first) and how many it has.
    async fn executions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Execution>, u64), StoreError>;
    /// How many executions of a workflow are RUNNING or WAITING.
    async fn active_executions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<u64, StoreError>;
    /// The record of one step of an execution.
    async fn step_run(
        &self,
        workspace_id: &WorkspaceId,
        execution_id: &ExecutionId,
        step_id: &StepId,
    ) -> Result<Option<StepRun>, StoreError>;
    /// Every step record of an execution, in the order the steps started.
    async fn step_runs(
        &self,
        workspace_id: &WorkspaceId,
        execution_id: &ExecutionId,
    ) -> Result<Vec<StepRun>, StoreError>;
    /// Whether any workflow step of the workspace sends this template.
    async fn template_in_workflows(
        &self,
        workspace_id: &WorkspaceId,
        template_id: &TemplateId,
    ) -> Result<bool, StoreError>;
    /// A stored event by id (what a `DispatchWorkflowEvent` job names).
    async fn event(
        &self,
        workspace_id: &WorkspaceId,
        id: &EventId,
    ) -> Result<Option<Event>, StoreError>;
    /// The workspace's webhook signing secrets, once made.
    async fn signing_keys(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Option<SigningKeys>, StoreError>;
}
