//! Campaign mail and other mail sharing a workspace's sending rate.

use serde_json::json;

use crate::campaigns::{create, drain, per_recipient, seed};
use crate::harness::{send_body, TestApp};

/// Starts a campaign to `n` new subscribed contacts and runs the jobs due now.
async fn start_campaign(app: &TestApp, prefix: &str, n: usize) -> String {
    seed(app, prefix, n, true, json!({})).await;
    let id = create(app, json!({"audienceType": "ALL"})).await;
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    drain(app).await;
    id
}

fn sent_to(app: &TestApp, address: &str) -> usize {
    per_recipient(app).get(address).copied().unwrap_or(0)
}

#[tokio::test]
async fn mail_sent_during_a_campaign_is_not_queued_behind_it() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 5}))
        .await;
    start_campaign(&app, "c", 40).await;
    // Campaign mail takes at most 4 of each second's 5: a tenth, rounded up, is kept.
    assert_eq!(app.transport.messages().len(), 4);

    app.post("/v1/send", send_body(json!("reset@x.com")))
        .await
        .expect(200);
    drain(&app).await;
    assert_eq!(sent_to(&app, "reset@x.com"), 1, "sent in the same second");

    // The campaign goes on at its share of the rate and reaches everybody once.
    for second in 1..=9 {
        app.clock.advance(chrono::Duration::seconds(1));
        drain(&app).await;
        assert_eq!(app.transport.messages().len(), 5 + 4 * second);
    }
    let counts = per_recipient(&app);
    assert_eq!(counts.len(), 41);
    assert!(counts.values().all(|n| *n == 1), "{counts:?}");
}

#[tokio::test]
async fn a_cancelled_campaign_does_not_hold_up_the_next_one() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 5}))
        .await;
    let first = start_campaign(&app, "a", 40).await;
    app.post(&format!("/campaigns/{first}/cancel"), json!({}))
        .await
        .expect(200);
    start_campaign(&app, "b", 0).await;
    assert_eq!(
        app.transport.messages().len(),
        4,
        "the first second's share"
    );
    // The second campaign's mail goes in the coming seconds, not after the windows the
    // cancelled campaign's 36 waiting emails were paced into (9 seconds of them).
    app.clock.advance(chrono::Duration::seconds(1));
    drain(&app).await;
    assert_eq!(app.transport.messages().len(), 8);
    for _ in 0..20 {
        app.clock.advance(chrono::Duration::seconds(1));
        drain(&app).await;
    }
    let counts = per_recipient(&app);
    assert_eq!(counts.len(), 40, "every contact had the second campaign");
    let twice = counts.values().filter(|n| **n == 2).count();
    assert_eq!(twice, 4, "the first campaign's first second went to these");
}
