//! Steps of a workflow: create, patch, delete, with each kind's configuration checked.

use serde_json::json;

use super::{step_job, text_problems, CreateStep, StepPatch};
use crate::app::{Caller, Patch};
use crate::error::{Error, Resource, Result};
use crate::model::{StepId, TemplateId, WorkflowId, WorkspaceId};
use crate::ports::{ChangeSet, NewJob, Write};
use crate::workflow::{check_action, Step, StepAction, StepType};
use crate::Engine;

impl Engine {
    /// A step of a workflow of the caller's workspace: 404 `WORKFLOW_NOT_FOUND` for the
    /// workflow, 404 `NOT_FOUND` for the step.
    pub async fn workflow_step(
        &self,
        caller: &Caller,
        workflow_id: &WorkflowId,
        step_id: &StepId,
    ) -> Result<Step> {
        let workflow = self.workflow_record(caller, workflow_id).await?;
        self.store
            .workflow_steps(&workflow.workspace_id, &workflow.id)
            .await?
            .into_iter()
            .find(|s| &s.id == step_id)
            .ok_or(Error::NotFound(Resource::Step))
    }

    /// Refuses a template that is not in the workspace (422 on `templateId`), or one sent
    /// from a domain the caller's key may not send from (403).
    async fn check_step_template(
        &self,
        caller: &Caller,
        ws: &WorkspaceId,
        template_id: &TemplateId,
    ) -> Result<()> {
        match self.store.template(ws, template_id).await? {
            Some(template) => Self::check_template_scope(caller, &template),
            None => Err(Error::field(
                "templateId",
                "not_found",
                "no template with this id in the workspace",
            )),
        }
    }

    /// `POST /workflows/{id}/steps`.
    pub async fn create_step(
        &self,
        caller: &Caller,
        workflow_id: &WorkflowId,
        cmd: CreateStep,
    ) -> Result<Step> {
        text_problems(Some(&cmd.name), None)?;
        let workflow = self.workflow_record(caller, workflow_id).await?;
        let kind = cmd.action.step_type();
        if kind == StepType::Trigger {
            return Err(Error::InvalidState(
                "a workflow has exactly one TRIGGER step, made with the workflow; change the trigger with PATCH /workflows/{id}".into(),
            ));
        }
        check_action(&cmd.action)?;
        let template_id = template_rule(kind, cmd.template_id)?;
        let ws = caller.workspace_id().clone();
        if let Some(id) = &template_id {
            self.check_step_template(caller, &ws, id).await?;
        }
        let now = self.clock.now();
        let step = Step {
            id: StepId::generate(&*self.clock),
            workspace_id: ws,
            workflow_id: workflow.id,
            name: cmd.name.trim().to_string(),
            position: cmd.position.unwrap_or_else(|| json!({"x": 0, "y": 0})),
            action: cmd.action,
            template_id,
            created_at: now,
            updated_at: now,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::PutStep(step.clone()));
        self.store.commit(changes).await?;
        Ok(step)
    }

    /// `PATCH /workflows/{id}/steps/{stepId}`: name, position, config (for the step's kind),
    /// template.
    pub async fn patch_step(
        &self,
        caller: &Caller,
        workflow_id: &WorkflowId,
        step_id: &StepId,
        patch: StepPatch,
    ) -> Result<Step> {
        text_problems(patch.name.as_deref(), None)?;
        let mut step = self.workflow_step(caller, workflow_id, step_id).await?;
        let kind = step.action.step_type();
        if let Some(action) = patch.config {
            if kind == StepType::Trigger {
                return Err(Error::InvalidState(
                    "the TRIGGER step follows the workflow's trigger; change it with PATCH /workflows/{id} (triggerType, triggerConfig)".into(),
                ));
            }
            if action.step_type() != kind {
                return Err(Error::StepKindMismatch {
                    step: kind,
                    given: action.step_type(),
                });
            }
            check_action(&action)?;
            step.action = action;
        }
        match patch.template_id {
            Patch::Keep => {}
            Patch::Clear => step.template_id = template_rule(kind, None)?,
            Patch::Set(id) => {
                let id = template_rule(kind, Some(id))?;
                if let Some(id) = &id {
                    self.check_step_template(caller, &step.workspace_id, id)
                        .await?;
                }
                step.template_id = id;
            }
        }
        if let Some(name) = patch.name {
            step.name = name.trim().to_string();
        }
        if let Some(position) = patch.position {
            step.position = position;
        }
        step.updated_at = self.clock.now();
        let mut changes = ChangeSet::new();
        changes.push(Write::PutStep(step.clone()));
        self.store.commit(changes).await?;
        Ok(step)
    }

    /// `DELETE /workflows/{id}/steps/{stepId}`: with its transitions; never the TRIGGER step.
    pub async fn delete_step(
        &self,
        caller: &Caller,
        workflow_id: &WorkflowId,
        step_id: &StepId,
    ) -> Result<()> {
        let step = self.workflow_step(caller, workflow_id, step_id).await?;
        if step.action.step_type() == StepType::Trigger {
            return Err(Error::InvalidState(
                "the TRIGGER step cannot be deleted: every workflow starts there".into(),
            ));
        }
        let mut changes = ChangeSet::new();
        self.wake_untimed_waiters(&step, &mut changes).await?;
        changes.push(Write::DeleteStep {
            workspace_id: step.workspace_id,
            workflow_id: step.workflow_id,
            id: step.id,
        });
        self.store.commit(changes).await?;
        Ok(())
    }

    /// Queues the step job of every execution waiting at `step` when it is a WAIT_FOR_EVENT
    /// without a timeout: no job of theirs would run again, and a step's job is what fails
    /// an execution whose step was deleted. (A timed wait's or a delay's job comes anyway.)
    async fn wake_untimed_waiters(&self, step: &Step, changes: &mut ChangeSet) -> Result<()> {
        let untimed = matches!(step.action, StepAction::WaitForEvent { timeout: None, .. });
        let ws = &step.workspace_id;
        if !untimed || self.store.active_executions(ws, &step.workflow_id).await? == 0 {
            return Ok(());
        }
        let now = self.clock.now();
        let mut offset = 0;
        loop {
            let (page, _) = self
                .store
                .executions(ws, &step.workflow_id, offset, WAITER_PAGE)
                .await?;
            for execution in page
                .iter()
                .filter(|e| e.status.is_active() && e.current_step_id.as_ref() == Some(&step.id))
            {
                changes.push(Write::EnqueueJob(NewJob::at(
                    &*self.clock,
                    step_job(execution, &step.id),
                    now,
                )));
            }
            if page.len() < WAITER_PAGE {
                return Ok(());
            }
            offset += WAITER_PAGE;
        }
    }
}

/// Executions read per page when a deleted step's waiters are looked for.
const WAITER_PAGE: usize = 500;

/// SEND_EMAIL needs a template; other kinds take none.
fn template_rule(kind: StepType, template_id: Option<TemplateId>) -> Result<Option<TemplateId>> {
    match (kind, template_id) {
        (StepType::SendEmail, None) => Err(Error::field(
            "templateId",
            "required",
            "a SEND_EMAIL step needs a templateId",
        )),
        (StepType::SendEmail, Some(id)) => Ok(Some(id)),
        (_, None) => Ok(None),
        (_, Some(_)) => Err(Error::field(
            "templateId",
            "not_allowed",
            "only SEND_EMAIL steps send a template",
        )),
    }
}
