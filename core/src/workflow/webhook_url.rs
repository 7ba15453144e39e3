//! Webhook URLs with variables: the scheme and host are fixed by the step's author, and a
//! variable's value is percent-encoded wherever it lands (path or query), so data can never
//! change where a request goes.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value;

use crate::render::{render, Escape, RenderError};

/// Everything but the unreserved characters of RFC 3986 (`A-Z a-z 0-9 - . _ ~`).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Why a URL template cannot be used, or `None` when it can: the scheme must be `http` or
/// `https` and the host (with user info and port) must not contain a variable.
pub fn url_template_problem(template: &str) -> Option<String> {
    let lower = template.trim_start().to_ascii_lowercase();
    let rest = if lower.starts_with("https://") {
        &template.trim_start()[8..]
    } else if lower.starts_with("http://") {
        &template.trim_start()[7..]
    } else {
        return Some("url must start with http:// or https://".into());
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    if authority.is_empty() {
        return Some("url has no host".into());
    }
    if authority.contains('{') || authority.contains('}') {
        return Some(
            "variables are not allowed in the host of a url; use them in the path or query".into(),
        );
    }
    crate::render::validate(template)
        .err()
        .map(|e| e.to_string())
}

/// Renders a URL template, percent-encoding every string the variables put into it.
pub fn render_url(template: &str, context: &Value) -> Result<String, RenderError> {
    render(template, &encode_strings(context), Escape::None)
}

/// `value` with every string leaf percent-encoded.
fn encode_strings(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(utf8_percent_encode(s, COMPONENT).to_string()),
        Value::Array(items) => Value::Array(items.iter().map(encode_strings).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), encode_strings(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variables_are_encoded_and_never_reach_the_host() {
        let ctx = json!({"event": {"q": "a b/../?x=1&y#z", "n": 5}});
        assert_eq!(
            render_url("https://hooks.example/p/{{event.q}}?v={{event.q}}&n={{event.n}}", &ctx).ok(),
            Some("https://hooks.example/p/a%20b%2F..%2F%3Fx%3D1%26y%23z?v=a%20b%2F..%2F%3Fx%3D1%26y%23z&n=5".into())
        );
        assert!(url_template_problem("https://{{event.host}}/x").is_some());
        assert!(url_template_problem("https://a.example:{{event.port}}/x").is_some());
        assert!(url_template_problem("ftp://a.example/x").is_some());
        assert!(url_template_problem("https:///x").is_some());
        assert_eq!(
            url_template_problem("HTTPS://a.example/{{event.id}}?x={{email}}"),
            None
        );
    }
}
