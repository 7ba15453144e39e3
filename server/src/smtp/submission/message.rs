//! A submitted RFC 5322 message, parsed with mail-parser, into the typed `SendEmail` of
//! `POST /v1/send`: the From header is the sender, the envelope recipients are the
//! recipients (Bcc included), the HTML and text bodies, attachments and inline parts are
//! kept, and the content goes out as written (`verbatim`, no template rendering).

use mail_parser::{Address, Message, MessageParser, MessagePart, MimeHeaders, PartType};
use posthorn_core::app::send::{header_value_problem, Recipient, SendEmail, RESERVED_HEADERS};
use posthorn_core::model::EmailAddress;
use posthorn_core::ports::Attachment;

/// Why a submitted message cannot become a send.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// mail-parser found no message at all.
    #[error("the message could not be parsed as RFC 5322")]
    Unparsable,
    /// No From header, or none with an address.
    #[error("the message has no From address")]
    NoFrom,
    /// The From address is not a valid address.
    #[error("the From address {address} is not valid: {reason}")]
    BadFrom {
        /// The address given.
        address: String,
        /// Why it is refused.
        reason: String,
    },
    /// The message's shape would cost far more memory to read than its size (a header
    /// section past 1 MB, more than 10,000 MIME part boundaries).
    #[error("{0}")]
    Shape(String),
    /// An envelope recipient is not a valid address (checked at RCPT already).
    #[error("the recipient {address} is not valid: {reason}")]
    BadRecipient {
        /// The address given.
        address: String,
        /// Why it is refused.
        reason: String,
    },
}

/// Headers of a submitted message carried over to the sent one (lower case; prefixes end
/// with `-`). Transport headers (Received, DKIM-Signature, Return-Path) are not: Posthorn
/// writes its own.
const KEPT_HEADERS: &[&str] = &[
    "x-",
    "list-",
    "in-reply-to",
    "references",
    "precedence",
    "auto-submitted",
    "keywords",
    "comments",
    "importance",
    "priority",
];

/// The `SendEmail` for `raw` delivered to the envelope `recipients`.
pub fn to_send_command(raw: &[u8], recipients: &[String]) -> Result<SendEmail, MessageError> {
    posthorn_core::app::inbound::check_shape(raw)
        .map_err(|e| MessageError::Shape(e.to_string()))?;
    let message = MessageParser::default()
        .parse(raw)
        .ok_or(MessageError::Unparsable)?;
    let from = message
        .from()
        .and_then(Address::first)
        .ok_or(MessageError::NoFrom)?;
    let from_address = from.address().ok_or(MessageError::NoFrom)?;
    let from_email = EmailAddress::parse(from_address).map_err(|e| MessageError::BadFrom {
        address: from_address.to_string(),
        reason: e.to_string(),
    })?;
    let from_name = from.name().map(one_line).filter(|n| !n.is_empty());
    let mut to = Vec::with_capacity(recipients.len());
    for address in recipients {
        let email = EmailAddress::parse(address).map_err(|e| MessageError::BadRecipient {
            address: address.clone(),
            reason: e.to_string(),
        })?;
        let name = header_name_of(&message, &email);
        to.push(Recipient { email, name });
    }
    let reply = message
        .reply_to()
        .and_then(Address::first)
        .and_then(|a| a.address())
        .and_then(|a| EmailAddress::parse(a).ok());
    let (body, text) = bodies(&message);
    Ok(SendEmail {
        to,
        from: Some((from_email, from_name)),
        subject: Some(message.subject().map(one_line).unwrap_or_default()),
        body: Some(body),
        text,
        headers: kept_headers(&message),
        reply,
        attachments: attachments(&message),
        verbatim: true,
        ..SendEmail::default()
    })
}

/// The HTML body (text turned into HTML when there is none) and the text alternative
/// (`None` lets delivery derive it from the HTML, as `/v1/send` does).
fn bodies(message: &Message<'_>) -> (String, Option<String>) {
    let html = message
        .body_html(0)
        .map(|b| b.into_owned())
        .unwrap_or_default();
    let text = message
        .text_part(0)
        .filter(|part| matches!(part.body, PartType::Text(_)))
        .and_then(|part| part.text_contents())
        .map(str::to_string);
    (html, text)
}

/// The display name the To or Cc header gives `email`, if any; the header may spell the
/// domain in Unicode where the envelope has its A-labels, or the other way round.
fn header_name_of(message: &Message<'_>, email: &EmailAddress) -> Option<String> {
    message
        .to()
        .into_iter()
        .chain(message.cc())
        .flat_map(|list| list.iter())
        .find(|a| {
            a.address().is_some_and(|addr| {
                addr.trim().eq_ignore_ascii_case(email.as_str())
                    || EmailAddress::parse(addr).is_ok_and(|parsed| parsed == *email)
            })
        })
        .and_then(|a| a.name())
        .map(one_line)
        .filter(|n| !n.is_empty())
}

fn kept_headers(message: &Message<'_>) -> Vec<(String, String)> {
    message
        .headers_raw()
        .filter_map(|(name, value)| {
            let lower = name.to_ascii_lowercase();
            let kept = KEPT_HEADERS.iter().any(|k| {
                if k.ends_with('-') {
                    lower.starts_with(k)
                } else {
                    lower == *k
                }
            });
            let posthorn_writes = RESERVED_HEADERS.contains(&lower.as_str());
            let value = one_line(value);
            (kept && !posthorn_writes && header_value_problem(&value).is_none())
                .then(|| (name.to_string(), value))
        })
        .collect()
}

/// Every part that is not a body: attachments and the inline parts HTML refers to.
fn attachments(message: &Message<'_>) -> Vec<Attachment> {
    message
        .attachments()
        .filter(|part| !matches!(part.body, PartType::Multipart(_)))
        .enumerate()
        .map(|(i, part)| attachment(i, part))
        .collect()
}

fn attachment(index: usize, part: &MessagePart<'_>) -> Attachment {
    let content_type = part
        .content_type()
        .map(|ct| match ct.subtype() {
            Some(sub) => format!("{}/{}", ct.ctype(), sub),
            None => ct.ctype().to_string(),
        })
        .map(|ct| one_line(&ct))
        .filter(|ct| !ct.is_empty())
        .unwrap_or_else(|| "application/octet-stream".into());
    let filename = part
        .attachment_name()
        .map(one_line)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| format!("attachment-{}", index + 1));
    let content_id = part
        .content_id()
        .map(|id| one_line(id.trim().trim_start_matches('<').trim_end_matches('>')))
        .filter(|id| !id.is_empty());
    let disposition_inline = part.content_disposition().is_some_and(|d| d.is_inline());
    let inline =
        content_id.is_some() && (disposition_inline || part.content_disposition().is_none());
    Attachment {
        filename,
        content_type,
        content: part.contents().to_vec(),
        content_id,
        inline,
    }
}

/// `value` on one line: line breaks and other control characters become spaces.
fn one_line(value: &str) -> String {
    value
        .chars()
        .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
#[path = "message_tests.rs"]
mod tests;
