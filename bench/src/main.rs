//! `posthorn-bench`: closed- and open-loop HTTP load against a running `posthorn` server,
//! printed as a table. `bench/run.sh` builds and starts the server and runs this; see
//! `docs/performance.md`.

mod api;
mod load;
mod soak;
mod workflow;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use hyper::{Method, Request, Uri};

use api::Api;
use load::{MakeRequest, Outcome, Plan};

/// Errors of set-up steps; the benchmark stops on the first one.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Load benchmark for a running Posthorn server.
#[derive(Debug, Parser)]
#[command(name = "posthorn-bench", version)]
struct Args {
    /// Base URL of the server.
    #[arg(
        long,
        env = "POSTHORN_BENCH_URL",
        default_value = "http://127.0.0.1:8080"
    )]
    url: String,
    /// Operator token of the server (`POSTHORN_ADMIN_TOKEN` there).
    #[arg(long, env = "POSTHORN_BENCH_ADMIN_TOKEN", default_value = "bench")]
    admin_token: String,
    /// Concurrent keep-alive connections per scenario.
    #[arg(short, long, default_value_t = 64)]
    connections: usize,
    /// Measured seconds per scenario.
    #[arg(short, long, default_value_t = 10.0)]
    duration: f64,
    /// Unmeasured warm-up seconds before each scenario's window.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Contacts created before the scenarios run.
    #[arg(long, default_value_t = 3000)]
    contacts: usize,
    /// Scenarios to run, in this order.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "health,track,track-paced,contacts,send"
    )]
    scenarios: Vec<Scenario>,
    /// Rate of `track-paced`, as a fraction of the closed-loop `/v1/track` rate.
    #[arg(long, default_value_t = 0.5)]
    paced_fraction: f64,
    /// Rate of `track-paced` in requests per second when `track` is not run.
    #[arg(long, default_value_t = 1000.0)]
    paced_rate: f64,
    /// Threads of the load generator (it shares the machine with the server).
    #[arg(long, default_value_t = 1)]
    client_threads: usize,
    /// Seconds to wait for the job queue to drain before each scenario.
    #[arg(long, default_value_t = 60.0)]
    drain_timeout: f64,
    /// Process id of the server, when it runs on this machine: adds its CPU time per request
    /// to the table.
    #[arg(long, env = "POSTHORN_BENCH_SERVER_PID")]
    server_pid: Option<u32>,
    /// Process id of the database's postmaster, when it runs on this machine: adds the CPU
    /// time of it and all its children (the backends) per request to the table.
    #[arg(long, env = "POSTHORN_BENCH_DB_PID")]
    db_pid: Option<u32>,
    /// Seconds to watch the delivery backlog after `send` (its drain rate is reported).
    #[arg(long, default_value_t = 10.0)]
    delivery_watch: f64,
    /// Tracked events in the `workflow` scenario's burst.
    #[arg(long, default_value_t = 10_000)]
    workflow_events: u64,
    /// Sequential latency samples of the `workflow` scenario.
    #[arg(long, default_value_t = 300)]
    workflow_samples: u64,
    /// Seconds the `workflow` scenario waits for the burst's webhooks.
    #[arg(long, default_value_t = 300.0)]
    workflow_patience: f64,
    /// Total seconds of the `soak` scenario.
    #[arg(long, default_value_t = 600.0)]
    soak_secs: f64,
    /// Seconds per sampled window of the `soak` scenario.
    #[arg(long, default_value_t = 10.0)]
    soak_window: f64,
    /// Offered requests per second of the `soak` scenario (all kinds together).
    #[arg(long, default_value_t = 400.0)]
    soak_rate: f64,
    /// Where the `soak` scenario writes its samples (CSV).
    #[arg(long, default_value = "soak.csv")]
    soak_csv: std::path::PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Scenario {
    /// `GET /health`: the ceiling.
    Health,
    /// `POST /v1/track`, closed loop.
    Track,
    /// `POST /v1/track`, closed loop, a new contact with every request.
    TrackFresh,
    /// `POST /v1/send`, one recipient.
    Send,
    /// `POST /v1/send` of an invoice-sized message: a 48 KB HTML body and a 144 KB
    /// attachment.
    SendLarge,
    /// `GET /contacts?limit=20`.
    Contacts,
    /// `GET /contacts?limit=20&subscribed=true`: a filtered first page and its `total`.
    ContactsSubscribed,
    /// `POST /v1/track`, open loop at a fraction of the closed-loop rate.
    TrackPaced,
    /// A burst of `/v1/track` events each starting a trigger → condition → webhook workflow
    /// (a receiver in this process on 127.0.0.1), then sequential track → webhook latency
    /// samples. Needs the server to allow loopback webhooks (`bench/run.sh` does).
    Workflow,
    /// Mixed traffic at a fixed rate for `--soak-secs` (track, send, contact reads, a
    /// campaign), sampling RSS, p99 and failures every `--soak-window` (`bench/soak.sh`).
    Soak,
}

/// One line of the table.
struct Row {
    name: &'static str,
    load: String,
    outcome: Outcome,
    /// Open loop (the rate was imposed).
    paced: bool,
    /// CPU seconds (server, load generator, database) used during the measured window.
    cpu: (Option<f64>, Option<f64>, Option<f64>),
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let runtime = if args.client_threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.client_threads)
            .enable_all()
            .build()
    };
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("posthorn-bench: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("posthorn-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), BoxError> {
    if args.duration <= 0.0 || args.warmup < 0.0 || args.connections == 0 {
        return Err("--duration must be > 0, --warmup >= 0 and --connections >= 1".into());
    }
    let client = load::client(args.connections);
    let api = Api::new(client.clone(), &args.url);
    api.wait_ready(Duration::from_secs(30)).await?;
    let ws = api
        .create_workspace(&args.admin_token, "bench", "example.com")
        .await?;
    eprintln!(
        "workspace {} created; seeding {} contacts",
        ws.id, args.contacts
    );
    api.seed_contacts(&ws.secret_key, args.contacts).await?;

    let plan = Plan {
        connections: args.connections,
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.duration),
        rate: None,
    };
    let drain_timeout = Duration::from_secs_f64(args.drain_timeout);
    let auth = HeaderValue::from_str(&format!("Bearer {}", ws.secret_key))?;
    let mut rows: Vec<Row> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut track_rate: Option<f64> = None;

    for &scenario in &args.scenarios {
        // Each scenario starts with an idle server: no delivery backlog from the last one.
        if api.drain_jobs(drain_timeout).await?.is_none() {
            notes.push(format!(
                "job queue still busy after {:.0} s before {scenario:?}",
                args.drain_timeout
            ));
        }
        if scenario == Scenario::Workflow {
            eprintln!(
                "running the workflow burst ({} events) and {} latency samples ...",
                args.workflow_events, args.workflow_samples
            );
            let figures = workflow::run(
                &api,
                &ws.secret_key,
                args.workflow_events,
                args.connections,
                args.workflow_samples,
                Duration::from_secs_f64(args.workflow_patience),
            )
            .await?;
            notes.extend(figures.lines);
            continue;
        }
        if scenario == Scenario::Soak {
            let soak = soak::SoakPlan {
                total: Duration::from_secs_f64(args.soak_secs),
                window: Duration::from_secs_f64(args.soak_window),
                rate: args.soak_rate,
                connections: args.connections,
                server_pid: args.server_pid,
                csv: args.soak_csv.clone(),
            };
            notes.extend(soak::run(&api, &client, &ws.secret_key, soak).await?);
            continue;
        }
        let (name, make, plan) = match scenario {
            Scenario::Workflow | Scenario::Soak => continue,
            Scenario::Health => ("GET /health (ceiling)", get(&api, "/health", None)?, plan),
            Scenario::Contacts => (
                "GET /contacts?limit=20",
                get(&api, "/contacts?limit=20", Some(auth.clone()))?,
                plan,
            ),
            Scenario::ContactsSubscribed => (
                "GET /contacts?limit=20&subscribed=true",
                get(
                    &api,
                    "/contacts?limit=20&subscribed=true",
                    Some(auth.clone()),
                )?,
                plan,
            ),
            Scenario::Track => ("POST /v1/track", track(&api, auth.clone())?, plan),
            Scenario::TrackFresh => (
                "POST /v1/track, new contact each",
                track_fresh(&api, auth.clone())?,
                plan,
            ),
            Scenario::Send => ("POST /v1/send", send(&api, auth.clone())?, plan),
            Scenario::SendLarge => (
                "POST /v1/send, 48 KB body + 144 KB attachment",
                send_large(&api, auth.clone())?,
                plan,
            ),
            Scenario::TrackPaced => {
                let rate = track_rate.map_or(args.paced_rate, |r| r * args.paced_fraction);
                if rate < 1.0 {
                    notes.push(format!(
                        "track-paced skipped: target rate {rate:.1} req/s is too low"
                    ));
                    continue;
                }
                let plan = Plan {
                    rate: Some(rate),
                    ..plan
                };
                ("POST /v1/track, paced", track(&api, auth.clone())?, plan)
            }
        };
        eprintln!("running {name} ...");
        let probe = tokio::spawn(cpu_probe(
            args.server_pid,
            args.db_pid,
            plan.warmup,
            plan.duration,
        ));
        let outcome = load::run(&client, make, plan).await;
        let cpu = probe.await.unwrap_or((None, None, None));
        if scenario == Scenario::Track {
            track_rate = Some(outcome.rate());
        }
        if matches!(scenario, Scenario::Send | Scenario::SendLarge) {
            // Delivery runs after the answer: how fast the worker works off the backlog
            // says what the delivery path sustains.
            let watch = Duration::from_secs_f64(args.delivery_watch);
            notes.push(delivery_note(&api, watch).await?);
        }
        if let Some(e) = &outcome.first_error {
            notes.push(format!("{name}: first transport error: {e}"));
        }
        if !outcome.non_2xx.is_empty() {
            let by_status: Vec<String> = outcome
                .non_2xx
                .iter()
                .map(|(status, count)| format!("{status} × {count}"))
                .collect();
            notes.push(format!("{name}: non-2xx answers: {}", by_status.join(", ")));
        }
        let load = match plan.rate {
            None => format!("closed, {} conns", plan.connections),
            Some(rate) => format!("open, {rate:.0}/s over {} conns", plan.connections),
        };
        rows.push(Row {
            name,
            load,
            outcome,
            paced: plan.rate.is_some(),
            cpu,
        });
    }

    if let Some(cpu) = own_cpu_seconds() {
        notes.push(format!("load generator CPU time: {cpu:.1} s"));
    }
    println!();
    println!(
        "Posthorn load benchmark against {}: {:.0} s measured after {:.0} s warm-up per scenario, client on {} thread(s), {} seeded contacts",
        args.url, args.duration, args.warmup, args.client_threads, args.contacts
    );
    if !rows.is_empty() {
        println!();
        print!("{}", table(&rows, args.db_pid.is_some()));
    }
    if !notes.is_empty() {
        println!();
        for note in &notes {
            println!("- {note}");
        }
    }
    Ok(())
}

/// CPU seconds the server, this process and the database use between `warmup` and
/// `warmup + duration` from now: the measured window of a run started at the same time.
async fn cpu_probe(
    server_pid: Option<u32>,
    db_pid: Option<u32>,
    warmup: Duration,
    duration: Duration,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let server = || server_pid.and_then(|pid| cpu_seconds(&format!("/proc/{pid}/stat")));
    let db = || db_pid.and_then(tree_cpu_seconds);
    let begin = tokio::time::Instant::now();
    tokio::time::sleep_until(begin + warmup).await;
    let (server_0, own_0, db_0) = (server(), own_cpu_seconds(), db());
    tokio::time::sleep_until(begin + warmup + duration).await;
    let (server_1, own_1, db_1) = (server(), own_cpu_seconds(), db());
    let delta = |a: Option<f64>, b: Option<f64>| Some(b? - a?);
    (
        delta(server_0, server_1),
        delta(own_0, own_1),
        delta(db_0, db_1),
    )
}

/// CPU time of process `pid` and of its children, living (user + system) and exited
/// (their time is added to the parent's `cutime`/`cstime` when it reaps them): the whole
/// of a PostgreSQL server when `pid` is its postmaster.
fn tree_cpu_seconds(pid: u32) -> Option<f64> {
    let fields = |path: &str| -> Option<(u32, [u64; 4])> {
        let stat = std::fs::read_to_string(path).ok()?;
        let rest = &stat[stat.rfind(')')? + 1..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ppid = f.get(1)?.parse().ok()?;
        let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        Some((ppid, [n(11), n(12), n(13), n(14)]))
    };
    let (_, [utime, stime, cutime, cstime]) = fields(&format!("/proc/{pid}/stat"))?;
    let mut ticks = utime + stime + cutime + cstime;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(child) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some((ppid, [u, s, _, _])) = fields(&format!("/proc/{child}/stat")) {
            if ppid == pid {
                ticks += u + s;
            }
        }
    }
    Some(ticks as f64 / 100.0)
}

/// CPU time (user + system) this process used so far.
fn own_cpu_seconds() -> Option<f64> {
    cpu_seconds("/proc/self/stat")
}

/// CPU time (user + system, all threads) of the process whose `/proc/<pid>/stat` is at
/// `path` (Linux; clock ticks of 1/100 s).
fn cpu_seconds(path: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // Fields after the parenthesised command name start at field 3 (`state`); utime and
    // stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

/// Watches the job queue for `watch` (or until it is empty) and describes its drain rate.
async fn delivery_note(api: &Api, watch: Duration) -> Result<String, BoxError> {
    let begin = tokio::time::Instant::now();
    let first = api.pending_jobs().await?;
    if first == 0 {
        return Ok("after /v1/send the delivery queue was already empty".to_string());
    }
    let mut last = first;
    while begin.elapsed() < watch && last > 0 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        last = api.pending_jobs().await?;
    }
    let secs = begin.elapsed().as_secs_f64();
    let rate = first.saturating_sub(last) as f64 / secs;
    let eta = if last == 0 {
        "empty now".to_string()
    } else if rate > 0.0 {
        format!("about {:.0} s more to empty it", last as f64 / rate)
    } else {
        "no progress".to_string()
    };
    Ok(format!(
        "after /v1/send {first} delivery jobs were pending; the worker completed {rate:.0}/s over the next {secs:.1} s ({last} left, {eta})"
    ))
}

/// The rows as a Markdown table, columns padded for the terminal.
fn table(rows: &[Row], with_db: bool) -> String {
    let ceiling = rows
        .iter()
        .find(|r| r.name.starts_with("GET /health"))
        .map(|r| r.outcome.rate())
        .filter(|r| *r > 0.0);
    let mut header = vec![
        "scenario",
        "load",
        "req/s (2xx)",
        "p50 ms",
        "p99 ms",
        "max ms",
        "non-2xx",
        "errors",
        "vs ceiling",
        "server CPU µs/req",
        "client CPU µs/req",
    ];
    if with_db {
        header.push("db CPU µs/req");
    }
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let o = &r.outcome;
            let mut cells = vec![
                r.name.to_string(),
                r.load.clone(),
                format!("{:.0}", o.rate()),
                ms(o.quantile_ms(0.50)),
                ms(o.quantile_ms(0.99)),
                ms(o.quantile_ms(1.0)),
                o.non_2xx.values().sum::<u64>().to_string(),
                o.errors.to_string(),
                match (ceiling, r.paced) {
                    // An open-loop rate is imposed, not reached: no ratio.
                    (Some(c), false) => format!("{:.1} %", 100.0 * o.rate() / c),
                    _ => "-".to_string(),
                },
                per_request(r.cpu.0, o),
                per_request(r.cpu.1, o),
            ];
            if with_db {
                cells.push(per_request(r.cpu.2, o));
            }
            cells
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::from("|");
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            if i < 2 {
                let _ = write!(out, " {cell}{} |", " ".repeat(pad));
            } else {
                let _ = write!(out, " {}{cell} |", " ".repeat(pad));
            }
        }
        out.push('\n');
        out
    };
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let mut out = line(&header);
    let rule: Vec<String> = widths
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i < 2 {
                "-".repeat(*w)
            } else {
                format!("{}:", "-".repeat(w - 1))
            }
        })
        .collect();
    out.push_str(&line(&rule));
    for row in &cells {
        out.push_str(&line(row));
    }
    out
}

/// CPU microseconds per answered request.
fn per_request(cpu_seconds: Option<f64>, outcome: &Outcome) -> String {
    let answered = outcome.ok + outcome.non_2xx.values().sum::<u64>();
    match cpu_seconds {
        Some(cpu) if answered > 0 => format!("{:.0}", cpu * 1e6 / answered as f64),
        _ => "-".to_string(),
    }
}

fn uri(api: &Api, path: &str) -> Result<Uri, BoxError> {
    Ok(api.url(path).parse::<Uri>()?)
}

fn get(api: &Api, path: &str, auth: Option<HeaderValue>) -> Result<MakeRequest, BoxError> {
    let uri = uri(api, path)?;
    Ok(Arc::new(move |_| {
        let mut request = Request::new(Full::new(Bytes::new()));
        *request.uri_mut() = uri.clone();
        if let Some(auth) = &auth {
            request.headers_mut().insert(AUTHORIZATION, auth.clone());
        }
        request
    }))
}

fn post(uri: Uri, auth: HeaderValue, body: String) -> Request<Full<Bytes>> {
    let mut request = Request::new(Full::new(Bytes::from(body)));
    *request.method_mut() = Method::POST;
    *request.uri_mut() = uri;
    let headers = request.headers_mut();
    headers.insert(AUTHORIZATION, auth);
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    request
}

/// `/v1/track` for 100 000 distinct addresses and 16 event names.
fn track(api: &Api, auth: HeaderValue) -> Result<MakeRequest, BoxError> {
    let uri = uri(api, "/v1/track")?;
    Ok(Arc::new(move |i| {
        let body = format!(
            r#"{{"email":"u{}@bench.io","event":"bench-event-{}","data":{{"seq":{i},"plan":"pro"}}}}"#,
            i % 100_000,
            i % 16
        );
        post(uri.clone(), auth.clone(), body)
    }))
}

/// `/v1/track` for a contact that does not exist yet, every time (the contact is created
/// in the same commit as the event).
fn track_fresh(api: &Api, auth: HeaderValue) -> Result<MakeRequest, BoxError> {
    let uri = uri(api, "/v1/track")?;
    Ok(Arc::new(move |i| {
        let body = format!(
            r#"{{"email":"fresh{i}@bench.io","event":"bench-event-{}","data":{{"seq":{i},"plan":"pro"}}}}"#,
            i % 16
        );
        post(uri.clone(), auth.clone(), body)
    }))
}

/// `/v1/send` of an invoice-sized message to one of 100 000 recipients: a 48 KB HTML body
/// and a 144 KB PDF attachment (192 KB of base64), what a delivery and every later change
/// of the email's state carry along unless the store leaves them alone.
fn send_large(api: &Api, auth: HeaderValue) -> Result<MakeRequest, BoxError> {
    let uri = uri(api, "/v1/send")?;
    let line = "<p>Item, quantity, unit price and amount of the benchmark invoice.</p>";
    let html = line.repeat(48 * 1024 / line.len());
    // Valid base64 (a multiple of four characters) of 144 KB of zero bytes.
    let pdf = "A".repeat(192 * 1024);
    let rest: Arc<str> = format!(
        r#","body":"{html}","attachments":[{{"filename":"invoice.pdf","content":"{pdf}","contentType":"application/pdf"}}]}}"#
    )
    .into();
    Ok(Arc::new(move |i| {
        let body = format!(
            r#"{{"to":"r{}@bench.io","from":"bench@example.com","subject":"Invoice {i}"{rest}"#,
            i % 100_000
        );
        post(uri.clone(), auth.clone(), body)
    }))
}

/// `/v1/send` to one of 100 000 recipients from the verified domain.
fn send(api: &Api, auth: HeaderValue) -> Result<MakeRequest, BoxError> {
    let uri = uri(api, "/v1/send")?;
    Ok(Arc::new(move |i| {
        let body = format!(
            r#"{{"to":"r{}@bench.io","from":"bench@example.com","subject":"Bench {i}","body":"<p>Hello from the benchmark, message {i}.</p>"}}"#,
            i % 100_000
        );
        post(uri.clone(), auth.clone(), body)
    }))
}
