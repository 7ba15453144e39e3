//! Reading untrusted JSON into typed values while collecting every failing field at once.
//!
//! Use cases parse request bodies with a [`Checker`]; each accessor returns `None` when the
//! field is missing or wrong and records why, so one request reports all of its problems.

use serde_json::{Map, Value};

use crate::error::{Error, FieldError};
use crate::model::EmailAddress;

/// Collects field errors while reading a request.
#[derive(Debug, Default)]
pub struct Checker {
    errors: Vec<FieldError>,
}

/// Joins a parent path and a key (`to` + `3` = `to.3`).
pub fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// Why `value` is not a valid one-line text named `key` of at most `max_chars` characters
/// (a line break would let it escape into another header): `(code, message)`.
pub fn line_problem(key: &str, value: &str, max_chars: usize) -> Option<(&'static str, String)> {
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Some((
            "invalid_characters",
            format!("{key} must not contain line breaks or control characters"),
        ));
    }
    if value.chars().count() > max_chars {
        return Some((
            "too_long",
            format!("{key} must be at most {max_chars} characters"),
        ));
    }
    None
}

/// The dot path of the first string or key in `value` that holds a NUL character (U+0000),
/// if any. No durable store keeps one (PostgreSQL refuses it in text and jsonb), so requests
/// carrying one are refused as a whole, wherever it sits.
pub fn first_nul(value: &Value) -> Option<String> {
    fn walk(value: &Value, path: &str) -> Option<String> {
        match value {
            Value::String(s) if s.contains('\0') => Some(path.to_string()),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| walk(v, &join(path, &i.to_string()))),
            // A key with a NUL is reported at its object: the key itself is unprintable.
            Value::Object(map) => map.iter().find_map(|(k, v)| {
                if k.contains('\0') {
                    Some(path.to_string())
                } else {
                    walk(v, &join(path, k))
                }
            }),
            _ => None,
        }
    }
    walk(value, "")
}

/// Every failing one-line field of `lines` (`(key, value, max chars)`), then every template
/// string of `templated` (`(key, source)`) that does not compile, reported at once.
pub fn text_problems(
    lines: &[(&str, Option<&str>, usize)],
    templated: &[(&str, Option<&str>)],
) -> Result<(), Error> {
    let mut errors = Vec::new();
    for &(key, value, max) in lines {
        if let Some((code, message)) = value.and_then(|v| line_problem(key, v, max)) {
            errors.push(FieldError::new(key, code, message));
        }
    }
    for &(key, source) in templated {
        if let Some(Err(e)) = source.map(crate::render::validate) {
            errors.push(FieldError::new(key, "invalid_template", e.to_string()));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Validation(errors))
    }
}

/// The JSON type name of a value, for messages.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Checker {
    /// A checker with no errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an error.
    pub fn fail(&mut self, field: impl Into<String>, code: &str, message: impl Into<String>) {
        self.errors.push(FieldError::new(field, code, message));
    }

    /// Whether any error was recorded.
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// `Ok(())` when nothing failed, else the validation error listing every field.
    pub fn finish(self) -> Result<(), Error> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation(self.errors))
        }
    }

    /// The request body as an object, or a validation error on `body`.
    pub fn body(value: &Value) -> Result<&Map<String, Value>, Error> {
        value.as_object().ok_or_else(|| {
            Error::field(
                "body",
                "invalid_type",
                format!(
                    "Request body must be a JSON object, got {}",
                    type_name(value)
                ),
            )
        })
    }

    /// The value at `key`, treating JSON `null` as absent; records `required` when needed.
    pub fn value<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        key: &str,
        path: &str,
        required: bool,
    ) -> Option<&'v Value> {
        match obj.get(key) {
            Some(Value::Null) | None => {
                if required {
                    self.fail(join(path, key), "required", format!("{key} is required"));
                }
                None
            }
            Some(v) => Some(v),
        }
    }

    /// A string field (not trimmed); wrong types are recorded.
    pub fn string<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        key: &str,
        path: &str,
        required: bool,
    ) -> Option<&'v str> {
        let field = join(path, key);
        match self.value(obj, key, path, required)? {
            Value::String(s) => {
                if required && s.trim().is_empty() {
                    self.fail(field, "required", format!("{key} must not be empty"));
                    None
                } else {
                    Some(s.as_str())
                }
            }
            other => {
                self.fail(
                    field,
                    "invalid_type",
                    format!("{key} must be a string, got {}", type_name(other)),
                );
                None
            }
        }
    }

    /// A string field with a maximum length in characters and no control characters
    /// other than tab (so no CR/LF header injection).
    pub fn line<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        key: &str,
        path: &str,
        required: bool,
        max_chars: usize,
    ) -> Option<&'v str> {
        let s = self.string(obj, key, path, required)?;
        if let Some((code, message)) = line_problem(key, s, max_chars) {
            self.fail(join(path, key), code, message);
            return None;
        }
        Some(s)
    }

    /// An optional, clearable line: absent is `None`, `null` is `Some(None)`, a string is
    /// `Some(Some(..))` (checked like [`Checker::line`]).
    pub fn nullable_line(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        max_chars: usize,
    ) -> Option<Option<String>> {
        match obj.get(key) {
            None => None,
            Some(Value::Null) => Some(None),
            Some(_) => self
                .line(obj, key, "", false, max_chars)
                .map(|s| Some(s.to_string())),
        }
    }

    /// An email address field.
    pub fn email(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
        required: bool,
    ) -> Option<EmailAddress> {
        let raw = self.string(obj, key, path, required)?;
        self.parse_email(raw, &join(path, key))
    }

    /// Parses an address found at `field`, recording a failure.
    pub fn parse_email(&mut self, raw: &str, field: &str) -> Option<EmailAddress> {
        match EmailAddress::parse(raw) {
            Ok(e) => Some(e),
            Err(e) => {
                self.fail(field, "invalid_email", e.to_string());
                None
            }
        }
    }

    /// A boolean field.
    pub fn boolean(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
        required: bool,
    ) -> Option<bool> {
        match self.value(obj, key, path, required)? {
            Value::Bool(b) => Some(*b),
            other => {
                self.fail(
                    join(path, key),
                    "invalid_type",
                    format!("{key} must be a boolean, got {}", type_name(other)),
                );
                None
            }
        }
    }

    /// An object field.
    pub fn object<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        key: &str,
        path: &str,
        required: bool,
    ) -> Option<&'v Map<String, Value>> {
        match self.value(obj, key, path, required)? {
            Value::Object(m) => Some(m),
            other => {
                self.fail(
                    join(path, key),
                    "invalid_type",
                    format!("{key} must be an object, got {}", type_name(other)),
                );
                None
            }
        }
    }

    /// A number field greater than zero and at most `max`.
    pub fn positive_number(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        path: &str,
        max: f64,
    ) -> Option<f64> {
        let field = join(path, key);
        let value = self.value(obj, key, path, false)?;
        match value.as_f64() {
            Some(n) if n > 0.0 && n <= max => Some(n),
            Some(_) => {
                self.fail(
                    field,
                    "out_of_range",
                    format!("{key} must be above 0 and at most {max}"),
                );
                None
            }
            None => {
                self.fail(
                    field,
                    "invalid_type",
                    format!("{key} must be a number, got {}", type_name(value)),
                );
                None
            }
        }
    }

    /// The page size of a list: `pageSize` (Plunk's name) or `limit`, each 1..=100, 20 when
    /// neither is given. Both are checked when both are given; `pageSize` wins.
    pub fn page_size(&mut self, query: &std::collections::HashMap<String, String>) -> u64 {
        let page_size = self.query_int(query, "pageSize", 1, 100, 20);
        let limit = self.query_int(query, "limit", 1, 100, 20);
        let chosen = if query.contains_key("pageSize") {
            page_size
        } else {
            limit
        };
        chosen as u64
    }

    /// A query-string integer (`limit=20`) within `min..=max`, `default` when absent.
    pub fn query_int(
        &mut self,
        query: &std::collections::HashMap<String, String>,
        key: &str,
        min: i64,
        max: i64,
        default: i64,
    ) -> i64 {
        match query.get(key) {
            None => default,
            Some(raw) => match raw.trim().parse::<i64>() {
                Ok(n) if (min..=max).contains(&n) => n,
                Ok(_) => {
                    self.fail(
                        key,
                        "out_of_range",
                        format!("{key} must be between {min} and {max}"),
                    );
                    default
                }
                Err(_) => {
                    self.fail(key, "invalid_type", format!("{key} must be an integer"));
                    default
                }
            },
        }
    }

    /// A query-string enum parsed by `parse`; absent or empty is `None`, anything else that
    /// does not parse is recorded with `message`.
    pub fn query_enum<T>(
        &mut self,
        query: &std::collections::HashMap<String, String>,
        key: &str,
        parse: impl Fn(&str) -> Option<T>,
        message: &str,
    ) -> Option<T> {
        let raw = query.get(key).map(|s| s.trim()).filter(|s| !s.is_empty())?;
        let parsed = parse(raw);
        if parsed.is_none() {
            self.fail(key, "invalid_enum", message);
        }
        parsed
    }

    /// A query-string boolean (`true`/`false`).
    pub fn query_bool(
        &mut self,
        query: &std::collections::HashMap<String, String>,
        key: &str,
    ) -> Option<bool> {
        match query.get(key).map(|s| s.trim()) {
            None | Some("") => None,
            Some("true") => Some(true),
            Some("false") => Some(false),
            Some(_) => {
                self.fail(key, "invalid_type", format!("{key} must be true or false"));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_characters_are_found_with_their_path() {
        let clean = serde_json::json!({"a": ["x", {"b": "y"}], "c": 1});
        assert_eq!(first_nul(&clean), None);
        let in_value = serde_json::json!({"a": ["x", {"b": "y\u{0}"}]});
        assert_eq!(first_nul(&in_value).as_deref(), Some("a.1.b"));
        let in_key = serde_json::json!({"data": {"k\u{0}": 1}});
        assert_eq!(first_nul(&in_key).as_deref(), Some("data"));
    }

    use proptest::prelude::*;
    use serde_json::json;
    use std::collections::HashMap;

    #[test]
    fn page_size_checks_both_names_and_prefers_page_size() {
        let query = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let size = |pairs: &[(&str, &str)]| {
            let mut c = Checker::new();
            let size = c.page_size(&query(pairs));
            c.finish().map(|()| size)
        };
        assert_eq!(size(&[]), Ok(20));
        assert_eq!(size(&[("limit", "5")]), Ok(5));
        assert_eq!(size(&[("pageSize", "7"), ("limit", "5")]), Ok(7));
        for refused in [
            &[("limit", "101")][..],
            &[("pageSize", "27"), ("limit", "101")],
            &[("pageSize", "0"), ("limit", "5")],
            &[("limit", "x")],
        ] {
            assert!(size(refused).is_err(), "{refused:?} must be refused");
        }
    }

    #[test]
    fn collects_every_failure() {
        let body = json!({"email": "nope", "subscribed": "yes", "data": 3});
        let obj = Checker::body(&body).expect("object");
        let mut c = Checker::new();
        assert!(c.email(obj, "email", "", true).is_none());
        assert!(c.boolean(obj, "subscribed", "", false).is_none());
        assert!(c.object(obj, "data", "", false).is_none());
        assert!(c.string(obj, "event", "", true).is_none());
        let Err(Error::Validation(errors)) = c.finish() else {
            panic!("expected errors")
        };
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["email", "subscribed", "data", "event"]);
    }

    #[test]
    fn null_is_absent_and_lines_refuse_crlf() {
        let body = json!({"a": null, "s": "x\r\nBcc: evil@x.com"});
        let obj = Checker::body(&body).expect("object");
        let mut c = Checker::new();
        assert!(c.string(obj, "a", "", false).is_none());
        assert!(!c.has_errors());
        assert!(c.line(obj, "s", "", true, 100).is_none());
        assert!(c.has_errors());
    }

    proptest! {
        #[test]
        fn query_int_is_in_range_or_reported(raw in "\\PC{0,12}") {
            let mut c = Checker::new();
            let q = HashMap::from([("limit".to_string(), raw)]);
            let n = c.query_int(&q, "limit", 1, 100, 20);
            prop_assert!((1..=100).contains(&n));
        }
    }
}
