//! `GET /openapi.json`: the OpenAPI 3.1 description of the API, generated with utoipa from
//! the routes the router really registers ([`crate::http::workspace_routes`],
//! [`crate::http::admin_routes`], [`crate::http::system_routes`]).
//!
//! To document a route: put `#[utoipa::path(...)]` on its handler (request and response
//! bodies are the wire types it really reads and writes, deriving `ToSchema`) and register
//! it with `routes!`. What every operation of a group shares (its security scheme, the
//! `Idempotency-Key` header of POSTs, the error answers of the auth, idempotency and time
//! limit layers) is added here from the group it is registered in.

use std::sync::OnceLock;

use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, Required, ResponseBuilder};
use utoipa::{Modify, OpenApi, PartialSchema};

mod links;

/// The document's root: its description, tags, security schemes and the error envelope;
/// the operations come from the routers ([`document`]).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Posthorn API",
        description = "Self-hostable email platform: transactional sending, event tracking, \
            verification, contacts, templates, segments and campaigns.\n\n\
            Workspace endpoints take `Authorization: Bearer <key>`: the secret key (`sk_`) \
            everywhere, the public key (`pk_`) only on `POST /v1/track`. The operator API under \
            `/admin` takes the admin token (`POSTHORN_ADMIN_TOKEN`) and answers 404 when it is not \
            set. `/health` and `/openapi.json` need no key.\n\n\
            Every failure is answered with the error envelope (`ErrorResponse`). An unknown path \
            gives 404 `NOT_FOUND`; a known path with another method gives 405. Workspace \
            responses carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; \
            every response carries `X-Request-Id`."
    ),
    components(schemas(crate::http::error::ErrorResponse)),
    modifiers(&SecuritySchemes),
    tags(
        (name = "Sending", description = "Transactional email, event tracking and address verification (`/v1`)."),
        (name = "Contacts", description = "The people a workspace mails."),
        (name = "Templates", description = "Reusable subjects and bodies with `{{variable}}` placeholders."),
        (name = "Events", description = "The workspace's event history."),
        (name = "Segments", description = "Named sets of contacts: DYNAMIC (a condition) or STATIC (explicit members)."),
        (name = "Campaigns", description = "One message to an audience, sent now or at a scheduled time."),
        (name = "Workflows", description = "Automations: a trigger and a graph of steps run per contact; their executions and the webhook signing secret."),
        (name = "Keys", description = "The workspace's API key sets."),
        (name = "Domains", description = "The workspace's domains, the DNS records to publish, DKIM keys and verification."),
        (name = "Stats", description = "Sending reputation: delivery, engagement, bounce and complaint rates."),
        (name = "Inbound", description = "Received mail: raw messages relayed by an MTA over HTTP; each produces `email.received`."),
        (name = "Tracking", description = "The links in sent mail: open pixel, click redirect and one-click unsubscribe; no key, the signed token is the authority."),
        (name = "Providers", description = "Notifications from mail providers (Amazon SES through SNS); no key, the message signature and the listed topics are the authority."),
        (name = "Operator", description = "Workspaces, their key sets and domains, and dead-lettered jobs; admin token only."),
        (name = "System", description = "Readiness and this document; no key."),
    ),
)]
pub struct ApiDoc;

/// Adds the three bearer schemes operations refer to.
struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let bearer = |format: &str, description: &str| {
            let mut http = Http::new(HttpAuthScheme::Bearer);
            http.bearer_format = Some(format.to_string());
            http.description = Some(description.to_string());
            SecurityScheme::Http(http)
        };
        components.add_security_scheme(
            "secretKey",
            bearer(
                "sk_<64 hex>",
                "A workspace's secret key (`sk_`): every workspace endpoint.",
            ),
        );
        components.add_security_scheme(
            "publicKey",
            bearer(
                "pk_<64 hex>",
                "A workspace's public key (`pk_`): only `POST /v1/track`.",
            ),
        );
        components.add_security_scheme(
            "adminToken",
            bearer(
                "token",
                "The operator's token (`POSTHORN_ADMIN_TOKEN`): the `/admin` API.",
            ),
        );
    }
}

/// Builds the document (uncached): the root, then every registered route of each group with
/// what the group's layers add.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    doc.merge(crate::http::system_routes().into_openapi());
    doc.merge(crate::http::link_routes().into_openapi());
    doc.merge(crate::http::provider_routes().into_openapi());
    doc.merge(layered(
        crate::http::workspace_routes().into_openapi(),
        "secretKey",
    ));
    doc.merge(layered(
        crate::http::admin_routes().into_openapi(),
        "adminToken",
    ));
    optional_bodies(&mut doc);
    links::add_links(&mut doc);
    drop_unreferenced_schemas(&mut doc);
    doc
}

/// Removes component schemas nothing refers to: the derive also registers the building
/// blocks of the wire types (`Line`, `Integer`, ...), whose fields inline them with their
/// own bounds, so a registered copy would state one arbitrary bound.
fn drop_unreferenced_schemas(doc: &mut utoipa::openapi::OpenApi) {
    loop {
        let text = serde_json::to_string(&*doc).unwrap_or_default();
        let Some(components) = doc.components.as_mut() else {
            return;
        };
        let unused: Vec<String> = components
            .schemas
            .keys()
            .filter(|name| !text.contains(&format!("\"#/components/schemas/{name}\"")))
            .cloned()
            .collect();
        if unused.is_empty() {
            return;
        }
        for name in unused {
            components.schemas.remove(&name);
        }
    }
}

/// Adds to every operation of a keyed group what its layers do: the group's security scheme
/// (unless the operation names its own), the `Idempotency-Key` header on POST, and the error
/// answers every such operation can give.
fn layered(mut api: utoipa::openapi::OpenApi, scheme: &str) -> utoipa::openapi::OpenApi {
    for item in api.paths.paths.values_mut() {
        let ops = [
            (false, &mut item.get),
            (true, &mut item.post),
            (false, &mut item.put),
            (false, &mut item.patch),
            (false, &mut item.delete),
        ];
        for (is_post, op) in ops {
            if let Some(op) = op.as_mut() {
                layer_operation(op, scheme, is_post);
            }
        }
    }
    api
}

fn error_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorResponse")))
                .build(),
        )
        .build()
}

fn layer_operation(op: &mut Operation, scheme: &str, is_post: bool) {
    if op.security.is_none() {
        op.security = Some(vec![SecurityRequirement::new::<_, _, String>(scheme, [])]);
    }
    let has_body = op.request_body.is_some();
    let has_query = op
        .parameters
        .iter()
        .flatten()
        .any(|p| p.parameter_in == ParameterIn::Query);
    if is_post {
        let params = op.parameters.get_or_insert_with(Vec::new);
        if !params.iter().any(|p| p.name == IDEMPOTENCY_KEY) {
            params.push(idempotency_key());
        }
    }
    let responses = &mut op.responses.responses;
    let mut add = |status: &str, response: utoipa::openapi::Response| {
        responses
            .entry(status.to_string())
            .or_insert(utoipa::openapi::RefOr::T(response));
    };
    if has_body || is_post {
        add(
            "400",
            error_response(
                "Malformed JSON or body (`VALIDATION_ERROR`) or a malformed `Idempotency-Key` \
                 (`BAD_REQUEST`)",
            ),
        );
    } else if has_query {
        add(
            "400",
            error_response("Malformed query string (`BAD_REQUEST`)"),
        );
    }
    let (unauthorized, forbidden) = if scheme == "adminToken" {
        (
            "The operator API is off or the admin token is wrong (`INVALID_API_KEY`)",
            None,
        )
    } else {
        (
            "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)",
            Some("Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)"),
        )
    };
    add("401", error_response(unauthorized));
    if scheme == "adminToken" {
        add(
            "404",
            error_response(
                "The operator API is off: `POSTHORN_ADMIN_TOKEN` is not set (`NOT_FOUND`)",
            ),
        );
    }
    if let Some(forbidden) = forbidden {
        add("403", error_response(forbidden));
    }
    if is_post {
        add(
            "409",
            error_response("A request with this `Idempotency-Key` is still running (`CONFLICT`)"),
        );
    }
    if is_post {
        add(
            "422",
            error_response("`Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)"),
        );
    }
    if has_body {
        add(
            "413",
            error_response("Body larger than the limit (`PAYLOAD_TOO_LARGE`)"),
        );
    }
    if scheme != "adminToken" {
        let mut limited = error_response("Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)");
        limited.headers.insert(
            "Retry-After".to_string(),
            HeaderBuilder::new()
                .schema(u64::schema())
                .description(Some("Seconds until the budget resets"))
                .build(),
        );
        add("429", limited);
    }
    add("500", error_response("Unexpected error (`INTERNAL_ERROR`)"));
    add(
        "503",
        error_response(
            "Database or Redis unavailable, or the request time limit passed \
             (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds",
        ),
    );
}

/// The header [`crate::http::idempotency::idempotent`] reads on every POST.
const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

fn idempotency_key() -> utoipa::openapi::path::Parameter {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ParameterBuilder::new()
        .name(IDEMPOTENCY_KEY)
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "1 to 255 printable ASCII characters (spaces inside only, as HTTP trims the ends). \
             Within 24 hours the same key with the same body replays the first answer (header \
             `Idempotent-Replayed: true`); the same key with another body is refused (422 \
             `IDEMPOTENCY_KEY_REUSED`).",
        ))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(255))
                .pattern(Some(r"^[!-~]([ -~]{0,253}[!-~])?$")),
        ))
        .build()
}

/// Marks request bodies optional when their schema requires no field: an empty body reads
/// as `{}`.
fn optional_bodies(openapi: &mut utoipa::openapi::OpenApi) {
    let Some(components) = openapi.components.as_ref() else {
        return;
    };
    let nothing_required = |reference: &str| {
        let name = reference.trim_start_matches("#/components/schemas/");
        matches!(
            components.schemas.get(name),
            Some(utoipa::openapi::RefOr::T(utoipa::openapi::schema::Schema::Object(object))) if object.required.is_empty()
        )
    };
    let mut optional = Vec::new();
    for (path, item) in &openapi.paths.paths {
        for (method, operation) in operations(item) {
            let Some(body) = &operation.request_body else {
                continue;
            };
            let all_optional = body.content.values().all(|content| {
                matches!(&content.schema, Some(utoipa::openapi::RefOr::Ref(r)) if nothing_required(&r.ref_location))
            });
            if all_optional {
                optional.push((path.clone(), method));
            }
        }
    }
    for (path, method) in optional {
        let Some(item) = openapi.paths.paths.get_mut(&path) else {
            continue;
        };
        if let Some(operation) = operation_mut(item, method) {
            if let Some(body) = operation.request_body.as_mut() {
                body.required = Some(Required::False);
            }
        }
    }
}

/// The operations of a path item that can carry a body.
fn operations(
    item: &utoipa::openapi::PathItem,
) -> Vec<(&'static str, &utoipa::openapi::path::Operation)> {
    [
        ("post", &item.post),
        ("put", &item.put),
        ("patch", &item.patch),
        ("delete", &item.delete),
    ]
    .into_iter()
    .filter_map(|(method, op)| op.as_ref().map(|op| (method, op)))
    .collect()
}

fn operation_mut<'a>(
    item: &'a mut utoipa::openapi::PathItem,
    method: &str,
) -> Option<&'a mut utoipa::openapi::path::Operation> {
    match method {
        "post" => item.post.as_mut(),
        "put" => item.put.as_mut(),
        "patch" => item.patch.as_mut(),
        "delete" => item.delete.as_mut(),
        _ => None,
    }
}

/// The document as JSON, built once per process.
pub fn json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        document().to_json().unwrap_or_else(|e| {
            tracing::error!(error = %e, "could not serialize the OpenAPI document");
            String::from("{}")
        })
    })
}

/// This document
///
/// The OpenAPI 3.1 description of the API. Needs no key.
#[utoipa::path(
    get, path = "/openapi.json", operation_id = "openapi", tag = "System",
    responses(
        (status = 200, description = "The OpenAPI document", content_type = "application/json", body = Object),
    ),
)]
pub async fn serve() -> Response {
    ([(CONTENT_TYPE, "application/json")], json()).into_response()
}
