//! Human-readable bounces without a `message/delivery-status` part: Exim's classic
//! "Mail delivery failed" with `X-Failed-Recipients`, qmail's "failure notice", and the
//! plain-text notices some providers send. Recognised by who sends them and what they
//! say, so an out-of-office reply to the bounce address is never taken for a bounce.

use mail_parser::{Address, Message};

use super::fields::address;
use super::{original, Failure, Report, StatusCode, MAX_DETAIL};

/// Sender local parts of mail systems' own notices.
const DAEMON_SENDERS: &[&str] = &["mailer-daemon", "postmaster", "mail-daemon", "mailerdaemon"];
/// Subject phrases of bounces (lower case).
const BOUNCE_SUBJECTS: &[&str] = &[
    "undeliver",
    "delivery status notification",
    "delivery failure",
    "delivery has failed",
    "mail delivery failed",
    "returned mail",
    "failure notice",
    "non-delivery",
    "could not be delivered",
    "delivery failed",
];
/// Body phrases that say a delivery failed (lower case).
const FAILURE_PHRASES: &[&str] = &[
    "could not be delivered",
    "couldn't be delivered",
    "delivery has failed",
    "delivery to the following recipient",
    "permanent error",
    "the following address(es) failed",
    "address not found",
    "user unknown",
    "does not exist",
    "mailbox unavailable",
    "no such user",
    "was not delivered",
    "message not delivered",
    "undeliverable",
];

pub(super) fn read(message: &Message<'_>) -> Option<Report> {
    let failed: Vec<String> = message
        .header_raw("X-Failed-Recipients")
        .map(|v| v.split(',').filter_map(address).collect())
        .unwrap_or_default();
    let subject = message.subject().unwrap_or_default().to_ascii_lowercase();
    let looks_like_bounce = !failed.is_empty()
        || from_daemon(message.from())
        || BOUNCE_SUBJECTS.iter().any(|s| subject.contains(s));
    if !looks_like_bounce {
        return None;
    }
    let text = body_text(message);
    let status = StatusCode::find_in(&text);
    let lower = text.to_ascii_lowercase();
    let says_failed = FAILURE_PHRASES.iter().any(|p| lower.contains(p));
    if failed.is_empty() && status.is_none() && !says_failed {
        return None;
    }
    let detail = diagnostic_line(&text, status);
    let failure = |recipient: Option<String>| Failure {
        recipient,
        status,
        detail: detail.clone(),
    };
    let failures = if failed.is_empty() {
        vec![failure(None)]
    } else {
        failed.into_iter().map(|r| failure(Some(r))).collect()
    };
    Some(Report::Bounce {
        failures,
        original: original::find(message),
    })
}

fn from_daemon(from: Option<&Address<'_>>) -> bool {
    from.and_then(Address::first)
        .and_then(|a| a.address.as_deref())
        .and_then(|a| a.split('@').next())
        .is_some_and(|local| DAEMON_SENDERS.iter().any(|d| local.eq_ignore_ascii_case(d)))
}

/// The text of every text part (plain, or HTML turned into text), in order.
fn body_text(message: &Message<'_>) -> String {
    let mut text = String::new();
    for i in 0..message.text_body.len() {
        if let Some(part) = message.body_text(i) {
            text.push_str(&part);
            text.push('\n');
        }
    }
    text
}

/// The line carrying the status code, else the first line saying the delivery failed.
fn diagnostic_line(text: &str, status: Option<StatusCode>) -> Option<String> {
    let code = status.map(|s| s.to_string());
    let line = text.lines().map(str::trim).find(|line| match &code {
        Some(code) => line.contains(code.as_str()),
        None => {
            let lower = line.to_ascii_lowercase();
            FAILURE_PHRASES.iter().any(|p| lower.contains(p))
        }
    })?;
    Some(line.chars().take(MAX_DETAIL).collect())
}
