//! `/domains`: the workspace's domains, their DNS records and verification.

use crate::http::answer::JsonAnswer;
use crate::http::path::WirePath;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use posthorn_core::app::Caller;
use posthorn_core::model::DomainId;
use std::sync::Arc;

use crate::http::body::Wire;
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::wire::domains::{DomainBody, DomainCreateBody, DomainList, DomainPatchBody};
use crate::http::AppState;

/// Add a domain
///
/// The domain starts unverified; the answer lists the DNS records to publish (ownership
/// token, DKIM public key, SPF and DMARC suggestions, MX when inbound is enabled).
#[utoipa::path(
    post, path = "/domains", operation_id = "createDomain", tag = "Domains",
    request_body = DomainCreateBody,
    responses(
        (status = 201, description = "Created", body = DomainBody),
        (status = 403, description = "Public key or a key set limited to some domains (`FORBIDDEN`)", body = ErrorResponse),
        (status = 409, description = "The workspace already has this domain (`CONFLICT`)", body = ErrorResponse),
        (status = 422, description = "Not a domain name (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    Wire(body): Wire<DomainCreateBody>,
) -> ApiResult<(StatusCode, JsonAnswer<DomainBody>)> {
    let view = state.engine.create_domain(&caller, body.into()).await?;
    Ok((StatusCode::CREATED, JsonAnswer((&view).into())))
}

/// List domains
#[utoipa::path(
    get, path = "/domains", operation_id = "listDomains", tag = "Domains",
    responses(
        (status = 200, description = "The domains, oldest first", body = DomainList),
        (status = 403, description = "Public key or a key set limited to some domains (`FORBIDDEN`)", body = ErrorResponse),
    ),
)]
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
) -> ApiResult<JsonAnswer<DomainList>> {
    let views = state.engine.list_domains(&caller).await?;
    Ok(JsonAnswer(DomainList {
        data: views.iter().map(Into::into).collect(),
    }))
}

/// Get a domain
#[utoipa::path(
    get, path = "/domains/{id}", operation_id = "getDomain", tag = "Domains",
    params(("id" = String, Path, description = "Domain id")),
    responses(
        (status = 200, description = "The domain", body = DomainBody),
        (status = 403, description = "Public key or a key set limited to some domains (`FORBIDDEN`)", body = ErrorResponse),
        (status = 404, description = "No such domain in this workspace (`NOT_FOUND`)", body = ErrorResponse),
    ),
)]
pub async fn read(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<DomainId>,
) -> ApiResult<JsonAnswer<DomainBody>> {
    let view = state.engine.domain(&caller, &id).await?;
    Ok(JsonAnswer((&view).into()))
}

/// Verify a domain now
///
/// Looks the records up now. The ownership and DKIM records verify the domain; every
/// record gets its status. A verified domain is not un-verified by one failed check.
#[utoipa::path(
    post, path = "/domains/{id}/verify", operation_id = "verifyDomain", tag = "Domains",
    params(("id" = String, Path, description = "Domain id")),
    responses(
        (status = 200, description = "The domain after the check", body = DomainBody),
        (status = 403, description = "Public key or a key set limited to some domains (`FORBIDDEN`)", body = ErrorResponse),
        (status = 404, description = "No such domain in this workspace (`NOT_FOUND`)", body = ErrorResponse),
    ),
)]
pub async fn verify(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<DomainId>,
) -> ApiResult<JsonAnswer<DomainBody>> {
    let view = state.engine.verify_domain(&caller, &id).await?;
    Ok(JsonAnswer((&view).into()))
}

/// Update a domain
#[utoipa::path(
    patch, path = "/domains/{id}", operation_id = "updateDomain", tag = "Domains",
    params(("id" = String, Path, description = "Domain id")),
    request_body = DomainPatchBody,
    responses(
        (status = 200, description = "The domain", body = DomainBody),
        (status = 403, description = "Public key or a key set limited to some domains (`FORBIDDEN`)", body = ErrorResponse),
        (status = 404, description = "No such domain in this workspace (`NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "Another workspace receives this domain's inbound mail (`CONFLICT`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn patch(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<DomainId>,
    Wire(body): Wire<DomainPatchBody>,
) -> ApiResult<JsonAnswer<DomainBody>> {
    let view = state.engine.patch_domain(&caller, &id, body.into()).await?;
    Ok(JsonAnswer((&view).into()))
}

/// Delete a domain
#[utoipa::path(
    delete, path = "/domains/{id}", operation_id = "deleteDomain", tag = "Domains",
    params(("id" = String, Path, description = "Domain id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 403, description = "Public key or a key set limited to some domains (`FORBIDDEN`)", body = ErrorResponse),
        (status = 404, description = "No such domain in this workspace (`NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A template or a SCHEDULED or SENDING campaign sends from it (`CONFLICT`)", body = ErrorResponse),
    ),
)]
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<DomainId>,
) -> ApiResult<StatusCode> {
    state.engine.delete_domain(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
