-- Workflows: definitions (workflows, steps, transitions), executions with the record of
-- each step they ran, and each workspace's webhook signing secrets.
--
-- JSON the core hands over (a trigger, a step's action, an execution's event, a step's
-- output and webhook attempts) is stored as text written by serde_json, like segment
-- conditions: it reads back exactly as written (jsonb would rewrite numbers and refuse
-- `\u0000`). The parts a read filters on have their own columns.
-- No foreign keys, as elsewhere: the commit deletes dependent rows itself.

CREATE TABLE workflows (
    workspace_id       text COLLATE "C" NOT NULL,
    id                 text COLLATE "C" NOT NULL,
    name               text NOT NULL,
    description        text,
    enabled            boolean NOT NULL,
    -- The trigger as `{"triggerType": ..., "triggerConfig": ...}`.
    trigger            text NOT NULL,
    -- The EVENT trigger's name, NULL for other triggers: what `event_workflows` and
    -- `has_event_interest` look up.
    trigger_event_name text COLLATE "C",
    allow_reentry      boolean NOT NULL,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX workflows_by_time ON workflows (workspace_id, created_at, id);
-- Runs on every tracked event (`has_event_interest`): only enabled EVENT workflows.
CREATE INDEX workflows_by_event ON workflows (workspace_id, trigger_event_name, created_at, id)
    WHERE enabled AND trigger_event_name IS NOT NULL;

CREATE TABLE workflow_steps (
    workspace_id text COLLATE "C" NOT NULL,
    id           text COLLATE "C" NOT NULL,
    workflow_id  text COLLATE "C" NOT NULL,
    name         text NOT NULL,
    position     text NOT NULL,
    step_type    text NOT NULL,
    -- The action as `{"type": ..., "config": ...}`.
    action       text NOT NULL,
    template_id  text COLLATE "C",
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX workflow_steps_by_workflow ON workflow_steps (workspace_id, workflow_id, created_at, id);
-- `DELETE /templates/{id}` asks whether a step sends the template.
CREATE INDEX workflow_steps_by_template ON workflow_steps (workspace_id, template_id)
    WHERE template_id IS NOT NULL;

CREATE TABLE workflow_transitions (
    workspace_id text COLLATE "C" NOT NULL,
    id           text COLLATE "C" NOT NULL,
    workflow_id  text COLLATE "C" NOT NULL,
    from_step_id text COLLATE "C" NOT NULL,
    to_step_id   text COLLATE "C" NOT NULL,
    -- `{"branch": ...}` or `{"outcome": ...}`, NULL for the plain edge.
    condition    text,
    priority     integer NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX workflow_transitions_by_workflow
    ON workflow_transitions (workspace_id, workflow_id, priority, created_at, id);

CREATE TABLE workflow_executions (
    workspace_id    text COLLATE "C" NOT NULL,
    id              text COLLATE "C" NOT NULL,
    workflow_id     text COLLATE "C" NOT NULL,
    contact_id      text COLLATE "C" NOT NULL,
    status          text NOT NULL,
    event           text NOT NULL,
    current_step_id text COLLATE "C",
    -- What a WAITING execution waits for (all NULL when `waiting` is None; a DELAY has no
    -- event name). `wait_step_id` NULL means "no wait".
    wait_step_id    text COLLATE "C",
    wait_event_name text COLLATE "C",
    wait_until      timestamptz,
    reason          text,
    single_entry    boolean NOT NULL,
    started_at      timestamptz NOT NULL,
    completed_at    timestamptz,
    updated_at      timestamptz NOT NULL,
    version         bigint NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
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
    WHERE single_entry;
-- A contact's executions waiting for an event: `waiting_executions` and, on every
-- tracked event, `has_event_interest`.
CREATE INDEX workflow_executions_waiting
    ON workflow_executions (workspace_id, contact_id, wait_event_name, started_at, id)
    WHERE status = 'WAITING';

CREATE TABLE workflow_step_runs (
    workspace_id text COLLATE "C" NOT NULL,
    execution_id text COLLATE "C" NOT NULL,
    step_id      text COLLATE "C" NOT NULL,
    -- Insertion order, to order step records that started at the same instant.
    seq          bigint GENERATED ALWAYS AS IDENTITY,
    step_type    text NOT NULL,
    status       text NOT NULL,
    output       text,
    error        text,
    email_id     text COLLATE "C",
    -- Every webhook attempt, oldest first, as a JSON array.
    attempts     text NOT NULL,
    started_at   timestamptz NOT NULL,
    completed_at timestamptz,
    -- A step runs at most once per execution: a second insert is a Conflict.
    PRIMARY KEY (workspace_id, execution_id, step_id)
);
CREATE INDEX workflow_step_runs_by_start
    ON workflow_step_runs (workspace_id, execution_id, started_at, seq);

-- Webhook signing secrets (`whsec_...` text), one row per workspace.
CREATE TABLE workflow_signing_keys (
    workspace_id    text COLLATE "C" PRIMARY KEY,
    current_secret  text NOT NULL,
    previous_secret text,
    previous_until  timestamptz
);
