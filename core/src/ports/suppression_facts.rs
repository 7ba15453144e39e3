//! What the suppression rule ([`crate::app::suppression`]) reads of one contact, made
//! together so that a store can read it in one round trip.

use crate::model::EventId;

/// Events of each kind a store's default [`super::Store::suppression_facts`] reads to
/// find the newest (and, for bounces, the newest permanent one among transient ones).
pub const SUPPRESSION_EVENTS_READ: usize = 10_000;

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
