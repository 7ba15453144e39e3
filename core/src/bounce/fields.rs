//! Header blocks read with mail-parser: the fields of DSN parts and included headers.

use mail_parser::{Message, MessageParser};

use super::{OriginalMessage, EMAIL_ID_HEADER};
use crate::model::EmailId;

/// The fields of one header block (`Name: value` lines, folded lines joined), names
/// lower-cased, in order.
pub(super) fn header_fields(block: &str) -> Vec<(String, String)> {
    // A block must end in a blank line for the parser to take it as complete.
    let text = format!("{}\n\n", block.trim_end());
    let Some(message) = MessageParser::new().parse_headers(text.as_bytes()) else {
        return Vec::new();
    };
    message
        .headers_raw()
        .map(|(name, value)| (name.to_ascii_lowercase(), unfold(value)))
        .collect()
}

/// The first value of `name` (lower case) among `fields`.
pub(super) fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// What the headers of a message say about it: Message-ID and Posthorn's email id.
pub(super) fn original_of(message: &Message<'_>) -> OriginalMessage {
    OriginalMessage {
        message_id: message.message_id().and_then(bare_id),
        email_id: message
            .header_raw(EMAIL_ID_HEADER)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(EmailId::from),
    }
}

/// A Message-ID without angle brackets and space; `None` when empty.
pub(super) fn bare_id(id: &str) -> Option<String> {
    let id = id
        .trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim();
    (!id.is_empty()).then(|| id.to_owned())
}

/// An address from a DSN field (`rfc822; a@b.test`) or a header (`<a@b.test>`),
/// lower-cased.
pub(super) fn address(value: &str) -> Option<String> {
    let value = match value.split_once(';') {
        Some((_, address)) => address,
        None => value,
    };
    let value = value
        .trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim();
    (value.contains('@')).then(|| value.to_ascii_lowercase())
}

fn unfold(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}
