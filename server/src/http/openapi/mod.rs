//! `GET /openapi.json`: the OpenAPI 3.1 description of the API, generated with utoipa.
//!
//! To document a new route: add a stub with `#[utoipa::path(...)]` in `paths` (request and
//! response shapes as `ToSchema` structs in `schemas`), list the stub in `ApiDoc`'s
//! `paths(...)`, and add the path and its methods to [`ROUTES`]. `tests/openapi.rs` fails
//! until the router, `ROUTES` and the document agree.

mod paths;
mod schemas;

use std::sync::OnceLock;

use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use schemas::RequestRules;

/// Every route of the router: path (OpenAPI `{param}` form) and its methods (upper case).
pub const ROUTES: &[(&str, &[&str])] = &[
    ("/health", &["GET"]),
    ("/openapi.json", &["GET"]),
    ("/v1/send", &["POST"]),
    ("/v1/track", &["POST"]),
    ("/v1/verify", &["POST"]),
    ("/contacts", &["GET", "POST"]),
    ("/contacts/{id}", &["GET", "PATCH", "DELETE"]),
    ("/templates", &["GET", "POST"]),
    ("/templates/{id}", &["GET", "PUT", "PATCH", "DELETE"]),
    ("/events", &["GET"]),
    ("/events/names", &["GET"]),
    ("/segments", &["POST", "GET"]),
    ("/segments/{id}", &["GET", "PATCH", "PUT", "DELETE"]),
    ("/segments/{id}/contacts", &["GET"]),
    ("/segments/{id}/members", &["POST", "DELETE"]),
    ("/campaigns", &["POST", "GET"]),
    ("/campaigns/{id}", &["GET", "PUT", "PATCH", "DELETE"]),
    ("/campaigns/{id}/send", &["POST"]),
    ("/campaigns/{id}/cancel", &["POST"]),
    ("/campaigns/{id}/stats", &["GET"]),
    ("/keys", &["GET", "POST"]),
    ("/keys/{id}", &["DELETE"]),
    ("/admin/workspaces", &["GET", "POST"]),
    ("/admin/workspaces/{id}", &["GET", "PATCH"]),
    ("/admin/workspaces/{id}/key-sets", &["POST"]),
    ("/admin/workspaces/{id}/domains", &["POST"]),
    ("/admin/jobs/dead", &["GET"]),
    ("/admin/jobs/{id}/revive", &["POST"]),
];

/// The document's root: every operation stub and the shared components.
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
    paths(
        paths::health,
        paths::openapi,
        paths::send,
        paths::track,
        paths::verify,
        paths::upsert_contact,
        paths::list_contacts,
        paths::get_contact,
        paths::update_contact,
        paths::delete_contact,
        paths::create_template,
        paths::list_templates,
        paths::get_template,
        paths::update_template,
        paths::replace_template,
        paths::delete_template,
        paths::list_events,
        paths::list_event_names,
        paths::create_segment,
        paths::list_segments,
        paths::get_segment,
        paths::update_segment,
        paths::replace_segment,
        paths::delete_segment,
        paths::list_segment_contacts,
        paths::add_segment_members,
        paths::remove_segment_members,
        paths::create_campaign,
        paths::list_campaigns,
        paths::get_campaign,
        paths::update_campaign,
        paths::patch_campaign,
        paths::delete_campaign,
        paths::send_campaign,
        paths::cancel_campaign,
        paths::get_campaign_stats,
        paths::list_key_sets,
        paths::create_key_set,
        paths::revoke_key_set,
        paths::admin_create_workspace,
        paths::admin_list_workspaces,
        paths::admin_get_workspace,
        paths::admin_update_workspace,
        paths::admin_create_key_set,
        paths::admin_add_domain,
        paths::admin_list_dead_jobs,
        paths::admin_revive_job,
    ),
    components(schemas(schemas::ErrorResponse, schemas::FieldError)),
    modifiers(&SecuritySchemes, &RequestRules),
    tags(
        (name = "Sending", description = "Transactional email, event tracking and address verification (`/v1`)."),
        (name = "Contacts", description = "The people a workspace mails."),
        (name = "Templates", description = "Reusable subjects and bodies with `{{variable}}` placeholders."),
        (name = "Events", description = "The workspace's event history."),
        (name = "Segments", description = "Named sets of contacts: DYNAMIC (a condition) or STATIC (explicit members)."),
        (name = "Campaigns", description = "One message to an audience, sent now or at a scheduled time."),
        (name = "Keys", description = "The workspace's API key sets."),
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

/// Builds the document (uncached).
pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
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

/// Serves the OpenAPI document.
pub async fn serve() -> Response {
    ([(CONTENT_TYPE, "application/json")], json()).into_response()
}
