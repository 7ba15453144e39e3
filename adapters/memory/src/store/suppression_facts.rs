//! `Store::suppression_facts` in one walk over the contact's events (four reads by name
//! would walk them four times). Every event is looked at: the walk's order is the keys',
//! and newest means the greatest id.

use posthorn_core::model::{ContactId, Event, WorkspaceId};
use posthorn_core::ports::SuppressionFacts;

use super::state::State;

/// The newest `contact.subscribed`, `email.complaint`, permanent `email.bounce` and
/// `contact.unsubscribed` events of the contact (newest: the greatest id).
pub(super) fn suppression_facts(
    state: &State,
    workspace_id: &WorkspaceId,
    contact_id: &ContactId,
) -> SuppressionFacts {
    let mut facts = SuppressionFacts::default();
    let Some(data) = state.data.get(workspace_id) else {
        return facts;
    };
    let mut unsubscribed: Option<Event> = None;
    let newer = |slot: &Option<posthorn_core::model::EventId>, event: &Event| {
        slot.as_ref().is_none_or(|id| event.id > *id)
    };
    for key in data.event_keys_of_contact(contact_id) {
        let Some(stored) = data.events.get(key) else {
            continue;
        };
        let event = &stored.event;
        match event.name.as_str() {
            "contact.subscribed" if newer(&facts.subscribed, event) => {
                facts.subscribed = Some(event.id.clone());
            }
            "email.complaint" if newer(&facts.complained, event) => {
                facts.complained = Some(event.id.clone());
            }
            // Only these need their data, which is kept as text.
            "email.bounce"
                if newer(&facts.bounced, event)
                    && SuppressionFacts::is_permanent_bounce(&stored.to_event().data) =>
            {
                facts.bounced = Some(event.id.clone());
            }
            "contact.unsubscribed" if unsubscribed.as_ref().is_none_or(|u| event.id > u.id) => {
                unsubscribed = Some(stored.to_event());
            }
            _ => {}
        }
    }
    facts.unsubscribe_reason = unsubscribed.and_then(|u| SuppressionFacts::reason_of(&u.data));
    facts
}
