//! `GET /events` query strings into [`ListEvents`].

use std::collections::HashMap;

use posthorn_core::app::events::{ListEvents, MAX_EVENTS_PAGE};
use posthorn_core::validate::Checker;
use posthorn_core::Result;

/// `GET /events?eventName&contactId&limit`.
pub fn list(query: &HashMap<String, String>) -> Result<ListEvents> {
    let mut c = Checker::new();
    let limit = c.query_int(query, "limit", 1, MAX_EVENTS_PAGE as i64, 100) as usize;
    c.finish()?;
    Ok(ListEvents {
        event_name: query.get("eventName").cloned(),
        contact_id: query.get("contactId").cloned(),
        limit,
    })
}
