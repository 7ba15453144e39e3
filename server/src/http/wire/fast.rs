//! The fast read of the hottest bodies: a well-formed body read straight into its wire type
//! with serde, without first building the JSON value tree that deserr walks.
//!
//! The fast read only ever answers a body that deserr would read into the same value
//! (the property test below holds it to that); anything it does not accept (a missing or
//! wrong-typed field, a repeated key, an invalid address, ...) is read again by deserr,
//! which reports every failing field. So clients see the same answers either way.

use std::borrow::Cow;

use posthorn_core::model::{EmailAddress, EventName};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::de::{Email, Event, Filled, JsonObject};
use super::track::TrackBody;

/// A wire type with a serde read for well-formed bodies.
pub trait ReadFast: Sized {
    /// The value of `bytes` (a non-empty JSON body without the escape `\u0000`), or
    /// `None` to leave the body to deserr.
    fn read_fast(bytes: &[u8]) -> Option<Self>;
}

/// Whether the JSON text starts an object: serde would also read a struct from an array,
/// which deserr refuses.
fn is_object(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .is_some_and(|b| *b == b'{')
}

/// A text deserr's `Filled` accepts: not blank.
fn filled(text: Cow<'_, str>) -> Option<Cow<'_, str>> {
    (!text.trim().is_empty()).then_some(text)
}

impl ReadFast for TrackBody {
    fn read_fast(bytes: &[u8]) -> Option<Self> {
        // Unknown keys are ignored, as deserr does for this body; `null` for `email` or
        // `event` fails here (deserr reports it as missing).
        #[derive(Deserialize)]
        struct Shape<'a> {
            #[serde(borrow)]
            email: Cow<'a, str>,
            #[serde(borrow)]
            event: Cow<'a, str>,
            #[serde(default)]
            subscribed: Option<bool>,
            #[serde(default)]
            data: Option<Map<String, Value>>,
        }
        if !is_object(bytes) {
            return None;
        }
        let shape: Shape = serde_json::from_slice(bytes).ok()?;
        let email = EmailAddress::parse(&filled(shape.email)?).ok()?;
        let event = EventName::parse_custom(&filled(shape.event)?).ok()?;
        Some(TrackBody {
            email: Filled(Email(email)),
            event: Filled(Event(event)),
            subscribed: shape.subscribed,
            data: shape.data.map(JsonObject),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::wire::de::parse;
    use proptest::prelude::*;

    /// What deserr reads from the same bytes, when they are JSON at all.
    fn by_deserr(bytes: &[u8]) -> Option<TrackBody> {
        let value: Value = serde_json::from_slice(bytes).ok()?;
        parse::<TrackBody>(value).ok()
    }

    fn json_value() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            Just("3".to_string()),
            Just("-1.5e3".to_string()),
            Just("[]".to_string()),
            Just(r#"[1,"a"]"#.to_string()),
            Just("{}".to_string()),
            Just(r#"{"plan":"pro","n":null,"deep":{"a":[1]}}"#.to_string()),
            Just(r#""""#.to_string()),
            Just(r#""  ""#.to_string()),
            Just(r#""signup""#.to_string()),
            Just(r#""email.sent""#.to_string()),
            Just(r#""sign\nup""#.to_string()),
            Just(r#""Ada@Example.org""#.to_string()),
            Just(r#"" ada@example.org ""#.to_string()),
            Just(r#""ad\u0061@example.org""#.to_string()),
            Just(r#""nope""#.to_string()),
            "[a-z@. ]{0,12}".prop_map(|s| format!("{s:?}")),
        ]
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("email"),
            Just("event"),
            Just("subscribed"),
            Just("data"),
            Just("extra"),
            Just(r"em\u0061il"),
        ]
        .prop_map(str::to_string)
    }

    fn body() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => prop::collection::vec((key(), json_value()), 0..6).prop_map(|pairs| {
                let fields: Vec<String> =
                    pairs.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
                format!(" {{{}}}", fields.join(","))
            }),
            1 => prop::collection::vec(json_value(), 0..5)
                .prop_map(|items| format!("[{}]", items.join(","))),
            1 => (json_value(), json_value()).prop_map(|(a, b)| format!("[{a},{b}]")),
            1 => json_value(),
            1 => "[ -~]{0,40}",
        ]
    }

    proptest! {
        #[test]
        fn the_fast_read_answers_only_what_deserr_reads_the_same(body in body()) {
            if let Some(fast) = TrackBody::read_fast(body.as_bytes()) {
                prop_assert_eq!(Some(fast), by_deserr(body.as_bytes()));
            }
        }
    }

    #[test]
    fn a_well_formed_body_is_read_fast() {
        let body = br#"{"email":" Ada@Example.org ","event":"signup","subscribed":false,
            "data":{"plan":"pro"},"extra":[1]}"#;
        let fast = TrackBody::read_fast(body).expect("read fast");
        assert_eq!(Some(&fast), by_deserr(body).as_ref());
        assert_eq!(fast.email.0 .0.as_str(), "ada@example.org");
        let bare = br#"{"email":"ada@example.org","event":"signup"}"#;
        assert!(TrackBody::read_fast(bare).is_some());
    }

    #[test]
    fn bodies_deserr_refuses_or_reads_otherwise_are_left_to_it() {
        for body in [
            &br#"["ada@example.org","signup"]"#[..],
            br#"{"email":null,"event":"signup"}"#,
            br#"{"email":"ada@example.org","event":"  "}"#,
            br#"{"email":"ada@example.org","event":"email.sent"}"#,
            br#"{"email":"nope","event":"signup"}"#,
            br#"{"email":"ada@example.org","event":"signup","data":[]}"#,
            br#"{"email":"x@example.org","email":"ada@example.org","event":"signup"}"#,
        ] {
            assert!(
                TrackBody::read_fast(body).is_none(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
