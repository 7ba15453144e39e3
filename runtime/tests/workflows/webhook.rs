//! WEBHOOK steps against a recording sink: body, escaping, signatures checked with an
//! independent HMAC, retries, Retry-After, final failures.

use std::time::Duration;

use base64::Engine as _;
use hmac::{Hmac, Mac};
use posthorn_core::ports::{WebhookError, WebhookRequest};
use posthorn_core::workflow::{ExecutionStatus, StepAction, StepRunStatus};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::harness::{exit, response, webhook, World};

fn header<'r>(request: &'r WebhookRequest, name: &str) -> Option<&'r str> {
    request
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Verifies the Standard Webhooks signature of `request` with `secret` (`whsec_...`).
fn verify(request: &WebhookRequest, secret: &str) -> bool {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .expect("base64 key");
    let (Some(id), Some(ts), Some(sigs)) = (
        header(request, "webhook-id"),
        header(request, "webhook-timestamp"),
        header(request, "webhook-signature"),
    ) else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("any key length");
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(&request.body);
    let expected = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    sigs.split(' ').any(|s| s == expected)
}

async fn webhook_flow(
    w: &World,
    action: StepAction,
) -> posthorn_core::app::workflows::WorkflowView {
    let wf = w.manual_workflow().await;
    let hook = w.step(&wf, action).await;
    let exit = w.step(&wf, exit(Some("called"))).await;
    w.edge(&wf, &World::trigger(&wf), &hook, None).await;
    w.edge(&wf, &hook.id, &exit, None).await;
    wf
}

#[tokio::test]
async fn the_default_body_is_signed_with_the_workspace_secret() {
    let w = World::new().await;
    let wf = webhook_flow(&w, webhook("https://hooks.example/in")).await;
    let contact = w.contact("ann@example.org", json!({"plan": "pro"})).await;
    let exec = w.start(&wf, &contact, json!({"source": "test"})).await;
    w.run().await;
    let requests = w.hooks.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.url, "https://hooks.example/in");
    let secret = w
        .engine
        .signing_secret(&w.caller)
        .await
        .expect("secret")
        .secret;
    assert!(verify(request, &secret), "signature verifies independently");
    let body: Value = serde_json::from_slice(&request.body).expect("json");
    assert_eq!(
        body,
        json!({
            "contact": {"email": "ann@example.org", "subscribed": true, "data": {"plan": "pro"}},
            "workflow": {"id": wf.workflow.id, "name": "Manual"},
            "execution": {"id": exec.id, "startedAt": posthorn_core::model::timestamp::format(&exec.started_at)},
            "event": {"source": "test"},
        })
    );
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    assert_eq!(view.steps[1].attempts.len(), 1);
    assert_eq!(view.steps[1].attempts[0].status_code, Some(200));
}

#[tokio::test]
async fn variables_are_escaped_for_where_they_land() {
    let w = World::new().await;
    let action = StepAction::Webhook {
        url: "https://hooks.example/u/{{event.name}}?q={{event.name}}".into(),
        method: Some("PUT".into()),
        headers: [("X-Name".to_string(), json!("n={{event.name}}"))]
            .into_iter()
            .collect(),
        body: Some(
            json!({"name": "{{event.name}}", "count": "{{event.count}}", "line": "{{event.name}}!"}),
        ),
    };
    let wf = webhook_flow(&w, action).await;
    let contact = w.contact("b@example.org", json!({})).await;
    w.start(&wf, &contact, json!({"name": "a b/\"c\"", "count": 3}))
        .await;
    w.run().await;
    let request = &w.hooks.requests()[0];
    assert_eq!(
        request.url,
        "https://hooks.example/u/a%20b%2F%22c%22?q=a%20b%2F%22c%22"
    );
    assert_eq!(request.method.as_str(), "PUT");
    assert_eq!(header(request, "X-Name"), Some("n=a b/\"c\""));
    let body: Value = serde_json::from_slice(&request.body).expect("json");
    assert_eq!(
        body,
        json!({"name": "a b/\"c\"", "count": 3, "line": "a b/\"c\"!"})
    );

    // A header value that would gain a line break fails the step without a request.
    let w = World::new().await;
    let action = StepAction::Webhook {
        url: "https://hooks.example/x".into(),
        method: None,
        headers: [("X-A".to_string(), json!("{{event.v}}"))]
            .into_iter()
            .collect(),
        body: None,
    };
    let wf = webhook_flow(&w, action).await;
    let contact = w.contact("c@example.org", json!({})).await;
    let exec = w
        .start(&wf, &contact, json!({"v": "1\r\nX-Evil: yes"}))
        .await;
    w.run().await;
    assert!(w.hooks.requests().is_empty());
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Failed);
}

#[tokio::test]
async fn failed_attempts_are_retried_on_schedule_with_one_webhook_id() {
    let w = World::new().await;
    let wf = webhook_flow(&w, webhook("https://hooks.example/in")).await;
    w.hooks.answer([
        response(500, None),
        Err(WebhookError::Timeout(Duration::from_secs(10))),
        response(302, None),
        response(204, None),
    ]);
    let exec = w
        .start(&wf, &w.contact("d@example.org", json!({})).await, json!({}))
        .await;
    w.run().await;
    assert_eq!(w.hooks.requests().len(), 1);
    w.after(chrono::Duration::seconds(9)).await;
    assert_eq!(w.hooks.requests().len(), 1, "not before the first delay");
    w.after(chrono::Duration::seconds(1)).await;
    assert_eq!(w.hooks.requests().len(), 2);
    w.after(chrono::Duration::seconds(20)).await;
    assert_eq!(w.hooks.requests().len(), 3);
    w.after(chrono::Duration::seconds(30)).await;
    let requests = w.hooks.requests();
    assert_eq!(requests.len(), 4);
    let ids: Vec<_> = requests.iter().map(|r| header(r, "webhook-id")).collect();
    assert!(
        ids.iter().all(|id| id.is_some() && *id == ids[0]),
        "{ids:?}"
    );
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Completed);
    let attempts: Vec<_> = view.steps[1]
        .attempts
        .iter()
        .map(|a| a.status_code)
        .collect();
    assert_eq!(attempts, [Some(500), None, Some(302), Some(204)]);
    assert!(view.steps[1].attempts[1]
        .error
        .as_deref()
        .is_some_and(|e| e.contains("timed out")));
}

#[tokio::test]
async fn a_longer_retry_after_is_honoured() {
    let w = World::new().await;
    let wf = webhook_flow(&w, webhook("https://hooks.example/in")).await;
    w.hooks
        .answer([response(429, Some(Duration::from_secs(120)))]);
    w.start(&wf, &w.contact("e@example.org", json!({})).await, json!({}))
        .await;
    w.run().await;
    w.after(chrono::Duration::seconds(60)).await;
    assert_eq!(
        w.hooks.requests().len(),
        1,
        "the schedule's 10 s gave way to Retry-After"
    );
    w.after(chrono::Duration::seconds(60)).await;
    assert_eq!(w.hooks.requests().len(), 2);
}

#[tokio::test]
async fn a_client_error_fails_the_step_and_the_execution_at_once() {
    let w = World::new().await;
    let wf = webhook_flow(&w, webhook("https://hooks.example/in")).await;
    w.hooks.answer([response(404, None)]);
    let exec = w
        .start(&wf, &w.contact("f@example.org", json!({})).await, json!({}))
        .await;
    w.run().await;
    w.after(chrono::Duration::minutes(5)).await;
    assert_eq!(w.hooks.requests().len(), 1);
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Failed);
    assert_eq!(view.steps[1].status, StepRunStatus::Failed);
    assert!(view.steps[1]
        .error
        .as_deref()
        .is_some_and(|e| e.contains("404")));
}

#[tokio::test]
async fn the_last_failed_attempt_of_the_schedule_fails_the_step() {
    let w = World::new().await;
    let wf = webhook_flow(&w, webhook("https://hooks.example/in")).await;
    w.hooks.answer((0..4).map(|_| response(503, None)));
    let exec = w
        .start(&wf, &w.contact("g@example.org", json!({})).await, json!({}))
        .await;
    w.run().await;
    for secs in [10, 20, 30] {
        w.after(chrono::Duration::seconds(secs)).await;
    }
    assert_eq!(w.hooks.requests().len(), 4, "1 + 3 retries");
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Failed);
    assert!(view.steps[1]
        .error
        .as_deref()
        .is_some_and(|e| e.contains("gave up after 4 attempts")));
}

#[tokio::test]
async fn an_engine_without_a_sink_fails_webhook_steps_without_sending() {
    use posthorn_runtime::EngineExt;
    let w = World::new().await;
    let wf = webhook_flow(&w, webhook("https://hooks.example/in")).await;
    let contact = w.contact("n@example.org", json!({})).await;
    // The same ports, built without `.webhooks(..)`.
    let engine = posthorn_core::Engine::builder()
        .store(w.engine.store.clone())
        .jobs(w.engine.jobs.clone())
        .transport(w.engine.transport.clone())
        .clock(w.engine.clock.clone())
        .build()
        .expect("engine");
    let exec = engine
        .start_execution(
            &w.caller,
            &wf.workflow.id,
            posthorn_core::app::workflows::StartExecution {
                contact_id: contact.id.as_str().into(),
                context: None,
            },
        )
        .await
        .expect("started");
    engine.run_due_jobs().await.expect("jobs");
    assert!(w.hooks.requests().is_empty());
    let view = w.execution(&wf.workflow.id, &exec.id).await;
    assert_eq!(view.execution.status, ExecutionStatus::Failed);
    assert!(view.steps[1]
        .error
        .as_deref()
        .is_some_and(|e| e.contains("no webhook sink is configured")));
}
