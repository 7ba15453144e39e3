//! Email and workspace reads on a real server: concurrent reads share statements, and each
//! caller gets its own record (or none).

use std::sync::Arc;

use posthorn_conformance::fixtures::{self, contact, email_record, now_ms};
use posthorn_core::model::{EmailId, Workspace, WorkspaceId};
use posthorn_core::ports::{Store, Write};

use crate::test_db::{assert_batched, finish, fresh};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_email_and_workspace_reads_share_statements_and_keep_their_answers() {
    let (store, name) = fresh().await;
    let store = Arc::new(store);
    let at = now_ms();
    let workspaces: Vec<Workspace> = (0..3)
        .map(|k| Workspace::new(fixtures::ids(), format!("ws-{k}"), at))
        .collect();
    let mut writes: Vec<Write> = workspaces
        .iter()
        .map(|ws| Write::PutWorkspace(ws.clone()))
        .collect();
    let mut emails = Vec::new();
    for ws in &workspaces {
        let to = contact(&ws.id, "reader", true, at);
        let email = email_record(&to, at);
        writes.push(Write::InsertContact(to));
        writes.push(Write::InsertEmail(email.clone()));
        emails.push(email);
    }
    fixtures::commit(store.as_ref(), "seed", writes).await;
    let (emails_before, workspaces_before) = store.record_reads.batches();
    let n = 300;
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let store = Arc::clone(&store);
            let email = emails[i % 3].clone();
            // Every fourth read asks for an email of another workspace, or a missing one.
            let (ws, id) = match i % 4 {
                1 => (workspaces[(i + 1) % 3].id.clone(), email.id.clone()),
                2 => (
                    email.workspace_id.clone(),
                    EmailId::generate(fixtures::ids()),
                ),
                _ => (email.workspace_id.clone(), email.id.clone()),
            };
            let wanted = (i % 4 != 1 && i % 4 != 2).then(|| email.clone());
            let workspace = [
                &workspaces[i % 3].id,
                &WorkspaceId::generate(fixtures::ids()),
            ][i % 2]
                .clone();
            let expected_ws = (i % 2 == 0).then(|| workspaces[i % 3].clone());
            tokio::spawn(async move {
                let got = store.email(&ws, &id).await.expect("email read");
                assert_eq!(got, wanted, "read {i}");
                let got = store.workspace(&workspace).await.expect("workspace read");
                assert_eq!(got, expected_ws, "workspace read {i}");
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    let (emails_after, workspaces_after) = store.record_reads.batches();
    assert_batched(emails_after - emails_before, n, "email reads");
    assert_batched(workspaces_after - workspaces_before, n, "workspace reads");
    let store = Arc::into_inner(store).expect("sole owner");
    finish(store, name).await;
}
