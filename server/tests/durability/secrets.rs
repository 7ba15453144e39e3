//! Credentials in settings never reach the output: not in `--help`, not in the logs of a
//! server that runs (at debug level), not in the errors of one whose store or Redis cannot
//! be reached.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use hyper::Method;
use serde_json::json;

use crate::support::posthorn::{free_port, note, Posthorn, TestDb, ADMIN_TOKEN};
use crate::support::sink::Sink;

const STORE_PASSWORD: &str = "storePw-7f3a91";
const REDIS_PASSWORD: &str = "redisPw-c01d42";
const SMTP_PASSWORD: &str = "smtpPw-5e88b0";

/// Every secret of these tests, with what it is for messages.
const SECRETS: [(&str, &str); 4] = [
    ("store password", STORE_PASSWORD),
    ("Redis password", REDIS_PASSWORD),
    ("SMTP password", SMTP_PASSWORD),
    ("admin token", ADMIN_TOKEN),
];

fn assert_no_secret(what: &str, output: &str) {
    for (name, secret) in SECRETS {
        assert!(
            !output.contains(secret),
            "{what}: the {name} appears in the output:\n{output}"
        );
    }
}

/// `postgres://postgres:<password>@host:port/db`: the test database's URL with a password
/// (the test server trusts loopback, so the password is carried but not checked).
fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL with a scheme");
    let rest = rest.split_once('@').map_or(rest, |(_, host)| host);
    format!("{scheme}://postgres:{password}@{rest}")
}

/// Runs the binary to its end (at most 60 s) with only `env` among the `POSTHORN_*`
/// settings; returns its exit success and everything it printed.
fn run_to_end(args: &[&str], env: &[(&str, String)]) -> (bool, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_posthorn"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("POSTHORN_") {
            command.env_remove(key);
        }
    }
    let mut child = command
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("RUST_LOG", "debug")
        .env("NO_COLOR", "1")
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning posthorn");
    let readers = [
        child.stdout.take().map(drain),
        child.stderr.take().map(drain),
    ];
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("polling posthorn") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("posthorn {args:?} did not exit within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = readers
        .into_iter()
        .flatten()
        .map(|r| r.join().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    (status.success(), output)
}

fn drain(mut stream: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stream.read_to_string(&mut text);
        text
    })
}

#[test]
fn help_hides_the_values_of_secret_settings() {
    let env = [
        (
            "POSTHORN_STORE",
            format!("postgres://app:{STORE_PASSWORD}@db.invalid:5432/posthorn"),
        ),
        (
            "POSTHORN_REDIS_URL",
            format!("redis://:{REDIS_PASSWORD}@cache.invalid:6379/"),
        ),
        (
            "POSTHORN_TRANSPORT",
            format!("smtp://mailer:{SMTP_PASSWORD}@smtp.invalid:587"),
        ),
        ("POSTHORN_ADMIN_TOKEN", ADMIN_TOKEN.to_string()),
    ];
    let (ok, output) = run_to_end(&["--help"], &env);
    assert!(ok, "--help failed:\n{output}");
    assert!(
        output.contains("POSTHORN_STORE"),
        "help lists the settings:\n{output}"
    );
    assert_no_secret("posthorn --help", &output);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_store_and_redis_fail_without_printing_passwords() {
    let Some(db) = TestDb::create("unreachable_store_and_redis_fail_without_passwords").await
    else {
        return;
    };
    let nobody = free_port();
    let transport = (
        "POSTHORN_TRANSPORT",
        format!("smtp://mailer:{SMTP_PASSWORD}@127.0.0.1:{nobody}"),
    );
    let admin = ("POSTHORN_ADMIN_TOKEN", ADMIN_TOKEN.to_string());

    // The store cannot be reached.
    let (ok, output) = run_to_end(
        &[],
        &[
            (
                "POSTHORN_STORE",
                format!("postgres://app:{STORE_PASSWORD}@127.0.0.1:{nobody}/posthorn"),
            ),
            (
                "POSTHORN_REDIS_URL",
                format!("redis://:{REDIS_PASSWORD}@127.0.0.1:{nobody}/"),
            ),
            transport.clone(),
            admin.clone(),
        ],
    );
    assert!(!ok, "a server without its store must not start:\n{output}");
    assert!(
        output.contains("PostgreSQL"),
        "the error names the store:\n{output}"
    );
    assert_no_secret("a server whose store is unreachable", &output);

    // The store is there (with a password in its URL), Redis is not.
    let (ok, output) = run_to_end(
        &[],
        &[
            ("POSTHORN_STORE", with_password(&db.url, STORE_PASSWORD)),
            (
                "POSTHORN_REDIS_URL",
                format!("redis://:{REDIS_PASSWORD}@127.0.0.1:{nobody}/"),
            ),
            transport,
            admin,
            ("POSTHORN_LISTEN", format!("127.0.0.1:{}", free_port())),
        ],
    );
    assert!(!ok, "a server without its Redis must not start:\n{output}");
    assert!(output.contains("Redis"), "the error names Redis:\n{output}");
    assert_no_secret("a server whose Redis is unreachable", &output);
    db.drop().await;
}

/// A Redis that requires a password, for as long as the test holds it.
struct PasswordRedis {
    child: Child,
    port: u16,
    /// Its working directory, removed with it.
    dir: std::path::PathBuf,
}

impl PasswordRedis {
    fn start() -> Option<PasswordRedis> {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("posthorn-secret-redis-{port}"));
        let _ = std::fs::create_dir_all(&dir);
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "--requirepass",
                REDIS_PASSWORD,
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        Some(PasswordRedis { child, port, dir })
    }
}

impl Drop for PasswordRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_server_never_logs_a_password() {
    let Some(db) = TestDb::create("a_running_server_never_logs_a_password").await else {
        return;
    };
    let Some(redis) = PasswordRedis::start() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "redis-server is needed when CI=true"
        );
        note("a_running_server_never_logs_a_password SKIPPED: no redis-server on PATH");
        return;
    };
    let sink = Sink::start(1, Duration::ZERO, Duration::ZERO).await;
    let redis_url = format!("redis://:{REDIS_PASSWORD}@127.0.0.1:{}/", redis.port);
    let transport = format!("smtp://mailer:{SMTP_PASSWORD}@127.0.0.1:{}", sink.port(0));
    let store = with_password(&db.url, STORE_PASSWORD);
    let mut server = Posthorn::start_with(
        "posthorn with secrets",
        &store,
        sink.port(0),
        &[
            ("POSTHORN_REDIS_URL", &redis_url),
            ("POSTHORN_TRANSPORT", &transport),
            ("RUST_LOG", "debug"),
        ],
    )
    .await;
    // Some work: operator calls, a send whose delivery tries the relay with credentials.
    let ws = server.create_workspace("secrets").await;
    server
        .api
        .expect(
            200,
            Method::POST,
            "/v1/send",
            Some(&ws.secret_key),
            Some(&json!({"to": "a@example.org", "from": "hi@example.com",
                         "subject": "s", "body": "<p>b</p>"})),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let exited = server.sigterm(Duration::from_secs(15)).await;
    assert!(
        exited.is_some(),
        "the server did not stop\n{}",
        server.logs()
    );
    let logs = server.logs();
    assert!(
        logs.contains("posthorn is listening"),
        "the start-up line is kept:\n{logs}"
    );
    assert_no_secret("a running server", &logs);
    drop(server);
    drop(redis);
    db.drop().await;
}
