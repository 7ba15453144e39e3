//! The workflow writes of a change set, applied inside the commit's transaction.

use posthorn_core::model::WorkspaceId;
use posthorn_core::ports::{SigningKeys, StoreError, Write};
use posthorn_core::workflow::{Execution, Step, StepRun, Transition, Trigger, Workflow};
use sqlx::SqliteConnection;

use crate::error;
use crate::rows::{enum_text, micros, opt_micros};
use crate::workflow_rows::json_text;

/// Applies one workflow write (the commit sends only those here).
pub(crate) async fn apply(conn: &mut SqliteConnection, write: &Write) -> Result<(), StoreError> {
    match write {
        Write::PutWorkflow(w) => put_workflow(conn, w).await,
        Write::DeleteWorkflow { workspace_id, id } => {
            delete_workflow(conn, workspace_id, id.as_str()).await
        }
        Write::PutStep(s) => put_step(conn, s).await,
        Write::DeleteStep {
            workspace_id,
            workflow_id,
            id,
        } => delete_step(conn, workspace_id, workflow_id.as_str(), id.as_str()).await,
        Write::PutTransition(t) => put_transition(conn, t).await,
        Write::DeleteTransition {
            workspace_id,
            workflow_id,
            id,
        } => execute(
            conn,
            "DELETE FROM workflow_transitions \
                 WHERE workspace_id = ?1 AND workflow_id = ?2 AND id = ?3",
            &[workspace_id.as_str(), workflow_id.as_str(), id.as_str()],
        )
        .await
        .map(drop),
        Write::InsertExecution(e) => insert_execution(conn, e).await,
        Write::UpdateExecution(e) => update_execution(conn, e).await,
        Write::InsertStepRun(r) => insert_step_run(conn, r).await,
        Write::UpdateStepRun(r) => update_step_run(conn, r).await,
        Write::PutSigningKeys { workspace_id, keys } => {
            put_signing_keys(conn, workspace_id, keys, true).await
        }
        Write::InsertSigningKeys { workspace_id, keys } => {
            put_signing_keys(conn, workspace_id, keys, false).await
        }
        _ => Err(StoreError::Unavailable(
            "a write that is not a workflow write reached the workflow commit".into(),
        )),
    }
}

/// Runs `sql` with text parameters; returns the rows it touched.
async fn execute(
    conn: &mut SqliteConnection,
    sql: &'static str,
    args: &[&str],
) -> Result<u64, StoreError> {
    let mut query = sqlx::query(sql);
    for arg in args {
        query = query.bind(arg.to_string());
    }
    let done = query.execute(conn).await.map_err(error::store)?;
    Ok(done.rows_affected())
}

/// A unique violation as the conflict it stands for, any other error as usual.
fn guarded(err: sqlx::Error, what: impl FnOnce() -> String) -> StoreError {
    if error::is_constraint(&err) {
        StoreError::Conflict(what())
    } else {
        error::store(err)
    }
}

async fn put_workflow(conn: &mut SqliteConnection, w: &Workflow) -> Result<(), StoreError> {
    let event_name = match &w.trigger {
        Trigger::Event { event_name } => Some(event_name.clone()),
        Trigger::Manual {} | Trigger::Schedule { .. } => None,
    };
    sqlx::query(
        "INSERT INTO workflows (workspace_id, id, name, description, enabled, trigger, \
         trigger_event_name, allow_reentry, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
         ON CONFLICT (workspace_id, id) DO UPDATE SET name = EXCLUDED.name, \
         description = EXCLUDED.description, enabled = EXCLUDED.enabled, \
         trigger = EXCLUDED.trigger, trigger_event_name = EXCLUDED.trigger_event_name, \
         allow_reentry = EXCLUDED.allow_reentry, created_at = EXCLUDED.created_at, \
         updated_at = EXCLUDED.updated_at",
    )
    .bind(w.workspace_id.to_string())
    .bind(w.id.to_string())
    .bind(w.name.clone())
    .bind(w.description.clone())
    .bind(w.enabled)
    .bind(json_text("workflow trigger", &w.trigger)?)
    .bind(event_name)
    .bind(w.allow_reentry)
    .bind(micros(w.created_at))
    .bind(micros(w.updated_at))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// Deletes a workflow and everything under it: step records, executions, transitions,
/// steps.
async fn delete_workflow(
    conn: &mut SqliteConnection,
    workspace_id: &WorkspaceId,
    id: &str,
) -> Result<(), StoreError> {
    let ws = workspace_id.as_str();
    execute(
        conn,
        "DELETE FROM workflow_step_runs WHERE workspace_id = ?1 AND execution_id IN \
         (SELECT id FROM workflow_executions WHERE workspace_id = ?1 AND workflow_id = ?2)",
        &[ws, id],
    )
    .await?;
    for sql in [
        "DELETE FROM workflow_executions WHERE workspace_id = ?1 AND workflow_id = ?2",
        "DELETE FROM workflow_transitions WHERE workspace_id = ?1 AND workflow_id = ?2",
        "DELETE FROM workflow_steps WHERE workspace_id = ?1 AND workflow_id = ?2",
        "DELETE FROM workflows WHERE workspace_id = ?1 AND id = ?2",
    ] {
        execute(conn, sql, &[ws, id]).await?;
    }
    Ok(())
}

async fn put_step(conn: &mut SqliteConnection, s: &Step) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO workflow_steps (workspace_id, id, workflow_id, name, position, step_type, \
         action, template_id, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
         ON CONFLICT (workspace_id, id) DO UPDATE SET workflow_id = EXCLUDED.workflow_id, \
         name = EXCLUDED.name, position = EXCLUDED.position, step_type = EXCLUDED.step_type, \
         action = EXCLUDED.action, template_id = EXCLUDED.template_id, \
         created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at",
    )
    .bind(s.workspace_id.to_string())
    .bind(s.id.to_string())
    .bind(s.workflow_id.to_string())
    .bind(s.name.clone())
    .bind(json_text("step position", &s.position)?)
    .bind(enum_text(&s.action.step_type()))
    .bind(json_text("step action", &s.action)?)
    .bind(s.template_id.as_ref().map(|t| t.to_string()))
    .bind(micros(s.created_at))
    .bind(micros(s.updated_at))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// Deletes a step and every transition into or out of it.
async fn delete_step(
    conn: &mut SqliteConnection,
    workspace_id: &WorkspaceId,
    workflow_id: &str,
    id: &str,
) -> Result<(), StoreError> {
    let args = [workspace_id.as_str(), workflow_id, id];
    execute(
        conn,
        "DELETE FROM workflow_transitions WHERE workspace_id = ?1 AND workflow_id = ?2 \
         AND (from_step_id = ?3 OR to_step_id = ?3)",
        &args,
    )
    .await?;
    execute(
        conn,
        "DELETE FROM workflow_steps WHERE workspace_id = ?1 AND workflow_id = ?2 AND id = ?3",
        &args,
    )
    .await?;
    Ok(())
}

async fn put_transition(conn: &mut SqliteConnection, t: &Transition) -> Result<(), StoreError> {
    let condition = t
        .condition
        .as_ref()
        .map(|c| json_text("transition condition", c))
        .transpose()?;
    sqlx::query(
        "INSERT INTO workflow_transitions (workspace_id, id, workflow_id, from_step_id, \
         to_step_id, condition, priority, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
         ON CONFLICT (workspace_id, id) DO UPDATE SET workflow_id = EXCLUDED.workflow_id, \
         from_step_id = EXCLUDED.from_step_id, to_step_id = EXCLUDED.to_step_id, \
         condition = EXCLUDED.condition, priority = EXCLUDED.priority, \
         created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at",
    )
    .bind(t.workspace_id.to_string())
    .bind(t.id.to_string())
    .bind(t.workflow_id.to_string())
    .bind(t.from_step_id.to_string())
    .bind(t.to_step_id.to_string())
    .bind(condition)
    .bind(t.priority)
    .bind(micros(t.created_at))
    .bind(micros(t.updated_at))
    .execute(conn)
    .await
    .map_err(error::store)?;
    Ok(())
}

/// Binds every column of an execution but `version` in `execution_cols!` order
/// (?1 = workspace, ?2 = id, ..., ?15 = updated_at).
macro_rules! bind_execution {
    ($query:expr, $e:expr, $event:expr) => {
        $query
            .bind($e.workspace_id.to_string())
            .bind($e.id.to_string())
            .bind($e.workflow_id.to_string())
            .bind($e.contact_id.to_string())
            .bind(enum_text(&$e.status))
            .bind($event)
            .bind($e.current_step_id.as_ref().map(|s| s.to_string()))
            .bind($e.waiting.as_ref().map(|w| w.step_id.to_string()))
            .bind($e.waiting.as_ref().and_then(|w| w.event_name.clone()))
            .bind(opt_micros($e.waiting.as_ref().and_then(|w| w.until)))
            .bind($e.reason.clone())
            .bind($e.single_entry)
            .bind(micros($e.started_at))
            .bind(opt_micros($e.completed_at))
            .bind(micros($e.updated_at))
    };
}

/// Inserts an execution at version 0 under the re-entry rule: the partial unique indexes
/// refuse a second RUNNING/WAITING execution of a (workflow, contact) and a second
/// single-entry one. Commits are serialised by the one writer, so the look-up of a
/// single-entry start (any earlier execution of the pair) cannot race another insert.
async fn insert_execution(conn: &mut SqliteConnection, e: &Execution) -> Result<(), StoreError> {
    let refused = || {
        format!(
            "execution {} of workflow {} for contact {} is refused: the id exists or the \
             re-entry rule forbids it",
            e.id, e.workflow_id, e.contact_id
        )
    };
    if e.single_entry {
        let entered: i64 = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM workflow_executions WHERE workspace_id = ?1 \
             AND workflow_id = ?2 AND contact_id = ?3)",
        )
        .bind(e.workspace_id.to_string())
        .bind(e.workflow_id.to_string())
        .bind(e.contact_id.to_string())
        .fetch_one(&mut *conn)
        .await
        .map_err(error::store)?;
        if entered != 0 {
            return Err(StoreError::Conflict(refused()));
        }
    }
    let query = sqlx::query(concat!(
        "INSERT INTO workflow_executions (",
        crate::workflow_rows::execution_cols!(),
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 0)"
    ));
    bind_execution!(query, e, json_text("execution event", &e.event)?)
        .execute(conn)
        .await
        .map_err(|err| guarded(err, refused))?;
    Ok(())
}

/// Replaces an execution at the version it was read at; stores `version + 1`.
async fn update_execution(conn: &mut SqliteConnection, e: &Execution) -> Result<(), StoreError> {
    let query = sqlx::query(
        "UPDATE workflow_executions SET workflow_id = ?3, contact_id = ?4, status = ?5, \
         event = ?6, current_step_id = ?7, wait_step_id = ?8, wait_event_name = ?9, \
         wait_until = ?10, reason = ?11, single_entry = ?12, started_at = ?13, \
         completed_at = ?14, updated_at = ?15, version = version + 1 \
         WHERE workspace_id = ?1 AND id = ?2 AND version = ?16",
    );
    let done = bind_execution!(query, e, json_text("execution event", &e.event)?)
        .bind(e.version)
        .execute(conn)
        .await
        .map_err(|err| {
            guarded(err, || {
                format!(
                    "execution {}: contact {} already has an active execution of workflow {}",
                    e.id, e.contact_id, e.workflow_id
                )
            })
        })?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Conflict(format!(
            "execution {} is gone or not at version {}",
            e.id, e.version
        )));
    }
    Ok(())
}

/// Binds every column of a step record in `step_run_cols!` order.
macro_rules! bind_step_run {
    ($query:expr, $r:expr) => {
        $query
            .bind($r.workspace_id.to_string())
            .bind($r.execution_id.to_string())
            .bind($r.step_id.to_string())
            .bind(enum_text(&$r.step_type))
            .bind(enum_text(&$r.status))
            .bind(
                $r.output
                    .as_ref()
                    .map(|o| json_text("step output", o))
                    .transpose()?,
            )
            .bind($r.error.clone())
            .bind($r.email_id.as_ref().map(|id| id.to_string()))
            .bind(json_text("webhook attempts", &$r.attempts)?)
            .bind(micros($r.started_at))
            .bind(opt_micros($r.completed_at))
    };
}

async fn insert_step_run(conn: &mut SqliteConnection, r: &StepRun) -> Result<(), StoreError> {
    let query = sqlx::query(concat!(
        "INSERT INTO workflow_step_runs (",
        crate::workflow_rows::step_run_cols!(),
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
    ));
    bind_step_run!(query, r)
        .execute(conn)
        .await
        .map_err(|err| {
            guarded(err, || {
                format!(
                    "step {} of execution {} already has a record",
                    r.step_id, r.execution_id
                )
            })
        })?;
    Ok(())
}

async fn update_step_run(conn: &mut SqliteConnection, r: &StepRun) -> Result<(), StoreError> {
    let query = sqlx::query(
        "UPDATE workflow_step_runs SET step_type = ?4, status = ?5, output = ?6, error = ?7, \
         email_id = ?8, attempts = ?9, started_at = ?10, completed_at = ?11 \
         WHERE workspace_id = ?1 AND execution_id = ?2 AND step_id = ?3",
    );
    let done = bind_step_run!(query, r)
        .execute(conn)
        .await
        .map_err(error::store)?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Conflict(format!(
            "the record of step {} of execution {} is gone",
            r.step_id, r.execution_id
        )));
    }
    Ok(())
}

/// Stores `keys`, replacing the workspace's (`replace`) or only when it has none.
async fn put_signing_keys(
    conn: &mut SqliteConnection,
    workspace_id: &WorkspaceId,
    keys: &SigningKeys,
    replace: bool,
) -> Result<(), StoreError> {
    let previous = keys.previous();
    let sql = if replace {
        "INSERT INTO workflow_signing_keys (workspace_id, current_secret, previous_secret, \
         previous_until) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (workspace_id) DO UPDATE SET current_secret = EXCLUDED.current_secret, \
         previous_secret = EXCLUDED.previous_secret, previous_until = EXCLUDED.previous_until"
    } else {
        "INSERT INTO workflow_signing_keys (workspace_id, current_secret, previous_secret, \
         previous_until) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (workspace_id) DO NOTHING"
    };
    sqlx::query(sql)
        .bind(workspace_id.to_string())
        .bind(keys.current().expose())
        .bind(previous.map(|(secret, _)| secret.expose()))
        .bind(previous.map(|(_, until)| micros(until)))
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}
