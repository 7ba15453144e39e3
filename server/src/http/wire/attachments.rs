//! `attachments` of `POST /v1/send`: at most 10 files, 10 MB decoded in all, each read by
//! the deserr wire type [`AttachmentBody`] (inline ones need a `contentId`).

use base64::Engine as _;
use deserr::{Deserr, IntoValue, Value as DValue, ValueKind, ValuePointerRef};
use posthorn_core::app::send::{
    attachment_bytes_problem, attachment_count_problem, MAX_ATTACHMENTS,
};
use posthorn_core::ports::Attachment;
use serde_json::{json, Value};
use utoipa::openapi::schema::{
    AllOfBuilder, AnyOfBuilder, ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::de::{in_declared_order, path_of, Filled, Line, WireErrors};

type Short = Line<255>;

/// Base64 content (white space ignored), decoded; `invalid_base64` otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct Base64(pub Vec<u8>);

impl Deserr<WireErrors> for Base64 {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        let cleaned: String = raw.chars().filter(|ch| !ch.is_whitespace()).collect();
        base64::engine::general_purpose::STANDARD
            .decode(cleaned)
            .map(Base64)
            .map_err(|_| WireErrors::at(location, "invalid_base64", "content must be base64"))
    }
}

impl PartialSchema for Base64 {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .content_encoding("base64")
            .min_length(Some(4))
            .pattern(Some(concat!(
                r"^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{4}|[A-Za-z0-9+/][AQgw]==",
                r"|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)$"
            )))
            .description(Some("Standard base64 with padding."))
            .into()
    }
}

impl ToSchema for Base64 {}

/// `attachment` (a download, the default) or `inline` (shown in the HTML as
/// `cid:<contentId>`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Disposition {
    /// Whether the part is shown inline.
    pub inline: bool,
}

impl Deserr<WireErrors> for Disposition {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        match String::deserialize_from_value(value, location)?.as_str() {
            "attachment" => Ok(Disposition { inline: false }),
            "inline" => Ok(Disposition { inline: true }),
            _ => Err(WireErrors::at(
                location,
                "invalid_enum",
                "disposition must be attachment or inline",
            )),
        }
    }
}

impl PartialSchema for Disposition {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["attachment", "inline"]))
            .into()
    }
}

impl ToSchema for Disposition {}

/// The fields of one attachment, each read on its own.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = Attachment)]
pub struct AttachmentBody {
    /// File name shown to the recipient.
    #[schema(inline)]
    pub filename: Filled<Short>,
    /// MIME type; default `application/octet-stream`.
    #[deserr(default)]
    #[schema(inline, example = "application/pdf")]
    pub content_type: Option<Short>,
    /// Content-ID; required for inline attachments.
    #[deserr(default)]
    #[schema(inline)]
    pub content_id: Option<Short>,
    /// `attachment` (default) or `inline`.
    #[deserr(default)]
    #[schema(inline)]
    pub disposition: Option<Disposition>,
    /// File content, base64 encoded.
    #[schema(inline)]
    pub content: Filled<Base64>,
}

/// One attachment: [`AttachmentBody`], and `contentId` required when inline.
#[derive(Debug)]
pub struct AttachmentInput(pub Attachment);

impl Deserr<WireErrors> for AttachmentInput {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        if value.kind() != ValueKind::Map {
            return Err(WireErrors::at(
                location,
                "invalid_type",
                "an attachment must be an object",
            ));
        }
        let json = Value::from(value);
        let inline = json.get("disposition").and_then(Value::as_str) == Some("inline");
        let has_id = match json.get("contentId") {
            Some(Value::String(id)) => posthorn_core::validate::line_problem("", id, 255).is_none(),
            _ => false,
        };
        let missing_id = (inline && !has_id).then(|| {
            WireErrors::field(
                location.push_key("contentId"),
                "required",
                "inline attachments need a contentId",
            )
        });
        let read = AttachmentBody::deserialize_from_value(json.into_value(), location)
            .map_err(|e| in_declared_order::<AttachmentBody>(e, location));
        match (read, missing_id) {
            (Ok(b), None) => Ok(AttachmentInput(Attachment {
                filename: b.filename.0 .0,
                content_type: b
                    .content_type
                    .map_or_else(|| "application/octet-stream".to_string(), |t| t.0),
                content: b.content.0 .0,
                content_id: b.content_id.map(|c| c.0),
                inline: b.disposition.is_some_and(|d| d.inline),
            })),
            (Ok(_), Some(missing)) => Err(WireErrors(vec![missing], Vec::new())),
            (Err(mut errors), Some(missing)) => {
                // Where the Checker reported it: after `disposition`, before `content`.
                let content = format!("{}.content", path_of(location));
                let at = errors
                    .0
                    .iter()
                    .position(|e| e.field == content || e.field.starts_with(&format!("{content}.")))
                    .unwrap_or(errors.0.len());
                errors.0.insert(at, missing);
                Err(errors)
            }
            (Err(errors), None) => Err(errors),
        }
    }
}

impl PartialSchema for AttachmentInput {
    fn schema() -> RefOr<Schema> {
        let not_inline = ObjectBuilder::new().property(
            "disposition",
            ObjectBuilder::new()
                .schema_type(SchemaType::AnyValue)
                .enum_values(Some([json!("attachment"), Value::Null])),
        );
        let with_id = ObjectBuilder::new()
            .property("contentId", ObjectBuilder::new().schema_type(Type::String))
            .required("contentId");
        AllOfBuilder::new()
            .item(AttachmentBody::schema())
            .item(
                AnyOfBuilder::new()
                    .item(not_inline)
                    .item(with_id)
                    .description(Some("Inline attachments need a `contentId`.")),
            )
            .into()
    }
}

impl ToSchema for AttachmentInput {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Attachment")
    }
}

/// `attachments`: an array of at most [`MAX_ATTACHMENTS`], 10 MB decoded in all.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Attachments(pub Vec<Attachment>);

impl Deserr<WireErrors> for Attachments {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let DValue::Sequence(items) = value else {
            return Err(WireErrors::at(
                location,
                "invalid_type",
                "attachments must be an array",
            ));
        };
        let items: Vec<V> = deserr::Sequence::into_iter(items).collect();
        if let Some((code, message)) = attachment_count_problem(items.len()) {
            return Err(WireErrors::at(location, code, message));
        }
        let mut errors = WireErrors::default();
        let mut out = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            match AttachmentInput::deserialize_from_value(item.into_value(), location.push_index(i))
            {
                Ok(a) => out.push(a.0),
                Err(e) => errors.extend(e),
            }
        }
        let total = out.iter().map(|a| a.content.len()).sum();
        if let Some((code, message)) = attachment_bytes_problem(total) {
            errors.0.push(WireErrors::field(location, code, message));
        }
        if errors.is_empty() {
            Ok(Attachments(out))
        } else {
            Err(errors)
        }
    }
}

impl PartialSchema for Attachments {
    fn schema() -> RefOr<Schema> {
        ArrayBuilder::new()
            .items(AttachmentInput::schema())
            .max_items(Some(MAX_ATTACHMENTS))
            .description(Some(format!(
                "At most {MAX_ATTACHMENTS} attachments, 10 MB decoded in total."
            )))
            .into()
    }
}

impl ToSchema for Attachments {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::wire::de::parse;
    use posthorn_core::Error;

    #[derive(Debug, Deserr, ToSchema)]
    #[deserr(error = WireErrors)]
    struct Holder {
        #[schema(inline)]
        attachments: Attachments,
    }

    fn errors(attachments: Value) -> Vec<(String, String)> {
        match parse::<Holder>(json!({ "attachments": attachments })) {
            Err(Error::Validation(errors)) => {
                errors.into_iter().map(|e| (e.field, e.code)).collect()
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    fn pairs(want: &[(&str, &str)]) -> Vec<(String, String)> {
        want.iter()
            .map(|(f, c)| (f.to_string(), c.to_string()))
            .collect()
    }

    #[test]
    fn each_attachment_reports_its_fields_in_the_checker_order() {
        let got = errors(json!([
            {"content": "!!", "disposition": "inline", "filename": 3},
            7,
            {"content": "YQ==", "filename": "f", "disposition": "both", "contentType": "a\nb"},
        ]));
        assert_eq!(
            got,
            pairs(&[
                ("attachments.0.filename", "invalid_type"),
                ("attachments.0.contentId", "required"),
                ("attachments.0.content", "invalid_base64"),
                ("attachments.1", "invalid_type"),
                ("attachments.2.contentType", "invalid_characters"),
                ("attachments.2.disposition", "invalid_enum"),
            ])
        );
    }

    #[test]
    fn a_valid_attachment_is_decoded_with_its_defaults() {
        let holder: Holder = parse(json!({"attachments": [
            {"filename": "logo.png", "content": "aGVs\nbG8=", "disposition": "inline", "contentId": "logo"}
        ]}))
        .expect("valid");
        let a = &holder.attachments.0[0];
        assert_eq!(a.content, b"hello");
        assert_eq!(a.content_type, "application/octet-stream");
        assert!(a.inline);
        assert_eq!(a.content_id.as_deref(), Some("logo"));
        assert_eq!(
            errors(json!([{"filename": "f", "content": "YQ==", "disposition": "inline"}])),
            pairs(&[("attachments.0.contentId", "required")])
        );
    }
}
