//! SEND_EMAIL: the step's template to the contact (or a custom address), through the
//! `/v1/send` path: the template's verified sender, rendering, a QUEUED email record with
//! source type WORKFLOW and its delivery job (throttled like every delivery).

use chrono::{DateTime, Utc};
use serde_json::json;

use super::settle::Decision;
use super::step::StepContext;
use crate::app::contacts::{plan_upsert, ActiveRoom, Upsert};
use crate::app::send::workflow_email;
use crate::app::StepError;
use crate::error::Error;
use crate::model::{EmailAddress, TemplateType};
use crate::ports::{ChangeSet, JobPayload, NewJob, Write};
use crate::render::{render, Escape};
use crate::workflow::{variables, Recipient};
use crate::Engine;

impl Engine {
    /// Decides a SEND_EMAIL step, adding the email and its job to `changes`.
    pub(super) async fn send_step(
        &self,
        ctx: &StepContext,
        recipient: &Recipient,
        now: DateTime<Utc>,
        changes: &mut ChangeSet,
    ) -> Result<Decision, StepError> {
        let ws_id = &ctx.execution.workspace_id;
        let Some(template_id) = &ctx.step.template_id else {
            return Ok(Decision::Fail("the step has no template".into()));
        };
        let Some(template) = self.store.template(ws_id, template_id).await? else {
            return Ok(Decision::Fail(format!(
                "template {template_id} no longer exists"
            )));
        };
        let (Some(ws), Some(contact)) = (self.store.workspace(ws_id).await?, &ctx.contact) else {
            return Ok(Decision::Fail("the execution's contact was deleted".into()));
        };
        let vars = variables(&ctx.workflow, &ctx.execution, contact);
        let (target, to) = match recipient {
            Recipient::Contact => (contact.clone(), contact.email.clone()),
            Recipient::Custom { email } => {
                let rendered = match render(email, &vars, Escape::None) {
                    Ok(r) => r,
                    Err(e) => return Ok(Decision::Fail(format!("recipient email: {e}"))),
                };
                let to = match EmailAddress::parse(rendered.trim()) {
                    Ok(to) => to,
                    Err(e) => {
                        return Ok(Decision::Fail(format!(
                            "recipient email {rendered:?} is not an address: {e}"
                        )))
                    }
                };
                let upsert = Upsert {
                    email: to.clone(),
                    subscribed: None,
                    data: None,
                    default_subscribed: false,
                };
                let done =
                    plan_upsert(self, &ws, &upsert, &mut ActiveRoom::default(), now, changes)
                        .await?;
                (done.contact, to)
            }
        };
        if template.template_type == TemplateType::Marketing && !target.subscribed {
            return Ok(Decision::Complete {
                output: json!({
                    "skipped": true,
                    "reason": "the template is MARKETING and the recipient is unsubscribed",
                    "to": to,
                }),
                taken: None,
                email_id: None,
            });
        }
        if let Some(why) = self.suppression(ws_id, &target).await? {
            return Ok(Decision::Complete {
                output: json!({ "skipped": true, "reason": why.reason(), "to": to }),
                taken: None,
                email_id: None,
            });
        }
        let record = match workflow_email(self, &ws, template, &target, to, &vars, now).await {
            Ok(record) => record,
            Err(e @ (Error::Unavailable(_) | Error::Internal(_))) => return Err(e.into()),
            Err(e) => return Ok(Decision::Fail(describe(&e))),
        };
        let email_id = record.id.clone();
        let output = json!({ "emailId": record.id, "to": record.to.email });
        changes.push(Write::EnqueueJob(NewJob::at(
            &*self.clock,
            JobPayload::DeliverEmail {
                workspace_id: record.workspace_id.clone(),
                email_id: record.id.clone(),
            },
            now,
        )));
        changes.push(Write::InsertEmail(record));
        Ok(Decision::Complete {
            output,
            taken: None,
            email_id: Some(email_id),
        })
    }
}

/// An error as one line for a step record: field errors with their fields.
pub(super) fn describe(e: &Error) -> String {
    match e {
        Error::Validation(errors) => errors
            .iter()
            .map(|f| format!("{}: {}", f.field, f.message))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}
