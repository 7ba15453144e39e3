//! A DNS check takes a while; a change made to the domain meanwhile is kept when the check's
//! findings are stored (they were applied to the copy read before the lookups).

use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;
use posthorn_core::Settings;
use serde_json::json;

use crate::gate::answered;
use crate::harness::TestApp;

#[tokio::test]
async fn a_change_made_during_a_check_is_kept() {
    let mut app = TestApp::with_settings(Settings {
        mx_host: Some("mx.posthorn.test".into()),
        ..Settings::default()
    })
    .await;
    let created = app
        .post("/domains", json!({"domain": "slow.test"}))
        .await
        .expect(201);
    let id = created.body["id"].as_str().expect("id").to_string();
    assert_eq!(created.body["inboundEnabled"], json!(false));
    // The check's lookups wait at the gate.
    let gate = app.gate_dns(Duration::from_secs(60));
    let app = Arc::new(app);
    let sk = app.sk.clone();
    let check = {
        let (app, sk, id) = (app.clone(), sk.clone(), id.clone());
        tokio::spawn(async move {
            app.call(
                Method::POST,
                &format!("/domains/{id}/verify"),
                Some(&sk),
                None,
                &[],
            )
            .await
        })
    };
    gate.entered().await;
    let soon = Duration::from_secs(10);
    answered(
        soon,
        app.call(
            Method::PATCH,
            &format!("/domains/{id}"),
            Some(&sk),
            Some(json!({"inboundEnabled": true})),
            &[],
        ),
    )
    .await
    .expect(200);
    gate.open();
    let checked = answered(soon, check)
        .await
        .expect("the check's task")
        .expect(200);
    assert_eq!(
        checked.body["inboundEnabled"],
        json!(true),
        "the check answers the domain as stored"
    );
    let read = app.get(&format!("/domains/{id}")).await.expect(200);
    assert_eq!(
        read.body["inboundEnabled"],
        json!(true),
        "the change made during the check is kept"
    );
}
