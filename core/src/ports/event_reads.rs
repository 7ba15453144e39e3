//! What storing an event for a contact reads before its commit ([`super::Store::event_reads`]).

use crate::model::{Contact, Segment};

/// The reads of `/v1/track` (and any event stored for a contact found by address), made
/// together so that a store can make them in one round trip.
#[derive(Debug, Clone, PartialEq)]
pub struct EventReads {
    /// The contact with the address, when there is one ([`super::Store::contact_by_email`]).
    pub contact: Option<Contact>,
    /// The workspace's tracked segments ([`super::Store::tracked_segments`]).
    pub tracked_segments: Vec<Segment>,
    /// Whether an event of the name concerns a workflow (`false` when no name was given):
    /// an enabled workflow it triggers, or an execution of the contact found waiting for it
    /// ([`super::WorkflowStore::has_event_interest`]; a contact not stored yet has no
    /// execution).
    pub event_interest: bool,
}
