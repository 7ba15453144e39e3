use chrono::{Duration, TimeZone};

use super::*;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 12, 0, 0)
        .single()
        .unwrap_or_default()
}

fn sent_email() -> EmailRecord {
    EmailRecord::sample_sent(t0())
}

#[test]
fn delivery_is_recorded_once_and_never_undoes_a_bounce() {
    let mut email = sent_email();
    let first = apply(&mut email, &Feedback::Delivery, t0());
    assert_eq!(
        first.and_then(|d| d.event).map(|e| e.0),
        Some("email.delivery")
    );
    assert_eq!(email.status, EmailStatus::Delivered);
    assert_eq!(apply(&mut email, &Feedback::Delivery, t0()), None);

    let mut bounced = sent_email();
    let bounce = Feedback::Bounce {
        bounce_type: BounceType::Permanent,
        detail: Some("550 5.1.1 no such user".into()),
    };
    let decision = apply(&mut bounced, &bounce, t0());
    assert_eq!(decision.and_then(|d| d.unsubscribe), Some("bounce"));
    assert_eq!(apply(&mut bounced, &Feedback::Delivery, t0()), None);
    assert_eq!(bounced.status, EmailStatus::Bounced);
    assert_eq!(apply(&mut bounced, &bounce, t0()), None);
}

#[test]
fn opens_carry_first_flags_collapse_within_a_second_and_stop_storing_events() {
    let mut email = sent_email();
    let first = apply(&mut email, &Feedback::Open, t0()).and_then(|d| d.event);
    let data = first.map(|(_, data)| data).unwrap_or_default();
    assert_eq!(data["isFirstOpen"], json!(true));
    assert_eq!(data["opens"], json!(1));
    assert_eq!(data["emailId"], json!("e1"));
    // A repeat within a second is the same open.
    let at = t0() + Duration::milliseconds(500);
    assert_eq!(apply(&mut email, &Feedback::Open, at), None);
    assert_eq!(email.lifecycle.opens, 1);
    for n in 2..=25u32 {
        let at = t0() + Duration::seconds(i64::from(n));
        let decision = apply(&mut email, &Feedback::Open, at);
        let event = decision.and_then(|d| d.event);
        assert_eq!(
            event.is_some(),
            n <= MAX_STORED_ENGAGEMENT_EVENTS,
            "open {n}"
        );
        if let Some((_, data)) = event {
            assert_eq!(data["isFirstOpen"], json!(false));
            assert_eq!(data["opens"], json!(n));
        }
    }
    assert_eq!(email.lifecycle.opens, 25);
    assert_eq!(email.lifecycle.opened_at, Some(t0()));
    assert_eq!(email.status, EmailStatus::Opened);
}

#[test]
fn a_transient_bounce_changes_only_the_record() {
    let mut email = sent_email();
    let bounce = Feedback::Bounce {
        bounce_type: BounceType::Transient,
        detail: Some("mailbox full".into()),
    };
    let decision = apply(&mut email, &bounce, t0());
    assert_eq!(decision.as_ref().and_then(|d| d.unsubscribe), None);
    let data = decision
        .and_then(|d| d.event)
        .map(|e| e.1)
        .unwrap_or_default();
    assert_eq!(data["transientBounce"], json!(true));
    assert_eq!(data.get("bouncedAt"), None);
    assert_eq!(email.status, EmailStatus::Sent);
    assert_eq!(email.lifecycle.bounce_type, Some(BounceType::Transient));
}

#[test]
fn a_complaint_unsubscribes_once() {
    let mut email = sent_email();
    let decision = apply(&mut email, &Feedback::Complaint, t0());
    assert_eq!(decision.and_then(|d| d.unsubscribe), Some("complaint"));
    assert_eq!(email.status, EmailStatus::Complained);
    assert_eq!(apply(&mut email, &Feedback::Complaint, t0()), None);
}

#[test]
fn every_decision_stores_the_event_its_feedback_names() {
    // The commit is handed what was read ahead for `Feedback::event_name`; an event of
    // another name would be read for again.
    let feedbacks = [
        Feedback::Delivery,
        Feedback::Open,
        Feedback::Click {
            link: "https://example.org/".into(),
        },
        Feedback::Bounce {
            bounce_type: BounceType::Permanent,
            detail: None,
        },
        Feedback::Bounce {
            bounce_type: BounceType::Transient,
            detail: None,
        },
        Feedback::Complaint,
    ];
    for feedback in feedbacks {
        let mut email = sent_email();
        let decision = apply(&mut email, &feedback, t0());
        let stored = decision.and_then(|d| d.event).map(|(name, _)| name);
        assert_eq!(stored, Some(feedback.event_name()), "{feedback:?}");
    }
}
