//! `POST /v1/send`: the JSON body into the typed [`SendEmail`], reporting every bad field.

use base64::Engine as _;
use posthorn_core::app::send::{
    attachment_bytes_problem, attachment_count_problem, header_problem, recipients_problem,
    Recipient, SendEmail, MAX_NAME_CHARS, MAX_SUBJECT_CHARS,
};
use posthorn_core::model::EmailAddress;
use posthorn_core::model::TemplateId;
use posthorn_core::ports::Attachment;
use posthorn_core::validate::{join, type_name, Checker};
use posthorn_core::Result;
use serde_json::{Map, Value};

/// Parses a `POST /v1/send` body; every failing field is reported at once.
pub fn send_email(body: &Value) -> Result<SendEmail> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let to = parse_to(&mut c, obj);
    let from = parse_from(&mut c, obj);
    let name = c
        .line(obj, "name", "", false, MAX_NAME_CHARS)
        .map(str::to_string);
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
    let tracking = c.boolean(obj, "tracking", "", false);
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
    Ok(SendEmail {
        to,
        from,
        name,
        subject,
        body: body_html,
        text,
        template: template.map(TemplateId::from),
        subscribed,
        data,
        headers,
        reply,
        attachments,
        tracking,
    })
}

fn parse_to(c: &mut Checker, obj: &Map<String, Value>) -> Vec<Recipient> {
    let Some(value) = c.value(obj, "to", "", true) else {
        return Vec::new();
    };
    let items: Vec<(String, &Value)> = match value {
        Value::Array(items) => {
            match recipients_problem(items.len()) {
                Some((code, message)) if code == "too_many" => {
                    c.fail("to", code, message);
                    return Vec::new();
                }
                Some((code, message)) => c.fail("to", code, message),
                None => {}
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
            let name = c
                .line(o, "name", path, false, MAX_NAME_CHARS)
                .map(str::to_string);
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
            let name = c
                .line(o, "name", "from", false, MAX_NAME_CHARS)
                .map(str::to_string);
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

fn parse_headers(c: &mut Checker, obj: &Map<String, Value>) -> Vec<(String, String)> {
    let Some(headers) = c.object(obj, "headers", "", false) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, value) in headers {
        let path = join("headers", name);
        match value {
            Value::String(v) => match header_problem(name, v) {
                Some((code, message)) => c.fail(&path, code, message),
                None => out.push((name.clone(), v.clone())),
            },
            other => match header_problem(name, "") {
                Some((code, message)) => c.fail(&path, code, message),
                None => c.fail(
                    &path,
                    "invalid_type",
                    format!("header values must be strings, got {}", type_name(other)),
                ),
            },
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
    if let Some((code, message)) = attachment_count_problem(items.len()) {
        c.fail("attachments", code, message);
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
    if let Some((code, message)) = attachment_bytes_problem(total) {
        c.fail("attachments", code, message);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    use posthorn_core::Error;

    fn fields(e: Error) -> Vec<String> {
        match e {
            Error::Validation(errors) => errors.into_iter().map(|f| f.field).collect(),
            other => panic!("expected validation error, got {other:?}"),
        }
    }

    #[test]
    fn accepts_every_recipient_shape_and_dedupes() {
        let req = send_email(&json!({
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
            send_email(&json!({
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
            fields(send_email(&json!({"to": many, "subject": "s", "body": "b"})).expect_err("51")),
            ["to"]
        );
        let atts: Vec<Value> = (0..11)
            .map(|_| json!({"filename": "f", "content": "YQ=="}))
            .collect();
        assert_eq!(
            fields(
                send_email(
                    &json!({"to": "a@x.com", "subject": "s", "body": "b", "attachments": atts})
                )
                .expect_err("11")
            ),
            ["attachments"]
        );
        let fifty: Vec<String> = (0..50).map(|i| format!("u{i}@x.com")).collect();
        assert!(send_email(&json!({"to": fifty, "subject": "s", "body": "b"})).is_ok());
    }

    #[test]
    fn empty_text_is_kept_to_turn_generation_off() {
        let req = send_email(&json!({"to": "a@x.com", "subject": "s", "body": "b", "text": ""}))
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
