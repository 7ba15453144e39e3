//! The links in sent mail: the open pixel, the click redirect and one-click unsubscribe
//! (RFC 8058). No key and no API rate limit: the token is the authority, signed with the
//! deployment's secret, and each hit costs one indexed read and at most one small commit.

use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::path::WirePath;
use crate::http::AppState;

/// A transparent 1×1 GIF.
const PIXEL: &[u8] = &[
    0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xff, 0xff, 0xff, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b,
];

const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");

/// Open pixel
///
/// Records an open of the email the token names and answers a 1×1 GIF.
#[utoipa::path(
    get, path = "/t/o/{token}", operation_id = "trackOpen", tag = "Tracking",
    params(("token" = String, Path, description = "Signed open token")),
    responses(
        (status = 200, description = "A 1×1 GIF (`Cache-Control: no-store`)", body = String, content_type = "image/gif"),
        (status = 404, description = "Invalid or tampered token", body = ErrorResponse),
    ),
)]
pub async fn open(
    State(state): State<AppState>,
    WirePath(token): WirePath<String>,
) -> ApiResult<Response> {
    state.engine.open_by_token(&token).await?;
    let headers = [
        (CONTENT_TYPE, HeaderValue::from_static("image/gif")),
        (CACHE_CONTROL, NO_STORE),
    ];
    Ok((headers, PIXEL).into_response())
}

/// Click redirect
///
/// Records a click and redirects (302) to the link the signed token carries.
#[utoipa::path(
    get, path = "/t/c/{token}", operation_id = "trackClick", tag = "Tracking",
    params(("token" = String, Path, description = "Signed click token")),
    responses(
        (status = 302, description = "To the original link"),
        (status = 404, description = "Invalid or tampered token (never redirected)", body = ErrorResponse),
    ),
)]
pub async fn click(
    State(state): State<AppState>,
    WirePath(token): WirePath<String>,
) -> ApiResult<Response> {
    let url = state.engine.click_by_token(&token).await?;
    let location =
        HeaderValue::from_str(&header_safe(&url)).unwrap_or_else(|_| HeaderValue::from_static("/"));
    Ok((
        StatusCode::FOUND,
        [(LOCATION, location), (CACHE_CONTROL, NO_STORE)],
    )
        .into_response())
}

/// Unsubscribe page
///
/// A plain confirmation page whose button posts the one-click unsubscribe.
#[utoipa::path(
    get, path = "/unsubscribe/{token}", operation_id = "unsubscribePage", tag = "Tracking",
    params(("token" = String, Path, description = "Signed unsubscribe token")),
    responses(
        (status = 200, description = "HTML confirmation page", body = String, content_type = "text/html"),
        (status = 404, description = "Invalid or tampered token", body = ErrorResponse),
    ),
)]
pub async fn unsubscribe_page(
    State(state): State<AppState>,
    WirePath(token): WirePath<String>,
) -> ApiResult<Response> {
    state.engine.check_unsubscribe_token(&token).await?;
    let page = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Unsubscribe</title>\
         <meta name=\"viewport\" content=\"width=device-width\"></head>\
         <body style=\"font-family:sans-serif;max-width:32em;margin:4em auto\">\
         <h1>Unsubscribe</h1><p>Stop receiving these emails?</p>\
         <form method=\"post\" action=\"/unsubscribe/{token}\">\
         <input type=\"hidden\" name=\"List-Unsubscribe\" value=\"One-Click\">\
         <button type=\"submit\">Unsubscribe</button></form></body></html>",
        token = html_escape(&token)
    );
    Ok(no_store(Html(page).into_response()))
}

/// One-click unsubscribe
///
/// RFC 8058: mail providers post `List-Unsubscribe=One-Click`; the body is not required.
/// Answers 200 however often it is called; `contact.unsubscribed` is emitted once.
#[utoipa::path(
    post, path = "/unsubscribe/{token}", operation_id = "unsubscribe", tag = "Tracking",
    params(("token" = String, Path, description = "Signed unsubscribe token")),
    responses(
        (status = 200, description = "Unsubscribed (HTML)", body = String, content_type = "text/html"),
        (status = 404, description = "Invalid or tampered token", body = ErrorResponse),
    ),
)]
pub async fn unsubscribe(
    State(state): State<AppState>,
    WirePath(token): WirePath<String>,
) -> ApiResult<Response> {
    state.engine.unsubscribe_by_token(&token).await?;
    let page = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Unsubscribed</title>\
                </head><body style=\"font-family:sans-serif;max-width:32em;margin:4em auto\">\
                <h1>You are unsubscribed</h1><p>You will not receive these emails any more.</p>\
                </body></html>";
    Ok(no_store(Html(page).into_response()))
}

fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(CACHE_CONTROL, NO_STORE);
    response
}

/// `url` with bytes a header cannot hold percent-encoded (links from HTML may hold
/// spaces or non-ASCII text).
fn header_safe(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for b in url.bytes() {
        if (0x21..0x7f).contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
