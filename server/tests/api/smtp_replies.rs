//! SMTP replies classified, end to end: the real SMTP transport against a real SMTP server
//! (the `mailin` protocol engine on 127.0.0.1) that accepts some recipients and refuses
//! others with different codes.

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, TcpListener};
use std::sync::Arc;

use mailin::{Action, Handler, Response, SessionBuilder};
use posthorn_core::model::{BounceType, EmailId, EmailRecord};
use posthorn_core::Engine;
use posthorn_smtp::SmtpTransport;
use serde_json::{json, Value};

use crate::harness::{send_body, TestApp};

/// Answers RCPT by the local part of the recipient.
#[derive(Clone)]
struct Recipients;

impl Handler for Recipients {
    fn rcpt(&mut self, to: &str) -> Response {
        let local = to.trim_matches(['<', '>']).split('@').next().unwrap_or("");
        match local {
            "gone" => Response::custom(550, "5.1.1 no such user here".into()),
            "disabled" => Response::custom(552, "5.2.1 mailbox disabled".into()),
            "relay" => Response::custom(554, "5.7.1 relay access denied".into()),
            "busy" => Response::custom(451, "4.3.0 try again later".into()),
            _ => mailin::response::OK,
        }
    }
}

/// Starts the server on a loopback port of its own; returns the port.
fn smtp_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let remote = stream
                    .peer_addr()
                    .map(|a| a.ip())
                    .unwrap_or(IpAddr::from([127, 0, 0, 1]));
                let mut session = SessionBuilder::new("mx.test").build(remote, Recipients);
                let Ok(mut out) = stream.try_clone() else {
                    return;
                };
                let mut reader = BufReader::new(stream);
                if session.greeting().write_to(&mut out).is_err() {
                    return;
                }
                let mut line = Vec::new();
                loop {
                    line.clear();
                    match reader.read_until(b'\n', &mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                    let response = session.process(&line);
                    match response.action {
                        Action::NoReply => continue,
                        Action::Close => {
                            let _ = response.write_to(&mut out);
                            let _ = out.flush();
                            return;
                        }
                        _ => {
                            if response.write_to(&mut out).is_err() || out.flush().is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    port
}

async fn email(app: &TestApp, id: &str) -> EmailRecord {
    app.engine
        .store
        .email(&app.ws(), &EmailId::from(id))
        .await
        .expect("store")
        .expect("email")
}

async fn subscribed(app: &TestApp, email: &EmailRecord) -> bool {
    app.engine
        .store
        .contact(&app.ws(), &email.contact_id)
        .await
        .expect("store")
        .expect("contact")
        .subscribed
}

fn status(email: &EmailRecord) -> String {
    serde_json::to_value(email.status)
        .expect("json")
        .as_str()
        .expect("str")
        .to_owned()
}

#[tokio::test]
async fn smtp_replies_are_classified() {
    let app = TestApp::new().await;
    let port = smtp_server();
    let smtp = SmtpTransport::from_url(&format!("smtp://127.0.0.1:{port}")).expect("url");
    let engine = Engine {
        transport: Arc::new(smtp),
        ..app.engine.clone()
    };
    let to = ["ok", "gone", "disabled", "relay", "busy"].map(|l| format!("{l}@x.com"));
    for address in &to {
        app.post("/contacts", json!({"email": address, "subscribed": true}))
            .await
            .expect(201);
    }
    let res = app.post("/v1/send", send_body(json!(to))).await.expect(200);
    let ids: Vec<String> = res.body["data"]["emails"]
        .as_array()
        .expect("emails")
        .iter()
        .map(|e| e["email"].as_str().expect("id").to_owned())
        .collect();
    engine.run_due_jobs().await.expect("jobs");

    let ok = email(&app, &ids[0]).await;
    assert_eq!(status(&ok), "SENT");
    assert!(subscribed(&app, &ok).await);

    // Recipient-specific refusals: a permanent bounce with the reply, and the unsubscribe.
    for (id, words) in [(&ids[1], "550 5.1.1 no such user"), (&ids[2], "552 5.2.1")] {
        let bounced = email(&app, id).await;
        assert_eq!(status(&bounced), "BOUNCED", "{words}");
        assert_eq!(bounced.lifecycle.bounce_type, Some(BounceType::Permanent));
        let detail = bounced.lifecycle.bounce_detail.clone().unwrap_or_default();
        assert!(detail.contains(words), "{detail}");
        assert!(!subscribed(&app, &bounced).await, "{words}");
    }

    // A relay denial fails the email with the reply and a transient bounce, and
    // unsubscribes nobody.
    let relay = email(&app, &ids[3]).await;
    assert_eq!(status(&relay), "FAILED");
    assert!(relay
        .error
        .as_deref()
        .is_some_and(|e| e.contains("5.7.1 relay access denied")));
    assert_eq!(relay.lifecycle.bounce_type, Some(BounceType::Transient));
    assert!(subscribed(&app, &relay).await);

    // A 4xx is retried later.
    let busy = email(&app, &ids[4]).await;
    assert_eq!(status(&busy), "QUEUED");
    assert!(busy.lifecycle.bounce_type.is_none());

    let bounces = app.get("/events?eventName=email.bounce").await.expect(200);
    let data = bounces.body["events"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let kinds = |kind: &str| {
        data.iter()
            .filter(|e| e["data"]["bounceType"] == json!(kind))
            .count()
    };
    assert_eq!((kinds("Permanent"), kinds("Transient")), (2, 1), "{data:?}");
    let unsubscribed = app
        .get("/events?eventName=contact.unsubscribed")
        .await
        .expect(200);
    let reasons: Vec<Value> = unsubscribed.body["events"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| e["data"]["reason"].clone())
        .collect();
    assert_eq!(reasons, vec![json!("bounce"), json!("bounce")]);
}
