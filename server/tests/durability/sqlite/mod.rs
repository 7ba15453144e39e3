//! The real binary on SQLite, the default store: data and first-run keys survive restarts,
//! one server per file, no split roles, and the read-only tools (backup, export) beside a
//! running server. Needs no service, apart from PostgreSQL for the export.

mod export;
mod sigkill;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use hyper::Method;
use serde_json::json;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};

use crate::support::posthorn::{free_port, Posthorn};

/// A data directory of its own for one test (removed at the end).
pub struct DataDir {
    dir: tempfile::TempDir,
}

impl DataDir {
    pub fn new() -> DataDir {
        DataDir {
            dir: tempfile::Builder::new()
                .prefix("posthorn-durability-")
                .tempdir()
                .expect("a temporary directory"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The database of the default store `sqlite:` with this data directory.
    pub fn db(&self) -> PathBuf {
        self.path().join("posthorn.db")
    }

    /// `POSTHORN_STORE` for [`DataDir::db`].
    pub fn store(&self) -> String {
        format!("sqlite:{}", self.db().display())
    }
}

/// `(name, value)` of the rows of `sql` (two text columns) on the SQLite file `db`: for a
/// file no server holds any more.
pub async fn sqlite_rows(db: &Path, sql: &str) -> Vec<(String, Option<String>)> {
    let mut conn = SqliteConnectOptions::new()
        .filename(db)
        .connect()
        .await
        .unwrap_or_else(|e| panic!("opening {}: {e}", db.display()));
    let rows = sqlx::query_as::<_, (String, Option<String>)>(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_all(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{sql} on {}: {e}", db.display()));
    let _ = conn.close().await;
    rows
}

/// The first-run keys a process printed: (public, secret).
pub fn first_run_keys(process: &Posthorn) -> Option<(String, String)> {
    let logs = process.logs();
    let find = |label: &str| {
        logs.lines()
            .find_map(|l| l.trim().strip_prefix(label).map(|k| k.trim().to_string()))
    };
    Some((find("public key:")?, find("secret key:")?))
}

/// Runs `posthorn ARGS` to its end (at most `within`) with only `env` among the `POSTHORN_*`
/// settings; its exit status and output (stdout then stderr).
pub async fn run_to_exit(
    args: &[&str],
    env: &[(&str, &str)],
    within: Duration,
) -> (ExitStatus, String) {
    let out = tempfile::tempdir().expect("a temporary directory");
    let stdout = out.path().join("stdout");
    let stderr = out.path().join("stderr");
    let mut command = Command::new(env!("CARGO_BIN_EXE_posthorn"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("POSTHORN_") {
            command.env_remove(key);
        }
    }
    let mut child = command
        .args(args)
        .env("POSTHORN_LISTEN", format!("127.0.0.1:{}", free_port()))
        .env("POSTHORN_TRANSPORT", "file:./outbox")
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .current_dir(out.path())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).expect("stdout file"))
        .stderr(std::fs::File::create(&stderr).expect("stderr file"))
        .spawn()
        .expect("spawning posthorn");
    let deadline = tokio::time::Instant::now() + within;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if tokio::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let output = std::fs::read_to_string(&stdout).unwrap_or_default()
                + &std::fs::read_to_string(&stderr).unwrap_or_default();
            panic!("`posthorn {args:?}` was still running after {within:?}:\n{output}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let output = std::fs::read_to_string(&stdout).unwrap_or_default()
        + &std::fs::read_to_string(&stderr).unwrap_or_default();
    (status, output)
}

/// Creates `n` contacts `prefix<i>@example.org` with the secret key `sk`.
async fn create_contacts(process: &Posthorn, sk: &str, prefix: &str, n: usize) {
    for i in 0..n {
        process
            .api
            .expect(
                201,
                Method::POST,
                "/contacts",
                Some(sk),
                Some(&json!({"email": format!("{prefix}{i}@example.org"), "data": {"i": i}})),
            )
            .await;
    }
}

/// The `total` of `GET /contacts` with `sk`.
async fn contact_total(process: &Posthorn, sk: &str) -> u64 {
    let page = process
        .api
        .expect(200, Method::GET, "/contacts?limit=1", Some(sk), None)
        .await;
    page["total"]
        .as_u64()
        .unwrap_or_else(|| panic!("GET /contacts: no `total` in {page}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_default_store_keeps_data_and_first_run_keys_across_restarts() {
    let data = DataDir::new();
    let data_dir = data.path().display().to_string();
    // No POSTHORN_STORE at all: the default, `sqlite:` in POSTHORN_DATA_DIR.
    let env = [("POSTHORN_DATA_DIR", data_dir.as_str())];
    let mut first = Posthorn::start_with("posthorn #1", "", 1, &env).await;
    let (pk, sk) = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Some(keys) = first_run_keys(&first) {
                return keys;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no first-run keys printed\n{}", first.logs()));
    assert!(
        data.db().is_file(),
        "the default store did not create {}\n{}",
        data.db().display(),
        first.logs()
    );
    create_contacts(&first, &sk, "keep", 3).await;
    let template = first
        .api
        .expect(
            201,
            Method::POST,
            "/templates",
            Some(&sk),
            Some(
                &json!({"name": "Welcome", "subject": "Hi", "body": "<p>Hi</p>",
                         "type": "TRANSACTIONAL"}),
            ),
        )
        .await;
    let template_id = template["data"]["id"]
        .as_str()
        .or_else(|| template["id"].as_str())
        .unwrap_or_else(|| panic!("POST /templates: no id in {template}"))
        .to_string();
    first
        .api
        .expect(
            200,
            Method::POST,
            "/v1/track",
            Some(&pk),
            Some(&json!({"email": "keep0@example.org", "event": "kept"})),
        )
        .await;
    let status = first
        .sigterm(Duration::from_secs(10))
        .await
        .unwrap_or_else(|| panic!("still running 10 s after SIGTERM\n{}", first.logs()));
    assert!(status.success(), "exit {status}\n{}", first.logs());

    let second = Posthorn::start_with("posthorn #2", "", 1, &env).await;
    // Both keys of the first run still authenticate, and nothing was created again.
    assert_eq!(contact_total(&second, &sk).await, 3, "{}", second.logs());
    second
        .api
        .expect(
            200,
            Method::GET,
            &format!("/templates/{template_id}"),
            Some(&sk),
            None,
        )
        .await;
    let events = second
        .api
        .expect(200, Method::GET, "/events?eventName=kept", Some(&sk), None)
        .await;
    assert_eq!(
        events["events"].as_array().map(Vec::len),
        Some(1),
        "the tracked event is gone: {events}"
    );
    second
        .api
        .expect(
            200,
            Method::POST,
            "/v1/track",
            Some(&pk),
            Some(&json!({"email": "keep1@example.org", "event": "kept"})),
        )
        .await;
    assert!(
        !second.logs().contains("First run"),
        "the restart created a new workspace\n{}",
        second.logs()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_second_server_on_the_same_file_is_refused() {
    let data = DataDir::new();
    let store = data.store();
    let first = Posthorn::start("posthorn #1", &store, 1).await;
    let ws = first.create_workspace("locked").await;

    let (status, output) =
        run_to_exit(&[], &[("POSTHORN_STORE", &store)], Duration::from_secs(30)).await;
    assert!(
        !status.success(),
        "the second server ran: {status}\n{output}"
    );
    assert!(
        output.contains("another Posthorn server is using the SQLite database")
            && output.contains(&data.db().display().to_string()),
        "the refusal does not say why: {output}"
    );
    // The first server did not notice.
    create_contacts(&first, &ws.secret_key, "still", 2).await;
    assert_eq!(contact_total(&first, &ws.secret_key).await, 2);
    first
        .api
        .expect(200, Method::GET, "/health", None, None)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_refuses_split_roles() {
    let data = DataDir::new();
    let store = data.store();
    for role in ["api", "worker"] {
        let (status, output) = run_to_exit(
            &[],
            &[("POSTHORN_STORE", &store), ("POSTHORN_ROLE", role)],
            Duration::from_secs(30),
        )
        .await;
        assert!(
            !status.success(),
            "POSTHORN_ROLE={role} ran on SQLite\n{output}"
        );
        assert!(
            output.contains(&format!("POSTHORN_ROLE={role}"))
                && output.contains("SQLite serves one server process"),
            "the refusal of POSTHORN_ROLE={role} does not say why: {output}"
        );
    }
    assert!(
        !data.db().exists(),
        "a refused role still created the database"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_backup_while_serving_is_a_working_copy() {
    let data = DataDir::new();
    let store = data.store();
    let first = Posthorn::start("posthorn #1", &store, 1).await;
    let ws = first.create_workspace("backup").await;
    create_contacts(&first, &ws.secret_key, "saved", 5).await;

    let copy = data.path().join("copies/backup.db");
    let copy_arg = copy.display().to_string();
    let (status, output) = run_to_exit(
        &["backup", &copy_arg],
        &[("POSTHORN_STORE", &store)],
        Duration::from_secs(30),
    )
    .await;
    assert!(status.success(), "backup failed: {status}\n{output}");
    assert!(copy.is_file(), "no copy at {copy_arg}: {output}");
    // A backup never overwrites.
    let (status, output) = run_to_exit(
        &["backup", &copy_arg],
        &[("POSTHORN_STORE", &store)],
        Duration::from_secs(30),
    )
    .await;
    assert!(
        !status.success() && output.contains("exists already"),
        "{status}\n{output}"
    );

    // The server kept serving; a server on the copy has the same data and keys.
    create_contacts(&first, &ws.secret_key, "later", 1).await;
    let restored = Posthorn::start("posthorn on the copy", &format!("sqlite:{copy_arg}"), 1).await;
    assert_eq!(contact_total(&restored, &ws.secret_key).await, 5);
    assert_eq!(contact_total(&first, &ws.secret_key).await, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_warns_that_it_is_not_durable() {
    let process = Posthorn::start("posthorn on memory", "memory", 1).await;
    let said = crate::support::wait_until(Duration::from_secs(5), || {
        process.logs().contains("NOT DURABLE")
    })
    .await;
    assert!(
        said,
        "no warning about the memory store\n{}",
        process.logs()
    );
}
