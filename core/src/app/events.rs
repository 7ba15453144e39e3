//! Reading the event history: `GET /events` and `GET /events/names`.

use std::collections::{BTreeSet, HashMap};

use super::Caller;
use crate::error::Result;
use crate::model::{Event, INTERNAL_EVENT_NAMES};
use crate::ports::EventQuery;
use crate::validate::Checker;
use crate::Engine;

impl Engine {
    /// `GET /events`: `eventName`, `contactId`, `limit` 1..1000 (100), newest first.
    pub async fn list_events(
        &self,
        caller: &Caller,
        query: &HashMap<String, String>,
    ) -> Result<Vec<Event>> {
        let mut c = Checker::new();
        let limit = c.query_int(query, "limit", 1, 1000, 100) as usize;
        c.finish()?;
        let pick = |key: &str| {
            query
                .get(key)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let q = EventQuery {
            name: pick("eventName"),
            contact_id: pick("contactId"),
            limit,
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
