//! Documentation-only DTOs of the areas not converted yet (`/v1/send`): the JSON shapes its
//! handler accepts and returns, and `REQUEST_RULES` for what the derive cannot say. `tests/openapi.rs` calls the real routes and checks every
//! answer against these schemas. Converted areas describe themselves with their wire types.

#![allow(dead_code)]

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::Value;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOf, Ref, Schema, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

pub use crate::http::error::ErrorResponse;

/// Most recipients of one send.
const MAX_RECIPIENTS: usize = posthorn_core::app::send::MAX_RECIPIENTS;

// ---------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------

/// Free-form JSON object (documented as `type: object`).
pub type JsonObject = HashMap<String, Value>;

// ---------------------------------------------------------------------------------------
// /v1: send, track, verify
// ---------------------------------------------------------------------------------------

/// Body of `POST /v1/send`.
#[derive(ToSchema)]
#[schema(example = json!({
    "to": ["ada@example.org", {"name": "Grace", "email": "grace@example.org"}],
    "from": "Acme <hello@acme.com>",
    "subject": "Welcome, {{name}}",
    "body": "<p>Hello {{name}}</p>",
    "data": {"name": "friend"}
}))]
pub struct SendRequest {
    /// One recipient or a list of 1 to 50 (duplicates are sent once).
    pub to: Recipients,
    /// Sender on a verified domain of the workspace; required unless the template has one.
    pub from: Option<MailboxInput>,
    /// Subject; required when no template is given. At most 998 characters.
    #[schema(max_length = 998)]
    pub subject: Option<String>,
    /// HTML body; required when no template is given.
    pub body: Option<String>,
    /// Plain-text part: omitted = generated from `body`; `""` = no text part.
    pub text: Option<String>,
    /// Template id; supplies subject, body, from and reply-to unless given here.
    pub template: Option<String>,
    /// Sender display name (overrides `from.name`).
    #[schema(max_length = 256)]
    pub name: Option<String>,
    /// Subscription flag to set on the recipients' contacts; new contacts default to false.
    pub subscribed: Option<bool>,
    /// Template variables.
    #[schema(value_type = Option<Object>)]
    pub data: Option<JsonObject>,
    /// Custom headers (name to value); CR/LF and headers Posthorn sets are refused.
    pub headers: Option<HashMap<String, String>>,
    /// Reply-To address.
    #[schema(format = Email)]
    pub reply: Option<String>,
    /// At most 10 attachments, 10 MB decoded in total.
    #[schema(max_items = 10)]
    pub attachments: Option<Vec<Attachment>>,
    /// `false` turns open and click tracking off for this send (default on).
    pub tracking: Option<bool>,
}

/// `to`: one recipient or an array of 1 to 50 (schema written by hand for the array bounds).
pub struct Recipients;

impl utoipa::PartialSchema for Recipients {
    fn schema() -> RefOr<Schema> {
        let one = || Ref::from_schema_name("MailboxInput");
        OneOf::builder()
            .item(one())
            .item(
                ArrayBuilder::new()
                    .items(one())
                    .min_items(Some(1))
                    .max_items(Some(MAX_RECIPIENTS)),
            )
            .description(Some(
                "One recipient, or an array of 1 to 50 (duplicates are sent once).",
            ))
            .into()
    }
}

impl ToSchema for Recipients {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((MailboxInput::name().into(), MailboxInput::schema()));
        MailboxInput::schemas(schemas);
    }
}

/// A mailbox: `address`, `Display Name <address>`, or `{name, email}`.
#[derive(ToSchema)]
#[serde(untagged)]
pub enum MailboxInput {
    /// `address` or `Display Name <address>`.
    #[schema(example = "Ada Lovelace <ada@example.org>")]
    Address(String),
    /// A mailbox object.
    Named(NamedMailbox),
}

/// A mailbox as an object.
#[derive(ToSchema)]
pub struct NamedMailbox {
    /// Display name.
    #[schema(max_length = 256)]
    pub name: Option<String>,
    /// Address.
    #[schema(format = Email)]
    pub email: String,
}

/// Whether an attachment is a download or is shown inline.
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Disposition {
    /// A downloadable file (default).
    Attachment,
    /// Shown inline, referenced as `cid:<contentId>` from the HTML.
    Inline,
}

/// A file attached to a sent email.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    /// File name shown to the recipient.
    #[schema(max_length = 255)]
    pub filename: String,
    /// File content, base64 encoded.
    #[schema(content_encoding = "base64")]
    pub content: String,
    /// MIME type; default `application/octet-stream`.
    #[schema(max_length = 255, example = "application/pdf")]
    pub content_type: Option<String>,
    /// Content-ID; required for inline attachments.
    #[schema(max_length = 255)]
    pub content_id: Option<String>,
    /// `attachment` (default) or `inline`.
    pub disposition: Option<Disposition>,
}

/// `{success: true, data}` of `POST /v1/send`.
#[derive(ToSchema)]
pub struct SendResponse {
    /// Always `true`.
    pub success: bool,
    /// What was accepted.
    pub data: SendResult,
}

/// The accepted emails.
#[derive(ToSchema)]
pub struct SendResult {
    /// One entry per distinct recipient, in request order.
    pub emails: Vec<SentEmail>,
    /// When the request was accepted.
    pub timestamp: DateTime<Utc>,
}

/// One accepted recipient.
#[derive(ToSchema)]
pub struct SentEmail {
    /// The recipient's contact.
    pub contact: ContactRef,
    /// Email record id (the `emailId` of later events).
    pub email: String,
}

/// A contact's id and address.
#[derive(ToSchema)]
pub struct ContactRef {
    /// Contact id.
    pub id: String,
    /// Contact address.
    #[schema(format = Email)]
    pub email: String,
}

// ---------------------------------------------------------------------------------------
// Contacts
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Keys, workspaces, domains
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// System
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// Request rules the derive cannot spell
// ---------------------------------------------------------------------------------------

/// Control characters (Unicode `Cc`): what `char::is_control` refuses.
const CONTROL: &str = r"\u0000-\u001F\u007F-\u009F";
/// Control characters other than tab: what single-line fields refuse.
const CONTROL_BUT_TAB: &str = r"\u0000-\u0008\u000A-\u001F\u007F-\u009F";
/// The local part of an address: at most 64 atom characters and dots, no dot first or last
/// (and, by the lookahead in [`Rule::constraints`], no two dots in a row).
const LOCAL_PART: &str = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]([A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{0,62}[A-Za-z0-9!#$%&'*+/=?^_`{|}~-])?";
/// One domain label: letters, digits and inner hyphens, 1 to 63 characters.
const LABEL: &str = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";

/// What a request field must look like beyond its type, as the use cases check it.
#[derive(Clone, Copy)]
enum Rule {
    /// One line: no control characters other than tab (may be empty).
    Line,
    /// One line with at least one character that is not white space.
    FilledLine,
    /// Any text with at least one character that is not white space.
    Filled,
    /// An email address: dot-atom local part, a domain of two labels or more.
    Email,
    /// `address` or `Display Name <address>`, no control characters.
    Mailbox,
    /// A custom event name: not blank, no control characters.
    EventName,
    /// A domain name of two labels or more.
    DomainName,
    /// An RFC 3339 date-time (`T` separator, `Z` or a numeric offset).
    DateTime,
    /// Canonical standard base64 with padding, at least one byte.
    Base64,
}

impl Rule {
    /// The pattern, and the least and most characters.
    fn constraints(self) -> (String, Option<usize>, Option<usize>) {
        let email = format!(r"(?![^@<]*\.\.){LOCAL_PART}@({LABEL}\.)+[A-Za-z]{{2,63}}");
        match self {
            Rule::Line => (format!("^[^{CONTROL_BUT_TAB}]*$"), None, None),
            Rule::FilledLine => (
                format!(
                    r"^[^{CONTROL_BUT_TAB}]*[^\s{CONTROL}][^{CONTROL_BUT_TAB}]*$"
                ),
                Some(1),
                None,
            ),
            Rule::Filled => (r"\S".to_string(), Some(1), None),
            Rule::Email => (format!("^{email}$"), Some(3), Some(254)),
            Rule::Mailbox => (
                format!("^({email}|[^{CONTROL}<>]*<{email}>)$"),
                Some(3),
                None,
            ),
            Rule::EventName => (
                format!(r"^[^{CONTROL}]*[^\s{CONTROL}][^{CONTROL}]*$"),
                Some(1),
                None,
            ),
            Rule::DomainName => (
                format!(r"^({LABEL}\.)+{LABEL}$"),
                Some(3),
                Some(253),
            ),
            Rule::DateTime => (
                concat!(
                    r"^\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\d|3[01])|(0[469]|11)-(0[1-9]|[12]\d|30)",
                    r"|02-(0[1-9]|1\d|2[0-8]))T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?",
                    r"(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$"
                )
                .to_string(),
                Some(20),
                None,
            ),
            Rule::Base64 => (
                concat!(
                    r"^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{4}|[A-Za-z0-9+/][AQgw]==",
                    r"|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)$"
                )
                .to_string(),
                Some(4),
                None,
            ),
        }
    }

    /// Adds the rule to a string schema (or to the string branch of a nullable one).
    fn apply(self, schema: &mut Schema) {
        match schema {
            Schema::Object(object) => {
                let (pattern, min, max) = self.constraints();
                object.pattern = Some(pattern);
                if min.is_some() {
                    object.min_length = min;
                }
                if let (Some(max), current) = (max, &mut object.max_length) {
                    *current = Some(current.map_or(max, |c| c.min(max)));
                }
            }
            Schema::Array(array) => {
                if let utoipa::openapi::schema::ArrayItems::RefOrSchema(items) = &mut array.items {
                    if let RefOr::T(item) = items.as_mut() {
                        self.apply(item);
                    }
                }
            }
            Schema::OneOf(one_of) => {
                for item in &mut one_of.items {
                    if let RefOr::T(item @ Schema::Object(_)) = item {
                        if is_string(item) {
                            self.apply(item);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

fn is_string(schema: &Schema) -> bool {
    match schema {
        Schema::Object(o) => match &o.schema_type {
            SchemaType::Type(Type::String) => true,
            SchemaType::Array(types) => types.contains(&Type::String),
            _ => false,
        },
        _ => false,
    }
}

/// Every (schema, property, rule) of the request bodies. Fields the use cases check only for
/// their type (free text such as `body` on updates or `text`) are not listed.
const REQUEST_RULES: &[(&str, &str, Rule)] = &[
    ("SendRequest", "subject", Rule::Line),
    ("SendRequest", "name", Rule::Line),
    ("SendRequest", "reply", Rule::Email),
    ("NamedMailbox", "name", Rule::Line),
    ("NamedMailbox", "email", Rule::Email),
    ("MailboxInput", "", Rule::Mailbox),
    ("Attachment", "filename", Rule::FilledLine),
    ("Attachment", "content", Rule::Base64),
    ("Attachment", "contentType", Rule::Line),
    ("Attachment", "contentId", Rule::Line),
];

/// Adds [`REQUEST_RULES`] to the component schemas: patterns for what the derive attributes
/// cannot say (no line breaks, not blank, address and domain syntax, base64, RFC 3339).
pub struct RequestRules;

impl utoipa::Modify for RequestRules {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let Some(components) = openapi.components.as_mut() else {
            return;
        };
        for (schema_name, property, rule) in REQUEST_RULES {
            let Some(RefOr::T(schema)) = components.schemas.get_mut(*schema_name) else {
                panic!("REQUEST_RULES names {schema_name}, which is not a component");
            };
            if property.is_empty() {
                rule.apply(schema);
                continue;
            }
            let Schema::Object(object) = schema else {
                panic!("{schema_name} is not an object schema");
            };
            match object.properties.get_mut(*property) {
                Some(RefOr::T(field)) => rule.apply(field),
                _ => panic!("{schema_name}.{property} is not an inline property"),
            }
        }
        if let Some(RefOr::T(Schema::Object(send))) = components.schemas.get_mut("SendRequest") {
            if let Some(RefOr::T(Schema::Object(headers))) = send.properties.get_mut("headers") {
                headers.property_names = Some(Box::new(header_names()));
                if let Some(utoipa::openapi::schema::AdditionalProperties::RefOr(RefOr::T(value))) =
                    headers.additional_properties.as_deref_mut()
                {
                    Rule::Line.apply(value);
                    if let Schema::Object(value) = value {
                        value.max_length = Some(2000);
                    }
                }
            }
        }
    }
}

/// Header names a caller may set: printable ASCII without `:` or space, at most 76
/// characters, none of the headers Posthorn writes (any case).
fn header_names() -> Schema {
    let reserved: Vec<String> = posthorn_core::app::send::RESERVED_HEADERS
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
        .description(Some(
            "Printable ASCII without `:` or space, at most 76 characters; not one Posthorn sets \
             (From, To, Cc, Bcc, Subject, Date, Message-ID, Reply-To, Sender, MIME-Version, \
             Content-Type, Content-Transfer-Encoding, Return-Path, Content-Disposition, \
             X-Posthorn-Email-Id).",
        ))
        .into()
}
