//! A test SMTP sink: just enough SMTP for lettre (greeting, EHLO, MAIL, RCPT, DATA, RSET,
//! NOOP, QUIT, kept-alive connections), recording the `X-Posthorn-Email-Id` of every
//! accepted message and which of its listeners accepted it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One message the sink accepted (answered 250 after DATA).
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The `X-Posthorn-Email-Id` header (`None` when the message had none).
    pub email_id: Option<String>,
    /// The `Subject` header, as written (`None` when the message had none).
    pub subject: Option<String>,
    /// Index of the listener (see [`Sink::port`]) that accepted it.
    pub listener: usize,
}

struct Shared {
    deliveries: Mutex<Vec<Delivery>>,
    count: AtomicUsize,
    messages_seen: AtomicU64,
    min_delay_ms: u64,
    max_delay_ms: u64,
}

/// Listeners on 127.0.0.1 sharing one record of accepted messages.
pub struct Sink {
    ports: Vec<u16>,
    shared: Arc<Shared>,
    tasks: Vec<JoinHandle<()>>,
}

impl Sink {
    /// Starts `listeners` listeners; each message waits `min_delay..=max_delay` (cycling)
    /// between its final `.` and the 250 reply, so that a kill can land mid-delivery.
    pub async fn start(listeners: usize, min_delay: Duration, max_delay: Duration) -> Sink {
        let shared = Arc::new(Shared {
            deliveries: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            messages_seen: AtomicU64::new(0),
            min_delay_ms: min_delay.as_millis() as u64,
            max_delay_ms: max_delay.as_millis().max(min_delay.as_millis()) as u64,
        });
        let mut ports = Vec::new();
        let mut tasks = Vec::new();
        for index in 0..listeners {
            let listener = TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind the SMTP sink on 127.0.0.1");
            ports.push(
                listener
                    .local_addr()
                    .expect("local address of the SMTP sink")
                    .port(),
            );
            let shared = Arc::clone(&shared);
            tasks.push(tokio::spawn(async move {
                while let Ok((socket, _)) = listener.accept().await {
                    let shared = Arc::clone(&shared);
                    tokio::spawn(async move {
                        // A client that vanishes (a killed posthorn) just ends the session.
                        let _ = session(socket, index, shared).await;
                    });
                }
            }));
        }
        Sink {
            ports,
            shared,
            tasks,
        }
    }

    /// Port of listener `index`.
    pub fn port(&self, index: usize) -> u16 {
        self.ports[index]
    }

    /// Messages accepted so far.
    pub fn count(&self) -> usize {
        self.shared.count.load(Ordering::SeqCst)
    }

    /// Every accepted message so far, in order of acceptance.
    pub fn deliveries(&self) -> Vec<Delivery> {
        lock(&self.shared.deliveries).clone()
    }

    /// How many times each email id was accepted.
    pub fn counts(&self) -> HashMap<String, usize> {
        let mut counts = HashMap::new();
        for d in lock(&self.shared.deliveries).iter() {
            if let Some(id) = &d.email_id {
                *counts.entry(id.clone()).or_insert(0) += 1;
            }
        }
        counts
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn session(socket: TcpStream, listener: usize, shared: Arc<Shared>) -> std::io::Result<()> {
    let (read, mut write) = socket.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 sink.test ESMTP\r\n").await?;
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let command = line.trim_end().to_ascii_uppercase();
        let reply: &[u8] = if command.starts_with("EHLO") {
            b"250-sink.test\r\n250-8BITMIME\r\n250 SIZE 52428800\r\n"
        } else if command.starts_with("HELO") {
            b"250 sink.test\r\n"
        } else if command == "DATA" {
            write.write_all(b"354 go ahead\r\n").await?;
            let mut data = Vec::new();
            loop {
                let mut chunk = Vec::new();
                if lines.read_until(b'\n', &mut chunk).await? == 0 {
                    // The client died mid-message: nothing was accepted.
                    return Ok(());
                }
                if chunk == b".\r\n" || chunk == b".\n" {
                    break;
                }
                let chunk = chunk.strip_prefix(b".").unwrap_or(&chunk);
                data.extend_from_slice(chunk);
            }
            let n = shared.messages_seen.fetch_add(1, Ordering::SeqCst);
            let span = shared.max_delay_ms - shared.min_delay_ms + 1;
            let delay = shared.min_delay_ms + n % span;
            tokio::time::sleep(Duration::from_millis(delay)).await;
            // Accepted: like a real relay, the message is ours once the data is complete,
            // whether or not the client lives to read the 250.
            let email_id = header(&data, "x-posthorn-email-id");
            let subject = header(&data, "subject");
            lock(&shared.deliveries).push(Delivery {
                email_id,
                subject,
                listener,
            });
            shared.count.fetch_add(1, Ordering::SeqCst);
            b"250 2.0.0 queued\r\n"
        } else if command == "QUIT" {
            write.write_all(b"221 bye\r\n").await?;
            return Ok(());
        } else {
            // MAIL, RCPT, RSET, NOOP and anything else.
            b"250 ok\r\n"
        };
        write.write_all(reply).await?;
    }
}

/// The value of the header `wanted` (case-insensitive, unfolded) in the message's header
/// block.
fn header(data: &[u8], wanted: &str) -> Option<String> {
    let text = String::from_utf8_lossy(data);
    for line in text.split("\r\n").flat_map(|l| l.split('\n')) {
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case(wanted) {
                return Some(value.trim().to_string());
            }
        }
    }
    None
}
