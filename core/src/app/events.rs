//! Reading the event history: `GET /events` and `GET /events/names`.

use std::collections::BTreeSet;

use super::Caller;
use crate::error::{Error, Result};
use crate::model::{ContactId, Event, INTERNAL_EVENT_NAMES};
use crate::ports::EventQuery;
use crate::Engine;

/// `GET /events`: the newest events, optionally of one name or one contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEvents {
    /// Only events with this exact name.
    pub event_name: Option<String>,
    /// Only events of this contact.
    pub contact_id: Option<ContactId>,
    /// At most this many, 1 to [`MAX_EVENTS_PAGE`].
    pub limit: usize,
}

/// Most events one `GET /events` returns.
pub const MAX_EVENTS_PAGE: usize = 1000;

impl Default for ListEvents {
    /// The newest 100 events.
    fn default() -> Self {
        Self {
            event_name: None,
            contact_id: None,
            limit: 100,
        }
    }
}

impl Engine {
    /// `GET /events`: newest first.
    pub async fn list_events(&self, caller: &Caller, query: ListEvents) -> Result<Vec<Event>> {
        if !(1..=MAX_EVENTS_PAGE).contains(&query.limit) {
            return Err(Error::field(
                "limit",
                "out_of_range",
                format!("limit must be between 1 and {MAX_EVENTS_PAGE}"),
            ));
        }
        let pick = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let q = EventQuery {
            name: pick(query.event_name),
            contact_id: pick(query.contact_id.map(String::from)).map(ContactId::from),
            limit: query.limit,
        };
        Ok(self.store.events(caller.workspace_id(), &q).await?)
    }

    /// `GET /events/names`: every stored name plus the internal ones, sorted.
    pub async fn event_names(&self, caller: &Caller) -> Result<Vec<String>> {
        let mut names: BTreeSet<String> = self
            .store
            .event_names(caller.workspace_id())
            .await?
            .into_iter()
            .collect();
        names.extend(INTERNAL_EVENT_NAMES.iter().map(|n| n.to_string()));
        Ok(names.into_iter().collect())
    }
}
