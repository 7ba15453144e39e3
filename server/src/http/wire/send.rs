//! `POST /v1/send`: the JSON body into the typed [`SendEmail`], every bad field reported at
//! once, and the answer.
//!
//! The body is read by the deserr wire type [`SendBody`]; the one rule that spans fields
//! (`subject` and `body` are required when no `template` is given) is added by
//! [`SendInput`], which the handler reads. Mailboxes are in [`super::mailbox`], attachments
//! in [`super::attachments`].

use deserr::{Deserr, IntoValue, Value as DValue, ValueKind, ValuePointerRef};
use posthorn_core::app::send::{
    header_count_problem, header_problem, Accepted, SendEmail, MAX_HEADERS, MAX_HEADER_VALUE_BYTES,
    MAX_NAME_CHARS, MAX_SUBJECT_CHARS, RESERVED_HEADERS,
};
use posthorn_core::model::{timestamp, EmailAddress, TemplateId};
use posthorn_core::validate::type_name;
use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::schema::{
    AllOfBuilder, AnyOfBuilder, ObjectBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::attachments::Attachments;
use super::de::{Email, JsonObject, Line, WireErrors};
use super::mailbox::{Recipients, Sender};

type Name = Line<MAX_NAME_CHARS>;
type Subject = Line<MAX_SUBJECT_CHARS>;

/// Custom headers (name to value): no line breaks, none of the headers Posthorn writes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Headers(pub Vec<(String, String)>);

impl Deserr<WireErrors> for Headers {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let map = match Value::from(value) {
            Value::Object(map) => map,
            other => {
                return Err(WireErrors::wrong_kind(
                    location,
                    other.into_value().kind(),
                    &[ValueKind::Map],
                ))
            }
        };
        if let Some((code, message)) = header_count_problem(map.len()) {
            return Err(WireErrors::at(location, code, message));
        }
        let mut errors = WireErrors::default();
        let mut out = Vec::new();
        for (name, value) in map {
            let at = location.push_key(&name);
            match &value {
                Value::String(v) => match header_problem(&name, v) {
                    Some((code, message)) => errors.0.push(WireErrors::field(at, code, message)),
                    None => out.push((name.clone(), v.clone())),
                },
                other => match header_problem(&name, "") {
                    Some((code, message)) => errors.0.push(WireErrors::field(at, code, message)),
                    None => errors.0.push(WireErrors::field(
                        at,
                        "invalid_type",
                        format!("header values must be strings, got {}", type_name(other)),
                    )),
                },
            }
        }
        if errors.is_empty() {
            Ok(Headers(out))
        } else {
            Err(errors)
        }
    }
}

impl PartialSchema for Headers {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .max_properties(Some(MAX_HEADERS))
            .property_names(Some(header_names()))
            .additional_properties(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .max_length(Some(MAX_HEADER_VALUE_BYTES))
                    .pattern(Some(r"^[^\u0000-\u0008\u000A-\u001F\u007F-\u009F]*$"))
                    .description(Some(format!(
                        "At most {MAX_HEADER_VALUE_BYTES} bytes in UTF-8; no line breaks or \
                         other control characters but tab."
                    ))),
            ))
            .description(Some(
                "Custom headers (name to value); line breaks and headers Posthorn sets are \
                 refused.",
            ))
            .into()
    }
}

impl ToSchema for Headers {}

/// Header names a caller may set: printable ASCII without `:` or space, at most 76
/// characters, none of [`RESERVED_HEADERS`] (any case).
fn header_names() -> ObjectBuilder {
    let reserved: Vec<String> = RESERVED_HEADERS
        .iter()
        .map(|name| {
            name.chars()
                .map(|c| {
                    if c.is_ascii_alphabetic() {
                        format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())
                    } else {
                        c.to_string()
                    }
                })
                .collect()
        })
        .collect();
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(76))
        .pattern(Some(format!("^(?!({})$)[!-9;-~]+$", reserved.join("|"))))
        .description(Some(format!(
            "Printable ASCII without `:` or space, at most 76 characters; not one Posthorn \
             sets ({}).",
            RESERVED_HEADERS.join(", ")
        )))
}

/// The fields of `POST /v1/send`, each read on its own.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors)]
#[schema(as = SendRequest)]
#[schema(example = json!({
    "to": ["ada@example.org", {"name": "Grace", "email": "grace@example.org"}],
    "from": "Acme <hello@acme.com>",
    "subject": "Welcome, {{name}}",
    "body": "<p>Hello {{name}}</p>",
    "data": {"name": "friend"}
}))]
pub struct SendBody {
    /// One recipient or a list of 1 to 50 (duplicates are sent once).
    #[schema(inline)]
    pub to: Recipients,
    /// Sender on a verified domain of the workspace; required unless the template has one.
    #[deserr(default)]
    #[schema(inline)]
    pub from: Option<Sender>,
    /// Sender display name (overrides the name of `from`).
    #[deserr(default)]
    #[schema(inline)]
    pub name: Option<Name>,
    /// Subject; required (not `null`) when no template is given.
    #[deserr(default)]
    #[schema(inline)]
    pub subject: Option<Subject>,
    /// HTML body; required (not `null`) when no template is given.
    #[deserr(default)]
    pub body: Option<String>,
    /// Plain-text part: omitted = generated from `body`; `""` = no text part.
    #[deserr(default)]
    pub text: Option<String>,
    /// Template id; supplies subject, body, from and reply-to unless given here.
    #[deserr(default)]
    pub template: Option<String>,
    /// Subscription flag to set on the recipients' contacts; new contacts default to false.
    #[deserr(default)]
    pub subscribed: Option<bool>,
    /// `false` turns open and click tracking off for this send (default on).
    #[deserr(default)]
    pub tracking: Option<bool>,
    /// Template variables.
    #[deserr(default)]
    #[schema(inline)]
    pub data: Option<JsonObject>,
    /// Custom headers (name to value); CR/LF and headers Posthorn sets are refused.
    #[deserr(default)]
    #[schema(inline)]
    pub headers: Option<Headers>,
    /// Reply-To address.
    #[deserr(default)]
    #[schema(inline)]
    pub reply: Option<Email>,
    /// At most 10 attachments, 10 MB decoded in total.
    #[deserr(default)]
    #[schema(inline)]
    pub attachments: Option<Attachments>,
}

/// Body of `POST /v1/send`: [`SendBody`], and `subject` and `body` required when no
/// `template` (a string) is given.
#[derive(Debug)]
pub struct SendInput(pub SendBody);

impl Deserr<WireErrors> for SendInput {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        if value.kind() != ValueKind::Map {
            return SendBody::deserialize_from_value(value, location).map(SendInput);
        }
        let json = Value::from(value);
        let has_template = json.get("template").is_some_and(Value::is_string);
        let mut missing = WireErrors::default();
        for key in ["subject", "body"] {
            // `null` is no subject or body either: it used to send an empty message.
            if !has_template && json.get(key).is_none_or(Value::is_null) {
                missing.1.push(WireErrors::field(
                    location.push_key(key),
                    "required",
                    format!("{key} is required when no template is given"),
                ));
            }
        }
        match (
            SendBody::deserialize_from_value(json.into_value(), location),
            missing,
        ) {
            (Ok(body), missing) if missing.is_empty() => Ok(SendInput(body)),
            (Ok(_), missing) => Err(missing),
            (Err(mut errors), missing) => {
                errors.extend(missing);
                Err(errors)
            }
        }
    }
}

impl PartialSchema for SendInput {
    fn schema() -> RefOr<Schema> {
        let with_template = ObjectBuilder::new()
            .property("template", ObjectBuilder::new().schema_type(Type::String))
            .required("template");
        // Without a template, `from` is required by the send itself (422 at `from`), and a
        // `null` subject or body counts as none.
        let inline = ObjectBuilder::new()
            .property(
                "from",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::String, Type::Object])),
            )
            .property("subject", ObjectBuilder::new().schema_type(Type::String))
            .property("body", ObjectBuilder::new().schema_type(Type::String))
            .required("subject")
            .required("body")
            .required("from");
        AllOfBuilder::new()
            .item(SendBody::schema())
            .item(
                AnyOfBuilder::new()
                    .item(with_template)
                    .item(inline)
                    .description(Some(
                        "`subject`, `body` and `from` are required unless `template` is given.",
                    )),
            )
            .into()
    }
}

impl ToSchema for SendInput {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("SendRequest")
    }
}

impl From<SendInput> for SendEmail {
    fn from(SendInput(b): SendInput) -> Self {
        SendEmail {
            to: b.to.0,
            from: b.from.map(|Sender(m)| (m.email, m.name)),
            name: b.name.map(|n| n.0),
            subject: b.subject.map(|s| s.0),
            body: b.body,
            text: b.text,
            template: b.template.map(|t| TemplateId::from(t.trim())),
            subscribed: b.subscribed,
            tracking: b.tracking,
            data: b.data.map(|d| d.0).unwrap_or_default(),
            headers: b.headers.map(|h| h.0).unwrap_or_default(),
            reply: b.reply.map(|e| e.0),
            attachments: b.attachments.map(|a| a.0).unwrap_or_default(),
            verbatim: false,
        }
    }
}

/// A contact's id and address.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContactRef {
    /// Contact id.
    pub id: String,
    /// Contact address.
    pub email: EmailAddress,
}

/// One accepted recipient.
#[derive(Debug, Serialize, ToSchema)]
pub struct SentEmail {
    /// The recipient's contact.
    pub contact: ContactRef,
    /// Email record id (the `emailId` of later events).
    pub email: String,
}

/// The accepted emails.
#[derive(Debug, Serialize, ToSchema)]
pub struct SendResult {
    /// One entry per distinct recipient, in request order.
    pub emails: Vec<SentEmail>,
    /// When the request was accepted (RFC 3339, UTC, milliseconds).
    #[schema(format = DateTime)]
    pub timestamp: String,
}

impl From<Accepted> for SendResult {
    fn from(a: Accepted) -> Self {
        SendResult {
            emails: a
                .emails
                .into_iter()
                .map(|e| SentEmail {
                    contact: ContactRef {
                        id: e.contact_id.to_string(),
                        email: e.email,
                    },
                    email: e.email_id.to_string(),
                })
                .collect(),
            timestamp: timestamp::format(&a.at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::wire::de::parse;
    use serde_json::json;

    use posthorn_core::Error;

    fn send_email(body: Value) -> Result<SendEmail, Error> {
        parse::<SendInput>(body).map(SendEmail::from)
    }

    fn errors(e: Error) -> Vec<(String, String, String)> {
        match e {
            Error::Validation(errors) => errors
                .into_iter()
                .map(|f| (f.field, f.code, f.message))
                .collect(),
            other => panic!("expected validation error, got {other:?}"),
        }
    }

    fn fields(e: Error) -> Vec<String> {
        errors(e).into_iter().map(|(f, _, _)| f).collect()
    }

    #[test]
    fn accepts_every_recipient_shape_and_dedupes() {
        let req = send_email(json!({
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
    fn reports_all_bad_fields_with_paths_in_the_checker_order() {
        let got = fields(
            send_email(json!({
                "attachments": [{"filename": "a", "content": "!!"}],
                "headers": {"Subject": "x", "X-A": "a\r\nBcc: e@x.com"},
                "from": 3,
                "to": ["ok@x.com", {"email": "bad", "name": 7}],
            }))
            .expect_err("invalid"),
        );
        assert_eq!(
            got,
            [
                "to.1.name",
                "to.1.email",
                "from",
                "headers.Subject",
                "headers.X-A",
                "attachments.0.content",
                "subject",
                "body",
            ]
        );
    }

    #[test]
    fn messages_and_codes_are_the_checkers() {
        let got = errors(
            send_email(
                json!({"to": [null, 3], "from": [], "reply": "  ", "subject": "a\nb",
                "headers": {"X-N": 1, "bad name": "v"}, "attachments": {}, "template": "t"}),
            )
            .expect_err("invalid"),
        );
        let want = [
            (
                "to.0",
                "invalid_type",
                "a recipient must be a string or {name, email}, got null",
            ),
            (
                "to.1",
                "invalid_type",
                "a recipient must be a string or {name, email}, got number",
            ),
            (
                "from",
                "invalid_type",
                "from must be a string or {name, email}, got array",
            ),
            (
                "subject",
                "invalid_characters",
                "subject must not contain line breaks or control characters",
            ),
            (
                "headers.X-N",
                "invalid_type",
                "header values must be strings, got number",
            ),
            (
                "headers.bad name",
                "invalid_header",
                "header names are printable ASCII without ':' or spaces",
            ),
            ("reply", "invalid_email", "email is empty"),
            (
                "attachments",
                "invalid_type",
                "attachments must be an array",
            ),
        ];
        let want: Vec<(String, String, String)> = want
            .iter()
            .map(|(f, c, m)| (f.to_string(), c.to_string(), m.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn missing_and_null_to_subject_and_body_are_required() {
        let got =
            errors(send_email(json!({"to": null, "subject": null, "body": null})).expect_err("to"));
        let required = |key: &str, message: &str| {
            (key.to_string(), "required".to_string(), message.to_string())
        };
        // Without a template, a null subject or body is none: it would send an empty message.
        assert_eq!(
            got,
            [
                required("to", "to is required"),
                required("subject", "subject is required when no template is given"),
                required("body", "body is required when no template is given"),
            ]
        );
        let got = errors(send_email(json!({"to": []})).expect_err("empty"));
        assert_eq!(got[0].1, "required");
        assert_eq!(got[0].2, "to must list at least one recipient");
        assert_eq!(
            fields(send_email(json!({"to": "a@x.com", "template": 3})).expect_err("t")),
            ["template", "subject", "body"]
        );
        assert!(send_email(json!({"to": "a@x.com", "template": " t "})).is_ok());
    }

    #[test]
    fn limits_are_enforced_one_past_the_edge() {
        let many: Vec<String> = (0..51).map(|i| format!("u{i}@x.com")).collect();
        assert_eq!(
            fields(send_email(json!({"to": many, "subject": "s", "body": "b"})).expect_err("51")),
            ["to"]
        );
        let atts: Vec<Value> = (0..11)
            .map(|_| json!({"filename": "f", "content": "YQ=="}))
            .collect();
        assert_eq!(
            fields(
                send_email(
                    json!({"to": "a@x.com", "subject": "s", "body": "b", "attachments": atts})
                )
                .expect_err("11")
            ),
            ["attachments"]
        );
        let fifty: Vec<String> = (0..50).map(|i| format!("u{i}@x.com")).collect();
        assert!(send_email(json!({"to": fifty, "subject": "s", "body": "b"})).is_ok());
    }

    #[test]
    fn empty_text_is_kept_to_turn_generation_off() {
        let req = send_email(json!({"to": "a@x.com", "subject": "s", "body": "b", "text": ""}))
            .expect("valid");
        assert_eq!(req.text.as_deref(), Some(""));
    }
}
