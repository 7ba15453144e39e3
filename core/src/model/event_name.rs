//! `EventName`: the name of a custom event a client may track.

use serde::Serialize;
use std::fmt;

/// A custom event name: 1 to 255 printable characters, not reserved for the service.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct EventName(String);

/// Why a string cannot be tracked as an event name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventNameError {
    /// Empty after trimming.
    #[error("event name is empty")]
    Empty,
    /// Over 255 characters.
    #[error("event name is longer than 255 characters")]
    TooLong,
    /// Contains control characters.
    #[error("event name contains control characters")]
    ControlCharacters,
    /// One of the names the service emits itself.
    #[error("'{0}' is reserved for events emitted by Posthorn")]
    Reserved(String),
}

impl EventName {
    /// Most characters of a name, after trimming.
    pub const MAX_CHARS: usize = 255;

    /// Parses a name a client wants to track (trimmed; internal names refused).
    pub fn parse_custom(raw: &str) -> Result<Self, EventNameError> {
        let name = raw.trim();
        if name.is_empty() {
            return Err(EventNameError::Empty);
        }
        if name.chars().count() > Self::MAX_CHARS {
            return Err(EventNameError::TooLong);
        }
        if name.chars().any(char::is_control) {
            return Err(EventNameError::ControlCharacters);
        }
        if is_reserved(name) {
            return Err(EventNameError::Reserved(name.to_string()));
        }
        Ok(Self(name.to_string()))
    }

    /// The name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for EventName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            // Surrounding white space is trimmed before the length is counted.
            .pattern(Some(r"^\s*[^\s\u0000-\u001F\u007F-\u009F]([^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F])?\s*$"))
            .description(Some(format!(
                "A custom event name: 1 to {} characters after trimming, no control characters; \
                 names Posthorn emits (`email.*`, `contact.subscribed`, `contact.unsubscribed`, \
                 `segment.*.entry`, `segment.*.exit`) are refused.",
                Self::MAX_CHARS
            )))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for EventName {}

/// Whether `name` belongs to the service: `email.*`, `contact.subscribed`,
/// `contact.unsubscribed`, `segment.*.entry`, `segment.*.exit`.
pub fn is_reserved(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("email.")
        || lower == "contact.subscribed"
        || lower == "contact.unsubscribed"
        || (lower.starts_with("segment.")
            && (lower.ends_with(".entry") || lower.ends_with(".exit")))
}

impl fmt::Display for EventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn refuses_internal_names() {
        for name in [
            "email.sent",
            "EMAIL.open",
            "contact.subscribed",
            "contact.unsubscribed",
            "segment.vip.entry",
            "segment.vip.exit",
        ] {
            assert!(matches!(
                EventName::parse_custom(name),
                Err(EventNameError::Reserved(_))
            ));
        }
    }

    #[test]
    fn accepts_custom_names() {
        for name in [
            "signup",
            "order.placed",
            "contact.created",
            "segment.viewed",
        ] {
            assert_eq!(EventName::parse_custom(name).expect("valid").as_str(), name);
        }
    }

    proptest! {
        #[test]
        fn parse_never_panics(raw in "\\PC{0,300}") {
            let _ = EventName::parse_custom(&raw);
        }
    }
}
