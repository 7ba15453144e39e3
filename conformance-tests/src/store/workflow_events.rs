//! The stored-event read the workflow engine's dispatch job uses.

use posthorn_core::model::{Event, EventId};
use posthorn_core::ports::Write;
use serde_json::json;

use crate::fixtures::{commit, ids, insert_contact, now_ms, workspace};
use crate::StorePorts;

/// `WorkflowStore::event` finds a stored event by id, with its data, contact and time, and
/// only in its own workspace; an unknown id is `None`.
pub async fn event_by_id_in_its_workspace(p: &StorePorts) {
    let ws = workspace(p, "event-by-id").await;
    let other = workspace(p, "event-by-id-other").await;
    let now = now_ms();
    let contact = insert_contact(p, &ws.id, "evt", true, now).await;
    let event = Event::new(
        ids(),
        &ws.id,
        "order.paid",
        json!({"total": 12.5, "items": ["a", "b"], "nested": {"ok": true}}),
        Some(contact.id.clone()),
        None,
        now,
    );
    let anonymous = Event::new(ids(), &ws.id, "ping", json!({}), None, None, now);
    let s = p.store.as_ref();
    commit(
        s,
        "appending events",
        vec![
            Write::AppendEvent(event.clone()),
            Write::AppendEvent(anonymous.clone()),
        ],
    )
    .await;
    let wsid = ws.id.clone();
    assert_eq!(s.event(&wsid, &event.id).await, Ok(Some(event.clone())));
    assert_eq!(s.event(&wsid, &anonymous.id).await, Ok(Some(anonymous)));
    assert_eq!(
        s.event(&wsid, &EventId::from("no-such-event")).await,
        Ok(None)
    );
    let foreign = other.id.clone();
    assert_eq!(
        s.event(&foreign, &event.id).await,
        Ok(None),
        "an event is invisible from another workspace"
    );
}
