//! `posthorn-smtp-bench`: messages per second through the SMTP submission relay and the
//! inbound MX of a running `posthorn`, beside `POST /v1/send` on the same store, with
//! messages of the same size, printed side by side. `bench/smtp.sh` starts the server.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use clap::{Parser, ValueEnum};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Http = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// SMTP and HTTP send rates of a running server.
#[derive(Debug, Parser)]
#[command(name = "posthorn-smtp-bench")]
struct Args {
    /// Base URL of the HTTP API.
    #[arg(
        long,
        env = "POSTHORN_BENCH_URL",
        default_value = "http://127.0.0.1:8080"
    )]
    url: String,
    /// Operator token of the server.
    #[arg(long, env = "POSTHORN_BENCH_ADMIN_TOKEN", default_value = "bench")]
    admin_token: String,
    /// Address of the submission relay.
    #[arg(
        long,
        env = "POSTHORN_BENCH_SUBMISSION",
        default_value = "127.0.0.1:2587"
    )]
    submission: String,
    /// Address of the inbound MX.
    #[arg(long, env = "POSTHORN_BENCH_INBOUND", default_value = "127.0.0.1:2525")]
    inbound: String,
    /// Concurrent connections per scenario.
    #[arg(short, long, default_value_t = 16)]
    connections: usize,
    /// Measured seconds per scenario.
    #[arg(short, long, default_value_t = 10.0)]
    duration: f64,
    /// Size of each message's body in bytes.
    #[arg(long, default_value_t = 10 * 1024)]
    size: usize,
    /// Paths to measure, one after the other (repeat the flag; default: all three).
    /// `bench/smtp.sh` measures each on a fresh server, so that deliveries one path queued
    /// are not worked off while the next is measured.
    #[arg(long = "path", value_enum)]
    paths: Vec<Path>,
}

/// A way into the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Path {
    /// `POST /v1/send`.
    Send,
    /// The SMTP submission relay.
    Relay,
    /// The inbound MX.
    Mx,
}

impl Path {
    fn label(self) -> &'static str {
        match self {
            Path::Send => "POST /v1/send",
            Path::Relay => "SMTP submission relay",
            Path::Mx => "SMTP inbound MX",
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    match run(Args::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("posthorn-smtp-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), BoxError> {
    let http: Http = Client::builder(TokioExecutor::new()).build_http();
    let base = args.url.trim_end_matches('/').to_string();
    let admin = format!("Bearer {}", args.admin_token);
    let created = call(
        &http,
        Method::POST,
        &format!("{base}/admin/workspaces"),
        &admin,
        json!({"name": "smtp-bench", "rateLimitPerMinute": 10_000_000}),
    )
    .await?;
    let ws = created["workspace"]["id"]
        .as_str()
        .ok_or("no workspace id")?;
    let sk = created["keySet"]["secretKey"]
        .as_str()
        .ok_or("no secret key")?
        .to_string();
    call(
        &http,
        Method::POST,
        &format!("{base}/admin/workspaces/{ws}/domains"),
        &admin,
        json!({"domain": "bench.example", "verified": true, "inboundEnabled": true}),
    )
    .await?;
    let text: String = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. "
        .chars()
        .cycle()
        .take(args.size)
        .collect();
    let duration = Duration::from_secs_f64(args.duration);
    let n = args.connections.max(1);

    let paths = if args.paths.is_empty() {
        vec![Path::Send, Path::Relay, Path::Mx]
    } else {
        args.paths.clone()
    };
    let message = format!(
        "From: news@bench.example\r\nTo: reader@example.org\r\nSubject: Bench\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{}\r\n",
        wrap(&text)
    );
    let mut rates = Vec::new();
    for path in paths {
        let rate = match path {
            Path::Send => measure_send(&http, &base, &sk, &text, n, duration).await?,
            Path::Relay => measure_relay(&args.submission, &sk, &message, n, duration).await?,
            Path::Mx => measure_mx(&args.inbound, &message, n, duration).await?,
        };
        // One line per path for scripts (bench/smtp.sh), before the table.
        println!("rate: {path:?} {rate:.1}");
        rates.push((path, rate));
    }

    println!(
        "\n{} connections, {} s each, {} byte bodies\n",
        n, args.duration, args.size
    );
    let http_rate = rates
        .iter()
        .find(|(p, _)| *p == Path::Send)
        .map(|(_, r)| *r);
    println!("| path | messages/s | vs /v1/send |");
    println!("|---|---:|---:|");
    for (path, rate) in rates {
        let ratio = match http_rate {
            Some(h) if h > 0.0 => format!("{:.2}", rate / h),
            _ => "n/a".to_string(),
        };
        println!("| {} | {rate:.0} | {ratio} |", path.label());
    }
    Ok(())
}

async fn measure_send(
    http: &Http,
    base: &str,
    sk: &str,
    text: &str,
    n: usize,
    duration: Duration,
) -> Result<f64, BoxError> {
    let send_body = Bytes::from(
        json!({"to": "reader@example.org", "from": "news@bench.example", "subject": "Bench",
               "body": format!("<p>{text}</p>")})
        .to_string(),
    );
    let auth = format!("Bearer {sk}");
    measure(n, duration, |count| {
        let http = http.clone();
        let url = format!("{base}/v1/send");
        let body = send_body.clone();
        let auth = auth.clone();
        async move {
            let deadline = Instant::now() + duration;
            while Instant::now() < deadline {
                let req = Request::builder()
                    .method(Method::POST)
                    .uri(&url)
                    .header("authorization", &auth)
                    .header("content-type", "application/json")
                    .body(Full::new(body.clone()))?;
                let res = http.request(req).await?;
                let ok = res.status().is_success();
                res.into_body().collect().await?;
                if ok {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(())
        }
    })
    .await
}

async fn measure_relay(
    addr: &str,
    sk: &str,
    message: &str,
    n: usize,
    duration: Duration,
) -> Result<f64, BoxError> {
    let plain = STANDARD.encode(format!("\0bench\0{sk}"));
    measure(n, duration, |count| {
        let addr = addr.to_string();
        let message = message.to_string();
        let auth = format!("AUTH PLAIN {plain}");
        async move {
            let mut smtp = Smtp::connect(&addr).await?;
            smtp.expect(&["EHLO bench"], "250").await?;
            smtp.expect(&[&auth], "235").await?;
            let deadline = Instant::now() + duration;
            while Instant::now() < deadline {
                if smtp
                    .message("news@bench.example", "reader@example.org", &message)
                    .await?
                {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(())
        }
    })
    .await
}

async fn measure_mx(
    addr: &str,
    message: &str,
    n: usize,
    duration: Duration,
) -> Result<f64, BoxError> {
    measure(n, duration, |count| {
        let addr = addr.to_string();
        let message = message.to_string();
        async move {
            let mut smtp = Smtp::connect(&addr).await?;
            smtp.expect(&["EHLO sender.test"], "250").await?;
            let deadline = Instant::now() + duration;
            let mut i = 0u64;
            while Instant::now() < deadline {
                i += 1;
                let from = format!("sender{i}@sender.test");
                if smtp
                    .message(&from, "support@bench.example", &message)
                    .await?
                {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(())
        }
    })
    .await
}

/// Runs `n` copies of `task` for about `duration`; the rate of what they counted.
async fn measure<F, Fut>(n: usize, duration: Duration, task: F) -> Result<f64, BoxError>
where
    F: Fn(Arc<AtomicU64>) -> Fut,
    Fut: std::future::Future<Output = Result<(), BoxError>> + Send + 'static,
{
    let count = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let handles: Vec<_> = (0..n).map(|_| tokio::spawn(task(count.clone()))).collect();
    for handle in handles {
        handle.await??;
    }
    let elapsed = started.elapsed().max(duration);
    Ok(count.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64())
}

async fn call(
    http: &Http,
    method: Method,
    url: &str,
    auth: &str,
    body: Value,
) -> Result<Value, BoxError> {
    let req = Request::builder()
        .method(method)
        .uri(url)
        .header("authorization", auth)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))?;
    let res = http.request(req).await?;
    let status = res.status();
    let bytes = res.into_body().collect().await?.to_bytes();
    if !status.is_success() {
        return Err(format!("{url}: {status} {}", String::from_utf8_lossy(&bytes)).into());
    }
    Ok(serde_json::from_slice(&bytes)?)
}

/// Lines of at most 76 characters, as mail wants.
fn wrap(text: &str) -> String {
    text.as_bytes()
        .chunks(76)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join("\r\n")
        .replace("\r\n.", "\r\n..")
}

/// A minimal SMTP client: one command, one reply.
struct Smtp {
    reader: BufReader<TcpStream>,
}

impl Smtp {
    async fn connect(addr: &str) -> Result<Self, BoxError> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let mut smtp = Self {
            reader: BufReader::new(stream),
        };
        let greeting = smtp.reply().await?;
        if !greeting.starts_with("220") {
            return Err(format!("greeting: {greeting}").into());
        }
        Ok(smtp)
    }

    async fn reply(&mut self) -> Result<String, BoxError> {
        let mut all = String::new();
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line).await? == 0 {
                return Err(format!("connection closed after {all:?}").into());
            }
            all.push_str(&line);
            if line.as_bytes().get(3) != Some(&b'-') {
                return Ok(all);
            }
        }
    }

    async fn command(&mut self, line: &str) -> Result<String, BoxError> {
        self.reader
            .get_mut()
            .write_all(format!("{line}\r\n").as_bytes())
            .await?;
        self.reply().await
    }

    async fn expect(&mut self, lines: &[&str], code: &str) -> Result<(), BoxError> {
        for line in lines {
            let reply = self.command(line).await?;
            if !reply.starts_with(code) {
                return Err(format!("{line}: {reply}").into());
            }
        }
        Ok(())
    }

    /// Sends one message; whether it was accepted (a 4xx, e.g. a rate limit, is not).
    async fn message(&mut self, from: &str, to: &str, body: &str) -> Result<bool, BoxError> {
        self.expect(&[&format!("MAIL FROM:<{from}>")], "250")
            .await?;
        self.expect(&[&format!("RCPT TO:<{to}>")], "250").await?;
        self.expect(&["DATA"], "354").await?;
        let reply = self.command(&format!("{body}.")).await?;
        if reply.starts_with('5') {
            return Err(format!("message refused: {reply}").into());
        }
        Ok(reply.starts_with("250"))
    }
}
