//! Steady load for fault tests: 16 clients sending `/v1/send` and `/v1/track` one after the
//! other until told to stop, every answer kept with when it was sent and answered.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use hyper::Method;
use serde_json::json;
use tokio::time::Instant;

use crate::support::http::Api;

/// Clients in flight at once.
pub const CLIENTS: usize = 16;

/// One request and what came of it.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub sent: Instant,
    pub answered: Instant,
    /// `None` when no answer came (transport failure or time-out).
    pub status: Option<u16>,
    /// `error.code` of an error body.
    pub code: Option<String>,
    pub retry_after: Option<String>,
    /// `(path, id)` of an accepted request: the email id of a send, the event id of a track.
    pub accepted: Option<(&'static str, String)>,
    /// The transport error or a short body, for messages.
    pub detail: String,
}

/// The load: stop it with [`Load::stop`] to get every outcome.
pub struct Load {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<Vec<Outcome>>>,
}

/// Starts [`CLIENTS`] clients: even ones send to a fresh recipient, odd ones track an event
/// for a fresh contact, each request after the previous one's answer.
pub fn start(api: &Api, secret_key: &str, event: &'static str) -> Load {
    let stop = Arc::new(AtomicBool::new(false));
    let counter = Arc::new(AtomicUsize::new(0));
    let tasks = (0..CLIENTS)
        .map(|client| {
            let (api, key, stop, counter) = (
                api.clone(),
                secret_key.to_string(),
                Arc::clone(&stop),
                Arc::clone(&counter),
            );
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                while !stop.load(Ordering::Acquire) {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    let (path, body) = if client % 2 == 0 {
                        (
                            "/v1/send",
                            json!({
                                "to": format!("fault{n}@example.org"),
                                "from": "Posthorn <hello@example.com>",
                                "subject": format!("Fault {n}"),
                                "body": format!("<p>Message {n}</p>"),
                            }),
                        )
                    } else {
                        (
                            "/v1/track",
                            json!({"email": format!("fault{n}@example.org"), "event": event}),
                        )
                    };
                    let sent = Instant::now();
                    let answer = api.call(Method::POST, path, Some(&key), Some(&body)).await;
                    let answered = Instant::now();
                    outcomes.push(match answer {
                        Ok(a) => {
                            let id = if path == "/v1/send" {
                                a.body["data"]["emails"][0]["email"].as_str()
                            } else {
                                a.body["data"]["event"].as_str()
                            };
                            Outcome {
                                sent,
                                answered,
                                status: Some(a.status),
                                code: a.body["error"]["code"].as_str().map(str::to_string),
                                retry_after: a.header("retry-after").map(str::to_string),
                                accepted: a
                                    .ok()
                                    .then(|| id.map(|id| (path, id.to_string())))
                                    .flatten(),
                                detail: a.body.to_string().chars().take(300).collect(),
                            }
                        }
                        Err(e) => Outcome {
                            sent,
                            answered,
                            status: None,
                            code: None,
                            retry_after: None,
                            accepted: None,
                            detail: e,
                        },
                    });
                    // A refused request is retried soon, not in a tight loop.
                    if outcomes.last().is_none_or(|o| o.accepted.is_none()) {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                }
                outcomes
            })
        })
        .collect();
    Load { stop, tasks }
}

impl Load {
    /// Stops the clients after their current request; every outcome, by time sent.
    pub async fn stop(self) -> Vec<Outcome> {
        self.stop.store(true, Ordering::Release);
        let mut all = Vec::new();
        for task in self.tasks {
            all.extend(task.await.expect("a load client panicked"));
        }
        all.sort_by_key(|o| o.sent);
        all
    }
}

/// The ids accepted by `path`.
pub fn accepted(outcomes: &[Outcome], path: &str) -> Vec<String> {
    outcomes
        .iter()
        .filter_map(|o| o.accepted.as_ref())
        .filter(|(p, _)| *p == path)
        .map(|(_, id)| id.clone())
        .collect()
}

/// A few outcomes, for failure messages.
pub fn show(outcomes: &[&Outcome]) -> String {
    outcomes
        .iter()
        .take(5)
        .map(|o| format!("{:?} {:?} {}", o.status, o.code, o.detail))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A timeline of the outcomes around `from` (seconds from it), for notes.
pub fn timeline(outcomes: &[Outcome], from: Instant, until: Instant) -> String {
    outcomes
        .iter()
        .filter(|o| o.answered >= from && o.sent <= until)
        .take(40)
        .map(|o| {
            format!(
                "{:+.2}s..{:+.2}s {:?}",
                o.sent.saturating_duration_since(from).as_secs_f64(),
                o.answered.saturating_duration_since(from).as_secs_f64(),
                o.status
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}
