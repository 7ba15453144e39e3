//! ARF complaint reports (RFC 5965), read with mail-auth's parser.

use mail_auth::report::{Feedback, FeedbackType};
use mail_parser::MessageParser;

use super::fields::{address, original_of};
use super::{original, OriginalMessage, Report};

/// A complaint for `abuse` (spam) and `fraud` reports; `None` for the other kinds
/// (`not-spam`, `auth-failure`, `virus`, `other`), which are no complaint about the mail.
pub(super) fn read(raw: &[u8]) -> Option<Report> {
    let feedback = Feedback::parse_rfc5322(raw).ok()?;
    if !matches!(
        feedback.feedback_type(),
        FeedbackType::Abuse | FeedbackType::Fraud
    ) {
        return None;
    }
    let mut found = OriginalMessage::default();
    for included in [feedback.message(), feedback.headers()]
        .into_iter()
        .flatten()
    {
        let from_headers = MessageParser::new()
            .parse_headers(included.as_bytes())
            .map(|m| original_of(&m))
            .unwrap_or_default();
        let from_text = original::quoted(included);
        found.message_id = found
            .message_id
            .or(from_headers.message_id)
            .or(from_text.message_id);
        found.email_id = found
            .email_id
            .or(from_headers.email_id)
            .or(from_text.email_id);
    }
    Some(Report::Complaint {
        recipient: feedback.original_rcpt_to().and_then(address),
        original: found,
    })
}
