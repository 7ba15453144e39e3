//! The `workflow` scenario: a burst of tracked events, each starting a trigger → condition →
//! webhook workflow whose webhook lands at a receiver on 127.0.0.1 run by this process; then,
//! with the queue idle, sequential samples of the time from a `/v1/track` answer to the
//! webhook's arrival.
//!
//! The server must let WEBHOOK steps reach loopback (`POSTHORN_WEBHOOK_ALLOW_PRIVATE=true`,
//! and `POSTHORN_WEBHOOK_ALLOW_HOSTS=127.0.0.1` keeps every call on this machine), as
//! `bench/run.sh` sets.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use hyper::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

use crate::api::Api;
use crate::BoxError;

/// Arrival time of each webhook, by the `seq` its body carries.
type Arrivals = Arc<Mutex<HashMap<u64, Instant>>>;

/// What the scenario measured, as lines for the report.
pub struct Figures {
    pub lines: Vec<String>,
}

/// A keep-alive HTTP/1.1 receiver on 127.0.0.1 answering 200 at once; records when each
/// body's `seq` arrived (the first arrival; repeats are counted apart).
struct Receiver {
    port: u16,
    arrivals: Arrivals,
    repeats: Arc<Mutex<u64>>,
}

impl Receiver {
    async fn start() -> Result<Receiver, BoxError> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let arrivals: Arrivals = Arc::new(Mutex::new(HashMap::new()));
        let repeats = Arc::new(Mutex::new(0u64));
        let (a, r) = (Arc::clone(&arrivals), Arc::clone(&repeats));
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (a, r) = (Arc::clone(&a), Arc::clone(&r));
                tokio::spawn(async move {
                    let _ = serve(socket, a, r).await;
                });
            }
        });
        Ok(Receiver {
            port,
            arrivals,
            repeats,
        })
    }

    fn count(&self) -> usize {
        lock(&self.arrivals).len()
    }

    fn arrival(&self, seq: u64) -> Option<Instant> {
        lock(&self.arrivals).get(&seq).copied()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

async fn serve(
    socket: TcpStream,
    arrivals: Arrivals,
    repeats: Arc<Mutex<u64>>,
) -> std::io::Result<()> {
    socket.set_nodelay(true)?;
    let (read, mut write) = socket.into_split();
    let mut reader = BufReader::new(read);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        if line.trim().is_empty() {
            continue;
        }
        let mut length = 0usize;
        loop {
            line.clear();
            if reader.read_line(&mut line).await? == 0 {
                return Ok(());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.trim().eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).await?;
        let now = Instant::now();
        let seq = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v["seq"].as_u64());
        if let Some(seq) = seq {
            match lock(&arrivals).entry(seq) {
                Entry::Occupied(_) => *lock(&repeats) += 1,
                Entry::Vacant(slot) => {
                    slot.insert(now);
                }
            }
        }
        write
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .await?;
    }
}

fn id_of(v: &Value, what: &str) -> Result<String, BoxError> {
    v["id"]
        .as_str()
        .or_else(|| v["data"]["id"].as_str())
        .map(str::to_string)
        .ok_or_else(|| format!("{what}: no id in {v}").into())
}

async fn created(api: &Api, key: &str, path: &str, body: Value) -> Result<Value, BoxError> {
    let (status, value) = api.call(Method::POST, path, Some(key), Some(&body)).await?;
    if status != StatusCode::CREATED {
        return Err(format!("POST {path}: {status}: {value}").into());
    }
    Ok(value)
}

/// trigger (EVENT `event`) → CONDITION `event.plan equals pro` → (yes) WEBHOOK to `url`
/// with the body `{seq: <event.seq>}`.
async fn make_workflow(api: &Api, key: &str, event: &str, url: &str) -> Result<(), BoxError> {
    let workflow = created(
        api,
        key,
        "/workflows",
        json!({"name": format!("bench {event}"), "triggerType": "EVENT",
               "triggerConfig": {"eventName": event}, "enabled": true}),
    )
    .await?;
    let id = id_of(&workflow, "POST /workflows")?;
    let trigger = workflow["steps"][0]["id"]
        .as_str()
        .ok_or("POST /workflows: no trigger step")?
        .to_string();
    let steps = format!("/workflows/{id}/steps");
    let condition = created(
        api,
        key,
        &steps,
        json!({"type": "CONDITION", "name": "pro?",
               "config": {"field": "event.plan", "operator": "equals", "value": "pro"}}),
    )
    .await?;
    let condition = id_of(&condition, "POST steps")?;
    let hook = created(
        api,
        key,
        &steps,
        json!({"type": "WEBHOOK", "name": "notify",
               "config": {"url": url, "body": {"seq": "{{event.seq}}"}}}),
    )
    .await?;
    let hook = id_of(&hook, "POST steps")?;
    let transitions = format!("/workflows/{id}/transitions");
    created(
        api,
        key,
        &transitions,
        json!({"fromStepId": trigger, "toStepId": condition}),
    )
    .await?;
    created(
        api,
        key,
        &transitions,
        json!({"fromStepId": condition, "toStepId": hook, "condition": {"branch": "yes"}}),
    )
    .await?;
    Ok(())
}

async fn track(api: &Api, key: &str, event: &str, seq: u64) -> Result<(), BoxError> {
    let body = json!({"email": format!("wf{seq}@bench.io"), "event": event,
                      "data": {"seq": seq, "plan": "pro"}});
    let (status, value) = api
        .call(Method::POST, "/v1/track", Some(key), Some(&body))
        .await?;
    if !status.is_success() {
        return Err(format!("POST /v1/track: {status}: {value}").into());
    }
    Ok(())
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Runs the burst of `events` tracked events over `connections` connections, waits (at most
/// `patience`) for every webhook, drains the queue, then takes `samples` sequential latency
/// samples.
pub async fn run(
    api: &Api,
    key: &str,
    events: u64,
    connections: usize,
    samples: u64,
    patience: Duration,
) -> Result<Figures, BoxError> {
    let receiver = Receiver::start().await?;
    let url = format!("http://127.0.0.1:{}/hook", receiver.port);
    make_workflow(api, key, "wf-burst", &url).await?;
    make_workflow(api, key, "wf-sample", &url).await?;
    let mut lines = Vec::new();

    // The burst.
    let begin = Instant::now();
    let failures: Vec<String> = stream::iter(0..events)
        .map(|seq| async move { track(api, key, "wf-burst", seq).await.err() })
        .buffer_unordered(connections)
        .filter_map(|e| async move { e.map(|e| e.to_string()) })
        .collect()
        .await;
    let accepted_in = begin.elapsed();
    if let Some(first) = failures.first() {
        lines.push(format!(
            "workflow burst: {} of {events} tracks failed, first: {first}",
            failures.len()
        ));
    }
    let expected = events as usize - failures.len();
    let deadline = begin + patience;
    while receiver.count() < expected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let received = receiver.count();
    let last = {
        let arrivals = lock(&receiver.arrivals);
        arrivals.values().max().copied()
    };
    let all_in = last.map(|t| t.duration_since(begin));
    lines.push(format!(
        "workflow burst: {events} tracks over {connections} connections accepted in {:.2} s \
         ({:.0}/s); {received} of {expected} webhooks received{}; {} repeated deliveries",
        accepted_in.as_secs_f64(),
        events as f64 / accepted_in.as_secs_f64(),
        match (received >= expected, all_in) {
            (true, Some(t)) => format!(
                ", the last {:.2} s after the first track ({:.0} webhooks/s)",
                t.as_secs_f64(),
                received as f64 / t.as_secs_f64()
            ),
            _ => format!(" within {:.0} s (INCOMPLETE)", patience.as_secs_f64()),
        },
        *lock(&receiver.repeats)
    ));

    // Idle again before the latency samples.
    if api.drain_jobs(patience).await?.is_none() {
        lines.push("workflow latency: the job queue did not drain before the samples".into());
    }
    let mut from_answer = Vec::new();
    let mut from_request = Vec::new();
    let mut lost = 0u64;
    for i in 0..samples {
        let seq = 1_000_000 + i;
        let sent = Instant::now();
        track(api, key, "wf-sample", seq).await?;
        let answered = Instant::now();
        let wait_until = answered + Duration::from_secs(5);
        let arrived = loop {
            if let Some(t) = receiver.arrival(seq) {
                break Some(t);
            }
            if Instant::now() >= wait_until {
                break None;
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        };
        match arrived {
            Some(t) => {
                // A webhook can arrive before the client has read the answer: 0 then.
                from_answer.push(t.saturating_duration_since(answered).as_secs_f64() * 1e3);
                from_request.push(t.duration_since(sent).as_secs_f64() * 1e3);
            }
            None => lost += 1,
        }
        // Space the samples a little: an idle system between them.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    from_answer.sort_by(f64::total_cmp);
    from_request.sort_by(f64::total_cmp);
    lines.push(format!(
        "workflow latency, {} sequential samples on an idle queue ({lost} not received within \
         5 s): track answered → webhook received p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; \
         track sent → webhook received p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        from_answer.len(),
        quantile(&from_answer, 0.5),
        quantile(&from_answer, 0.99),
        quantile(&from_answer, 1.0),
        quantile(&from_request, 0.5),
        quantile(&from_request, 0.99),
        quantile(&from_request, 1.0),
    ));
    Ok(Figures { lines })
}
