//! Workflow tables: rows that do not decode are `Corrupt` naming table, column and record;
//! the reads run on every stored event are served by indexes.

use posthorn_core::model::{ContactId, ExecutionId, WorkflowId, WorkspaceId};
use posthorn_core::ports::{SigningKeys, Store, StoreError, WebhookSecret, WorkflowStore, Write};
use posthorn_core::workflow::{Execution, ExecutionStatus, Trigger, Workflow};
use posthorn_postgres::testing;
use serde_json::json;

use super::{changes, now, workspace};
use crate::support;

fn workflow(workspace_id: &WorkspaceId) -> Workflow {
    Workflow {
        id: WorkflowId::generate(&posthorn_core::ports::SystemClock),
        workspace_id: workspace_id.clone(),
        name: "corruptible".into(),
        description: None,
        enabled: true,
        trigger: Trigger::Event {
            event_name: "signup".into(),
        },
        allow_reentry: true,
        created_at: now(),
        updated_at: now(),
    }
}

fn execution(w: &Workflow) -> Execution {
    Execution {
        id: ExecutionId::generate(&posthorn_core::ports::SystemClock),
        workspace_id: w.workspace_id.clone(),
        workflow_id: w.id.clone(),
        contact_id: ContactId::from("contact-1"),
        status: ExecutionStatus::Running,
        event: json!({}),
        current_step_id: None,
        waiting: None,
        reason: None,
        single_entry: false,
        started_at: now(),
        completed_at: None,
        updated_at: now(),
        version: 0,
    }
}

/// Asserts `result` is `Corrupt` with a message naming every part of `names`.
fn assert_corrupt<T: std::fmt::Debug>(result: Result<T, StoreError>, names: &[&str]) {
    match result {
        Err(StoreError::Corrupt(message)) => {
            for name in names {
                assert!(
                    message.contains(name),
                    "the message {message:?} should name {name:?}"
                );
            }
        }
        other => panic!("expected StoreError::Corrupt naming {names:?}, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_workflow_rows_are_corrupt_and_named() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let wsid = ws.id.clone();
    let w = workflow(&ws.id);
    let e = execution(&w);
    let keys = SigningKeys::new(WebhookSecret::generate(&mut rand::thread_rng()));
    store
        .commit(changes(vec![
            Write::PutWorkspace(ws.clone()),
            Write::PutWorkflow(w.clone()),
            Write::InsertExecution(e.clone()),
            Write::PutSigningKeys {
                workspace_id: wsid.clone(),
                keys,
            },
        ]))
        .await
        .expect("storing workflow records");
    for sql in [
        "UPDATE workflows SET trigger = '{\"triggerType\": \"SOMETIMES\"}'",
        "UPDATE workflow_executions SET status = 'DOZING'",
        "UPDATE workflow_signing_keys SET current_secret = 'not a secret'",
    ] {
        sqlx::query(sql)
            .execute(store.pool())
            .await
            .expect("corrupting a row");
    }
    assert_corrupt(
        store.workflow(&wsid, &w.id).await,
        &["workflows.trigger", w.id.as_str()],
    );
    assert_corrupt(
        store.workflows(&wsid, 0, 10).await,
        &["workflows.trigger", w.id.as_str()],
    );
    assert_corrupt(
        store.execution(&wsid, &e.id).await,
        &["workflow_executions.status", e.id.as_str()],
    );
    assert_corrupt(
        store.signing_keys(&wsid).await,
        &["workflow_signing_keys.current_secret", ws.id.as_str()],
    );
    support::finish(store, db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_on_every_event_use_their_indexes() {
    let (store, db) = support::fresh().await;
    let plans = testing::event_read_plans(&store)
        .await
        .expect("explaining the reads");
    let [interest, waiting] = plans.as_slice() else {
        panic!("expected two plans, got {plans:?}");
    };
    for (plan, indexes) in [
        (
            interest,
            &["workflows_by_event", "workflow_executions_waiting"][..],
        ),
        (waiting, &["workflow_executions_waiting"][..]),
    ] {
        assert!(!plan.contains("Seq Scan"), "a table is scanned:\n{plan}");
        for index in indexes {
            assert!(plan.contains(index), "{index} is not used:\n{plan}");
        }
    }
    support::finish(store, db).await;
}
