use std::sync::Mutex;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

/// Accepts recipients at example.com, refuses the rest; keeps what DATA brings, and how
/// many messages `requests` counted in flight while each was handled.
#[derive(Default)]
struct Recorder {
    messages: Mutex<Vec<(Envelope, Vec<u8>)>>,
    requests: RequestGauge,
    in_flight_at_data: Mutex<Vec<usize>>,
}

#[async_trait]
impl Handler for Recorder {
    type Identity = String;

    fn offers_auth(&self) -> bool {
        true
    }

    async fn authenticate(&self, credentials: Credentials) -> Result<String, Reply> {
        if credentials.secret == "sk_good" {
            Ok(credentials.user)
        } else {
            Err(Reply::new(535, [5, 7, 8], "Authentication failed"))
        }
    }

    async fn mail_from(&self, _: Option<&String>, _: &Envelope) -> Result<(), Reply> {
        Ok(())
    }

    async fn rcpt_to(&self, _: Option<&String>, _: &Envelope, to: &str) -> Result<(), Reply> {
        if to.ends_with("@example.com") {
            Ok(())
        } else {
            Err(Reply::new(550, [5, 1, 1], "No such user"))
        }
    }

    async fn data(&self, _: Option<&String>, envelope: Envelope, message: Vec<u8>) -> Reply {
        self.in_flight_at_data
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(self.requests.in_flight());
        let mut messages = self.messages.lock().unwrap_or_else(|e| e.into_inner());
        messages.push((envelope, message));
        Reply::new(250, [2, 0, 0], "Queued")
    }
}

fn config() -> SessionConfig {
    SessionConfig {
        hostname: "mx.test".into(),
        max_message_bytes: 1000,
        max_recipients: 3,
        command_timeout: Duration::from_secs(5),
        max_bad_commands: 5,
        max_junk_commands: 10,
        starttls: false,
        auth_without_tls: true,
        auth_required: false,
        requests: RequestGauge::default(),
    }
}

/// Runs a session fed `input` in chunks of the given sizes; returns what the server wrote.
async fn converse(
    handler: &Recorder,
    config: &SessionConfig,
    input: Vec<u8>,
    chunks: Vec<usize>,
) -> String {
    let (mut client, mut server) = tokio::io::duplex(1 << 20);
    let (_stop_tx, stop) = watch::channel(false);
    let writer = tokio::spawn(async move {
        let mut rest = input.as_slice();
        for size in chunks.into_iter().chain(std::iter::repeat(usize::MAX)) {
            if rest.is_empty() {
                break;
            }
            let (head, tail) = rest.split_at(size.clamp(1, rest.len()));
            if client.write_all(head).await.is_err() {
                break;
            }
            let _ = client.flush().await;
            tokio::task::yield_now().await;
            rest = tail;
        }
        let _ = client.shutdown().await;
        let mut out = Vec::new();
        let _ = client.read_to_end(&mut out).await;
        out
    });
    let end = run(&mut server, handler, config, Peer::default(), true, stop).await;
    assert!(end.is_ok(), "{end:?}");
    drop(server);
    let out = writer.await.unwrap_or_default();
    String::from_utf8(out).unwrap_or_else(|e| panic!("replies are ASCII: {e}"))
}

fn codes(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.len() >= 4 && &l[3..4] == " ")
        .map(|l| &l[..3])
        .collect()
}

#[tokio::test]
async fn a_message_is_counted_in_flight_until_it_is_answered() {
    let handler = Recorder::default();
    let config = SessionConfig {
        requests: handler.requests.clone(),
        ..config()
    };
    let input = b"EHLO client.test\r\nMAIL FROM:<a@sender.test>\r\nRCPT TO:<b@example.com>\r\n\
                  DATA\r\nSubject: x\r\n\r\nhello\r\n.\r\nQUIT\r\n";
    let out = converse(&handler, &config, input.to_vec(), vec![]).await;
    assert_eq!(
        codes(&out),
        ["220", "250", "250", "250", "354", "250", "221"],
        "{out}"
    );
    let seen = handler
        .in_flight_at_data
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert_eq!(seen, [1], "the message was counted while it was taken in");
    assert_eq!(
        handler.requests.in_flight(),
        0,
        "answered: no longer counted"
    );
}

#[tokio::test]
async fn a_message_goes_through_with_dot_stuffing_undone() {
    let handler = Recorder::default();
    let input = b"EHLO client.test\r\nMAIL FROM:<a@sender.test>\r\nRCPT TO:<b@example.com>\r\n\
                  RCPT TO:<c@elsewhere.test>\r\nDATA\r\nSubject: x\r\n\r\n..dotted\r\n.\r\nQUIT\r\n";
    let out = converse(&handler, &config(), input.to_vec(), vec![]).await;
    assert_eq!(
        codes(&out),
        ["220", "250", "250", "250", "550", "354", "250", "221"],
        "{out}"
    );
    assert!(out.contains("SIZE 1000"), "{out}");
    assert!(
        out.contains("AUTH PLAIN LOGIN") || out.contains("AUTH LOGIN PLAIN"),
        "{out}"
    );
    let messages = handler.messages.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(messages.len(), 1);
    let (envelope, message) = &messages[0];
    assert_eq!(envelope.from.as_deref(), Some("a@sender.test"));
    assert_eq!(envelope.recipients, ["b@example.com"]);
    assert_eq!(envelope.helo.as_deref(), Some("client.test"));
    assert_eq!(message, b"Subject: x\r\n\r\n.dotted\r\n");
}

/// The envelope commands before DATA, accepted by [`Recorder`].
const TO_DATA: &str = "EHLO c\r\nMAIL FROM:<a@s.test>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n";

/// Every byte in its own read, to cross every boundary the receivers keep state over.
fn byte_by_byte(input: &[u8]) -> Vec<usize> {
    vec![1; input.len()]
}

#[tokio::test]
async fn a_message_starts_at_the_beginning_of_a_line() {
    // The CRLF of the DATA line starts the message's first line: a `.` there ends an empty
    // message at once, and a stuffed `..x` there is undone.
    let cases: [(&str, &[u8]); 2] = [(".\r\n", b""), ("..x\r\n..\r\n.\r\n", b".x\r\n.\r\n")];
    for (data, stored) in cases {
        let input = format!("{TO_DATA}{data}QUIT\r\n").into_bytes();
        for chunks in [vec![], byte_by_byte(&input)] {
            let handler = Recorder::default();
            let out = converse(&handler, &config(), input.clone(), chunks).await;
            assert_eq!(
                codes(&out),
                ["220", "250", "250", "250", "354", "250", "221"],
                "{out}"
            );
            let messages = handler.messages.lock().unwrap_or_else(|e| e.into_inner());
            assert_eq!(messages.len(), 1);
            assert_eq!(messages[0].1, stored, "{data:?}");
        }
    }
}

#[tokio::test]
async fn limits_answer_552_and_452_and_the_session_goes_on() {
    let handler = Recorder::default();
    let big = "x".repeat(1500);
    let input = format!(
        "EHLO c\r\nMAIL FROM:<a@s.test> SIZE=5000\r\nMAIL FROM:<a@s.test>\r\n\
         RCPT TO:<1@example.com>\r\nRCPT TO:<2@example.com>\r\nRCPT TO:<3@example.com>\r\n\
         RCPT TO:<4@example.com>\r\nDATA\r\n{big}\r\n.\r\nNOOP\r\n"
    );
    let out = converse(&handler, &config(), input.into_bytes(), vec![7, 300, 11]).await;
    assert_eq!(
        codes(&out),
        ["220", "250", "552", "250", "250", "250", "250", "452", "354", "552", "250"],
        "{out}"
    );
    assert!(handler
        .messages
        .lock()
        .map(|m| m.is_empty())
        .unwrap_or(false));
}

#[tokio::test]
async fn auth_plain_and_login_and_what_needs_it() {
    let handler = Recorder::default();
    let mut required = config();
    required.auth_required = true;
    let plain = STANDARD.encode("\0me\0sk_good");
    let input = format!(
        "EHLO c\r\nMAIL FROM:<a@s.test>\r\nAUTH PLAIN {}\r\nAUTH PLAIN {plain}\r\n\
         MAIL FROM:<a@s.test>\r\nQUIT\r\n",
        STANDARD.encode("\0me\0sk_bad")
    );
    let out = converse(&handler, &required, input.into_bytes(), vec![]).await;
    assert_eq!(
        codes(&out),
        ["220", "250", "530", "535", "235", "250", "221"],
        "{out}"
    );
    let input = format!(
        "EHLO c\r\nAUTH LOGIN\r\n{}\r\n{}\r\nMAIL FROM:<a@s.test>\r\n",
        STANDARD.encode("me"),
        STANDARD.encode("sk_good")
    );
    let out = converse(&handler, &required, input.into_bytes(), vec![3]).await;
    assert!(
        out.contains("334 VXNlcm5hbWU6\r\n334 UGFzc3dvcmQ6\r\n235 "),
        "{out}"
    );
    assert!(out.ends_with("250 2.1.0 Sender OK\r\n"), "{out}");
    // Without TLS on a listener that is not loopback, AUTH is neither offered nor taken.
    let mut remote = required.clone();
    remote.auth_without_tls = false;
    let out = converse(
        &handler,
        &remote,
        format!("EHLO c\r\nAUTH PLAIN {plain}\r\n").into_bytes(),
        vec![],
    )
    .await;
    assert!(!out.contains("AUTH"), "{out}");
    assert_eq!(codes(&out), ["220", "250", "538"], "{out}");
}

#[tokio::test]
async fn garbage_closes_the_session_after_the_error_budget() {
    let handler = Recorder::default();
    let input =
        "HELLO\r\nFOO BAR\r\nMAIL\r\nRCPT TO:<x@example.com>\r\n\u{0}\u{1}\r\nDATA\r\nNOOP\r\n";
    let out = converse(&handler, &config(), input.as_bytes().to_vec(), vec![]).await;
    let codes = codes(&out);
    assert_eq!(codes.last(), Some(&"421"), "{out}");
    assert!(!codes.contains(&"354"), "{out}");
}

#[tokio::test]
async fn commands_that_move_no_mail_close_the_session_past_their_limit() {
    // The first EHLO is not counted; the ten after it are the limit of config().
    let input = "EHLO c\r\nNOOP\r\nNOOP x\r\nNOOP\r\nNOOP\r\nRSET\r\nRSET\r\n\
                 VRFY someone\r\nHELP\r\nEHLO c\r\nHELO c\r\nNOOP\r\nQUIT\r\n";
    let out = converse(&Recorder::default(), &config(), input.into(), vec![]).await;
    assert_eq!(
        codes(&out),
        [
            "220", "250", "250", "250", "250", "250", "250", "250", "252", "214", "250", "250",
            "421"
        ],
        "{out}"
    );
    assert!(
        out.ends_with("421 4.7.0 Too many commands without mail, closing connection\r\n"),
        "{out}"
    );
}

#[tokio::test]
async fn recipients_past_the_limit_or_repeated_close_the_session_past_the_junk_limit() {
    // Three recipients fit (config()); a repeated one is accepted again and later ones are
    // refused 452: neither moves mail, so together they count against the ten.
    let again = "RCPT TO:<1@example.com>\r\n".repeat(6);
    let fill = "RCPT TO:<2@example.com>\r\nRCPT TO:<3@example.com>\r\n";
    let over = "RCPT TO:<4@example.com>\r\n".repeat(6);
    let input = format!("EHLO c\r\nMAIL FROM:<a@s.test>\r\n{again}{fill}{over}");
    let out = converse(&Recorder::default(), &config(), input.into(), vec![]).await;
    let codes = codes(&out);
    assert_eq!(out.matches("Recipient OK (duplicate)").count(), 5, "{out}");
    // Five repeats and five refusals are the ten; the sixth refusal is one too many.
    assert_eq!(codes.iter().filter(|c| **c == "452").count(), 5, "{out}");
    assert_eq!(codes.last(), Some(&"421"), "{out}");
    assert_eq!(codes.len(), 3 + 6 + 2 + 5 + 1, "{out}");
}

#[tokio::test]
async fn oversized_messages_spend_the_error_budget() {
    let big = "x".repeat(1500);
    let message =
        format!("MAIL FROM:<a@s.test>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n{big}\r\n.\r\n");
    let input = format!("EHLO c\r\n{}", message.repeat(7));
    let out = converse(&Recorder::default(), &config(), input.into(), vec![]).await;
    let codes = codes(&out);
    // The error budget of config() is five: the fifth refusal closes the session.
    assert_eq!(codes.iter().filter(|c| **c == "552").count(), 5, "{out}");
    assert_eq!(codes.last(), Some(&"421"), "{out}");
}

#[tokio::test]
async fn an_accepted_message_restarts_the_count_of_commands_without_mail() {
    let noops = "NOOP\r\n".repeat(10);
    let message = "MAIL FROM:<a@s.test>\r\nRCPT TO:<b@example.com>\r\nDATA\r\nx\r\n.\r\n";
    let nine = "NOOP\r\n".repeat(9);
    let input = format!("EHLO c\r\n{noops}{message}{nine}RSET\r\n{noops}");
    let out = converse(&Recorder::default(), &config(), input.into(), vec![]).await;
    let codes = codes(&out);
    // Ten NOOPs, the message, nine NOOPs and RSET are answered; the next NOOP is one too many.
    assert_eq!(codes.len(), 2 + 10 + 4 + 10 + 1, "{out}");
    assert_eq!(codes.iter().filter(|c| **c == "421").count(), 1, "{out}");
    assert_eq!(codes.last(), Some(&"421"), "{out}");
    assert_eq!(codes[2 + 10 + 3], "250", "the message was accepted: {out}");
}

#[tokio::test]
async fn the_tail_of_an_overlong_line_is_not_run_as_a_command() {
    let long = format!("NOOP {}MAIL FROM:<x@evil.test>\r\n", "a".repeat(8187));
    let input = format!("HELO x\r\n{long}RCPT TO:<b@example.com>\r\nQUIT\r\n").into_bytes();
    // The line up to MAIL fills one read (as from a real client), whole, cut inside the line
    // (the receiver has buffered part of it) and in small reads.
    for chunks in [vec![8], vec![], vec![8, 3000, 3000], vec![500; 40]] {
        let handler = Recorder::default();
        let out = converse(&handler, &config(), input.clone(), chunks.clone()).await;
        assert_eq!(
            codes(&out),
            ["220", "250", "500", "503", "221"],
            "{chunks:?}: {out}"
        );
        assert!(!out.contains("Sender OK"), "{out}");
    }
}

#[tokio::test]
async fn one_overlong_line_gets_one_500_and_the_session_goes_on() {
    for line in ["x".repeat(100_000), format!("NOOP {}", "a".repeat(100_000))] {
        let input = format!("EHLO c\r\n{line}\r\nNOOP\r\nQUIT\r\n").into_bytes();
        for chunks in [vec![], vec![3000; 40]] {
            let out = converse(&Recorder::default(), &config(), input.clone(), chunks).await;
            assert_eq!(codes(&out), ["220", "250", "500", "250", "221"], "{out}");
        }
    }
}

/// Runs a session (on paused time) whose client writes each chunk after its pause; returns
/// what the server wrote and how long the session lasted on the paused clock.
async fn converse_slowly(
    config: &SessionConfig,
    steps: Vec<(Duration, Vec<u8>)>,
) -> (String, Duration) {
    let handler = Recorder::default();
    let (mut client, mut server) = tokio::io::duplex(1 << 20);
    let (_stop_tx, stop) = watch::channel(false);
    let writer = tokio::spawn(async move {
        for (pause, bytes) in steps {
            tokio::time::sleep(pause).await;
            if client.write_all(&bytes).await.is_err() {
                break;
            }
        }
        let _ = client.shutdown().await;
        let mut out = Vec::new();
        let _ = client.read_to_end(&mut out).await;
        out
    });
    let started = tokio::time::Instant::now();
    let end = run(&mut server, &handler, config, Peer::default(), true, stop).await;
    let took = started.elapsed();
    assert!(end.is_ok(), "{end:?}");
    drop(server);
    let out = writer.await.unwrap_or_default();
    let out = String::from_utf8(out).unwrap_or_else(|e| panic!("replies are ASCII: {e}"));
    (out, took)
}

/// `bytes` one at a time, each after `pause`.
fn trickle(bytes: &[u8], pause: Duration) -> Vec<(Duration, Vec<u8>)> {
    bytes.iter().map(|&b| (pause, vec![b])).collect()
}

#[tokio::test(start_paused = true)]
async fn a_command_line_trickled_a_byte_at_a_time_times_out() {
    // Every byte comes well within the 5 s a read may wait, but the line never ends.
    let mut steps = vec![(Duration::ZERO, b"EHLO c\r\n".to_vec())];
    steps.extend(trickle(&[b'a'; 30], Duration::from_secs(1)));
    let (out, took) = converse_slowly(&config(), steps).await;
    assert_eq!(codes(&out), ["220", "250", "421"], "{out}");
    assert!(
        out.ends_with("421 4.4.2 Timeout, closing connection\r\n"),
        "{out}"
    );
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(6),
        "{took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_message_gets_the_data_time_limit_as_a_whole() {
    let config = config();
    assert_eq!(config.data_timeout(), Duration::from_secs(600));
    // 100 bytes, one every 4 s: slow but within 600 s, and each read within 5 s.
    let mut steps = vec![(Duration::ZERO, TO_DATA.as_bytes().to_vec())];
    steps.extend(trickle(&[b'x'; 100], Duration::from_secs(4)));
    steps.push((Duration::ZERO, b"\r\n.\r\nQUIT\r\n".to_vec()));
    let (out, _) = converse_slowly(&config, steps).await;
    assert_eq!(
        codes(&out),
        ["220", "250", "250", "250", "354", "250", "221"],
        "{out}"
    );
    // 200 bytes the same way would take 800 s: the session is closed at 600.
    let mut steps = vec![(Duration::ZERO, TO_DATA.as_bytes().to_vec())];
    steps.extend(trickle(&[b'x'; 200], Duration::from_secs(4)));
    steps.push((Duration::ZERO, b"\r\n.\r\nQUIT\r\n".to_vec()));
    let (out, took) = converse_slowly(&config, steps).await;
    assert_eq!(
        codes(&out),
        ["220", "250", "250", "250", "354", "421"],
        "{out}"
    );
    assert!(
        took >= Duration::from_secs(600) && took < Duration::from_secs(601),
        "{took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_client_that_never_reads_is_dropped_after_the_write_time_limit() {
    let handler = Recorder::default();
    // A small pipe fills up at once: the replies to the pipelined NOOPs cannot be written.
    let (mut client, mut server) = tokio::io::duplex(64);
    let (_stop_tx, stop) = watch::channel(false);
    let writer = tokio::spawn(async move {
        let _ = client.write_all(&b"NOOP\r\n".repeat(2000)).await;
        client
    });
    let config = config();
    let started = tokio::time::Instant::now();
    let session = run(&mut server, &handler, &config, Peer::default(), true, stop);
    let end = tokio::time::timeout(Duration::from_secs(3600), session).await;
    assert!(matches!(end, Ok(Ok(End::Closed))), "{end:?}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(6),
        "{took:?}"
    );
    drop(server);
    let _ = writer.await;
}

/// Runs a session (on paused time) whose client sends `before`, waits for `answer`, turns
/// `stop` true and sends `after`; returns what the server wrote and how long the session
/// lasted from the stop on the paused clock.
async fn stop_after(before: &str, answer: &str, after: &str) -> (String, Duration) {
    let handler = Recorder::default();
    let config = config();
    let (mut client, mut server) = tokio::io::duplex(1 << 16);
    let (stop_tx, stop) = watch::channel(false);
    let server_side = async move {
        let end = run(&mut server, &handler, &config, Peer::default(), true, stop).await;
        assert!(matches!(end, Ok(End::Closed)), "{end:?}");
        tokio::time::Instant::now()
    };
    let client_side = async move {
        let mut out = Vec::new();
        let _ = client.write_all(before.as_bytes()).await;
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&out).contains(answer) {
            match client.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
        let stopped_at = tokio::time::Instant::now();
        let _ = stop_tx.send(true);
        let _ = client.write_all(after.as_bytes()).await;
        let _ = client.read_to_end(&mut out).await;
        (out, stopped_at)
    };
    let (ended_at, (out, stopped_at)) = tokio::join!(server_side, client_side);
    let out = String::from_utf8(out).unwrap_or_else(|e| panic!("replies are ASCII: {e}"));
    (out, ended_at - stopped_at)
}

#[tokio::test(start_paused = true)]
async fn a_stop_during_auth_is_answered_421_at_once() {
    let (out, took) = stop_after("EHLO c\r\nAUTH LOGIN\r\n", "334 VXNlcm5hbWU6\r\n", "").await;
    assert!(
        out.ends_with("334 VXNlcm5hbWU6\r\n421 4.3.2 Server shutting down, try again later\r\n"),
        "{out}"
    );
    assert!(took < Duration::from_secs(1), "{took:?}");
}

#[tokio::test(start_paused = true)]
async fn a_stop_while_a_message_is_read_lets_it_finish_and_be_answered() {
    let (out, _) = stop_after(
        &format!("{TO_DATA}Subject: x\r\n"),
        "354 ",
        "\r\nhi\r\n.\r\n",
    )
    .await;
    assert_eq!(
        codes(&out),
        ["220", "250", "250", "250", "354", "250", "421"],
        "{out}"
    );
    assert!(
        out.ends_with("421 4.3.2 Server shutting down, try again later\r\n"),
        "{out}"
    );
}

/// Lines a client might send, well formed or not.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("EHLO client".to_string()),
        Just("HELO client".to_string()),
        Just("MAIL FROM:<a@s.test>".to_string()),
        Just("MAIL FROM:<>".to_string()),
        Just("RCPT TO:<b@example.com>".to_string()),
        Just("RCPT TO:<b@other.test>".to_string()),
        Just("DATA".to_string()),
        Just(".".to_string()),
        Just("RSET".to_string()),
        Just("AUTH LOGIN".to_string()),
        Just("AUTH PLAIN".to_string()),
        Just("BDAT 5 LAST".to_string()),
        Just("STARTTLS".to_string()),
        "[ -~]{0,80}",
        "\\PC{0,40}",
        proptest::collection::vec(any::<u8>(), 0..60)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random lines never panic or hang the session, every reply is a well-formed line,
    /// and how the bytes are cut into reads changes nothing.
    #[test]
    fn random_input_gets_well_formed_replies_however_it_is_cut(
        lines in proptest::collection::vec(line(), 0..30),
        chunks in proptest::collection::vec(1usize..64, 0..40),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let input: Vec<u8> = lines.join("\r\n").into_bytes();
        let (whole, cut) = runtime.block_on(async {
            let whole = converse(&Recorder::default(), &config(), input.clone(), vec![]).await;
            let cut = converse(&Recorder::default(), &config(), input, chunks).await;
            (whole, cut)
        });
        for reply in whole.split("\r\n").filter(|l| !l.is_empty()) {
            let code = reply.get(..3).and_then(|c| c.parse::<u16>().ok());
            prop_assert!(code.is_some_and(|c| (200..600).contains(&c)), "bad line {reply:?}");
        }
        prop_assert_eq!(whole, cut);
    }
}
