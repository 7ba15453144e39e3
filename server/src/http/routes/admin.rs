//! The operator API under `/admin` (admin token only).

use crate::http::answer::JsonAnswer;
use crate::http::path::WirePath;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use posthorn_core::model::{Domain, Workspace};
use posthorn_core::model::{JobId, WorkspaceId};
use posthorn_core::Error;

use crate::http::body::Wire;
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::idempotency::{keys_shown_once, KeepInstead};
use crate::http::query::WireQuery;
use crate::http::wire::admin::{
    CreatedWorkspace, DeadJobBody, DeadJobList, DeadJobsQuery, DomainBody, KeySetBody,
    NewKeySetBody, RevivedJob, WorkspaceCreateBody, WorkspaceList, WorkspacePatchBody,
};
use crate::http::AppState;

/// Create a workspace
///
/// The workspace and its first key set (clear keys shown once).
#[utoipa::path(
    post, path = "/admin/workspaces", operation_id = "adminCreateWorkspace", tag = "Operator",
    request_body = WorkspaceCreateBody,
    responses(
        (status = 201, description = "Created", body = CreatedWorkspace),
        (status = 409, description = "A replay under the same `Idempotency-Key` (`CONFLICT`): the keys are shown once and not kept; the message names the workspace and key set created", body = ErrorResponse),
        (status = 422, description = "Invalid fields (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn create(
    State(state): State<AppState>,
    Wire(body): Wire<WorkspaceCreateBody>,
) -> ApiResult<(
    StatusCode,
    Extension<KeepInstead>,
    JsonAnswer<CreatedWorkspace>,
)> {
    let (workspace, keys) = state.engine.create_workspace(body.into()).await?;
    let kept = keys_shown_once(format!(
        "workspace {} with key set {}",
        workspace.id, keys.record.id
    ));
    Ok((
        StatusCode::CREATED,
        kept,
        JsonAnswer(CreatedWorkspace {
            workspace,
            key_set: (&keys).into(),
        }),
    ))
}

/// List workspaces
#[utoipa::path(
    get, path = "/admin/workspaces", operation_id = "adminListWorkspaces", tag = "Operator",
    responses(
        (status = 200, description = "Every workspace", body = WorkspaceList),
    ),
)]
pub async fn list(State(state): State<AppState>) -> ApiResult<JsonAnswer<WorkspaceList>> {
    Ok(JsonAnswer(WorkspaceList {
        data: state.engine.workspaces().await?,
    }))
}

/// Read a workspace
#[utoipa::path(
    get, path = "/admin/workspaces/{id}", operation_id = "adminGetWorkspace", tag = "Operator",
    params(("id" = String, Path, description = "Workspace id")),
    responses(
        (status = 200, description = "The workspace", body = Workspace),
        (status = 404, description = "No such workspace, or the operator API is off (`NOT_FOUND`)", body = ErrorResponse),
    ),
)]
pub async fn read(
    State(state): State<AppState>,
    WirePath(id): WirePath<WorkspaceId>,
) -> ApiResult<JsonAnswer<Workspace>> {
    Ok(JsonAnswer(state.engine.workspace(&id).await?))
}

/// Update a workspace
///
/// Name, `disabled` and limits. A raised contact limit activates PENDING contacts at once.
#[utoipa::path(
    patch, path = "/admin/workspaces/{id}", operation_id = "adminUpdateWorkspace", tag = "Operator",
    params(("id" = String, Path, description = "Workspace id")),
    request_body = WorkspacePatchBody,
    responses(
        (status = 200, description = "The updated workspace", body = Workspace),
        (status = 404, description = "No such workspace, or the operator API is off (`NOT_FOUND`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn patch(
    State(state): State<AppState>,
    WirePath(id): WirePath<WorkspaceId>,
    Wire(body): Wire<WorkspacePatchBody>,
) -> ApiResult<JsonAnswer<Workspace>> {
    Ok(JsonAnswer(
        state.engine.patch_workspace(&id, body.into()).await?,
    ))
}

/// Create a key set for a workspace
#[utoipa::path(
    post, path = "/admin/workspaces/{id}/key-sets", operation_id = "adminCreateKeySet", tag = "Operator",
    params(("id" = String, Path, description = "Workspace id")),
    request_body = KeySetBody,
    responses(
        (status = 201, description = "Created, with the clear keys", body = NewKeySetBody),
        (status = 404, description = "No such workspace, or the operator API is off (`NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A replay under the same `Idempotency-Key` (`CONFLICT`): the keys are shown once and not kept; the message names the key set created", body = ErrorResponse),
        (status = 422, description = "Invalid `name` or `domains` (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn create_key_set(
    State(state): State<AppState>,
    WirePath(id): WirePath<WorkspaceId>,
    Wire(body): Wire<KeySetBody>,
) -> ApiResult<(
    StatusCode,
    Extension<KeepInstead>,
    JsonAnswer<NewKeySetBody>,
)> {
    let set = state.engine.admin_create_key_set(&id, body.into()).await?;
    let body = NewKeySetBody::from(&set);
    let kept = keys_shown_once(format!("key set {} of workspace {id}", body.id));
    Ok((StatusCode::CREATED, kept, JsonAnswer(body)))
}

/// Add a sender domain to a workspace
///
/// `verified: true` skips the DNS check.
#[utoipa::path(
    post, path = "/admin/workspaces/{id}/domains", operation_id = "adminAddDomain", tag = "Operator",
    params(("id" = String, Path, description = "Workspace id")),
    request_body = DomainBody,
    responses(
        (status = 201, description = "Added", body = Domain),
        (status = 404, description = "No such workspace, or the operator API is off (`NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "The workspace already has this domain (`CONFLICT`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn add_domain(
    State(state): State<AppState>,
    WirePath(id): WirePath<WorkspaceId>,
    Wire(body): Wire<DomainBody>,
) -> ApiResult<(StatusCode, JsonAnswer<Domain>)> {
    let domain = state.engine.admin_add_domain(&id, body.into()).await?;
    Ok((StatusCode::CREATED, JsonAnswer(domain)))
}

/// List dead jobs
///
/// Jobs given up on (delivery retries exhausted, an unreadable payload, or too many claims
/// that ended without a result), oldest first by id. They stay parked until revived.
#[utoipa::path(
    get, path = "/admin/jobs/dead", operation_id = "adminListDeadJobs", tag = "Operator",
    params(DeadJobsQuery),
    responses(
        (status = 200, description = "The dead jobs", body = DeadJobList),
        (status = 422, description = "`limit` out of range (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn dead_jobs(
    State(state): State<AppState>,
    WireQuery(query): WireQuery<DeadJobsQuery>,
) -> ApiResult<JsonAnswer<DeadJobList>> {
    let limit = usize::try_from(query.limit.0).unwrap_or(100);
    let jobs = state
        .engine
        .dead_jobs(limit)
        .await?
        .iter()
        .map(|job| {
            DeadJobBody::new(job)
                .ok_or_else(|| Error::Internal(format!("job {} has no object payload", job.id)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(JsonAnswer(DeadJobList { jobs }))
}

/// Revive a dead job
///
/// Queues the job again, due now, with its attempts back to 0. A `deliver_email` job whose
/// email is FAILED first has the email put back to QUEUED (error cleared), so it is
/// delivered again.
#[utoipa::path(
    post, path = "/admin/jobs/{id}/revive", operation_id = "adminReviveJob", tag = "Operator",
    params(("id" = String, Path, description = "Job id")),
    responses(
        (status = 200, description = "Revived", body = RevivedJob),
        (status = 404, description = "No dead job has this id (`NOT_FOUND`), or the operator API is off", body = ErrorResponse),
    ),
)]
pub async fn revive_job(
    State(state): State<AppState>,
    WirePath(id): WirePath<JobId>,
) -> ApiResult<JsonAnswer<RevivedJob>> {
    state.engine.revive_job(&id).await?;
    Ok(JsonAnswer(RevivedJob {
        revived: true,
        id: id.into_string(),
    }))
}
