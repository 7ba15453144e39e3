//! `POST /v1/track`: record a custom event for a contact, creating or updating it.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::contacts::{plan_upsert, ActiveRoom, Upsert};
use super::{on_conflict_retry, Caller};
use crate::error::{Error, Result};
use crate::model::{Event, EventName};
use crate::ports::{ChangeSet, Write};
use crate::validate::Checker;
use crate::Engine;

/// What `/v1/track` answers.
#[derive(Debug, Clone)]
pub struct Tracked {
    /// The contact's id.
    pub contact_id: String,
    /// The stored event's id.
    pub event_id: String,
    /// When the event was recorded.
    pub at: DateTime<Utc>,
}

impl Engine {
    /// Validates the body, upserts the contact (flag only when given) and stores the event,
    /// all in one commit.
    pub async fn track(&self, caller: &Caller, body: &Value) -> Result<Tracked> {
        let obj = Checker::body(body)?;
        let mut c = Checker::new();
        let email = c.email(obj, "email", "", true);
        let event = c.string(obj, "event", "", true).and_then(|raw| {
            EventName::parse_custom(raw)
                .map_err(|e| c.fail("event", "invalid_event", e.to_string()))
                .ok()
        });
        let subscribed = c.boolean(obj, "subscribed", "", false);
        let data = c.object(obj, "data", "", false);
        c.finish()?;
        let (Some(email), Some(event)) = (email, event) else {
            return Err(Error::Internal("track fields checked above".into()));
        };
        let event_data = Value::Object(data.cloned().unwrap_or_default());
        // Event data also lands on the contact, as Plunk does, so segments can use it.
        let upsert = Upsert {
            email,
            subscribed,
            data,
            default_subscribed: true,
        };
        on_conflict_retry(|| async {
            let now = self.clock.now();
            let ws = &caller.workspace;
            let mut changes = ChangeSet::new();
            let mut room = ActiveRoom::default();
            let done = plan_upsert(self, ws, &upsert, &mut room, now, &mut changes).await?;
            let event = Event::new(
                &ws.id,
                event.as_str(),
                event_data.clone(),
                Some(done.contact.id.clone()),
                None,
                now,
            );
            let event_id = event.id.clone();
            changes.push(Write::AppendEvent(event));
            self.add_membership_jobs(&ws.id, &mut changes).await?;
            self.store.commit(changes).await?;
            Ok(Tracked {
                contact_id: done.contact.id,
                event_id,
                at: now,
            })
        })
        .await
    }
}
