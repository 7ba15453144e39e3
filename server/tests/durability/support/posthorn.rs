//! The real `posthorn` binary as a child process, and the fresh database it runs on.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write as _};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::Method;
use posthorn_postgres::testing::{drop_database, fresh_database};
use posthorn_postgres::PgStore;
use serde_json::{json, Value};

use super::http::Api;

/// Bearer token of the operator API of every process started here.
pub const ADMIN_TOKEN: &str = "durability-admin-token";
/// How long a process may take to answer `GET /health` after it was spawned.
const STARTUP: Duration = Duration::from_secs(30);
/// Lines of a process's output kept for failure messages.
const LOG_LINES: usize = 4000;

/// Writes to the real stderr, past the test harness's capture: for notes that must be seen.
pub fn note(message: &str) {
    let _ = writeln!(std::io::stderr(), "durability: {message}");
}

/// Whether `CI` is true: then a missing service fails the test instead of skipping it.
pub fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// `POSTHORN_TEST_REDIS_URL`; `None` (after a loud note) when it is unset, unless `CI` is
/// true: then the test fails, as [`TestDb::create`] does for the database.
pub fn test_redis_url(test: &str) -> Option<String> {
    match std::env::var("POSTHORN_TEST_REDIS_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                !on_ci(),
                "{test}: POSTHORN_TEST_REDIS_URL is unset but CI=true; start the services \
                 (eval \"$(bash scripts/services.sh start)\") or run scripts/test-all.sh"
            );
            note(&format!(
                "\n!!!!!!!!\n!!! {test} SKIPPED: POSTHORN_TEST_REDIS_URL is unset.\n!!! \
                 Start Redis with `eval \"$(bash scripts/services.sh start)\"` to run the \
                 shared-limit durability tests.\n!!!!!!!!"
            ));
            None
        }
    }
}

/// A fresh, migrated database for one test.
pub struct TestDb {
    admin_url: String,
    name: String,
    /// URL of the new database, for `POSTHORN_STORE`.
    pub url: String,
    store: PgStore,
}

impl TestDb {
    /// `None` (after a loud note) when `POSTHORN_TEST_DATABASE_URL` is unset, unless `CI`
    /// is true: then the test fails, so that CI never passes without running it.
    pub async fn create(test: &str) -> Option<TestDb> {
        let admin_url = match std::env::var("POSTHORN_TEST_DATABASE_URL") {
            Ok(url) if !url.trim().is_empty() => url,
            _ => {
                assert!(
                    !on_ci(),
                    "{test}: POSTHORN_TEST_DATABASE_URL is unset but CI=true; start the \
                     services (eval \"$(bash scripts/services.sh start)\") or run \
                     scripts/test-all.sh"
                );
                note(&format!(
                    "\n!!!!!!!!\n!!! {test} SKIPPED: POSTHORN_TEST_DATABASE_URL is unset.\n!!! \
                     Start PostgreSQL with `eval \"$(bash scripts/services.sh start)\"` to run \
                     the durability tests.\n!!!!!!!!"
                ));
                return None;
            }
        };
        let (store, name) = fresh_database(&admin_url)
            .await
            .unwrap_or_else(|e| panic!("{test}: creating a fresh test database failed: {e}"));
        let url = database_url(&admin_url, &name);
        Some(TestDb {
            admin_url,
            name,
            url,
            store,
        })
    }

    /// Rows of a query returning two text columns, on this database.
    pub async fn text_pairs(&self, sql: &str) -> Vec<(String, String)> {
        sqlx::query_as::<_, (String, String)>(sqlx::AssertSqlSafe(sql.to_string()))
            .fetch_all(self.store.pool())
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Jobs currently leased (`running`), with the email id of delivery jobs.
    pub async fn running_jobs(&self) -> Vec<(String, Option<String>)> {
        sqlx::query_as::<_, (String, Option<String>)>(
            "SELECT id, payload->>'email_id' FROM jobs WHERE state = 'running' ORDER BY id",
        )
        .fetch_all(self.store.pool())
        .await
        .expect("reading the running jobs from the test database")
    }

    /// Waits (at most 5 s) until no other session runs a statement on this database: after a
    /// kill, PostgreSQL may still finish (and commit) what the dead process had sent.
    pub async fn wait_until_quiet(&self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let (active,): (i64,) = sqlx::query_as(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid() \
                   AND backend_type = 'client backend' \
                   AND (state = 'active' OR state LIKE 'idle in transaction%')",
            )
            .fetch_one(self.store.pool())
            .await
            .expect("reading pg_stat_activity");
            if active == 0 {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{active} sessions still busy on the test database 5 s after the kill"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Drops the database (after the test passed; a failed test leaves it for inspection).
    pub async fn drop(self) {
        self.store.close().await;
        if let Err(e) = drop_database(&self.admin_url, &self.name).await {
            note(&format!("could not drop test database {}: {e}", self.name));
        }
    }
}

/// `admin_url` with its database replaced by `name` (query kept).
fn database_url(admin_url: &str, name: &str) -> String {
    let (base, query) = match admin_url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (admin_url, None),
    };
    let authority = base.find("://").map_or(0, |i| i + 3);
    let path = base[authority..]
        .find('/')
        .map_or(base.len(), |i| authority + i);
    let mut url = format!("{}/{name}", &base[..path]);
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

/// A free TCP port on 127.0.0.1 (free when asked; the OS does not hand it out again soon).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind 127.0.0.1:0 to find a free port")
        .local_addr()
        .expect("local address of the probe listener")
        .port()
}

/// A running `posthorn` process (killed when dropped).
///
/// `std::process` rather than `tokio::process`: the workspace's tokio lacks the `process`
/// feature. Waiting polls `try_wait`, so nothing blocks the runtime.
pub struct Posthorn {
    pub name: String,
    pub api: Api,
    child: Child,
    log: Arc<Mutex<VecDeque<String>>>,
}

impl Posthorn {
    /// Spawns `posthorn` (role all) on `store_url` (the default store when empty), delivering to `smtp://127.0.0.1:smtp_port`,
    /// and waits until `GET /health` answers 200.
    pub async fn start(name: &str, store_url: &str, smtp_port: u16) -> Posthorn {
        Posthorn::start_with(name, store_url, smtp_port, &[]).await
    }

    /// [`Posthorn::start`] with `extra_env` (`(name, value)`) set after the fixed settings,
    /// which it may override.
    pub async fn start_with(
        name: &str,
        store_url: &str,
        smtp_port: u16,
        extra_env: &[(&str, &str)],
    ) -> Posthorn {
        let port = free_port();
        let mut command = Command::new(env!("CARGO_BIN_EXE_posthorn"));
        // Only the settings below: nothing inherited from the developer's environment.
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("POSTHORN_") {
                command.env_remove(key);
            }
        }
        // An empty `store_url` leaves POSTHORN_STORE unset: the default store.
        if !store_url.is_empty() {
            command.env("POSTHORN_STORE", store_url);
        }
        command
            .env("POSTHORN_ADMIN_TOKEN", ADMIN_TOKEN)
            .env("POSTHORN_LISTEN", format!("127.0.0.1:{port}"))
            .env(
                "POSTHORN_TRANSPORT",
                format!("smtp://127.0.0.1:{smtp_port}"),
            )
            .env("POSTHORN_ROLE", "all")
            // A short lease: a killed process's jobs run again within seconds.
            .env("POSTHORN_JOB_LEASE_SECS", "5")
            .env("RUST_LOG", "warn")
            .env("NO_COLOR", "1")
            .envs(extra_env.iter().copied())
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: spawning the posthorn binary failed: {e}"));
        let log = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stdout) = child.stdout.take() {
            capture(stdout, Arc::clone(&log));
        }
        if let Some(stderr) = child.stderr.take() {
            capture(stderr, Arc::clone(&log));
        }
        let mut process = Posthorn {
            name: name.to_string(),
            api: Api::new(port),
            child,
            log,
        };
        process.wait_healthy().await;
        process
    }

    async fn wait_healthy(&mut self) {
        let deadline = tokio::time::Instant::now() + STARTUP;
        loop {
            if let Some(status) = self.exit_status() {
                // Let the output readers catch up before showing the log.
                tokio::time::sleep(Duration::from_millis(100)).await;
                panic!(
                    "{}: posthorn exited during startup with {status}\n{}",
                    self.name,
                    self.logs()
                );
            }
            let last = match self.api.call(Method::GET, "/health", None, None).await {
                Ok(answer) if answer.status == 200 => return,
                Ok(answer) => format!("{} {}", answer.status, answer.body),
                Err(e) => e,
            };
            assert!(
                tokio::time::Instant::now() < deadline,
                "{}: GET /health did not answer 200 within {STARTUP:?} (last: {last})\n{}",
                self.name,
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The job counts of `GET /health`: (queued, running, dead).
    pub async fn job_counts(&self) -> Result<(u64, u64, u64), String> {
        let answer = self.api.call(Method::GET, "/health", None, None).await?;
        let jobs = &answer.body["jobs"];
        match (
            jobs["queued"].as_u64(),
            jobs["running"].as_u64(),
            jobs["dead"].as_u64(),
        ) {
            (Some(q), Some(r), Some(d)) if answer.status == 200 => Ok((q, r, d)),
            _ => Err(format!("GET /health: {} {}", answer.status, answer.body)),
        }
    }

    /// The exit status once the process has exited (reaped here, so its pid is not reused
    /// under our feet).
    fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child
            .try_wait()
            .unwrap_or_else(|e| panic!("{}: checking whether posthorn exited: {e}", self.name))
    }

    /// Polls for the exit for at most `within`.
    async fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(status) = self.exit_status() {
                return Some(status);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// SIGKILL (what `Child::kill` sends on unix), and wait for the process to be gone.
    pub async fn sigkill(&mut self) {
        assert!(
            self.exit_status().is_none(),
            "{}: exited before the kill\n{}",
            self.name,
            self.logs()
        );
        self.child
            .kill()
            .unwrap_or_else(|e| panic!("{}: sending SIGKILL failed: {e}", self.name));
        let status = self
            .wait_exit(Duration::from_secs(10))
            .await
            .unwrap_or_else(|| panic!("{}: still alive 10 s after SIGKILL", self.name));
        assert!(
            !status.success(),
            "{}: a killed process exited 0",
            self.name
        );
    }

    /// SIGTERM; the exit status, or `None` when the process is still alive after `within`.
    pub async fn sigterm(&mut self, within: Duration) -> Option<ExitStatus> {
        assert!(
            self.exit_status().is_none(),
            "{}: exited before SIGTERM\n{}",
            self.name,
            self.logs()
        );
        let pid = self.child.id();
        let sent = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("running `kill -TERM`");
        assert!(sent.success(), "{}: `kill -TERM {pid}` failed", self.name);
        self.wait_exit(within).await
    }

    /// Asserts that [`Posthorn::sigterm`] saw the process exit 0 within `within`.
    pub fn assert_clean_exit(&self, status: Option<ExitStatus>, within: Duration) {
        let Some(status) = status else {
            panic!(
                "{}: did not exit within {within:?} of SIGTERM\n{}",
                self.name,
                self.logs()
            );
        };
        assert!(
            status.success(),
            "{}: exited with {status} after SIGTERM\n{}",
            self.name,
            self.logs()
        );
    }

    /// The process id of the running binary.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines the process wrote (stdout and stderr), for failure messages.
    pub fn logs(&self) -> String {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        let lines: Vec<&str> = log.iter().map(String::as_str).collect();
        format!(
            "--- last output of {} ({} lines) ---\n{}\n--- end of output ---",
            self.name,
            lines.len(),
            lines.join("\n")
        )
    }

    /// Creates a workspace with huge limits and the verified domain `example.com`.
    pub async fn create_workspace(&self, name: &str) -> Workspace {
        self.create_workspace_limited(name, 1_000_000).await
    }

    /// [`Posthorn::create_workspace`] with an API budget of `rate_limit_per_minute`
    /// requests per minute (`rateLimitPerMinute`).
    pub async fn create_workspace_limited(
        &self,
        name: &str,
        rate_limit_per_minute: u32,
    ) -> Workspace {
        let created = self
            .api
            .expect(
                201,
                Method::POST,
                "/admin/workspaces",
                Some(ADMIN_TOKEN),
                Some(&json!({
                    "name": name,
                    "rateLimitPerMinute": rate_limit_per_minute,
                    "sendRatePerSecond": 100_000,
                })),
            )
            .await;
        let field = |v: &Value, what: &str| -> String {
            v.as_str()
                .unwrap_or_else(|| panic!("POST /admin/workspaces: no {what} in {created}"))
                .to_string()
        };
        let id = field(&created["workspace"]["id"], "workspace.id");
        let secret_key = field(&created["keySet"]["secretKey"], "keySet.secretKey");
        self.api
            .expect(
                201,
                Method::POST,
                &format!("/admin/workspaces/{id}/domains"),
                Some(ADMIN_TOKEN),
                Some(&json!({"domain": "example.com", "verified": true})),
            )
            .await;
        Workspace { id, secret_key }
    }
}

/// A workspace made for a test.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub id: String,
    pub secret_key: String,
}

impl Drop for Posthorn {
    /// Like `kill_on_drop`: a failing test never leaves a server behind.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Keeps the last [`LOG_LINES`] lines of `stream` (a thread per stream; it ends with the
/// process).
fn capture(stream: impl Read + Send + 'static, log: Arc<Mutex<VecDeque<String>>>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
            if log.len() == LOG_LINES {
                log.pop_front();
            }
            log.push_back(line);
        }
    });
}

#[test]
fn database_urls_name_the_new_database() {
    assert_eq!(
        database_url(
            "postgres://postgres@127.0.0.1:55432/postgres",
            "posthorn_test_1"
        ),
        "postgres://postgres@127.0.0.1:55432/posthorn_test_1"
    );
    assert_eq!(
        database_url("postgresql://u:p@h/db?sslmode=disable", "t"),
        "postgresql://u:p@h/t?sslmode=disable"
    );
    assert_eq!(
        database_url("postgres://h:5432", "t"),
        "postgres://h:5432/t"
    );
}
