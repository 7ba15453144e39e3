//! Workflows: create, list, read, patch and delete workflows; their steps, transitions and
//! executions; the workspace's webhook signing secret.

mod command;
mod executions;
mod signing;
mod steps;
mod transitions;
mod trigger;

pub use command::{
    CreateStep, CreateTransition, CreateWorkflow, ExecutionView, ListExecutions, ListWorkflows,
    SigningSecretView, StartExecution, StepPatch, StepView, TemplateRef, TriggerType,
    WorkflowPatch, WorkflowView,
};
pub(crate) use executions::{advance, enrolment, step_job, Enrolee, WorkflowGraph};
pub use trigger::trigger_type;

use serde_json::json;

use super::segments::Page;
use super::{check_page, Caller, PageRequest};
use crate::error::{Error, Resource, Result};
use crate::model::{StepId, WorkflowId, WorkspaceId};
use crate::ports::{ChangeSet, Write};
use crate::validate::line_problem;
use crate::workflow::{Step, StepAction, Trigger, Workflow};
use crate::Engine;

/// Longest workflow or step name, in characters.
pub const MAX_WORKFLOW_NAME_CHARS: usize = 255;
/// Longest workflow description, in characters.
pub const MAX_WORKFLOW_DESCRIPTION_CHARS: usize = 2000;

/// Refuses a name or description that breaks the one-line rules.
fn text_problems(name: Option<&str>, description: Option<&str>) -> Result<()> {
    let mut errors = Vec::new();
    if let Some(name) = name {
        if name.trim().is_empty() {
            errors.push(crate::error::FieldError::new(
                "name",
                "required",
                "name must not be empty",
            ));
        } else if let Some((code, message)) = line_problem("name", name, MAX_WORKFLOW_NAME_CHARS) {
            errors.push(crate::error::FieldError::new("name", code, message));
        }
    }
    if let Some(d) = description {
        if let Some((code, message)) =
            line_problem("description", d, MAX_WORKFLOW_DESCRIPTION_CHARS)
        {
            errors.push(crate::error::FieldError::new("description", code, message));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Validation(errors))
    }
}

/// The TRIGGER step's action for a trigger: it shows the event name of an EVENT trigger.
fn trigger_action(trigger: &Trigger) -> StepAction {
    StepAction::Trigger {
        event_name: match trigger {
            Trigger::Event { event_name } => Some(event_name.clone()),
            _ => None,
        },
    }
}

impl Engine {
    /// A workflow of the caller's workspace, or 404 `WORKFLOW_NOT_FOUND`.
    pub async fn workflow_record(&self, caller: &Caller, id: &WorkflowId) -> Result<Workflow> {
        self.store
            .workflow(caller.workspace_id(), id)
            .await?
            .ok_or(Error::NotFound(Resource::Workflow))
    }

    /// Refuses a trigger that breaks a rule of its kind, or a SCHEDULE trigger whose
    /// segment is not in the workspace.
    async fn check_trigger(&self, workspace_id: &WorkspaceId, trigger: &Trigger) -> Result<()> {
        crate::workflow::check_trigger(trigger)?;
        if let Trigger::Schedule { segment_id, .. } = trigger {
            if self
                .store
                .segment(workspace_id, segment_id)
                .await?
                .is_none()
            {
                return Err(trigger::unknown_segment());
            }
        }
        Ok(())
    }

    /// `POST /workflows`: the workflow and its TRIGGER step.
    pub async fn create_workflow(
        &self,
        caller: &Caller,
        cmd: CreateWorkflow,
    ) -> Result<WorkflowView> {
        text_problems(Some(&cmd.name), cmd.description.as_deref())?;
        let trigger = cmd.trigger;
        let ws = caller.workspace_id().clone();
        self.check_trigger(&ws, &trigger).await?;
        let now = self.clock.now();
        let workflow = Workflow {
            id: WorkflowId::generate(&*self.clock),
            workspace_id: ws.clone(),
            name: cmd.name.trim().to_string(),
            description: cmd.description,
            enabled: cmd.enabled,
            trigger,
            allow_reentry: cmd.allow_reentry,
            created_at: now,
            updated_at: now,
        };
        let step = Step {
            id: StepId::generate(&*self.clock),
            workspace_id: ws,
            workflow_id: workflow.id.clone(),
            name: "Trigger".into(),
            position: json!({"x": 0, "y": 0}),
            action: trigger_action(&workflow.trigger),
            template_id: None,
            created_at: now,
            updated_at: now,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::PutWorkflow(workflow.clone()));
        changes.push(Write::PutStep(step));
        self.schedule_next_tick(&workflow, now, &mut changes);
        self.store.commit(changes).await?;
        self.workflow_view(workflow).await
    }

    /// `GET /workflows/{id}`: with steps, their templates and edges.
    pub async fn workflow(&self, caller: &Caller, id: &WorkflowId) -> Result<WorkflowView> {
        let workflow = self.workflow_record(caller, id).await?;
        self.workflow_view(workflow).await
    }

    /// The workflow with its steps and edges.
    pub async fn workflow_view(&self, workflow: Workflow) -> Result<WorkflowView> {
        let ws = &workflow.workspace_id;
        let steps = self.store.workflow_steps(ws, &workflow.id).await?;
        let transitions = self.store.workflow_transitions(ws, &workflow.id).await?;
        let mut views = Vec::with_capacity(steps.len());
        for step in steps {
            let template = match &step.template_id {
                Some(id) => self.store.template(ws, id).await?.map(|t| TemplateRef {
                    id: id.clone(),
                    name: t.name,
                }),
                None => None,
            };
            let edges = |pick: fn(&crate::workflow::Transition) -> &StepId| {
                transitions
                    .iter()
                    .filter(|t| pick(t) == &step.id)
                    .cloned()
                    .collect::<Vec<_>>()
            };
            views.push(StepView {
                outgoing_transitions: edges(|t| &t.from_step_id),
                incoming_transitions: edges(|t| &t.to_step_id),
                template,
                step,
            });
        }
        Ok(WorkflowView {
            workflow,
            steps: views,
        })
    }

    /// `GET /workflows`: page style, newest first, without steps.
    pub async fn list_workflows(
        &self,
        caller: &Caller,
        query: ListWorkflows,
    ) -> Result<Page<Workflow>> {
        check_page(&query.page)?;
        let PageRequest { page, page_size } = query.page;
        let (workflows, total) = self
            .store
            .workflows(
                caller.workspace_id(),
                ((page - 1) * page_size) as usize,
                page_size as usize,
            )
            .await?;
        Ok(Page::new(workflows, page, page_size, total))
    }

    /// `PATCH /workflows/{id}`: name, description, trigger, enabled, allowReentry. Enabling
    /// a SCHEDULE workflow (or changing its schedule) plans its next tick.
    pub async fn patch_workflow(
        &self,
        caller: &Caller,
        id: &WorkflowId,
        patch: WorkflowPatch,
    ) -> Result<Workflow> {
        text_problems(
            patch.name.as_deref(),
            patch.description.as_set().map(String::as_str),
        )?;
        let mut workflow = self.workflow_record(caller, id).await?;
        let trigger_changed = patch.trigger.is_some();
        if let Some(trigger) = patch.trigger {
            self.check_trigger(&workflow.workspace_id, &trigger).await?;
            workflow.trigger = trigger;
        }
        if let Some(name) = patch.name {
            workflow.name = name.trim().to_string();
        }
        patch.description.apply_to(&mut workflow.description);
        if let Some(enabled) = patch.enabled {
            workflow.enabled = enabled;
        }
        if let Some(allow) = patch.allow_reentry {
            workflow.allow_reentry = allow;
        }
        let now = self.clock.now();
        // Ids and times are both clock-made; a patch always moves `updated_at` forward, which
        // retires the ticks planned for the previous version of a SCHEDULE workflow.
        workflow.updated_at = now.max(workflow.updated_at + chrono::Duration::milliseconds(1));
        let mut changes = ChangeSet::new();
        changes.push(Write::PutWorkflow(workflow.clone()));
        if trigger_changed {
            let steps = self
                .store
                .workflow_steps(&workflow.workspace_id, &workflow.id)
                .await?;
            if let Some(mut step) = steps
                .into_iter()
                .find(|s| matches!(s.action, StepAction::Trigger { .. }))
            {
                step.action = trigger_action(&workflow.trigger);
                step.updated_at = now;
                changes.push(Write::PutStep(step));
            }
        }
        self.schedule_next_tick(&workflow, now, &mut changes);
        self.store.commit(changes).await?;
        Ok(workflow)
    }

    /// `DELETE /workflows/{id}`: refused (409) while executions are RUNNING or WAITING.
    pub async fn delete_workflow(&self, caller: &Caller, id: &WorkflowId) -> Result<()> {
        let workflow = self.workflow_record(caller, id).await?;
        let active = self
            .store
            .active_executions(&workflow.workspace_id, &workflow.id)
            .await?;
        if active > 0 {
            return Err(Error::Conflict(format!(
                "the workflow has {active} running or waiting execution(s); cancel them or wait for them to finish, then delete it"
            )));
        }
        let mut changes = ChangeSet::new();
        changes.push(Write::DeleteWorkflow {
            workspace_id: workflow.workspace_id,
            id: workflow.id,
        });
        self.store.commit(changes).await?;
        Ok(())
    }
}
