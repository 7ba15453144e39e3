//! The soak: mixed traffic at a fixed rate for a long time (track, send with delivery,
//! contact reads, and a campaign to every seeded contact at the start), sampled every
//! window: the server's resident memory, the window's p99 and its failures. Written as CSV
//! for `bench/plot_soak.py`; the verdict lines say whether memory stayed flat and the p99
//! steady.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use hyper::header::HeaderValue;
use hyper::Method;
use serde_json::json;

use crate::api::Api;
use crate::load::{self, HttpClient, MakeRequest, Plan};
use crate::BoxError;

/// How the soak runs.
pub struct SoakPlan {
    /// Total length.
    pub total: Duration,
    /// Length of one sampled window.
    pub window: Duration,
    /// Requests per second, all kinds together (open loop).
    pub rate: f64,
    /// Connections the requests are spread over.
    pub connections: usize,
    /// The server's process id, for its resident memory.
    pub server_pid: Option<u32>,
    /// Where the samples go (CSV).
    pub csv: std::path::PathBuf,
}

/// One window's figures.
struct Sample {
    at_secs: f64,
    rss_mib: Option<f64>,
    rate: f64,
    p99_ms: Option<f64>,
    failures: u64,
    pending_jobs: u64,
    /// The machine's 1-minute load average at the end of the window.
    load1: Option<f64>,
}

/// Runs the soak and returns the summary lines for the report.
pub async fn run(
    api: &Api,
    client: &HttpClient,
    secret_key: &str,
    plan: SoakPlan,
) -> Result<Vec<String>, BoxError> {
    start_campaign(api, secret_key).await?;
    let make = mixed(api, secret_key)?;
    let began = tokio::time::Instant::now();
    let mut samples = Vec::new();
    let mut csv = String::from("seconds,rss_mib,req_per_s,p99_ms,failures,pending_jobs,load1\n");
    let mut offset = 0u64;
    while began.elapsed() < plan.total {
        let window = Plan {
            connections: plan.connections,
            warmup: Duration::ZERO,
            duration: plan.window,
            rate: Some(plan.rate),
        };
        // Each window continues the request sequence, so addresses keep moving on.
        let shifted: MakeRequest = {
            let make = make.clone();
            let base = offset;
            Arc::new(move |i| make(base + i))
        };
        let outcome = load::run(client, shifted, window).await;
        offset += outcome.ok + outcome.non_2xx.values().sum::<u64>() + outcome.errors;
        let sample = Sample {
            at_secs: began.elapsed().as_secs_f64(),
            rss_mib: plan.server_pid.and_then(rss_mib),
            rate: outcome.rate(),
            p99_ms: outcome.quantile_ms(0.99),
            failures: outcome.non_2xx.values().sum::<u64>() + outcome.errors,
            pending_jobs: api.pending_jobs().await.unwrap_or(0),
            load1: load_average(),
        };
        let cell = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.2}"));
        let _ = writeln!(
            csv,
            "{:.1},{},{:.1},{},{},{},{}",
            sample.at_secs,
            cell(sample.rss_mib),
            sample.rate,
            cell(sample.p99_ms),
            sample.failures,
            sample.pending_jobs,
            cell(sample.load1)
        );
        eprintln!(
            "soak {:>6.0} s: {:>7.1} req/s, p99 {} ms, RSS {} MiB, failures {}, jobs pending {}, load {}",
            sample.at_secs,
            sample.rate,
            cell(sample.p99_ms),
            cell(sample.rss_mib),
            sample.failures,
            sample.pending_jobs,
            cell(sample.load1)
        );
        samples.push(sample);
    }
    std::fs::write(&plan.csv, csv)?;
    Ok(verdict(&samples, &plan))
}

/// Creates a campaign to every contact and sends it, so deliveries run under the load.
async fn start_campaign(api: &Api, secret_key: &str) -> Result<(), BoxError> {
    let body = json!({
        "name": "Soak", "subject": "Soak {{contact.email}}", "body": "<p>Soak test</p>",
        "from": "news@example.com", "audienceType": "ALL",
    });
    let created = api
        .expect(
            hyper::StatusCode::CREATED,
            Method::POST,
            "/campaigns",
            Some(secret_key),
            Some(&body),
        )
        .await?;
    let id = created["data"]["id"]
        .as_str()
        .ok_or("the campaign answer has no id")?
        .to_string();
    api.expect(
        hyper::StatusCode::OK,
        Method::POST,
        &format!("/campaigns/{id}/send"),
        Some(secret_key),
        Some(&json!({})),
    )
    .await?;
    Ok(())
}

/// Out of every 20 requests: 12 `/v1/track` (half of them a new contact), 4 `/v1/send`,
/// 4 `GET /contacts`.
fn mixed(api: &Api, secret_key: &str) -> Result<MakeRequest, BoxError> {
    let auth = HeaderValue::from_str(&format!("Bearer {secret_key}"))?;
    let track = crate::track(api, auth.clone())?;
    let fresh = crate::track_fresh(api, auth.clone())?;
    let send = crate::send(api, auth.clone())?;
    let contacts = crate::get(api, "/contacts?limit=20", Some(auth))?;
    Ok(Arc::new(move |i| match i % 20 {
        0..=5 => track(i),
        6..=11 => fresh(i),
        12..=15 => send(i),
        _ => contacts(i),
    }))
}

/// Resident memory of `pid` in MiB (Linux `/proc/<pid>/status`, `VmRSS`).
fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The machine's 1-minute load average (Linux `/proc/loadavg`): other work on the machine
/// moves the p99, so the plot shows it beside.
fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Flat memory after warm-up (the first fifth), no failures, a steady p99.
fn verdict(samples: &[Sample], plan: &SoakPlan) -> Vec<String> {
    let mut lines = vec![format!(
        "soak: {} windows of {:.0} s at {:.0} req/s over {} connections; samples in {}",
        samples.len(),
        plan.window.as_secs_f64(),
        plan.rate,
        plan.connections,
        plan.csv.display()
    )];
    let warm = samples.len() / 5;
    let steady = &samples[warm.min(samples.len())..];
    let rss: Vec<f64> = steady.iter().filter_map(|s| s.rss_mib).collect();
    if let (Some(first), Some(max), Some(min)) = (
        rss.first(),
        rss.iter().copied().reduce(f64::max),
        rss.iter().copied().reduce(f64::min),
    ) {
        let spread = 100.0 * (max - min) / first;
        lines.push(format!(
            "RSS after warm-up: {min:.1}–{max:.1} MiB (spread {spread:.1} % of {first:.1}; aim ≤ 10 %: {})",
            if spread <= 10.0 { "met" } else { "MISSED" }
        ));
    }
    let failures: u64 = samples.iter().map(|s| s.failures).sum();
    lines.push(format!(
        "failures (non-2xx and transport errors): {failures} ({})",
        if failures == 0 {
            "aim met"
        } else {
            "aim MISSED"
        }
    ));
    let p99: Vec<f64> = steady.iter().filter_map(|s| s.p99_ms).collect();
    if !p99.is_empty() {
        let mut sorted = p99.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let worst = sorted[sorted.len() - 1];
        lines.push(format!(
            "window p99 after warm-up: median {median:.1} ms, worst {worst:.1} ms ({:.1}× the median)",
            worst / median.max(f64::EPSILON)
        ));
    }
    let behind = samples.iter().filter(|s| s.rate < 0.95 * plan.rate).count();
    lines.push(format!(
        "windows below 95 % of the offered rate: {behind} of {}",
        samples.len()
    ));
    lines
}
