//! `/events` and `/events/names` (secret key only, enforced by the auth layer).

use crate::http::answer::JsonAnswer;
use axum::extract::{Extension, State};
use posthorn_core::app::Caller;
use std::sync::Arc;

use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::query::WireQuery;
use crate::http::wire::events::{EventList, EventNames, EventsQuery};
use crate::http::AppState;

/// List events
///
/// Custom and internal events, newest first.
#[utoipa::path(
    get, path = "/events", operation_id = "listEvents", tag = "Events",
    params(EventsQuery),
    responses(
        (status = 200, description = "The events", body = EventList),
        (status = 422, description = "`limit` out of range (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WireQuery(query): WireQuery<EventsQuery>,
) -> ApiResult<JsonAnswer<EventList>> {
    let events = state.engine.list_events(&caller, query.into()).await?;
    Ok(JsonAnswer(EventList { events }))
}

/// List event names
///
/// Every event name stored in the workspace plus the internal names, sorted.
#[utoipa::path(
    get, path = "/events/names", operation_id = "listEventNames", tag = "Events",
    responses(
        (status = 200, description = "The names", body = EventNames),
    ),
)]
pub async fn names(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
) -> ApiResult<JsonAnswer<EventNames>> {
    let event_names = state.engine.event_names(&caller).await?;
    Ok(JsonAnswer(EventNames { event_names }))
}
