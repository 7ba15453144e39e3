//! Shared pieces: the process harness, the HTTP client, the SMTP sink and request bursts.

pub mod http;
pub mod posthorn;
pub mod private;
pub mod receiver;
pub mod sink;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use hyper::Method;
use serde_json::json;

use self::http::Api;
use self::sink::Sink;

/// The custom event name the bursts track.
pub const BURST_EVENT: &str = "durability-burst";
/// Requests in flight at once during a burst.
pub const BURST_CONCURRENCY: usize = 16;
/// `POSTHORN_WORKER_CONCURRENCY`'s default: jobs in flight per process.
pub const WORKER_CONCURRENCY: usize = 16;

/// One request of a burst.
#[derive(Debug, Clone, Copy)]
pub enum Call {
    /// `POST /v1/send` to one recipient, `rcpt<n>@example.org`.
    Send(usize),
    /// `POST /v1/track` of [`BURST_EVENT`] for `tracked<n>@example.org`.
    Track(usize),
}

/// `sends` sends and `tracks` tracks, interleaved.
pub fn mixed_calls(sends: usize, tracks: usize) -> Vec<Call> {
    let mut calls = Vec::with_capacity(sends + tracks);
    for i in 0..sends.max(tracks) {
        if i < sends {
            calls.push(Call::Send(i));
        }
        if i < tracks {
            calls.push(Call::Track(i));
        }
    }
    calls
}

/// What the API accepted during a burst (2xx answers only).
#[derive(Debug, Default)]
pub struct Accepted {
    /// Email ids of accepted sends.
    pub emails: Vec<String>,
    /// Event ids of accepted tracks.
    pub events: Vec<String>,
    /// Answers that were not 2xx, by status.
    pub refused: BTreeMap<u16, usize>,
    /// Requests without an answer (connection refused or reset, time-out).
    pub failed: usize,
    /// The first refusal or failure, for messages.
    pub first_problem: Option<String>,
}

impl Accepted {
    fn problem(&mut self, what: String) {
        if self.first_problem.is_none() {
            self.first_problem = Some(what);
        }
    }
}

/// Fires `calls` with [`BURST_CONCURRENCY`] in flight; call `i` goes to `apis[i % len]`.
pub async fn burst(apis: Vec<Api>, secret_key: String, calls: Vec<Call>) -> Accepted {
    let accepted = Arc::new(Mutex::new(Accepted::default()));
    let record = Arc::clone(&accepted);
    stream::iter(calls.into_iter().enumerate())
        .for_each_concurrent(BURST_CONCURRENCY, |(i, call)| {
            let api = apis[i % apis.len()].clone();
            let key = secret_key.clone();
            let record = Arc::clone(&record);
            async move {
                let (path, body) = match call {
                    Call::Send(n) => (
                        "/v1/send",
                        json!({
                            "to": format!("rcpt{n}@example.org"),
                            "from": "Posthorn <hello@example.com>",
                            "subject": format!("Durability {n}"),
                            "body": format!("<p>Message {n}</p>"),
                        }),
                    ),
                    Call::Track(n) => (
                        "/v1/track",
                        json!({
                            "email": format!("tracked{n}@example.org"),
                            "event": BURST_EVENT,
                            "data": {"n": n},
                        }),
                    ),
                };
                let answer = api.call(Method::POST, path, Some(&key), Some(&body)).await;
                let mut rec = record.lock().unwrap_or_else(|p| p.into_inner());
                match answer {
                    Ok(a) if a.ok() => {
                        let id = match call {
                            Call::Send(_) => a.body["data"]["emails"][0]["email"].as_str(),
                            Call::Track(_) => a.body["data"]["event"].as_str(),
                        };
                        let id = id.unwrap_or_else(|| {
                            panic!("{path}: a {} answer without an id: {}", a.status, a.body)
                        });
                        match call {
                            Call::Send(_) => rec.emails.push(id.to_string()),
                            Call::Track(_) => rec.events.push(id.to_string()),
                        }
                    }
                    Ok(a) => {
                        *rec.refused.entry(a.status).or_insert(0) += 1;
                        rec.problem(format!("{path}: {} {}", a.status, a.body));
                    }
                    Err(e) => {
                        rec.failed += 1;
                        rec.problem(e);
                    }
                }
            }
        })
        .await;
    let mut accepted = accepted.lock().unwrap_or_else(|p| p.into_inner());
    std::mem::take(&mut *accepted)
}

/// Polls `done` every 10 ms until it holds or `within` passed; whether it held.
pub async fn wait_until(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if done() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Accepted email ids the sink has not seen yet.
pub fn missing(sink: &Sink, accepted: &[String]) -> Vec<String> {
    let counts = sink.counts();
    accepted
        .iter()
        .filter(|id| !counts.contains_key(*id))
        .cloned()
        .collect()
}

/// Email ids the sink accepted more than once, with their counts.
pub fn duplicates(counts: &HashMap<String, usize>) -> BTreeMap<String, usize> {
    counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, n)| (id.clone(), *n))
        .collect()
}

/// Ids the sink accepted that the API never confirmed (an answer lost in a kill).
pub fn unconfirmed(counts: &HashMap<String, usize>, accepted: &[String]) -> usize {
    let accepted: HashSet<&String> = accepted.iter().collect();
    counts.keys().filter(|id| !accepted.contains(id)).count()
}

/// A short sample of ids for failure messages.
pub fn sample(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(5).map(String::as_str).collect();
    if ids.len() > shown.len() {
        format!("{} … ({} in all)", shown.join(", "), ids.len())
    } else {
        shown.join(", ")
    }
}

/// Waits until a process reports an empty queue (nothing queued or running) via
/// `GET /health`; `Err` with the last counts after `within`.
pub async fn wait_for_idle_queue(
    process: &posthorn::Posthorn,
    within: Duration,
) -> Result<(u64, u64, u64), String> {
    let deadline = tokio::time::Instant::now() + within;
    let mut last = Err("not asked yet".to_string());
    while tokio::time::Instant::now() < deadline {
        last = process.job_counts().await;
        if let Ok((0, 0, _)) = last {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(format!(
        "{}: the job queue was not empty after {within:?}: last (queued, running, dead) = {last:?}",
        process.name
    ))
}
