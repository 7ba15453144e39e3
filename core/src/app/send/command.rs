//! The typed `SendEmail` command and the rules every send obeys, whoever builds it (the
//! HTTP API parses JSON into it; an embedder builds it in Rust).

use serde_json::{Map, Value};

use crate::error::{Error, FieldError, Result};
use crate::model::{EmailAddress, TemplateId};
use crate::ports::Attachment;
use crate::validate::line_problem;

/// Most recipients in one request.
pub const MAX_RECIPIENTS: usize = 50;
/// Most attachments in one request.
pub const MAX_ATTACHMENTS: usize = 10;
/// Most attachment bytes (decoded) in one request.
pub const MAX_ATTACHMENT_BYTES: usize = 10 * 1024 * 1024;
/// Longest subject, in characters.
pub const MAX_SUBJECT_CHARS: usize = 998;
/// Longest display name, in characters.
pub const MAX_NAME_CHARS: usize = 256;
/// Longest custom header value, in bytes.
pub const MAX_HEADER_VALUE_BYTES: usize = 2000;
/// Most custom headers in one request.
pub const MAX_HEADERS: usize = 50;

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
    "dkim-signature",
];

/// A recipient: address and optional display name.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipient {
    /// The address.
    pub email: EmailAddress,
    /// Display name.
    pub name: Option<String>,
}

impl Recipient {
    /// A recipient without a display name.
    pub fn new(email: EmailAddress) -> Self {
        Self { email, name: None }
    }
}

/// `POST /v1/send`: one message to 1..=50 recipients, from a template or given inline.
///
/// Build it with [`SendEmail::to`] and set what you need; [`crate::Engine::send`] checks
/// the rules ([`SendEmail::validate`]) before anything is written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SendEmail {
    /// Distinct recipients, in request order (1 to [`MAX_RECIPIENTS`]).
    pub to: Vec<Recipient>,
    /// Sender address and name; the template's when `None`.
    pub from: Option<(EmailAddress, Option<String>)>,
    /// Sender display name, overriding the one of `from` or the template.
    pub name: Option<String>,
    /// Subject (a template placeholder string); empty when neither it nor a template is given.
    pub subject: Option<String>,
    /// HTML body (a template string); empty when neither it nor a template is given.
    pub body: Option<String>,
    /// Plain-text part: `None` derives it from the HTML, `Some("")` sends none.
    pub text: Option<String>,
    /// Template id.
    pub template: Option<TemplateId>,
    /// Subscription flag to set on the recipients' contacts.
    pub subscribed: Option<bool>,
    /// Template variables.
    pub data: Map<String, Value>,
    /// Extra headers (not one of [`RESERVED_HEADERS`]).
    pub headers: Vec<(String, String)>,
    /// Reply-To override.
    pub reply: Option<EmailAddress>,
    /// Attachments, decoded (at most [`MAX_ATTACHMENTS`], [`MAX_ATTACHMENT_BYTES`] in all).
    pub attachments: Vec<Attachment>,
    /// `Some(false)` turns open and click tracking off for this send.
    pub tracking: Option<bool>,
    /// Subject, body and text are final, not templates: a message composed elsewhere (the
    /// SMTP submission relay) goes out as written, `{{` and all.
    pub verbatim: bool,
}

impl SendEmail {
    /// A send to one recipient; set `from`, `subject` and `body` (or `template`) next.
    pub fn to(email: EmailAddress) -> Self {
        Self {
            to: vec![Recipient::new(email)],
            ..Self::default()
        }
    }

    /// Checks every rule, reporting all failing fields at once (paths as in the HTTP API).
    pub fn validate(&self) -> Result<()> {
        let mut errors = Vec::new();
        if let Some((code, message)) = recipients_problem(self.to.len()) {
            errors.push(FieldError::new("to", code, message));
        }
        for (i, r) in self.to.iter().enumerate() {
            if self.to[..i].iter().any(|seen| seen.email == r.email) {
                errors.push(FieldError::new(
                    format!("to.{i}"),
                    "duplicate",
                    format!("{} is listed twice", r.email),
                ));
            }
            push_line(
                &mut errors,
                &format!("to.{i}.name"),
                "name",
                r.name.as_deref(),
                MAX_NAME_CHARS,
            );
        }
        if let Some((_, name)) = &self.from {
            push_line(
                &mut errors,
                "from.name",
                "name",
                name.as_deref(),
                MAX_NAME_CHARS,
            );
        }
        push_line(
            &mut errors,
            "name",
            "name",
            self.name.as_deref(),
            MAX_NAME_CHARS,
        );
        push_line(
            &mut errors,
            "subject",
            "subject",
            self.subject.as_deref(),
            MAX_SUBJECT_CHARS,
        );
        if self.template.is_none() {
            for (key, given) in [("subject", &self.subject), ("body", &self.body)] {
                if given.is_none() {
                    errors.push(FieldError::new(
                        key,
                        "required",
                        format!("{key} is required when no template is given"),
                    ));
                }
            }
        }
        if let Some((code, message)) = header_count_problem(self.headers.len()) {
            errors.push(FieldError::new("headers", code, message));
        } else {
            for (name, value) in &self.headers {
                if let Some((code, message)) = header_problem(name, value) {
                    errors.push(FieldError::new(format!("headers.{name}"), code, message));
                }
            }
        }
        errors.extend(attachments_problems(&self.attachments));
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation(errors))
        }
    }
}

fn push_line(
    errors: &mut Vec<FieldError>,
    field: &str,
    key: &str,
    value: Option<&str>,
    max: usize,
) {
    if let Some((code, message)) = value.and_then(|v| line_problem(key, v, max)) {
        errors.push(FieldError::new(field, code, message));
    }
}

/// Why `count` recipients are not allowed: `(code, message)`.
pub fn recipients_problem(count: usize) -> Option<(&'static str, String)> {
    if count == 0 {
        Some(("required", "to must list at least one recipient".into()))
    } else if count > MAX_RECIPIENTS {
        Some((
            "too_many",
            format!(
                "to lists {count} recipients; at most {MAX_RECIPIENTS} are allowed per request"
            ),
        ))
    } else {
        None
    }
}

/// Whether `name` is a header name: printable ASCII without `:` or spaces, at most 76.
fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 76 && name.bytes().all(|b| b.is_ascii_graphic() && b != b':')
}

/// Why a custom header may not be sent (header injection, reserved names): `(code, message)`.
pub fn header_problem(name: &str, value: &str) -> Option<(&'static str, String)> {
    if !is_header_name(name) {
        return Some((
            "invalid_header",
            "header names are printable ASCII without ':' or spaces".into(),
        ));
    }
    if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        return Some((
            "reserved_header",
            format!("{name} is set by Posthorn; use the request fields instead"),
        ));
    }
    header_value_problem(value)
}

/// Why a header value may not be sent: `(code, message)`.
pub fn header_value_problem(value: &str) -> Option<(&'static str, String)> {
    if value.chars().any(|ch| ch.is_control() && ch != '\t') {
        return Some((
            "invalid_characters",
            "header values must not contain line breaks or control characters".into(),
        ));
    }
    if value.len() > MAX_HEADER_VALUE_BYTES {
        return Some(("too_long", "header values are at most 2000 bytes".into()));
    }
    None
}

/// Why `count` custom headers are not allowed: `(code, message)`. Checked before the
/// headers themselves, so that a flood of bad ones is one error, not one each.
pub fn header_count_problem(count: usize) -> Option<(&'static str, String)> {
    (count > MAX_HEADERS).then(|| {
        (
            "too_many_headers",
            format!("at most {MAX_HEADERS} custom headers, got {count}"),
        )
    })
}

/// Why `count` attachments are not allowed: `(code, message)`.
pub fn attachment_count_problem(count: usize) -> Option<(&'static str, String)> {
    (count > MAX_ATTACHMENTS).then(|| {
        (
            "too_many",
            format!("at most {MAX_ATTACHMENTS} attachments are allowed, got {count}"),
        )
    })
}

/// Why attachments of `total` decoded bytes are not allowed: `(code, message)`.
pub fn attachment_bytes_problem(total: usize) -> Option<(&'static str, String)> {
    (total > MAX_ATTACHMENT_BYTES).then(|| {
        (
            "too_large",
            format!("attachments total {total} bytes; at most 10 MB are allowed"),
        )
    })
}

fn attachments_problems(attachments: &[Attachment]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some((code, message)) = attachment_count_problem(attachments.len()) {
        errors.push(FieldError::new("attachments", code, message));
    }
    for (i, a) in attachments.iter().enumerate() {
        let path = format!("attachments.{i}");
        push_line(
            &mut errors,
            &format!("{path}.filename"),
            "filename",
            Some(&a.filename),
            255,
        );
        push_line(
            &mut errors,
            &format!("{path}.contentType"),
            "contentType",
            Some(&a.content_type),
            255,
        );
        push_line(
            &mut errors,
            &format!("{path}.contentId"),
            "contentId",
            a.content_id.as_deref(),
            255,
        );
        if a.inline && a.content_id.is_none() {
            errors.push(FieldError::new(
                format!("{path}.contentId"),
                "required",
                "inline attachments need a contentId",
            ));
        }
    }
    let total = attachments.iter().map(|a| a.content.len()).sum();
    if let Some((code, message)) = attachment_bytes_problem(total) {
        errors.push(FieldError::new("attachments", code, message));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn email(s: &str) -> EmailAddress {
        EmailAddress::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn fields(cmd: &SendEmail) -> Vec<String> {
        match cmd.validate() {
            Err(Error::Validation(errors)) => errors.into_iter().map(|f| f.field).collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn a_complete_send_is_valid() {
        let mut cmd = SendEmail::to(email("a@example.org"));
        cmd.from = Some((email("hi@example.com"), Some("Shop".into())));
        cmd.subject = Some("Hello".into());
        cmd.body = Some("<p>Hi</p>".into());
        assert_eq!(cmd.validate(), Ok(()));
    }

    #[test]
    fn rules_hold_for_commands_built_in_rust() {
        let cmd = SendEmail {
            subject: Some("a\r\nBcc: x@example.org".into()),
            headers: vec![
                ("Subject".into(), "x".into()),
                ("X-A".into(), "a\nb".into()),
            ],
            ..SendEmail::default()
        };
        assert_eq!(
            fields(&cmd),
            ["to", "subject", "body", "headers.Subject", "headers.X-A"]
        );
        let mut cmd = SendEmail::to(email("a@example.org"));
        cmd.to.push(Recipient::new(email("a@example.org")));
        cmd.template = Some("t".into());
        assert_eq!(fields(&cmd), ["to.1"]);
        cmd.to = (0..=MAX_RECIPIENTS)
            .map(|i| Recipient::new(email(&format!("u{i}@example.org"))))
            .collect();
        assert_eq!(fields(&cmd), ["to"]);
    }

    #[test]
    fn subject_and_body_are_required_without_a_template() {
        let mut cmd = SendEmail::to(email("a@example.org"));
        assert_eq!(fields(&cmd), ["subject", "body"]);
        cmd.template = Some("t".into());
        assert_eq!(cmd.validate(), Ok(()));
    }

    #[test]
    fn inline_attachments_need_a_content_id() {
        let mut cmd = SendEmail::to(email("a@example.org"));
        cmd.template = Some("t".into());
        cmd.attachments = vec![Attachment {
            filename: "logo.png".into(),
            content_type: "image/png".into(),
            content: vec![1, 2, 3],
            content_id: None,
            inline: true,
        }];
        assert_eq!(fields(&cmd), ["attachments.0.contentId"]);
    }
}
