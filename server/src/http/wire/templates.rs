//! `/templates` bodies and query strings into typed commands.

use std::collections::HashMap;

use posthorn_core::app::send::{MAX_NAME_CHARS, MAX_SUBJECT_CHARS};
use posthorn_core::app::templates::{
    decode_page_cursor, CreateTemplate, ListTemplates, TemplatePatch,
    MAX_TEMPLATE_DESCRIPTION_CHARS, MAX_TEMPLATE_NAME_CHARS,
};
use posthorn_core::app::{PageRequest, Patch};
use posthorn_core::model::{EmailAddress, TemplateType};
use posthorn_core::render::validate as validate_syntax;
use posthorn_core::validate::{join, Checker};
use posthorn_core::Result;
use serde_json::Value;

/// Editable template fields, as read from a create or patch body.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    description: Option<Option<String>>,
    subject: Option<String>,
    body: Option<String>,
    text: Option<Option<String>>,
    from: Option<Option<EmailAddress>>,
    from_name: Option<Option<String>>,
    reply_to: Option<Option<EmailAddress>>,
    template_type: Option<TemplateType>,
}

fn read_fields(body: &Value, creating: bool) -> Result<Fields> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let mut f = Fields {
        name: c
            .line(obj, "name", "", creating, MAX_TEMPLATE_NAME_CHARS)
            .map(str::to_string),
        description: c.nullable_line(obj, "description", MAX_TEMPLATE_DESCRIPTION_CHARS),
        subject: c
            .line(obj, "subject", "", creating, MAX_SUBJECT_CHARS)
            .map(str::to_string),
        body: c.string(obj, "body", "", creating).map(str::to_string),
        text: match obj.get("text") {
            None => None,
            Some(Value::Null) => Some(None),
            Some(_) => c
                .string(obj, "text", "", false)
                .map(|s| Some(s.to_string())),
        },
        from: None,
        from_name: c.nullable_line(obj, "fromName", MAX_NAME_CHARS),
        reply_to: None,
        template_type: None,
    };
    for (key, slot) in [("from", &mut f.from), ("replyTo", &mut f.reply_to)] {
        *slot = match obj.get(key) {
            None => None,
            Some(Value::Null) => Some(None),
            Some(_) => c.email(obj, key, "", false).map(Some),
        };
    }
    f.template_type = match c.string(obj, "type", "", creating) {
        None => None,
        Some(raw) => match TemplateType::parse(raw) {
            Some(t) => Some(t),
            None => {
                c.fail(
                    "type",
                    "invalid_enum",
                    "type must be TRANSACTIONAL or MARKETING",
                );
                None
            }
        },
    };
    for (key, source) in [("subject", &f.subject), ("body", &f.body)] {
        if let Some(Err(e)) = source.as_deref().map(validate_syntax) {
            c.fail(join("", key), "invalid_template", e.to_string());
        }
    }
    c.finish()?;
    Ok(f)
}

/// `POST /templates {name, subject, body, type, description?, text?, from?, fromName?,
/// replyTo?}`.
pub fn create(body: &Value) -> Result<CreateTemplate> {
    let f = read_fields(body, true)?;
    Ok(CreateTemplate {
        name: f.name.unwrap_or_default(),
        description: f.description.flatten(),
        subject: f.subject.unwrap_or_default(),
        body: f.body.unwrap_or_default(),
        text: f.text.flatten(),
        from: f.from.flatten(),
        from_name: f.from_name.flatten(),
        reply_to: f.reply_to.flatten(),
        template_type: f.template_type.unwrap_or(TemplateType::Transactional),
    })
}

/// `PATCH` (or `PUT`) `/templates/{id}`: any editable field; `null` clears optional ones.
pub fn patch(body: &Value) -> Result<TemplatePatch> {
    let f = read_fields(body, false)?;
    Ok(TemplatePatch {
        name: f.name,
        description: Patch::from(f.description),
        subject: f.subject,
        body: f.body,
        text: Patch::from(f.text),
        from: Patch::from(f.from),
        from_name: Patch::from(f.from_name),
        reply_to: Patch::from(f.reply_to),
        template_type: f.template_type,
    })
}

/// `GET /templates?page&pageSize|limit&cursor&type&search`.
pub fn list(query: &HashMap<String, String>) -> Result<ListTemplates> {
    let mut c = Checker::new();
    // pageSize before page: the order in which errors are reported.
    let page_size = c.page_size(query);
    let mut page = PageRequest {
        page: c.query_int(query, "page", 1, 1_000_000, 1) as u64,
        page_size,
    };
    if let Some(raw) = query
        .get("cursor")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        match decode_page_cursor(raw) {
            Some(p) => page.page = p,
            None => c.fail(
                "cursor",
                "invalid_cursor",
                "cursor is not one this API returned",
            ),
        }
    }
    let template_type = c.query_enum(
        query,
        "type",
        TemplateType::parse,
        "type must be TRANSACTIONAL or MARKETING",
    );
    c.finish()?;
    Ok(ListTemplates {
        page,
        template_type,
        search: query.get("search").cloned(),
    })
}
