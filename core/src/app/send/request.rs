//! Parsing the body of `POST /v1/send` into a typed request, reporting every bad field.

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::error::Result;
use crate::model::EmailAddress;
use crate::ports::Attachment;
use crate::validate::{join, type_name, Checker};

/// Most recipients in one request.
pub const MAX_RECIPIENTS: usize = 50;
/// Most attachments in one request.
pub const MAX_ATTACHMENTS: usize = 10;
/// Most attachment bytes (decoded) in one request.
pub const MAX_ATTACHMENT_BYTES: usize = 10 * 1024 * 1024;
/// Longest subject, in characters.
pub const MAX_SUBJECT_CHARS: usize = 998;

/// Headers a caller may not set (lower case): Posthorn writes them.
pub const RESERVED_HEADERS: &[&str] = &[
    "from",
    "to",
    "cc",
    "bcc",
    "subject",
    "date",
    "message-id",
    "reply-to",
    "sender",
    "mime-version",
    "content-type",
    "content-transfer-encoding",
    "return-path",
    "content-disposition",
    "x-posthorn-email-id",
];

/// A recipient as given: address and optional display name.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipient {
    /// The address.
    pub email: EmailAddress,
    /// Display name.
    pub name: Option<String>,
}

/// A validated send request (template not yet resolved).
#[derive(Debug, Clone, PartialEq)]
pub struct SendRequest {
    /// Distinct recipients, in request order.
    pub to: Vec<Recipient>,
    /// Sender address and name, when given in the request.
    pub from: Option<(EmailAddress, Option<String>)>,
    /// Display name given as `name`.
    pub name: Option<String>,
    /// Subject override.
    pub subject: Option<String>,
    /// HTML body override.
    pub body: Option<String>,
    /// `Some("")` turns the text part off; `None` generates it.
    pub text: Option<String>,
    /// Template id.
    pub template: Option<String>,
    /// Subscription flag to set on the recipients' contacts.
    pub subscribed: Option<bool>,
    /// Template variables.
    pub data: Map<String, Value>,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Reply-To override.
    pub reply: Option<EmailAddress>,
    /// Attachments, decoded.
    pub attachments: Vec<Attachment>,
}

impl SendRequest {
    /// Parses a request body; every failing field is reported at once.
    pub fn parse(body: &Value) -> Result<Self> {
        let obj = Checker::body(body)?;
        let mut c = Checker::new();
        let to = parse_to(&mut c, obj);
        let from = parse_from(&mut c, obj);
        let name = c.line(obj, "name", "", false, 256).map(str::to_string);
        let subject = c
            .line(obj, "subject", "", false, MAX_SUBJECT_CHARS)
            .map(str::to_string);
        let body_html = c.string(obj, "body", "", false).map(str::to_string);
        let text = match obj.get("text") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => c.string(obj, "text", "", false).map(str::to_string),
        };
        let template = c
            .string(obj, "template", "", false)
            .map(|s| s.trim().to_string());
        let subscribed = c.boolean(obj, "subscribed", "", false);
        let data = c
            .object(obj, "data", "", false)
            .cloned()
            .unwrap_or_default();
        let headers = parse_headers(&mut c, obj);
        let reply = c.email(obj, "reply", "", false);
        let attachments = parse_attachments(&mut c, obj);
        if template.is_none() {
            if subject.is_none() && !obj.contains_key("subject") {
                c.fail(
                    "subject",
                    "required",
                    "subject is required when no template is given",
                );
            }
            if body_html.is_none() && !obj.contains_key("body") {
                c.fail(
                    "body",
                    "required",
                    "body is required when no template is given",
                );
            }
        }
        c.finish()?;
        Ok(Self {
            to,
            from,
            name,
            subject,
            body: body_html,
            text,
            template,
            subscribed,
            data,
            headers,
            reply,
            attachments,
        })
    }
}

fn parse_to(c: &mut Checker, obj: &Map<String, Value>) -> Vec<Recipient> {
    let Some(value) = c.value(obj, "to", "", true) else {
        return Vec::new();
    };
    let items: Vec<(String, &Value)> = match value {
        Value::Array(items) => {
            if items.is_empty() {
                c.fail("to", "required", "to must list at least one recipient");
            }
            if items.len() > MAX_RECIPIENTS {
                c.fail(
                    "to",
                    "too_many",
                    format!(
                        "to lists {} recipients; at most {MAX_RECIPIENTS} are allowed per request",
                        items.len()
                    ),
                );
                return Vec::new();
            }
            items
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("to.{i}"), v))
                .collect()
        }
        single => vec![("to".to_string(), single)],
    };
    let mut out: Vec<Recipient> = Vec::new();
    for (path, item) in items {
        if let Some(r) = parse_recipient(c, item, &path) {
            if !out.iter().any(|seen| seen.email == r.email) {
                out.push(r);
            }
        }
    }
    out
}

fn parse_recipient(c: &mut Checker, item: &Value, path: &str) -> Option<Recipient> {
    match item {
        Value::String(raw) => {
            parse_mailbox_string(c, raw, path).map(|(email, name)| Recipient { email, name })
        }
        Value::Object(o) => {
            let name = c.line(o, "name", path, false, 256).map(str::to_string);
            let email = c.email(o, "email", path, true)?;
            Some(Recipient { email, name })
        }
        other => {
            c.fail(
                path,
                "invalid_type",
                format!(
                    "a recipient must be a string or {{name, email}}, got {}",
                    type_name(other)
                ),
            );
            None
        }
    }
}

/// Parses `addr` or `Display Name <addr>`.
pub fn parse_mailbox_string(
    c: &mut Checker,
    raw: &str,
    path: &str,
) -> Option<(EmailAddress, Option<String>)> {
    if raw.chars().any(|ch| ch.is_control()) {
        c.fail(
            path,
            "invalid_characters",
            "address must not contain line breaks",
        );
        return None;
    }
    let trimmed = raw.trim();
    if let (Some(open), true) = (trimmed.rfind('<'), trimmed.ends_with('>')) {
        let name = trimmed[..open].trim().trim_matches('"').trim();
        let addr = &trimmed[open + 1..trimmed.len() - 1];
        let email = c.parse_email(addr, path)?;
        let name = (!name.is_empty()).then(|| name.to_string());
        return Some((email, name));
    }
    c.parse_email(trimmed, path).map(|e| (e, None))
}

fn parse_from(c: &mut Checker, obj: &Map<String, Value>) -> Option<(EmailAddress, Option<String>)> {
    match c.value(obj, "from", "", false)? {
        Value::String(raw) => parse_mailbox_string(c, raw, "from"),
        Value::Object(o) => {
            let name = c.line(o, "name", "from", false, 256).map(str::to_string);
            let email = c.email(o, "email", "from", true)?;
            Some((email, name))
        }
        other => {
            c.fail(
                "from",
                "invalid_type",
                format!(
                    "from must be a string or {{name, email}}, got {}",
                    type_name(other)
                ),
            );
            None
        }
    }
}

fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 76 && name.bytes().all(|b| b.is_ascii_graphic() && b != b':')
}

fn parse_headers(c: &mut Checker, obj: &Map<String, Value>) -> Vec<(String, String)> {
    let Some(headers) = c.object(obj, "headers", "", false) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, value) in headers {
        let path = join("headers", name);
        if !is_header_name(name) {
            c.fail(
                &path,
                "invalid_header",
                "header names are printable ASCII without ':' or spaces",
            );
            continue;
        }
        if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            c.fail(
                &path,
                "reserved_header",
                format!("{name} is set by Posthorn; use the request fields instead"),
            );
            continue;
        }
        match value {
            Value::String(v) if v.chars().any(|ch| ch.is_control() && ch != '\t') => c.fail(
                &path,
                "invalid_characters",
                "header values must not contain line breaks or control characters",
            ),
            Value::String(v) if v.len() > 2000 => {
                c.fail(&path, "too_long", "header values are at most 2000 bytes")
            }
            Value::String(v) => out.push((name.clone(), v.clone())),
            other => c.fail(
                &path,
                "invalid_type",
                format!("header values must be strings, got {}", type_name(other)),
            ),
        }
    }
    out
}

fn parse_attachments(c: &mut Checker, obj: &Map<String, Value>) -> Vec<Attachment> {
    let Some(value) = c.value(obj, "attachments", "", false) else {
        return Vec::new();
    };
    let Value::Array(items) = value else {
        c.fail(
            "attachments",
            "invalid_type",
            "attachments must be an array",
        );
        return Vec::new();
    };
    if items.len() > MAX_ATTACHMENTS {
        c.fail(
            "attachments",
            "too_many",
            format!(
                "at most {MAX_ATTACHMENTS} attachments are allowed, got {}",
                items.len()
            ),
        );
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut total = 0usize;
    for (i, item) in items.iter().enumerate() {
        let path = format!("attachments.{i}");
        let Value::Object(a) = item else {
            c.fail(&path, "invalid_type", "an attachment must be an object");
            continue;
        };
        let filename = c.line(a, "filename", &path, true, 255);
        let content_type = c
            .line(a, "contentType", &path, false, 255)
            .unwrap_or("application/octet-stream");
        let content_id = c
            .line(a, "contentId", &path, false, 255)
            .map(str::to_string);
        let inline = match c.string(a, "disposition", &path, false) {
            None | Some("attachment") => false,
            Some("inline") => true,
            Some(_) => {
                c.fail(
                    join(&path, "disposition"),
                    "invalid_enum",
                    "disposition must be attachment or inline",
                );
                false
            }
        };
        if inline && content_id.is_none() {
            c.fail(
                join(&path, "contentId"),
                "required",
                "inline attachments need a contentId",
            );
        }
        let content = c.string(a, "content", &path, true).and_then(|raw| {
            let cleaned: String = raw.chars().filter(|ch| !ch.is_whitespace()).collect();
            match base64::engine::general_purpose::STANDARD.decode(cleaned) {
                Ok(bytes) => Some(bytes),
                Err(_) => {
                    c.fail(
                        join(&path, "content"),
                        "invalid_base64",
                        "content must be base64",
                    );
                    None
                }
            }
        });
        if let (Some(filename), Some(content)) = (filename, content) {
            total += content.len();
            out.push(Attachment {
                filename: filename.to_string(),
                content_type: content_type.to_string(),
                content,
                content_id,
                inline,
            });
        }
    }
    if total > MAX_ATTACHMENT_BYTES {
        c.fail(
            "attachments",
            "too_large",
            format!("attachments total {total} bytes; at most 10 MB are allowed"),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    use crate::error::Error;

    fn fields(e: Error) -> Vec<String> {
        match e {
            Error::Validation(errors) => errors.into_iter().map(|f| f.field).collect(),
            other => panic!("expected validation error, got {other:?}"),
        }
    }

    #[test]
    fn accepts_every_recipient_shape_and_dedupes() {
        let req = SendRequest::parse(&json!({
            "to": ["A@x.com", {"name": "B", "email": "b@x.com"}, "Ann <a@x.com>"],
            "from": "Shop <shop@example.com>", "subject": "s", "body": "<p>b</p>"
        }))
        .expect("valid");
        assert_eq!(req.to.len(), 2);
        assert_eq!(
            req.from.as_ref().map(|f| f.1.clone()),
            Some(Some("Shop".into()))
        );
    }

    #[test]
    fn reports_all_bad_fields_with_paths() {
        let errs = fields(
            SendRequest::parse(&json!({
                "to": ["ok@x.com", {"email": "bad"}],
                "from": 3,
                "headers": {"X-A": "a\r\nBcc: e@x.com", "Subject": "x"},
                "attachments": [{"filename": "a", "content": "!!"}]
            }))
            .expect_err("invalid"),
        );
        for f in [
            "to.1.email",
            "from",
            "headers.X-A",
            "headers.Subject",
            "attachments.0.content",
            "subject",
            "body",
        ] {
            assert!(errs.iter().any(|e| e == f), "{f} missing from {errs:?}");
        }
    }

    #[test]
    fn limits_are_enforced_one_past_the_edge() {
        let many: Vec<String> = (0..51).map(|i| format!("u{i}@x.com")).collect();
        assert_eq!(
            fields(
                SendRequest::parse(&json!({"to": many, "subject": "s", "body": "b"}))
                    .expect_err("51")
            ),
            ["to"]
        );
        let atts: Vec<Value> = (0..11)
            .map(|_| json!({"filename": "f", "content": "YQ=="}))
            .collect();
        assert_eq!(
            fields(
                SendRequest::parse(
                    &json!({"to": "a@x.com", "subject": "s", "body": "b", "attachments": atts})
                )
                .expect_err("11")
            ),
            ["attachments"]
        );
        let fifty: Vec<String> = (0..50).map(|i| format!("u{i}@x.com")).collect();
        assert!(SendRequest::parse(&json!({"to": fifty, "subject": "s", "body": "b"})).is_ok());
    }

    #[test]
    fn empty_text_is_kept_to_turn_generation_off() {
        let req =
            SendRequest::parse(&json!({"to": "a@x.com", "subject": "s", "body": "b", "text": ""}))
                .expect("valid");
        assert_eq!(req.text.as_deref(), Some(""));
    }

    proptest! {
        #[test]
        fn mailbox_strings_never_panic(raw in "\\PC{0,80}") {
            let mut c = Checker::new();
            let _ = parse_mailbox_string(&mut c, &raw, "from");
        }

        #[test]
        fn display_names_round_trip(name in "[A-Za-z][A-Za-z ]{0,20}[A-Za-z]", local in "[a-z]{1,10}") {
            let mut c = Checker::new();
            let raw = format!("{name} <{local}@example.com>");
            let (email, parsed) = parse_mailbox_string(&mut c, &raw, "from").expect("valid");
            prop_assert_eq!(email.as_str(), format!("{local}@example.com"));
            prop_assert_eq!(parsed, Some(name.trim().to_string()));
        }
    }
}
