//! Mailboxes of `POST /v1/send`: `to` (one recipient or 1 to 50) and `from`, each an
//! `address`, `Display Name <address>` or `{name, email}`.

use deserr::{Deserr, IntoValue, Value as DValue, ValueKind, ValuePointerRef};
use posthorn_core::app::send::{recipients_problem, Recipient, MAX_NAME_CHARS, MAX_RECIPIENTS};
use posthorn_core::model::{EmailAddress, EMAIL_PATTERN};
use posthorn_core::validate::type_name;
use serde_json::Value;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::de::{in_declared_order, Email, Filled, Line, WireErrors};

type Name = Line<MAX_NAME_CHARS>;

/// A mailbox given as an object.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors)]
pub struct NamedMailbox {
    /// Display name.
    #[deserr(default)]
    #[schema(inline)]
    pub name: Option<Name>,
    /// Address.
    #[schema(inline)]
    pub email: Filled<Email>,
}

/// A mailbox: `address`, `Display Name <address>`, or `{name, email}` (a recipient of `to`).
#[derive(Debug, Clone, PartialEq)]
pub struct Mailbox {
    /// The address.
    pub email: EmailAddress,
    /// The display name, when one is given.
    pub name: Option<String>,
}

impl Mailbox {
    /// Reads a mailbox at `location`; `what` names it in the wrong-type message.
    fn read<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
        what: &str,
    ) -> Result<Self, WireErrors> {
        match value {
            DValue::String(raw) => {
                parse_mailbox_string(&raw, location).map(|(email, name)| Mailbox { email, name })
            }
            DValue::Map(_) => NamedMailbox::deserialize_from_value(value, location)
                .map(|m| Mailbox {
                    email: m.email.0 .0,
                    name: m.name.map(|n| n.0),
                })
                .map_err(|e| in_declared_order::<NamedMailbox>(e, location)),
            other => Err(WireErrors::at(
                location,
                "invalid_type",
                format!(
                    "{what} must be a string or {{name, email}}, got {}",
                    type_name(&Value::from(other))
                ),
            )),
        }
    }
}

impl Deserr<WireErrors> for Mailbox {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        Mailbox::read(value, location, "a recipient")
    }
}

impl PartialSchema for Mailbox {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(3))
                    .pattern(Some(mailbox_pattern()))
                    .description(Some("`address` or `Display Name <address>`."))
                    .examples([serde_json::json!("Ada Lovelace <ada@example.org>")]),
            )
            .item(NamedMailbox::schema())
            .into()
    }
}

impl ToSchema for Mailbox {}

/// The sender (`from`): a [`Mailbox`].
#[derive(Debug, Clone, PartialEq)]
pub struct Sender(pub Mailbox);

impl Deserr<WireErrors> for Sender {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        Mailbox::read(value, location, "from").map(Sender)
    }
}

impl PartialSchema for Sender {
    fn schema() -> RefOr<Schema> {
        Mailbox::schema()
    }
}

impl ToSchema for Sender {}

/// White space that `str::trim` removes and that is not a control character (an address
/// with a control character is refused).
const SPACE: &str = r"[ \u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]";

/// An address (core's `EMAIL_PATTERN`) or `Display Name <address>`, with no control
/// characters anywhere.
fn mailbox_pattern() -> String {
    let address = EMAIL_PATTERN
        .strip_prefix(r"^\s*")
        .and_then(|p| p.strip_suffix(r"\s*$"))
        .unwrap_or(EMAIL_PATTERN)
        .replace(r"\s", SPACE);
    format!(
        r"^({SPACE}*{address}{SPACE}*|[^\u0000-\u001F\u007F-\u009F<>]*<{SPACE}*{address}{SPACE}*>{SPACE}*)$"
    )
}

/// Parses `addr` or `Display Name <addr>` found at `location`.
pub fn parse_mailbox_string(
    raw: &str,
    location: ValuePointerRef,
) -> Result<(EmailAddress, Option<String>), WireErrors> {
    if raw.chars().any(|ch| ch.is_control()) {
        return Err(WireErrors::at(
            location,
            "invalid_characters",
            "address must not contain line breaks",
        ));
    }
    let email = |addr: &str| {
        EmailAddress::parse(addr)
            .map_err(|e| WireErrors::at(location, "invalid_email", e.to_string()))
    };
    let trimmed = raw.trim();
    if let (Some(open), true) = (trimmed.rfind('<'), trimmed.ends_with('>')) {
        let name = trimmed[..open].trim().trim_matches('"').trim();
        let address = email(&trimmed[open + 1..trimmed.len() - 1])?;
        return Ok((address, (!name.is_empty()).then(|| name.to_string())));
    }
    email(trimmed).map(|e| (e, None))
}

/// `to`: one recipient or an array of 1 to [`MAX_RECIPIENTS`]; duplicates are sent once.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipients(pub Vec<Recipient>);

impl Deserr<WireErrors> for Recipients {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let mut errors = WireErrors::default();
        let mut found = Vec::new();
        match value {
            DValue::Null => {
                return Err(WireErrors::wrong_kind(
                    location,
                    ValueKind::Null,
                    &[ValueKind::Sequence],
                ))
            }
            DValue::Sequence(items) => {
                let items: Vec<V> = deserr::Sequence::into_iter(items).collect();
                match recipients_problem(items.len()) {
                    Some((code, message)) if code == "too_many" => {
                        return Err(WireErrors::at(location, code, message))
                    }
                    Some((code, message)) => {
                        errors.0.push(WireErrors::field(location, code, message))
                    }
                    None => {}
                }
                for (i, item) in items.into_iter().enumerate() {
                    let at = location.push_index(i);
                    match Mailbox::deserialize_from_value(item.into_value(), at) {
                        Ok(m) => found.push(m),
                        Err(e) => errors.extend(e),
                    }
                }
            }
            single => match Mailbox::deserialize_from_value(single, location) {
                Ok(m) => found.push(m),
                Err(e) => errors.extend(e),
            },
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut out: Vec<Recipient> = Vec::new();
        for m in found {
            if !out.iter().any(|seen| seen.email == m.email) {
                out.push(Recipient {
                    email: m.email,
                    name: m.name,
                });
            }
        }
        Ok(Recipients(out))
    }
}

impl PartialSchema for Recipients {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(Mailbox::schema())
            .item(
                ArrayBuilder::new()
                    .items(Mailbox::schema())
                    .min_items(Some(1))
                    .max_items(Some(MAX_RECIPIENTS)),
            )
            .description(Some(format!(
                "One recipient, or an array of 1 to {MAX_RECIPIENTS} (duplicates are sent once)."
            )))
            .into()
    }
}

impl ToSchema for Recipients {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_mailbox_pattern_is_built_from_the_address_pattern() {
        let pattern = mailbox_pattern();
        assert!(pattern.starts_with("^("), "{pattern}");
        assert!(!pattern.contains(r"^\s*"), "{pattern}");
        assert!(pattern.contains("(?=[^@]{1,64}@)"), "{pattern}");
    }

    proptest! {
        #[test]
        fn mailbox_strings_never_panic(raw in "\\PC{0,80}") {
            let _ = parse_mailbox_string(&raw, ValuePointerRef::Origin);
        }

        #[test]
        fn display_names_round_trip(name in "[A-Za-z][A-Za-z ]{0,20}[A-Za-z]", local in "[a-z]{1,10}") {
            let raw = format!("{name} <{local}@example.com>");
            let (email, parsed) = parse_mailbox_string(&raw, ValuePointerRef::Origin).expect("valid");
            prop_assert_eq!(email.as_str(), format!("{local}@example.com"));
            prop_assert_eq!(parsed, Some(name.trim().to_string()));
        }
    }
}
