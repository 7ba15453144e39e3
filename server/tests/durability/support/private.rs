//! PostgreSQL clusters and Redis servers of a test's own, on free loopback ports, that the
//! test may stop and start (the shared services of `scripts/services.sh` are never touched).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::posthorn::{free_port, note, on_ci};

/// A missing tool: skip the test with a loud note, or fail under `CI=true`.
fn missing(test: &str, what: &str) {
    assert!(
        !on_ci(),
        "{test}: {what} is missing but CI=true (scripts/services.sh installs it)"
    );
    note(&format!(
        "\n!!!!!!!!\n!!! {test} SKIPPED: {what} is missing.\n!!!!!!!!"
    ));
}

/// Whether this process runs as root (`id -u` is 0): PostgreSQL then runs as `postgres`.
fn as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The newest `/usr/lib/postgresql/*/bin` holding `initdb` and `pg_ctl`.
fn pg_bin() -> Option<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").exists() && bin.join("pg_ctl").exists()).then_some((version, bin))
        })
        .collect();
    dirs.sort();
    dirs.pop().map(|(_, bin)| bin)
}

/// A PostgreSQL cluster in a temporary directory, on a free port of 127.0.0.1.
pub struct PrivatePg {
    bin: PathBuf,
    dir: tempfile::TempDir,
    root: bool,
    pub port: u16,
}

impl PrivatePg {
    /// Initialises and starts a cluster; `None` (after a note) when PostgreSQL is not
    /// installed, outside CI.
    pub fn start(test: &str) -> Option<PrivatePg> {
        let Some(bin) = pg_bin() else {
            missing(test, "PostgreSQL (/usr/lib/postgresql/*/bin/initdb)");
            return None;
        };
        let root = as_root();
        let dir = tempfile::Builder::new()
            .prefix("posthorn-private-pg-")
            .tempdir()
            .expect("a temporary directory");
        if root {
            let status = Command::new("chown")
                .args(["postgres:"])
                .arg(dir.path())
                .status()
                .expect("running chown");
            assert!(status.success(), "chown postgres: {}", dir.path().display());
        }
        let pg = PrivatePg {
            bin,
            dir,
            root,
            port: free_port(),
        };
        let data = pg.data();
        pg.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ],
        );
        pg.start_server();
        Some(pg)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Runs a PostgreSQL program (as `postgres` when root) and insists on success.
    fn run(&self, program: &str, args: &[&str]) {
        let path = self.bin.join(program);
        let mut command = if self.root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        let output = command
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running {program}: {e}"));
        assert!(
            output.status.success(),
            "{program} {args:?} failed: {}\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
    }

    /// Starts the server and waits until it accepts connections. Durable commits (the
    /// defaults: `synchronous_commit` on), so a stop loses nothing that was acknowledged.
    pub fn start_server(&self) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c max_connections=100",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("server.log").display().to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "-o",
                &options,
                "start",
            ],
        );
    }

    /// Stops the server like a crash (`-m immediate`: no shutdown checkpoint; the next
    /// start recovers from the WAL) and waits until it is gone.
    pub fn stop_server(&self) {
        self.run(
            "pg_ctl",
            &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
        );
    }

    /// `postgres://` URL of the cluster's `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let path = self.bin.join("pg_ctl");
        let data = self.data();
        let args = ["-D", data.as_str(), "-m", "immediate", "-w", "stop"];
        let _ = if self.root {
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(&path)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
        } else {
            Command::new(&path)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
        };
    }
}

/// A `redis-server` child process on a free port of 127.0.0.1, without persistence.
pub struct PrivateRedis {
    child: Option<Child>,
    dir: tempfile::TempDir,
    pub port: u16,
}

impl PrivateRedis {
    /// Starts one; `None` (after a note) when `redis-server` is not installed, outside CI.
    pub async fn start(test: &str) -> Option<PrivateRedis> {
        let installed = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            missing(test, "redis-server");
            return None;
        }
        let mut redis = PrivateRedis {
            child: None,
            dir: tempfile::Builder::new()
                .prefix("posthorn-private-redis-")
                .tempdir()
                .expect("a temporary directory"),
            port: free_port(),
        };
        redis.start_server().await;
        Some(redis)
    }

    /// Starts the server on its port and waits until it accepts connections.
    pub async fn start_server(&mut self) {
        assert!(self.child.is_none(), "redis-server is already running");
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawning redis-server");
        self.child = Some(child);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .is_err()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "redis-server did not listen on {} within 10 s",
                self.port
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Kills the server and waits until it is gone.
    pub fn stop_server(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// `redis://` URL of the server.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.stop_server();
    }
}
