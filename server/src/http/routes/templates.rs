//! `/templates`.

use crate::http::answer::JsonAnswer;
use crate::http::path::WirePath;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use posthorn_core::app::Caller;
use posthorn_core::model::Template;
use posthorn_core::model::TemplateId;
use std::sync::Arc;

use crate::http::body::Wire;
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::query::WireQuery;
use crate::http::wire::templates::{
    TemplateCreateBody, TemplatePageBody, TemplatePatchBody, TemplatesQuery,
};
use crate::http::AppState;

/// Create a template
///
/// A reusable subject and body with `{{variable}}` placeholders.
#[utoipa::path(
    post, path = "/templates", operation_id = "createTemplate", tag = "Templates",
    request_body = TemplateCreateBody,
    responses(
        (status = 201, description = "Created", body = Template),
        (status = 403, description = "Public key (`FORBIDDEN`), `from` outside the workspace's verified domains (`DOMAIN_NOT_VERIFIED`) or the key set's allowlist (`FORBIDDEN`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or template syntax (`VALIDATION_ERROR`), or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
    ),
)]
pub async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    Wire(body): Wire<TemplateCreateBody>,
) -> ApiResult<(StatusCode, JsonAnswer<Template>)> {
    let t = state.engine.create_template(&caller, body.into()).await?;
    Ok((StatusCode::CREATED, JsonAnswer(t)))
}

/// List templates
///
/// Page pagination, newest first.
#[utoipa::path(
    get, path = "/templates", operation_id = "listTemplates", tag = "Templates",
    params(TemplatesQuery),
    responses(
        (status = 200, description = "A page of templates", body = TemplatePageBody),
        (status = 422, description = "`page`, `pageSize` or `limit` out of range, an unknown `type` or `cursor` (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WireQuery(query): WireQuery<TemplatesQuery>,
) -> ApiResult<JsonAnswer<TemplatePageBody>> {
    let page = state.engine.list_templates(&caller, query.into()).await?;
    Ok(JsonAnswer(page.into()))
}

/// Read a template
#[utoipa::path(
    get, path = "/templates/{id}", operation_id = "getTemplate", tag = "Templates",
    params(("id" = String, Path, description = "Template id")),
    responses(
        (status = 200, description = "The template", body = Template),
        (status = 404, description = "No such template in this workspace (`TEMPLATE_NOT_FOUND`)", body = ErrorResponse),
    ),
)]
pub async fn read(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<TemplateId>,
) -> ApiResult<JsonAnswer<Template>> {
    Ok(JsonAnswer(state.engine.template(&caller, &id).await?))
}

/// Update a template
///
/// Changes the fields given; `null` clears an optional one.
#[utoipa::path(
    patch, path = "/templates/{id}", operation_id = "updateTemplate", tag = "Templates",
    params(("id" = String, Path, description = "Template id")),
    request_body = TemplatePatchBody,
    responses(
        (status = 200, description = "The updated template", body = Template),
        (status = 403, description = "Public key (`FORBIDDEN`), `from` outside the workspace's verified domains (`DOMAIN_NOT_VERIFIED`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such template in this workspace (`TEMPLATE_NOT_FOUND`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or template syntax (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn patch(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<TemplateId>,
    Wire(body): Wire<TemplatePatchBody>,
) -> ApiResult<JsonAnswer<Template>> {
    Ok(JsonAnswer(
        state
            .engine
            .patch_template(&caller, &id, body.into())
            .await?,
    ))
}

/// Update a template (PUT)
///
/// The same as `PATCH`: changes the fields given; `null` clears an optional one.
#[utoipa::path(
    put, path = "/templates/{id}", operation_id = "replaceTemplate", tag = "Templates",
    params(("id" = String, Path, description = "Template id")),
    request_body = TemplatePatchBody,
    responses(
        (status = 200, description = "The updated template", body = Template),
        (status = 403, description = "Public key (`FORBIDDEN`), `from` outside the workspace's verified domains (`DOMAIN_NOT_VERIFIED`), or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such template in this workspace (`TEMPLATE_NOT_FOUND`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or template syntax (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn replace(
    state: State<AppState>,
    caller: Extension<Arc<Caller>>,
    id: WirePath<TemplateId>,
    body: Wire<TemplatePatchBody>,
) -> ApiResult<JsonAnswer<Template>> {
    patch(state, caller, id, body).await
}

/// Delete a template
#[utoipa::path(
    delete, path = "/templates/{id}", operation_id = "deleteTemplate", tag = "Templates",
    params(("id" = String, Path, description = "Template id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such template in this workspace (`TEMPLATE_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A workflow step sends this template (`CONFLICT`): change or delete that step first", body = ErrorResponse),
    ),
)]
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<TemplateId>,
) -> ApiResult<StatusCode> {
    state.engine.delete_template(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
