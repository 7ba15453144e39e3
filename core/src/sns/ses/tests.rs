use chrono::TimeZone;
use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;

fn mail() -> Value {
    json!({
        "timestamp": "2026-11-21T10:00:00.000Z",
        "source": "hello@example.com",
        "sourceArn": "arn:aws:ses:us-east-1:123456789012:identity/example.com",
        "sendingAccountId": "123456789012",
        "messageId": "0100018f-ses-id-000000",
        "destination": ["ada@example.org"],
        "headersTruncated": false,
        "commonHeaders": {
            "from": ["hello@example.com"],
            "to": ["ada@example.org"],
            "messageId": "<abc@example.com>",
            "subject": "Hello"
        }
    })
}

fn at(s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 21, 10, 5, s)
        .single()
        .expect("date")
}

#[test]
fn identity_notifications_map_to_feedback() {
    let delivery = json!({"notificationType": "Delivery", "mail": mail(), "delivery": {
        "timestamp": "2026-11-21T10:05:01.000Z", "processingTimeMillis": 546,
        "recipients": ["ada@example.org"], "smtpResponse": "250 ok", "reportingMTA": "a8-70.smtp-out.amazonses.com"}});
    let n = SesNotification::parse(&delivery.to_string()).expect("parses");
    assert_eq!(n.mail.message_id, "0100018f-ses-id-000000");
    assert_eq!(
        n.mail.message_id_header.as_deref(),
        Some("<abc@example.com>")
    );
    assert_eq!(n.feedback(), Some((Feedback::Delivery, at(1))));

    let complaint = json!({"notificationType": "Complaint", "mail": mail(), "complaint": {
        "complainedRecipients": [{"emailAddress": "ada@example.org"}],
        "timestamp": "2026-11-21T10:05:02.000Z", "feedbackId": "f", "complaintFeedbackType": "abuse"}});
    let n = SesNotification::parse(&complaint.to_string()).expect("parses");
    assert_eq!(n.feedback(), Some((Feedback::Complaint, at(2))));
}

#[test]
fn only_abuse_fraud_or_untyped_complaints_complain() {
    let complaint = |kind: Option<&str>| {
        let mut body = json!({"complainedRecipients": [{"emailAddress": "ada@example.org"}],
            "timestamp": "2026-11-21T10:05:02.000Z", "feedbackId": "f"});
        if let Some(kind) = kind {
            body["complaintFeedbackType"] = json!(kind);
        }
        let raw = json!({"notificationType": "Complaint", "mail": mail(), "complaint": body});
        SesNotification::parse(&raw.to_string()).expect("parses")
    };
    for kind in [None, Some("abuse"), Some("Fraud")] {
        assert_eq!(
            complaint(kind).feedback(),
            Some((Feedback::Complaint, at(2))),
            "{kind:?}"
        );
    }
    // As an ARF report read from mail: a report that the mail is not spam, or of a virus,
    // is no complaint about it.
    for kind in ["not-spam", "virus", "auth-failure", "other"] {
        let n = complaint(Some(kind));
        assert_eq!(n.feedback(), None, "{kind}");
        assert_eq!(n.event, SesEvent::Other(format!("Complaint ({kind})")));
    }
}

#[test]
fn configuration_set_events_include_opens_and_clicks() {
    let open = json!({"eventType": "Open", "mail": mail(), "open": {
        "ipAddress": "192.0.2.1", "timestamp": "2026-11-21T10:05:03.000Z", "userAgent": "Mozilla"}});
    let n = SesNotification::parse(&open.to_string()).expect("parses");
    assert_eq!(n.feedback(), Some((Feedback::Open, at(3))));
    let click = json!({"eventType": "Click", "mail": mail(), "click": {
        "ipAddress": "192.0.2.1", "timestamp": "2026-11-21T10:05:04.000Z",
        "link": "https://example.com/a", "linkTags": {}, "userAgent": "Mozilla"}});
    let n = SesNotification::parse(&click.to_string()).expect("parses");
    assert_eq!(
        n.feedback(),
        Some((
            Feedback::Click {
                link: "https://example.com/a".into()
            },
            at(4)
        ))
    );
    let send = json!({"eventType": "Send", "mail": mail(), "send": {}});
    let n = SesNotification::parse(&send.to_string()).expect("parses");
    assert_eq!(n.event, SesEvent::Other("Send".into()));
    assert_eq!(n.feedback(), None);
}

#[test]
fn bounces_are_permanent_only_for_recipient_reasons() {
    let bounce = |kind: &str, sub: &str, status: Option<&str>| {
        let mut recipient = json!({"emailAddress": "ada@example.org", "action": "failed",
            "diagnosticCode": "smtp; 550 5.1.1 user unknown"});
        if let Some(s) = status {
            recipient["status"] = json!(s);
        }
        let v = json!({"notificationType": "Bounce", "mail": mail(), "bounce": {
            "bounceType": kind, "bounceSubType": sub, "bouncedRecipients": [recipient],
            "timestamp": "2026-11-21T10:05:05.000Z", "feedbackId": "f"}});
        match SesNotification::parse(&v.to_string())
            .expect("parses")
            .event
        {
            SesEvent::Bounce {
                bounce_type,
                detail,
                ..
            } => {
                assert!(
                    detail.contains(kind) && detail.contains("5.1.1"),
                    "{detail}"
                );
                bounce_type
            }
            other => panic!("not a bounce: {other:?}"),
        }
    };
    use BounceType::{Permanent, Transient};
    assert_eq!(bounce("Permanent", "General", Some("5.1.1")), Permanent);
    assert_eq!(bounce("Permanent", "NoEmail", None), Permanent);
    assert_eq!(bounce("Permanent", "Suppressed", Some("5.1.1")), Permanent);
    assert_eq!(
        bounce("Permanent", "OnAccountSuppressionList", None),
        Permanent
    );
    // A policy refusal reported as a general hard bounce is not about the recipient.
    assert_eq!(bounce("Permanent", "General", Some("5.7.1")), Transient);
    assert_eq!(
        bounce("Permanent", "UnsupportedAttachment", None),
        Transient
    );
    assert_eq!(bounce("Transient", "MailboxFull", Some("4.2.2")), Transient);
    assert_eq!(bounce("Transient", "General", None), Transient);
    assert_eq!(bounce("Undetermined", "Undetermined", None), Transient);
}

#[test]
fn received_mail_carries_its_content() {
    let received = json!({"notificationType": "Received", "mail": mail(), "receipt": {
        "timestamp": "2026-11-21T10:05:06.000Z", "processingTimeMillis": 10,
        "recipients": ["inbox@example.com"],
        "spamVerdict": {"status": "PASS"}, "virusVerdict": {"status": "FAIL"},
        "spfVerdict": {"status": "GRAY"}, "dkimVerdict": {"status": "DISABLED"},
        "dmarcVerdict": {"status": "PROCESSING_FAILED"},
        "action": {"type": "SNS", "topicArn": "arn:aws:sns:us-east-1:1:t", "encoding": "BASE64"}},
        "content": "U3ViamVjdDogSGkNCg0KSGVsbG8="});
    let n = SesNotification::parse(&received.to_string()).expect("parses");
    assert_eq!(n.feedback(), None);
    let SesEvent::Received(r) = n.event else {
        panic!("not received")
    };
    assert_eq!(r.recipients, vec!["inbox@example.com".to_string()]);
    assert_eq!(r.content.as_deref(), Some(&b"Subject: Hi\r\n\r\nHello"[..]));
    assert_eq!(
        r.verdicts,
        ProviderVerdicts {
            spam: Some(Verdict::Pass),
            virus: Some(Verdict::Fail),
            spf: Some(Verdict::Gray),
            // DISABLED: SES did not check, so Posthorn does.
            dkim: None,
            dmarc: Some(Verdict::ProcessingFailed),
        }
    );
}

#[test]
fn incomplete_notifications_are_refused() {
    assert!(matches!(
        SesNotification::parse("not json"),
        Err(SesError::NotSes(_))
    ));
    assert!(matches!(
        SesNotification::parse(&json!({"mail": mail()}).to_string()),
        Err(SesError::NotSes(_))
    ));
    let no_body = json!({"notificationType": "Bounce", "mail": mail()});
    assert_eq!(
        SesNotification::parse(&no_body.to_string()),
        Err(SesError::Missing {
            kind: "Bounce",
            field: "bounce"
        })
    );
    let bad_time = json!({"notificationType": "Delivery", "mail": mail(), "delivery": {"timestamp": "yesterday"}});
    assert_eq!(
        SesNotification::parse(&bad_time.to_string()),
        Err(SesError::BadTimestamp("yesterday".into()))
    );
}

proptest! {
    #[test]
    fn arbitrary_messages_never_panic(message in any::<String>()) {
        let _ = SesNotification::parse(&message);
    }

    #[test]
    fn arbitrary_bounce_fields_never_panic_and_classify(
        kind in "[A-Za-z]{0,12}", sub in "[A-Za-z]{0,24}", status in proptest::option::of("[0-9.]{0,7}"),
    ) {
        let class = classify_bounce(&kind, &sub, status.as_deref());
        if kind != "Permanent" {
            prop_assert_eq!(class, BounceType::Transient);
        }
    }
}
