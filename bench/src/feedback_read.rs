//! `posthorn-feedback-read`: what recording an open, a click or a bounce reads of an
//! invoice-sized email (a 48 KB HTML body and a 144 KB attachment), on the memory, SQLite
//! and PostgreSQL adapters. Side by side in one run: the whole record (`Store::email`, what
//! every piece of feedback read before) and the record without its content
//! (`Store::email_without_content`, what it reads now), then `Engine::record_open` itself.
//!
//!   cargo run --release -p posthorn-bench --bin posthorn-feedback-read -- --store sqlite
//!   cargo run --release -p posthorn-bench --bin posthorn-feedback-read -- --store postgres \
//!       --database-url "$POSTHORN_TEST_DATABASE_URL"
//!
//! SQLite runs on a new file in a temporary directory with its default durability;
//! PostgreSQL on a new database of the given server, dropped at the end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use posthorn_core::app::send::{Recipient, SendEmail};
use posthorn_core::model::{EmailAddress, EmailId, WorkspaceId};
use posthorn_core::ports::{Attachment, Jobs, Store};
use posthorn_core::Engine;
use posthorn_memory::MemoryStore;

#[path = "in_process.rs"]
mod in_process;

use in_process::BoxError;

/// Reads of an invoice-sized email, whole and without content.
#[derive(Debug, Parser)]
#[command(name = "posthorn-feedback-read", version)]
struct Args {
    /// Which adapter holds the emails.
    #[arg(long, value_enum, default_value = "memory")]
    store: StoreKind,
    /// Emails sent before the reads (each is read once per round).
    #[arg(long, default_value_t = 200)]
    emails: usize,
    /// Rounds over all the emails, per kind of read.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// PostgreSQL server to create the database on (`--store postgres`).
    #[arg(long, env = "POSTHORN_TEST_DATABASE_URL")]
    database_url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StoreKind {
    Memory,
    Sqlite,
    Postgres,
}

#[tokio::main]
async fn main() {
    if let Err(e) = run(Args::parse()).await {
        eprintln!("posthorn-feedback-read: {e}");
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<(), BoxError> {
    if args.emails == 0 || args.rounds == 0 {
        return Err("--emails and --rounds must be at least 1".into());
    }
    match args.store {
        StoreKind::Memory => {
            let store = Arc::new(MemoryStore::new());
            bench(&args, "memory", store.clone(), store).await
        }
        StoreKind::Sqlite => {
            let dir = tempfile::tempdir()?;
            let path = dir.path().join("posthorn.db");
            let store = posthorn_sqlite::SqliteStore::open(&path, Default::default()).await?;
            let store = Arc::new(store);
            bench(&args, "SQLite", store.clone(), store).await
        }
        StoreKind::Postgres => {
            let url = args
                .database_url
                .clone()
                .ok_or("--store postgres needs --database-url or POSTHORN_TEST_DATABASE_URL")?;
            let (store, name) = posthorn_postgres::testing::fresh_database(&url).await?;
            let store = Arc::new(store);
            let result = bench(&args, "PostgreSQL", store.clone(), store.clone()).await;
            store.close().await;
            if let Err(e) = posthorn_postgres::testing::drop_database(&url, &name).await {
                eprintln!("could not drop {name}: {e}");
            }
            result
        }
    }
}

async fn bench(
    args: &Args,
    store_name: &str,
    store: Arc<dyn Store>,
    jobs: Arc<dyn Jobs>,
) -> Result<(), BoxError> {
    let engine = in_process::engine(store.clone(), jobs);
    let (ws, caller) = in_process::workspace(&engine, "feedback").await?;

    let line = "<p>Item, quantity, unit price and amount of the benchmark invoice.</p>";
    let html = line.repeat(48 * 1024 / line.len());
    let mut ids = Vec::with_capacity(args.emails);
    for i in 0..args.emails {
        let to = EmailAddress::parse(&format!("reader{i}@example.org"))?;
        let accepted = engine
            .send(
                &caller,
                SendEmail {
                    to: vec![Recipient::new(to)],
                    from: Some((EmailAddress::parse("billing@example.com")?, None)),
                    subject: Some("Your invoice".into()),
                    body: Some(html.clone()),
                    attachments: vec![Attachment {
                        filename: "invoice.pdf".into(),
                        content_type: "application/pdf".into(),
                        content: vec![0; 144 * 1024],
                        content_id: None,
                        inline: false,
                    }],
                    ..SendEmail::default()
                },
            )
            .await?;
        ids.extend(accepted.emails.into_iter().map(|e| e.email_id));
    }

    let whole = time_reads(args.rounds, &ids, |id| {
        let (store, ws) = (store.clone(), ws.id.clone());
        async move { store.email(&ws, &id).await.map(|e| e.is_some()) }
    })
    .await?;
    let light = time_reads(args.rounds, &ids, |id| {
        let (store, ws) = (store.clone(), ws.id.clone());
        async move {
            store
                .email_without_content(&ws, &id)
                .await
                .map(|e| e.is_some())
        }
    })
    .await?;
    // How a bounce report finds its email (by id alone, in any workspace).
    let by_id = time_reads(args.rounds, &ids, |id| {
        let store = store.clone();
        async move { store.email_by_id(&id).await.map(|e| e.is_some()) }
    })
    .await?;
    let opens = time_opens(&engine, &ws.id, &ids, args.rounds).await?;

    println!(
        "Reads of an invoice-sized email (48 KB HTML, 144 KB attachment) on the {store_name} \
         adapter, {} emails x {} rounds, one at a time:",
        ids.len(),
        args.rounds
    );
    println!("| read                                   | µs each |");
    println!("| -------------------------------------- | ------: |");
    println!(
        "| Store::email (whole record, before)    | {:>7.1} |",
        whole
    );
    println!(
        "| Store::email_without_content (now)     | {:>7.1} |",
        light
    );
    println!(
        "| Store::email_by_id (a bounce's lookup) | {:>7.1} |",
        by_id
    );
    println!(
        "| Engine::record_open (read + commit)    | {:>7.1} |",
        opens
    );
    Ok(())
}

/// Mean time of one read, over `rounds` passes over `ids`.
async fn time_reads<F, Fut>(rounds: usize, ids: &[EmailId], read: F) -> Result<f64, BoxError>
where
    F: Fn(EmailId) -> Fut,
    Fut: std::future::Future<Output = Result<bool, posthorn_core::ports::StoreError>>,
{
    let mut spent = Duration::ZERO;
    for _ in 0..rounds {
        let begin = Instant::now();
        for id in ids {
            if !read(id.clone()).await? {
                return Err(format!("email {id} not found").into());
            }
        }
        spent += begin.elapsed();
    }
    Ok(spent.as_secs_f64() * 1e6 / (rounds * ids.len()) as f64)
}

/// Mean time of one `record_open` (every round's opens are more than a second apart from
/// the last round's, so each is counted and committed).
async fn time_opens(
    engine: &Engine,
    ws: &WorkspaceId,
    ids: &[EmailId],
    rounds: usize,
) -> Result<f64, BoxError> {
    let mut spent = Duration::ZERO;
    let start = chrono::Utc::now();
    for round in 0..rounds {
        let at = start + chrono::Duration::seconds(2 * round as i64);
        let begin = Instant::now();
        for id in ids {
            engine
                .record_open(ws, id, at)
                .await?
                .ok_or_else(|| format!("email {id} not found"))?;
        }
        spent += begin.elapsed();
    }
    Ok(spent.as_secs_f64() * 1e6 / (rounds * ids.len()) as f64)
}
