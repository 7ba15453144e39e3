-- Workflows on SQLite: the tables of the PostgreSQL adapter's migration 0007, with this
-- file's types (instants as INTEGER microseconds, booleans as 0/1). Step records keep
-- their rowid: it orders records that started at the same instant by insertion.
--
-- Workflows: definitions (workflows, steps, transitions), executions with the record of
-- each step they ran, and each workspace's webhook signing secrets.
--
-- JSON the core hands over (a trigger, a step's action, an execution's event, a step's
-- output and webhook attempts) is stored as TEXT written by serde_json, like segment
-- conditions. The parts a read filters on have their own columns.
-- No foreign keys, as elsewhere: the commit deletes dependent rows itself.

CREATE TABLE workflows (
    workspace_id       TEXT NOT NULL,
    id                 TEXT NOT NULL,
    name               TEXT NOT NULL,
    description        TEXT,
    enabled            INTEGER NOT NULL,
    -- The trigger as `{"triggerType": ..., "triggerConfig": ...}`.
    trigger            TEXT NOT NULL,
    -- The EVENT trigger's name, NULL for other triggers: what `event_workflows` and
    -- `has_event_interest` look up.
    trigger_event_name TEXT,
    allow_reentry      INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
CREATE INDEX workflows_by_time ON workflows (workspace_id, created_at, id);
-- Runs on every tracked event (`has_event_interest`): only enabled EVENT workflows.
CREATE INDEX workflows_by_event ON workflows (workspace_id, trigger_event_name, created_at, id)
    WHERE enabled = 1 AND trigger_event_name IS NOT NULL;

CREATE TABLE workflow_steps (
    workspace_id TEXT NOT NULL,
    id           TEXT NOT NULL,
    workflow_id  TEXT NOT NULL,
    name         TEXT NOT NULL,
    position     TEXT NOT NULL,
    step_type    TEXT NOT NULL,
    -- The action as `{"type": ..., "config": ...}`.
    action       TEXT NOT NULL,
    template_id  TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
CREATE INDEX workflow_steps_by_workflow ON workflow_steps (workspace_id, workflow_id, created_at, id);
-- `DELETE /templates/{id}` asks whether a step sends the template.
CREATE INDEX workflow_steps_by_template ON workflow_steps (workspace_id, template_id)
    WHERE template_id IS NOT NULL;

CREATE TABLE workflow_transitions (
    workspace_id TEXT NOT NULL,
    id           TEXT NOT NULL,
    workflow_id  TEXT NOT NULL,
    from_step_id TEXT NOT NULL,
    to_step_id   TEXT NOT NULL,
    -- `{"branch": ...}` or `{"outcome": ...}`, NULL for the plain edge.
    condition    TEXT,
    priority     INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
CREATE INDEX workflow_transitions_by_workflow
    ON workflow_transitions (workspace_id, workflow_id, priority, created_at, id);

CREATE TABLE workflow_executions (
    workspace_id    TEXT NOT NULL,
    id              TEXT NOT NULL,
    workflow_id     TEXT NOT NULL,
    contact_id      TEXT NOT NULL,
    status          TEXT NOT NULL,
    event           TEXT NOT NULL,
    current_step_id TEXT,
    -- What a WAITING execution waits for (all NULL when `waiting` is None; a DELAY has no
    -- event name). `wait_step_id` NULL means "no wait".
    wait_step_id    TEXT,
    wait_event_name TEXT,
    wait_until      INTEGER,
    reason          TEXT,
    single_entry    INTEGER NOT NULL,
    started_at      INTEGER NOT NULL,
    completed_at    INTEGER,
    updated_at      INTEGER NOT NULL,
    version         INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
-- Newest-first pages of a workflow's executions, and the (workflow, contact) look-up of
-- the re-entry rule.
CREATE INDEX workflow_executions_by_workflow
    ON workflow_executions (workspace_id, workflow_id, started_at, id);
CREATE INDEX workflow_executions_by_contact
    ON workflow_executions (workspace_id, workflow_id, contact_id);
-- The re-entry rule, enforced here so that racing transactions cannot both enrol a
-- contact: one RUNNING or WAITING execution per (workflow, contact) ...
CREATE UNIQUE INDEX workflow_executions_one_active
    ON workflow_executions (workspace_id, workflow_id, contact_id)
    WHERE status IN ('RUNNING', 'WAITING');
-- ... and one single-entry execution per (workflow, contact), whatever its status.
CREATE UNIQUE INDEX workflow_executions_single_entry
    ON workflow_executions (workspace_id, workflow_id, contact_id)
    WHERE single_entry = 1;
-- A contact's executions waiting for an event: `waiting_executions` and, on every
-- tracked event, `has_event_interest`.
CREATE INDEX workflow_executions_waiting
    ON workflow_executions (workspace_id, contact_id, wait_event_name, started_at, id)
    WHERE status = 'WAITING';

CREATE TABLE workflow_step_runs (
    workspace_id TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    step_id      TEXT NOT NULL,
    step_type    TEXT NOT NULL,
    status       TEXT NOT NULL,
    output       TEXT,
    error        TEXT,
    email_id     TEXT,
    -- Every webhook attempt, oldest first, as a JSON array.
    attempts     TEXT NOT NULL,
    started_at   INTEGER NOT NULL,
    completed_at INTEGER,
    -- A step runs at most once per execution: a second insert is a Conflict.
    PRIMARY KEY (workspace_id, execution_id, step_id)
) STRICT;
CREATE INDEX workflow_step_runs_by_start
    ON workflow_step_runs (workspace_id, execution_id, started_at);

-- Webhook signing secrets (`whsec_...` TEXT), one row per workspace.
CREATE TABLE workflow_signing_keys (
    workspace_id    TEXT PRIMARY KEY,
    current_secret  TEXT NOT NULL,
    previous_secret TEXT,
    previous_until  INTEGER
) STRICT;
