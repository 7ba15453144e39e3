//! Delivery status notifications (RFC 3464): the per-recipient fields of the
//! `message/delivery-status` part.

use mail_parser::{Message, MimeHeaders};

use super::fields::{address, field, header_fields};
use super::{original, Failure, Report, StatusCode, MAX_DETAIL};

/// The failures a DSN reports (`Action: failed`, or `delayed` for a warning), or `None`
/// when it reports none (delivered, relayed, expanded).
pub(super) fn read(message: &Message<'_>) -> Option<Report> {
    let mut failures = Vec::new();
    for part in &message.parts {
        if !(part.is_content_type("message", "delivery-status")
            || part.is_content_type("message", "global-delivery-status"))
        {
            continue;
        }
        let text = String::from_utf8_lossy(part.contents()).replace("\r\n", "\n");
        // Blocks: the per-message fields, then one per recipient, apart by blank lines.
        for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
            if let Some(failure) = recipient_failure(&header_fields(block)) {
                failures.push(failure);
            }
        }
    }
    if failures.is_empty() {
        return None;
    }
    Some(Report::Bounce {
        failures,
        original: original::find(message),
    })
}

fn recipient_failure(fields: &[(String, String)]) -> Option<Failure> {
    let action = field(fields, "action").map(str::to_ascii_lowercase);
    let diagnostic = field(fields, "diagnostic-code");
    let status = field(fields, "status")
        .and_then(StatusCode::parse)
        .or_else(|| diagnostic.and_then(StatusCode::find_in));
    let failed = match action.as_deref() {
        Some(action) => action.starts_with("failed") || action.starts_with("delayed"),
        // Without an Action, the status says (a per-message block has neither).
        None => status.is_some_and(|s| s.class != 2),
    };
    if !failed {
        return None;
    }
    let recipient = field(fields, "final-recipient")
        .or_else(|| field(fields, "original-recipient"))
        .and_then(address);
    let detail = diagnostic
        .map(|d| match d.split_once(';') {
            Some((kind, text)) if !kind.contains(' ') => text.trim(),
            _ => d,
        })
        .map(|d| d.chars().take(MAX_DETAIL).collect())
        .or_else(|| status.map(|s| s.to_string()));
    Some(Failure {
        recipient,
        status,
        detail,
    })
}
