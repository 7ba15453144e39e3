//! Workflow reads (`WorkflowStore`): definitions, executions, step records, signing keys.
//! Each is one statement on an index of migration 0002.

use posthorn_core::model::{ContactId, ExecutionId, StepId, TemplateId, WorkflowId, WorkspaceId};
use posthorn_core::ports::{SigningKeys, StoreError};
use posthorn_core::workflow::{Execution, Step, StepRun, Transition, Workflow};
use sqlx::SqlitePool;

use crate::error;
use crate::rows::{all, count, sql_limit};
use crate::workflow_rows::{
    self as rows, execution_cols, step_cols, step_run_cols, transition_cols, workflow_cols,
};

/// `has_event_interest` (?1 workspace, ?2 event name, ?3 contact): runs on every stored
/// event, so both probes are served by partial indexes (`workflows_by_event`,
/// `workflow_executions_waiting`).
pub(crate) const EVENT_INTEREST: &str = "SELECT EXISTS (SELECT 1 FROM workflows \
     WHERE workspace_id = ?1 AND trigger_event_name = ?2 AND enabled = 1 \
     AND trigger_event_name IS NOT NULL) \
     OR EXISTS (SELECT 1 FROM workflow_executions WHERE workspace_id = ?1 \
     AND contact_id = ?3 AND wait_event_name = ?2 AND status = 'WAITING')";

/// Whether no event of the workspace (?1) can concern a workflow: none enabled with an
/// EVENT trigger (on `workflows_by_event`), no execution waiting (on
/// `workflow_executions_waiting`).
const QUIET: &str = "SELECT NOT EXISTS (SELECT 1 FROM workflows \
     WHERE workspace_id = ?1 AND enabled = 1 AND trigger_event_name IS NOT NULL) \
     AND NOT EXISTS (SELECT 1 FROM workflow_executions WHERE workspace_id = ?1 \
     AND status = 'WAITING')";

/// `waiting_executions` (?1 workspace, ?2 contact, ?3 event name), on
/// `workflow_executions_waiting`.
pub(crate) const WAITING: &str = concat!(
    "SELECT ",
    execution_cols!(),
    " FROM workflow_executions WHERE workspace_id = ?1 AND contact_id = ?2 \
     AND wait_event_name = ?3 AND status = 'WAITING' ORDER BY started_at, id"
);

/// A workflow by id.
pub(crate) async fn workflow(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    id: &WorkflowId,
) -> Result<Option<Workflow>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        workflow_cols!(),
        " FROM workflows WHERE workspace_id = ?1 AND id = ?2"
    ))
    .bind(workspace_id.to_string())
    .bind(id.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::workflow).transpose()
}

/// A newest-first (creation time, then id) page of workflows and how many there are.
pub(crate) async fn workflows(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    offset: usize,
    limit: usize,
) -> Result<(Vec<Workflow>, u64), StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        workflow_cols!(),
        " FROM workflows WHERE workspace_id = ?1 \
         ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3"
    ))
    .bind(workspace_id.to_string())
    .bind(sql_limit(limit))
    .bind(sql_limit(offset))
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    let page = all(&found, rows::workflow)?;
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM workflows WHERE workspace_id = ?1")
        .bind(workspace_id.to_string())
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok((page, count(total)))
}

/// A workflow's steps, oldest first (creation time, then id).
pub(crate) async fn steps(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    workflow_id: &WorkflowId,
) -> Result<Vec<Step>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        step_cols!(),
        " FROM workflow_steps WHERE workspace_id = ?1 AND workflow_id = ?2 \
         ORDER BY created_at, id"
    ))
    .bind(workspace_id.to_string())
    .bind(workflow_id.to_string())
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    all(&found, rows::step)
}

/// A workflow's transitions by ascending priority, then oldest first.
pub(crate) async fn transitions(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    workflow_id: &WorkflowId,
) -> Result<Vec<Transition>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        transition_cols!(),
        " FROM workflow_transitions WHERE workspace_id = ?1 AND workflow_id = ?2 \
         ORDER BY priority, created_at, id"
    ))
    .bind(workspace_id.to_string())
    .bind(workflow_id.to_string())
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    all(&found, rows::transition)
}

/// The enabled EVENT workflows on `event_name`, oldest first.
pub(crate) async fn event_workflows(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    event_name: &str,
) -> Result<Vec<Workflow>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        workflow_cols!(),
        " FROM workflows WHERE workspace_id = ?1 AND trigger_event_name = ?2 AND enabled = 1 \
         ORDER BY created_at, id"
    ))
    .bind(workspace_id.to_string())
    .bind(event_name.to_string())
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    all(&found, rows::workflow)
}

/// Whether an enabled workflow is triggered by `event_name` or an execution of the contact
/// waits for it: one statement, two probes of partial indexes.
pub(crate) async fn has_event_interest(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    event_name: &str,
    contact_id: &ContactId,
) -> Result<bool, StoreError> {
    let found: i64 = sqlx::query_scalar(EVENT_INTEREST)
        .bind(workspace_id.to_string())
        .bind(event_name.to_string())
        .bind(contact_id.to_string())
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok(found != 0)
}

/// Whether no event of the workspace can concern a workflow (see [`QUIET`]).
pub(crate) async fn quiet(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
) -> Result<bool, StoreError> {
    let quiet: i64 = sqlx::query_scalar(QUIET)
        .bind(workspace_id.to_string())
        .fetch_one(pool)
        .await
        .map_err(error::store)?;
    Ok(quiet != 0)
}

/// A contact's executions WAITING for `event_name`, oldest first (start, then id).
pub(crate) async fn waiting_executions(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    contact_id: &ContactId,
    event_name: &str,
) -> Result<Vec<Execution>, StoreError> {
    let found = sqlx::query(WAITING)
        .bind(workspace_id.to_string())
        .bind(contact_id.to_string())
        .bind(event_name.to_string())
        .fetch_all(pool)
        .await
        .map_err(error::store)?;
    all(&found, rows::execution)
}

/// An execution by id.
pub(crate) async fn execution(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    id: &ExecutionId,
) -> Result<Option<Execution>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        execution_cols!(),
        " FROM workflow_executions WHERE workspace_id = ?1 AND id = ?2"
    ))
    .bind(workspace_id.to_string())
    .bind(id.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::execution).transpose()
}

/// A newest-first (start, then id) page of a workflow's executions and how many it has.
pub(crate) async fn executions(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    workflow_id: &WorkflowId,
    offset: usize,
    limit: usize,
) -> Result<(Vec<Execution>, u64), StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        execution_cols!(),
        " FROM workflow_executions WHERE workspace_id = ?1 AND workflow_id = ?2 \
         ORDER BY started_at DESC, id DESC LIMIT ?3 OFFSET ?4"
    ))
    .bind(workspace_id.to_string())
    .bind(workflow_id.to_string())
    .bind(sql_limit(limit))
    .bind(sql_limit(offset))
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    let page = all(&found, rows::execution)?;
    let total: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM workflow_executions WHERE workspace_id = ?1 AND workflow_id = ?2",
    )
    .bind(workspace_id.to_string())
    .bind(workflow_id.to_string())
    .fetch_one(pool)
    .await
    .map_err(error::store)?;
    Ok((page, count(total)))
}

/// How many of a workflow's executions are RUNNING or WAITING.
pub(crate) async fn active_executions(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    workflow_id: &WorkflowId,
) -> Result<u64, StoreError> {
    let n: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM workflow_executions WHERE workspace_id = ?1 \
         AND workflow_id = ?2 AND status IN ('RUNNING', 'WAITING')",
    )
    .bind(workspace_id.to_string())
    .bind(workflow_id.to_string())
    .fetch_one(pool)
    .await
    .map_err(error::store)?;
    Ok(count(n))
}

/// The record of one step of an execution.
pub(crate) async fn step_run(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    execution_id: &ExecutionId,
    step_id: &StepId,
) -> Result<Option<StepRun>, StoreError> {
    let row = sqlx::query(concat!(
        "SELECT ",
        step_run_cols!(),
        " FROM workflow_step_runs WHERE workspace_id = ?1 AND execution_id = ?2 \
         AND step_id = ?3"
    ))
    .bind(workspace_id.to_string())
    .bind(execution_id.to_string())
    .bind(step_id.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::step_run).transpose()
}

/// Every step record of an execution, in the order the steps started (then inserted, by rowid).
pub(crate) async fn step_runs(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    execution_id: &ExecutionId,
) -> Result<Vec<StepRun>, StoreError> {
    let found = sqlx::query(concat!(
        "SELECT ",
        step_run_cols!(),
        " FROM workflow_step_runs WHERE workspace_id = ?1 AND execution_id = ?2 \
         ORDER BY started_at, rowid"
    ))
    .bind(workspace_id.to_string())
    .bind(execution_id.to_string())
    .fetch_all(pool)
    .await
    .map_err(error::store)?;
    all(&found, rows::step_run)
}

/// Whether a step of the workspace sends the template.
pub(crate) async fn template_in_workflows(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
    template_id: &TemplateId,
) -> Result<bool, StoreError> {
    let found: i64 = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM workflow_steps WHERE workspace_id = ?1 \
         AND template_id = ?2)",
    )
    .bind(workspace_id.to_string())
    .bind(template_id.to_string())
    .fetch_one(pool)
    .await
    .map_err(error::store)?;
    Ok(found != 0)
}

/// The workspace's signing secrets.
pub(crate) async fn signing_keys(
    pool: &SqlitePool,
    workspace_id: &WorkspaceId,
) -> Result<Option<SigningKeys>, StoreError> {
    let row = sqlx::query(
        "SELECT workspace_id, current_secret, previous_secret, previous_until \
         FROM workflow_signing_keys WHERE workspace_id = ?1",
    )
    .bind(workspace_id.to_string())
    .fetch_optional(pool)
    .await
    .map_err(error::store)?;
    row.as_ref().map(rows::signing_keys).transpose()
}
