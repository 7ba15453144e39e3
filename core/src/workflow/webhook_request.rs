//! Builds the HTTP request of a WEBHOOK step: URL, headers and body rendered with the
//! execution's variables, escaped for where they land, and the stable `webhook-id`.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::variables::{contact_value, render_json};
use super::webhook_url::{render_url, url_template_problem};
use super::{Execution, Workflow};
use crate::model::{Contact, ExecutionId, StepId};
use crate::ports::{WebhookMethod, WebhookRequest};
use crate::render::{render, Escape};

/// Why a webhook request cannot be built (a final failure of the step: retrying renders the
/// same thing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookBuildError {
    /// The URL is not an http(s) URL with a fixed host, or did not render.
    #[error("webhook url: {0}")]
    Url(String),
    /// A header value did not render, or rendered with a line break.
    #[error("webhook header {0}: {1}")]
    Header(String, String),
    /// The body did not render.
    #[error("webhook body: {0}")]
    Body(String),
    /// The method is not one a webhook may use.
    #[error("{0}")]
    Method(String),
}

/// The `webhook-id` of one step of one execution: the same for every attempt and after a
/// crash, so receivers can deduplicate.
pub fn webhook_id(execution_id: &ExecutionId, step_id: &StepId) -> String {
    let digest = Sha256::new()
        .chain_update(execution_id.as_str())
        .chain_update(".")
        .chain_update(step_id.as_str())
        .finalize();
    format!("msg_{}", &hex::encode(digest)[..32])
}

/// The body sent when a step has none: `contact`, `workflow`, `execution` and `event`.
pub fn default_body(workflow: &Workflow, execution: &Execution, contact: &Contact) -> Value {
    let mut contact = contact_value(contact);
    if let Value::Object(m) = &mut contact {
        m.remove("id");
    }
    json!({
        "contact": contact,
        "workflow": {"id": workflow.id, "name": workflow.name},
        "execution": {
            "id": execution.id,
            "startedAt": crate::model::timestamp::format(&execution.started_at),
        },
        "event": execution.event,
    })
}

/// What a WEBHOOK step's configuration says, before rendering.
#[derive(Debug, Clone, Copy)]
pub struct WebhookConfig<'a> {
    /// URL template.
    pub url: &'a str,
    /// Method, POST when absent.
    pub method: Option<&'a str>,
    /// Header templates.
    pub headers: &'a Map<String, Value>,
    /// Body template, or `None` for the default body.
    pub body: Option<&'a Value>,
}

/// Renders the request (without the signature headers, which are per attempt).
pub fn build_request(
    config: WebhookConfig<'_>,
    context: &Value,
    default: impl FnOnce() -> Value,
) -> Result<WebhookRequest, WebhookBuildError> {
    if let Some(problem) = url_template_problem(config.url) {
        return Err(WebhookBuildError::Url(problem));
    }
    let url = render_url(config.url, context).map_err(|e| WebhookBuildError::Url(e.to_string()))?;
    let method: WebhookMethod = match config.method {
        Some(m) => m
            .parse()
            .map_err(|e: crate::ports::UnknownMethod| WebhookBuildError::Method(e.to_string()))?,
        None => WebhookMethod::Post,
    };
    let mut headers = Vec::with_capacity(config.headers.len() + 1);
    let mut has_content_type = false;
    for (name, value) in config.headers {
        let source = value.as_str().unwrap_or_default();
        let rendered = render(source, context, Escape::None)
            .map_err(|e| WebhookBuildError::Header(name.clone(), e.to_string()))?;
        if rendered
            .chars()
            .any(|c| c == '\r' || c == '\n' || (c.is_control() && c != '\t'))
        {
            return Err(WebhookBuildError::Header(
                name.clone(),
                "the rendered value contains a line break or control character".into(),
            ));
        }
        has_content_type |= name.eq_ignore_ascii_case("content-type");
        headers.push((name.clone(), rendered));
    }
    let body = match config.body {
        Some(template) => {
            render_json(template, context).map_err(|e| WebhookBuildError::Body(e.to_string()))?
        }
        None => default(),
    };
    let body = if method == WebhookMethod::Get {
        Vec::new()
    } else {
        if !has_content_type {
            headers.push(("content-type".into(), "application/json".into()));
        }
        serde_json::to_vec(&body).map_err(|e| WebhookBuildError::Body(e.to_string()))?
    };
    Ok(WebhookRequest {
        method,
        url,
        headers,
        body,
        timeout: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config<'a>(
        url: &'a str,
        headers: &'a Map<String, Value>,
        body: Option<&'a Value>,
    ) -> WebhookConfig<'a> {
        WebhookConfig {
            url,
            method: None,
            headers,
            body,
        }
    }

    #[test]
    fn body_strings_are_json_escaped_and_lone_placeholders_keep_their_type() {
        let ctx = json!({"event": {"amount": 12.5, "tags": ["a"], "note": "say \"hi\"\n"}, "email": "a@b.example"});
        let body = json!({"total": "{{event.amount}}", "tags": "{{ event.tags }}", "text": "{{event.note}} to {{email}}", "n": 1, "missing": "{{event.nope}}"});
        let headers = Map::new();
        let request = build_request(
            config("https://h.example/x", &headers, Some(&body)),
            &ctx,
            || Value::Null,
        )
        .expect("renders");
        let sent: Value = serde_json::from_slice(&request.body).expect("json body");
        assert_eq!(
            sent,
            json!({"total": 12.5, "tags": ["a"], "text": "say \"hi\"\n to a@b.example", "n": 1, "missing": null})
        );
        assert!(request
            .headers
            .contains(&("content-type".into(), "application/json".into())));
    }

    #[test]
    fn a_header_value_cannot_gain_a_line_break() {
        let ctx = json!({"event": {"v": "x\r\nX-Evil: 1"}});
        let mut headers = Map::new();
        headers.insert("X-Id".into(), json!("{{event.v}}"));
        let result = build_request(config("https://h.example/x", &headers, None), &ctx, || {
            json!({})
        });
        assert!(matches!(result, Err(WebhookBuildError::Header(name, _)) if name == "X-Id"));
        headers.insert("X-Id".into(), json!("id-{{event.w ?? 'none'}}"));
        let ok = build_request(config("https://h.example/x", &headers, None), &ctx, || {
            json!({})
        });
        assert!(ok.is_ok_and(|r| r.headers[0] == ("X-Id".into(), "id-none".into())));
    }

    #[test]
    fn the_webhook_id_is_stable_per_step_execution() {
        let a = webhook_id(&ExecutionId::from("e1"), &StepId::from("s1"));
        assert_eq!(a, webhook_id(&ExecutionId::from("e1"), &StepId::from("s1")));
        assert_ne!(a, webhook_id(&ExecutionId::from("e1"), &StepId::from("s2")));
        assert!(a.starts_with("msg_"));
    }
}
