//! Builds the RFC 5322 / MIME bytes of an [`OutgoingMessage`] with `mail-builder`.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use mail_builder::headers::address::Address;
use mail_builder::headers::content_type::ContentType;
use mail_builder::headers::date::Date;
use mail_builder::headers::message_id::MessageId;
use mail_builder::headers::raw::Raw;
use mail_builder::headers::text::Text;
use mail_builder::headers::HeaderType;
use mail_builder::mime::{BodyPart, MimePart};
use mail_builder::MessageBuilder;
use posthorn_core::ports::{Attachment, OutgoingMessage};

/// Header naming Posthorn's email record, for matching bounces and provider events.
pub const EMAIL_ID_HEADER: &str = "X-Posthorn-Email-Id";

/// Headers Posthorn writes itself; custom headers may not replace them (lower case).
const RESERVED_HEADERS: &[&str] = &[
    "from",
    "to",
    "cc",
    "bcc",
    "subject",
    "date",
    "message-id",
    "mime-version",
    "content-type",
    "content-transfer-encoding",
    "content-disposition",
    "x-posthorn-email-id",
    "dkim-signature",
];

/// Why a message could not be turned into MIME; retrying cannot help.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// A field that ends up in a header holds a line break or another control character.
    #[error("{0} contains a line break or control character")]
    ControlCharacter(String),
    /// A custom header name is empty or not printable ASCII without `:`.
    #[error("invalid header name {0:?}")]
    InvalidHeaderName(String),
    /// A custom header would replace one Posthorn sets itself.
    #[error("header {0:?} is set by Posthorn and cannot be given as a custom header")]
    ReservedHeader(String),
    /// The message could not be DKIM-signed (an unusable key).
    #[error("DKIM: {0}")]
    Dkim(String),
}

/// Serializes `msg` as a complete message with `date` in the Date header.
///
/// Body layout: `text/html` alone, or `multipart/alternative` (text, html) when `text` is
/// `Some` and not empty; inline parts join the HTML in `multipart/related`; attachments wrap
/// everything in `multipart/mixed`. With `msg.dkim` the message is DKIM-signed last.
pub fn build_mime(msg: &OutgoingMessage, date: DateTime<Utc>) -> Result<Vec<u8>, BuildError> {
    check_fields(msg)?;
    let mut builder = MessageBuilder::new()
        .from(address(msg.from.name.as_deref(), &msg.from.email))
        .to(address(msg.to.name.as_deref(), &msg.to.email))
        .subject(Text::new(msg.subject.as_str()))
        .message_id(MessageId::new(bare_id(&msg.message_id)))
        .date(Date::new(date.timestamp()))
        .header(EMAIL_ID_HEADER, Raw::new(msg.email_id.as_str()));
    if let Some(reply_to) = &msg.reply_to {
        builder = builder.reply_to(Address::new_address(None::<&str>, reply_to.as_str()));
    }
    for (name, value) in &msg.headers {
        builder = builder.header(name.as_str(), header_value(value));
    }
    let mut out = Vec::new();
    builder.body(body(msg)).serialize(&mut out);
    match &msg.dkim {
        Some(signing) => crate::dkim::sign(out, signing),
        None => Ok(out),
    }
}

fn address<'x>(name: Option<&'x str>, email: &'x str) -> Address<'x> {
    let name = name.map(str::trim).filter(|name| !name.is_empty());
    Address::new_address(name, email)
}

/// A Message-ID or Content-ID without the angle brackets mail-builder adds.
fn bare_id(id: &str) -> &str {
    id.trim().trim_start_matches('<').trim_end_matches('>')
}

/// ASCII values go out as they are; anything else is RFC 2047 encoded.
fn header_value(value: &str) -> HeaderType<'_> {
    if value.is_ascii() {
        Raw::new(value).into()
    } else {
        Text::new(value).into()
    }
}

fn body(msg: &OutgoingMessage) -> MimePart<'_> {
    let html = MimePart::new(
        "text/html",
        BodyPart::Text(Cow::Borrowed(msg.html.as_str())),
    );
    let (inline, attached): (Vec<&Attachment>, Vec<&Attachment>) =
        msg.attachments.iter().partition(|a| a.inline);
    let html = if inline.is_empty() {
        html
    } else {
        let mut parts = vec![html];
        parts.extend(inline.into_iter().map(part));
        MimePart::new("multipart/related", parts)
    };
    let readable = match msg.text.as_deref().filter(|text| !text.is_empty()) {
        Some(text) => {
            let text = MimePart::new("text/plain", BodyPart::Text(Cow::Borrowed(text)));
            MimePart::new("multipart/alternative", vec![text, html])
        }
        None => html,
    };
    if attached.is_empty() {
        readable
    } else {
        let mut parts = vec![readable];
        parts.extend(attached.into_iter().map(part));
        MimePart::new("multipart/mixed", parts)
    }
}

fn part(attachment: &Attachment) -> MimePart<'_> {
    let disposition = if attachment.inline {
        "inline"
    } else {
        "attachment"
    };
    let mut part = MimePart::new(
        ContentType::new(attachment.content_type.as_str()),
        BodyPart::Binary(Cow::Borrowed(attachment.content.as_slice())),
    )
    .header(
        "Content-Disposition",
        ContentType::new(disposition).attribute("filename", attachment.filename.as_str()),
    );
    if let Some(cid) = &attachment.content_id {
        part = part.cid(bare_id(cid));
    }
    part
}

/// Re-checks, defensively, everything that lands in a header.
fn check_fields(msg: &OutgoingMessage) -> Result<(), BuildError> {
    let mut fields: Vec<(&str, &str)> = vec![
        ("email id", msg.email_id.as_str()),
        ("message id", &msg.message_id),
        ("sender address", &msg.from.email),
        ("recipient address", &msg.to.email),
        ("subject", &msg.subject),
    ];
    fields.extend(msg.from.name.as_deref().map(|n| ("sender name", n)));
    fields.extend(msg.to.name.as_deref().map(|n| ("recipient name", n)));
    fields.extend(msg.reply_to.as_deref().map(|r| ("reply-to", r)));
    for attachment in &msg.attachments {
        fields.push(("attachment filename", &attachment.filename));
        fields.push(("attachment content type", &attachment.content_type));
        fields.extend(attachment.content_id.as_deref().map(|c| ("content id", c)));
    }
    for (field, value) in fields {
        if has_control(value) {
            return Err(BuildError::ControlCharacter(field.to_owned()));
        }
    }
    for (name, value) in &msg.headers {
        let valid_name =
            !name.is_empty() && name.bytes().all(|b| (33..=126).contains(&b) && b != b':');
        if !valid_name {
            return Err(BuildError::InvalidHeaderName(name.clone()));
        }
        let lower = name.to_ascii_lowercase();
        let replaces_reply_to = lower == "reply-to" && msg.reply_to.is_some();
        if RESERVED_HEADERS.contains(&lower.as_str()) || replaces_reply_to {
            return Err(BuildError::ReservedHeader(name.clone()));
        }
        if has_control(value) {
            return Err(BuildError::ControlCharacter(format!("header {name}")));
        }
    }
    Ok(())
}

fn has_control(value: &str) -> bool {
    value.chars().any(|c| c.is_control() && c != '\t')
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use mail_parser::{MessageParser, MimeHeaders, PartType};
    use posthorn_core::ports::Mailbox;

    use super::*;

    fn message() -> OutgoingMessage {
        OutgoingMessage {
            email_id: "em_123".into(),
            message_id: "em_123@mail.example.test".into(),
            from: Mailbox {
                name: Some("Acme Support".into()),
                email: "support@example.test".into(),
            },
            envelope_from: "support@example.test".into(),
            to: Mailbox {
                name: Some("Zoë Ærøskøbing".into()),
                email: "zoe@example.test".into(),
            },
            reply_to: Some("help@example.test".into()),
            subject: "Grüße – your order ✓".into(),
            html: "<p>Hello <b>Zoë</b></p>".into(),
            text: Some("Hello Zoë".into()),
            headers: vec![
                ("X-Campaign".into(), "spring".into()),
                (
                    "List-Unsubscribe".into(),
                    "<https://example.test/u/1>".into(),
                ),
            ],
            attachments: vec![],
            dkim: None,
        }
    }

    fn date() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 5, 6, 7, 8, 9)
            .single()
            .expect("valid date")
    }

    fn build(msg: &OutgoingMessage) -> Vec<u8> {
        build_mime(msg, date()).expect("builds")
    }

    #[test]
    fn headers_round_trip() {
        let raw = build(&message());
        let parsed = MessageParser::default().parse(&raw).expect("parses");
        let from = parsed.from().and_then(|a| a.first()).expect("from");
        assert_eq!(from.name(), Some("Acme Support"));
        assert_eq!(from.address(), Some("support@example.test"));
        let to = parsed.to().and_then(|a| a.first()).expect("to");
        assert_eq!(to.name(), Some("Zoë Ærøskøbing"));
        assert_eq!(to.address(), Some("zoe@example.test"));
        let reply_to = parsed.reply_to().and_then(|a| a.first()).expect("reply-to");
        assert_eq!(reply_to.address(), Some("help@example.test"));
        assert_eq!(parsed.subject(), Some("Grüße – your order ✓"));
        assert_eq!(parsed.message_id(), Some("em_123@mail.example.test"));
        assert_eq!(
            parsed.date().map(|d| d.to_timestamp()),
            Some(date().timestamp())
        );
        assert_eq!(
            parsed.header_raw(EMAIL_ID_HEADER).map(str::trim),
            Some("em_123")
        );
        assert_eq!(
            parsed.header_raw("X-Campaign").map(str::trim),
            Some("spring")
        );
        assert_eq!(
            parsed.header_raw("List-Unsubscribe").map(str::trim),
            Some("<https://example.test/u/1>")
        );
        // Headers are 7-bit: non-ASCII names and subjects are encoded.
        let head_end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("header end");
        assert!(raw[..head_end].is_ascii());
    }

    #[test]
    fn text_and_html_make_an_alternative() {
        let raw = build(&message());
        let parsed = MessageParser::default().parse(&raw).expect("parses");
        let root = parsed.root_part();
        let ct = root.content_type().expect("content type");
        assert_eq!(
            (ct.ctype(), ct.subtype()),
            ("multipart", Some("alternative"))
        );
        assert_eq!(parsed.body_text(0).as_deref(), Some("Hello Zoë"));
        assert_eq!(
            parsed.body_html(0).as_deref(),
            Some("<p>Hello <b>Zoë</b></p>")
        );
        assert_eq!(parsed.attachment_count(), 0);
    }

    #[test]
    fn html_only_without_text() {
        for text in [None, Some(String::new())] {
            let msg = OutgoingMessage { text, ..message() };
            let raw = build(&msg);
            let parsed = MessageParser::default().parse(&raw).expect("parses");
            let ct = parsed.root_part().content_type().expect("content type");
            assert_eq!((ct.ctype(), ct.subtype()), ("text", Some("html")));
            assert_eq!(parsed.text_body.len(), 1, "html doubles as the text body");
            assert!(matches!(parsed.root_part().body, PartType::Html(_)));
        }
    }

    #[test]
    fn attachments_and_inline_parts() {
        let pdf: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
        let png = vec![0x89, b'P', b'N', b'G', 0, 1, 2, 3];
        let msg = OutgoingMessage {
            html: "<img src=\"cid:logo@x\">".into(),
            attachments: vec![
                Attachment {
                    filename: "facture été.pdf".into(),
                    content_type: "application/pdf".into(),
                    content: pdf.clone(),
                    content_id: None,
                    inline: false,
                },
                Attachment {
                    filename: "logo.png".into(),
                    content_type: "image/png".into(),
                    content: png.clone(),
                    content_id: Some("logo@x".into()),
                    inline: true,
                },
            ],
            ..message()
        };
        let raw = build(&msg);
        let parsed = MessageParser::default().parse(&raw).expect("parses");
        let ct = parsed.root_part().content_type().expect("content type");
        assert_eq!((ct.ctype(), ct.subtype()), ("multipart", Some("mixed")));
        let text = String::from_utf8_lossy(&raw);
        assert!(text.contains("multipart/alternative"), "{text}");
        assert!(text.contains("multipart/related"), "{text}");

        let attachment = parsed
            .attachments()
            .find(|p| p.attachment_name() == Some("facture été.pdf"))
            .expect("pdf attachment");
        assert_eq!(attachment.contents(), pdf.as_slice());
        assert_eq!(
            attachment.content_disposition().map(|d| d.ctype()),
            Some("attachment")
        );
        let logo = parsed
            .parts
            .iter()
            .find(|p| p.content_id() == Some("logo@x"))
            .expect("inline part");
        assert_eq!(logo.contents(), png.as_slice());
        assert_eq!(
            logo.content_disposition().map(|d| d.ctype()),
            Some("inline")
        );
        assert_eq!(parsed.body_text(0).as_deref(), Some("Hello Zoë"));
        assert_eq!(
            parsed.body_html(0).as_deref(),
            Some("<img src=\"cid:logo@x\">")
        );
    }

    #[test]
    fn html_only_with_inline_part_is_related() {
        let msg = OutgoingMessage {
            text: None,
            attachments: vec![Attachment {
                filename: "a.gif".into(),
                content_type: "image/gif".into(),
                content: b"GIF89a".to_vec(),
                content_id: Some("<a@x>".into()),
                inline: true,
            }],
            ..message()
        };
        let raw = build(&msg);
        let parsed = MessageParser::default().parse(&raw).expect("parses");
        let ct = parsed.root_part().content_type().expect("content type");
        assert_eq!((ct.ctype(), ct.subtype()), ("multipart", Some("related")));
        assert!(parsed.parts.iter().any(|p| p.content_id() == Some("a@x")));
    }

    #[test]
    fn header_injection_is_refused() {
        let cases = [
            OutgoingMessage {
                subject: "hi\r\nBcc: x@evil.test".into(),
                ..message()
            },
            OutgoingMessage {
                headers: vec![("X-A".into(), "v\nBcc: x@evil.test".into())],
                ..message()
            },
            OutgoingMessage {
                from: Mailbox {
                    name: Some("A\rB".into()),
                    email: "a@example.test".into(),
                },
                ..message()
            },
        ];
        for msg in cases {
            assert!(matches!(
                build_mime(&msg, date()),
                Err(BuildError::ControlCharacter(_))
            ));
        }
        let bad_name = OutgoingMessage {
            headers: vec![("X A:".into(), "v".into())],
            ..message()
        };
        assert!(matches!(
            build_mime(&bad_name, date()),
            Err(BuildError::InvalidHeaderName(_))
        ));
        let reserved = OutgoingMessage {
            headers: vec![("content-type".into(), "text/plain".into())],
            ..message()
        };
        assert!(matches!(
            build_mime(&reserved, date()),
            Err(BuildError::ReservedHeader(_))
        ));
    }

    #[test]
    fn non_ascii_custom_header_values_are_encoded() {
        let msg = OutgoingMessage {
            headers: vec![("X-Note".into(), "café".into())],
            ..message()
        };
        let raw = build(&msg);
        let parsed = MessageParser::default().parse(&raw).expect("parses");
        let value = parsed.header_raw("X-Note").map(str::trim).expect("header");
        assert_eq!(value, "=?utf-8?B?Y2Fmw6k=?=");
    }

    #[test]
    fn single_part_output_is_deterministic() {
        let msg = OutgoingMessage {
            text: None,
            ..message()
        };
        assert_eq!(build(&msg), build(&msg));
    }
}
