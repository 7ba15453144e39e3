//! The pure part of recording feedback: how the record changes and which event says so.

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use super::Feedback;
use crate::jobs::email_event_data;
use crate::model::{timestamp, BounceType, EmailRecord, EmailStatus};

/// Opens (and, separately, clicks) of one email that store an event; later ones only
/// count, so a forwarded newsletter or a scanner cannot flood the event log.
pub const MAX_STORED_ENGAGEMENT_EVENTS: u32 = 20;

/// Opens or clicks closer than this to the last counted one are the same one (image
/// proxies and double clicks fire twice).
fn collapse_window() -> Duration {
    Duration::seconds(1)
}

/// What to store besides the changed record.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The event to append: name and data.
    pub event: Option<(&'static str, Value)>,
    /// Unsubscribe the contact with this reason (`bounce` or `complaint`).
    pub unsubscribe: Option<&'static str>,
}

/// Applies `feedback` at `at` to `email`; `None` when it changes nothing.
pub(super) fn apply(
    email: &mut EmailRecord,
    feedback: &Feedback,
    at: DateTime<Utc>,
) -> Option<Decision> {
    let stamp = timestamp::format(&at);
    let l = &mut email.lifecycle;
    let (name, extra, unsubscribe): (&'static str, Value, Option<&'static str>) = match feedback {
        Feedback::Delivery => {
            // A delivery report after a permanent bounce or a local failure is stale news.
            if l.delivered_at.is_some()
                || l.bounce_type == Some(BounceType::Permanent)
                || matches!(email.status, EmailStatus::Failed | EmailStatus::Cancelled)
            {
                return None;
            }
            l.delivered_at = Some(at);
            email.status = email.status.advance(EmailStatus::Delivered);
            ("email.delivery", json!({ "deliveredAt": stamp }), None)
        }
        Feedback::Open => {
            if collapses(l.last_opened_at, at) {
                return None;
            }
            l.opens = l.opens.saturating_add(1);
            l.last_opened_at = Some(at);
            let first = l.opened_at.is_none();
            l.opened_at.get_or_insert(at);
            email.status = email.status.advance(EmailStatus::Opened);
            if l.opens > MAX_STORED_ENGAGEMENT_EVENTS {
                return Some(Decision {
                    event: None,
                    unsubscribe: None,
                });
            }
            let extra = json!({ "openedAt": stamp, "opens": l.opens, "isFirstOpen": first });
            ("email.open", extra, None)
        }
        Feedback::Click { link } => {
            if collapses(l.last_clicked_at, at) {
                return None;
            }
            l.clicks = l.clicks.saturating_add(1);
            l.last_clicked_at = Some(at);
            let first = l.clicked_at.is_none();
            l.clicked_at.get_or_insert(at);
            email.status = email.status.advance(EmailStatus::Clicked);
            if l.clicks > MAX_STORED_ENGAGEMENT_EVENTS {
                return Some(Decision {
                    event: None,
                    unsubscribe: None,
                });
            }
            let extra = json!({
                "link": link, "clickedAt": stamp, "clicks": l.clicks, "isFirstClick": first,
            });
            ("email.click", extra, None)
        }
        Feedback::Bounce {
            bounce_type: BounceType::Permanent,
            detail,
        } => {
            if l.bounce_type == Some(BounceType::Permanent) {
                return None;
            }
            // Refused at hand-over (an SMTP reply): it was attempted, and counts as sent
            // for the bounce rate.
            email.sent_at.get_or_insert(at);
            l.bounced_at = Some(at);
            l.bounce_type = Some(BounceType::Permanent);
            l.bounce_detail = detail.clone();
            email.status = email.status.advance(EmailStatus::Bounced);
            let extra = json!({ "bounceType": "Permanent", "bouncedAt": stamp });
            ("email.bounce", extra, Some("bounce"))
        }
        Feedback::Bounce {
            bounce_type: BounceType::Transient,
            detail,
        } => {
            // A transient bounce never replaces a permanent one, and moves no status.
            if l.bounce_type == Some(BounceType::Permanent) {
                return None;
            }
            l.bounced_at = Some(at);
            l.bounce_type = Some(BounceType::Transient);
            l.bounce_detail = detail.clone();
            let extra = json!({ "bounceType": "Transient", "transientBounce": true });
            ("email.bounce", extra, None)
        }
        Feedback::Complaint => {
            if l.complained_at.is_some() {
                return None;
            }
            l.complained_at = Some(at);
            email.status = email.status.advance(EmailStatus::Complained);
            (
                "email.complaint",
                json!({ "complainedAt": stamp }),
                Some("complaint"),
            )
        }
    };
    let mut data = email_event_data(email);
    if let (Value::Object(base), Value::Object(extra)) = (&mut data, extra) {
        base.extend(extra);
    }
    Some(Decision {
        event: Some((name, data)),
        unsubscribe,
    })
}

/// Whether an open or click at `at` is a repeat of the one counted at `last`.
fn collapses(last: Option<DateTime<Utc>>, at: DateTime<Utc>) -> bool {
    last.is_some_and(|last| (at - last).abs() < collapse_window())
}

#[cfg(test)]
mod tests;
