//! The OpenAPI document: valid 3.x JSON, listing exactly the operations the real router
//! serves, with response schemas that the real handlers' answers satisfy and request schemas
//! that the accepted requests satisfy.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use chrono::{TimeZone, Utc};
use http_body_util::BodyExt;
use posthorn_core::app::sns::SnsReceiver;
use posthorn_core::model::{ContactId, EmailId, WorkspaceId};
use posthorn_core::ports::{
    ChangeSet, JobPayload, Jobs, ManualClock, NewJob, RecordKind, Store, Write,
};
use posthorn_core::ports::{SnsFetchError, SnsFetcher};
use posthorn_core::sns::{AllowedUrl, SnsHostRules, TopicAllowList};
use posthorn_core::tracking::{LinkToken, TRACKING_SECRET};
use posthorn_core::{Engine, Settings};
use posthorn_dns::StaticDns;
use posthorn_memory::{CapturingTransport, MemoryCache, MemoryRateLimiter, MemoryStore};
use posthorn_server::http::openapi;
use posthorn_server::{router, AppState};
use serde_json::{json, Value};
use tower::ServiceExt;

#[path = "api/sns_signer.rs"]
mod sns_signer;

const ADMIN: &str = "admin-token-for-openapi-tests";
/// Methods probed on every listed path.
const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];
/// Stands in for `{id}` and other path parameters.
const SOME_ID: &str = "00000000-0000-7000-8000-000000000000";

// ---------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------

fn start() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0)
        .single()
        .expect("date")
}

fn engine() -> Engine {
    engine_on(Arc::new(MemoryStore::new()))
}

fn engine_on(store: Arc<MemoryStore>) -> Engine {
    let start = start();
    Engine {
        store: store.clone(),
        jobs: store,
        transport: Arc::new(CapturingTransport::new()),
        clock: Arc::new(ManualClock::new(start)),
        dns: Arc::new(
            StaticDns::new()
                .with_mail_domain("gmail.com")
                .with_mail_domain("example.com")
                .with("nomail.io", RecordKind::A, ["192.0.2.1"]),
        ),
        rate_limiter: Arc::new(MemoryRateLimiter::new()),
        cache: Arc::new(MemoryCache::new()),
        webhooks: std::sync::Arc::new(posthorn_core::ports::RefusingWebhookSink),
        inbound: Default::default(),
        settings: Settings::default(),
    }
}

fn app() -> Router {
    router(AppState::new(engine(), Some(ADMIN.to_string())))
}

#[derive(Debug)]
struct Res {
    status: StatusCode,
    headers: HeaderMap,
    /// The body as JSON; `Null` when empty.
    body: Value,
}

async fn send(
    app: &Router,
    method: &str,
    uri: &str,
    bearer: Option<&str>,
    body: Option<&str>,
) -> Res {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(token) = bearer {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    if body.is_some() {
        // The one endpoint whose body is not JSON: a raw message relayed by an MTA.
        let content_type = if uri.starts_with("/inbound/raw") {
            "message/rfc822"
        } else {
            "application/json"
        };
        req = req.header("content-type", content_type);
    }
    let req = req
        .body(Body::from(body.unwrap_or("").to_string()))
        .expect("request");
    let res = app.clone().oneshot(req).await.expect("infallible");
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        let json = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_none_or(|ct| ct.starts_with("application/json"));
        if json {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| panic!("{method} {uri}: body is not JSON: {bytes:?}"))
        } else {
            // Images and pages: kept as text, checked by content type only.
            Value::String(String::from_utf8_lossy(&bytes).into_owned())
        }
    };
    Res {
        status,
        headers,
        body,
    }
}

fn doc() -> Value {
    serde_json::from_str(openapi::json()).expect("the document is JSON")
}

/// The methods the document gives `path`, upper case.
fn doc_methods(doc: &Value, path: &str) -> BTreeSet<String> {
    doc["paths"][path]
        .as_object()
        .map(|item| {
            item.keys()
                .filter(|k| METHODS.iter().any(|m| m.eq_ignore_ascii_case(k)))
                .map(|k| k.to_ascii_uppercase())
                .collect()
        })
        .unwrap_or_default()
}

/// Every (path, METHOD) the document lists.
fn operations(doc: &Value) -> Vec<(String, String)> {
    let mut ops = Vec::new();
    for path in doc["paths"].as_object().expect("paths").keys() {
        for method in doc_methods(doc, path) {
            ops.push((path.clone(), method));
        }
    }
    ops
}

/// `/contacts/{id}` with every `{param}` replaced by [`SOME_ID`].
fn concrete(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .map(|c| open + c)
            .expect("closing brace");
        out.push_str(SOME_ID);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------------------------------
// The document and the list
// ---------------------------------------------------------------------------------------

#[test]
fn document_is_openapi_3_json() {
    let doc = doc();
    let version = doc["openapi"].as_str().expect("openapi is a string");
    assert!(version.starts_with("3."), "openapi is {version}");
    assert!(doc["info"]["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(doc["paths"].as_object().is_some_and(|p| !p.is_empty()));
    if let Ok(path) = std::env::var("POSTHORN_DUMP_OPENAPI") {
        std::fs::write(path, openapi::json()).expect("dump");
    }
    // Cached: the same string every time.
    assert!(std::ptr::eq(openapi::json(), openapi::json()));
}

#[test]
fn operations_have_security_params_and_error_envelope() {
    let doc = doc();
    let schemes = doc["components"]["securitySchemes"]
        .as_object()
        .expect("security schemes");
    for name in ["secretKey", "publicKey", "adminToken"] {
        assert_eq!(schemes[name]["scheme"], json!("bearer"), "{name}");
    }
    let mut operation_ids = HashSet::new();
    for (path, method) in operations(&doc) {
        let path = path.as_str();
        {
            let op = &doc["paths"][path][method.to_ascii_lowercase()];
            let what = format!("{method} {path}");
            let id = op["operationId"].as_str().expect("operationId");
            assert!(
                operation_ids.insert(id.to_string()),
                "{what}: operationId {id} reused"
            );
            assert!(
                op["summary"].as_str().is_some_and(|s| !s.is_empty()),
                "{what}: summary"
            );

            let security: Vec<Vec<String>> = op["security"]
                .as_array()
                .map(|reqs| {
                    reqs.iter()
                        .map(|r| {
                            r.as_object()
                                .map(|o| o.keys().cloned().collect())
                                .unwrap_or_default()
                        })
                        .collect()
                })
                .unwrap_or_default();
            let expected: Vec<Vec<&str>> = match path {
                "/health" | "/openapi.json" => vec![],
                p if is_link(p) || is_provider(p) => vec![],
                "/v1/track" => vec![vec!["publicKey"], vec!["secretKey"]],
                p if p.starts_with("/admin/") => vec![vec!["adminToken"]],
                _ => vec![vec!["secretKey"]],
            };
            assert_eq!(security, expected, "{what}: security");

            // Every `{param}` is declared as a required path parameter.
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            for segment in path.split('/').filter(|s| s.starts_with('{')) {
                let name = segment.trim_matches(|c| c == '{' || c == '}');
                assert!(
                    params.iter().any(|p| p["name"] == json!(name)
                        && p["in"] == json!("path")
                        && p["required"] == json!(true)),
                    "{what}: path parameter {name}"
                );
            }

            let responses = op["responses"].as_object().expect("responses");
            // The click redirect's success is its 302.
            assert!(
                responses
                    .keys()
                    .any(|s| s.starts_with('2') || is_link(path) && s == "302"),
                "{what}: a 2xx response"
            );
            let needs_key = !matches!(path, "/health" | "/openapi.json")
                && !is_link(path)
                && !is_provider(path);
            if needs_key {
                for status in ["401", "500"] {
                    assert!(
                        responses.contains_key(status),
                        "{what}: {status} documented"
                    );
                }
            }
            for (status, response) in responses {
                if status.starts_with('4') || status.starts_with('5') && status != "503" {
                    assert_eq!(
                        response["content"]["application/json"]["schema"]["$ref"],
                        json!("#/components/schemas/ErrorResponse"),
                        "{what}: {status} uses the error envelope"
                    );
                }
            }
        }
    }
}

#[test]
fn error_envelope_schema_has_the_spec_fields() {
    let doc = doc();
    let schemas = &doc["components"]["schemas"];
    let required = |name: &str| -> BTreeSet<String> {
        schemas[name]["required"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(
        required("ErrorResponse"),
        set(&["success", "error", "timestamp"])
    );
    assert_eq!(
        required("ErrorBody"),
        set(&["code", "message", "statusCode", "requestId", "suggestion"])
    );
    assert!(schemas["ErrorBody"]["properties"].get("errors").is_some());
    assert_eq!(required("FieldError"), set(&["field", "message", "code"]));
}

// ---------------------------------------------------------------------------------------
// The document and the router
// ---------------------------------------------------------------------------------------

/// Every documented (path, method) reaches a handler or its auth layer, and every other
/// method on a documented path is refused with 405: the router serves exactly the
/// documented methods of every documented path.
#[tokio::test]
async fn every_documented_operation_is_in_the_router_with_exactly_its_methods() {
    let app = app();
    let doc = doc();
    let paths: Vec<String> = doc["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .cloned()
        .collect();
    assert!(paths.len() >= 28, "only {} paths documented", paths.len());
    for path in &paths {
        let methods = doc_methods(&doc, path);
        let uri = concrete(path);
        for method in METHODS {
            let res = send(&app, method, &uri, None, None).await;
            let unknown_route = res.status == StatusCode::NOT_FOUND
                && res.body["error"]["code"] == json!("NOT_FOUND");
            if methods.contains(*method) {
                assert!(
                    !unknown_route,
                    "{method} {path}: the router has no such route: {}",
                    res.body
                );
                assert_ne!(
                    res.status,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{method} {path}: 405"
                );
                let expected: &[u16] = match path.as_str() {
                    "/health" => &[200, 503],
                    "/openapi.json" => &[200],
                    // A made-up token.
                    p if is_link(p) => &[404],
                    // No SNS receiver in this app: every message is refused.
                    p if is_provider(p) => &[403],
                    _ => &[401],
                };
                assert!(
                    expected.contains(&res.status.as_u16()),
                    "{method} {path} without a key gave {}: {}",
                    res.status,
                    res.body
                );
            } else {
                assert_eq!(
                    res.status,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{method} {path} is not documented but the router answered {}: {}",
                    res.status,
                    res.body
                );
            }
        }
    }
    // The probe can tell: an unknown path is a 404 NOT_FOUND.
    let res = send(&app, "GET", "/no-such-route", None, None).await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    assert_eq!(res.body["error"]["code"], json!("NOT_FOUND"));
}

/// The operations the router's groups register with `routes!`, from their OpenAPI parts.
fn registered_operations() -> BTreeSet<(String, String)> {
    let mut registered = BTreeSet::new();
    for group in [
        posthorn_server::http::system_routes(),
        posthorn_server::http::link_routes(),
        posthorn_server::http::provider_routes(),
        posthorn_server::http::workspace_routes(),
        posthorn_server::http::admin_routes(),
    ] {
        let part = serde_json::to_value(group.into_openapi()).expect("group as JSON");
        for op in operations(&part) {
            assert!(registered.insert(op.clone()), "{op:?} registered twice");
        }
    }
    registered
}

/// The router is built from these groups only, and the document lists exactly the
/// operations they register: nothing documented that is not served, nothing served that is
/// not documented.
#[test]
fn the_router_groups_are_the_documented_operations() {
    let documented: BTreeSet<(String, String)> = operations(&doc()).into_iter().collect();
    let registered = registered_operations();
    assert_eq!(
        documented.difference(&registered).collect::<Vec<_>>(),
        Vec::<&(String, String)>::new(),
        "documented but not registered"
    );
    assert_eq!(
        registered.difference(&documented).collect::<Vec<_>>(),
        Vec::<&(String, String)>::new(),
        "registered but not documented"
    );
    assert!(
        registered.len() >= 47,
        "only {} registered",
        registered.len()
    );
}

/// Every route is added with `routes!` on a documented handler: a route added with
/// `.route(...)` would be served without being in the document.
#[test]
fn no_route_is_added_outside_the_documented_groups() {
    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 10, "found only {} sources", files.len());
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read source");
        for needle in [".route(", ".nest("] {
            assert!(
                !text.contains(needle),
                "{} adds a route with `{needle}`; register it with `routes!` instead",
                file.display()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Real answers against the documented schemas
// ---------------------------------------------------------------------------------------

fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.strip_prefix("#/components/schemas/").expect("local $ref");
            let target = &doc["components"]["schemas"][name];
            assert!(!target.is_null(), "dangling $ref {r}");
            resolve(doc, target)
        }
        None => schema,
    }
}

/// Property names a schema allows (through `allOf`); `None` when it does not restrict them.
fn known_properties(doc: &Value, schema: &Value) -> Option<BTreeSet<String>> {
    let s = resolve(doc, schema);
    if let Some(parts) = s["allOf"].as_array() {
        let mut all = BTreeSet::new();
        for part in parts {
            all.extend(known_properties(doc, part)?);
        }
        return Some(all);
    }
    if s.get("additionalProperties").is_some() {
        return None;
    }
    s["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
}

fn type_matches(ty: &str, value: &Value) -> bool {
    match ty {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        other => panic!("unknown type {other}"),
    }
}

/// A small JSON Schema check covering what the document uses: `$ref`, `allOf`, `anyOf`, `oneOf`,
/// `type`, `enum`, `required`, `properties` (unknown properties are errors), `items`,
/// `additionalProperties`, `format` (date-time, email) and the numeric and size bounds.
fn validate(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    check(doc, schema, value, at, true, errors);
}

/// [`validate`]; `strict` refuses undocumented properties (off for the parts of an `allOf`,
/// whose union is checked instead).
fn check(
    doc: &Value,
    schema: &Value,
    value: &Value,
    at: &str,
    strict: bool,
    errors: &mut Vec<String>,
) {
    let s = resolve(doc, schema);
    if let Some(parts) = s["allOf"].as_array() {
        for part in parts {
            check(doc, part, value, at, false, errors);
        }
    }
    if let Some(choices) = s["anyOf"].as_array() {
        // A rule across fields: the choices name only the fields they are about.
        let matching = choices.iter().any(|c| {
            let mut e = Vec::new();
            check(doc, c, value, at, false, &mut e);
            e.is_empty()
        });
        if !matching {
            errors.push(format!("{at}: no anyOf choice matches {value}"));
        }
    }
    if let Some(choices) = s["oneOf"].as_array() {
        let matching = choices
            .iter()
            .filter(|c| {
                let mut e = Vec::new();
                validate(doc, c, value, at, &mut e);
                e.is_empty()
            })
            .count();
        if matching != 1 {
            errors.push(format!("{at}: {matching} oneOf choices match {value}"));
        }
    }
    if let Some(ty) = s.get("type") {
        let ok = match ty {
            Value::String(t) => type_matches(t, value),
            Value::Array(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| type_matches(t, value)),
            other => panic!("bad type {other}"),
        };
        if !ok {
            errors.push(format!("{at}: {value} is not of type {ty}"));
            return;
        }
    }
    if let Some(options) = s["enum"].as_array() {
        if !options.contains(value) {
            errors.push(format!("{at}: {value} not in {options:?}"));
        }
    }
    match value {
        Value::Object(obj) => {
            for key in s["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !obj.contains_key(key) {
                    errors.push(format!("{at}: required property {key} missing"));
                }
            }
            let props = &s["properties"];
            for (key, v) in obj {
                let child = format!("{at}.{key}");
                if let Some(p) = props.get(key) {
                    validate(doc, p, v, &child, errors);
                } else if let Some(extra) = s.get("additionalProperties").filter(|a| a.is_object())
                {
                    validate(doc, extra, v, &child, errors);
                }
            }
            if let Some(known) = known_properties(doc, schema).filter(|_| strict) {
                for key in obj.keys().filter(|k| !known.contains(*k)) {
                    errors.push(format!("{at}: property {key} is not documented"));
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    validate(doc, item_schema, item, &format!("{at}.{i}"), errors);
                }
            }
            if s["maxItems"]
                .as_u64()
                .is_some_and(|m| items.len() as u64 > m)
            {
                errors.push(format!("{at}: more than maxItems"));
            }
            if s["minItems"]
                .as_u64()
                .is_some_and(|m| (items.len() as u64) < m)
            {
                errors.push(format!("{at}: fewer than minItems"));
            }
        }
        Value::String(text) => {
            match s["format"].as_str() {
                Some("date-time") if chrono::DateTime::parse_from_rfc3339(text).is_err() => {
                    errors.push(format!("{at}: {text} is not a date-time"))
                }
                Some("email") if !text.contains('@') => {
                    errors.push(format!("{at}: {text} is not an email"))
                }
                _ => {}
            }
            // Patterns with look-around (which the regex crate lacks) are not checked here.
            if let Some(Ok(pattern)) = s["pattern"].as_str().map(regex::Regex::new) {
                if !pattern.is_match(text) {
                    errors.push(format!("{at}: {text:?} does not match {pattern}"));
                }
            }
            if s["minLength"]
                .as_u64()
                .is_some_and(|m| (text.chars().count() as u64) < m)
            {
                errors.push(format!("{at}: shorter than minLength"));
            }
            if s["maxLength"]
                .as_u64()
                .is_some_and(|m| text.chars().count() as u64 > m)
            {
                errors.push(format!("{at}: longer than maxLength"));
            }
        }
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or_default();
            if s["minimum"].as_f64().is_some_and(|m| n < m)
                || s["maximum"].as_f64().is_some_and(|m| n > m)
            {
                errors.push(format!("{at}: {n} out of range"));
            }
        }
        _ => {}
    }
}

/// Checks documented operations against real answers.
struct Checker {
    app: Router,
    doc: Value,
    /// (METHOD path) -> statuses seen.
    seen: BTreeMap<String, BTreeSet<u16>>,
    /// Operations whose request schema is generated from the wire type the handler reads
    /// (registered with `routes!`); accepted bodies must satisfy it.
    generated: BTreeSet<(String, String)>,
    /// Bodies of generated operations that were accepted, to send again broken.
    accepted: Vec<Accepted>,
}

/// A request a generated operation accepted.
struct Accepted {
    app: Router,
    method: String,
    template: String,
    uri: String,
    bearer: Option<String>,
    body: Value,
}

impl Checker {
    /// Sends the request to `concrete_uri` and checks the answer against `template`'s
    /// documented response for its status.
    async fn call(
        &mut self,
        method: &str,
        template: &str,
        concrete_uri: &str,
        bearer: Option<&str>,
        body: Option<Value>,
    ) -> Res {
        let raw = body.map(|b| b.to_string());
        self.call_raw(method, template, concrete_uri, bearer, raw.as_deref())
            .await
    }

    async fn call_raw(
        &mut self,
        method: &str,
        template: &str,
        concrete_uri: &str,
        bearer: Option<&str>,
        body: Option<&str>,
    ) -> Res {
        let res = send(&self.app, method, concrete_uri, bearer, body).await;
        let what = format!("{method} {template}");
        let status = res.status.as_u16();
        let op = &self.doc["paths"][template][method.to_ascii_lowercase()];
        assert!(op.is_object(), "{what} is not documented");
        // A request the handler accepted satisfies its documented request schema.
        let request_schema = &op["requestBody"]["content"]["application/json"]["schema"];
        let generated = self
            .generated
            .contains(&(template.to_string(), method.to_string()));
        if let (Some(raw), true) = (body, generated && (200..300).contains(&status)) {
            let sent: Value = serde_json::from_str(raw).unwrap_or(Value::Null);
            if !request_schema.is_null() && !sent.is_null() {
                let mut errors = Vec::new();
                check(&self.doc, request_schema, &sent, "$", false, &mut errors);
                assert!(
                    errors.is_empty(),
                    "{what}: accepted a body outside its schema: {errors:#?}\n{sent}"
                );
                self.accepted.push(Accepted {
                    app: self.app.clone(),
                    method: method.to_string(),
                    template: template.to_string(),
                    uri: concrete_uri.to_string(),
                    bearer: bearer.map(str::to_string),
                    body: sent,
                });
            }
        }
        let response = &op["responses"][status.to_string()];
        assert!(
            response.is_object(),
            "{what} answered {status}, which is not documented: {}",
            res.body
        );
        let schema = &response["content"]["application/json"]["schema"];
        let content_type = res
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(|ct| ct.split(';').next().unwrap_or(ct).trim().to_string());
        if let Some(ct) = content_type.filter(|ct| ct != "application/json") {
            assert!(
                response["content"][ct.as_str()].is_object(),
                "{what} {status}: {ct} not documented"
            );
        } else if res.body.is_null() {
            assert!(
                response.get("content").is_none(),
                "{what} {status}: documented with a body, got none"
            );
        } else {
            assert!(
                !schema.is_null(),
                "{what} {status}: body not documented: {}",
                res.body
            );
            let mut errors = Vec::new();
            validate(&self.doc, schema, &res.body, "$", &mut errors);
            assert!(
                errors.is_empty(),
                "{what} {status} does not match its schema: {errors:#?}\n{}",
                res.body
            );
        }
        if let Some(headers) = response["headers"].as_object() {
            for name in headers.keys() {
                assert!(
                    res.headers.contains_key(name.as_str()),
                    "{what} {status}: header {name} missing"
                );
            }
        }
        self.seen.entry(what).or_default().insert(status);
        res
    }

    #[track_caller]
    fn expect(res: &Res, status: u16) {
        assert_eq!(res.status.as_u16(), status, "{}", res.body);
    }
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{pointer} in {v}"))
}

/// `c.call(..)` then the status check: `call!(c, method, template, uri, bearer, body => 200)`.
macro_rules! call {
    ($c:ident, $($arg:expr),+ => $status:expr) => {{
        let res = $c.call($($arg),+).await;
        Checker::expect(&res, $status);
        res
    }};
}

/// [`call!`] with a raw body.
macro_rules! call_raw {
    ($c:ident, $($arg:expr),+ => $status:expr) => {{
        let res = $c.call_raw($($arg),+).await;
        Checker::expect(&res, $status);
        res
    }};
}

/// The links in sent mail: no key, the signed token is the authority.
fn is_link(path: &str) -> bool {
    path.starts_with("/t/") || path.starts_with("/unsubscribe/")
}

/// Provider notifications: no key, the message signature is the authority.
fn is_provider(path: &str) -> bool {
    path.starts_with("/webhooks/")
}

const SNS_TOPIC: &str = "arn:aws:sns:us-east-1:123456789012:ses-feedback";

/// Serves the test certificate and accepts every subscription, without any traffic.
struct FakeSnsFetcher;

#[async_trait::async_trait]
impl SnsFetcher for FakeSnsFetcher {
    async fn certificate(&self, _url: &AllowedUrl) -> Result<Vec<u8>, SnsFetchError> {
        Ok(sns_signer::SIGNER.1.clone().into_bytes())
    }

    async fn confirm_subscription(&self, _url: &AllowedUrl) -> Result<(), SnsFetchError> {
        Ok(())
    }
}

fn sns_receiver() -> SnsReceiver {
    SnsReceiver::new(
        Arc::new(FakeSnsFetcher),
        TopicAllowList::parse(SNS_TOPIC).expect("topic"),
        SnsHostRules::default(),
    )
}

#[tokio::test]
async fn real_answers_match_the_documented_schemas() {
    let store = Arc::new(MemoryStore::new());
    let mut c = Checker {
        app: router(
            AppState::new(engine_on(store.clone()), Some(ADMIN.to_string()))
                .with_sns(sns_receiver()),
        ),
        doc: doc(),
        seen: BTreeMap::new(),
        generated: registered_operations(),
        accepted: Vec::new(),
    };
    let admin = Some(ADMIN);

    // System.
    call!(c, "GET", "/health", "/health", None, None => 200);
    let res = call!(c, "GET", "/openapi.json", "/openapi.json", None, None => 200);
    assert_eq!(
        res.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    assert_eq!(res.body, doc());

    // Links in sent mail (tokens of records that need not exist: they are still valid).
    let key = store
        .ensure_secret(TRACKING_SECRET, b"openapi-test-key")
        .await
        .expect("secret");
    let sign = |t: LinkToken| t.sign(&key);
    let (w, e) = (WorkspaceId::from("w"), EmailId::from("e"));
    let open = format!(
        "/t/o/{}",
        sign(LinkToken::Open {
            workspace_id: w.clone(),
            email_id: e.clone()
        })
    );
    let res = call!(c, "GET", "/t/o/{token}", &open, None, None => 200);
    assert_eq!(res.headers["content-type"], "image/gif");
    call!(c, "GET", "/t/o/{token}", "/t/o/forged.token", None, None => 404);
    let click = LinkToken::Click {
        workspace_id: w.clone(),
        email_id: e,
        url: "https://a.example/".into(),
    };
    let click = format!("/t/c/{}", sign(click));
    call!(c, "GET", "/t/c/{token}", &click, None, None => 302);
    call!(c, "GET", "/t/c/{token}", "/t/c/forged.token", None, None => 404);
    let unsubscribe = LinkToken::Unsubscribe {
        workspace_id: w,
        contact_id: ContactId::from("c"),
        email_id: None,
    };
    let unsubscribe = format!("/unsubscribe/{}", sign(unsubscribe));
    call!(c, "GET", "/unsubscribe/{token}", &unsubscribe, None, None => 200);
    call!(c, "POST", "/unsubscribe/{token}", &unsubscribe, None, None => 200);
    call!(c, "POST", "/unsubscribe/{token}", "/unsubscribe/forged.token", None, None => 404);

    // Provider notifications: a subscription confirmation, signed as SNS signs.
    let mut confirm = json!({
        "Type": "SubscriptionConfirmation", "MessageId": "m-confirm", "Token": "t",
        "TopicArn": SNS_TOPIC, "Message": "You have chosen to subscribe",
        "SubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=t",
        "Timestamp": "2026-11-21T10:00:00.000Z",
        "SigningCertURL": "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem",
    });
    sns_signer::sign(&mut confirm, 2);
    let res =
        call!(c, "POST", "/webhooks/sns", "/webhooks/sns", None, Some(confirm.clone()) => 200);
    assert_eq!(str_at(&res.body, "/data/outcome"), "subscriptionConfirmed");
    let res =
        call!(c, "POST", "/webhooks/sns", "/webhooks/sns", None, Some(confirm.clone()) => 200);
    assert_eq!(str_at(&res.body, "/data/outcome"), "duplicate");
    confirm["TopicArn"] = json!("arn:aws:sns:us-east-1:999999999999:other");
    call!(c, "POST", "/webhooks/sns", "/webhooks/sns", None, Some(confirm) => 403);
    call!(c, "POST", "/webhooks/sns", "/webhooks/sns", None, Some(json!({})) => 400);

    // Operator API.
    let res = call!(c, "POST", "/admin/workspaces", "/admin/workspaces", admin, Some(json!({"name": "Acme", "activeContactLimit": null})) => 201);
    let ws = str_at(&res.body, "/workspace/id").to_string();
    let sk = str_at(&res.body, "/keySet/secretKey").to_string();
    let pk = str_at(&res.body, "/keySet/publicKey").to_string();
    let (sk, pk) = (Some(sk.as_str()), Some(pk.as_str()));
    let ws_path = format!("/admin/workspaces/{ws}");
    call!(c, "POST", "/admin/workspaces", "/admin/workspaces", Some("wrong"), Some(json!({"name": "x"})) => 401);
    call!(c, "POST", "/admin/workspaces", "/admin/workspaces", admin, Some(json!({})) => 422);
    let domains = format!("{ws_path}/domains");
    let body = json!({"domain": "example.com", "verified": true});
    let res = call!(c, "POST", "/admin/workspaces/{id}/domains", &domains, admin, Some(body.clone()) => 201);
    let example_domain = format!("/domains/{}", str_at(&res.body, "/id"));
    call!(c, "POST", "/admin/workspaces/{id}/domains", &domains, admin, Some(body) => 409);
    call!(c, "GET", "/admin/workspaces", "/admin/workspaces", admin, None => 200);
    call!(c, "GET", "/admin/workspaces/{id}", &ws_path, admin, None => 200);
    call!(c, "GET", "/admin/workspaces/{id}", "/admin/workspaces/nope", admin, None => 404);
    call!(c, "PATCH", "/admin/workspaces/{id}", &ws_path, admin, Some(json!({"rateLimitPerMinute": 5000, "activeContactLimit": 100})) => 200);
    let key_sets = format!("{ws_path}/key-sets");
    call!(c, "POST", "/admin/workspaces/{id}/key-sets", &key_sets, admin, Some(json!({"domains": ["example.com"]})) => 201);

    // Sending.
    call!(c, "POST", "/v1/send", "/v1/send", sk, Some(json!({ "to": ["ada@gmail.com", {"name": "Grace", "email": "grace@example.com"}], "from": {"name": "Acme", "email": "hello@example.com"}, "subject": "Hi {{name}}", "body": "<p>Hello {{name}}</p>", "data": {"name": "friend"}, "headers": {"X-Campaign": "spring"}, "reply": "support@example.com", "attachments": [{"filename": "a.txt", "content": "aGVsbG8=", "contentType": "text/plain"}] })) => 200);
    let send_body =
        |to: Value, from: &str| json!({"to": to, "from": from, "subject": "s", "body": "b"});
    call!(c, "POST", "/v1/send", "/v1/send", sk, Some(send_body( json!(["ok@x.com", {"email": "bad"}]), "hello@example.com", )) => 422);
    call!(c, "POST", "/v1/send", "/v1/send", sk, Some(send_body(json!("a@gmail.com"), "hello@unverified.org")) => 403);
    call!(c, "POST", "/v1/send", "/v1/send", pk, Some(send_body(json!("a@gmail.com"), "hello@example.com")) => 403);
    call!(c, "POST", "/v1/send", "/v1/send", sk, Some(json!({"to": "a@gmail.com", "template": SOME_ID})) => 404);
    call_raw!(c, "POST", "/v1/send", "/v1/send", sk, Some("{not json") => 400);

    call!(c, "POST", "/v1/track", "/v1/track", pk, Some(json!({"email": "ada@gmail.com", "event": "signup", "data": {"plan": "pro"}})) => 200);
    call!(c, "POST", "/v1/track", "/v1/track", pk, Some(json!({"email": "ada@gmail.com", "event": "email.sent"})) => 422);

    for email in ["ada@gmail.com", "not an address", "bob@nomail.io"] {
        call!(c, "POST", "/v1/verify", "/v1/verify", sk, Some(json!({"email": email})) => 200);
    }

    // Contacts.
    let res = call!(c, "POST", "/contacts", "/contacts", sk, Some(json!({"email": "new@example.com", "data": {"a": 1}})) => 201);
    let contact = format!("/contacts/{}", str_at(&res.body, "/id"));
    call!(c, "POST", "/contacts", "/contacts", sk, Some(json!({"email": "new@example.com", "subscribed": false})) => 200);
    let res = call!(c, "GET", "/contacts", "/contacts?limit=1", sk, None => 200);
    let cursor = str_at(&res.body, "/cursor").to_string();
    let res = call!(c, "GET", "/contacts", &format!("/contacts?limit=1&cursor={cursor}"), sk, None => 200);
    assert!(res.body.get("total").is_none());
    call!(c, "GET", "/contacts", "/contacts?limit=101", sk, None => 422);
    call!(c, "GET", "/contacts", "/contacts", None, None => 401);
    call!(c, "GET", "/contacts/{id}", &contact, sk, None => 200);
    call!(c, "GET", "/contacts/{id}", &format!("/contacts/{SOME_ID}"), sk, None => 404);
    call!(c, "PATCH", "/contacts/{id}", &contact, sk, Some(json!({"subscribed": true, "data": {"a": null}})) => 200);
    call!(c, "PATCH", "/contacts/{id}", &contact, sk, Some(json!({"email": "ada@gmail.com"})) => 409);
    call!(c, "DELETE", "/contacts/{id}", &contact, sk, None => 204);

    // Templates.
    let template = json!({"name": "Welcome", "subject": "Hi {{name}}", "body": "<p>Hi</p>", "type": "MARKETING", "from": "hello@example.com"});
    let res = call!(c, "POST", "/templates", "/templates", sk, Some(template) => 201);
    let tpl = format!("/templates/{}", str_at(&res.body, "/id"));
    call!(c, "POST", "/templates", "/templates", sk, Some(json!({"name": "x"})) => 422);
    call!(c, "GET", "/templates", "/templates?pageSize=1&type=MARKETING", sk, None => 200);
    call!(c, "GET", "/templates", "/templates?type=OTHER", sk, None => 422);
    call!(c, "GET", "/templates/{id}", &tpl, sk, None => 200);
    call!(c, "PATCH", "/templates/{id}", &tpl, sk, Some(json!({"description": "d", "text": null})) => 200);
    call!(c, "PUT", "/templates/{id}", &tpl, sk, Some(json!({"type": "TRANSACTIONAL"})) => 200);
    call!(c, "DELETE", "/templates/{id}", &tpl, sk, None => 204);
    call!(c, "GET", "/templates/{id}", &tpl, sk, None => 404);

    // Events.
    let res = call!(c, "GET", "/events", "/events?eventName=signup&limit=10", sk, None => 200);
    assert!(res.body["events"].as_array().is_some_and(|e| !e.is_empty()));
    call!(c, "GET", "/events", "/events?limit=0", sk, None => 422);
    call!(c, "GET", "/events", "/events", pk, None => 403);
    call!(c, "GET", "/events/names", "/events/names", sk, None => 200);
    call!(c, "GET", "/stats", "/stats", sk, None => 200);
    call!(c, "GET", "/stats", "/stats", pk, None => 403);

    // Segments.
    call!(c, "POST", "/contacts", "/contacts", sk, Some(json!({"email": "pro@example.com", "data": {"plan": "pro"}})) => 201);
    let condition = json!({"logic": "AND", "groups": [{
        "filters": [
            {"field": "data.plan", "operator": "equals", "value": "pro"},
            {"field": "createdAt", "operator": "within", "value": 30, "unit": "days"},
            {"field": "event.signup", "operator": "equals", "value": false}
        ],
        "conditions": {"logic": "or", "groups": [
            {"filters": [{"field": "email", "operator": "contains", "value": "example.com"}]},
            {"filters": [{"field": "data.plan", "operator": "exists"}]}
        ]}
    }]});
    let res = call!(c, "POST", "/segments", "/segments", sk, Some(json!({"name": "Pro users", "description": "d", "condition": condition, "trackMembership": true})) => 201);
    assert_eq!(res.body["memberCount"], json!(1));
    assert_eq!(
        res.body["condition"]["groups"][0]["conditions"]["logic"],
        json!("OR")
    );
    let dynamic = format!("/segments/{}", str_at(&res.body, "/id"));
    let res = call!(c, "POST", "/segments", "/segments", sk, Some(json!({"name": "Beta", "type": "STATIC"})) => 201);
    assert_eq!(res.body["condition"], Value::Null);
    let static_id = str_at(&res.body, "/id").to_string();
    let statik = format!("/segments/{static_id}");
    call!(c, "POST", "/segments", "/segments", sk, Some(json!({})) => 422);
    call!(c, "GET", "/segments", "/segments?page=1&pageSize=1", sk, None => 200);
    call!(c, "GET", "/segments", "/segments?pageSize=101", sk, None => 422);
    call!(c, "GET", "/segments/{id}", &dynamic, sk, None => 200);
    call!(c, "GET", "/segments/{id}", &format!("/segments/{SOME_ID}"), sk, None => 404);
    call!(c, "PATCH", "/segments/{id}", &dynamic, sk, Some(json!({"name": "Pro", "description": null})) => 200);
    call!(c, "PATCH", "/segments/{id}", &dynamic, sk, Some(json!({"type": "STATIC"})) => 422);
    call!(c, "PUT", "/segments/{id}", &dynamic, sk, Some(json!({"trackMembership": false})) => 200);
    call!(c, "GET", "/segments/{id}/contacts", &format!("{dynamic}/contacts?pageSize=10"), sk, None => 200);
    let members = format!("{statik}/members");
    let res = call!(c, "POST", "/segments/{id}/members", &members, sk, Some(json!({"emails": ["pro@example.com", "ghost@example.com"]})) => 200);
    assert_eq!(
        res.body,
        json!({"added": 1, "notFound": ["ghost@example.com"]})
    );
    let res = call!(c, "POST", "/segments/{id}/members", &members, sk, Some(json!({"emails": ["fresh@example.com"], "createMissing": true})) => 200);
    assert_eq!(res.body["created"], json!(1));
    call!(c, "POST", "/segments/{id}/members", &format!("{dynamic}/members"), sk, Some(json!({"emails": ["pro@example.com"]})) => 400);
    call!(c, "POST", "/segments/{id}/members", &members, sk, Some(json!({"emails": []})) => 422);
    let res = call!(c, "DELETE", "/segments/{id}/members", &members, sk, Some(json!({"emails": ["fresh@example.com", "ghost@example.com"]})) => 200);
    assert_eq!(res.body, json!({"removed": 1}));
    let res =
        call!(c, "GET", "/segments/{id}/contacts", &format!("{statik}/contacts"), sk, None => 200);
    assert_eq!(res.body["total"], json!(1));

    // Campaigns.
    let campaign = |audience: Value| {
        let mut body = json!({
            "name": "Autumn news", "subject": "Hi {{name}}", "body": "<p>News</p>",
            "from": "news@example.com", "fromName": "Acme News",
        });
        if let (Some(b), Some(a)) = (body.as_object_mut(), audience.as_object()) {
            b.extend(a.clone());
        }
        body
    };
    let res = call!(c, "POST", "/campaigns", "/campaigns", sk, Some(campaign(json!({"audienceType": "ALL"}))) => 201);
    let all = format!("/campaigns/{}", str_at(&res.body, "/data/id"));
    let res = call!(c, "POST", "/campaigns", "/campaigns", sk, Some(campaign( json!({"audienceType": "SEGMENT", "segmentId": static_id}), )) => 201);
    assert_eq!(res.body["data"]["segment"]["id"], json!(static_id));
    let by_segment = format!("/campaigns/{}", str_at(&res.body, "/data/id"));
    let res = call!(c, "POST", "/campaigns", "/campaigns", sk, Some(campaign( json!({"audienceType": "FILTERED", "audienceCondition": condition}), )) => 201);
    let filtered = format!("/campaigns/{}", str_at(&res.body, "/data/id"));
    call!(c, "POST", "/campaigns", "/campaigns", sk, Some(json!({})) => 422);
    call!(c, "POST", "/campaigns", "/campaigns", sk, Some(campaign( json!({"audienceType": "SEGMENT", "segmentId": "nope"}), )) => 404);
    call!(c, "POST", "/campaigns", "/campaigns", sk, Some(campaign(json!({"audienceType": "FILTERED"}))) => 400);
    call!(c, "GET", "/campaigns", "/campaigns?status=DRAFT&pageSize=2", sk, None => 200);
    call!(c, "GET", "/campaigns", "/campaigns?status=LOST", sk, None => 422);
    call!(c, "GET", "/campaigns/{id}", &by_segment, sk, None => 200);
    call!(c, "GET", "/campaigns/{id}", &format!("/campaigns/{SOME_ID}"), sk, None => 404);
    call!(c, "PUT", "/campaigns/{id}", &filtered, sk, Some(json!({"subject": "New", "replyTo": "support@example.com"})) => 200);
    call!(c, "PATCH", "/campaigns/{id}", &filtered, sk, Some(json!({"description": "d", "fromName": null})) => 200);
    call!(c, "POST", "/campaigns/{id}/cancel", &format!("{all}/cancel"), sk, None => 400);
    let res = call!(c, "POST", "/campaigns/{id}/send", &format!("{all}/send"), sk, Some(json!({})) => 200);
    assert_eq!(res.body["data"]["status"], json!("SENDING"));
    call!(c, "POST", "/campaigns/{id}/send", &format!("{all}/send"), sk, Some(json!({})) => 400);
    call!(c, "POST", "/campaigns/{id}/send", &format!("{by_segment}/send"), sk, Some(json!({"scheduledFor": "2020-01-01T00:00:00Z"})) => 422);
    let res = call!(c, "POST", "/campaigns/{id}/send", &format!("{by_segment}/send"), sk, Some(json!({"scheduledFor": "2026-11-22T10:00:00Z"})) => 200);
    assert_eq!(res.body["data"]["status"], json!("SCHEDULED"));
    call!(c, "DELETE", "/segments/{id}", &statik, sk, None => 409);
    call!(c, "POST", "/campaigns/{id}/cancel", &format!("{by_segment}/cancel"), sk, None => 200);
    let res = call!(c, "POST", "/campaigns/{id}/cancel", &format!("{all}/cancel"), sk, Some(json!({})) => 200);
    assert_eq!(res.body["message"], json!("Campaign cancelled"));
    call!(c, "GET", "/campaigns/{id}/stats", &format!("{all}/stats"), sk, None => 200);
    call!(c, "GET", "/campaigns/{id}/stats", &format!("/campaigns/{SOME_ID}/stats"), sk, None => 404);
    call!(c, "DELETE", "/campaigns/{id}", &all, sk, None => 400);
    call!(c, "DELETE", "/campaigns/{id}", &filtered, sk, None => 200);
    call!(c, "DELETE", "/segments/{id}", &statik, sk, None => 204);
    call!(c, "DELETE", "/segments/{id}", &dynamic, sk, None => 204);
    call!(c, "GET", "/segments/{id}", &dynamic, sk, None => 404);

    // Workflows.
    let res = call!(c, "POST", "/contacts", "/contacts", sk, Some(json!({"email": "flow@example.com"})) => 201);
    let flow_contact = str_at(&res.body, "/id").to_string();
    let res = call!(c, "POST", "/templates", "/templates", sk, Some(json!({"name": "Flow", "subject": "Hi", "body": "<p>Hi</p>", "type": "TRANSACTIONAL"})) => 201);
    let flow_template = str_at(&res.body, "/id").to_string();
    let res = call!(c, "POST", "/workflows", "/workflows", sk, Some(json!({"name": "Flow", "description": "d", "triggerType": "MANUAL", "triggerConfig": {}, "enabled": true, "allowReentry": true})) => 201);
    let trigger = str_at(&res.body, "/steps/0/id").to_string();
    let wf = format!("/workflows/{}", str_at(&res.body, "/id"));
    call!(c, "POST", "/workflows", "/workflows", sk, Some(json!({"name": "On signup", "eventName": "signup"})) => 201);
    call!(c, "POST", "/workflows", "/workflows", sk, Some(json!({})) => 422);
    call!(c, "GET", "/workflows", "/workflows?page=1&pageSize=1", sk, None => 200);
    call!(c, "GET", "/workflows/{id}", &format!("/workflows/{SOME_ID}"), sk, None => 404);
    call!(c, "PATCH", "/workflows/{id}", &wf, sk, Some(json!({"name": "Flow 2", "description": null})) => 200);
    let steps = format!("{wf}/steps");
    let res = call!(c, "POST", "/workflows/{id}/steps", &steps, sk, Some(json!({"type": "SEND_EMAIL", "name": "Mail", "config": {}, "templateId": flow_template, "position": {"x": 1, "y": 1}})) => 201);
    let send_step = str_at(&res.body, "/id").to_string();
    let res = call!(c, "POST", "/workflows/{id}/steps", &steps, sk, Some(json!({"type": "DELAY", "name": "Wait", "config": {"amount": 1, "unit": "days"}})) => 201);
    let delay = format!("{steps}/{}", str_at(&res.body, "/id"));
    let delay_id = str_at(&res.body, "/id").to_string();
    call!(c, "POST", "/workflows/{id}/steps", &steps, sk, Some(json!({"type": "DELAY", "name": "Wait", "config": {"amount": 0}})) => 422);
    call!(c, "PATCH", "/workflows/{id}/steps/{stepId}", &delay, sk, Some(json!({"name": "Wait more", "config": {"amount": 2, "unit": "days"}})) => 200);
    let edges = format!("{wf}/transitions");
    call!(c, "POST", "/workflows/{id}/transitions", &edges, sk, Some(json!({"fromStepId": trigger, "toStepId": delay_id, "priority": 0})) => 201);
    let res = call!(c, "POST", "/workflows/{id}/transitions", &edges, sk, Some(json!({"fromStepId": delay_id, "toStepId": send_step, "condition": null})) => 201);
    let edge = format!("{edges}/{}", str_at(&res.body, "/id"));
    call!(c, "POST", "/workflows/{id}/transitions", &edges, sk, Some(json!({"fromStepId": delay_id, "toStepId": delay_id})) => 400);
    call!(c, "GET", "/workflows/{id}", &wf, sk, None => 200);
    call!(c, "DELETE", "/workflows/{id}/transitions/{transitionId}", &edge, sk, None => 204);
    call!(c, "DELETE", "/workflows/{id}/steps/{stepId}", &format!("{steps}/{send_step}"), sk, None => 204);
    let executions = format!("{wf}/executions");
    let res = call!(c, "POST", "/workflows/{id}/executions", &executions, sk, Some(json!({"contactId": flow_contact, "context": {"plan": "pro"}})) => 201);
    let execution = format!("{executions}/{}", str_at(&res.body, "/id"));
    call!(c, "GET", "/workflows/{id}/executions", &format!("{executions}?pageSize=5"), sk, None => 200);
    call!(c, "GET", "/workflows/{id}/executions/{executionId}", &execution, sk, None => 200);
    call!(c, "DELETE", "/workflows/{id}", &wf, sk, None => 409);
    call!(c, "DELETE", "/workflows/{id}/executions/{executionId}", &execution, sk, None => 200);
    call!(c, "DELETE", "/workflows/{id}/executions/{executionId}", &execution, sk, None => 400);
    call!(c, "GET", "/workflows/signing-secret", "/workflows/signing-secret", sk, None => 200);
    call!(c, "POST", "/workflows/signing-secret/rotate", "/workflows/signing-secret/rotate", sk, None => 200);
    call!(c, "DELETE", "/workflows/{id}", &wf, sk, None => 204);

    // Keys.
    call!(c, "GET", "/keys", "/keys", sk, None => 200);
    let res = call!(c, "POST", "/keys", "/keys", sk, Some(json!({"name": "ci", "domains": ["example.com"]})) => 201);
    let key = format!("/keys/{}", str_at(&res.body, "/id"));
    call!(c, "DELETE", "/keys/{id}", &key, sk, None => 204);
    call!(c, "DELETE", "/keys/{id}", &key, sk, None => 404);

    // Domains.
    let res = call!(c, "POST", "/domains", "/domains", sk, Some(json!({"domain": "acme-mail.test"})) => 201);
    let dom = format!("/domains/{}", str_at(&res.body, "/id"));
    call!(c, "POST", "/domains", "/domains", sk, Some(json!({"domain": "acme-mail.test"})) => 409);
    call!(c, "POST", "/domains", "/domains", sk, Some(json!({"domain": "nope"})) => 422);
    call!(c, "GET", "/domains", "/domains", sk, None => 200);
    call!(c, "GET", "/domains/{id}", &dom, sk, None => 200);
    call!(c, "POST", "/domains/{id}/verify", &format!("{dom}/verify"), sk, None => 200);
    call!(c, "PATCH", "/domains/{id}", &dom, sk, Some(json!({"inboundEnabled": true})) => 200);

    // Inbound: a raw message for the verified example.com, once it receives mail.
    call!(c, "PATCH", "/domains/{id}", &example_domain, sk, Some(json!({"inboundEnabled": true})) => 200);
    let message = "From: a@sender.example\r\nSubject: hi\r\n\r\nhello\r\n";
    call_raw!(c, "POST", "/inbound/raw", "/inbound/raw?from=a%40sender.example&to=x%40example.com", sk, Some(message) => 202);
    call_raw!(c, "POST", "/inbound/raw", "/inbound/raw?to=x%40elsewhere.test", sk, Some(message) => 422);
    call!(c, "DELETE", "/domains/{id}", &dom, sk, None => 204);
    call!(c, "GET", "/domains/{id}", &dom, sk, None => 404);

    // Rate limit: a workspace with a budget of one request per minute.
    let res = call!(c, "POST", "/admin/workspaces", "/admin/workspaces", admin, Some(json!({"name": "Tiny", "rateLimitPerMinute": 1})) => 201);
    let tiny = str_at(&res.body, "/keySet/secretKey").to_string();
    call!(c, "GET", "/events/names", "/events/names", Some(&tiny), None => 200);
    call!(c, "GET", "/events/names", "/events/names", Some(&tiny), None => 429);

    // Body limit.
    let state = AppState::with_body_limit(engine(), Some(ADMIN.to_string()), 16);
    c.app = router(state);
    call!(c, "POST", "/admin/workspaces", "/admin/workspaces", admin, Some(json!({"name": "a name longer than sixteen bytes"})) => 413);

    // Dead jobs: one job parked by hand on a store this test holds.
    let store = Arc::new(MemoryStore::new());
    c.app = router(AppState::new(
        engine_on(store.clone()),
        Some(ADMIN.to_string()),
    ));
    let parked = NewJob::at(
        &posthorn_core::ports::SystemClock,
        JobPayload::DeliverEmail {
            workspace_id: SOME_ID.into(),
            email_id: SOME_ID.into(),
        },
        start(),
    );
    store
        .commit(ChangeSet {
            writes: vec![Write::EnqueueJob(parked.clone())],
        })
        .await
        .expect("enqueue");
    let claimed = store
        .claim(start(), std::time::Duration::from_secs(60), 1)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    assert_eq!(store.dead_letter(&claimed[0], "hopeless").await, Ok(true));
    let res = call!(c, "GET", "/admin/jobs/dead", "/admin/jobs/dead", admin, None => 200);
    assert_eq!(str_at(&res.body, "/jobs/0/kind"), "deliver_email");
    call!(c, "GET", "/admin/jobs/dead", "/admin/jobs/dead?limit=501", admin, None => 422);
    call!(c, "GET", "/admin/jobs/dead", "/admin/jobs/dead", None, None => 401);
    let revive = format!("/admin/jobs/{}/revive", parked.id);
    call!(c, "POST", "/admin/jobs/{id}/revive", &revive, admin, None => 200);
    call!(c, "POST", "/admin/jobs/{id}/revive", &revive, admin, None => 404);

    // Every documented operation was exercised with a success status.
    for (path, method) in operations(&c.doc) {
        {
            let what = format!("{method} {path}");
            assert!(
                c.seen.get(&what).is_some_and(|s| s
                    .iter()
                    .any(|st| (200..300).contains(st) || is_link(&path) && *st == 302)),
                "{what} has no successful call in this test; add one"
            );
        }
    }

    // Broken copies of every accepted body of a generated operation: without each required
    // property, and with each property set to a value its schema refuses. Each one is
    // outside the documented schema, so the server must refuse it.
    let mut refused = 0;
    for a in &c.accepted {
        let op = &c.doc["paths"][&a.template][a.method.to_ascii_lowercase()];
        let schema = resolve(
            &c.doc,
            &op["requestBody"]["content"]["application/json"]["schema"],
        );
        let Some(obj) = a.body.as_object() else {
            continue;
        };
        let mut broken = Vec::new();
        for key in schema["required"].as_array().into_iter().flatten() {
            let key = key.as_str().expect("required names");
            let mut b = obj.clone();
            if b.remove(key).is_some() {
                broken.push((format!("without {key}"), Value::Object(b)));
            }
        }
        for (key, prop) in schema["properties"].as_object().into_iter().flatten() {
            let wrong = [json!([]), json!(12.5), json!(true), json!({}), json!("")]
                .into_iter()
                .find(|v| {
                    let mut e = Vec::new();
                    validate(&c.doc, prop, v, "$", &mut e);
                    !e.is_empty()
                });
            if let Some(wrong) = wrong {
                let mut b = obj.clone();
                b.insert(key.clone(), wrong.clone());
                broken.push((format!("{key}: {wrong}"), Value::Object(b)));
            }
        }
        for (how, body) in broken {
            let mut errors = Vec::new();
            validate(&c.doc, schema, &body, "$", &mut errors);
            assert!(!errors.is_empty(), "{how} should be outside the schema");
            let res = send(
                &a.app,
                &a.method,
                &a.uri,
                a.bearer.as_deref(),
                Some(&body.to_string()),
            )
            .await;
            assert!(
                res.status.is_client_error(),
                "{} {} accepted a body outside its schema ({how}): {} {}",
                a.method,
                a.template,
                res.status,
                res.body
            );
            refused += 1;
        }
    }
    assert!(refused >= 40, "only {refused} broken bodies were tried");
}
