//! The scanner against a stand-in `/checkv2` on loopback.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use posthorn_core::model::Verdict;
use posthorn_core::ports::{ContentScanner, InboundContext};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{verdict_of, RspamdScanner};

/// What the stand-in saw of one request: its head (request line and headers) and body.
type Seen = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// Answers every request with `status` and `body`, recording what it got; `delay` holds
/// the answer back.
async fn stand_in(status: u16, body: &'static str, delay: Duration) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen: Seen = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head, body_start, length) = loop {
                    let Ok(n) = conn.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_string();
                        let length = head
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        break (head, end + 4, length);
                    }
                };
                while buf.len() < body_start + length {
                    let Ok(n) = conn.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let end = buf.len().min(body_start + length);
                if let Ok(mut seen) = log.lock() {
                    seen.push((head, buf[body_start..end].to_vec()));
                }
                tokio::time::sleep(delay).await;
                let reply = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(reply.as_bytes()).await;
            });
        }
    });
    (format!("http://{addr}"), seen)
}

const RAW: &[u8] = b"From: a@sender.test\r\nSubject: buy now\r\n\r\ncheap\r\n";

async fn scan(url: &str, timeout: Duration) -> Verdict {
    let scanner = RspamdScanner::new(url, timeout).expect("url");
    let recipients = vec!["x@in.test".to_owned(), "y@in.test".to_owned()];
    scanner
        .scan(&InboundContext {
            raw: RAW,
            client_ip: "127.0.0.9".parse().ok(),
            helo: Some("mx.sender.test"),
            envelope_from: Some("a@sender.test"),
            recipients: &recipients,
        })
        .await
}

#[tokio::test]
async fn the_message_and_its_envelope_go_to_checkv2_and_the_action_decides() {
    let (url, seen) = stand_in(
        200,
        r#"{"action":"reject","score":15.2,"required_score":15}"#,
        Duration::ZERO,
    )
    .await;
    assert_eq!(scan(&url, Duration::from_secs(5)).await, Verdict::Fail);
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 1);
    let (head, body) = &seen[0];
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with("post /checkv2 "), "{head}");
    for header in [
        "ip: 127.0.0.9",
        "helo: mx.sender.test",
        "from: a@sender.test",
        "rcpt: x@in.test",
        "rcpt: y@in.test",
    ] {
        assert!(head.contains(header), "{header} missing in {head}");
    }
    assert_eq!(body.as_slice(), RAW);

    let (url, _) = stand_in(200, r#"{"action":"no action","score":0.1}"#, Duration::ZERO).await;
    assert_eq!(scan(&url, Duration::from_secs(5)).await, Verdict::Pass);
}

#[tokio::test]
async fn errors_and_time_outs_are_processing_failed() {
    let (url, _) = stand_in(500, "{}", Duration::ZERO).await;
    assert_eq!(
        scan(&url, Duration::from_secs(5)).await,
        Verdict::ProcessingFailed
    );
    let (url, _) = stand_in(200, "not json", Duration::ZERO).await;
    assert_eq!(
        scan(&url, Duration::from_secs(5)).await,
        Verdict::ProcessingFailed
    );
    let (url, _) = stand_in(200, r#"{"action":"no action"}"#, Duration::from_secs(3)).await;
    assert_eq!(
        scan(&url, Duration::from_millis(300)).await,
        Verdict::ProcessingFailed
    );
}

#[test]
fn actions_map_to_verdicts() {
    let v = |s: &str| verdict_of(&serde_json::from_str(s).expect("json"));
    assert_eq!(v(r#"{"action":"add header"}"#), Some(Verdict::Fail));
    assert_eq!(v(r#"{"action":"rewrite subject"}"#), Some(Verdict::Fail));
    assert_eq!(v(r#"{"action":"greylist"}"#), Some(Verdict::Gray));
    assert_eq!(v(r#"{"action":"soft reject"}"#), Some(Verdict::Gray));
    assert_eq!(
        v(r#"{"is_skipped":true,"action":"reject"}"#),
        Some(Verdict::Gray)
    );
    assert_eq!(v(r#"{"score":3}"#), None);
}

#[test]
fn only_http_urls_are_taken() {
    assert!(RspamdScanner::new("ftp://127.0.0.1", Duration::from_secs(1)).is_err());
    assert!(RspamdScanner::new("not a url", Duration::from_secs(1)).is_err());
    let s =
        RspamdScanner::new("http://127.0.0.1:11333/rspamd/", Duration::from_secs(1)).expect("url");
    assert_eq!(s.endpoint.as_str(), "http://127.0.0.1:11333/rspamd/checkv2");
}
