//! Templates: create, read, list, update, delete.

use base64::Engine as _;

use super::send::{MAX_NAME_CHARS, MAX_SUBJECT_CHARS};
use super::{check_page, Caller, PageRequest, Patch};
use crate::error::{Error, Resource, Result};
use crate::model::{EmailAddress, Template, TemplateId, TemplateType};
use crate::ports::{ChangeSet, TemplateQuery, Write};
use crate::validate::text_problems;
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

/// Longest template name, in characters.
pub const MAX_TEMPLATE_NAME_CHARS: usize = 255;
/// Longest template description, in characters.
pub const MAX_TEMPLATE_DESCRIPTION_CHARS: usize = 2000;

/// `POST /templates`: a new template.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTemplate {
    /// Name (one line).
    pub name: String,
    /// Description (one line).
    pub description: Option<String>,
    /// Subject, a template string (one line).
    pub subject: String,
    /// HTML body, a template string.
    pub body: String,
    /// Plain-text part; derived from the HTML when `None`.
    pub text: Option<String>,
    /// Sender address; must be on a verified domain of the workspace.
    pub from: Option<EmailAddress>,
    /// Sender display name.
    pub from_name: Option<String>,
    /// Reply-To address.
    pub reply_to: Option<EmailAddress>,
    /// TRANSACTIONAL or MARKETING.
    pub template_type: TemplateType,
}

/// `PATCH /templates/{id}`: each field left, cleared (optional ones) or set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TemplatePatch {
    /// New name.
    pub name: Option<String>,
    /// New description.
    pub description: Patch<String>,
    /// New subject.
    pub subject: Option<String>,
    /// New HTML body.
    pub body: Option<String>,
    /// New plain-text part (`Clear`: derive it from the HTML).
    pub text: Patch<String>,
    /// New sender address.
    pub from: Patch<EmailAddress>,
    /// New sender display name.
    pub from_name: Patch<String>,
    /// New Reply-To address.
    pub reply_to: Patch<EmailAddress>,
    /// New type.
    pub template_type: Option<TemplateType>,
}

/// `GET /templates`: one page, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListTemplates {
    /// Page and page size.
    pub page: PageRequest,
    /// Only this type.
    pub template_type: Option<TemplateType>,
    /// Case-insensitive substring of name or subject.
    pub search: Option<String>,
}

/// Why the text fields of a message (a template's or a campaign's) break a rule: one-line
/// fields within their lengths, subject, body and plain-text body that compile as templates.
pub(crate) fn message_text_problems(
    name: Option<&str>,
    description: Option<&str>,
    subject: Option<&str>,
    body: Option<&str>,
    text: Option<&str>,
    from_name: Option<&str>,
) -> Result<()> {
    text_problems(
        &[
            ("name", name, MAX_TEMPLATE_NAME_CHARS),
            ("description", description, MAX_TEMPLATE_DESCRIPTION_CHARS),
            ("subject", subject, MAX_SUBJECT_CHARS),
            ("fromName", from_name, MAX_NAME_CHARS),
        ],
        &[("subject", subject), ("body", body), ("text", text)],
    )
}

impl CreateTemplate {
    /// A template with the required fields; set `from` and the others as needed.
    pub fn new(
        name: impl Into<String>,
        subject: impl Into<String>,
        body: impl Into<String>,
        template_type: TemplateType,
    ) -> Self {
        Self {
            name: name.into(),
            description: None,
            subject: subject.into(),
            body: body.into(),
            text: None,
            from: None,
            from_name: None,
            reply_to: None,
            template_type,
        }
    }

    /// Checks the rules every template obeys.
    pub fn validate(&self) -> Result<()> {
        message_text_problems(
            Some(&self.name),
            self.description.as_deref(),
            Some(&self.subject),
            Some(&self.body),
            self.text.as_deref(),
            self.from_name.as_deref(),
        )
    }
}

impl TemplatePatch {
    /// Applies the patch to `t` (all but `updated_at`).
    fn apply_to(self, t: &mut Template) {
        self.from.map(|e| e.to_string()).apply_to(&mut t.from);
        self.reply_to
            .map(|e| e.to_string())
            .apply_to(&mut t.reply_to);
        self.description.apply_to(&mut t.description);
        self.text.apply_to(&mut t.text);
        self.from_name.apply_to(&mut t.from_name);
        if let Some(v) = self.name {
            t.name = v;
        }
        if let Some(v) = self.subject {
            t.subject = v;
        }
        if let Some(v) = self.body {
            t.body = v;
        }
        if let Some(v) = self.template_type {
            t.template_type = v;
        }
    }

    /// Checks the rules for the fields it sets.
    pub fn validate(&self) -> Result<()> {
        message_text_problems(
            self.name.as_deref(),
            self.description.as_set().map(String::as_str),
            self.subject.as_deref(),
            self.body.as_deref(),
            self.text.as_set().map(String::as_str),
            self.from_name.as_set().map(String::as_str),
        )
    }
}

impl Engine {
    async fn check_template_sender(
        &self,
        caller: &Caller,
        from: Option<&EmailAddress>,
    ) -> Result<()> {
        if let Some(from) = from {
            self.check_sender(caller, from).await?;
        }
        Ok(())
    }

    /// Refuses a key limited to some sender domains changing, deleting or putting in a
    /// workflow step a template sent from another domain: the limit is on what the key may
    /// have sent from a domain, and a template is sent by others (workflows, campaigns).
    pub(crate) fn check_template_scope(caller: &Caller, template: &Template) -> Result<()> {
        let Some(domain) = template.from.as_deref().and_then(|f| f.rsplit_once('@')) else {
            return Ok(());
        };
        let domain = domain.1;
        if caller.key.may_send_from(domain) {
            return Ok(());
        }
        Err(Error::Forbidden(format!(
            "This API key may not use or change a template sent from {domain}; its key set is limited to: {}",
            caller.key.key_set.domains.join(", ")
        )))
    }

    /// `POST /templates`.
    pub async fn create_template(&self, caller: &Caller, cmd: CreateTemplate) -> Result<Template> {
        cmd.validate()?;
        self.check_template_sender(caller, cmd.from.as_ref())
            .await?;
        let now = self.clock.now();
        let template = Template {
            id: TemplateId::generate(&*self.clock),
            workspace_id: caller.workspace_id().clone(),
            name: cmd.name,
            description: cmd.description,
            subject: cmd.subject,
            body: cmd.body,
            text: cmd.text,
            from: cmd.from.map(|e| e.to_string()),
            from_name: cmd.from_name,
            reply_to: cmd.reply_to.map(|e| e.to_string()),
            template_type: cmd.template_type,
            created_at: now,
            updated_at: now,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::PutTemplate(template.clone()));
        self.store.commit(changes).await?;
        Ok(template)
    }

    /// `GET /templates/{id}`.
    pub async fn template(&self, caller: &Caller, id: &TemplateId) -> Result<Template> {
        self.store
            .template(caller.workspace_id(), id)
            .await?
            .ok_or(Error::NotFound(Resource::Template))
    }

    /// `PATCH /templates/{id}`: any editable field; `Clear` empties optional ones. Applied
    /// to the template as stored under a guard on its `updated_at`, read again after a
    /// concurrent change (so neither edit is lost, and a template deleted meanwhile is 404
    /// rather than brought back).
    pub async fn patch_template(
        &self,
        caller: &Caller,
        id: &TemplateId,
        patch: TemplatePatch,
    ) -> Result<Template> {
        patch.validate()?;
        self.on_conflict_retry(|| async {
            let mut t = self.template(caller, id).await?;
            Self::check_template_scope(caller, &t)?;
            if let Patch::Set(from) = &patch.from {
                self.check_template_sender(caller, Some(from)).await?;
            }
            let read_at = t.updated_at;
            patch.clone().apply_to(&mut t);
            t.updated_at = crate::model::updated_after(read_at, self.clock.now());
            let mut changes = ChangeSet::new();
            changes.push(Write::GuardTemplate {
                workspace_id: t.workspace_id.clone(),
                id: t.id.clone(),
                updated_at: read_at,
            });
            changes.push(Write::PutTemplate(t.clone()));
            self.store.commit(changes).await?;
            Ok(t)
        })
        .await
    }

    /// `DELETE /templates/{id}`.
    /// Refused (409) while a workflow step sends the template.
    pub async fn delete_template(&self, caller: &Caller, id: &TemplateId) -> Result<()> {
        let t = self.template(caller, id).await?;
        Self::check_template_scope(caller, &t)?;
        if self
            .store
            .template_in_workflows(&t.workspace_id, &t.id)
            .await?
        {
            return Err(Error::Conflict(
                "a workflow step sends this template; change or delete that step first".into(),
            ));
        }
        let mut changes = ChangeSet::new();
        changes.push(Write::DeleteTemplate {
            workspace_id: t.workspace_id,
            id: t.id,
        });
        self.store.commit(changes).await?;
        Ok(())
    }

    /// `GET /templates`: a page, filtered by `type` and `search`.
    pub async fn list_templates(
        &self,
        caller: &Caller,
        query: ListTemplates,
    ) -> Result<TemplatePage> {
        let PageRequest { page, page_size } = query.page;
        check_page(&query.page)?;
        let template_type = query.template_type;
        let search = query
            .search
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

/// The cursor of page `page` of a page-style list.
pub fn encode_page_cursor(page: u64) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("page:{page}"))
}

/// The page a cursor made by [`encode_page_cursor`] points at.
pub fn decode_page_cursor(raw: &str) -> Option<u64> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(raw)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    text.strip_prefix("page:")?
        .parse()
        .ok()
        .filter(|p| (1..=super::page::MAX_PAGE).contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_text_body_is_checked_as_a_template() {
        let mut cmd = CreateTemplate::new("n", "s", "b", TemplateType::Transactional);
        cmd.text = Some("Hi {{name}}".into());
        assert!(cmd.validate().is_ok());
        cmd.text = Some("Hi {{ oops".into());
        let Err(Error::Validation(errors)) = cmd.validate() else {
            panic!("a broken text body is refused");
        };
        assert_eq!(errors[0].field, "text");
        let patch = TemplatePatch {
            text: Patch::Set("{% if %}".into()),
            ..TemplatePatch::default()
        };
        assert!(patch.validate().is_err());
    }
}
