use axum::http::Method;
use posthorn_core::app::contacts::{plan_upsert, ActiveRoom, Upsert};
use posthorn_core::model::{ContactStatus, EmailAddress};
use posthorn_core::ports::{ChangeSet, StoreError};
use serde_json::{json, Value};

use crate::harness::TestApp;

fn names(events: &serde_json::Value) -> Vec<String> {
    events["events"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn create_then_update_by_email() {
    let app = TestApp::new().await;
    let created = app
        .post(
            "/contacts",
            json!({"email": "  Ada@Example.COM ", "data": {"plan": "pro", "age": 36}}),
        )
        .await
        .expect(201);
    let c = &created.body;
    assert_eq!(c["email"], json!("ada@example.com"));
    assert_eq!(c["subscribed"], json!(true));
    assert_eq!(c["status"], json!("ACTIVE"));
    assert_eq!(c["expiresAt"], json!(null));
    assert_eq!(c["projectId"], json!(app.workspace_id));
    assert_eq!(c["_meta"], json!({"isNew": true, "isUpdate": false}));
    assert!(c["createdAt"]
        .as_str()
        .is_some_and(|t| t.ends_with('Z') && t.contains('.')));
    assert!(c.get("version").is_none());

    let updated = app
        .post(
            "/contacts",
            json!({"email": "ada@example.com", "data": {"age": null, "city": "London"}}),
        )
        .await
        .expect(200);
    assert_eq!(updated.body["id"], c["id"]);
    assert_eq!(
        updated.body["data"],
        json!({"plan": "pro", "city": "London"})
    );
    assert_eq!(
        updated.body["subscribed"],
        json!(true),
        "left alone when not given"
    );
    assert_eq!(
        updated.body["_meta"],
        json!({"isNew": false, "isUpdate": true})
    );
}

#[tokio::test]
async fn subscription_changes_emit_events_once() {
    let app = TestApp::new().await;
    let id = app
        .post("/contacts", json!({"email": "s@x.com"}))
        .await
        .expect(201)
        .body["id"]
        .as_str()
        .expect("id")
        .to_string();
    app.patch(&format!("/contacts/{id}"), json!({"subscribed": false}))
        .await
        .expect(200);
    app.patch(&format!("/contacts/{id}"), json!({"subscribed": false}))
        .await
        .expect(200);
    app.post("/contacts", json!({"email": "s@x.com", "subscribed": true}))
        .await
        .expect(200);
    let events = app
        .get(&format!("/events?contactId={id}"))
        .await
        .expect(200);
    assert_eq!(
        names(&events.body),
        ["contact.subscribed", "contact.unsubscribed"]
    );
}

#[tokio::test]
async fn read_patch_delete() {
    let app = TestApp::new().await;
    let id = app
        .post("/contacts", json!({"email": "p@x.com", "data": {"a": 1}}))
        .await
        .expect(201)
        .body["id"]
        .as_str()
        .expect("id")
        .to_string();
    let read = app.get(&format!("/contacts/{id}")).await.expect(200);
    assert_eq!(read.body["email"], json!("p@x.com"));
    assert!(read.body.get("_meta").is_none());
    let patched = app
        .patch(
            &format!("/contacts/{id}"),
            json!({"data": {"b": 2}, "email": "P2@x.com"}),
        )
        .await
        .expect(200);
    assert_eq!(patched.body["data"], json!({"a": 1, "b": 2}));
    assert_eq!(patched.body["email"], json!("p2@x.com"));
    let cleared = app
        .patch(&format!("/contacts/{id}"), json!({"data": null}))
        .await
        .expect(200);
    assert_eq!(cleared.body["data"], json!({}));
    app.post("/contacts", json!({"email": "taken@x.com"}))
        .await
        .expect(201);
    app.patch(&format!("/contacts/{id}"), json!({"email": "taken@x.com"}))
        .await
        .expect_error(409, "CONFLICT");
    let bad = app
        .patch(
            &format!("/contacts/{id}"),
            json!({"subscribed": "no", "data": [1], "email": "x"}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(bad.error_fields(), ["subscribed", "data", "email"]);
    app.delete(&format!("/contacts/{id}")).await.expect(204);
    app.get(&format!("/contacts/{id}"))
        .await
        .expect_error(404, "CONTACT_NOT_FOUND");
    app.delete(&format!("/contacts/{id}"))
        .await
        .expect_error(404, "CONTACT_NOT_FOUND");
    app.patch("/contacts/not-an-id", json!({}))
        .await
        .expect_error(404, "CONTACT_NOT_FOUND");
}

#[tokio::test]
async fn list_pages_with_cursor_filters_and_search() {
    let app = TestApp::new().await;
    for i in 0..25 {
        let subscribed = i % 5 != 0;
        app.post(
            "/contacts",
            json!({"email": format!("user{i:02}@list.io"), "subscribed": subscribed}),
        )
        .await
        .expect(201);
    }
    let first = app.get("/contacts").await.expect(200);
    assert_eq!(first.body["data"].as_array().map(Vec::len), Some(20));
    assert_eq!(first.body["total"], json!(25));
    assert_eq!(first.body["hasMore"], json!(true));
    assert_eq!(
        first.body["data"][0]["email"],
        json!("user24@list.io"),
        "newest first"
    );
    let cursor = first.body["cursor"].as_str().expect("cursor");
    let second = app
        .get(&format!("/contacts?cursor={cursor}"))
        .await
        .expect(200);
    assert_eq!(second.body["data"].as_array().map(Vec::len), Some(5));
    assert_eq!(second.body["hasMore"], json!(false));
    assert_eq!(second.body["cursor"], json!(null));
    assert!(
        second.body.get("total").is_none(),
        "total only on the first page"
    );

    let unsub = app
        .get("/contacts?subscribed=false&limit=100")
        .await
        .expect(200);
    assert_eq!(unsub.body["total"], json!(5));
    // The filtered totals follow a contact that unsubscribes.
    let newest = first.body["data"][0]["id"].as_str().expect("id");
    app.patch(&format!("/contacts/{newest}"), json!({"subscribed": false}))
        .await
        .expect(200);
    for (filter, total) in [("false", 6), ("true", 19)] {
        let page = app
            .get(&format!("/contacts?subscribed={filter}"))
            .await
            .expect(200);
        assert_eq!(page.body["total"], json!(total), "subscribed={filter}");
    }
    let search = app.get("/contacts?search=USER1").await.expect(200);
    assert_eq!(search.body["total"], json!(10));
    let small = app.get("/contacts?limit=1").await.expect(200);
    assert_eq!(small.body["data"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn list_rejects_bad_parameters() {
    let app = TestApp::new().await;
    for q in [
        "limit=101",
        "limit=0",
        "limit=abc",
        "subscribed=maybe",
        "cursor=%%%",
    ] {
        app.get(&format!("/contacts?{q}"))
            .await
            .expect_error(422, "VALIDATION_ERROR");
    }
    let res = app
        .get("/contacts?limit=101")
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["limit"]);
    let res = app
        .get("/contacts?cursor=bm9wZQ")
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["cursor"]);
}

#[tokio::test]
async fn create_validates_every_field() {
    let app = TestApp::new().await;
    let res = app
        .post(
            "/contacts",
            json!({"email": "not-an-email", "subscribed": 1, "data": "x"}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["email", "subscribed", "data"]);
    let res = app
        .post("/contacts", json!({}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["email"]);
    let res = app
        .post("/contacts", json!([1, 2]))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["body"]);
    let ok = app
        .post("/contacts", json!({"email": "Jürgen@Bücher.de"}))
        .await
        .expect(201);
    // The local part as given (lower case), the domain as its A-label.
    assert_eq!(ok.body["email"], json!("jürgen@xn--bcher-kva.de"));
}

#[tokio::test]
async fn active_contact_limit_makes_pending_contacts_and_promotes_them() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"activeContactLimit": 2}))
        .await;
    let a = app
        .post("/contacts", json!({"email": "a@lim.io"}))
        .await
        .expect(201);
    app.post("/contacts", json!({"email": "b@lim.io"}))
        .await
        .expect(201);
    let c = app
        .post("/contacts", json!({"email": "c@lim.io"}))
        .await
        .expect(201);
    assert_eq!(c.body["status"], json!("PENDING"));
    let expires = c.body["expiresAt"].as_str().expect("expiresAt");
    assert!(expires.starts_with("2026-12-21T10:00:00"), "{expires}");
    // Tracking a new contact at the limit also makes it PENDING, and the event is stored.
    let t = app
        .post("/v1/track", json!({"email": "d@lim.io", "event": "signup"}))
        .await
        .expect(200);
    let d_id = t.body["data"]["contact"].as_str().expect("id");
    assert_eq!(
        app.get(&format!("/contacts/{d_id}")).await.expect(200).body["status"],
        json!("PENDING")
    );
    // Deleting an active contact promotes the oldest pending one.
    let a_id = a.body["id"].as_str().expect("id");
    app.delete(&format!("/contacts/{a_id}")).await.expect(204);
    let c_id = c.body["id"].as_str().expect("id");
    let c_now = app.get(&format!("/contacts/{c_id}")).await.expect(200);
    assert_eq!(c_now.body["status"], json!("ACTIVE"));
    assert_eq!(c_now.body["expiresAt"], json!(null));
    assert_eq!(
        app.get(&format!("/contacts/{d_id}")).await.body["status"],
        json!("PENDING")
    );
    // Raising the limit promotes the rest.
    app.set_workspace(&app.workspace_id, json!({"activeContactLimit": 10}))
        .await;
    assert_eq!(
        app.get(&format!("/contacts/{d_id}")).await.body["status"],
        json!("ACTIVE")
    );
}

/// The race of two creates, made step by step: both plan their contact as ACTIVE from the
/// same count (one place left), the first commits, and the store refuses the second's
/// commit instead of passing the limit. Through the API, that request plans again and
/// creates its contact PENDING.
#[tokio::test]
async fn a_create_planned_from_a_stale_count_cannot_pass_the_limit() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"activeContactLimit": 1}))
        .await;
    let ws = app.engine.workspace(&app.ws()).await.expect("workspace");
    let now = app.engine.clock.now();
    let mut plans = Vec::new();
    for address in ["first@stale.io", "second@stale.io"] {
        let upsert = Upsert {
            email: EmailAddress::parse(address).expect("address"),
            subscribed: None,
            data: None,
            default_subscribed: true,
        };
        let mut changes = ChangeSet::new();
        let planned = plan_upsert(
            &app.engine,
            &ws,
            &upsert,
            &mut ActiveRoom::default(),
            now,
            &mut changes,
        )
        .await
        .expect("plan");
        assert_eq!(planned.contact.status, ContactStatus::Active, "{address}");
        plans.push(changes);
    }
    let second = plans.pop().expect("second plan");
    let first = plans.pop().expect("first plan");
    app.engine
        .store
        .commit(first)
        .await
        .expect("the first commit");
    let refused = app.engine.store.commit(second).await;
    assert!(
        matches!(refused, Err(StoreError::Conflict(_))),
        "the second commit would pass the limit: {refused:?}"
    );
    assert_eq!(app.engine.store.count_active_contacts(&ws.id).await, Ok(1));
    let created = app
        .post("/contacts", json!({"email": "second@stale.io"}))
        .await
        .expect(201);
    assert_eq!(created.body["status"], json!("PENDING"));
}

/// Requests racing for the last places under the active contact limit, through
/// `POST /contacts` and `/v1/track` alike: every one succeeds, exactly the free places go
/// to ACTIVE contacts and the rest are PENDING (each request read the same room; the store
/// refuses a commit that would pass the limit, and that request plans again).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_never_pass_the_active_contact_limit() {
    let app = std::sync::Arc::new(TestApp::new().await);
    for round in 0..4 {
        let (id, _, sk) = app.new_workspace(&format!("Burst {round}")).await;
        app.set_workspace(&id, json!({"activeContactLimit": 4}))
            .await;
        app.call(
            Method::POST,
            "/contacts",
            Some(&sk),
            Some(json!({"email": "first@burst.io"})),
            &[],
        )
        .await
        .expect(201);
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..24 {
            let (app, sk) = (app.clone(), sk.clone());
            tasks.spawn(async move {
                let email = format!("c{i}@burst.io");
                let (path, body) = if i % 2 == 0 {
                    ("/contacts", json!({"email": email}))
                } else {
                    ("/v1/track", json!({"email": email, "event": "signup"}))
                };
                app.call(Method::POST, path, Some(&sk), Some(body), &[])
                    .await
            });
        }
        while let Some(res) = tasks.join_next().await {
            let res = res.expect("a racing request's task");
            assert!(
                res.status == 200 || res.status == 201,
                "round {round}: {}",
                res.body
            );
        }
        let list = app
            .call(Method::GET, "/contacts?limit=100", Some(&sk), None, &[])
            .await
            .expect(200);
        let statuses: Vec<&str> = list.body["data"]
            .as_array()
            .map(|all| all.iter().filter_map(|c| c["status"].as_str()).collect())
            .unwrap_or_default();
        let count = |status| statuses.iter().filter(|s| **s == status).count();
        assert_eq!(
            (count("ACTIVE"), count("PENDING")),
            (4, 21),
            "round {round}: ACTIVE and PENDING contacts under a limit of 4"
        );
    }
}

#[tokio::test]
async fn expired_pending_contacts_are_swept() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"activeContactLimit": 0}))
        .await;
    let p = app
        .post("/contacts", json!({"email": "late@lim.io"}))
        .await
        .expect(201);
    assert_eq!(p.body["status"], json!("PENDING"));
    app.clock.advance(chrono::Duration::days(31));
    let ws = app.engine.workspace(&app.ws()).await.expect("ws");
    app.engine
        .promote_pending_contacts(&ws)
        .await
        .expect("sweep");
    let id = p.body["id"].as_str().expect("id");
    app.get(&format!("/contacts/{id}"))
        .await
        .expect_error(404, "CONTACT_NOT_FOUND");
}

#[tokio::test]
async fn concurrent_upserts_of_one_email_make_one_contact() {
    let app = std::sync::Arc::new(TestApp::new().await);
    let bodies = (0..20)
        .map(|i| json!({"email": "race@x.com", "data": {format!("k{i}"): i}}))
        .collect();
    let mut created = 0;
    for res in app.post_concurrently("/contacts", bodies).await {
        assert!(res.status == 200 || res.status == 201, "{}", res.body);
        created += usize::from(res.status == 201);
    }
    assert_eq!(created, 1);
    let list = app.get("/contacts?search=race").await.expect(200);
    assert_eq!(list.body["total"], json!(1));
    assert_eq!(
        list.body["data"][0]["data"].as_object().map(|m| m.len()),
        Some(20),
        "no data lost"
    );
}

#[tokio::test]
async fn email_parameter_finds_a_contact_by_email() {
    let app = TestApp::new().await;
    for email in ["ada@lovelace.io", "grace@hopper.io", "alan@turing.io"] {
        app.post("/contacts", json!({"email": email, "data": {"who": email}}))
            .await
            .expect(201);
    }
    // The other workspace's contact of the same address is never found.
    let (_, _, other) = app.new_workspace("Other").await;
    app.call(
        axum::http::Method::POST,
        "/contacts",
        Some(&other),
        Some(json!({"email": "ada@lovelace.io"})),
        &[],
    )
    .await
    .expect(201);

    // The list shape of `GET /contacts`, holding the one contact, case-insensitively.
    let found = app
        .get("/contacts?email=Ada%40Lovelace.io")
        .await
        .expect(200);
    let b = &found.body;
    assert_eq!(b["data"].as_array().map(Vec::len), Some(1), "{b}");
    assert_eq!(b["data"][0]["email"], json!("ada@lovelace.io"));
    assert_eq!(b["data"][0]["data"], json!({"who": "ada@lovelace.io"}));
    assert_eq!(b["data"][0]["projectId"], json!(app.workspace_id));
    assert_eq!(b["total"], json!(1));
    assert_eq!(b["hasMore"], json!(false));
    assert_eq!(b["cursor"], json!(null));
    // It is the documented alias of `search` (a substring of the email).
    let by_search = app
        .get("/contacts?search=ada%40lovelace.io")
        .await
        .expect(200);
    assert_eq!(by_search.body, found.body);
    let part = app.get("/contacts?email=hopper").await.expect(200);
    assert_eq!(part.body["data"][0]["email"], json!("grace@hopper.io"));
    assert_eq!(part.body["total"], json!(1));
    // It combines with the other filters.
    let unsub = app
        .get("/contacts?email=ada%40lovelace.io&subscribed=false")
        .await
        .expect(200);
    assert_eq!(unsub.body["data"], json!([]));
    // No match is an empty page, not a 404.
    let none = app.get("/contacts?email=nobody%40x.io").await.expect(200);
    assert_eq!(none.body["data"], json!([]));
    assert_eq!(none.body["total"], json!(0));
    assert_eq!(none.body["hasMore"], json!(false));
}

#[tokio::test]
async fn garbage_cursors_are_refused_not_panicking() {
    use base64::Engine as _;
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;

    let app = TestApp::new().await;
    app.post("/contacts", json!({"email": "c@x.com"}))
        .await
        .expect(201);
    let b64 = |s: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    let uuid = "0192f7a4-0000-7000-8000-000000000000";
    let mut cursors = vec![
        "%%%".to_string(),
        "nope".to_string(),
        uuid.to_string(),
        b64(b"not a uuid"),
        b64(format!("{uuid}x").as_bytes()),
        b64(&[0xff, 0xfe, 0x00]),
        format!("{}=", b64(uuid.as_bytes())),
        "A".repeat(5000),
        "%F0%9F%92%A5".to_string(),
        "'%3B%20DROP%20TABLE%20contacts%3B--".to_string(),
    ];
    // And arbitrary text, percent-encoded as a client would send it.
    let mut runner = TestRunner::deterministic();
    let text = proptest::string::string_regex("\\PC{1,60}").expect("regex");
    for _ in 0..64 {
        let raw = text.new_tree(&mut runner).expect("value").current();
        cursors.push(raw.bytes().map(|b| format!("%{b:02X}")).collect::<String>());
    }
    for cursor in &cursors {
        let res = app.get(&format!("/contacts?cursor={cursor}")).await;
        if res.status == 200 {
            // Only a cursor this API could have made is taken (blank ones are ignored).
            let decoded = percent_decoded(cursor);
            assert!(
                decoded.trim().is_empty(),
                "cursor {cursor:?} accepted: {}",
                res.body
            );
            continue;
        }
        let res = res.expect_error(422, "VALIDATION_ERROR");
        assert_eq!(res.error_fields(), ["cursor"], "{cursor:?}");
        assert_eq!(
            res.body["error"]["errors"][0]["code"],
            json!("invalid_cursor")
        );
    }
    // A real cursor still works afterwards.
    app.post("/contacts", json!({"email": "d@x.com"}))
        .await
        .expect(201);
    let first = app.get("/contacts?limit=1").await.expect(200);
    let cursor = first.body["cursor"].as_str().expect("cursor");
    let next = app
        .get(&format!("/contacts?limit=1&cursor={cursor}"))
        .await
        .expect(200);
    assert_eq!(next.body["data"][0]["email"], json!("c@x.com"));
}

fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], s.get(i + 1..i + 3)) {
            (b'%', Some(hex)) if u8::from_str_radix(hex, 16).is_ok() => {
                out.push(u8::from_str_radix(hex, 16).unwrap_or_default());
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn nul_characters_are_refused_on_every_store() {
    let app = TestApp::new().await;
    // PostgreSQL cannot keep U+0000; every store refuses it alike, with the field's path.
    let res = app
        .raw(
            Method::POST,
            "/contacts",
            Some(&app.sk.clone()),
            Some(r#"{"email": "nul@x.com", "data": {"note": "a\u0000b"}}"#),
            Some("application/json"),
            &[],
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["data.note"]);
    app.raw(
        Method::POST,
        "/v1/track",
        Some(&app.sk.clone()),
        Some(r#"{"email": "nul@x.com", "event": "e", "data": {"k\u0000": 1}}"#),
        Some("application/json"),
        &[],
    )
    .await
    .expect_error(422, "VALIDATION_ERROR");
    app.get("/contacts?search=nul").await.expect(200);
    let list = app.get("/contacts?search=nul").await.expect(200);
    assert_eq!(list.body["total"], json!(0), "nothing was stored");
}

/// Addresses keep their domain in A-label form: a contact created with a Unicode domain is
/// the one an upsert, a change of address or a search with the A-label finds, and the
/// other way round.
#[tokio::test]
async fn a_unicode_domain_and_its_a_labels_are_one_contact() {
    let app = TestApp::new().await;
    let created = app
        .post(
            "/contacts",
            json!({"email": "X@Bücher.example", "data": {"a": 1}}),
        )
        .await
        .expect(201)
        .body;
    assert_eq!(created["email"], json!("x@xn--bcher-kva.example"));
    let updated = app
        .post(
            "/contacts",
            json!({"email": "x@xn--bcher-kva.example", "data": {"b": 2}}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(updated["id"], created["id"]);
    assert_eq!(updated["data"], json!({"a": 1, "b": 2}));
    let again = app
        .post("/contacts", json!({"email": "x@bücher.example"}))
        .await
        .expect(200)
        .body;
    assert_eq!(again["id"], created["id"]);
    for search in ["x%40b%C3%BCcher.example", "%40xn--bcher-kva.example"] {
        let found = app
            .get(&format!("/contacts?search={search}"))
            .await
            .expect(200)
            .body;
        let ids: Vec<&Value> = found["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|c| &c["id"])
            .collect();
        assert_eq!(ids, [&created["id"]], "{search}");
    }
    // A second contact cannot take the address in its other spelling.
    let other = app
        .post("/contacts", json!({"email": "y@example.com"}))
        .await
        .expect(201)
        .body;
    let other_id = other["id"].as_str().expect("id");
    app.patch(
        &format!("/contacts/{other_id}"),
        json!({"email": "x@BÜCHER.example"}),
    )
    .await
    .expect_error(409, "CONFLICT");
    // Not valid IDNA: a field error.
    let res = app
        .post("/contacts", json!({"email": "x@xn--zz.example"}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["email"]);
}
