//! The HTTP edge: routes, middleware and the envelope. Handlers are thin: they parse,
//! call a use case on the `Engine`, and render.

pub mod answer;
pub mod auth;
pub mod auth_cache;
pub mod body;
pub mod cors;
pub mod error;
pub mod gate;
pub mod health_cache;
pub mod idempotency;
pub mod openapi;
pub mod path;
pub mod query;
pub mod request_id;
mod routes;
pub mod time_limit;
pub mod wire;

use axum::http::Uri;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::Router;
use posthorn_core::Engine;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use error::ApiError;

/// What every handler can reach; cheap to clone (one `Arc`), as every layer and handler
/// of every request clones it.
#[derive(Clone)]
pub struct AppState(std::sync::Arc<Shared>);

/// The contents of [`AppState`].
pub struct Shared {
    /// The engine and its ports.
    pub engine: Engine,
    /// Operator token; the operator API is off when `None`.
    pub admin_token: Option<String>,
    /// Largest accepted request body in bytes.
    pub max_body_bytes: usize,
    /// Recently authenticated keys.
    pub auth_cache: auth_cache::AuthCache,
    /// How long a handler may run before the request is answered 503.
    pub request_time_limit: std::time::Duration,
    /// What `GET /health` answers from.
    pub health: health_cache::HealthCache,
    /// The receiver of `POST /webhooks/sns`; unset, the endpoint refuses every message.
    pub sns: std::sync::OnceLock<posthorn_core::app::sns::SnsReceiver>,
    /// Requests in flight (those with a key, the link and provider routes, and the messages
    /// the SMTP listeners are taking in), which the job workers of the same process give
    /// way to while the API is saturated.
    pub requests: posthorn_runtime::RequestGauge,
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    /// State with the default body limit (15 MB).
    pub fn new(engine: Engine, admin_token: Option<String>) -> Self {
        Self::with_body_limit(engine, admin_token, 15 * 1024 * 1024)
    }

    /// State with a body limit in bytes.
    pub fn with_body_limit(
        engine: Engine,
        admin_token: Option<String>,
        max_body_bytes: usize,
    ) -> Self {
        Self::with_limits(
            engine,
            admin_token,
            max_body_bytes,
            time_limit::REQUEST_TIME_LIMIT,
        )
    }

    /// State with a body limit in bytes and a request time limit (tests use a short one).
    pub fn with_limits(
        engine: Engine,
        admin_token: Option<String>,
        max_body_bytes: usize,
        request_time_limit: std::time::Duration,
    ) -> Self {
        Self(std::sync::Arc::new(Shared {
            engine,
            admin_token,
            max_body_bytes,
            auth_cache: auth_cache::AuthCache::default(),
            request_time_limit,
            health: health_cache::HealthCache::default(),
            sns: std::sync::OnceLock::new(),
            requests: posthorn_runtime::RequestGauge::default(),
        }))
    }

    /// The state with `receiver` answering `POST /webhooks/sns` (set once, at start-up;
    /// a second receiver is ignored).
    pub fn with_sns(self, receiver: posthorn_core::app::sns::SnsReceiver) -> Self {
        if self.0.sns.set(receiver).is_err() {
            tracing::warn!("an SNS receiver was already set; the new one is ignored");
        }
        self
    }
}

/// The workspace API (a workspace key): every route with its documentation, from its
/// handler's `#[utoipa::path]`.
pub fn workspace_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(routes::public::send))
        .routes(routes!(routes::public::track))
        .routes(routes!(routes::public::verify))
        .routes(routes!(routes::contacts::upsert, routes::contacts::list))
        .routes(routes!(
            routes::contacts::read,
            routes::contacts::patch,
            routes::contacts::delete
        ))
        .routes(routes!(routes::templates::create, routes::templates::list))
        .routes(routes!(
            routes::templates::read,
            routes::templates::patch,
            routes::templates::replace,
            routes::templates::delete
        ))
        .routes(routes!(routes::events::list))
        .routes(routes!(routes::events::names))
        .routes(routes!(routes::segments::create, routes::segments::list))
        .routes(routes!(
            routes::segments::read,
            routes::segments::patch,
            routes::segments::replace,
            routes::segments::delete
        ))
        .routes(routes!(routes::segments::contacts))
        .routes(routes!(
            routes::segments::add_members,
            routes::segments::remove_members
        ))
        .routes(routes!(routes::campaigns::create, routes::campaigns::list))
        .routes(routes!(
            routes::campaigns::read,
            routes::campaigns::update,
            routes::campaigns::patch,
            routes::campaigns::delete
        ))
        .routes(routes!(routes::campaigns::send))
        .routes(routes!(routes::campaigns::cancel))
        .routes(routes!(routes::campaigns::stats))
        .routes(routes!(routes::workflows::create, routes::workflows::list))
        .routes(routes!(routes::workflows::signing_secret))
        .routes(routes!(routes::workflows::rotate_signing_secret))
        .routes(routes!(
            routes::workflows::read,
            routes::workflows::patch,
            routes::workflows::delete
        ))
        .routes(routes!(routes::workflows::create_step))
        .routes(routes!(
            routes::workflows::patch_step,
            routes::workflows::delete_step
        ))
        .routes(routes!(routes::workflows::create_transition))
        .routes(routes!(routes::workflows::delete_transition))
        .routes(routes!(
            routes::workflows::start_execution,
            routes::workflows::list_executions
        ))
        .routes(routes!(
            routes::workflows::read_execution,
            routes::workflows::cancel_execution
        ))
        .routes(routes!(routes::keys::list, routes::keys::create))
        .routes(routes!(routes::keys::revoke))
        .routes(routes!(routes::domains::create, routes::domains::list))
        .routes(routes!(
            routes::domains::read,
            routes::domains::patch,
            routes::domains::delete
        ))
        .routes(routes!(routes::domains::verify))
        .routes(routes!(routes::stats::stats))
        .routes(routes!(routes::inbound::raw))
}

/// The links in sent mail (open pixel, click redirect, unsubscribe): no key, no API rate
/// limit; the signed token in the path is the authority.
pub fn link_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(routes::links::open))
        .routes(routes!(routes::links::click))
        .routes(routes!(
            routes::links::unsubscribe_page,
            routes::links::unsubscribe
        ))
}

/// Provider notifications (Amazon SNS): no key and no API rate limit; the signature of
/// each message, checked against its topic's certificate, is the authority.
pub fn provider_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(routes::sns::receive))
}

/// The operator API (the admin token): every route with its documentation.
pub fn admin_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(routes::admin::create, routes::admin::list))
        .routes(routes!(routes::admin::read, routes::admin::patch))
        .routes(routes!(routes::admin::create_key_set))
        .routes(routes!(routes::admin::add_domain))
        .routes(routes!(routes::admin::dead_jobs))
        .routes(routes!(routes::admin::revive_job))
}

/// Readiness and the document; no key.
pub fn system_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(routes::health::health))
        .routes(routes!(openapi::serve))
}

/// The whole HTTP API as one router.
pub fn router(state: AppState) -> Router {
    let workspace_api =
        workspace_routes().route_layer(from_fn_with_state(state.clone(), gate::workspace_gate));
    let admin_api = admin_routes().route_layer(from_fn_with_state(state.clone(), gate::admin_gate));
    let links =
        link_routes().route_layer(from_fn_with_state(state.clone(), time_limit::within_limit));
    let providers =
        provider_routes().route_layer(from_fn_with_state(state.clone(), time_limit::within_limit));
    let (app, _) = system_routes()
        .merge(links)
        .merge(providers)
        .merge(workspace_api)
        .merge(admin_api)
        .split_for_parts();
    with_edge(app.with_state(state))
}

/// The edge every route sits behind: unknown routes and methods in the envelope, panics
/// caught as 500 `INTERNAL_ERROR`, a request id on every request and response, and CORS
/// (see [`cors::policy`]) answering browsers' preflights before anything else.
pub fn with_edge(app: Router) -> Router {
    app.fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(CatchPanicLayer::custom(|_| ApiError::Panic.into_response()))
        .layer(from_fn(request_id::assign))
        .layer(cors::policy())
}

async fn not_found(uri: Uri) -> Response {
    ApiError::RouteNotFound(uri.path().to_string()).into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::MethodNotAllowed.into_response()
}
