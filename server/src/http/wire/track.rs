//! `POST /v1/track` and `POST /v1/verify`: bodies into their typed commands, and answers.

use deserr::Deserr;
use posthorn_core::app::track::{TrackEvent, Tracked};
use posthorn_core::app::verify::{Verify, MAX_VERIFY_BYTES};
use posthorn_core::model::{timestamp, ContactId, EventId};
use serde::Serialize;
use utoipa::ToSchema;

use super::de::{Email, Event, Filled, JsonObject, WireErrors};

/// Body of `POST /v1/track`.
#[derive(Debug, PartialEq, Deserr, ToSchema)]
#[deserr(error = WireErrors)]
#[schema(as = TrackRequest)]
#[schema(example = json!({"email": "ada@example.org", "event": "signup", "data": {"plan": "pro"}}))]
pub struct TrackBody {
    /// The contact's address; the contact is created when missing.
    #[schema(inline)]
    pub email: Filled<Email>,
    /// The custom event's name.
    #[schema(inline)]
    pub event: Filled<Event>,
    /// Subscription flag; a new contact defaults to true, an existing one is left alone.
    #[deserr(default)]
    pub subscribed: Option<bool>,
    /// Event data; also merged into the contact's data (a `null` value removes that key).
    #[deserr(default)]
    #[schema(inline)]
    pub data: Option<JsonObject>,
}

impl From<TrackBody> for TrackEvent {
    fn from(body: TrackBody) -> Self {
        TrackEvent {
            email: body.email.0 .0,
            event: body.event.0 .0,
            subscribed: body.subscribed,
            data: body.data.map(|d| d.0),
        }
    }
}

/// The tracked event.
#[derive(Debug, Serialize, ToSchema)]
pub struct TrackResult {
    /// Contact id.
    pub contact: ContactId,
    /// Event id.
    pub event: EventId,
    /// When the event was recorded (RFC 3339, UTC, milliseconds).
    #[schema(format = DateTime)]
    pub timestamp: String,
}

impl From<Tracked> for TrackResult {
    fn from(t: Tracked) -> Self {
        TrackResult {
            contact: t.contact_id,
            event: t.event_id,
            timestamp: timestamp::format(&t.at),
        }
    }
}

/// Body of `POST /v1/verify`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors)]
#[schema(as = VerifyRequest)]
pub struct VerifyBody {
    /// The address to check (a malformed one is answered with `valid: false`).
    #[schema(schema_with = verify_email_schema)]
    #[schema(inline)]
    pub email: Filled<String>,
}

impl From<VerifyBody> for Verify {
    fn from(body: VerifyBody) -> Self {
        Verify {
            email: body.email.0,
        }
    }
}

/// A non-blank string of at most [`MAX_VERIFY_BYTES`] (bytes, which the schema can only
/// bound as characters).
fn verify_email_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(MAX_VERIFY_BYTES))
        .pattern(Some(r"\S"))
        .description(Some(format!(
            "At most {MAX_VERIFY_BYTES} bytes in UTF-8; not only white space."
        )))
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::wire::de::parse;
    use posthorn_core::Error;
    use serde_json::json;

    fn errors<T: Deserr<WireErrors> + utoipa::PartialSchema + std::fmt::Debug>(
        body: serde_json::Value,
    ) -> Vec<(String, String, String)> {
        match parse::<T>(body) {
            Err(Error::Validation(errors)) => errors
                .into_iter()
                .map(|e| (e.field, e.code, e.message))
                .collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    fn e(field: &str, code: &str, message: &str) -> (String, String, String) {
        (field.into(), code.into(), message.into())
    }

    #[test]
    fn every_field_is_reported_in_declaration_order_whatever_the_body_order() {
        let got = errors::<TrackBody>(json!({"data": 3, "subscribed": "yes", "email": "nope"}));
        assert_eq!(
            got,
            [
                e(
                    "email",
                    "invalid_email",
                    "'nope' is not a valid email address"
                ),
                e("event", "required", "event is required"),
                e(
                    "subscribed",
                    "invalid_type",
                    "subscribed must be a boolean, got string"
                ),
                e("data", "invalid_type", "data must be an object, got number"),
            ]
        );
    }

    #[test]
    fn null_reads_as_absent_and_blank_as_empty() {
        let got = errors::<TrackBody>(json!({"email": null, "event": "  ", "data": null}));
        assert_eq!(
            got,
            [
                e("email", "required", "email is required"),
                e("event", "required", "event must not be empty"),
            ]
        );
        let got = errors::<TrackBody>(json!({"email": "a@example.org", "event": "email.sent"}));
        assert_eq!(got[0].0, "event");
        assert_eq!(got[0].1, "invalid_event");
        assert_eq!(
            errors::<VerifyBody>(json!([1])),
            [e(
                "body",
                "invalid_type",
                "Request body must be a JSON object, got array"
            )]
        );
    }

    #[test]
    fn a_valid_body_becomes_the_command() {
        let body: TrackBody = parse(json!({"email": " Ada@Example.org ", "event": "signup",
            "subscribed": false, "data": {"plan": "pro"}, "extra": 1}))
        .expect("valid");
        let cmd = TrackEvent::from(body);
        assert_eq!(cmd.email.as_str(), "ada@example.org");
        assert_eq!(cmd.event.as_str(), "signup");
        assert_eq!(cmd.subscribed, Some(false));
        assert_eq!(cmd.data, json!({"plan": "pro"}).as_object().cloned());
    }
}
