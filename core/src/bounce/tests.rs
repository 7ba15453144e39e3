//! The report reader over real-world shapes (fixtures under `core/tests/fixtures/bounces`).

use proptest::prelude::*;

use super::*;

const RECIPIENT: &str = "gone@example.org";
const MESSAGE_ID: &str = "01937a4e-8c2b-7d3e-9f10-5a6b7c8d9e0f@example.com";
const EMAIL_ID: &str = "01937a4e-8c2b-7d3e-9f10-5a6b7c8d9e0f";

/// A fixture with its placeholders filled in.
fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/bounces/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.replace("{{RECIPIENT}}", RECIPIENT)
        .replace("{{RECIPIENT_LOCAL}}", "gone")
        .replace("{{MESSAGE_ID}}", MESSAGE_ID)
        .replace("{{EMAIL_ID}}", EMAIL_ID)
        .replace("{{SENDER}}", "receipts@example.com")
        .replace(
            "{{BOUNCE_ADDRESS}}",
            "bounces+aebxutumfq6t3h4qcwnxzdm6b5p7qxo2hc2n3ffx2e@example.com",
        )
        .replace('\n', "\r\n")
        .into_bytes()
}

fn bounce(name: &str) -> (Vec<Failure>, OriginalMessage) {
    match read_report(&fixture(name)) {
        Some(Report::Bounce { failures, original }) => (failures, original),
        other => panic!("{name}: not a bounce: {other:?}"),
    }
}

fn full_original() -> OriginalMessage {
    OriginalMessage {
        message_id: Some(MESSAGE_ID.into()),
        email_id: Some(EMAIL_ID.into()),
    }
}

fn only(failures: &[Failure]) -> &Failure {
    assert_eq!(failures.len(), 1, "{failures:?}");
    &failures[0]
}

#[test]
fn postfix_user_unknown_is_permanent() {
    let (failures, original) = bounce("postfix.eml");
    let failure = only(&failures);
    assert_eq!(failure.recipient.as_deref(), Some(RECIPIENT));
    assert_eq!(
        failure.status.map(|s| s.to_string()).as_deref(),
        Some("5.1.1")
    );
    assert_eq!(failure.bounce_type(), BounceType::Permanent);
    let detail = failure.detail.as_deref().unwrap_or_default();
    assert!(
        detail
            .starts_with("550 5.1.1 <gone@example.org>: Recipient address rejected: User unknown"),
        "{detail}"
    );
    assert_eq!(original, full_original());
}

#[test]
fn postfix_mailbox_full_is_transient() {
    let (failures, original) = bounce("postfix-mailbox-full.eml");
    assert_eq!(only(&failures).bounce_type(), BounceType::Transient);
    assert_eq!(original.message_id.as_deref(), Some(MESSAGE_ID));
    assert_eq!(original.email_id, None);
}

#[test]
fn gmail_address_not_found_is_permanent() {
    let (failures, original) = bounce("gmail.eml");
    let failure = only(&failures);
    assert_eq!(failure.recipient.as_deref(), Some(RECIPIENT));
    assert_eq!(failure.bounce_type(), BounceType::Permanent);
    assert!(failure
        .detail
        .as_deref()
        .unwrap_or_default()
        .contains("does not exist"));
    assert_eq!(original, full_original());
}

#[test]
fn outlook_recipient_not_found_is_permanent() {
    let (failures, original) = bounce("outlook.eml");
    let failure = only(&failures);
    assert_eq!(
        failure.status.map(|s| s.to_string()).as_deref(),
        Some("5.1.10")
    );
    assert_eq!(failure.bounce_type(), BounceType::Permanent);
    assert_eq!(original, full_original());
}

#[test]
fn exim_plain_text_bounce_is_read_from_its_text() {
    let (failures, original) = bounce("exim.eml");
    let failure = only(&failures);
    assert_eq!(failure.recipient.as_deref(), Some(RECIPIENT));
    assert_eq!(failure.bounce_type(), BounceType::Permanent);
    assert!(failure
        .detail
        .as_deref()
        .unwrap_or_default()
        .starts_with("550 5.1.1"));
    // The quoted copy of the original headers names it.
    assert_eq!(original, full_original());
}

#[test]
fn qmail_failure_notice_is_read_from_its_text() {
    let (failures, original) = bounce("qmail.eml");
    let failure = only(&failures);
    // No X-Failed-Recipients: the recipient is left to the bounce address's email.
    assert_eq!(failure.recipient, None);
    assert_eq!(
        failure.status.map(|s| s.to_string()).as_deref(),
        Some("5.2.1")
    );
    assert_eq!(failure.bounce_type(), BounceType::Permanent);
    assert!(failure
        .detail
        .as_deref()
        .unwrap_or_default()
        .contains("Mailbox disabled"));
    assert_eq!(original.message_id.as_deref(), Some(MESSAGE_ID));
}

#[test]
fn a_bounce_without_a_status_code_is_transient() {
    let (failures, original) = bounce("exim-unrouteable.eml");
    let failure = only(&failures);
    assert_eq!(failure.status, None);
    assert_eq!(failure.bounce_type(), BounceType::Transient);
    assert_eq!(original.message_id.as_deref(), Some(MESSAGE_ID));
}

#[test]
fn a_delay_warning_is_transient() {
    let (failures, _) = bounce("exim-delayed.eml");
    let failure = only(&failures);
    assert_eq!(
        failure.status.map(|s| s.to_string()).as_deref(),
        Some("4.2.2")
    );
    assert_eq!(failure.bounce_type(), BounceType::Transient);
}

#[test]
fn arf_abuse_report_is_a_complaint() {
    match read_report(&fixture("arf.eml")) {
        Some(Report::Complaint {
            recipient,
            original,
        }) => {
            assert_eq!(recipient.as_deref(), Some(RECIPIENT));
            assert_eq!(original, full_original());
        }
        other => panic!("not a complaint: {other:?}"),
    }
}

#[test]
fn arf_not_spam_report_is_no_complaint() {
    let raw = String::from_utf8(fixture("arf.eml"))
        .unwrap_or_default()
        .replace("Feedback-Type: abuse", "Feedback-Type: not-spam");
    assert_eq!(read_report(raw.as_bytes()), None);
}

#[test]
fn deliveries_and_auto_replies_are_no_reports() {
    assert_eq!(read_report(&fixture("relayed.eml")), None);
    assert_eq!(read_report(&fixture("out-of-office.eml")), None);
    assert_eq!(read_report(b""), None);
    assert_eq!(read_report(b"Subject: hello\r\n\r\nJust saying hi."), None);
}

#[test]
fn bare_line_endings_read_alike() {
    let crlf = fixture("postfix.eml");
    let lf = String::from_utf8(crlf.clone())
        .unwrap_or_default()
        .replace("\r\n", "\n");
    assert_eq!(read_report(lf.as_bytes()), read_report(&crlf));
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = read_report(&raw);
    }

    #[test]
    fn mangled_reports_never_panic(cut in 0usize..4000, noise in "\\PC{0,40}") {
        for name in ["postfix.eml", "gmail.eml", "outlook.eml", "exim.eml", "arf.eml"] {
            let mut raw = fixture(name);
            let at = cut.min(raw.len());
            raw.truncate(at);
            raw.extend_from_slice(noise.as_bytes());
            let _ = read_report(&raw);
        }
    }
}
