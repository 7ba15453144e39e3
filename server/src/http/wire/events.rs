//! `GET /events` query strings into [`ListEvents`], and the answers of `/events`.

use deserr::Deserr;
use posthorn_core::app::events::{ListEvents, MAX_EVENTS_PAGE};
use posthorn_core::model::ContactId;
use posthorn_core::model::Event;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use super::de::{QueryInt, WireErrors};

/// Query of `GET /events` (newest first).
#[derive(Debug, Deserr, IntoParams)]
#[deserr(error = WireErrors)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only events with this name.
    #[deserr(default, rename = "eventName")]
    #[param(rename = "eventName")]
    pub event_name: Option<String>,
    /// Only events of this contact.
    #[deserr(default, rename = "contactId")]
    #[param(rename = "contactId")]
    pub contact_id: Option<String>,
    /// Number of events (default 100).
    #[deserr(default = QueryInt(100))]
    #[param(inline, required = false)]
    pub limit: QueryInt<1, { MAX_EVENTS_PAGE as i64 }>,
}

impl From<EventsQuery> for ListEvents {
    fn from(q: EventsQuery) -> Self {
        ListEvents {
            event_name: q.event_name,
            contact_id: q.contact_id.map(ContactId::from),
            limit: q.limit.0 as usize,
        }
    }
}

/// Answer of `GET /events`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventList {
    /// Events, newest first.
    pub events: Vec<Event>,
}

/// Answer of `GET /events/names`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventNames {
    /// Every event name stored in the workspace plus the internal ones, sorted.
    pub event_names: Vec<String>,
}
