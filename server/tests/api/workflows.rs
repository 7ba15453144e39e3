//! `/workflows`: CRUD of workflows, steps and transitions, executions, the signing secret,
//! and every error case, each in the spec's envelope.

use serde_json::{json, Value};

use crate::harness::TestApp;

const MISSING: &str = "01900000-0000-7000-8000-000000000000";

fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

/// A MANUAL workflow, enabled; returns (id, trigger step id).
async fn manual(app: &TestApp, name: &str) -> (String, String) {
    let res = app
        .post(
            "/workflows",
            json!({"name": name, "triggerType": "MANUAL", "enabled": true}),
        )
        .await
        .expect(201);
    (id(&res.body), id(&res.body["steps"][0]))
}

async fn step(app: &TestApp, wf: &str, body: Value) -> String {
    id(&app
        .post(&format!("/workflows/{wf}/steps"), body)
        .await
        .expect(201)
        .body)
}

async fn edge(app: &TestApp, wf: &str, from: &str, to: &str, condition: Value) -> String {
    id(&app
        .post(
            &format!("/workflows/{wf}/transitions"),
            json!({"fromStepId": from, "toStepId": to, "condition": condition}),
        )
        .await
        .expect(201)
        .body)
}

async fn template(app: &TestApp) -> String {
    id(&app
        .post(
            "/templates",
            json!({"name": "Welcome", "subject": "Hi {{email}}", "body": "<p>Plan {{event.plan}}</p>",
                   "from": "team@example.com", "type": "TRANSACTIONAL"}),
        )
        .await
        .expect(201)
        .body)
}

async fn contact(app: &TestApp, email: &str) -> String {
    id(&app
        .post("/contacts", json!({"email": email}))
        .await
        .expect(201)
        .body)
}

#[tokio::test]
async fn workflow_crud_round_trip() {
    let app = TestApp::new().await;
    let created = app
        .post(
            "/workflows",
            json!({"name": "Welcome", "description": "d", "eventName": "signup"}),
        )
        .await
        .expect(201);
    let wf = &created.body;
    assert_eq!(wf["triggerType"], json!("EVENT"));
    assert_eq!(wf["triggerConfig"], json!({"eventName": "signup"}));
    assert_eq!(wf["enabled"], json!(false));
    assert_eq!(wf["allowReentry"], json!(false));
    assert_eq!(wf["projectId"], json!(app.workspace_id));
    assert_eq!(wf["steps"][0]["type"], json!("TRIGGER"));
    assert_eq!(wf["steps"][0]["config"], json!({"eventName": "signup"}));
    let wf_id = id(wf);
    let path = format!("/workflows/{wf_id}");

    app.post(
        "/workflows",
        json!({"name": "Other", "triggerType": "MANUAL"}),
    )
    .await
    .expect(201);
    let list = app.get("/workflows?pageSize=1").await.expect(200);
    assert_eq!(list.body["total"], json!(2));
    assert_eq!(list.body["totalPages"], json!(2));
    assert_eq!(list.body["pageSize"], json!(1));
    assert_eq!(list.body["page"], json!(1));
    assert_eq!(list.body["data"][0]["name"], json!("Other"));
    assert!(list.body["data"][0].get("steps").is_none());

    let patched = app
        .patch(
            &path,
            json!({"name": "Hello", "description": null, "enabled": true, "allowReentry": true,
                   "triggerConfig": {"eventName": "paid"}}),
        )
        .await
        .expect(200);
    assert_eq!(patched.body["name"], json!("Hello"));
    assert_eq!(patched.body["description"], Value::Null);
    assert_eq!(patched.body["enabled"], json!(true));
    assert_eq!(patched.body["triggerConfig"], json!({"eventName": "paid"}));
    assert!(
        patched.body.get("steps").is_none(),
        "PATCH answers without steps"
    );
    let read = app.get(&path).await.expect(200);
    assert_eq!(
        read.body["steps"][0]["config"],
        json!({"eventName": "paid"})
    );

    app.delete(&path).await.expect(204);
    app.get(&path).await.expect_error(404, "WORKFLOW_NOT_FOUND");
    app.delete(&path)
        .await
        .expect_error(404, "WORKFLOW_NOT_FOUND");
}

#[tokio::test]
async fn steps_and_transitions_show_on_the_workflow() {
    let app = TestApp::new().await;
    let (wf, trigger) = manual(&app, "Flow").await;
    let tpl = template(&app).await;
    let cond = step(
        &app,
        &wf,
        json!({"type": "CONDITION", "name": "Pro?", "config": {"field": "event.plan", "operator": "equals", "value": "pro"}}),
    )
    .await;
    let send = step(
        &app,
        &wf,
        json!({"type": "SEND_EMAIL", "name": "Mail", "templateId": tpl, "position": {"x": 1, "y": 2}}),
    )
    .await;
    let delay = step(
        &app,
        &wf,
        json!({"type": "DELAY", "name": "Wait", "config": {"amount": 2, "unit": "hours"}}),
    )
    .await;
    let t1 = edge(&app, &wf, &trigger, &cond, Value::Null).await;
    let t2 = edge(&app, &wf, &cond, &send, json!({"branch": "yes"})).await;
    edge(&app, &wf, &cond, &delay, json!({"branch": "no"})).await;

    let read = app.get(&format!("/workflows/{wf}")).await.expect(200);
    let steps = read.body["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 4);
    let by_id = |sid: &str| {
        steps
            .iter()
            .find(|s| s["id"] == json!(sid))
            .expect("step")
            .clone()
    };
    let c = by_id(&cond);
    assert_eq!(c["outgoingTransitions"].as_array().map(Vec::len), Some(2));
    assert_eq!(c["incomingTransitions"][0]["id"], json!(t1));
    assert_eq!(c["template"], Value::Null);
    let s = by_id(&send);
    assert_eq!(s["template"], json!({"id": tpl, "name": "Welcome"}));
    assert_eq!(s["templateId"], json!(tpl));
    assert_eq!(s["position"], json!({"x": 1, "y": 2}));
    assert_eq!(
        s["incomingTransitions"][0]["condition"],
        json!({"branch": "yes"})
    );
    assert_eq!(s["incomingTransitions"][0]["fromStepId"], json!(cond));

    // Step patch and delete.
    let patched = app
        .patch(
            &format!("/workflows/{wf}/steps/{delay}"),
            json!({"name": "Wait longer", "config": {"amount": 3, "unit": "days"}}),
        )
        .await
        .expect(200);
    assert_eq!(patched.body["config"], json!({"amount": 3, "unit": "days"}));
    assert_eq!(patched.body["name"], json!("Wait longer"));
    app.delete(&format!("/workflows/{wf}/transitions/{t2}"))
        .await
        .expect(204);
    app.delete(&format!("/workflows/{wf}/transitions/{t2}"))
        .await
        .expect_error(404, "NOT_FOUND");
    app.delete(&format!("/workflows/{wf}/steps/{delay}"))
        .await
        .expect(204);
    let read = app.get(&format!("/workflows/{wf}")).await.expect(200);
    assert_eq!(read.body["steps"].as_array().map(Vec::len), Some(3));
    let c = read.body["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == json!(cond)).cloned())
        .expect("condition step");
    assert_eq!(
        c["outgoingTransitions"],
        json!([]),
        "the deleted step took its edge along"
    );

    // A template in use by a step cannot be deleted.
    app.delete(&format!("/templates/{tpl}"))
        .await
        .expect_error(409, "CONFLICT");
    app.delete(&format!("/workflows/{wf}/steps/{send}"))
        .await
        .expect(204);
    app.delete(&format!("/templates/{tpl}")).await.expect(204);
}

#[tokio::test]
async fn graph_rules_are_400_invalid_state_naming_the_rule() {
    let app = TestApp::new().await;
    let (wf, trigger) = manual(&app, "Graph").await;
    let a = step(
        &app,
        &wf,
        json!({"type": "DELAY", "name": "A", "config": {"amount": 1, "unit": "minutes"}}),
    )
    .await;
    let b = step(
        &app,
        &wf,
        json!({"type": "DELAY", "name": "B", "config": {"amount": 1, "unit": "minutes"}}),
    )
    .await;
    let exit = step(&app, &wf, json!({"type": "EXIT", "name": "End"})).await;
    edge(&app, &wf, &trigger, &a, Value::Null).await;
    edge(&app, &wf, &a, &b, Value::Null).await;
    let path = format!("/workflows/{wf}/transitions");
    let refused = |from: &str, to: &str, condition: Value| {
        let body = json!({"fromStepId": from, "toStepId": to, "condition": condition});
        let path = path.clone();
        let app = &app;
        async move {
            app.post(&path, body)
                .await
                .expect_error(400, "INVALID_STATE")
                .body["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_lowercase()
        }
    };
    assert!(refused(&a, &a, Value::Null).await.contains("itself"));
    assert!(refused(&b, &a, Value::Null).await.contains("cycle"));
    assert!(refused(&exit, &a, Value::Null).await.contains("exit"));
    let msg = refused(&b, &exit, json!({"branch": "yes"})).await;
    assert!(msg.contains("condition"), "{msg}");

    // Unknown steps are 404 NOT_FOUND; an unknown workflow 404 WORKFLOW_NOT_FOUND.
    app.post(&path, json!({"fromStepId": a, "toStepId": MISSING}))
        .await
        .expect_error(404, "NOT_FOUND");
    app.post(
        &format!("/workflows/{MISSING}/transitions"),
        json!({"fromStepId": a, "toStepId": b}),
    )
    .await
    .expect_error(404, "WORKFLOW_NOT_FOUND");
    // A malformed condition is a field error.
    let res = app
        .post(
            &path,
            json!({"fromStepId": b, "toStepId": exit, "condition": {"branch": "maybe"}}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["condition"]);

    // TRIGGER steps: not made by hand, not deleted, not configured.
    let res = app
        .post(
            &format!("/workflows/{wf}/steps"),
            json!({"type": "TRIGGER", "name": "Again"}),
        )
        .await
        .expect_error(400, "INVALID_STATE");
    assert!(res.body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("TRIGGER")));
    app.delete(&format!("/workflows/{wf}/steps/{trigger}"))
        .await
        .expect_error(400, "INVALID_STATE");
    app.patch(
        &format!("/workflows/{wf}/steps/{trigger}"),
        json!({"config": {"eventName": "x"}}),
    )
    .await
    .expect_error(400, "INVALID_STATE");
}

#[tokio::test]
async fn invalid_config_and_fields_are_422_with_paths() {
    let app = TestApp::new().await;
    let (wf, _) = manual(&app, "Config").await;
    let steps = format!("/workflows/{wf}/steps");
    let res = app
        .post(
            &steps,
            json!({"type": "DELAY", "name": "D", "config": {"amount": 0, "unit": "weeks"}}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    let fields = res.error_fields();
    assert!(fields.contains(&"config.amount".to_string()), "{fields:?}");
    assert!(fields.contains(&"config.unit".to_string()), "{fields:?}");
    let res = app
        .post(
            &steps,
            json!({"type": "WEBHOOK", "name": "W", "config": {}}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["config.url"]);
    let res = app
        .post(
            &steps,
            json!({"type": "SEND_EMAIL", "name": "S", "templateId": MISSING}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["templateId"]);
    let res = app
        .post(&steps, json!({"type": "SEND_EMAIL", "name": "S"}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["templateId"]);
    let res = app
        .post(&steps, json!({"type": "JUMP", "name": ""}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["type", "name"]);
    let res = app
        .post(
            "/workflows",
            json!({"name": "x", "triggerType": "SCHEDULE", "triggerConfig": {"cron": "nope"}}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    let fields = res.error_fields();
    assert!(
        fields.contains(&"triggerConfig.segmentId".to_string()),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"triggerConfig.cron".to_string()),
        "{fields:?}"
    );
    let res = app
        .post("/workflows", json!({"name": "x"}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["triggerConfig.eventName"]);
    let res = app
        .post("/workflows", json!({"triggerType": "SOMETIMES"}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["name", "triggerType"]);
    app.get("/workflows?pageSize=101")
        .await
        .expect_error(422, "VALIDATION_ERROR");

    // Unknown records.
    app.get(&format!("/workflows/{MISSING}"))
        .await
        .expect_error(404, "WORKFLOW_NOT_FOUND");
    app.patch(&format!("/workflows/{MISSING}"), json!({"name": "n"}))
        .await
        .expect_error(404, "WORKFLOW_NOT_FOUND");
    app.post(
        &format!("/workflows/{MISSING}/steps"),
        json!({"type": "EXIT", "name": "E"}),
    )
    .await
    .expect_error(404, "WORKFLOW_NOT_FOUND");
    app.patch(
        &format!("/workflows/{wf}/steps/{MISSING}"),
        json!({"name": "n"}),
    )
    .await
    .expect_error(404, "NOT_FOUND");
    app.delete(&format!("/workflows/{wf}/steps/{MISSING}"))
        .await
        .expect_error(404, "NOT_FOUND");
    app.get(&format!("/workflows/{wf}/executions/{MISSING}"))
        .await
        .expect_error(404, "NOT_FOUND");
    app.delete(&format!("/workflows/{wf}/executions/{MISSING}"))
        .await
        .expect_error(404, "NOT_FOUND");
    app.get(&format!("/workflows/{MISSING}/executions"))
        .await
        .expect_error(404, "WORKFLOW_NOT_FOUND");

    // A public key may not use the API.
    app.call(
        axum::http::Method::GET,
        "/workflows",
        Some(&app.pk),
        None,
        &[],
    )
    .await
    .expect_error(403, "FORBIDDEN");
}

#[tokio::test]
async fn another_workspace_sees_nothing() {
    let app = TestApp::new().await;
    let (wf, _) = manual(&app, "Mine").await;
    let (_, _, other) = app.new_workspace("Other").await;
    app.call(
        axum::http::Method::GET,
        &format!("/workflows/{wf}"),
        Some(&other),
        None,
        &[],
    )
    .await
    .expect_error(404, "WORKFLOW_NOT_FOUND");
}

#[tokio::test]
async fn manual_start_with_context_sends_one_email_and_delete_waits_for_executions() {
    let app = TestApp::new().await;
    let (wf, trigger) = manual(&app, "Manual").await;
    let tpl = template(&app).await;
    let delay = step(
        &app,
        &wf,
        json!({"type": "DELAY", "name": "Wait", "config": {"amount": 1, "unit": "hours"}}),
    )
    .await;
    let send = step(
        &app,
        &wf,
        json!({"type": "SEND_EMAIL", "name": "Mail", "templateId": tpl}),
    )
    .await;
    edge(&app, &wf, &trigger, &delay, Value::Null).await;
    edge(&app, &wf, &delay, &send, Value::Null).await;
    let ann = contact(&app, "ann@example.com").await;

    let executions = format!("/workflows/{wf}/executions");
    let started = app
        .post(
            &executions,
            json!({"contactId": ann, "context": {"plan": "pro"}}),
        )
        .await
        .expect(201);
    assert_eq!(started.body["status"], json!("RUNNING"));
    assert_eq!(started.body["event"], json!({"plan": "pro"}));
    let exec = id(&started.body);
    app.run_jobs().await;
    let read = app.get(&format!("{executions}/{exec}")).await.expect(200);
    assert_eq!(read.body["status"], json!("WAITING"));

    // Not deletable while an execution waits; a second start is refused by the re-entry rule.
    app.delete(&format!("/workflows/{wf}"))
        .await
        .expect_error(409, "CONFLICT");
    app.post(&executions, json!({"contactId": ann}))
        .await
        .expect_error(409, "CONFLICT");
    app.post(&executions, json!({"contactId": MISSING}))
        .await
        .expect_error(404, "CONTACT_NOT_FOUND");
    let res = app
        .post(&executions, json!({"context": []}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["contactId", "context"]);

    app.clock.advance(chrono::Duration::hours(1));
    app.run_jobs().await;
    let read = app.get(&format!("{executions}/{exec}")).await.expect(200);
    assert_eq!(read.body["status"], json!("COMPLETED"), "{}", read.body);
    let steps = read.body["steps"].as_array().expect("steps");
    let kinds: Vec<&Value> = steps.iter().map(|s| &s["type"]).collect();
    assert_eq!(
        kinds,
        [&json!("TRIGGER"), &json!("DELAY"), &json!("SEND_EMAIL")]
    );
    assert!(steps.iter().all(|s| s["status"] == json!("COMPLETED")));
    assert!(steps[2]["startedAt"].is_string() && steps[2]["completedAt"].is_string());
    assert_eq!(steps[2]["attempts"], json!([]));
    assert_eq!(
        app.transport.messages().len(),
        1,
        "one email queued and delivered"
    );
    assert_eq!(app.transport.messages_to("ann@example.com").len(), 1);

    let list = app.get(&executions).await.expect(200);
    assert_eq!(list.body["total"], json!(1));
    assert_eq!(list.body["page"], json!(1));
    assert_eq!(list.body["pageSize"], json!(20));
    assert_eq!(list.body["totalPages"], json!(1));
    assert_eq!(list.body["executions"][0]["id"], json!(exec));

    // Ended executions no longer block the deletion.
    app.delete(&format!("/workflows/{wf}")).await.expect(204);
}

#[tokio::test]
async fn cancel_ends_a_waiting_execution() {
    let app = TestApp::new().await;
    let (wf, trigger) = manual(&app, "Cancel").await;
    let delay = step(
        &app,
        &wf,
        json!({"type": "DELAY", "name": "Wait", "config": {"amount": 1, "unit": "days"}}),
    )
    .await;
    edge(&app, &wf, &trigger, &delay, Value::Null).await;
    let ann = contact(&app, "ann@example.com").await;
    let executions = format!("/workflows/{wf}/executions");
    let exec = id(&app
        .post(&executions, json!({"contactId": ann}))
        .await
        .expect(201)
        .body);
    app.run_jobs().await;
    let cancelled = app
        .delete(&format!("{executions}/{exec}"))
        .await
        .expect(200);
    assert_eq!(cancelled.body["status"], json!("CANCELLED"));
    app.delete(&format!("{executions}/{exec}"))
        .await
        .expect_error(400, "INVALID_STATE");
    app.clock.advance(chrono::Duration::days(2));
    app.run_jobs().await;
    let read = app.get(&format!("{executions}/{exec}")).await.expect(200);
    assert_eq!(read.body["status"], json!("CANCELLED"));
    assert_eq!(read.body["steps"][1]["status"], json!("CANCELLED"));

    // A disabled workflow starts nothing.
    app.patch(&format!("/workflows/{wf}"), json!({"enabled": false}))
        .await
        .expect(200);
    app.post(&executions, json!({"contactId": ann}))
        .await
        .expect_error(400, "INVALID_STATE");
    app.delete(&format!("/workflows/{wf}")).await.expect(204);
}

#[tokio::test]
async fn the_signing_secret_is_stable_until_rotated() {
    let app = TestApp::new().await;
    let first = app.get("/workflows/signing-secret").await.expect(200);
    let secret = first.body["secret"].as_str().expect("secret").to_string();
    assert!(secret.starts_with("whsec_"));
    assert_eq!(first.body["previousExpiresAt"], Value::Null);
    let again = app.get("/workflows/signing-secret").await.expect(200);
    assert_eq!(again.body["secret"], json!(secret));
    let rotated = app
        .post("/workflows/signing-secret/rotate", json!({}))
        .await
        .expect(200);
    assert_ne!(rotated.body["secret"], json!(secret));
    assert!(rotated.body["previousExpiresAt"].is_string());
    let now = app.get("/workflows/signing-secret").await.expect(200);
    assert_eq!(now.body["secret"], rotated.body["secret"]);
}

#[tokio::test]
async fn patches_read_config_for_the_stored_kind() {
    let app = TestApp::new().await;
    let (wf, _) = manual(&app, "Patch").await;
    let delay = step(
        &app,
        &wf,
        json!({"type": "DELAY", "name": "D", "config": {"amount": 1, "unit": "hours"}}),
    )
    .await;
    let path = format!("/workflows/{wf}/steps/{delay}");
    // The config is read as a DELAY config: shape and rule failures together.
    let res = app
        .patch(&path, json!({"config": {"amount": 0, "unit": "weeks"}}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    let mut fields = res.error_fields();
    fields.sort();
    assert_eq!(fields, ["config.amount", "config.unit"]);
    // A WEBHOOK config on a DELAY step lacks the DELAY fields.
    let res = app
        .patch(&path, json!({"config": {"url": "https://h.example/x"}}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["config.amount", "config.unit"]);
    let ok = app
        .patch(&path, json!({"config": {"amount": 2, "unit": "days"}}))
        .await
        .expect(200);
    assert_eq!(ok.body["type"], json!("DELAY"));
    assert_eq!(ok.body["config"], json!({"amount": 2, "unit": "days"}));
    // Unknown records come before an invalid config.
    app.patch(
        &format!("/workflows/{wf}/steps/{MISSING}"),
        json!({"config": {"amount": 0}}),
    )
    .await
    .expect_error(404, "NOT_FOUND");
    app.post(
        &format!("/workflows/{MISSING}/steps"),
        json!({"type": "DELAY", "name": "D", "config": {"amount": 0}}),
    )
    .await
    .expect_error(404, "WORKFLOW_NOT_FOUND");

    // `triggerConfig` alone is read for the stored kind; `triggerType` alone keeps the
    // stored configuration when the kind is the same, and needs one when it changes.
    let res = app
        .patch(
            &format!("/workflows/{wf}"),
            json!({"triggerConfig": {"eventName": "x"}}),
        )
        .await
        .expect(200);
    assert_eq!(res.body["triggerType"], json!("MANUAL"));
    assert_eq!(res.body["triggerConfig"], json!({}));
    let res = app
        .patch(
            &format!("/workflows/{wf}"),
            json!({"triggerType": "SCHEDULE"}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(
        res.error_fields(),
        ["triggerConfig.cron", "triggerConfig.segmentId"]
    );
    let res = app
        .patch(
            &format!("/workflows/{wf}"),
            json!({"triggerType": "EVENT", "triggerConfig": {"eventName": "paid"}}),
        )
        .await
        .expect(200);
    assert_eq!(res.body["triggerConfig"], json!({"eventName": "paid"}));
    let res = app
        .patch(&format!("/workflows/{wf}"), json!({"triggerType": "EVENT"}))
        .await
        .expect(200);
    assert_eq!(res.body["triggerConfig"], json!({"eventName": "paid"}));
    app.patch(
        &format!("/workflows/{MISSING}"),
        json!({"triggerType": "SCHEDULE"}),
    )
    .await
    .expect_error(404, "WORKFLOW_NOT_FOUND");
}
