//! `POST /v1/track`: record a custom event for a contact, creating or updating it.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::commit::ReadAhead;
use super::contacts::{plan_upsert_reading, ActiveRoom, Upsert};
use super::Caller;
use crate::error::Result;
use crate::model::{ContactId, EmailAddress, Event, EventId, EventName};
use crate::ports::{ChangeSet, Write};
use crate::Engine;

/// `POST /v1/track`: a custom event for the contact with this address (created when new).
#[derive(Debug, Clone, PartialEq)]
pub struct TrackEvent {
    /// The contact's address.
    pub email: EmailAddress,
    /// The event (a custom name: reserved names cannot be built as custom ones).
    pub event: EventName,
    /// Subscription flag to set; a new contact is subscribed when `None`.
    pub subscribed: Option<bool>,
    /// Event data, also merged into the contact's data (a `null` value removes a key).
    pub data: Option<serde_json::Map<String, Value>>,
}

impl TrackEvent {
    /// An event without data for `email`.
    pub fn new(email: EmailAddress, event: EventName) -> Self {
        Self {
            email,
            event,
            subscribed: None,
            data: None,
        }
    }
}

/// What `/v1/track` answers.
#[derive(Debug, Clone)]
pub struct Tracked {
    /// The contact's id.
    pub contact_id: ContactId,
    /// The stored event's id.
    pub event_id: EventId,
    /// When the event was recorded.
    pub at: DateTime<Utc>,
}

impl Engine {
    /// Upserts the contact (flag only when given) and stores the event, all in one commit.
    pub async fn track(&self, caller: &Caller, cmd: TrackEvent) -> Result<Tracked> {
        let TrackEvent {
            email,
            event,
            subscribed,
            data,
        } = cmd;
        // A public key (a web page anyone can call) cannot undo the unsubscription that a
        // bounce or a spam complaint made: only the workspace's own servers may.
        let subscribed = match subscribed {
            Some(true) if !caller.is_secret() => {
                if self.is_suppressed(caller, &email).await? {
                    None
                } else {
                    Some(true)
                }
            }
            other => other,
        };
        let copy_data = || Value::Object(data.clone().unwrap_or_default());
        // The first attempt takes this copy; only a retry (a lost race) makes another.
        let mut first_data = Some(copy_data());
        // Event data also lands on the contact, as Plunk does, so segments can use it.
        let upsert = &Upsert {
            email,
            subscribed,
            data: data.as_ref(),
            default_subscribed: true,
        };
        let event = &event;
        self.on_conflict_retry(|| {
            let event_data = first_data.take().unwrap_or_else(copy_data);
            async move {
                let now = self.clock.now();
                let ws = &caller.workspace;
                let mut changes = ChangeSet::new();
                let mut room = ActiveRoom::default();
                // The contact, the tracked segments and the workflow interest, in one round
                // trip where the store can.
                let event_name = event.as_str();
                let (done, reads) = plan_upsert_reading(
                    self,
                    ws,
                    upsert,
                    Some(event_name),
                    &mut room,
                    now,
                    &mut changes,
                )
                .await?;
                let event = Event::new(
                    &*self.clock,
                    &ws.id,
                    event_name,
                    event_data,
                    Some(done.contact.id.clone()),
                    None,
                    now,
                );
                let event_id = event.id.clone();
                changes.push(Write::AppendEvent(event));
                let ahead = ReadAhead {
                    workspace_id: &ws.id,
                    tracked_segments: &reads.tracked_segments,
                    event: Some((event_name, &done.contact.id)),
                    event_interest: reads.event_interest,
                };
                self.commit_read_ahead(changes, Some(ahead)).await?;
                Ok(Tracked {
                    contact_id: done.contact.id,
                    event_id,
                    at: now,
                })
            }
        })
        .await
    }

    /// Whether the contact with this address is suppressed (its mail bounced for good or
    /// its recipient complained, since it was last subscribed): read only when a public
    /// key asks to subscribe a contact.
    async fn is_suppressed(&self, caller: &Caller, email: &EmailAddress) -> Result<bool> {
        let ws = &caller.workspace.id;
        let Some(contact) = self.store.contact_by_email(ws, email.as_str()).await? else {
            return Ok(false);
        };
        Ok(self.suppression(ws, &contact).await?.is_some())
    }
}
