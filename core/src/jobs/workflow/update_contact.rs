//! UPDATE_CONTACT: merges data into the contact and changes its subscription, with the
//! usual `contact.subscribed` / `contact.unsubscribed` events (the contacts use case's
//! planning code).

use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use super::settle::Decision;
use super::step::StepContext;
use crate::app::contacts::{plan_upsert, ActiveRoom, Upsert};
use crate::app::StepError;
use crate::ports::ChangeSet;
use crate::workflow::{render_updates, variables, SubscriptionAction};
use crate::Engine;

impl Engine {
    /// Decides an UPDATE_CONTACT step, adding the contact change to `changes`.
    pub(super) async fn update_contact_step(
        &self,
        ctx: &StepContext,
        updates: &Map<String, Value>,
        action: SubscriptionAction,
        now: DateTime<Utc>,
        changes: &mut ChangeSet,
    ) -> Result<Decision, StepError> {
        let ws_id = &ctx.execution.workspace_id;
        let (Some(ws), Some(contact)) = (self.store.workspace(ws_id).await?, &ctx.contact) else {
            return Ok(Decision::Fail("the execution's contact was deleted".into()));
        };
        let vars = variables(&ctx.workflow, &ctx.execution, contact);
        let data = match render_updates(updates, &vars) {
            Ok(m) => m,
            Err(e) => return Ok(Decision::Fail(format!("updates: {e}"))),
        };
        let subscribed = match action {
            SubscriptionAction::None => None,
            SubscriptionAction::Subscribe => Some(true),
            SubscriptionAction::Unsubscribe => Some(false),
        };
        let upsert = Upsert {
            email: contact.email.clone(),
            subscribed,
            data: (!data.is_empty()).then_some(&data),
            default_subscribed: contact.subscribed,
        };
        let done =
            plan_upsert(self, &ws, &upsert, &mut ActiveRoom::default(), now, changes).await?;
        Ok(super::step::complete(
            json!({
                "updated": data.keys().collect::<Vec<_>>(),
                "subscribed": done.contact.subscribed,
            }),
            None,
        ))
    }
}
