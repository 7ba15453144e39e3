//! Finding the message a bounce is about: the included original (`message/rfc822`), its
//! headers (`text/rfc822-headers`), or, for human-readable bounces, a copy of its headers
//! quoted in the text.

use mail_parser::{Message, MessageParser, MimeHeaders, PartType};

use super::fields::{bare_id, original_of};
use super::{OriginalMessage, EMAIL_ID_HEADER};
use crate::model::EmailId;

/// The original message's ids, from the first part that carries any.
pub(super) fn find(message: &Message<'_>) -> OriginalMessage {
    let mut found = OriginalMessage::default();
    // Part 0 is the report itself; its own headers are not the original's.
    for part in message.parts.iter().skip(1) {
        let candidate = match &part.body {
            PartType::Message(inner) => original_of(inner),
            _ if part.is_content_type("text", "rfc822-headers") => part
                .text_contents()
                .and_then(|text| {
                    MessageParser::new()
                        .parse_headers(text.as_bytes())
                        .map(|m| original_of(&m))
                })
                .unwrap_or_default(),
            _ => continue,
        };
        merge(&mut found, candidate);
    }
    if found.message_id.is_none() && found.email_id.is_none() {
        for part in &message.parts {
            if let PartType::Text(text) = &part.body {
                merge(&mut found, quoted(text));
            }
        }
    }
    found
}

/// Ids quoted in text: lines `Message-ID: <…>` and `X-Posthorn-Email-Id: …` of a copy of
/// the original headers (Exim, qmail and many human-readable bounces include one).
pub(super) fn quoted(text: &str) -> OriginalMessage {
    let mut found = OriginalMessage::default();
    for line in text.lines() {
        let Some((name, value)) = line.trim_start_matches('>').trim().split_once(':') else {
            continue;
        };
        let name = name.trim();
        if found.message_id.is_none() && name.eq_ignore_ascii_case("message-id") {
            found.message_id = bare_id(value);
        } else if found.email_id.is_none() && name.eq_ignore_ascii_case(EMAIL_ID_HEADER) {
            let value = value.trim();
            found.email_id = (!value.is_empty()).then(|| EmailId::from(value));
        }
    }
    found
}

fn merge(into: &mut OriginalMessage, from: OriginalMessage) {
    if into.message_id.is_none() {
        into.message_id = from.message_id;
    }
    if into.email_id.is_none() {
        into.email_id = from.email_id;
    }
}
