//! About thirty representative error bodies, compared with the ones recorded in
//! `snapshots/errors.json`, so that every change of what a client sees shows in review.
//!
//! Request ids, timestamps and generated ids are replaced by placeholders. To record again
//! after a deliberate change: `POSTHORN_UPDATE_SNAPSHOTS=1 cargo test -p posthorn-server
//! --test api error_bodies_match_the_snapshot`, then review the diff.

use std::collections::BTreeMap;

use axum::http::Method;
use regex::Regex;
use serde_json::{json, Value};

use crate::harness::{send_body, TestApp, ADMIN};

const SNAPSHOT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/api/snapshots/errors.json"
);

/// How a case authenticates.
#[derive(Clone, Copy)]
enum Auth {
    Secret,
    Public,
    Admin,
    None,
    Bogus,
}

struct Case {
    name: &'static str,
    method: Method,
    path: String,
    auth: Auth,
    /// A JSON body, or raw text with its content type.
    body: Option<Value>,
    raw: Option<(&'static str, &'static str)>,
    headers: Vec<(&'static str, &'static str)>,
}

fn case(name: &'static str, method: Method, path: impl Into<String>, body: Option<Value>) -> Case {
    Case {
        name,
        method,
        path: path.into(),
        auth: Auth::Secret,
        body,
        raw: None,
        headers: Vec::new(),
    }
}

impl Case {
    fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    fn raw(mut self, content_type: &'static str, text: &'static str) -> Self {
        self.raw = Some((content_type, text));
        self
    }

    fn header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.push((name, value));
        self
    }
}

async fn cases(app: &TestApp) -> Vec<Case> {
    let contact = app
        .post("/contacts", json!({"email": "snap@example.org"}))
        .await
        .expect(201);
    let contact_id = contact.body["id"].as_str().expect("contact id").to_string();
    let dynamic = app
        .post(
            "/segments",
            json!({"name": "Pro", "condition": {"logic": "AND", "groups": [{"filters": [
                {"field": "data.plan", "operator": "equals", "value": "pro"}]}]}}),
        )
        .await
        .expect(201);
    let segment_id = dynamic.body["id"].as_str().expect("segment id").to_string();
    let campaign = app
        .post(
            "/campaigns",
            json!({"name": "C", "subject": "S", "body": "<p>B</p>", "from": "hi@example.com",
                   "audienceType": "ALL"}),
        )
        .await
        .expect(201);
    let campaign_id = campaign.body["data"]["id"]
        .as_str()
        .expect("campaign id")
        .to_string();
    let unknown = "0190a0a0-0000-7000-8000-000000000000";
    let many: Vec<String> = (0..51).map(|i| format!("r{i}@example.org")).collect();
    vec![
        case("send_empty_body", Method::POST, "/v1/send", Some(json!({}))),
        case(
            "send_51_recipients",
            Method::POST,
            "/v1/send",
            Some(send_body(json!(many))),
        ),
        case(
            "send_bad_addresses",
            Method::POST,
            "/v1/send",
            Some(
                json!({"to": ["ok@example.org", "nope"], "from": "not an address",
                        "subject": "s", "body": "b"}),
            ),
        ),
        case(
            "send_header_injection",
            Method::POST,
            "/v1/send",
            Some(
                json!({"to": "a@example.org", "from": "hi@example.com", "subject": "s",
                        "body": "b", "headers": {"X-Ok": "a\r\nBcc: evil@example.org"}}),
            ),
        ),
        case(
            "send_bad_attachment",
            Method::POST,
            "/v1/send",
            Some(
                json!({"to": "a@example.org", "from": "hi@example.com", "subject": "s",
                        "body": "b", "attachments": [{"filename": "a.txt",
                        "content": "***not base64***", "contentType": "text/plain"}]}),
            ),
        ),
        case(
            "send_unverified_domain",
            Method::POST,
            "/v1/send",
            Some(json!({"to": "a@example.org", "from": "hi@unverified.test",
                        "subject": "s", "body": "b"})),
        ),
        case(
            "send_subject_line_break",
            Method::POST,
            "/v1/send",
            Some(json!({"to": "a@example.org", "from": "hi@example.com",
                        "subject": "a\nb", "body": "b"})),
        ),
        case(
            "track_reserved_event",
            Method::POST,
            "/v1/track",
            Some(json!({"email": "a@example.org", "event": "email.sent"})),
        ),
        case(
            "track_missing_fields",
            Method::POST,
            "/v1/track",
            Some(json!({"data": 3})),
        ),
        case(
            "verify_missing_email",
            Method::POST,
            "/v1/verify",
            Some(json!({})),
        ),
        case(
            "contact_bad_email",
            Method::POST,
            "/contacts",
            Some(json!({"email": "x"})),
        ),
        case(
            "contact_patch_wrong_types",
            Method::PATCH,
            format!("/contacts/{contact_id}"),
            Some(json!({"subscribed": "yes", "data": [1]})),
        ),
        case(
            "contacts_limit_too_large",
            Method::GET,
            "/contacts?limit=101",
            None,
        ),
        case(
            "contacts_garbage_cursor",
            Method::GET,
            "/contacts?cursor=%%%garbage",
            None,
        ),
        case(
            "contact_unknown",
            Method::GET,
            format!("/contacts/{unknown}"),
            None,
        ),
        case(
            "template_empty",
            Method::POST,
            "/templates",
            Some(json!({})),
        ),
        case(
            "template_wrong_type",
            Method::POST,
            "/templates",
            Some(json!({"name": "n", "subject": "s", "body": "b", "type": "WRONG"})),
        ),
        case(
            "templates_page_size_zero",
            Method::GET,
            "/templates?pageSize=0",
            None,
        ),
        case(
            "segment_bad_condition",
            Method::POST,
            "/segments",
            Some(
                json!({"name": "S", "condition": {"logic": "XOR", "groups": [{"filters": [
                {"field": "nope", "operator": "equals"}]}]}}),
            ),
        ),
        case(
            "segment_members_on_dynamic",
            Method::POST,
            format!("/segments/{segment_id}/members"),
            Some(json!({"emails": ["snap@example.org"]})),
        ),
        case(
            "campaign_empty",
            Method::POST,
            "/campaigns",
            Some(json!({})),
        ),
        case(
            "campaign_segment_without_id",
            Method::POST,
            "/campaigns",
            Some(
                json!({"name": "C", "subject": "S", "body": "B", "from": "hi@example.com",
                        "audienceType": "SEGMENT"}),
            ),
        ),
        case(
            "campaign_cancel_draft",
            Method::POST,
            format!("/campaigns/{campaign_id}/cancel"),
            None,
        ),
        case(
            "campaign_send_in_the_past",
            Method::POST,
            format!("/campaigns/{campaign_id}/send"),
            Some(json!({"scheduledFor": "2001-01-01T00:00:00Z"})),
        ),
        case(
            "keys_bad_domain",
            Method::POST,
            "/keys",
            Some(json!({"domains": ["not a domain"]})),
        ),
        case("malformed_json", Method::POST, "/contacts", None)
            .raw("application/json", "{\"email\": "),
        case("wrong_content_type", Method::POST, "/contacts", None)
            .raw("text/plain", "email=a@example.org"),
        case("unknown_route", Method::GET, "/nope", None),
        case(
            "method_not_allowed",
            Method::PUT,
            "/v1/send",
            Some(json!({})),
        ),
        case("missing_auth", Method::GET, "/contacts", None).auth(Auth::None),
        case("unknown_key", Method::GET, "/contacts", None).auth(Auth::Bogus),
        case("public_key_on_secret_route", Method::GET, "/contacts", None).auth(Auth::Public),
        case(
            "admin_workspace_empty",
            Method::POST,
            "/admin/workspaces",
            Some(json!({})),
        )
        .auth(Auth::Admin),
        case(
            "idempotency_key_invalid",
            Method::POST,
            "/contacts",
            Some(json!({"email": "i@example.org"})),
        )
        .header("idempotency-key", ""),
    ]
}

/// The body with what changes from run to run replaced by placeholders.
fn normalized(status: u16, body: &Value) -> Value {
    let uuid = Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        .expect("uuid pattern");
    let mut body = body.clone();
    if body["error"].get("requestId").is_some() {
        body["error"]["requestId"] = json!("<requestId>");
    }
    if body.get("timestamp").is_some() {
        body["timestamp"] = json!("<timestamp>");
    }
    let text = uuid.replace_all(&body.to_string(), "<uuid>").into_owned();
    json!({"status": status, "body": serde_json::from_str::<Value>(&text).unwrap_or(body)})
}

#[tokio::test]
async fn error_bodies_match_the_snapshot() {
    let app = TestApp::new().await;
    let mut seen = BTreeMap::new();
    for c in cases(&app).await {
        let bearer = match c.auth {
            Auth::Secret => Some(app.sk.clone()),
            Auth::Public => Some(app.pk.clone()),
            Auth::Admin => Some(ADMIN.to_string()),
            Auth::None => None,
            Auth::Bogus => Some(format!("sk_{}", "0".repeat(64))),
        };
        let res = match c.raw {
            Some((content_type, text)) => {
                app.raw(
                    c.method,
                    &c.path,
                    bearer.as_deref(),
                    Some(text),
                    Some(content_type),
                    &c.headers,
                )
                .await
            }
            None => {
                app.call(c.method, &c.path, bearer.as_deref(), c.body, &c.headers)
                    .await
            }
        };
        let status = res.status.as_u16();
        assert!(
            (400..500).contains(&status),
            "{}: expected an error, got {status} {}",
            c.name,
            res.body
        );
        assert!(
            seen.insert(c.name, normalized(status, &res.body)).is_none(),
            "{} twice",
            c.name
        );
    }
    let recorded = serde_json::to_string_pretty(&seen).expect("snapshot JSON") + "\n";
    if std::env::var("POSTHORN_UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::write(SNAPSHOT, &recorded).expect("writing the snapshot");
        return;
    }
    let expected = std::fs::read_to_string(SNAPSHOT).expect("reading snapshots/errors.json");
    let expected: BTreeMap<String, Value> =
        serde_json::from_str(&expected).expect("snapshots/errors.json is JSON");
    let mut differences = Vec::new();
    for (name, now) in &seen {
        match expected.get(*name) {
            Some(before) if before == now => {}
            Some(before) => {
                differences.push(format!("{name}:\n  before: {before}\n  now:    {now}"))
            }
            None => differences.push(format!("{name}: not in the snapshot (now {now})")),
        }
    }
    for name in expected.keys() {
        if !seen.contains_key(name.as_str()) {
            differences.push(format!("{name}: in the snapshot but no longer checked"));
        }
    }
    assert!(
        differences.is_empty(),
        "error bodies differ from snapshots/errors.json (record again only for a deliberate \
         change):\n{}",
        differences.join("\n")
    );
}
