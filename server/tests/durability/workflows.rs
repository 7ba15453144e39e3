//! Workflow executions survive a SIGKILL: executions WAITING for an event, in a DELAY and
//! calling a slow webhook when the process dies all complete after a restart, every
//! SEND_EMAIL step queues one email, and every call of one webhook step execution carries one
//! `webhook-id`. One scenario, run on every durable store (PostgreSQL here, SQLite in
//! `crate::sqlite`).
//!
//! The DELAY is the smallest the config allows, one minute: the scenario's waits run side by
//! side, so it takes a little over a minute. Nothing is checked against the clock: the delayed
//! executions are seen WAITING before the kill and COMPLETED after the restart.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use hyper::Method;
use serde_json::{json, Value};

use crate::sigkill::DurableStore;
use crate::support::http::Api;
use crate::support::posthorn::{note, Posthorn, TestDb};
use crate::support::receiver::Receiver;
use crate::support::sink::Sink;
use crate::support::wait_until;

/// Executions per workflow.
const CONTACTS: usize = 4;
/// How long the receiver holds each webhook call before answering 200.
const HOOK_DELAY: Duration = Duration::from_secs(3);
/// The event the waiting executions wait for.
const GO_EVENT: &str = "wfdur-go";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_workflow_resumes_every_execution() {
    let Some(db) = TestDb::create("sigkill_mid_workflow_resumes_every_execution").await else {
        return;
    };
    workflow_sigkill_scenario("workflow sigkill", &db).await;
    db.drop().await;
}

/// One workflow of the scenario: what starts it and the tags of its SEND_EMAIL steps.
struct Flow {
    kind: &'static str,
    id: String,
    start_event: String,
    /// (step tag, step id) of its SEND_EMAIL steps.
    sends: Vec<(String, String)>,
}

fn id_of(v: &Value, what: &str) -> String {
    v["id"]
        .as_str()
        .or_else(|| v["data"]["id"].as_str())
        .unwrap_or_else(|| panic!("{what}: no id in {v}"))
        .to_string()
}

async fn post(api: &Api, key: &str, path: &str, body: Value) -> Value {
    api.expect(201, Method::POST, path, Some(key), Some(&body))
        .await
}

/// A TRANSACTIONAL template whose subject names the execution and the step tag.
async fn template(api: &Api, key: &str, tag: &str) -> String {
    let created = post(
        api,
        key,
        "/templates",
        json!({
            "name": format!("wfdur {tag}"),
            "subject": format!("wfdur {{{{execution.id}}}} {tag}"),
            "body": format!("<p>{tag}</p>"),
            "type": "TRANSACTIONAL",
            "from": "hello@example.com",
        }),
    )
    .await;
    id_of(&created, "POST /templates")
}

/// trigger (EVENT `start_event`) → SEND_EMAIL `<kind>-1` → `middle` → SEND_EMAIL `<kind>-2`;
/// the edge out of `middle` carries `middle_edge`.
async fn flow(api: &Api, key: &str, kind: &'static str, middle: Value, middle_edge: Value) -> Flow {
    let start_event = format!("wfdur-start-{kind}");
    let created = post(
        api,
        key,
        "/workflows",
        json!({
            "name": format!("wfdur {kind}"),
            "triggerType": "EVENT",
            "triggerConfig": {"eventName": start_event},
            "enabled": true,
        }),
    )
    .await;
    let id = id_of(&created, "POST /workflows");
    let trigger = created["steps"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("POST /workflows: no trigger step in {created}"))
        .to_string();
    let steps = format!("/workflows/{id}/steps");
    let mut sends = Vec::new();
    let mut chain = vec![trigger];
    for (i, step) in [None, Some(middle), None].into_iter().enumerate() {
        let step = match step {
            Some(step) => step,
            None => {
                let tag = format!("{kind}-{}", sends.len() + 1);
                let template_id = template(api, key, &tag).await;
                json!({
                    "type": "SEND_EMAIL",
                    "name": tag,
                    "templateId": template_id,
                    "config": {"recipient": {"type": "CONTACT"}},
                })
            }
        };
        let created = post(api, key, &steps, step.clone()).await;
        let step_id = id_of(&created, "POST steps");
        if step["type"] == "SEND_EMAIL" {
            sends.push((format!("{kind}-{}", sends.len() + 1), step_id.clone()));
        }
        let from = chain[i].clone();
        let condition = if i == 2 {
            middle_edge.clone()
        } else {
            Value::Null
        };
        post(
            api,
            key,
            &format!("/workflows/{id}/transitions"),
            json!({"fromStepId": from, "toStepId": step_id, "condition": condition}),
        )
        .await;
        chain.push(step_id);
    }
    Flow {
        kind,
        id,
        start_event,
        sends,
    }
}

/// The executions of a workflow: (execution id, status).
async fn executions(api: &Api, key: &str, flow: &Flow) -> Vec<(String, String)> {
    let listed = api
        .expect(
            200,
            Method::GET,
            &format!("/workflows/{}/executions?pageSize=100", flow.id),
            Some(key),
            None,
        )
        .await;
    listed["executions"]
        .as_array()
        .unwrap_or_else(|| panic!("GET executions: no `executions` in {listed}"))
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap_or_default().to_string(),
                e["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Polls until every workflow has [`CONTACTS`] executions, all in `status`; the last
/// listing when `within` passed first.
async fn wait_for_status(
    api: &Api,
    key: &str,
    flows: &[&Flow],
    status: &str,
    within: Duration,
) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let mut last = Vec::new();
        for flow in flows {
            last.push((flow.kind, executions(api, key, flow).await));
        }
        if last
            .iter()
            .all(|(_, ex)| ex.len() == CONTACTS && ex.iter().all(|(_, s)| s == status))
        {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(format!(
                "not all executions {status} after {within:?}: {last:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn contact(kind: &str, n: usize) -> String {
    format!("wfdur-{kind}-{n}@example.org")
}

async fn track(api: &Api, key: &str, email: &str, event: &str) {
    api.expect(
        200,
        Method::POST,
        "/v1/track",
        Some(key),
        Some(&json!({"email": email, "event": event, "data": {}})),
    )
    .await;
}

/// Starts executions waiting for an event, in a DELAY and calling a slow webhook, SIGKILLs the
/// process while they are in flight, restarts one on the same store, and checks that all
/// complete with one email per SEND_EMAIL step execution and one `webhook-id` per WEBHOOK step
/// execution.
pub async fn workflow_sigkill_scenario(label: &str, store: &impl DurableStore) {
    let url = store.url();
    let sink = Sink::start(1, Duration::from_millis(5), Duration::from_millis(20)).await;
    let receiver = Receiver::start(HOOK_DELAY).await;
    let env = [
        ("POSTHORN_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("POSTHORN_WEBHOOK_ALLOW_HOSTS", "127.0.0.1"),
        ("POSTHORN_WEBHOOK_RETRY_DELAYS", "1,1,1"),
    ];
    let mut first = Posthorn::start_with("posthorn #1", &url, sink.port(0), &env).await;
    let ws = first.create_workspace("workflow durability").await;
    let (api, key) = (first.api.clone(), ws.secret_key.clone());

    let delay = flow(
        &api,
        &key,
        "delay",
        json!({"type": "DELAY", "name": "delay", "config": {"amount": 1, "unit": "minutes"}}),
        Value::Null,
    )
    .await;
    let wait = flow(
        &api,
        &key,
        "wait",
        json!({"type": "WAIT_FOR_EVENT", "name": "wait", "config": {"eventName": GO_EVENT}}),
        json!({"outcome": "EVENT"}),
    )
    .await;
    let hook = flow(
        &api,
        &key,
        "hook",
        json!({
            "type": "WEBHOOK",
            "name": "hook",
            "config": {
                "url": receiver.url("/hook"),
                "body": {"execution": "{{execution.id}}", "email": "{{email}}"},
            },
        }),
        Value::Null,
    )
    .await;
    let flows = [&delay, &wait, &hook];

    // The delayed executions first: their minute starts running now.
    for flow in flows {
        for n in 0..CONTACTS {
            track(&api, &key, &contact(flow.kind, n), &flow.start_event).await;
        }
    }
    // Kill once the delayed and waiting executions wait and every webhook call is held by
    // the receiver.
    wait_for_status(
        &api,
        &key,
        &[&delay, &wait],
        "WAITING",
        Duration::from_secs(30),
    )
    .await
    .unwrap_or_else(|e| panic!("{label}: {e}\n{}", first.logs()));
    let calls_held = wait_until(Duration::from_secs(30), || {
        receiver.received().len() >= CONTACTS
    })
    .await;
    assert!(
        calls_held,
        "{label}: only {} webhook calls reached the receiver within 30 s\n{}",
        receiver.received().len(),
        first.logs()
    );
    first.sigkill().await;
    let calls_at_kill = receiver.received().len();
    let mails_at_kill = sink.count();

    let second = Posthorn::start_with("posthorn #2", &url, sink.port(0), &env).await;
    let api = second.api.clone();
    for n in 0..CONTACTS {
        track(&api, &key, &contact(wait.kind, n), GO_EVENT).await;
    }
    // The one-minute delay bounds this; the leases of the webhook jobs (5 s) and the
    // receiver's 3 s answers run meanwhile.
    wait_for_status(&api, &key, &flows, "COMPLETED", Duration::from_secs(120))
        .await
        .unwrap_or_else(|e| panic!("{label}: after the restart, {e}\n{}", second.logs()));

    // One email per (execution, SEND_EMAIL step): the step's record names it, and the sink
    // saw no other email id with that execution and step in its subject.
    let mut expected: BTreeMap<String, String> = BTreeMap::new();
    for flow in flows {
        for (execution, _) in executions(&api, &key, flow).await {
            let read = api
                .expect(
                    200,
                    Method::GET,
                    &format!("/workflows/{}/executions/{execution}", flow.id),
                    Some(&key),
                    None,
                )
                .await;
            let steps = read["steps"]
                .as_array()
                .unwrap_or_else(|| panic!("GET execution: no `steps` in {read}"));
            for (tag, step_id) in &flow.sends {
                let records: Vec<&Value> = steps
                    .iter()
                    .filter(|s| s["stepId"].as_str() == Some(step_id))
                    .collect();
                assert_eq!(
                    records.len(),
                    1,
                    "{label}: execution {execution} has {} records of step {tag}: {read}",
                    records.len()
                );
                let email = records[0]["output"]["emailId"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{label}: step {tag} without emailId: {read}"));
                expected.insert(format!("wfdur {execution} {tag}"), email.to_string());
            }
        }
    }
    assert_eq!(expected.len(), CONTACTS * 6, "{label}: {expected:?}");
    let delivered_all = wait_until(Duration::from_secs(30), || {
        let seen: BTreeSet<String> = sink
            .deliveries()
            .into_iter()
            .filter_map(|d| d.email_id)
            .collect();
        expected.values().all(|id| seen.contains(id))
    })
    .await;
    assert!(
        delivered_all,
        "{label}: not every workflow email reached the sink\n{}",
        second.logs()
    );
    let mut by_step: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for d in sink.deliveries() {
        if let (Some(subject), Some(id)) = (d.subject, d.email_id) {
            by_step.entry(subject).or_default().insert(id);
        }
    }
    for (subject, email) in &expected {
        let ids = by_step.get(subject).cloned().unwrap_or_default();
        assert_eq!(
            ids,
            BTreeSet::from([email.clone()]),
            "{label}: the emails delivered for `{subject}` (the step's record names {email})"
        );
    }
    assert_eq!(
        by_step.len(),
        expected.len(),
        "{label}: subjects at the sink that no step record explains: {:?}",
        by_step
            .keys()
            .filter(|s| !expected.contains_key(*s))
            .collect::<Vec<_>>()
    );

    // Every call of one webhook step execution carries one webhook-id, and ids differ
    // between executions.
    let mut ids: BTreeMap<String, BTreeSet<Option<String>>> = BTreeMap::new();
    let mut calls: BTreeMap<String, usize> = BTreeMap::new();
    for r in receiver.received() {
        let execution = r.body["execution"]
            .as_str()
            .unwrap_or_else(|| panic!("{label}: a webhook body without execution: {}", r.body))
            .to_string();
        ids.entry(execution.clone())
            .or_default()
            .insert(r.webhook_id);
        *calls.entry(execution).or_default() += 1;
    }
    let hook_executions: BTreeSet<String> = executions(&api, &key, &hook)
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(
        ids.keys().cloned().collect::<BTreeSet<_>>(),
        hook_executions,
        "{label}: the executions the receiver heard from"
    );
    for (execution, seen) in &ids {
        assert!(
            seen.len() == 1 && seen.iter().all(Option::is_some),
            "{label}: execution {execution}'s webhook calls carried the ids {seen:?}"
        );
    }
    let distinct: BTreeSet<&Option<String>> = ids.values().flatten().collect();
    assert_eq!(distinct.len(), CONTACTS, "{label}: webhook ids {ids:?}");
    let repeated = calls.values().filter(|n| **n > 1).count();
    note(&format!(
        "{label}: {calls_at_kill} webhook calls and {mails_at_kill} emails before the kill; \
         after the restart all {} executions completed, {} emails, webhook calls per execution \
         {:?}",
        CONTACTS * 3,
        sink.count(),
        calls.values().collect::<Vec<_>>()
    ));
    // The calls held at the kill were never answered: each is made again, same id.
    assert!(
        repeated >= 1,
        "{label}: no webhook call was repeated after the kill: {calls:?}"
    );
    drop(second);
}
