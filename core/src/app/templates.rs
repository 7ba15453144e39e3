//! Templates: create, read, list, update, delete.

use std::collections::HashMap;

use base64::Engine as _;
use serde_json::Value;

use super::Caller;
use crate::error::{Error, Resource, Result};
use crate::model::{new_id, Template, TemplateType};
use crate::ports::{ChangeSet, TemplateQuery, Write};
use crate::render::validate as validate_syntax;
use crate::validate::{join, Checker};
use crate::Engine;

/// A page of templates with the page-style fields and a `cursor` for the next page.
#[derive(Debug, Clone)]
pub struct TemplatePage {
    /// Templates, newest first.
    pub templates: Vec<Template>,
    /// Templates matching the filters.
    pub total: u64,
    /// 1-based page number.
    pub page: u64,
    /// Page size.
    pub page_size: u64,
    /// Number of pages.
    pub total_pages: u64,
    /// Cursor of the next page, `None` on the last.
    pub cursor: Option<String>,
}

/// Editable template fields, as read from a create or patch body.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    description: Option<Option<String>>,
    subject: Option<String>,
    body: Option<String>,
    text: Option<Option<String>>,
    from: Option<Option<String>>,
    from_name: Option<Option<String>>,
    reply_to: Option<Option<String>>,
    template_type: Option<TemplateType>,
}

fn read_fields(body: &Value, creating: bool) -> Result<Fields> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let mut f = Fields {
        name: c.line(obj, "name", "", creating, 255).map(str::to_string),
        description: c.nullable_line(obj, "description", 2000),
        subject: c
            .line(obj, "subject", "", creating, 998)
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
        from_name: c.nullable_line(obj, "fromName", 256),
        reply_to: None,
        template_type: None,
    };
    for (key, slot) in [("from", &mut f.from), ("replyTo", &mut f.reply_to)] {
        *slot = match obj.get(key) {
            None => None,
            Some(Value::Null) => Some(None),
            Some(_) => c.email(obj, key, "", false).map(|e| Some(e.to_string())),
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

impl Engine {
    async fn check_template_sender(&self, caller: &Caller, from: &Option<String>) -> Result<()> {
        if let Some(from) = from {
            let email = crate::model::EmailAddress::parse(from)
                .map_err(|e| Error::field("from", "invalid_email", e.to_string()))?;
            self.check_sender(caller, &email).await?;
        }
        Ok(())
    }

    /// `POST /templates`: `name`, `subject`, `body`, `type` required.
    pub async fn create_template(&self, caller: &Caller, body: &Value) -> Result<Template> {
        let f = read_fields(body, true)?;
        let from = f.from.clone().flatten();
        self.check_template_sender(caller, &from).await?;
        let now = self.clock.now();
        let template = Template {
            id: new_id(),
            workspace_id: caller.workspace_id().to_string(),
            name: f.name.unwrap_or_default(),
            description: f.description.flatten(),
            subject: f.subject.unwrap_or_default(),
            body: f.body.unwrap_or_default(),
            text: f.text.flatten(),
            from,
            from_name: f.from_name.flatten(),
            reply_to: f.reply_to.flatten(),
            template_type: f.template_type.unwrap_or(TemplateType::Transactional),
            created_at: now,
            updated_at: now,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::PutTemplate(template.clone()));
        self.store.commit(changes).await?;
        Ok(template)
    }

    /// `GET /templates/{id}`.
    pub async fn template(&self, caller: &Caller, id: &str) -> Result<Template> {
        self.store
            .template(caller.workspace_id(), id)
            .await?
            .ok_or(Error::NotFound(Resource::Template))
    }

    /// `PATCH /templates/{id}`: any editable field; `null` clears optional ones.
    pub async fn patch_template(
        &self,
        caller: &Caller,
        id: &str,
        body: &Value,
    ) -> Result<Template> {
        let f = read_fields(body, false)?;
        let mut t = self.template(caller, id).await?;
        if let Some(from) = &f.from {
            self.check_template_sender(caller, from).await?;
            t.from = from.clone();
        }
        if let Some(v) = f.name {
            t.name = v;
        }
        if let Some(v) = f.description {
            t.description = v;
        }
        if let Some(v) = f.subject {
            t.subject = v;
        }
        if let Some(v) = f.body {
            t.body = v;
        }
        if let Some(v) = f.text {
            t.text = v;
        }
        if let Some(v) = f.from_name {
            t.from_name = v;
        }
        if let Some(v) = f.reply_to {
            t.reply_to = v;
        }
        if let Some(v) = f.template_type {
            t.template_type = v;
        }
        t.updated_at = self.clock.now();
        let mut changes = ChangeSet::new();
        changes.push(Write::PutTemplate(t.clone()));
        self.store.commit(changes).await?;
        Ok(t)
    }

    /// `DELETE /templates/{id}`.
    pub async fn delete_template(&self, caller: &Caller, id: &str) -> Result<()> {
        let t = self.template(caller, id).await?;
        let mut changes = ChangeSet::new();
        changes.push(Write::DeleteTemplate {
            workspace_id: t.workspace_id,
            id: t.id,
        });
        self.store.commit(changes).await?;
        Ok(())
    }

    /// `GET /templates`: `page`/`pageSize` or `limit`/`cursor`, `type`, `search`.
    pub async fn list_templates(
        &self,
        caller: &Caller,
        query: &HashMap<String, String>,
    ) -> Result<TemplatePage> {
        let mut c = Checker::new();
        let page_size = c.page_size(query);
        let mut page = c.query_int(query, "page", 1, 1_000_000, 1) as u64;
        if let Some(raw) = query
            .get("cursor")
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
        {
            match decode_page_cursor(raw) {
                Some(p) => page = p,
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
        let search = query
            .get("search")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        let q = TemplateQuery {
            template_type,
            search,
            offset: ((page - 1) * page_size) as usize,
            limit: page_size as usize,
        };
        let (templates, total) = self.store.templates(caller.workspace_id(), &q).await?;
        let total_pages = total.div_ceil(page_size);
        let cursor = (page < total_pages).then(|| encode_page_cursor(page + 1));
        Ok(TemplatePage {
            templates,
            total,
            page,
            page_size,
            total_pages,
            cursor,
        })
    }
}

fn encode_page_cursor(page: u64) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("page:{page}"))
}

fn decode_page_cursor(raw: &str) -> Option<u64> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(raw)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    text.strip_prefix("page:")?.parse().ok().filter(|p| *p >= 1)
}
