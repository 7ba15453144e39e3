//! Steps of a workflow: create, patch, delete, with each kind's configuration checked.

use serde_json::json;

use super::{text_problems, CreateStep, StepPatch};
use crate::app::{Caller, Patch};
use crate::error::{Error, Resource, Result};
use crate::model::{StepId, TemplateId, WorkflowId, WorkspaceId};
use crate::ports::{ChangeSet, Write};
use crate::workflow::{check_action, Step, StepType};
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

    /// Refuses a template that is not in the workspace (422 on `templateId`).
    async fn check_step_template(&self, ws: &WorkspaceId, template_id: &TemplateId) -> Result<()> {
        match self.store.template(ws, template_id).await? {
            Some(_) => Ok(()),
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
            self.check_step_template(&ws, id).await?;
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
                    self.check_step_template(&step.workspace_id, id).await?;
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
        changes.push(Write::DeleteStep {
            workspace_id: step.workspace_id,
            workflow_id: step.workflow_id,
            id: step.id,
        });
        self.store.commit(changes).await?;
        Ok(())
    }
}

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
