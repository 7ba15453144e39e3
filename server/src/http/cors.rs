//! Cross-origin requests: the public key tracks events from web pages (`POST /v1/track`), so
//! browsers must be let through their preflight.
//!
//! Every route allows any origin. Keys travel in the `Authorization` header, never in
//! cookies, and no credentials are allowed, so a page on another origin can do nothing
//! without a key it already holds (as with Plunk's API, which allows every origin too).
//!
//! Only a request with an `Origin` header (which browsers send on every cross-origin request
//! and preflight) goes through tower-http's CORS handling; the rest (servers calling the API)
//! get a `Vary: Origin` and nothing else. The CORS answer headers cost a request as much as
//! the rest of `/health`, and a server has no use for them.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::{header, HeaderName, HeaderValue, Method, Request, Response};
use futures::future::{Either, MapOk};
use futures::TryFutureExt;
use tower::{Layer, Service};
use tower_http::cors::{Any, CorsLayer};

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The CORS policy of the whole API, applied to browsers' requests ([`BrowserCorsLayer`]).
pub fn policy() -> BrowserCorsLayer {
    BrowserCorsLayer {
        cors: cors_policy(),
    }
}

/// tower-http's layer with the API's policy. The answers do not depend on the request
/// (any origin, fixed lists), so they need no `Vary` beyond `Origin`.
fn cors_policy() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ])
        .allow_headers([
            HeaderName::from_static("authorization"),
            HeaderName::from_static("content-type"),
            HeaderName::from_static("idempotency-key"),
        ])
        .expose_headers([
            HeaderName::from_static("x-request-id"),
            HeaderName::from_static("ratelimit-limit"),
            HeaderName::from_static("ratelimit-remaining"),
            HeaderName::from_static("ratelimit-reset"),
            HeaderName::from_static("retry-after"),
            HeaderName::from_static("idempotent-replayed"),
        ])
        .max_age(PREFLIGHT_MAX_AGE)
        .vary([header::ORIGIN])
}

/// Sends requests with an `Origin` header through [`cors_policy`] and the rest straight to
/// the service, with `Vary: Origin` (a cache must not hand a browser an answer made for a
/// request without one).
#[derive(Clone)]
pub struct BrowserCorsLayer {
    cors: CorsLayer,
}

impl<S> Layer<S> for BrowserCorsLayer {
    type Service = BrowserCors<S>;

    fn layer(&self, inner: S) -> Self::Service {
        BrowserCors {
            plain: inner,
            cors: Arc::new(self.cors.clone()),
        }
    }
}

/// The service of [`BrowserCorsLayer`]. The router clones it for every request, so the
/// policy (a dozen header values) is shared, and wrapped around the service only for a
/// browser's request.
#[derive(Clone)]
pub struct BrowserCors<S> {
    plain: S,
    cors: Arc<CorsLayer>,
}

type Plain<F, B> = MapOk<F, fn(Response<B>) -> Response<B>>;

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for BrowserCors<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone,
    ResBody: Default,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = Either<tower_http::cors::ResponseFuture<S::Future>, Plain<S::Future, ResBody>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.plain.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        if req.headers().contains_key(header::ORIGIN) {
            // The ready service goes into the CORS wrapper; a clone stays for the next call.
            let fresh = self.plain.clone();
            let ready = std::mem::replace(&mut self.plain, fresh);
            Either::Left(self.cors.layer(ready).call(req))
        } else {
            Either::Right(self.plain.call(req).map_ok(vary_origin as fn(_) -> _))
        }
    }
}

/// Adds `Vary: Origin` to an answer made without CORS headers.
fn vary_origin<B>(mut response: Response<B>) -> Response<B> {
    response
        .headers_mut()
        .append(header::VARY, HeaderValue::from_static("origin"));
    response
}
