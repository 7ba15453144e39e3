//! Reading request bodies and query strings into wire types with `deserr`, collecting every
//! failing field at once with the paths, codes and messages clients rely on (`to.3.email`,
//! `required`, `invalid_type`, ...).
//!
//! [`WireErrors`] is deserr's error type; the building blocks below ([`Filled`], [`Email`],
//! [`Event`], [`JsonObject`], [`Nullable`], [`QueryInt`], [`QueryBool`]) carry the rules of
//! one field each and describe themselves with `utoipa::PartialSchema`, so the document
//! states what the check enforces.

use std::ops::ControlFlow;

use deserr::{DeserializeError, Deserr, ErrorKind, IntoValue, MergeWithError, ValueKind};
use deserr::{Value as DValue, ValuePointerRef};
use posthorn_core::model::{EmailAddress, EventName};
use posthorn_core::validate::line_problem;
use posthorn_core::{Error, FieldError};
use serde_json::{Map, Value};
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::PartialSchema;

/// Every failing field of one request, in the order deserr met them: first the checks of
/// each field on its own, then the late ones (template syntax) that the Checker ran after
/// every field.
#[derive(Debug, Default)]
pub struct WireErrors(pub Vec<FieldError>, pub Vec<FieldError>);

/// The dot path of a location (`to.3.email`); empty at the root.
pub fn path_of(location: ValuePointerRef) -> String {
    let mut parts = Vec::new();
    let mut at = location;
    loop {
        match at {
            ValuePointerRef::Origin => break,
            ValuePointerRef::Key { key, prev } => {
                parts.push(key.to_string());
                at = *prev;
            }
            ValuePointerRef::Index { index, prev } => {
                parts.push(index.to_string());
                at = *prev;
            }
        }
    }
    parts.reverse();
    parts.join(".")
}

/// The name a message uses for the field at `location`: its key (the index for an item).
fn key_of(location: ValuePointerRef) -> String {
    match location {
        ValuePointerRef::Origin => "body".to_string(),
        ValuePointerRef::Key { key, .. } => key.to_string(),
        ValuePointerRef::Index { index, .. } => index.to_string(),
    }
}

/// The JSON type name of a value, as messages spell it.
fn kind_name(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Null => "null",
        ValueKind::Boolean => "boolean",
        ValueKind::Integer | ValueKind::NegativeInteger | ValueKind::Float => "number",
        ValueKind::String => "string",
        ValueKind::Sequence => "array",
        ValueKind::Map => "object",
    }
}

/// "a string", "an object", ... for the first accepted kind.
fn expected(accepted: &[ValueKind]) -> &'static str {
    match accepted.first() {
        Some(ValueKind::Boolean) => "a boolean",
        Some(ValueKind::String) => "a string",
        Some(ValueKind::Map) => "an object",
        Some(ValueKind::Sequence) => "an array",
        Some(ValueKind::Integer | ValueKind::NegativeInteger) => "an integer",
        Some(ValueKind::Float) => "a number",
        Some(ValueKind::Null) | None => "null",
    }
}

impl WireErrors {
    /// One failing field at `location`.
    pub fn at(location: ValuePointerRef, code: &str, message: impl Into<String>) -> Self {
        Self(
            vec![FieldError::new(path_of(location), code, message)],
            Vec::new(),
        )
    }

    /// The error of the field at `location` (to collect several into one [`WireErrors`]).
    pub fn field(location: ValuePointerRef, code: &str, message: impl Into<String>) -> FieldError {
        FieldError::new(path_of(location), code, message)
    }

    /// Whether no field failed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty() && self.1.is_empty()
    }

    /// Adds the errors of `other`, each to its part.
    pub fn extend(&mut self, other: WireErrors) {
        self.0.extend(other.0);
        self.1.extend(other.1);
    }

    /// One failing field at `location`, reported after the checks of every field.
    pub fn late(location: ValuePointerRef, code: &str, message: impl Into<String>) -> Self {
        Self(
            Vec::new(),
            vec![FieldError::new(path_of(location), code, message)],
        )
    }

    /// The wrong-type error of the value at `location`, as the Checker words it; `null` where
    /// a value is needed reads as missing.
    pub fn wrong_kind(
        location: ValuePointerRef,
        actual: ValueKind,
        accepted: &[ValueKind],
    ) -> Self {
        let key = key_of(location);
        match (location, actual) {
            (ValuePointerRef::Origin, _) => Self(
                vec![FieldError::new(
                    "body",
                    "invalid_type",
                    format!(
                        "Request body must be a JSON object, got {}",
                        kind_name(actual)
                    ),
                )],
                Vec::new(),
            ),
            (_, ValueKind::Null) => Self::at(location, "required", format!("{key} is required")),
            _ => Self::at(
                location,
                "invalid_type",
                format!(
                    "{key} must be {}, got {}",
                    expected(accepted),
                    kind_name(actual)
                ),
            ),
        }
    }

    /// The validation error listing every field, ordered as the fields of `T` are declared
    /// (deserr meets present fields in the order the client wrote them).
    pub fn into_error<T: PartialSchema>(self) -> Error {
        Error::Validation(self.ordered(&declared_fields::<T>()))
    }

    /// Every error, the late ones last, each part in the order of `order` (top-level keys).
    fn ordered(self, order: &[String]) -> Vec<FieldError> {
        let rank = |e: &FieldError| {
            let top = e.field.split('.').next().unwrap_or_default();
            order.iter().position(|p| p == top).unwrap_or(order.len())
        };
        let (mut errors, mut late) = (self.0, self.1);
        errors.sort_by_key(rank);
        late.sort_by_key(rank);
        errors.extend(late);
        errors
    }
}

impl MergeWithError<WireErrors> for WireErrors {
    fn merge(
        self_: Option<Self>,
        other: WireErrors,
        _merge_location: ValuePointerRef,
    ) -> ControlFlow<Self, Self> {
        let mut all = self_.unwrap_or_default();
        all.0.extend(other.0);
        all.1.extend(other.1);
        ControlFlow::Continue(all)
    }
}

impl DeserializeError for WireErrors {
    fn error<V: IntoValue>(
        self_: Option<Self>,
        error: ErrorKind<V>,
        location: ValuePointerRef,
    ) -> ControlFlow<Self, Self> {
        let new = match error {
            ErrorKind::IncorrectValueKind { actual, accepted } => {
                Self::wrong_kind(location, actual.kind(), accepted)
            }
            ErrorKind::MissingField { field } => {
                let at = location.push_key(field);
                Self::at(at, "required", format!("{field} is required"))
            }
            ErrorKind::UnknownKey { key, accepted } => Self::at(
                location.push_key(key),
                "unknown_field",
                format!(
                    "{key} is not a known field; expected one of {}",
                    accepted.join(", ")
                ),
            ),
            ErrorKind::UnknownValue { value, accepted } => Self::at(
                location,
                "invalid_enum",
                format!(
                    "{} must be one of {}, got {value}",
                    key_of(location),
                    accepted.join(", ")
                ),
            ),
            ErrorKind::BadSequenceLen { expected, .. } => Self::at(
                location,
                "invalid_type",
                format!("{} must have {expected} items", key_of(location)),
            ),
            ErrorKind::Unexpected { msg } => Self::at(location, "invalid", msg),
        };
        Self::merge(self_, new, location)
    }
}

/// The properties of `T`'s schema in declaration order: of its object, or of the first
/// object of an `allOf` (a body with a rule across fields).
fn declared_fields<T: PartialSchema>() -> Vec<String> {
    let keys =
        |object: &utoipa::openapi::schema::Object| object.properties.keys().cloned().collect();
    match T::schema() {
        RefOr::T(Schema::Object(object)) => keys(&object),
        RefOr::T(Schema::AllOf(all)) => all
            .items
            .iter()
            .find_map(|item| match item {
                RefOr::T(Schema::Object(object)) => Some(keys(object)),
                _ => None,
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// `errors` of the object at `location` ordered as `T` declares its fields, as the
/// Checker reported them (deserr meets them in the order the client wrote them, and missing
/// ones last). Errors elsewhere keep their place.
pub fn in_declared_order<T: PartialSchema>(
    errors: WireErrors,
    location: ValuePointerRef,
) -> WireErrors {
    let order = declared_fields::<T>();
    let prefix = path_of(location);
    let rank = |e: &FieldError| {
        let rest = if prefix.is_empty() {
            Some(e.field.as_str())
        } else {
            e.field
                .strip_prefix(prefix.as_str())
                .and_then(|r| r.strip_prefix('.'))
        };
        let key = rest.and_then(|r| r.split('.').next()).unwrap_or_default();
        order.iter().position(|p| p == key).unwrap_or(order.len())
    };
    let (mut now, mut late) = (errors.0, errors.1);
    now.sort_by_key(rank);
    late.sort_by_key(rank);
    WireErrors(now, late)
}

/// Reads `value` into `T`, every failing field reported at once.
pub fn parse<T: Deserr<WireErrors> + PartialSchema>(value: Value) -> Result<T, Error> {
    deserr::deserialize::<T, Value, WireErrors>(value).map_err(WireErrors::into_error::<T>)
}

/// The string at `location`, or the wrong-type error.
fn string_at<V: IntoValue>(
    value: DValue<V>,
    location: ValuePointerRef,
) -> Result<String, WireErrors> {
    match value {
        DValue::String(s) => Ok(s),
        other => Err(WireErrors::wrong_kind(
            location,
            other.kind(),
            &[ValueKind::String],
        )),
    }
}

/// A required value that must not be blank when it is a string: `"  "` is refused as
/// `required` ("{key} must not be empty") before `T` reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Filled<T>(pub T);

impl<T: Deserr<WireErrors>> Deserr<WireErrors> for Filled<T> {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        if let DValue::String(s) = &value {
            if s.trim().is_empty() {
                let key = key_of(location);
                return Err(WireErrors::at(
                    location,
                    "required",
                    format!("{key} must not be empty"),
                ));
            }
        }
        T::deserialize_from_value(value, location).map(Filled)
    }
}

// Generic types are described through `ComposeSchema` (which gives them `PartialSchema`);
// the schema does not depend on how `T` is referenced elsewhere.
impl<T: PartialSchema> utoipa::__dev::ComposeSchema for Filled<T> {
    fn compose(_: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        match T::schema() {
            RefOr::T(Schema::Object(mut object)) if object.pattern.is_none() => {
                object.pattern = Some(r"\S".to_string());
                object.min_length = Some(object.min_length.unwrap_or(1).max(1));
                RefOr::T(Schema::Object(object))
            }
            // Both patterns must hold: the value's own and "not blank".
            other => utoipa::openapi::schema::AllOfBuilder::new()
                .item(other)
                .item(
                    ObjectBuilder::new()
                        .schema_type(utoipa::openapi::schema::SchemaType::AnyValue)
                        .pattern(Some(r"\S"))
                        .min_length(Some(1)),
                )
                .into(),
        }
    }
}

impl<T: PartialSchema> utoipa::ToSchema for Filled<T> {}

/// An email address, parsed by [`EmailAddress::parse`] (`invalid_email` otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct Email(pub EmailAddress);

impl Deserr<WireErrors> for Email {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = string_at(value, location)?;
        EmailAddress::parse(&raw)
            .map(Email)
            .map_err(|e| WireErrors::at(location, "invalid_email", e.to_string()))
    }
}

impl PartialSchema for Email {
    fn schema() -> RefOr<Schema> {
        EmailAddress::schema()
    }
}

impl utoipa::ToSchema for Email {}

/// A custom event name, parsed by [`EventName::parse_custom`] (`invalid_event` otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct Event(pub EventName);

impl Deserr<WireErrors> for Event {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = string_at(value, location)?;
        EventName::parse_custom(&raw)
            .map(Event)
            .map_err(|e| WireErrors::at(location, "invalid_event", e.to_string()))
    }
}

impl PartialSchema for Event {
    fn schema() -> RefOr<Schema> {
        EventName::schema()
    }
}

impl utoipa::ToSchema for Event {}

/// Any JSON object (free-form custom data).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JsonObject(pub Map<String, Value>);

impl Deserr<WireErrors> for JsonObject {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        match value.kind() {
            ValueKind::Map => match Value::from(value) {
                Value::Object(map) => Ok(JsonObject(map)),
                other => Err(WireErrors::wrong_kind(
                    location,
                    other.into_value().kind(),
                    &[ValueKind::Map],
                )),
            },
            kind => Err(WireErrors::wrong_kind(location, kind, &[ValueKind::Map])),
        }
    }
}

impl PartialSchema for JsonObject {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new().schema_type(Type::Object).into()
    }
}

impl utoipa::ToSchema for JsonObject {}

/// A field where absent, `null` and a value mean three things (keep, clear, set).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Nullable<T> {
    /// Not in the body.
    #[default]
    Absent,
    /// `null`.
    Null,
    /// A value.
    Value(T),
}

impl<T> Nullable<T> {
    /// As core's tri-state patch.
    pub fn into_patch(self) -> posthorn_core::app::Patch<T> {
        use posthorn_core::app::Patch;
        match self {
            Nullable::Absent => Patch::Keep,
            Nullable::Null => Patch::Clear,
            Nullable::Value(v) => Patch::Set(v),
        }
    }
}

impl<T: Deserr<WireErrors>> Deserr<WireErrors> for Nullable<T> {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        match value {
            DValue::Null => Ok(Nullable::Null),
            value => T::deserialize_from_value(value, location).map(Nullable::Value),
        }
    }
}

impl<T: PartialSchema> utoipa::__dev::ComposeSchema for Nullable<T> {
    fn compose(_: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(T::schema())
            .item(ObjectBuilder::new().schema_type(Type::Null))
            .into()
    }
}

impl<T: PartialSchema> utoipa::ToSchema for Nullable<T> {}

/// Control characters other than tab, as a regular-expression class body: what
/// `line_problem` refuses in one-line texts (`char::is_control` is Unicode `Cc`).
const CONTROL_BUT_TAB: &str = r"\u0000-\u0008\u000A-\u001F\u007F-\u009F";

/// One line of at most `MAX` characters, checked by core's [`line_problem`] (no line breaks
/// or other control characters but tab, so no header injection).
#[derive(Debug, Clone, PartialEq)]
pub struct Line<const MAX: usize>(pub String);

impl<const MAX: usize> Deserr<WireErrors> for Line<MAX> {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = string_at(value, location)?;
        match line_problem(&key_of(location), &raw, MAX) {
            Some((code, message)) => Err(WireErrors::at(location, code, message)),
            None => Ok(Line(raw)),
        }
    }
}

impl<const MAX: usize> PartialSchema for Line<MAX> {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .max_length(Some(MAX))
            .pattern(Some(format!("^[^{CONTROL_BUT_TAB}]*$")))
            .into()
    }
}

impl<const MAX: usize> utoipa::ToSchema for Line<MAX> {}

impl<const MAX: usize> AsRef<str> for Line<MAX> {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A text with `{{variable}}` placeholders: `T`'s checks, then core's template syntax check
/// (`invalid_template`, reported after every field's own checks).
#[derive(Debug, Clone, PartialEq)]
pub struct Templated<T>(pub T);

impl<T: Deserr<WireErrors> + AsRef<str>> Deserr<WireErrors> for Templated<T> {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let text = T::deserialize_from_value(value, location)?;
        match posthorn_core::render::validate(text.as_ref()) {
            Ok(()) => Ok(Templated(text)),
            Err(e) => Err(WireErrors::late(
                location,
                "invalid_template",
                e.to_string(),
            )),
        }
    }
}

impl<T: PartialSchema> utoipa::__dev::ComposeSchema for Templated<T> {
    fn compose(_: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        T::schema()
    }
}

impl<T: PartialSchema> utoipa::ToSchema for Templated<T> {}

/// A query-string integer within `MIN..=MAX` (trimmed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryInt<const MIN: i64, const MAX: i64>(pub i64);

impl<const MIN: i64, const MAX: i64> Deserr<WireErrors> for QueryInt<MIN, MAX> {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let key = key_of(location);
        let raw = string_at(value, location)?;
        match raw.trim().parse::<i64>() {
            Ok(n) if (MIN..=MAX).contains(&n) => Ok(QueryInt(n)),
            Ok(_) => Err(WireErrors::at(
                location,
                "out_of_range",
                format!("{key} must be between {MIN} and {MAX}"),
            )),
            Err(_) => Err(WireErrors::at(
                location,
                "invalid_type",
                format!("{key} must be an integer"),
            )),
        }
    }
}

impl<const MIN: i64, const MAX: i64> PartialSchema for QueryInt<MIN, MAX> {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(MIN as f64))
            .maximum(Some(MAX as f64))
            .into()
    }
}

impl<const MIN: i64, const MAX: i64> utoipa::ToSchema for QueryInt<MIN, MAX> {}

/// A query-string flag: `true`, `false`, or empty for none.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QueryBool(pub Option<bool>);

impl Deserr<WireErrors> for QueryBool {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let key = key_of(location);
        match string_at(value, location)?.trim() {
            "" => Ok(QueryBool(None)),
            "true" => Ok(QueryBool(Some(true))),
            "false" => Ok(QueryBool(Some(false))),
            _ => Err(WireErrors::at(
                location,
                "invalid_type",
                format!("{key} must be true or false"),
            )),
        }
    }
}

impl PartialSchema for QueryBool {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new().schema_type(Type::Boolean).into()
    }
}

impl utoipa::ToSchema for QueryBool {}

/// Reads a query string into `T` (every value a string), every failing parameter reported
/// at once in the order `T` declares them.
pub fn parse_query<T: Deserr<WireErrors> + utoipa::IntoParams>(
    query: &std::collections::HashMap<String, String>,
) -> Result<T, Error> {
    let value = Value::Object(
        query
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    );
    deserr::deserialize::<T, Value, WireErrors>(value).map_err(|errors| {
        let order: Vec<String> = T::into_params(|| None)
            .into_iter()
            .map(|p| p.name)
            .collect();
        Error::Validation(errors.ordered(&order))
    })
}
