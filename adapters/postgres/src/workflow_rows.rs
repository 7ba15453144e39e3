//! Column lists and row decoders of the workflow tables. A row that does not decode is
//! `Corrupt`, naming the table, the column and the record.

use posthorn_core::ports::{SigningKeys, StoreError, WebhookSecret};
use posthorn_core::workflow::{Execution, Step, StepRun, Transition, Wait, Workflow};
use serde::de::DeserializeOwned;
use serde::Serialize;
use sqlx::postgres::PgRow;
use sqlx::{Decode, Postgres, Row, Type};

use crate::error::corrupt;

/// Columns of `workflows`.
macro_rules! workflow_cols {
    () => {
        "workspace_id, id, name, description, enabled, trigger, allow_reentry, created_at, \
         updated_at"
    };
}

/// Columns of `workflow_steps`.
macro_rules! step_cols {
    () => {
        "workspace_id, id, workflow_id, name, position, action, template_id, created_at, \
         updated_at"
    };
}

/// Columns of `workflow_transitions`.
macro_rules! transition_cols {
    () => {
        "workspace_id, id, workflow_id, from_step_id, to_step_id, condition, priority, \
         created_at, updated_at"
    };
}

/// Columns of `workflow_executions`.
macro_rules! execution_cols {
    () => {
        "workspace_id, id, workflow_id, contact_id, status, event, current_step_id, \
         wait_step_id, wait_event_name, wait_until, reason, single_entry, started_at, \
         completed_at, updated_at, version"
    };
}

/// Columns of `workflow_step_runs`.
macro_rules! step_run_cols {
    () => {
        "workspace_id, execution_id, step_id, step_type, status, output, error, email_id, \
         attempts, started_at, completed_at"
    };
}

pub(crate) use {execution_cols, step_cols, step_run_cols, transition_cols, workflow_cols};

/// JSON text of a value the core hands over, as stored.
pub(crate) fn json_text<T: Serialize + ?Sized>(
    what: &str,
    value: &T,
) -> Result<String, StoreError> {
    serde_json::to_string(value)
        .map_err(|e| StoreError::Unavailable(format!("{what} does not serialize: {e}")))
}

/// One record's row: reads columns, naming the table and record when one does not decode.
struct Record<'r> {
    row: &'r PgRow,
    table: &'static str,
    key: String,
}

impl<'r> Record<'r> {
    /// `key_column` names the record in errors (`id`, or `execution_id`/`step_id`).
    fn new(row: &'r PgRow, table: &'static str, key_columns: &[&str]) -> Self {
        let key = key_columns
            .iter()
            .map(|c| row.try_get::<String, _>(*c).unwrap_or_else(|_| "?".into()))
            .collect::<Vec<_>>()
            .join("/");
        Self { row, table, key }
    }

    fn what(&self, column: &str) -> String {
        format!("{}.{column} of {}", self.table, self.key)
    }

    fn get<T>(&self, column: &str) -> Result<T, StoreError>
    where
        T: Decode<'r, Postgres> + Type<Postgres>,
    {
        self.row
            .try_get(column)
            .map_err(|e| corrupt(&self.what(column), e))
    }

    /// A string column as one of the core's id types.
    fn id<T: From<String>>(&self, column: &str) -> Result<T, StoreError> {
        self.get::<String>(column).map(T::from)
    }

    fn opt_id<T: From<String>>(&self, column: &str) -> Result<Option<T>, StoreError> {
        Ok(self.get::<Option<String>>(column)?.map(T::from))
    }

    /// A JSON text column.
    fn json<T: DeserializeOwned>(&self, column: &str) -> Result<T, StoreError> {
        let text: String = self.get(column)?;
        serde_json::from_str(&text).map_err(|e| corrupt(&self.what(column), e))
    }

    fn opt_json<T: DeserializeOwned>(&self, column: &str) -> Result<Option<T>, StoreError> {
        let text: Option<String> = self.get(column)?;
        text.map(|t| serde_json::from_str(&t).map_err(|e| corrupt(&self.what(column), e)))
            .transpose()
    }

    /// A serde enum stored as its text (`RUNNING`, `WEBHOOK`, ...).
    fn enumeration<T: DeserializeOwned>(&self, column: &str) -> Result<T, StoreError> {
        let text: String = self.get(column)?;
        serde_json::from_value(serde_json::Value::String(text))
            .map_err(|e| corrupt(&self.what(column), e))
    }

    fn secret(&self, column: &str, text: &str) -> Result<WebhookSecret, StoreError> {
        WebhookSecret::parse(text).map_err(|e| corrupt(&self.what(column), e))
    }
}

/// Decodes a `workflows` row.
pub(crate) fn workflow(row: &PgRow) -> Result<Workflow, StoreError> {
    let r = Record::new(row, "workflows", &["id"]);
    Ok(Workflow {
        id: r.id("id")?,
        workspace_id: r.id("workspace_id")?,
        name: r.get("name")?,
        description: r.get("description")?,
        enabled: r.get("enabled")?,
        trigger: r.json("trigger")?,
        allow_reentry: r.get("allow_reentry")?,
        created_at: r.get("created_at")?,
        updated_at: r.get("updated_at")?,
    })
}

/// Decodes a `workflow_steps` row.
pub(crate) fn step(row: &PgRow) -> Result<Step, StoreError> {
    let r = Record::new(row, "workflow_steps", &["id"]);
    Ok(Step {
        id: r.id("id")?,
        workspace_id: r.id("workspace_id")?,
        workflow_id: r.id("workflow_id")?,
        name: r.get("name")?,
        position: r.json("position")?,
        action: r.json("action")?,
        template_id: r.opt_id("template_id")?,
        created_at: r.get("created_at")?,
        updated_at: r.get("updated_at")?,
    })
}

/// Decodes a `workflow_transitions` row.
pub(crate) fn transition(row: &PgRow) -> Result<Transition, StoreError> {
    let r = Record::new(row, "workflow_transitions", &["id"]);
    Ok(Transition {
        id: r.id("id")?,
        workspace_id: r.id("workspace_id")?,
        workflow_id: r.id("workflow_id")?,
        from_step_id: r.id("from_step_id")?,
        to_step_id: r.id("to_step_id")?,
        condition: r.opt_json("condition")?,
        priority: r.get("priority")?,
        created_at: r.get("created_at")?,
        updated_at: r.get("updated_at")?,
    })
}

/// Decodes a `workflow_executions` row.
pub(crate) fn execution(row: &PgRow) -> Result<Execution, StoreError> {
    let r = Record::new(row, "workflow_executions", &["id"]);
    let waiting = match r.opt_id("wait_step_id")? {
        Some(step_id) => Some(Wait {
            step_id,
            event_name: r.get("wait_event_name")?,
            until: r.get("wait_until")?,
        }),
        None => None,
    };
    Ok(Execution {
        id: r.id("id")?,
        workspace_id: r.id("workspace_id")?,
        workflow_id: r.id("workflow_id")?,
        contact_id: r.id("contact_id")?,
        status: r.enumeration("status")?,
        event: r.json("event")?,
        current_step_id: r.opt_id("current_step_id")?,
        waiting,
        reason: r.get("reason")?,
        single_entry: r.get("single_entry")?,
        started_at: r.get("started_at")?,
        completed_at: r.get("completed_at")?,
        updated_at: r.get("updated_at")?,
        version: r.get("version")?,
    })
}

/// Decodes a `workflow_step_runs` row.
pub(crate) fn step_run(row: &PgRow) -> Result<StepRun, StoreError> {
    let r = Record::new(row, "workflow_step_runs", &["execution_id", "step_id"]);
    Ok(StepRun {
        execution_id: r.id("execution_id")?,
        workspace_id: r.id("workspace_id")?,
        step_id: r.id("step_id")?,
        step_type: r.enumeration("step_type")?,
        status: r.enumeration("status")?,
        output: r.opt_json("output")?,
        error: r.get("error")?,
        email_id: r.opt_id("email_id")?,
        attempts: r.json("attempts")?,
        started_at: r.get("started_at")?,
        completed_at: r.get("completed_at")?,
    })
}

/// Decodes a `workflow_signing_keys` row.
pub(crate) fn signing_keys(row: &PgRow) -> Result<SigningKeys, StoreError> {
    let r = Record::new(row, "workflow_signing_keys", &["workspace_id"]);
    let current = r.secret("current_secret", &r.get::<String>("current_secret")?)?;
    let previous: Option<String> = r.get("previous_secret")?;
    let until = r.get("previous_until")?;
    match (previous, until) {
        (Some(previous), Some(until)) => Ok(SigningKeys::with_previous(
            current,
            r.secret("previous_secret", &previous)?,
            until,
        )),
        (None, None) => Ok(SigningKeys::new(current)),
        _ => Err(corrupt(
            &r.what("previous_until"),
            "a previous secret and its expiry go together",
        )),
    }
}
