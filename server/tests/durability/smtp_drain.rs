//! SIGTERM while a message is in flight on the SMTP submission relay of the real binary:
//! the session finishes reading the message, answers 250 for it (durable by then), closes
//! with 421, the process exits 0, and the message is delivered once by the process that
//! starts next on the same SQLite file.

use std::time::Duration;

use base64::Engine as _;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

use crate::sqlite::DataDir;
use crate::support::posthorn::{free_port, Posthorn};
use crate::support::sink::Sink;
use crate::support::wait_until;

const SUBJECT: &str = "in flight at SIGTERM";
/// How long the process may take to exit after SIGTERM.
const EXIT_WITHIN: Duration = Duration::from_secs(15);

/// A line-by-line SMTP client for the test.
struct Client {
    read: BufReader<OwnedReadHalf>,
    write: OwnedWriteHalf,
}

impl Client {
    /// Connects to `port` on 127.0.0.1 (retrying while the listener comes up) and reads
    /// the greeting.
    async fn connect(port: u16) -> Client {
        let mut last = None;
        for _ in 0..100 {
            match TcpStream::connect(("127.0.0.1", port)).await {
                Ok(stream) => {
                    let (read, write) = stream.into_split();
                    let mut client = Client {
                        read: BufReader::new(read),
                        write,
                    };
                    client.expect("the greeting", "220").await;
                    return client;
                }
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the relay on port {port} did not accept a connection: {last:?}");
    }

    /// The next reply, all its lines.
    async fn reply(&mut self) -> String {
        let mut reply = String::new();
        loop {
            let mut line = String::new();
            let read =
                tokio::time::timeout(Duration::from_secs(10), self.read.read_line(&mut line))
                    .await
                    .unwrap_or_else(|_| panic!("no reply within 10 s (so far: {reply:?})"))
                    .unwrap_or_else(|e| panic!("reading a reply: {e} (so far: {reply:?})"));
            if read == 0 {
                return reply;
            }
            reply.push_str(&line);
            // The last line of a reply has a space after its code.
            if line.as_bytes().get(3) != Some(&b'-') {
                return reply;
            }
        }
    }

    /// Reads a reply and asserts its code.
    async fn expect(&mut self, what: &str, code: &str) -> String {
        let reply = self.reply().await;
        assert!(
            reply.starts_with(code),
            "{what}: expected {code}, got {reply:?}"
        );
        reply
    }

    async fn send(&mut self, bytes: &str) {
        self.write
            .write_all(bytes.as_bytes())
            .await
            .unwrap_or_else(|e| panic!("writing {bytes:?}: {e}"));
    }

    /// Sends `line` and asserts the reply's code.
    async fn command(&mut self, line: &str, code: &str) -> String {
        self.send(&format!("{line}\r\n")).await;
        self.expect(line, code).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_message_lets_the_relay_finish_it() {
    let dir = DataDir::new();
    let sink = Sink::start(1, Duration::ZERO, Duration::ZERO).await;
    let relay_port = free_port();
    let relay = format!("127.0.0.1:{relay_port}");
    let settings = [("POSTHORN_SMTP_SUBMISSION_LISTEN", relay.as_str())];
    let mut first =
        Posthorn::start_with("smtp drain #1", &dir.store(), sink.port(0), &settings).await;
    let ws = first.create_workspace("smtp-drain").await;

    let mut smtp = Client::connect(relay_port).await;
    smtp.command("EHLO client.example", "250").await;
    let login = format!("\0posthorn\0{}", ws.secret_key);
    let login = base64::engine::general_purpose::STANDARD.encode(login);
    smtp.command(&format!("AUTH PLAIN {login}"), "235").await;
    smtp.command("MAIL FROM:<sender@example.com>", "250").await;
    smtp.command("RCPT TO:<reader@example.org>", "250").await;
    smtp.command("DATA", "354").await;
    smtp.send(&format!(
        "From: sender@example.com\r\nTo: reader@example.org\r\nSubject: {SUBJECT}\r\n\r\n\
         The first half,\r\n"
    ))
    .await;

    // SIGTERM while the relay is reading the message; the rest follows after it landed.
    let (status, (accepted, closing)) = tokio::join!(first.sigterm(EXIT_WITHIN), async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        smtp.send("and the second.\r\n.\r\n").await;
        let accepted = smtp.reply().await;
        let closing = smtp.reply().await;
        (accepted, closing)
    });
    assert!(
        accepted.starts_with("250"),
        "the message in flight at SIGTERM was not accepted: {accepted:?}\n{}",
        first.logs()
    );
    assert!(
        closing.starts_with("421"),
        "the session did not close with 421 after the message: {closing:?}"
    );
    first.assert_clean_exit(status, EXIT_WITHIN);

    // The next process on the same file delivers what the first accepted, once.
    let mut second = Posthorn::start("smtp drain #2", &dir.store(), sink.port(0)).await;
    let ours = |sink: &Sink| {
        sink.deliveries()
            .iter()
            .filter(|d| d.subject.as_deref() == Some(SUBJECT))
            .count()
    };
    let delivered = wait_until(Duration::from_secs(30), || ours(&sink) > 0).await;
    assert!(
        delivered,
        "the accepted message was never delivered\n{}\n{}",
        first.logs(),
        second.logs()
    );
    // Whatever else is queued has had time to go out too: still one copy.
    let status = second.sigterm(EXIT_WITHIN).await;
    second.assert_clean_exit(status, EXIT_WITHIN);
    assert_eq!(ours(&sink), 1, "the message was delivered more than once");
}
