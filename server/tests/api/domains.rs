//! `/domains`: records to publish, DNS verification, the re-check job, inbound ownership,
//! deletion guards and key isolation.

use axum::http::Method;
use chrono::Duration;
use posthorn_core::ports::{Clock, RecordKind};
use posthorn_core::Settings;
use serde_json::{json, Value};

use crate::harness::{fake_dns, TestApp};

const MX_HOST: &str = "mx.posthorn.test";

async fn app() -> TestApp {
    TestApp::with_settings(Settings {
        mx_host: Some(MX_HOST.into()),
        ..Settings::default()
    })
    .await
}

/// The record of `body["records"]` whose name and type match.
fn record<'a>(body: &'a Value, kind: &str, name: &str) -> &'a Value {
    body["records"]
        .as_array()
        .expect("records")
        .iter()
        .find(|r| r["type"] == kind && r["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} record {name} in {body}"))
}

fn value(body: &Value, kind: &str, name: &str) -> String {
    record(body, kind, name)["value"]
        .as_str()
        .expect("value")
        .to_string()
}

fn dkim_name(body: &Value) -> String {
    format!(
        "{}._domainkey.{}",
        body["dkimSelector"].as_str().expect("selector"),
        body["domain"].as_str().expect("domain")
    )
}

/// Static DNS publishing the ownership and DKIM records `body` asks for.
fn published(body: &Value) -> posthorn_dns::StaticDns {
    let d = body["domain"].as_str().expect("domain");
    fake_dns()
        .with(
            &format!("_posthorn.{d}"),
            RecordKind::Txt,
            [value(body, "TXT", &format!("_posthorn.{d}"))],
        )
        .with(
            &dkim_name(body),
            RecordKind::Txt,
            [value(body, "TXT", &dkim_name(body))],
        )
}

async fn as_other(
    app: &TestApp,
    sk: &str,
    method: Method,
    path: String,
    body: Option<Value>,
) -> crate::harness::Res {
    app.call(method, &path, Some(sk), body, &[]).await
}

async fn read(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/domains/{id}")).await.expect(200).body
}

async fn create(app: &TestApp, name: &str) -> Value {
    app.post("/domains", json!({"domain": name}))
        .await
        .expect(201)
        .body
}

#[tokio::test]
async fn create_lists_the_records_to_publish_and_never_the_private_key() {
    let app = app().await;
    let d = create(&app, " Mail.Acme.test. ").await;
    assert_eq!(d["domain"], json!("mail.acme.test"));
    assert_eq!(d["verified"], json!(false));
    assert_eq!(d["inboundEnabled"], json!(false));
    assert_eq!(d["projectId"], json!(app.workspace_id));
    let token = value(&d, "TXT", "_posthorn.mail.acme.test");
    assert!(token.starts_with("posthorn-verification="), "{token}");
    let dkim = value(&d, "TXT", &dkim_name(&d));
    assert!(dkim.starts_with("v=DKIM1; k=rsa; p=MIIB"), "{dkim}");
    assert!(value(&d, "TXT", "mail.acme.test").starts_with("v=spf1"));
    assert!(value(&d, "TXT", "_dmarc.mail.acme.test").starts_with("v=DMARC1"));
    let records = d["records"].as_array().expect("records");
    assert_eq!(records.len(), 4, "no MX while inbound is off: {d}");
    assert!(records.iter().all(|r| r["status"] == "PENDING"));
    let text = d.to_string();
    assert!(!text.to_lowercase().contains("private") && !text.contains("BEGIN"));

    let id = d["id"].as_str().expect("id");
    let read = app.get(&format!("/domains/{id}")).await.expect(200).body;
    assert_eq!(
        value(&read, "TXT", &dkim_name(&read)),
        dkim,
        "one key per domain"
    );
    // The stored private key shows in no answer, nor in the domain's Debug output.
    let stored = app
        .engine
        .store
        .domains(&app.ws())
        .await
        .expect("domains")
        .into_iter()
        .find(|s| s.domain == "mail.acme.test")
        .expect("stored");
    let (private, public) = stored.dkim.as_ref().expect("key made").to_stored();
    assert!(dkim.ends_with(&public));
    let secret = &private[..40];
    assert!(!text.contains(secret) && !read.to_string().contains(secret));
    assert!(!format!("{stored:?}").contains(secret));
    let list = app.get("/domains").await.expect(200).body;
    assert!(!list.to_string().contains(secret));
    let names: Vec<&str> = list["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|d| d["domain"].as_str())
        .collect();
    assert_eq!(names, ["example.com", "mail.acme.test"]);
    assert!(!list.to_string().to_lowercase().contains("private"));
}

#[tokio::test]
async fn errors_unknown_duplicate_invalid_and_public_key() {
    let app = app().await;
    create(&app, "acme.test").await;
    app.post("/domains", json!({"domain": "ACME.test"}))
        .await
        .expect_error(409, "CONFLICT");
    for bad in [
        json!({"domain": "not a domain"}),
        json!({"domain": "localhost"}),
        json!({}),
    ] {
        let res = app
            .post("/domains", bad)
            .await
            .expect_error(422, "VALIDATION_ERROR");
        assert_eq!(res.error_fields(), ["domain"]);
    }
    let missing = "/domains/0190a8c4-0000-7000-8000-000000000000";
    app.get(missing).await.expect_error(404, "NOT_FOUND");
    app.post(&format!("{missing}/verify"), json!({}))
        .await
        .expect_error(404, "NOT_FOUND");
    app.patch(missing, json!({"inboundEnabled": true}))
        .await
        .expect_error(404, "NOT_FOUND");
    app.delete(missing).await.expect_error(404, "NOT_FOUND");
    app.call(Method::GET, "/domains", Some(&app.pk), None, &[])
        .await
        .expect_error(403, "FORBIDDEN");
    app.patch(
        "/domains/0190a8c4-0000-7000-8000-000000000000",
        json!({"inboundEnabled": "yes"}),
    )
    .await
    .expect_error(422, "VALIDATION_ERROR");
}

#[tokio::test]
async fn another_workspace_sees_nothing() {
    let app = app().await;
    let d = create(&app, "acme.test").await;
    let id = d["id"].as_str().expect("id");
    let (_, _, other_sk) = app.new_workspace("Other").await;
    let path = format!("/domains/{id}");
    as_other(&app, &other_sk, Method::GET, path.clone(), None)
        .await
        .expect_error(404, "NOT_FOUND");
    as_other(
        &app,
        &other_sk,
        Method::POST,
        format!("{path}/verify"),
        Some(json!({})),
    )
    .await
    .expect_error(404, "NOT_FOUND");
    as_other(
        &app,
        &other_sk,
        Method::PATCH,
        path.clone(),
        Some(json!({"inboundEnabled": true})),
    )
    .await
    .expect_error(404, "NOT_FOUND");
    as_other(&app, &other_sk, Method::DELETE, path.clone(), None)
        .await
        .expect_error(404, "NOT_FOUND");
    let list = as_other(&app, &other_sk, Method::GET, "/domains".into(), None)
        .await
        .expect(200)
        .body;
    assert!(!list.to_string().contains("acme.test"));
    // The same name in the other workspace gets its own token and key.
    let mine = as_other(
        &app,
        &other_sk,
        Method::POST,
        "/domains".into(),
        Some(json!({"domain": "acme.test"})),
    )
    .await
    .expect(201)
    .body;
    assert_ne!(dkim_name(&mine), dkim_name(&d));
    assert_ne!(
        value(&mine, "TXT", "_posthorn.acme.test"),
        value(&d, "TXT", "_posthorn.acme.test")
    );
    app.get(&path).await.expect(200);
}

#[tokio::test]
async fn verification_follows_the_published_records() {
    let mut app = app().await;
    let d = create(&app, "acme.test").await;
    let id = d["id"].as_str().expect("id").to_string();
    let verify = format!("/domains/{id}/verify");
    let absent = app.post(&verify, json!({})).await.expect(200).body;
    assert_eq!(absent["verified"], json!(false));
    assert_eq!(
        record(&absent, "TXT", "_posthorn.acme.test")["status"],
        "FAILED"
    );
    assert_eq!(record(&absent, "TXT", &dkim_name(&d))["status"], "FAILED");
    // Sending from it is refused while unverified.
    let mut body = crate::harness::send_body(json!("bob@example.com"));
    body["from"] = json!("hi@acme.test");
    app.post("/v1/send", body.clone())
        .await
        .expect_error(403, "DOMAIN_NOT_VERIFIED");

    app.set_dns(published(&d));
    let found = app.post(&verify, json!({})).await.expect(200).body;
    assert_eq!(found["verified"], json!(true));
    assert_eq!(
        record(&found, "TXT", "_posthorn.acme.test")["status"],
        "VERIFIED"
    );
    assert_eq!(record(&found, "TXT", &dkim_name(&d))["status"], "VERIFIED");
    assert_eq!(
        record(&found, "TXT", "acme.test")["status"],
        "FAILED",
        "SPF is advisory"
    );
    assert!(found["checkedAt"].is_string());
    app.post("/v1/send", body).await.expect(200);

    // A wrong key at the DKIM name does not count.
    let wrong = fake_dns()
        .with(
            "_posthorn.acme.test",
            RecordKind::Txt,
            [value(&d, "TXT", "_posthorn.acme.test")],
        )
        .with(
            &dkim_name(&d),
            RecordKind::Txt,
            ["v=DKIM1; k=rsa; p=MIIBother"],
        );
    let other = create(&app, "other.test").await;
    app.set_dns(wrong);
    let res = app
        .post(
            &format!("/domains/{}/verify", other["id"].as_str().expect("id")),
            json!({}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(res["verified"], json!(false));
}

#[tokio::test]
async fn one_failed_check_does_not_unverify_only_an_hour_of_failures_does() {
    let mut app = app().await;
    // Adding the domain queues the hourly re-check (due 11:00).
    let d = create(&app, "acme.test").await;
    let id = d["id"].as_str().expect("id").to_string();
    app.set_dns(published(&d));
    app.post(&format!("/domains/{id}/verify"), json!({}))
        .await
        .expect(200);

    // The records disappear (or one lookup says so): a check now keeps it verified.
    app.set_dns(fake_dns());
    let after = app
        .post(&format!("/domains/{id}/verify"), json!({}))
        .await
        .expect(200)
        .body;
    assert_eq!(
        after["verified"],
        json!(true),
        "one failure never un-verifies"
    );
    assert_eq!(record(&after, "TXT", &dkim_name(&d))["status"], "FAILED");
    // The verify call recorded the first failure at 10:00; set the records back to start
    // the hour from the job's own first failure.
    app.set_dns(published(&d));
    app.post(&format!("/domains/{id}/verify"), json!({}))
        .await
        .expect(200);
    app.set_dns(fake_dns());

    assert_eq!(app.run_jobs().await, 0, "nothing due before 11:00");
    app.clock.advance(Duration::hours(1));
    assert_eq!(app.run_jobs().await, 1, "the re-check ran at 11:00");
    assert_eq!(
        read(&app, &id).await["verified"],
        json!(true),
        "the job's first failed check keeps it verified"
    );
    app.clock.advance(Duration::minutes(59));
    assert_eq!(app.run_jobs().await, 0, "the next re-check is an hour on");
    assert_eq!(read(&app, &id).await["verified"], json!(true));
    app.clock.advance(Duration::minutes(1));
    assert_eq!(app.run_jobs().await, 1);
    assert_eq!(
        read(&app, &id).await["verified"],
        json!(false),
        "failures spanning an hour un-verify"
    );

    // Records back: the next re-check verifies it again.
    app.set_dns(published(&d));
    app.clock.advance(Duration::hours(1));
    assert_eq!(app.run_jobs().await, 1);
    assert_eq!(read(&app, &id).await["verified"], json!(true));
}

#[tokio::test]
async fn operator_verified_domains_stay_verified_through_rechecks() {
    let app = app().await;
    // example.com was added verified by the operator; DNS has none of its records.
    app.engine
        .schedule_domain_recheck(app.clock.now())
        .await
        .expect("seeded");
    assert_eq!(app.run_jobs().await, 1);
    app.clock.advance(Duration::hours(2));
    assert_eq!(
        app.run_jobs().await,
        0,
        "no domain relies on DNS: the re-check does not reschedule itself"
    );
    let list = app.get("/domains").await.expect(200).body;
    let ex = &list["data"][0];
    assert_eq!(ex["domain"], json!("example.com"));
    assert_eq!(ex["verified"], json!(true));
    assert_eq!(
        record(ex, "TXT", "_posthorn.example.com")["status"],
        "FAILED"
    );
    app.send_one("bob@example.com").await;
}

#[tokio::test]
async fn inbound_is_enabled_in_one_workspace_only() {
    let mut app = app().await;
    let d = create(&app, "acme.test").await;
    let id = d["id"].as_str().expect("id").to_string();
    let on = app
        .patch(&format!("/domains/{id}"), json!({"inboundEnabled": true}))
        .await
        .expect(200)
        .body;
    assert_eq!(on["inboundEnabled"], json!(true));
    assert_eq!(value(&on, "MX", "acme.test"), MX_HOST);
    assert_eq!(record(&on, "MX", "acme.test")["status"], "PENDING");
    app.set_dns(published(&d).with("acme.test", RecordKind::Mx, [format!("10 {MX_HOST}.")]));
    let checked = app
        .post(&format!("/domains/{id}/verify"), json!({}))
        .await
        .expect(200)
        .body;
    assert_eq!(record(&checked, "MX", "acme.test")["status"], "VERIFIED");

    let (_, _, other_sk) = app.new_workspace("Other").await;
    let theirs = app
        .call(
            Method::POST,
            "/domains",
            Some(&other_sk),
            Some(json!({"domain": "acme.test"})),
            &[],
        )
        .await
        .expect(201)
        .body;
    let their_path = format!("/domains/{}", theirs["id"].as_str().expect("id"));
    let enable = json!({"inboundEnabled": true});
    app.call(
        Method::PATCH,
        &their_path,
        Some(&other_sk),
        Some(enable.clone()),
        &[],
    )
    .await
    .expect_error(409, "CONFLICT");
    app.patch(&format!("/domains/{id}"), json!({"inboundEnabled": false}))
        .await
        .expect(200);
    app.call(
        Method::PATCH,
        &their_path,
        Some(&other_sk),
        Some(enable),
        &[],
    )
    .await
    .expect(200);
    app.patch(&format!("/domains/{id}"), json!({"inboundEnabled": true}))
        .await
        .expect_error(409, "CONFLICT");
}

#[tokio::test]
async fn delete_is_refused_while_a_template_or_a_live_campaign_sends_from_it() {
    let app = app().await;
    app.admin(
        Method::POST,
        &format!("/admin/workspaces/{}/domains", app.workspace_id),
        Some(json!({"domain": "brand.test", "verified": true})),
    )
    .await
    .expect(201);
    let list = app.get("/domains").await.expect(200).body;
    let id = list["data"][1]["id"].as_str().expect("id").to_string();
    let path = format!("/domains/{id}");

    let tpl = app
        .post(
            "/templates",
            json!({"name": "Hello", "subject": "Hi", "body": "<p>Hi</p>",
                   "type": "TRANSACTIONAL", "from": "hello@brand.test"}),
        )
        .await
        .expect(201)
        .body;
    app.delete(&path).await.expect_error(409, "CONFLICT");
    app.delete(&format!("/templates/{}", tpl["id"].as_str().expect("id")))
        .await
        .expect(204);

    app.post("/contacts", json!({"email": "reader@example.com"}))
        .await
        .expect(201);
    let created = app
        .post(
            "/campaigns",
            json!({"name": "News", "subject": "Hi", "body": "<p>Hi</p>",
                   "from": "news@brand.test", "audienceType": "ALL"}),
        )
        .await
        .expect(201)
        .body;
    let campaign = created["data"]["id"].as_str().expect("id").to_string();
    let later = (app.clock.now() + Duration::days(1)).to_rfc3339();
    app.post(
        &format!("/campaigns/{campaign}/send"),
        json!({"scheduledFor": later}),
    )
    .await
    .expect(200);
    app.delete(&path).await.expect_error(409, "CONFLICT");
    app.post(&format!("/campaigns/{campaign}/cancel"), json!({}))
        .await
        .expect(200);

    app.delete(&path).await.expect(204);
    app.get(&path).await.expect_error(404, "NOT_FOUND");
    app.delete(&path).await.expect_error(404, "NOT_FOUND");
}

/// An internationalised name is kept in its A-label form: that is the name shown, the
/// names of the records to publish and look up, DKIM's `d=`, and what a from address in
/// either spelling matches.
#[tokio::test]
async fn an_internationalised_domain_is_kept_and_checked_as_its_a_labels() {
    const A_LABEL: &str = "xn--bcher-kva.example";
    let mut app = app().await;
    let d = create(&app, " Bücher.Example ").await;
    assert_eq!(d["domain"], json!(A_LABEL));
    for name in [
        format!("_posthorn.{A_LABEL}"),
        dkim_name(&d),
        A_LABEL.to_string(),
        format!("_dmarc.{A_LABEL}"),
    ] {
        record(&d, "TXT", &name);
    }
    assert!(dkim_name(&d).ends_with(&format!("._domainkey.{A_LABEL}")));
    assert!(value(&d, "TXT", &format!("_dmarc.{A_LABEL}")).contains(&format!("@{A_LABEL}")));
    assert!(d.to_string().is_ascii(), "{d}");
    // The same domain in either spelling.
    for same in [A_LABEL, "BÜCHER.example"] {
        app.post("/domains", json!({ "domain": same }))
            .await
            .expect_error(409, "CONFLICT");
    }
    // Not valid IDNA: a field error, not a server error.
    for bad in ["xn--zz.example", "a\u{05D0}.example", "\u{0301}x.example"] {
        let res = app
            .post("/domains", json!({ "domain": bad }))
            .await
            .expect_error(422, "VALIDATION_ERROR");
        assert_eq!(res.error_fields(), ["domain"], "{bad:?}");
    }

    // DNS answers for the A-label names (the static DNS knows no other).
    let id = d["id"].as_str().expect("id");
    app.set_dns(published(&d));
    let found = app
        .post(&format!("/domains/{id}/verify"), json!({}))
        .await
        .expect(200)
        .body;
    assert_eq!(found["verified"], json!(true), "{found}");

    // A from address in Unicode is at the verified domain, for a key limited to it too.
    let scoped = app.scoped_secret_key(&["bücher.example"]).await;
    let mut body = crate::harness::send_body(json!("bob@example.com"));
    body["from"] = json!("Hallo@Bücher.example");
    let sent = app
        .call(Method::POST, "/v1/send", Some(&scoped), Some(body), &[])
        .await
        .expect(200);
    assert!(sent.body["data"]["emails"][0]["email"].is_string());
    app.run_jobs().await;
    let out = app.transport.messages_to("bob@example.com");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].from.email, format!("hallo@{A_LABEL}"));
    assert!(out[0].envelope_from.ends_with(&format!("@{A_LABEL}")));
    let dkim = out[0].dkim.as_ref().expect("signed");
    assert_eq!(dkim.domain, A_LABEL);
}
