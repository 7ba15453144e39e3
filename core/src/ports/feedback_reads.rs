//! What recording feedback about an email reads before its commit
//! ([`super::Store::feedback_reads`]).

use crate::model::{EmailRecord, Segment};

/// The reads of an open, a click, a delivery report, a bounce or a complaint, made together
/// so that a store can make them in one round trip.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedbackReads {
    /// The email without its content ([`super::Store::email_without_content`]); `None` when
    /// the workspace has no such email, and then the other two are empty and `false`.
    pub email: Option<EmailRecord>,
    /// The workspace's tracked segments ([`super::Store::tracked_segments`]).
    pub tracked_segments: Vec<Segment>,
    /// Whether an event of the name given, about the email's contact, concerns a workflow:
    /// an enabled workflow it triggers, or an execution of that contact waiting for it
    /// ([`super::WorkflowStore::has_event_interest`]).
    pub event_interest: bool,
}

impl FeedbackReads {
    /// What there is to read when the workspace has no such email: nothing.
    pub fn no_email() -> Self {
        Self {
            email: None,
            tracked_segments: Vec::new(),
            event_interest: false,
        }
    }
}
