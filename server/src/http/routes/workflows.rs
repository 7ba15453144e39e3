//! `/workflows`: workflows, their steps, transitions and executions, and the workspace's
//! webhook signing secret.

use crate::http::answer::JsonAnswer;
use crate::http::path::WirePath;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use posthorn_core::app::workflows::{CreateStep, ListExecutions, ListWorkflows};
use posthorn_core::app::Caller;
use posthorn_core::model::{ExecutionId, StepId, TransitionId, WorkflowId};
use posthorn_core::workflow::{Execution, Transition};
use std::sync::Arc;

use crate::http::body::Wire;
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::query::WireQuery;
use crate::http::wire::segments::PageQuery;
use crate::http::wire::workflows::{
    ExecutionBody, ExecutionPage, ExecutionStartBody, SigningSecret, StepCreateBody, StepPatchBody,
    StepRecord, TransitionCreateBody, WorkflowCreateBody, WorkflowPage, WorkflowPatchBody,
    WorkflowRecord, WorkflowWithSteps,
};
use crate::http::AppState;

/// Create a workflow
///
/// With its TRIGGER step. `triggerType` EVENT (default; `triggerConfig.eventName` or the
/// `eventName` shorthand), MANUAL, or SCHEDULE (`{cron, timezone?, segmentId}`). Disabled
/// unless `enabled: true`.
#[utoipa::path(
    post, path = "/workflows", operation_id = "createWorkflow", tag = "Workflows",
    request_body = WorkflowCreateBody,
    responses(
        (status = 201, description = "Created, with its TRIGGER step", body = WorkflowWithSteps),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`) or a malformed `Idempotency-Key` (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 409, description = "A request with this `Idempotency-Key` is still running (`CONFLICT`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or trigger configuration, each at its path, e.g. `triggerConfig.cron` (`VALIDATION_ERROR`), or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    Wire(body): Wire<WorkflowCreateBody>,
) -> ApiResult<Response> {
    let view = state
        .engine
        .create_workflow(&caller, body.try_into()?)
        .await?;
    Ok((
        StatusCode::CREATED,
        JsonAnswer(WorkflowWithSteps::from(view)),
    )
        .into_response())
}

/// List workflows
///
/// Page pagination, newest first, without steps.
#[utoipa::path(
    get, path = "/workflows", operation_id = "listWorkflows", tag = "Workflows",
    params(PageQuery),
    responses(
        (status = 200, description = "A page of workflows", body = WorkflowPage),
        (status = 400, description = "Malformed query string (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 422, description = "`page`, `pageSize` or `limit` out of range or not an integer (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WireQuery(query): WireQuery<PageQuery>,
) -> ApiResult<Response> {
    let page = state
        .engine
        .list_workflows(&caller, ListWorkflows { page: query.into() })
        .await?;
    Ok(JsonAnswer(WorkflowPage::from(page)).into_response())
}

/// Get a workflow
///
/// With `steps`, each with its `template` (`{id, name}`, SEND_EMAIL steps) and its
/// `outgoingTransitions` and `incomingTransitions`.
#[utoipa::path(
    get, path = "/workflows/{id}", operation_id = "getWorkflow", tag = "Workflows",
    params(("id" = String, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "The workflow with its steps", body = WorkflowWithSteps),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow in this workspace (`WORKFLOW_NOT_FOUND`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn read(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<String>,
) -> ApiResult<Response> {
    let view = state
        .engine
        .workflow(&caller, &WorkflowId::from(id))
        .await?;
    Ok(JsonAnswer(WorkflowWithSteps::from(view)).into_response())
}

/// Update a workflow
///
/// `name`, `description`, `triggerType`, `triggerConfig`, `enabled`, `allowReentry`; fields
/// not given are left alone. Answers without steps. Disabling stops new enrolments only.
#[utoipa::path(
    patch, path = "/workflows/{id}", operation_id = "updateWorkflow", tag = "Workflows",
    params(("id" = String, Path, description = "Workflow id")),
    request_body = WorkflowPatchBody,
    responses(
        (status = 200, description = "The updated workflow, without steps", body = WorkflowRecord),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow in this workspace (`WORKFLOW_NOT_FOUND`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or trigger configuration (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn patch(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<String>,
    Wire(body): Wire<WorkflowPatchBody>,
) -> ApiResult<Response> {
    let id = WorkflowId::from(id);
    // A trigger configuration is read for a kind, which may be the stored one.
    let current = if body.touches_trigger() {
        Some(state.engine.workflow_record(&caller, &id).await?.trigger)
    } else {
        None
    };
    let patch = body.into_patch(current.as_ref())?;
    let workflow = state.engine.patch_workflow(&caller, &id, patch).await?;
    Ok(JsonAnswer(WorkflowRecord::from(workflow)).into_response())
}

/// Delete a workflow
///
/// With its steps, transitions and finished executions. Refused while executions are RUNNING
/// or WAITING: cancel them first.
#[utoipa::path(
    delete, path = "/workflows/{id}", operation_id = "deleteWorkflow", tag = "Workflows",
    params(("id" = String, Path, description = "Workflow id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow in this workspace (`WORKFLOW_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "Executions are RUNNING or WAITING (`CONFLICT`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<String>,
) -> ApiResult<Response> {
    state
        .engine
        .delete_workflow(&caller, &WorkflowId::from(id))
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Add a step
///
/// `type` and `config` as in docs/api.md; SEND_EMAIL steps name their `templateId`. TRIGGER
/// steps are made with the workflow only.
#[utoipa::path(
    post, path = "/workflows/{id}/steps", operation_id = "createWorkflowStep", tag = "Workflows",
    params(("id" = String, Path, description = "Workflow id")),
    request_body = StepCreateBody,
    responses(
        (status = 201, description = "Created", body = StepRecord),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), a malformed `Idempotency-Key` (`BAD_REQUEST`), or a TRIGGER step (`INVALID_STATE`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow in this workspace (`WORKFLOW_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A request with this `Idempotency-Key` is still running (`CONFLICT`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or `config`, each at its path, e.g. `config.amount`; a missing, refused or unknown `templateId` (`VALIDATION_ERROR`); or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn create_step(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<String>,
    Wire(body): Wire<StepCreateBody>,
) -> ApiResult<Response> {
    let id = WorkflowId::from(id);
    let cmd = match CreateStep::try_from(body) {
        Ok(cmd) => cmd,
        Err(invalid) => {
            // An unknown workflow is reported before an invalid body, as for every step call.
            state.engine.workflow_record(&caller, &id).await?;
            return Err(invalid.into());
        }
    };
    let step = state.engine.create_step(&caller, &id, cmd).await?;
    Ok((StatusCode::CREATED, JsonAnswer(StepRecord::from(step))).into_response())
}

/// Update a step
///
/// `name`, `position`, `config` (checked for the step's kind, which never changes) and
/// `templateId`. The TRIGGER step's configuration follows the workflow's trigger.
#[utoipa::path(
    patch, path = "/workflows/{id}/steps/{stepId}", operation_id = "updateWorkflowStep", tag = "Workflows",
    params(
        ("id" = String, Path, description = "Workflow id"),
        ("stepId" = String, Path, description = "Step id"),
    ),
    request_body = StepPatchBody,
    responses(
        (status = 200, description = "The updated step", body = StepRecord),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), or a `config` for the TRIGGER step (`INVALID_STATE`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow (`WORKFLOW_NOT_FOUND`) or step (`NOT_FOUND`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields or `config`, or a missing, refused or unknown `templateId` (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn patch_step(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath((id, step_id)): WirePath<(String, String)>,
    Wire(body): Wire<StepPatchBody>,
) -> ApiResult<Response> {
    let (id, step_id) = (WorkflowId::from(id), StepId::from(step_id));
    // A new config is read for the step's kind, which never changes.
    let kind = if body.config.is_some() {
        let step = state.engine.workflow_step(&caller, &id, &step_id).await?;
        Some(step.action.step_type())
    } else {
        None
    };
    let patch = body.into_patch(kind)?;
    let step = state
        .engine
        .patch_step(&caller, &id, &step_id, patch)
        .await?;
    Ok(JsonAnswer(StepRecord::from(step)).into_response())
}

/// Delete a step
///
/// With the transitions into and out of it; never the TRIGGER step.
#[utoipa::path(
    delete, path = "/workflows/{id}/steps/{stepId}", operation_id = "deleteWorkflowStep", tag = "Workflows",
    params(
        ("id" = String, Path, description = "Workflow id"),
        ("stepId" = String, Path, description = "Step id"),
    ),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "The TRIGGER step (`INVALID_STATE`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow (`WORKFLOW_NOT_FOUND`) or step (`NOT_FOUND`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn delete_step(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath((id, step_id)): WirePath<(String, String)>,
) -> ApiResult<Response> {
    state
        .engine
        .delete_step(&caller, &WorkflowId::from(id), &StepId::from(step_id))
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Add a transition
///
/// An edge between two steps of the workflow. Refused (400 `INVALID_STATE`, the message
/// naming the rule): self-loops, cycles, edges out of EXIT or into TRIGGER, a `condition`
/// that does not fit the source step, or a second edge for the same branch or outcome.
#[utoipa::path(
    post, path = "/workflows/{id}/transitions", operation_id = "createWorkflowTransition", tag = "Workflows",
    params(("id" = String, Path, description = "Workflow id")),
    request_body = TransitionCreateBody,
    responses(
        (status = 201, description = "Created", body = Transition),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), a malformed `Idempotency-Key` (`BAD_REQUEST`), or a broken graph rule (`INVALID_STATE`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow (`WORKFLOW_NOT_FOUND`) or step (`NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "A request with this `Idempotency-Key` is still running (`CONFLICT`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields (`VALIDATION_ERROR`) or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn create_transition(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<String>,
    Wire(body): Wire<TransitionCreateBody>,
) -> ApiResult<Response> {
    let transition = state
        .engine
        .create_transition(&caller, &WorkflowId::from(id), body.into())
        .await?;
    Ok((StatusCode::CREATED, JsonAnswer(transition)).into_response())
}

/// Delete a transition
#[utoipa::path(
    delete, path = "/workflows/{id}/transitions/{transitionId}", operation_id = "deleteWorkflowTransition", tag = "Workflows",
    params(
        ("id" = String, Path, description = "Workflow id"),
        ("transitionId" = String, Path, description = "Transition id"),
    ),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow (`WORKFLOW_NOT_FOUND`) or transition (`NOT_FOUND`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn delete_transition(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath((id, transition_id)): WirePath<(String, String)>,
) -> ApiResult<Response> {
    state
        .engine
        .delete_transition(
            &caller,
            &WorkflowId::from(id),
            &TransitionId::from(transition_id),
        )
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Start an execution
///
/// For one contact, now; `context` becomes the execution's `event`. The workflow must be
/// enabled (any trigger type may be started by hand).
#[utoipa::path(
    post, path = "/workflows/{id}/executions", operation_id = "startWorkflowExecution", tag = "Workflows",
    params(("id" = String, Path, description = "Workflow id")),
    request_body = ExecutionStartBody,
    responses(
        (status = 201, description = "Started (RUNNING)", body = Execution),
        (status = 400, description = "Malformed JSON or body (`VALIDATION_ERROR`), a malformed `Idempotency-Key` (`BAD_REQUEST`), or a disabled workflow (`INVALID_STATE`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow (`WORKFLOW_NOT_FOUND`) or contact (`CONTACT_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "The re-entry rule refuses the contact, or a request with this `Idempotency-Key` is still running (`CONFLICT`)", body = ErrorResponse),
        (status = 413, description = "Body larger than the limit (`PAYLOAD_TOO_LARGE`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields (`VALIDATION_ERROR`) or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn start_execution(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<String>,
    Wire(body): Wire<ExecutionStartBody>,
) -> ApiResult<Response> {
    let execution = state
        .engine
        .start_execution(&caller, &WorkflowId::from(id), body.into())
        .await?;
    Ok((StatusCode::CREATED, JsonAnswer(execution)).into_response())
}

/// List a workflow's executions
///
/// Page pagination, newest first.
#[utoipa::path(
    get, path = "/workflows/{id}/executions", operation_id = "listWorkflowExecutions", tag = "Workflows",
    params(("id" = String, Path, description = "Workflow id"), PageQuery),
    responses(
        (status = 200, description = "A page of executions", body = ExecutionPage),
        (status = 400, description = "Malformed query string (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow in this workspace (`WORKFLOW_NOT_FOUND`)", body = ErrorResponse),
        (status = 422, description = "`page`, `pageSize` or `limit` out of range or not an integer (`VALIDATION_ERROR`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn list_executions(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<String>,
    WireQuery(query): WireQuery<PageQuery>,
) -> ApiResult<Response> {
    let page = state
        .engine
        .list_executions(
            &caller,
            &WorkflowId::from(id),
            ListExecutions { page: query.into() },
        )
        .await?;
    Ok(JsonAnswer(ExecutionPage::from(page)).into_response())
}

/// Get an execution
///
/// With `steps`: each step it ran, its status, output and error, and for WEBHOOK steps every
/// HTTP attempt (`at`, `statusCode`, `latencyMs`, `error`).
#[utoipa::path(
    get, path = "/workflows/{id}/executions/{executionId}", operation_id = "getWorkflowExecution", tag = "Workflows",
    params(
        ("id" = String, Path, description = "Workflow id"),
        ("executionId" = String, Path, description = "Execution id"),
    ),
    responses(
        (status = 200, description = "The execution with its step records", body = ExecutionBody),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow (`WORKFLOW_NOT_FOUND`) or execution (`NOT_FOUND`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn read_execution(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath((id, execution_id)): WirePath<(String, String)>,
) -> ApiResult<Response> {
    let view = state
        .engine
        .execution(
            &caller,
            &WorkflowId::from(id),
            &ExecutionId::from(execution_id),
        )
        .await?;
    Ok(JsonAnswer(ExecutionBody::from(view)).into_response())
}

/// Cancel an execution
///
/// A RUNNING or WAITING execution becomes CANCELLED; its pending steps do nothing.
#[utoipa::path(
    delete, path = "/workflows/{id}/executions/{executionId}", operation_id = "cancelWorkflowExecution", tag = "Workflows",
    params(
        ("id" = String, Path, description = "Workflow id"),
        ("executionId" = String, Path, description = "Execution id"),
    ),
    responses(
        (status = 200, description = "The cancelled execution", body = Execution),
        (status = 400, description = "The execution already ended (`INVALID_STATE`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 404, description = "No such workflow (`WORKFLOW_NOT_FOUND`) or execution (`NOT_FOUND`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn cancel_execution(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath((id, execution_id)): WirePath<(String, String)>,
) -> ApiResult<Response> {
    let execution = state
        .engine
        .cancel_execution(
            &caller,
            &WorkflowId::from(id),
            &ExecutionId::from(execution_id),
        )
        .await?;
    Ok(JsonAnswer(execution).into_response())
}

/// Get the webhook signing secret
///
/// The workspace's `whsec_...` secret WEBHOOK steps sign with (Standard Webhooks: the
/// `webhook-signature` header is `v1,` and the base64 HMAC-SHA256 of
/// `{webhook-id}.{webhook-timestamp}.{body}` keyed by the base64-decoded part after `whsec_`).
/// Made on first use.
#[utoipa::path(
    get, path = "/workflows/signing-secret", operation_id = "getWorkflowSigningSecret", tag = "Workflows",
    responses(
        (status = 200, description = "The secret", body = SigningSecret),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn signing_secret(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
) -> ApiResult<Response> {
    let view = state.engine.signing_secret(&caller).await?;
    Ok(JsonAnswer(SigningSecret {
        secret: view.secret,
        previous_expires_at: view.previous_expires_at,
    })
    .into_response())
}

/// Rotate the webhook signing secret
///
/// A new secret signs from now on; the previous one keeps signing beside it (a second
/// `v1,` signature) until `previousExpiresAt`.
#[utoipa::path(
    post, path = "/workflows/signing-secret/rotate", operation_id = "rotateWorkflowSigningSecret", tag = "Workflows",
    responses(
        (status = 200, description = "The new secret", body = SigningSecret),
        (status = 400, description = "A malformed `Idempotency-Key` (`BAD_REQUEST`)", body = ErrorResponse),
        (status = 401, description = "Missing (`MISSING_AUTH`) or unknown key (`INVALID_API_KEY`)", body = ErrorResponse),
        (status = 403, description = "Public key (`FORBIDDEN`) or workspace disabled (`PROJECT_DISABLED`)", body = ErrorResponse),
        (status = 409, description = "A request with this `Idempotency-Key` is still running (`CONFLICT`)", body = ErrorResponse),
        (status = 429, description = "Workspace request budget spent (`RATE_LIMIT_EXCEEDED`)", body = ErrorResponse, headers(
            ("Retry-After" = u64, description = "Seconds until the budget resets"),
        )),
        (status = 500, description = "Unexpected error (`INTERNAL_ERROR`)", body = ErrorResponse),
        (status = 503, description = "Database or Redis unavailable (`SERVICE_UNAVAILABLE`); retry after `Retry-After` seconds", body = ErrorResponse),
    ),
)]
pub async fn rotate_signing_secret(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
) -> ApiResult<Response> {
    let view = state.engine.rotate_signing_secret(&caller).await?;
    Ok(JsonAnswer(SigningSecret {
        secret: view.secret,
        previous_expires_at: view.previous_expires_at,
    })
    .into_response())
}
