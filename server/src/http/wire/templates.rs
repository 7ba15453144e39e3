//! `/templates`: bodies and query strings into typed commands, and answers.

use deserr::{Deserr, IntoValue, Value as DValue, ValuePointerRef};
use posthorn_core::app::send::{MAX_NAME_CHARS, MAX_SUBJECT_CHARS};
use posthorn_core::app::templates::{
    decode_page_cursor, CreateTemplate, ListTemplates, TemplatePage, TemplatePatch,
    MAX_TEMPLATE_DESCRIPTION_CHARS, MAX_TEMPLATE_NAME_CHARS,
};
use posthorn_core::app::PageRequest;
use posthorn_core::model::{Template, TemplateType};
use serde::Serialize;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::de::{Email, Filled, Line, Nullable, QueryInt, Templated, WireErrors};

type Name = Line<MAX_TEMPLATE_NAME_CHARS>;
type Description = Line<MAX_TEMPLATE_DESCRIPTION_CHARS>;
type Subject = Templated<Line<MAX_SUBJECT_CHARS>>;
type FromName = Line<MAX_NAME_CHARS>;

const TYPE_MESSAGE: &str = "type must be TRANSACTIONAL or MARKETING";

/// `TRANSACTIONAL` or `MARKETING` (exact case), parsed by [`TemplateType::parse`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kind(pub TemplateType);

impl Deserr<WireErrors> for Kind {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        TemplateType::parse(&raw)
            .map(Kind)
            .ok_or_else(|| WireErrors::at(location, "invalid_enum", TYPE_MESSAGE))
    }
}

impl PartialSchema for Kind {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["TRANSACTIONAL", "MARKETING"]))
            .description(Some(
                "MARKETING mail is never sent to unsubscribed contacts.",
            ))
            .into()
    }
}

impl ToSchema for Kind {}

/// Body of `POST /templates`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = TemplateCreate)]
pub struct TemplateCreateBody {
    /// Name.
    #[schema(inline)]
    pub name: Filled<Name>,
    /// Description.
    #[deserr(default)]
    #[schema(inline)]
    pub description: Option<Description>,
    /// Subject with `{{variable}}` placeholders.
    #[schema(inline)]
    pub subject: Filled<Subject>,
    /// HTML body with placeholders.
    #[schema(inline)]
    pub body: Filled<Templated<String>>,
    /// Plain-text version with placeholders; generated from the HTML when omitted.
    #[deserr(default)]
    #[schema(inline)]
    pub text: Option<Templated<String>>,
    /// Default sender name.
    #[deserr(default)]
    #[schema(inline)]
    pub from_name: Option<FromName>,
    /// Default sender address (a verified domain of the workspace).
    #[deserr(default)]
    #[schema(inline)]
    pub from: Option<Email>,
    /// Default reply-to address.
    #[deserr(default)]
    #[schema(inline)]
    pub reply_to: Option<Email>,
    /// TRANSACTIONAL or MARKETING.
    #[deserr(rename = "type")]
    #[serde(rename = "type")]
    #[schema(inline)]
    pub template_type: Filled<Kind>,
}

impl From<TemplateCreateBody> for CreateTemplate {
    fn from(b: TemplateCreateBody) -> Self {
        CreateTemplate {
            name: b.name.0 .0,
            description: b.description.map(|d| d.0),
            subject: b.subject.0 .0 .0,
            body: b.body.0 .0,
            text: b.text.map(|t| t.0),
            from: b.from.map(|e| e.0),
            from_name: b.from_name.map(|n| n.0),
            reply_to: b.reply_to.map(|e| e.0),
            template_type: b.template_type.0 .0,
        }
    }
}

/// Body of `PATCH` and `PUT /templates/{id}`: any editable field; `null` clears the optional
/// ones.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = TemplatePatch)]
pub struct TemplatePatchBody {
    /// Name.
    #[deserr(default)]
    #[schema(inline)]
    pub name: Option<Name>,
    /// Description; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub description: Nullable<Description>,
    /// Subject with placeholders.
    #[deserr(default)]
    #[schema(inline)]
    pub subject: Option<Subject>,
    /// HTML body with placeholders.
    #[deserr(default)]
    #[schema(inline)]
    pub body: Option<Templated<String>>,
    /// Plain-text version with placeholders; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub text: Nullable<Templated<String>>,
    /// Default sender name; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub from_name: Nullable<FromName>,
    /// Default sender address; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub from: Nullable<Email>,
    /// Default reply-to address; `null` clears it.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub reply_to: Nullable<Email>,
    /// TRANSACTIONAL or MARKETING.
    #[deserr(default, rename = "type")]
    #[serde(rename = "type")]
    #[schema(inline)]
    pub template_type: Option<Kind>,
}

impl From<TemplatePatchBody> for TemplatePatch {
    fn from(b: TemplatePatchBody) -> Self {
        TemplatePatch {
            name: b.name.map(|n| n.0),
            description: b.description.into_patch().map(|d| d.0),
            subject: b.subject.map(|s| s.0 .0),
            body: b.body.map(|s| s.0),
            text: b.text.into_patch().map(|t| t.0),
            from: b.from.into_patch().map(|e| e.0),
            from_name: b.from_name.into_patch().map(|n| n.0),
            reply_to: b.reply_to.into_patch().map(|e| e.0),
            template_type: b.template_type.map(|k| k.0),
        }
    }
}

/// The `cursor` of a template page: empty for none, else a token this API issued.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PageCursor(pub Option<u64>);

impl Deserr<WireErrors> for PageCursor {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        match raw.trim() {
            "" => Ok(PageCursor(None)),
            raw => decode_page_cursor(raw)
                .map(|p| PageCursor(Some(p)))
                .ok_or_else(|| {
                    WireErrors::at(
                        location,
                        "invalid_cursor",
                        "cursor is not one this API returned",
                    )
                }),
        }
    }
}

/// A template type in a query string (trimmed; empty for none).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QueryKind(pub Option<TemplateType>);

impl Deserr<WireErrors> for QueryKind {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        match raw.trim() {
            "" => Ok(QueryKind(None)),
            raw => TemplateType::parse(raw)
                .map(|t| QueryKind(Some(t)))
                .ok_or_else(|| WireErrors::at(location, "invalid_enum", TYPE_MESSAGE)),
        }
    }
}

impl PartialSchema for QueryKind {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["", "TRANSACTIONAL", "MARKETING"]))
            .description(Some("A template type; empty for any."))
            .into()
    }
}

impl ToSchema for QueryKind {}

/// Query of `GET /templates` (page pagination, newest first).
#[derive(Debug, Deserr, IntoParams)]
#[deserr(error = WireErrors)]
#[into_params(parameter_in = Query)]
pub struct TemplatesQuery {
    /// Page size (default 20).
    #[deserr(default, rename = "pageSize")]
    #[param(rename = "pageSize", inline)]
    pub page_size: Option<QueryInt<1, 100>>,
    /// Alias of `pageSize`, used when `pageSize` is absent.
    #[deserr(default)]
    #[param(inline)]
    pub limit: Option<QueryInt<1, 100>>,
    /// 1-based page number (overridden by `cursor`).
    #[deserr(default = QueryInt(1))]
    #[param(inline, required = false)]
    pub page: QueryInt<1, 1_000_000>,
    /// The `cursor` of the previous response, exactly as answered: selects the next page.
    /// An opaque token that only this API issues; any other value is refused (422
    /// `invalid_cursor`).
    #[deserr(default)]
    #[param(value_type = Option<String>)]
    pub cursor: PageCursor,
    /// Only templates of this type.
    #[deserr(default, rename = "type")]
    #[param(rename = "type", inline, value_type = Option<QueryKind>)]
    pub template_type: QueryKind,
    /// Case-insensitive substring of the name.
    #[deserr(default)]
    pub search: Option<String>,
}

impl From<TemplatesQuery> for ListTemplates {
    fn from(q: TemplatesQuery) -> Self {
        let page_size = q.page_size.or(q.limit).map_or(20, |n| n.0 as u64);
        ListTemplates {
            page: PageRequest {
                page: q.cursor.0.unwrap_or(q.page.0 as u64),
                page_size,
            },
            template_type: q.template_type.0,
            search: q.search,
        }
    }
}

/// A page of templates, newest first.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = TemplatePage)]
#[serde(rename_all = "camelCase")]
pub struct TemplatePageBody {
    /// The templates.
    pub data: Vec<Template>,
    /// Templates matching the filters.
    pub total: u64,
    /// 1-based page number.
    pub page: u64,
    /// Page size.
    pub page_size: u64,
    /// Number of pages.
    pub total_pages: u64,
    /// Cursor of the next page (pass as `cursor`); null on the last page.
    #[schema(required = true)]
    pub cursor: Option<String>,
}

impl From<TemplatePage> for TemplatePageBody {
    fn from(p: TemplatePage) -> Self {
        TemplatePageBody {
            data: p.templates,
            total: p.total,
            page: p.page,
            page_size: p.page_size,
            total_pages: p.total_pages,
            cursor: p.cursor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::wire::de::parse;
    use posthorn_core::Error;
    use serde_json::json;

    fn fields(body: serde_json::Value) -> Vec<(String, String)> {
        match parse::<TemplateCreateBody>(body) {
            Err(Error::Validation(errors)) => {
                errors.into_iter().map(|e| (e.field, e.code)).collect()
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn template_syntax_is_reported_after_every_field() {
        let got = fields(
            json!({"type": "NEWSLETTER", "body": "{{ oops", "subject": "Hi\r\nBcc: x",
            "name": "  "}),
        );
        let want = [
            ("name", "required"),
            ("subject", "invalid_characters"),
            ("type", "invalid_enum"),
            ("body", "invalid_template"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(f, c)| (f.to_string(), c.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_patch_tells_null_from_absent() {
        let body: TemplatePatchBody =
            parse(json!({"description": null, "fromName": "Ada"})).expect("valid");
        let patch = TemplatePatch::from(body);
        assert_eq!(patch.description, posthorn_core::app::Patch::Clear);
        assert_eq!(patch.text, posthorn_core::app::Patch::Keep);
        assert_eq!(
            patch.from_name,
            posthorn_core::app::Patch::Set("Ada".to_string())
        );
    }
}
