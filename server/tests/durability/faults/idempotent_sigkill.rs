//! SIGKILL while 16 clients send with `Idempotency-Key`s (file transport: one file per
//! email id). After a restart on the same store every email answered 200 is delivered, a
//! client retrying its unanswered request with the same key gets 200 (the original answer
//! when the request had committed before the kill), and every key has exactly one email:
//! a retry never sends a second one. Delivery itself stays at least once: the transport
//! may be called twice for one email id, which rewrites the same file, so counting email
//! ids per key (not transport calls) is what tells a duplicated request from a redelivery.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper::Method;
use serde_json::{json, Value};

use crate::support::http::{Answer, Api};
use crate::support::posthorn::{note, Posthorn, TestDb};
use crate::support::wait_for_idle_queue;

const CLIENTS: usize = 16;
/// Answered sends that trigger the kill.
const KILL_AFTER: usize = 150;
/// No client sends more than this (a kill that never comes ends the test).
const MAX_PER_CLIENT: usize = 500;

/// One keyed request of a client.
#[derive(Debug, Clone)]
struct Keyed {
    key: String,
    body: Value,
}

/// What a client saw before the kill.
#[derive(Debug, Default)]
struct ClientLog {
    /// Requests answered 200: the request and the answer's body.
    answered: Vec<(Keyed, Value)>,
    /// The request the kill left without an answer.
    unanswered: Option<Keyed>,
}

fn request(client: usize, n: usize) -> Keyed {
    let key = format!("c{client}-{n}");
    Keyed {
        body: json!({
            "to": format!("c{client}n{n}@example.org"),
            "from": "Posthorn <hello@example.com>",
            "subject": format!("key {key}"),
            "body": format!("<p>Request {key}</p>"),
        }),
        key,
    }
}

async fn send(api: &Api, secret_key: &str, req: &Keyed) -> Result<Answer, String> {
    api.call_with_headers(
        Method::POST,
        "/v1/send",
        Some(secret_key),
        Some(&req.body),
        &[("idempotency-key", &req.key)],
    )
    .await
}

/// The email id of a `/v1/send` answer.
fn email_id(body: &Value) -> Option<String> {
    body["data"]["emails"][0]["email"]
        .as_str()
        .map(str::to_string)
}

/// Sends keyed requests one after the other until one gets no answer (the kill).
async fn client(
    api: Api,
    secret_key: String,
    client: usize,
    answered: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) -> ClientLog {
    let mut log = ClientLog::default();
    for n in 0..MAX_PER_CLIENT {
        if stop.load(Ordering::Acquire) {
            break;
        }
        let req = request(client, n);
        match send(&api, &secret_key, &req).await {
            Ok(a) if a.status == 200 => {
                log.answered.push((req, a.body));
                answered.fetch_add(1, Ordering::Relaxed);
            }
            Ok(a) => panic!("{}: {} {}", req.key, a.status, a.body),
            Err(_) => {
                log.unanswered = Some(req);
                break;
            }
        }
    }
    log
}

/// The key named by each message file's subject: email id → key.
fn files_by_email(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("reading the outbox") {
        let path = entry.expect("an outbox entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("eml") {
            continue;
        }
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a file name")
            .to_string();
        let text = std::fs::read_to_string(&path).expect("reading a message file");
        let key = text
            .lines()
            .find_map(|l| l.strip_prefix("Subject: key "))
            .unwrap_or_else(|| panic!("{}: no `Subject: key …` line", path.display()))
            .trim()
            .to_string();
        out.insert(stem, key);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_with_idempotency_keys_sends_each_key_once() {
    let Some(db) = TestDb::create("sigkill_with_idempotency_keys_sends_each_key_once").await else {
        return;
    };
    let outbox = tempfile::Builder::new()
        .prefix("posthorn-outbox-")
        .tempdir()
        .expect("a temporary directory");
    let transport = format!("file:{}", outbox.path().display());
    let env = [("POSTHORN_TRANSPORT", transport.as_str())];
    let mut first = Posthorn::start_with("posthorn #1", &db.url, 0, &env).await;
    let ws = first.create_workspace("idempotent-sigkill").await;

    let answered = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            tokio::spawn(client(
                first.api.clone(),
                ws.secret_key.clone(),
                c,
                Arc::clone(&answered),
                Arc::clone(&stop),
            ))
        })
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while answered.load(Ordering::Relaxed) < KILL_AFTER {
        assert!(
            tokio::time::Instant::now() < deadline,
            "only {} sends answered within 60 s\n{}",
            answered.load(Ordering::Relaxed),
            first.logs()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    first.sigkill().await;
    stop.store(true, Ordering::Release);
    let mut logs = Vec::new();
    for c in clients {
        logs.push(c.await.expect("a client panicked"));
    }
    // PostgreSQL may still finish what the dead process had sent.
    db.wait_until_quiet().await;

    // The kill split no commit: every email written has its key's record, and every
    // record its email (a record written after the change could be missing here).
    let emails = db
        .text_pairs(&format!(
            "SELECT subject, id FROM emails WHERE workspace_id = '{}'",
            ws.id
        ))
        .await;
    let records = db
        .text_pairs(&format!(
            "SELECT key, fingerprint FROM idempotency_records WHERE scope = '{}'",
            ws.id
        ))
        .await;
    let keys_of_emails: std::collections::BTreeSet<String> = emails
        .iter()
        .map(|(subject, _)| subject.trim_start_matches("key ").to_string())
        .collect();
    let keys_of_records: std::collections::BTreeSet<String> =
        records.into_iter().map(|(key, _)| key).collect();
    assert_eq!(
        keys_of_emails.len(),
        emails.len(),
        "a key has two emails before any retry"
    );
    assert_eq!(
        keys_of_emails, keys_of_records,
        "emails and idempotency records differ after the kill"
    );
    let committed_unanswered = logs
        .iter()
        .filter_map(|l| l.unanswered.as_ref())
        .filter(|req| keys_of_records.contains(&req.key))
        .count();

    let second = Posthorn::start_with("posthorn #2", &db.url, 0, &env).await;
    // Each client retries its unanswered request with the same key and body.
    let mut replayed = 0;
    let mut fresh = 0;
    let mut retried: Vec<(Keyed, Value)> = Vec::new();
    for req in logs.iter().filter_map(|l| l.unanswered.clone()) {
        let again = send(&second.api, &ws.secret_key, &req)
            .await
            .unwrap_or_else(|e| panic!("retrying {}: {e}", req.key));
        assert_eq!(again.status, 200, "retrying {}: {}", req.key, again.body);
        if again.header("idempotent-replayed") == Some("true") {
            replayed += 1;
        } else {
            fresh += 1;
        }
        retried.push((req, again.body));
    }
    // Answered keys replay their answer after the restart, byte for byte the same data,
    // and refuse another body.
    for log in &logs {
        let Some((req, body)) = log.answered.last() else {
            continue;
        };
        let again = send(&second.api, &ws.secret_key, req)
            .await
            .unwrap_or_else(|e| panic!("replaying {}: {e}", req.key));
        assert_eq!(again.status, 200, "replaying {}: {}", req.key, again.body);
        assert_eq!(again.header("idempotent-replayed"), Some("true"));
        assert_eq!(
            &again.body, body,
            "{}: another answer after the restart",
            req.key
        );
        let mut other = req.clone();
        other.body["subject"] = json!("another body");
        let refused = send(&second.api, &ws.secret_key, &other)
            .await
            .unwrap_or_else(|e| panic!("reusing {}: {e}", req.key));
        assert_eq!(refused.status, 422, "reusing {}: {}", req.key, refused.body);
    }

    let (_, _, dead) = wait_for_idle_queue(&second, Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", second.logs()));
    assert_eq!(dead, 0, "jobs were dead-lettered\n{}", second.logs());

    let files = files_by_email(outbox.path());
    let mut emails_per_key: HashMap<&str, Vec<&str>> = HashMap::new();
    for (email, key) in &files {
        emails_per_key.entry(key).or_default().push(email);
    }
    let answered_before: Vec<&(Keyed, Value)> = logs.iter().flat_map(|l| &l.answered).collect();
    note(&format!(
        "idempotent sigkill: {} sends answered before the kill, {} left unanswered; their \
         retries: {replayed} replayed (committed before the kill), {fresh} ran for the first \
         time; {committed_unanswered} unanswered requests had committed; {} message files",
        answered_before.len(),
        retried.len(),
        files.len(),
    ));
    assert!(!retried.is_empty(), "the kill left no request unanswered");
    assert_eq!(
        replayed, committed_unanswered,
        "a retry of a request that had committed must replay its answer"
    );
    // Every 200 is delivered: its email id has a file, of its key.
    for (req, body) in answered_before.iter().copied().chain(retried.iter()) {
        let id = email_id(body).unwrap_or_else(|| panic!("{}: no email id in {body}", req.key));
        assert_eq!(
            files.get(&id).map(String::as_str),
            Some(req.key.as_str()),
            "{}: email {id} answered 200 was not delivered",
            req.key
        );
    }
    // One email per key, retried or not: no request ran twice.
    let twice: Vec<(&&str, &Vec<&str>)> = emails_per_key
        .iter()
        .filter(|(_, ids)| ids.len() > 1)
        .collect();
    assert!(
        twice.is_empty(),
        "keys with more than one email (a retry ran the request again): {twice:?}"
    );
    let expected = answered_before.len() + retried.len();
    assert_eq!(
        emails_per_key.len(),
        expected,
        "message files name {} keys, {expected} were answered",
        emails_per_key.len()
    );
    drop(second);
    db.drop().await;
}
