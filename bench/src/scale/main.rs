//! `posthorn-scale`: one workspace with a million contacts, on the memory adapter or on
//! PostgreSQL. Measures how long counting a segment's members takes and how fast a campaign
//! to everybody is expanded into queued emails (without delivering them). See
//! `docs/performance.md`.

mod data;
#[path = "../in_process.rs"]
mod in_process;
mod pg;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use clap::{Parser, ValueEnum};
use futures::stream::{self, StreamExt};
use posthorn_core::app::campaigns::{CreateCampaign, SendCampaign};
use posthorn_core::app::Caller;
use posthorn_core::jobs::{BATCHES_PER_JOB, EXPANSION_BATCH};
use posthorn_core::model::{AudienceType, EmailAddress};
use posthorn_core::ports::{ChangeSet, ClaimedJob, JobPayload, Jobs, Store, Write};
use posthorn_core::segment::{parse_condition, Condition};
use posthorn_core::Engine;
use posthorn_memory::MemoryStore;
use serde_json::{json, Value};

use data::{Generator, Shape};
use pg::{Bind, Predicate};

/// Errors of any step; the benchmark stops on the first one.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Scale benchmark: counts and campaign expansion over a million contacts.
#[derive(Debug, Parser)]
#[command(name = "posthorn-scale", version)]
struct Args {
    /// Which adapter holds the data.
    #[arg(long, value_enum, default_value = "memory")]
    store: StoreKind,
    /// Contacts in the workspace.
    #[arg(long, default_value_t = 1_000_000)]
    contacts: usize,
    /// Writes per commit when loading through the `Store` port.
    #[arg(long, default_value_t = 10_000)]
    commit_size: usize,
    /// Share of contacts that have events (1 to 3 each).
    #[arg(long, default_value_t = 0.25)]
    event_share: f64,
    /// Seed of the data generator (the same seed makes the same data on both adapters).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// PostgreSQL server to create a fresh database on (its own database is only used to
    /// run `CREATE DATABASE`).
    #[arg(long, env = "POSTHORN_TEST_DATABASE_URL")]
    database_url: Option<String>,
    /// How to load PostgreSQL: through the `Store` port (`commit`), or with `COPY`.
    #[arg(long, value_enum, default_value = "copy")]
    pg_load: PgLoad,
    /// Keep the PostgreSQL database (its name is printed) instead of dropping it.
    #[arg(long)]
    keep_database: bool,
    /// PostgreSQL: print `EXPLAIN (ANALYZE, BUFFERS)` of the measured queries.
    #[arg(long)]
    explain: bool,
    /// Timed repetitions of each count after the first (cold) one.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Jobs per claim in the expansion loop (1 takes just the next batch, which is queued
    /// ahead of the deliveries).
    #[arg(long, default_value_t = 1)]
    claim: usize,
    /// What becomes of the delivery jobs the expansion loop claims: `hold` keeps them
    /// leased (for two hours, never settled), `park` puts them back 30 days ahead with
    /// `Jobs::retry` (one call per job).
    #[arg(long, value_enum, default_value = "hold")]
    skipped: Skipped,
    /// Concurrent `retry` calls with `--skipped park`.
    #[arg(long, default_value_t = 8)]
    park_concurrency: usize,
    /// Only load and count.
    #[arg(long)]
    skip_expansion: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StoreKind {
    Memory,
    Postgres,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Skipped {
    /// Leave them leased.
    Hold,
    /// `retry` them 30 days ahead.
    Park,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PgLoad {
    /// `Store::commit` with `--commit-size` writes per change set.
    Port,
    /// `COPY ... FROM STDIN` straight into `contacts` and `events`.
    Copy,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("posthorn-scale: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("posthorn-scale: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), BoxError> {
    if args.contacts == 0 || args.commit_size == 0 || args.claim == 0 {
        return Err("--contacts, --commit-size and --claim must be at least 1".into());
    }
    match args.store {
        StoreKind::Memory => {
            let store = Arc::new(MemoryStore::new());
            bench(&args, store.clone(), store, None).await
        }
        StoreKind::Postgres => {
            let url = args
                .database_url
                .clone()
                .ok_or("--store postgres needs --database-url or POSTHORN_TEST_DATABASE_URL")?;
            let (store, name) = posthorn_postgres::testing::fresh_database(&url).await?;
            eprintln!("fresh database {name}");
            let store = Arc::new(store);
            let result = bench(&args, store.clone(), store.clone(), Some(&store)).await;
            store.close().await;
            if args.keep_database {
                println!("- database kept: {name}");
            } else if let Err(e) = posthorn_postgres::testing::drop_database(&url, &name).await {
                eprintln!("could not drop {name}: {e}");
            }
            result
        }
    }
}

/// Resident memory of this process (`VmRSS`, `VmHWM`) in MiB.
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Records resident memory at named points.
struct MemoryLog {
    start: f64,
    lines: Vec<String>,
}

impl MemoryLog {
    fn new() -> Self {
        Self {
            start: memory_mib().0,
            lines: Vec::new(),
        }
    }

    fn note(&mut self, point: &str) {
        let (rss, hwm) = memory_mib();
        let line = format!(
            "{point}: VmRSS {rss:.0} MiB (+{:.0} MiB since start), VmHWM {hwm:.0} MiB",
            rss - self.start
        );
        eprintln!("memory {line}");
        self.lines.push(line);
    }
}

async fn bench(
    args: &Args,
    store: Arc<dyn Store>,
    jobs: Arc<dyn Jobs>,
    pg: Option<&posthorn_postgres::PgStore>,
) -> Result<(), BoxError> {
    let mut memory = MemoryLog::new();
    let engine = in_process::engine(store, jobs);
    let (ws, caller) = in_process::workspace(&engine, "scale").await?;
    let shape = Shape {
        contacts: args.contacts,
        event_share: args.event_share,
        seed: args.seed,
    };
    let store_name = match args.store {
        StoreKind::Memory => "memory",
        StoreKind::Postgres => "PostgreSQL",
    };
    let mut report = vec![format!(
        "Posthorn scale benchmark on the {store_name} adapter: {} contacts in one workspace (seed {})",
        args.contacts, args.seed
    )];

    // Load.
    let begin = Instant::now();
    let generator = Generator::new(shape, ws.id.as_str(), Utc::now());
    let loaded = match (args.store, args.pg_load, pg) {
        (StoreKind::Postgres, PgLoad::Copy, Some(pg)) => pg::copy_load(pg, generator).await?,
        _ => port_load(&engine, generator, args.commit_size).await?,
    };
    let load_secs = begin.elapsed().as_secs_f64();
    let how = match (args.store, args.pg_load) {
        (StoreKind::Postgres, PgLoad::Copy) => "COPY into contacts and events".to_string(),
        _ => format!("Store::commit, {} writes per change set", args.commit_size),
    };
    report.push(format!(
        "loaded {} contacts ({} subscribed) and {} events in {load_secs:.1} s with {how} ({:.0} records/s)",
        loaded.contacts,
        loaded.subscribed,
        loaded.events,
        (loaded.contacts + loaded.events) as f64 / load_secs
    ));
    if let Some(pg) = pg {
        let begin = Instant::now();
        pg::analyze(pg).await?;
        report.push(format!(
            "ANALYZE took {:.1} s",
            begin.elapsed().as_secs_f64()
        ));
    }
    memory.note("after loading");

    // Counts.
    let cases = count_cases()?;
    let mut rows = Vec::new();
    for case in &cases {
        rows.push(time_count(&engine, ws.id.as_str(), case, args.repeats).await?);
    }
    memory.note("after counting");
    report.push(String::new());
    report.push(count_table(&rows));

    if let (Some(pg), true) = (pg, args.explain) {
        for case in &cases {
            println!("\nEXPLAIN ANALYZE of count_matching: {}\n", case.label);
            println!(
                "{}",
                pg::explain_count(pg, ws.id.as_str(), &case.predicate, case.audience_only).await?
            );
        }
    }

    if !args.skip_expansion {
        let expansion = expand(args, &engine, &caller).await?;
        memory.note("after expansion");
        report.push(String::new());
        report.extend(expansion.lines());
        if let (Some(pg), true) = (pg, args.explain) {
            println!("\nEXPLAIN ANALYZE of an expansion batch (contacts_matching, 500 rows, halfway through the audience)\n");
            println!("{}", pg::explain_expansion(pg, ws.id.as_str()).await?);
            println!("\nEXPLAIN ANALYZE of a worker's claim (16 jobs) with every delivery job of the campaign due\n");
            println!("{}", pg::explain_claim_backlog(pg).await?);
            println!("\nWhere an expansion batch's time goes (500 recipients, the campaign's own code, a copy of the campaign)\n");
            println!(
                "{}",
                pg::batch_cost(pg, &engine, ws.id.as_str(), &expansion.campaign_id).await?
            );
        }
    }
    if let Some(pg) = pg {
        report.push(String::new());
        report.push(format!("- table sizes: {}", pg::sizes(pg).await?));
    }
    report.push(String::new());
    for line in &memory.lines {
        report.push(format!("- memory {line}"));
    }
    println!();
    for line in report {
        println!("{line}");
    }
    Ok(())
}

/// What was loaded.
#[derive(Debug, Default)]
pub struct Loaded {
    pub contacts: usize,
    pub subscribed: usize,
    pub events: usize,
}

/// Loads through `Store::commit`, `commit_size` writes (contacts and their events) per
/// change set.
async fn port_load(
    engine: &Engine,
    generator: Generator,
    commit_size: usize,
) -> Result<Loaded, BoxError> {
    let mut loaded = Loaded::default();
    let mut changes = ChangeSet::new();
    let mut commits = 0usize;
    let begin = Instant::now();
    for generated in generator {
        loaded.contacts += 1;
        loaded.subscribed += usize::from(generated.contact.subscribed);
        loaded.events += generated.events.len();
        changes.push(Write::InsertContact(generated.contact));
        for event in generated.events {
            changes.push(Write::AppendEvent(event));
        }
        if changes.writes.len() >= commit_size {
            engine.store.commit(std::mem::take(&mut changes)).await?;
            commits += 1;
            if commits.is_multiple_of(20) {
                eprintln!(
                    "loaded {} contacts in {:.1} s",
                    loaded.contacts,
                    begin.elapsed().as_secs_f64()
                );
            }
        }
    }
    if !changes.is_empty() {
        engine.store.commit(changes).await?;
    }
    Ok(loaded)
}

/// One measured count: the condition, and the predicate `matching.rs` renders for it (for
/// `--explain`; parameters from `$2`).
struct CountCase {
    label: &'static str,
    condition: Condition,
    audience_only: bool,
    predicate: Predicate,
}

/// The conditions counted.
fn count_cases() -> Result<Vec<CountCase>, BoxError> {
    let parse = |v: Value| {
        parse_condition(&v, "condition")
            .map_err(|errors| -> BoxError { format!("bench condition refused: {errors:?}").into() })
    };
    let filter = |field: &str, operator: &str, value: Value| json!({"field": field, "operator": operator, "value": value});
    let pro = filter("data.plan", "equals", json!("pro"));
    let purchased_30d = json!({"field": "event.purchase", "operator": "triggeredWithin",
                               "value": 30, "unit": "days"});
    let text = |s: &str| Bind::Text(s.to_string());
    // `matching.rs` rounds window cutoffs up to the microsecond; to the millisecond here.
    let cutoff = Utc::now() - chrono::Duration::days(30);
    let number = |op: &str, first: usize| {
        format!(
            "(CASE WHEN jsonb_typeof((c.data -> ${first})) = 'number' THEN ((c.data -> ${}))::float8 {op} ${} ELSE FALSE END)",
            first + 1,
            first + 2
        )
    };
    let occurred = |first: usize| {
        format!(
            "EXISTS (SELECT 1 FROM events e WHERE e.workspace_id = c.workspace_id AND e.contact_id = c.id AND e.name = ${first} AND e.created_at >= ${})",
            first + 1
        )
    };
    Ok(vec![
        CountCase {
            label: "data.plan equals \"pro\"",
            condition: parse(json!({"groups": [{"filters": [pro.clone()]}]}))?,
            audience_only: false,
            predicate: Predicate {
                sql: "(c.data @> $2)".into(),
                binds: vec![Bind::Json(json!({"plan": "pro"}))],
            },
        },
        CountCase {
            label: "data.country equals \"DE\"",
            condition: parse(
                json!({"groups": [{"filters": [filter("data.country", "equals", json!("DE"))]}]}),
            )?,
            audience_only: false,
            predicate: Predicate {
                sql: "(c.data @> $2)".into(),
                binds: vec![Bind::Json(json!({"country": "DE"}))],
            },
        },
        CountCase {
            label: "data.age greaterThan 60 (a number: no index)",
            condition: parse(
                json!({"groups": [{"filters": [filter("data.age", "greaterThan", json!(60))]}]}),
            )?,
            audience_only: false,
            predicate: Predicate {
                sql: number(">", 2),
                binds: vec![text("age"), text("age"), Bind::Float(60.0)],
            },
        },
        CountCase {
            label: "event.purchase triggeredWithin 30 days",
            condition: parse(json!({"groups": [{"filters": [purchased_30d.clone()]}]}))?,
            audience_only: false,
            predicate: Predicate {
                sql: occurred(2),
                binds: vec![text("purchase"), Bind::Time(cutoff)],
            },
        },
        CountCase {
            label: "plan = pro AND age >= 30 AND purchase within 30 days",
            condition: parse(json!({"logic": "AND", "groups": [
                {"filters": [pro, filter("data.age", "greaterThanOrEqual", json!(30))]},
                {"filters": [purchased_30d]},
            ]}))?,
            audience_only: false,
            predicate: Predicate {
                sql: format!(
                    "(((c.data @> $2) AND {}) AND {})",
                    number(">=", 3),
                    occurred(6)
                ),
                binds: vec![
                    Bind::Json(json!({"plan": "pro"})),
                    text("age"),
                    text("age"),
                    Bind::Float(30.0),
                    text("purchase"),
                    Bind::Time(cutoff),
                ],
            },
        },
        CountCase {
            label: "everybody, audience only (what sending to ALL counts)",
            condition: Condition::default(),
            audience_only: true,
            predicate: Predicate {
                sql: "TRUE".into(),
                binds: Vec::new(),
            },
        },
    ])
}

struct CountRow {
    label: String,
    matched: u64,
    first_ms: f64,
    median_ms: f64,
}

async fn time_count(
    engine: &Engine,
    workspace_id: &str,
    case: &CountCase,
    repeats: usize,
) -> Result<CountRow, BoxError> {
    let label = case.label;
    let mut times = Vec::new();
    let mut matched = 0;
    for _ in 0..=repeats {
        let begin = Instant::now();
        matched = engine
            .store
            .count_matching(
                &workspace_id.into(),
                &case.condition,
                case.audience_only,
                Utc::now(),
            )
            .await?;
        times.push(begin.elapsed().as_secs_f64() * 1000.0);
    }
    let first_ms = times[0];
    let mut rest = times[1..].to_vec();
    rest.sort_by(f64::total_cmp);
    let median_ms = rest.get(rest.len() / 2).copied().unwrap_or(first_ms);
    eprintln!("count {label}: {matched} in {first_ms:.1} ms (then median {median_ms:.1} ms)");
    Ok(CountRow {
        label: label.to_string(),
        matched,
        first_ms,
        median_ms,
    })
}

fn count_table(rows: &[CountRow]) -> String {
    let mut out = String::from(
        "| count_matching | contacts matched | first run ms | median of the next runs ms |\n|---|---:|---:|---:|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} |\n",
            r.label, r.matched, r.first_ms, r.median_ms
        ));
    }
    out
}

/// What the expansion loop measured.
#[derive(Default)]
struct Expansion {
    recipients: u64,
    audience: u64,
    wall: Duration,
    send_call: Duration,
    claim: Duration,
    expand: Duration,
    park: Duration,
    finish: Duration,
    batches: Vec<Duration>,
    parked: u64,
    claims: u64,
    claim_size: usize,
    held: bool,
    queued: u64,
    campaign_id: String,
}

impl Expansion {
    fn lines(&self) -> Vec<String> {
        let secs = self.wall.as_secs_f64();
        let expand = self.expand.as_secs_f64();
        let mut sorted = self.batches.clone();
        sorted.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let quantile = |q: f64| {
            sorted
                .get(((sorted.len() as f64 * q).ceil() as usize).saturating_sub(1))
                .copied()
                .map_or(0.0, ms)
        };
        let mean = |part: &[Duration]| {
            if part.is_empty() {
                0.0
            } else {
                part.iter().map(|d| ms(*d)).sum::<f64>() / part.len() as f64
            }
        };
        let n = self.batches.len();
        let head = &self.batches[..n.min(10)];
        let tail = &self.batches[n.saturating_sub(10)..];
        vec![
            format!(
                "Campaign to ALL ({} subscribed, active contacts): {} recipients expanded into queued emails and delivery jobs",
                self.audience, self.recipients
            ),
            String::new(),
            "| measure | value |".to_string(),
            "|---|---:|".to_string(),
            format!("| wall time, `send_campaign` to the last batch | {secs:.1} s |"),
            format!(
                "| recipients per second, wall | {:.0} |",
                self.recipients as f64 / secs
            ),
            format!(
                "| time in `ExpandCampaign` jobs ({n} jobs, {} batches of {EXPANSION_BATCH}) | {expand:.1} s |",
                self.recipients.div_ceil(EXPANSION_BATCH as u64)
            ),
            format!(
                "| recipients per second, expansion jobs only | {:.0} |",
                self.recipients as f64 / expand
            ),
            format!(
                "| job of up to {BATCHES_PER_JOB} batches: p50 / p99 / max | {:.1} / {:.1} / {:.1} ms |",
                quantile(0.5),
                quantile(0.99),
                quantile(1.0)
            ),
            format!(
                "| job: mean of the first 10 / last 10 | {:.1} / {:.1} ms |",
                mean(head),
                mean(tail)
            ),
            format!(
                "| `send_campaign` (counts the audience, queues the first batch) | {:.0} ms |",
                ms(self.send_call)
            ),
            format!(
                "| `Jobs::claim` ({} calls of up to {} jobs) | {:.1} s |",
                self.claims,
                self.claim_size,
                self.claim.as_secs_f64()
            ),
            if self.held {
                format!(
                    "| delivery jobs claimed and held (leased, not run) | {} |",
                    self.parked
                )
            } else {
                format!(
                    "| parking the {} delivery jobs (`retry` 30 days ahead; the benchmark's own cost) | {:.1} s |",
                    self.parked,
                    self.park.as_secs_f64()
                )
            },
            format!(
                "| `FinishCampaign` (counts the campaign's emails by status) | {:.0} ms |",
                ms(self.finish)
            ),
            format!("| emails QUEUED afterwards | {} |", self.queued),
        ]
    }
}

/// Sends a campaign to everybody and runs only its own jobs (start, expand) until the
/// expansion is done. Expansion jobs come first in the queue; delivery jobs claimed along
/// with them (`--claim` above 1) are held or parked, so nothing is delivered.
async fn expand(args: &Args, engine: &Engine, caller: &Caller) -> Result<Expansion, BoxError> {
    let mut out = Expansion {
        claim_size: args.claim,
        held: args.skipped == Skipped::Hold,
        ..Expansion::default()
    };
    let view = engine
        .create_campaign(
            caller,
            CreateCampaign {
                name: "Scale newsletter".into(),
                description: None,
                subject: "News for {{name ?? \"you\"}}".into(),
                body: CAMPAIGN_BODY.into(),
                from: EmailAddress::parse("news@example.com")?,
                from_name: Some("Posthorn Scale".into()),
                reply_to: None,
                audience_type: AudienceType::All,
                segment_id: None,
                audience_condition: None,
            },
        )
        .await?;
    let id = view.campaign.id.clone();
    out.campaign_id = id.to_string();
    let ws = caller.workspace_id().clone();
    out.audience = engine
        .store
        .count_matching(&ws, &Condition::default(), true, Utc::now())
        .await?;
    // Held delivery jobs stay leased for the whole run; expansion jobs are completed.
    let lease = Duration::from_secs(7200);
    let begin = Instant::now();
    engine
        .send_campaign(caller, &id, SendCampaign::default())
        .await?;
    out.send_call = begin.elapsed();
    let mut last_report = Instant::now();
    'outer: loop {
        let t = Instant::now();
        let claimed = engine
            .jobs
            .claim(engine.clock.now(), lease, args.claim)
            .await?;
        out.claim += t.elapsed();
        out.claims += 1;
        if claimed.is_empty() {
            let campaign = engine
                .store
                .campaign(&ws, &id)
                .await?
                .ok_or("the campaign vanished")?;
            if campaign.expansion_done {
                break;
            }
            // A batch that conflicted is retried 100 ms later.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        }
        let mut park: Vec<ClaimedJob> = Vec::new();
        let mut finished = false;
        for job in claimed {
            match &job.payload {
                JobPayload::DeliverEmail { .. } => park.push(job),
                JobPayload::ExpandCampaign { .. } => {
                    let t = Instant::now();
                    engine.run_job(&job).await?;
                    let took = t.elapsed();
                    out.expand += took;
                    out.batches.push(took);
                    // The finish job is queued behind the deliveries: time its count here.
                    let campaign = engine.store.campaign(&ws, &id).await?;
                    if campaign.is_some_and(|c| c.expansion_done) {
                        let t = Instant::now();
                        engine.store.campaign_email_counts(&ws, &id).await?;
                        out.finish += t.elapsed();
                        finished = true;
                    }
                }
                JobPayload::FinishCampaign { .. } => {
                    let t = Instant::now();
                    engine.run_job(&job).await?;
                    out.finish += t.elapsed();
                    finished = true;
                }
                _ => {
                    engine.run_job(&job).await?;
                }
            }
        }
        out.parked += park.len() as u64;
        if args.skipped == Skipped::Park {
            let t = Instant::now();
            let far = engine.clock.now() + chrono::Duration::days(30);
            let results: Vec<_> = stream::iter(park.iter())
                .map(|job| {
                    engine
                        .jobs
                        .retry(job, far, false, "parked by posthorn-scale")
                })
                .buffer_unordered(args.park_concurrency.max(1))
                .collect()
                .await;
            for r in results {
                r?;
            }
            out.park += t.elapsed();
        }
        if last_report.elapsed() > Duration::from_secs(5) {
            last_report = Instant::now();
            eprintln!(
                "ran {} expansion jobs (up to {} recipients) in {:.1} s",
                out.batches.len(),
                out.batches.len() * EXPANSION_BATCH * BATCHES_PER_JOB,
                begin.elapsed().as_secs_f64()
            );
        }
        if finished {
            break 'outer;
        }
    }
    out.wall = begin.elapsed();
    let campaign = engine
        .store
        .campaign(&ws, &id)
        .await?
        .ok_or("the campaign vanished")?;
    out.recipients = campaign.total_recipients;
    out.queued = engine.store.campaign_email_counts(&ws, &id).await?.queued;
    if !campaign.expansion_done || out.recipients != out.audience {
        return Err(format!(
            "expansion incomplete: done = {}, {} recipients of {}",
            campaign.expansion_done, out.recipients, out.audience
        )
        .into());
    }
    Ok(out)
}

/// A short newsletter with a personalised greeting and two data fields.
const CAMPAIGN_BODY: &str = r#"<html><body>
<h1>Hello {{name ?? "there"}},</h1>
<p>Here is what changed in Posthorn this month. Your <strong>{{data.plan}}</strong> plan now
includes scheduled campaigns, segment membership events and faster contact search.</p>
<ul>
  <li>Scheduled campaigns: pick a time, we send it then.</li>
  <li>Segments can announce when a contact enters or leaves them.</li>
  <li>Search by any part of an address.</li>
</ul>
<p>Readers in {{data.country}} can join the next live walk-through on Thursday.</p>
<p><a href="https://example.com/news?c={{contact.id}}">Read the full notes</a></p>
<p>You receive this because you subscribed with {{contact.email}}.</p>
</body></html>"#;
