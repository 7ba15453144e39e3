//! Talks to a tiny scripted SMTP server on 127.0.0.1.

use std::sync::{Arc, Mutex};

use mail_parser::MessageParser;
use posthorn_core::ports::Mailbox;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use super::*;

/// What the fake server saw in one transaction.
#[derive(Debug, Default, Clone)]
struct Seen {
    /// Every command's verb, in order (`EHLO`, `AUTH`, `MAIL`, …).
    verbs: Vec<String>,
    mail_from: Vec<String>,
    rcpt_to: Vec<String>,
    data: Vec<Vec<u8>>,
}

/// Starts a server answering RCPT with `rcpt_reply`; returns its port and what it saw.
async fn fake_server(rcpt_reply: &'static str) -> (u16, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let seen_ = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let seen = Arc::clone(&seen_);
            tokio::spawn(async move {
                let _ = session(socket, rcpt_reply, seen).await;
            });
        }
    });
    (port, seen)
}

async fn session(
    socket: tokio::net::TcpStream,
    rcpt_reply: &'static str,
    seen: Arc<Mutex<Seen>>,
) -> std::io::Result<()> {
    let (read, mut write) = socket.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 fake.test ESMTP\r\n").await?;
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let command = line.trim_end().to_ascii_uppercase();
        let verb = command.split(' ').next().unwrap_or_default().to_owned();
        lock(&seen).verbs.push(verb);
        // AUTH is offered, STARTTLS never: what a relay looks like once a man in the middle
        // has stripped the STARTTLS offer.
        let reply: &str = if command.starts_with("EHLO") || command.starts_with("HELO") {
            "250-fake.test\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n"
        } else if command.starts_with("AUTH") {
            "235 2.7.0 authenticated\r\n"
        } else if command.starts_with("MAIL FROM:") {
            lock(&seen).mail_from.push(line.trim_end()[10..].to_owned());
            "250 ok\r\n"
        } else if command.starts_with("RCPT TO:") {
            lock(&seen).rcpt_to.push(line.trim_end()[8..].to_owned());
            rcpt_reply
        } else if command == "DATA" {
            write.write_all(b"354 go ahead\r\n").await?;
            let mut data = Vec::new();
            loop {
                let mut chunk = Vec::new();
                if lines.read_until(b'\n', &mut chunk).await? == 0 {
                    return Ok(());
                }
                if chunk == b".\r\n" {
                    break;
                }
                // Undo dot-stuffing.
                let chunk = chunk.strip_prefix(b".").unwrap_or(&chunk);
                data.extend_from_slice(chunk);
            }
            lock(&seen).data.push(data);
            "250 queued as 42\r\n"
        } else if command == "QUIT" {
            write.write_all(b"221 bye\r\n").await?;
            return Ok(());
        } else {
            // RSET, NOOP and anything else.
            "250 ok\r\n"
        };
        write.write_all(reply.as_bytes()).await?;
    }
}

fn lock(seen: &Mutex<Seen>) -> std::sync::MutexGuard<'_, Seen> {
    seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn message() -> OutgoingMessage {
    OutgoingMessage {
        email_id: "em_9".into(),
        message_id: "em_9@posthorn.test".into(),
        from: Mailbox {
            name: Some("Acme".into()),
            email: "news@acme.test".into(),
        },
        envelope_from: "news@acme.test".into(),
        to: Mailbox {
            name: None,
            email: "ada@example.test".into(),
        },
        reply_to: None,
        subject: "Hello ✉".into(),
        html: "<p>Hi</p>\r\n.\r\n<p>a line starting with a dot</p>".into(),
        text: Some("Hi\n.\nbye".into()),
        headers: vec![],
        attachments: vec![],
        dkim: None,
    }
}

#[tokio::test]
async fn delivers_to_a_plain_smtp_server() {
    let (port, seen) = fake_server("250 ok\r\n").await;
    let transport = SmtpTransport::from_url(&format!("smtp://127.0.0.1:{port}")).expect("url");
    let id = transport.send(&message()).await.expect("accepted");
    assert_eq!(id, "em_9@posthorn.test");
    // A second send reuses the pool; its envelope sender is a bounce address.
    let verp = OutgoingMessage {
        envelope_from: "bounces+abc@acme.test".into(),
        ..message()
    };
    transport.send(&verp).await.expect("accepted again");

    let seen = lock(&seen).clone();
    assert_eq!(seen.mail_from[0], "<news@acme.test>");
    assert_eq!(seen.mail_from[1], "<bounces+abc@acme.test>");
    assert_eq!(seen.rcpt_to[0], "<ada@example.test>");
    assert_eq!(seen.data.len(), 2);
    let parsed = MessageParser::default()
        .parse(&seen.data[0])
        .expect("parses");
    assert_eq!(parsed.subject(), Some("Hello ✉"));
    assert_eq!(parsed.message_id(), Some("em_9@posthorn.test"));
    // Text travels in canonical CRLF form.
    assert_eq!(
        parsed
            .body_text(0)
            .map(|t| t.replace("\r\n", "\n"))
            .as_deref(),
        Some("Hi\n.\nbye")
    );
    assert!(parsed
        .body_html(0)
        .is_some_and(|html| html.contains("<p>a line starting with a dot</p>")));
}

#[tokio::test]
async fn rejected_recipient_is_a_recipient_rejection() {
    let (port, _) = fake_server("550 5.1.1 no such user\r\n").await;
    let transport = SmtpTransport::from_url(&format!("smtp://127.0.0.1:{port}")).expect("url");
    let err = transport.send(&message()).await.expect_err("rejected");
    assert_eq!(
        err,
        TransportError::Rejected {
            reply: "550 5.1.1 no such user".into(),
            recipient: true
        }
    );
}

#[tokio::test]
async fn relay_denial_is_a_rejection_not_about_the_recipient() {
    let (port, _) = fake_server("554 5.7.1 relay access denied\r\n").await;
    let transport = SmtpTransport::from_url(&format!("smtp://127.0.0.1:{port}")).expect("url");
    let err = transport.send(&message()).await.expect_err("rejected");
    assert!(
        matches!(&err, TransportError::Rejected { reply, recipient: false } if reply.contains("relay access denied")),
        "{err:?}"
    );
}

#[tokio::test]
async fn deferred_recipient_is_transient() {
    let (port, _) = fake_server("451 4.7.1 try later\r\n").await;
    let transport = SmtpTransport::from_url(&format!("smtp://127.0.0.1:{port}")).expect("url");
    let err = transport.send(&message()).await.expect_err("deferred");
    assert!(matches!(err, TransportError::Transient(_)), "{err:?}");
}

#[tokio::test]
async fn a_unicode_local_part_to_a_relay_without_smtputf8_is_permanent() {
    // The fake relay offers 8BITMIME but not SMTPUTF8: it can never take this address, so
    // retrying until the job is dead would only delay the failure.
    let (port, seen) = fake_server("250 ok\r\n").await;
    let transport = SmtpTransport::from_url(&format!("smtp://127.0.0.1:{port}")).expect("url");
    let to = |email: &str| OutgoingMessage {
        to: Mailbox {
            name: None,
            email: email.into(),
        },
        ..message()
    };
    let err = transport
        .send(&to("jürgen@example.test"))
        .await
        .expect_err("no SMTPUTF8");
    assert!(
        matches!(&err, TransportError::Permanent(why) if why.contains("SMTPUTF8")),
        "{err:?}"
    );
    assert!(!lock(&seen).verbs.iter().any(|v| v == "MAIL"));
    // The same mailbox's domain in A-label form is plain ASCII and goes through.
    transport
        .send(&to("ada@xn--bcher-kva.test"))
        .await
        .expect("accepted");
    assert_eq!(lock(&seen).rcpt_to, ["<ada@xn--bcher-kva.test>"]);
}

#[tokio::test]
async fn refused_connection_is_transient() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let transport = SmtpTransport::from_url(&format!("smtp://127.0.0.1:{port}")).expect("url");
    let err = transport.send(&message()).await.expect_err("refused");
    assert!(matches!(err, TransportError::Transient(_)), "{err:?}");
}

#[tokio::test]
async fn invalid_message_is_permanent_without_connecting() {
    let transport = SmtpTransport::from_url("smtp://127.0.0.1:9").expect("url");
    let msg = OutgoingMessage {
        subject: "a\r\nBcc: evil@x.test".into(),
        ..message()
    };
    let err = transport.send(&msg).await.expect_err("refused");
    assert!(matches!(err, TransportError::Permanent(_)), "{err:?}");
}

#[test]
fn url_defaults_and_options() {
    let t = SmtpTransport::from_url("smtp://mail.example.test").expect("url");
    assert_eq!(
        (t.host(), t.port(), t.tls()),
        ("mail.example.test", 25, TlsMode::None)
    );

    let t = SmtpTransport::from_url("smtps://u:p@mail.example.test").expect("url");
    assert_eq!((t.port(), t.tls()), (465, TlsMode::Implicit));

    let t = SmtpTransport::from_url("smtp://mail.example.test:587?tls=required").expect("url");
    assert_eq!((t.port(), t.tls()), (587, TlsMode::Required));

    // STARTTLS is required, not tried: a stripped offer must not lead to clear text.
    let t = SmtpTransport::from_url("smtp://u:p@mail.example.test?tls=starttls").expect("url");
    assert_eq!((t.port(), t.tls()), (25, TlsMode::Required));

    let t = SmtpTransport::from_url("smtp://mail.example.test?tls=opportunistic").expect("url");
    assert_eq!((t.port(), t.tls()), (25, TlsMode::Opportunistic));

    let t =
        SmtpTransport::from_url("smtp://user%40x:p%2Fw%40rd@[::1]:2525/client.test").expect("url");
    assert_eq!((t.host(), t.port()), ("::1", 2525));
}

#[tokio::test]
async fn starttls_not_offered_means_no_delivery_and_no_password_in_clear() {
    let (port, seen) = fake_server("250 ok\r\n").await;
    let transport =
        SmtpTransport::from_url(&format!("smtp://user:s3cret@127.0.0.1:{port}?tls=starttls"))
            .expect("url");
    let err = transport.send(&message()).await.expect_err("no STARTTLS");
    assert!(matches!(err, TransportError::Transient(_)), "{err:?}");
    let seen = lock(&seen).clone();
    assert!(seen.verbs.iter().any(|v| v == "EHLO"), "{seen:?}");
    assert!(
        !seen.verbs.iter().any(|v| v == "AUTH" || v == "MAIL"),
        "{seen:?}"
    );
}

/// The fake relay records AUTH when it is sent, so its absence above means something.
#[tokio::test]
async fn plain_smtp_with_credentials_authenticates() {
    // `smtp://` without `tls` is clear text by choice (a relay on the same host).
    let (port, seen) = fake_server("250 ok\r\n").await;
    let transport =
        SmtpTransport::from_url(&format!("smtp://user:s3cret@127.0.0.1:{port}")).expect("url");
    transport.send(&message()).await.expect("accepted");
    assert!(lock(&seen).verbs.iter().any(|v| v == "AUTH"));
}

#[test]
fn opportunistic_tls_with_credentials_is_refused() {
    let err = SmtpTransport::from_url("smtp://user:s3cret@host:587?tls=opportunistic")
        .expect_err("refused");
    let shown = err.to_string();
    assert!(
        shown.contains("tls=opportunistic") && shown.contains("tls=starttls"),
        "{shown}"
    );
    assert!(!shown.contains("s3cret"), "{shown}");
    // A user name alone is a credential too.
    assert!(SmtpTransport::from_url("smtp://user@host?tls=opportunistic").is_err());
    // The server's startup goes through transport_from_spec.
    assert!(crate::transport_from_spec("smtp://u:p@host?tls=opportunistic").is_err());
}

#[test]
fn bad_urls_are_refused_without_echoing_secrets() {
    for url in [
        "smtp://user:s3cret@host?tls=bogus",
        "smtps://user:s3cret@host?tls=none",
        "smtp://user:s3cret@host?foo=bar",
        "smtp://user:s3cret@",
        "http://user:s3cret@host",
        "not a url s3cret",
    ] {
        let err = SmtpTransport::from_url(url).expect_err(url);
        assert!(!err.to_string().contains("s3cret"), "{url}: {err}");
    }
}

#[test]
fn debug_output_hides_credentials() {
    let t = SmtpTransport::from_url("smtp://user:s3cret@host").expect("url");
    let shown = format!("{t:?}");
    assert!(
        shown.contains("host") && !shown.contains("s3cret"),
        "{shown}"
    );
}

#[test]
fn percent_decoding() {
    assert_eq!(percent_decode("a%40b%2F%25").expect("decodes"), "a@b/%");
    assert!(percent_decode("a%4").is_err());
    assert!(percent_decode("%ff").is_err());
}

#[test]
fn a_password_without_tls_is_said_to_go_in_clear() {
    let clear = |url: &str| {
        SmtpTransport::from_url(url)
            .map(|t| t.sends_password_in_clear())
            .unwrap_or_else(|e| panic!("{url}: {e}"))
    };
    assert!(clear("smtp://user:s3cret@relay.example.test:25"));
    assert!(clear("smtp://user:s3cret@127.0.0.1:25"));
    assert!(!clear(
        "smtp://user:s3cret@relay.example.test:587?tls=starttls"
    ));
    assert!(!clear("smtps://user:s3cret@relay.example.test"));
    assert!(!clear("smtp://relay.example.test:25"));
    assert!(is_loopback("127.0.0.1") && is_loopback("::1") && is_loopback("LocalHost"));
    assert!(!is_loopback("relay.example.test") && !is_loopback("192.0.2.1"));
}
