//! The load generator: N keep-alive connections, each running requests back to back (closed
//! loop) or on a fixed schedule (open loop), with per-request latencies in microseconds.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::Request;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio::time::Instant;

/// The HTTP client every scenario shares.
pub type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// Builds the `seq`-th request of a scenario. Cheap and allocation-light: it runs on the
/// client's hot path.
pub type MakeRequest = Arc<dyn Fn(u64) -> Request<Full<Bytes>> + Send + Sync>;

/// A keep-alive client with room for `connections` idle connections to the server.
pub fn client(connections: usize) -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_keepalive(Some(Duration::from_secs(60)));
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(connections)
        .pool_idle_timeout(Duration::from_secs(90))
        .build(connector)
}

/// How a run issues its requests.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Concurrent connections (one task each).
    pub connections: usize,
    /// Time run but not recorded, before the measured window.
    pub warmup: Duration,
    /// Length of the measured window.
    pub duration: Duration,
    /// `None`: closed loop (next request as soon as the previous answer is read).
    /// `Some(r)`: open loop at `r` requests per second in total, spread evenly over the
    /// connections.
    pub rate: Option<f64>,
}

/// What one run measured (only requests started inside the measured window count).
#[derive(Debug, Default)]
pub struct Outcome {
    /// 2xx answers.
    pub ok: u64,
    /// Other answers, by status.
    pub non_2xx: BTreeMap<u16, u64>,
    /// Transport failures (connect, reset, time-out).
    pub errors: u64,
    /// First transport failure, for the report.
    pub first_error: Option<String>,
    /// From the start of the window to the last answer of a request started in it.
    pub elapsed: Duration,
    /// Latency of every 2xx answer in microseconds, sorted. Open loop: measured from the
    /// request's scheduled time when it went out late because its connection was still busy
    /// (no coordinated omission), from the actual send time otherwise.
    pub latencies_us: Vec<u32>,
}

impl Outcome {
    /// 2xx answers per second over the window.
    pub fn rate(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.ok as f64 / secs
        } else {
            0.0
        }
    }

    /// The `q` quantile (0..=1) of the 2xx latencies, in milliseconds.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        let n = self.latencies_us.len();
        if n == 0 {
            return None;
        }
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
        Some(f64::from(self.latencies_us[rank - 1]) / 1000.0)
    }

    fn merge(&mut self, part: TaskOutcome) {
        self.ok += part.ok;
        for (status, count) in part.non_2xx {
            *self.non_2xx.entry(status).or_default() += count;
        }
        self.errors += part.errors;
        if self.first_error.is_none() {
            self.first_error = part.first_error;
        }
        self.latencies_us.extend(part.latencies_us);
    }
}

#[derive(Default)]
struct TaskOutcome {
    ok: u64,
    non_2xx: BTreeMap<u16, u64>,
    errors: u64,
    first_error: Option<String>,
    last_done: Option<Instant>,
    latencies_us: Vec<u32>,
}

/// Runs `make` under `plan` and gathers what the tasks measured.
pub async fn run(client: &HttpClient, make: MakeRequest, plan: Plan) -> Outcome {
    let connections = plan.connections.max(1);
    let begin = Instant::now();
    let window_start = begin + plan.warmup;
    let window_end = window_start + plan.duration;
    let tasks: Vec<_> = (0..connections)
        .map(|index| {
            let schedule = plan.rate.map(|rate| {
                // Task `index` owns every `connections`-th slot of the global schedule.
                let period = Duration::from_secs_f64(connections as f64 / rate);
                let first = begin + Duration::from_secs_f64(index as f64 / rate);
                (first, period)
            });
            let task = Task {
                client: client.clone(),
                make: make.clone(),
                index: index as u64,
                stride: connections as u64,
                window_start,
                window_end,
                schedule,
            };
            tokio::spawn(task.run())
        })
        .collect();
    let mut outcome = Outcome::default();
    let mut last_done = window_start;
    for task in tasks {
        match task.await {
            Ok(part) => {
                if let Some(done) = part.last_done {
                    last_done = last_done.max(done);
                }
                outcome.merge(part);
            }
            Err(e) => {
                outcome.errors += 1;
                outcome
                    .first_error
                    .get_or_insert_with(|| format!("load task failed: {e}"));
            }
        }
    }
    outcome.elapsed = last_done.max(window_end) - window_start;
    outcome.latencies_us.sort_unstable();
    outcome
}

struct Task {
    client: HttpClient,
    make: MakeRequest,
    index: u64,
    stride: u64,
    window_start: Instant,
    window_end: Instant,
    schedule: Option<(Instant, Duration)>,
}

impl Task {
    async fn run(self) -> TaskOutcome {
        let mut out = TaskOutcome::default();
        for k in 0u64.. {
            let start = match self.schedule {
                None => Instant::now(),
                Some((first, period)) => {
                    let slot = first + period.mul_f64(k as f64);
                    let now = Instant::now();
                    if now < slot {
                        if slot >= self.window_end {
                            break;
                        }
                        tokio::time::sleep_until(slot).await;
                        // On time: timer slack is the client's, not the server's.
                        Instant::now()
                    } else {
                        // Late because this connection was busy: the wait counts.
                        slot
                    }
                }
            };
            if start >= self.window_end {
                break;
            }
            let recorded = start >= self.window_start;
            let request = (self.make)(self.index + k * self.stride);
            match self.client.request(request).await {
                Ok(response) => {
                    let status = response.status();
                    // Read the whole body so the connection goes back to the pool.
                    let body = response.into_body().collect().await;
                    let done = Instant::now();
                    if !recorded {
                        continue;
                    }
                    out.last_done = Some(done);
                    match body {
                        Err(e) => note_error(&mut out, format!("reading body: {e}")),
                        Ok(_) if status.is_success() => {
                            let micros = (done - start).as_micros();
                            out.latencies_us
                                .push(u32::try_from(micros).unwrap_or(u32::MAX));
                            out.ok += 1;
                        }
                        Ok(_) => *out.non_2xx.entry(status.as_u16()).or_default() += 1,
                    }
                }
                Err(e) => {
                    if recorded {
                        out.last_done = Some(Instant::now());
                        note_error(&mut out, format!("{e:?}"));
                    }
                    // A refused or reset connection fails fast; do not spin on it.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
        out
    }
}

fn note_error(out: &mut TaskOutcome, message: String) {
    out.errors += 1;
    out.first_error.get_or_insert(message);
}
