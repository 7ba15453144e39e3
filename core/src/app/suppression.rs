//! The suppression of an address that bounced for good or whose recipient complained: no
//! mail of any kind goes to it until the contact is subscribed again by the workspace
//! (as SendGrid's bounce and spam-report lists and Resend's suppression list do).
//!
//! Nothing is stored for it: a contact is suppressed while it is unsubscribed and a
//! permanent bounce or a complaint of its mail is newer than the last time it was
//! subscribed. So subscribing it again (a secret key's contact update, track or send with
//! `subscribed: true`) lifts the suppression, and a contact deleted and created again
//! starts clean.

use crate::model::{Contact, EventId, WorkspaceId};
use crate::ports::{StoreError, SuppressionFacts};
use crate::Engine;

/// Why mail to a contact is suppressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suppression {
    /// Mail to the address bounced for good (the mailbox does not exist).
    Bounced,
    /// Its recipient reported mail as spam.
    Complained,
}

impl Suppression {
    /// The suppression `facts` say applies to an unsubscribed contact: feedback
    /// unsubscribed it last, or a complaint or a permanent bounce was recorded after it was
    /// last subscribed (also when it was unsubscribed already: mail sent to someone who
    /// unsubscribed by hand can still bounce). A complaint is named first: it is the graver.
    pub fn of(facts: &SuppressionFacts) -> Option<Self> {
        let since_subscribing =
            |event: &Option<EventId>| event.as_ref() > facts.subscribed.as_ref();
        let reason = facts.unsubscribe_reason.as_deref();
        if reason == Some("complaint") || since_subscribing(&facts.complained) {
            Some(Self::Complained)
        } else if reason == Some("bounce") || since_subscribing(&facts.bounced) {
            Some(Self::Bounced)
        } else {
            None
        }
    }

    /// The reason recorded on mail that was not sent, in plain words.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Bounced => {
                "suppressed: mail to this address bounced for good; subscribe the contact \
                 again to send to it"
            }
            Self::Complained => {
                "suppressed: the recipient reported mail as spam; subscribe the contact again \
                 to send to it"
            }
        }
    }
}

impl Engine {
    /// Whether mail to `contact` is suppressed, and why. A subscribed contact never is and
    /// costs no read; for an unsubscribed one the store reads its
    /// [`SuppressionFacts`].
    pub(crate) async fn suppression(
        &self,
        workspace_id: &WorkspaceId,
        contact: &Contact,
    ) -> Result<Option<Suppression>, StoreError> {
        if contact.subscribed {
            return Ok(None);
        }
        let facts = self
            .store
            .suppression_facts(workspace_id, &contact.id)
            .await?;
        Ok(Suppression::of(&facts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Facts from event ids given as numbers (0: none), in recording order.
    fn facts(
        subscribed: u8,
        complained: u8,
        bounced: u8,
        reason: Option<&str>,
    ) -> SuppressionFacts {
        let id = |n: u8| (n > 0).then(|| EventId::from(format!("event-{n:03}")));
        SuppressionFacts {
            subscribed: id(subscribed),
            complained: id(complained),
            bounced: id(bounced),
            unsubscribe_reason: reason.map(str::to_owned),
        }
    }

    #[test]
    fn feedback_since_the_last_subscription_suppresses() {
        use Suppression::{Bounced, Complained};
        assert_eq!(Suppression::of(&facts(0, 0, 0, None)), None);
        assert_eq!(Suppression::of(&facts(0, 0, 5, None)), Some(Bounced));
        assert_eq!(Suppression::of(&facts(0, 5, 0, None)), Some(Complained));
        assert_eq!(Suppression::of(&facts(0, 5, 9, None)), Some(Complained));
        assert_eq!(
            Suppression::of(&facts(3, 1, 2, None)),
            None,
            "subscribed since"
        );
        assert_eq!(Suppression::of(&facts(3, 1, 4, None)), Some(Bounced));
        assert_eq!(Suppression::of(&facts(3, 4, 1, None)), Some(Complained));
        // Feedback unsubscribed it last, whatever its events' ids say (a late report
        // carrying a provider's earlier timestamp).
        assert_eq!(
            Suppression::of(&facts(3, 0, 1, Some("bounce"))),
            Some(Bounced)
        );
        assert_eq!(
            Suppression::of(&facts(3, 1, 0, Some("complaint"))),
            Some(Complained)
        );
        // Unsubscribed by hand since being subscribed again after feedback.
        assert_eq!(Suppression::of(&facts(3, 1, 2, None)), None);
    }
}
