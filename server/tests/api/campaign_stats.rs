//! `GET /campaigns/{id}/stats`: counters by recipient outcome and the rates computed from
//! them.

use posthorn_core::model::EmailId;
use posthorn_core::model::EmailStatus;
use posthorn_core::ports::{ChangeSet, TransportError, Write};
use serde_json::{json, Value};

use crate::campaigns::{create, drain, seed};
use crate::harness::TestApp;

/// Moves an email to `status`, as the provider's notifications would.
async fn set_status(app: &TestApp, email_id: &str, status: EmailStatus) {
    let mut email = app
        .engine
        .store
        .email(&app.ws(), &EmailId::from(email_id))
        .await
        .expect("store")
        .expect("email");
    email.status = status;
    let mut changes = ChangeSet::new();
    changes.push(Write::UpdateEmail(email));
    app.engine.store.commit(changes).await.expect("commit");
}

fn rate(stats: &Value, key: &str) -> f64 {
    stats[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number: {stats}"))
}

#[tokio::test]
async fn stats_count_outcomes_and_compute_rates() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 1000}))
        .await;
    seed(&app, "st", 8, true, json!({})).await;
    app.transport.fail_for(
        "st7@x.com",
        TransportError::Permanent("550 5.1.1 no such user".into()),
    );
    let id = create(&app, json!({"audienceType": "ALL"})).await;

    // Nothing sent yet: every count and rate is zero, not a division by zero.
    let before = app.get(&format!("/campaigns/{id}/stats")).await.expect(200);
    assert_eq!(before.body["success"], json!(true));
    let s = &before.body["data"];
    assert_eq!(s["campaignId"], json!(id));
    assert_eq!(s["status"], json!("DRAFT"));
    for key in [
        "deliveryRate",
        "openRate",
        "clickRate",
        "bounceRate",
        "complaintRate",
    ] {
        assert_eq!(rate(s, key), 0.0, "{key}: {s}");
    }

    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    drain(&app).await;
    let email_of = |to: &str| {
        app.transport
            .attempts()
            .into_iter()
            .find(|m| m.to.email == to)
            .map(|m| m.email_id)
            .unwrap_or_else(|| panic!("no attempt to {to}"))
    };
    // One recipient each: st0 stays SENT; st7 FAILED at the transport.
    for (to, status) in [
        ("st1@x.com", EmailStatus::Delivered),
        ("st2@x.com", EmailStatus::Delivered),
        ("st3@x.com", EmailStatus::Opened),
        ("st4@x.com", EmailStatus::Clicked),
        ("st5@x.com", EmailStatus::Bounced),
        ("st6@x.com", EmailStatus::Complained),
    ] {
        set_status(&app, email_of(to).as_str(), status).await;
    }

    let stats = app.get(&format!("/campaigns/{id}/stats")).await.expect(200);
    let s = &stats.body["data"];
    assert_eq!(s["status"], json!("SENT"), "{s}");
    let counts = [
        ("totalRecipients", 8),
        ("queuedCount", 0),
        // Handed over: all but the failed one.
        ("sentCount", 7),
        // Delivered counts every later state reached through delivery.
        ("deliveredCount", 5),
        ("openedCount", 2),
        ("clickedCount", 1),
        ("bouncedCount", 1),
        ("complainedCount", 1),
        ("failedCount", 1),
        ("cancelledCount", 0),
    ];
    for (key, n) in counts {
        assert_eq!(s[key], json!(n), "{key}: {s}");
    }
    // Percent of sentCount, two decimals.
    for (key, expected) in [
        ("deliveryRate", 71.43),
        ("openRate", 28.57),
        ("clickRate", 14.29),
        ("bounceRate", 14.29),
        ("complaintRate", 14.29),
    ] {
        assert_eq!(rate(s, key), expected, "{key}: {s}");
    }
    // The campaign itself shows the same counters.
    let read = app.get(&format!("/campaigns/{id}")).await.expect(200);
    let c = &read.body["data"];
    for key in [
        "sentCount",
        "deliveredCount",
        "openedCount",
        "clickedCount",
        "bouncedCount",
    ] {
        assert_eq!(c[key], s[key], "{key}");
    }
    app.get("/campaigns/00000000-0000-7000-8000-000000000000/stats")
        .await
        .expect_error(404, "CAMPAIGN_NOT_FOUND");
}
