//! What the suppression rule ([`crate::app::suppression`]) reads of one contact, made
//! together so that a store can read it in one round trip.

use serde_json::Value;

use crate::model::EventId;

/// The newest events of a contact that decide whether mail to it is suppressed. Newest
/// means the greatest id: ids are taken in the order events are recorded, also when an
/// event carries a provider's earlier timestamp (a late bounce report).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuppressionFacts {
    /// Its newest `contact.subscribed` event.
    pub subscribed: Option<EventId>,
    /// Its newest `email.complaint` event.
    pub complained: Option<EventId>,
    /// Its newest `email.bounce` event with `bounceType` `Permanent`.
    pub bounced: Option<EventId>,
    /// The `reason` of its newest `contact.unsubscribed` event (`bounce` or `complaint`
    /// when feedback unsubscribed it; `None` when it has none or the event has no reason).
    pub unsubscribe_reason: Option<String>,
}

impl SuppressionFacts {
    /// From a store's one-statement read, column by column as text: the newest ids of
    /// `contact.subscribed`, `email.complaint` and permanent `email.bounce`, and the newest
    /// `contact.unsubscribed`'s reason.
    pub fn from_columns([subscribed, complained, bounced, reason]: [Option<String>; 4]) -> Self {
        Self {
            subscribed: subscribed.map(EventId::from),
            complained: complained.map(EventId::from),
            bounced: bounced.map(EventId::from),
            unsubscribe_reason: reason,
        }
    }

    /// Whether the data of an `email.bounce` event says the bounce is permanent.
    pub fn is_permanent_bounce(data: &Value) -> bool {
        data.get("bounceType").and_then(Value::as_str) == Some("Permanent")
    }

    /// The `reason` in the data of a `contact.unsubscribed` event (`bounce`, `complaint`).
    pub fn reason_of(data: &Value) -> Option<String> {
        data.get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
}
