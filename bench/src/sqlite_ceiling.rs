//! `posthorn-sqlite-ceiling`: what SQLite itself sustains on this machine, the physical
//! limit of the SQLite figures of `posthorn-bench`. One connection in WAL mode on a new file
//! with the adapter's schema (adapters/sqlite/migrations), committing in a closed loop:
//!
//! - `one`: one `INSERT` into `events` per transaction (the least a request that is durable
//!   before its answer can cost: one WAL append and, with `synchronous=FULL`, one sync);
//! - `track`: the writes of a `/v1/track` for a new contact in one transaction (insert the
//!   contact, insert the event).
//!
//! See `docs/performance.md`.

use posthorn_core::ports::{Clock, SystemClock};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, SqliteConnection};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The adapter's migrations, so that the rows, indexes and triggers are those the server
/// writes.
static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../adapters/sqlite/migrations");

#[derive(Debug, Parser)]
#[command(name = "posthorn-sqlite-ceiling", version)]
struct Args {
    /// Measured seconds per shape.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// `synchronous` of the connection.
    #[arg(long, value_enum, default_value = "full")]
    synchronous: Synchronous,
    /// Shapes to run, in this order.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "one,track")]
    shapes: Vec<Shape>,
    /// Directory of the temporary database (the disk under test); the system's by default.
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Synchronous {
    Full,
    Normal,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Shape {
    One,
    Track,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    match run(Args::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("posthorn-sqlite-ceiling: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), BoxError> {
    let dir = match &args.dir {
        Some(dir) => tempfile::tempdir_in(dir)?,
        None => tempfile::tempdir()?,
    };
    let synchronous = match args.synchronous {
        Synchronous::Full => SqliteSynchronous::Full,
        Synchronous::Normal => SqliteSynchronous::Normal,
    };
    let mut conn = SqliteConnectOptions::new()
        .filename(dir.path().join("ceiling.db"))
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(synchronous)
        .connect()
        .await?;
    MIGRATIONS.run(&mut conn).await?;
    println!(
        "SQLite ceiling in {} (WAL, synchronous={:?}), {:.0} s per shape, one connection",
        dir.path().display(),
        args.synchronous,
        args.duration
    );
    let window = Duration::from_secs_f64(args.duration);
    for shape in &args.shapes {
        let (commits, elapsed) = measure(&mut conn, *shape, window).await?;
        println!(
            "- {:<6} {:>8} commits in {:.1} s: {:>8.0} commits/s",
            format!("{shape:?}").to_lowercase(),
            commits,
            elapsed.as_secs_f64(),
            commits as f64 / elapsed.as_secs_f64()
        );
    }
    conn.close().await?;
    Ok(())
}

async fn measure(
    conn: &mut SqliteConnection,
    shape: Shape,
    window: Duration,
) -> Result<(u64, Duration), BoxError> {
    let workspace = SystemClock.new_uuid().to_string();
    let started = Instant::now();
    let mut commits = 0u64;
    while started.elapsed() < window {
        let now = chrono::Utc::now().timestamp_micros();
        let contact = SystemClock.new_uuid().to_string();
        let data = format!(r#"{{"seq":{commits},"plan":"pro"}}"#);
        match shape {
            Shape::One => {
                insert_event(&mut *conn, &workspace, &contact, &data, now).await?;
            }
            Shape::Track => {
                let mut tx = conn.begin().await?;
                sqlx::query(
                    "INSERT INTO contacts (workspace_id, id, email, subscribed, data, status, \
                     expires_at, created_at, updated_at, version) \
                     VALUES (?, ?, ?, 1, '{}', 'ACTIVE', NULL, ?, ?, 1)",
                )
                .bind(&workspace)
                .bind(&contact)
                .bind(format!("fresh{commits}@bench.io"))
                .bind(now)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                insert_event(&mut tx, &workspace, &contact, &data, now).await?;
                tx.commit().await?;
            }
        }
        commits += 1;
    }
    Ok((commits, started.elapsed()))
}

async fn insert_event(
    conn: &mut SqliteConnection,
    workspace: &str,
    contact: &str,
    data: &str,
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO events (workspace_id, id, name, data, contact_id, email_id, created_at) \
         VALUES (?, ?, 'bench-event', ?, ?, NULL, ?)",
    )
    .bind(workspace)
    .bind(SystemClock.new_uuid().to_string())
    .bind(data)
    .bind(contact)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}
