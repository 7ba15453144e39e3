//! A test webhook receiver on 127.0.0.1: just enough HTTP/1.1 for one request per
//! connection, recording every request's `webhook-id` and JSON body as soon as it is read,
//! and answering 200 only after a delay (so that a kill can land mid-call).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One request the receiver read completely (whether or not it lived to answer it).
#[derive(Debug, Clone)]
pub struct Received {
    /// The `webhook-id` header (`None` when missing).
    pub webhook_id: Option<String>,
    /// The body, parsed as JSON (`Null` when it is not JSON).
    pub body: Value,
}

/// A listener on 127.0.0.1 answering every request with 200 after `delay`.
pub struct Receiver {
    port: u16,
    received: Arc<Mutex<Vec<Received>>>,
    task: JoinHandle<()>,
}

impl Receiver {
    pub async fn start(delay: Duration) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the webhook receiver on 127.0.0.1");
        let port = listener
            .local_addr()
            .expect("local address of the webhook receiver")
            .port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&received);
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let record = Arc::clone(&record);
                tokio::spawn(async move {
                    // A client that vanishes (a killed posthorn) just ends the exchange.
                    let _ = exchange(socket, record, delay).await;
                });
            }
        });
        Receiver {
            port,
            received,
            task,
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every request read so far, in order of arrival.
    pub fn received(&self) -> Vec<Received> {
        self.received
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn exchange(
    socket: TcpStream,
    record: Arc<Mutex<Vec<Received>>>,
    delay: Duration,
) -> std::io::Result<()> {
    let (read, mut write) = socket.into_split();
    let mut reader = BufReader::new(read);
    let mut line = String::new();
    // Request line.
    if reader.read_line(&mut line).await? == 0 {
        return Ok(());
    }
    let mut webhook_id = None;
    let mut length = 0usize;
    loop {
        line.clear();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let name = name.trim();
            if name.eq_ignore_ascii_case("webhook-id") {
                webhook_id = Some(value.trim().to_string());
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).await?;
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    record
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Received { webhook_id, body });
    tokio::time::sleep(delay).await;
    write
        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        .await?;
    write.shutdown().await
}
