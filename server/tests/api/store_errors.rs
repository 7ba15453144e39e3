//! What a client sees when PostgreSQL gives a transaction up (serialization failure,
//! deadlock) or a stored row does not decode. These failures can only be forced on a real
//! database, so the checks run in the suite's PostgreSQL pass (`POSTHORN_API_TEST_STORE=
//! postgres`, which `scripts/test-all.sh` runs); on the memory store there is nothing to force.

use posthorn_core::ports::Clock;
use serde_json::json;
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;

use crate::harness::TestApp;

/// Makes the next `times` inserts into `events` fail with SQLSTATE `code`.
async fn fail_event_inserts(db: &PgPool, code: &str, times: u32) {
    fail_statements(db, "INSERT", "events", code, times).await;
}

/// Makes the next `times` statements `operation` (`INSERT`, `UPDATE`, `DELETE`) on `table` fail with
/// SQLSTATE `code`. A sequence counts them: unlike a table, it is not rolled back with the
/// failing transaction.
async fn fail_statements(db: &PgPool, operation: &str, table: &str, code: &str, times: u32) {
    for statement in [
        format!("DROP TRIGGER IF EXISTS forced_failure ON {table}"),
        "DROP SEQUENCE IF EXISTS forced_failures".to_string(),
        "CREATE SEQUENCE forced_failures".to_string(),
        format!(
            "CREATE OR REPLACE FUNCTION forced_failure() RETURNS trigger AS $$ BEGIN \
               IF nextval('forced_failures') <= {times} THEN \
                 RAISE EXCEPTION 'forced by the test' USING ERRCODE = '{code}'; \
               END IF; \
               RETURN COALESCE(NEW, OLD); \
             END $$ LANGUAGE plpgsql"
        ),
        format!(
            "CREATE TRIGGER forced_failure BEFORE {operation} ON {table} \
             FOR EACH ROW EXECUTE FUNCTION forced_failure()"
        ),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(db)
            .await
            .expect("installing the failure trigger");
    }
}

async fn database(app: &TestApp) -> Option<PgPool> {
    let url = app.database_url.as_ref()?;
    Some(
        PgPoolOptions::new()
            .max_connections(2)
            .connect(url)
            .await
            .expect("connecting to the test database"),
    )
}

#[tokio::test]
async fn serialization_failures_and_deadlocks_are_retried_then_a_409() {
    let app = TestApp::new().await;
    let Some(db) = database(&app).await else {
        return; // memory store: see the module comment
    };
    for code in ["40001", "40P01"] {
        // Given up twice, then it goes through: the client never sees it.
        fail_event_inserts(&db, code, 2).await;
        app.post(
            "/v1/track",
            json!({"email": "retry@x.com", "event": format!("e-{code}")}),
        )
        .await
        .expect(200);
        // Given up every time: a conflict to retry later, not an outage or a bug.
        fail_event_inserts(&db, code, 1_000).await;
        app.post(
            "/v1/track",
            json!({"email": "retry@x.com", "event": "never"}),
        )
        .await
        .expect_error(409, "CONFLICT");
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM events WHERE name LIKE 'e-%'")
        .fetch_one(&db)
        .await
        .expect("counting events");
    assert_eq!(count, 2, "each retried request stored its event once");
}

#[tokio::test]
async fn a_key_set_revocation_the_database_gave_up_is_decided_again() {
    let app = TestApp::new().await;
    let Some(db) = database(&app).await else {
        return; // memory store: see the module comment
    };
    let created = app
        .post("/keys", json!({"name": "second"}))
        .await
        .expect(201);
    let id = created.body["id"].as_str().expect("id").to_string();
    // Given up once: revoked on the second try, not refused as the last key set.
    fail_statements(&db, "DELETE", "key_sets", "40001", 1).await;
    app.delete(&format!("/keys/{id}")).await.expect(204);
    let list = app.get("/keys").await.expect(200);
    assert_eq!(list.body["data"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_row_that_does_not_decode_is_a_500_not_a_503() {
    let app = TestApp::new().await;
    let Some(db) = database(&app).await else {
        return; // memory store: see the module comment
    };
    let created = app
        .post("/contacts", json!({"email": "corrupt@x.com"}))
        .await
        .expect(201);
    let id = created.body["id"].as_str().expect("id").to_string();
    sqlx::query("UPDATE contacts SET email = 'not an address' WHERE id = $1")
        .bind(&id)
        .execute(&db)
        .await
        .expect("corrupting the row");
    let res = app
        .get(&format!("/contacts/{id}"))
        .await
        .expect_error(500, "INTERNAL_ERROR");
    let message = res.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        !message.contains("not an address") && !message.contains("contacts.email"),
        "a 500 does not leak internals: {message}"
    );
    assert!(
        res.headers.get("retry-after").is_none(),
        "not an outage to retry"
    );
}

#[tokio::test]
async fn a_job_failing_on_a_record_that_does_not_decode_is_dead_lettered_in_the_end() {
    let app = TestApp::new().await;
    let Some(db) = database(&app).await else {
        return; // memory store: see the module comment
    };
    let id = app.send_one("undecodable@x.com").await;
    sqlx::query("UPDATE emails SET status = 'NOT_A_STATUS' WHERE id = $1")
        .bind(&id)
        .execute(&db)
        .await
        .expect("corrupting the row");
    let max = posthorn_core::jobs::MAX_FAILED_RUNS;
    for round in 0..max {
        let stats = app.engine.jobs.stats(app.clock.now()).await.expect("stats");
        assert_eq!(stats.dead, 0, "round {round}: still retried");
        assert!(app.engine.run_due_jobs().await.is_err(), "round {round}");
        app.clock.advance(chrono::Duration::hours(2));
    }
    let stats = app.engine.jobs.stats(app.clock.now()).await.expect("stats");
    assert_eq!(
        (stats.queued, stats.dead),
        (0, 1),
        "parked after {max} failed runs"
    );
    assert!(app.transport.messages().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn a_sent_email_whose_record_fails_is_recorded_again_not_sent_again() {
    let app = TestApp::new().await;
    let Some(db) = database(&app).await else {
        return; // memory store: see the module comment
    };
    let id = app.send_one("once@x.com").await;
    // The transport takes the message, then recording it (its `email.sent` event) fails
    // twice, as in a failover: it used to fail the job, which sent the message again.
    fail_event_inserts(&db, "57P01", 2).await;
    for _ in 0..3 {
        let _ = app.engine.run_due_jobs().await;
        app.clock.advance(chrono::Duration::minutes(10));
    }
    let sent = app
        .transport
        .messages()
        .into_iter()
        .filter(|m| m.email_id.as_str() == id)
        .count();
    assert_eq!(sent, 1, "sent once");
    let email = app
        .engine
        .store
        .email(&app.ws(), &posthorn_core::model::EmailId::from(id.as_str()))
        .await
        .expect("store")
        .expect("email");
    assert_eq!(email.status, posthorn_core::model::EmailStatus::Sent);
}

#[tokio::test]
async fn a_cancel_that_loses_to_the_expansion_reads_again_and_cancels() {
    let app = TestApp::new().await;
    let Some(db) = database(&app).await else {
        return; // memory store: see the module comment
    };
    crate::campaigns::seed(&app, "c", 3, true, json!({})).await;
    let id = crate::campaigns::create(&app, json!({"audienceType": "ALL"})).await;
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    // The cancel's first commit is given up, as when an expansion batch moved the
    // campaign's version under it: it reads again and cancels, no 409 to the client.
    fail_statements(&db, "UPDATE", "campaigns", "40001", 1).await;
    let res = app
        .post(&format!("/campaigns/{id}/cancel"), json!({}))
        .await
        .expect(200);
    assert_eq!(
        res.body["data"]["status"],
        json!("CANCELLED"),
        "{}",
        res.body
    );
    sqlx::query("DROP TRIGGER IF EXISTS forced_failure ON campaigns")
        .execute(&db)
        .await
        .expect("dropping the trigger");
}
