//! `POST /webhooks/sns`: SES feedback through SNS, signed with a test key whose self-signed
//! certificate a loopback HTTP server serves (its `host:port` is the one listed certificate
//! host), in the shapes SES and SNS really send.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{OriginalUri, State};
use axum::http::Method;
use base64::Engine as _;
use posthorn_core::app::sns::SnsReceiver;
use posthorn_core::model::{EmailId, EmailRecord, EmailStatus};
use posthorn_core::ports::EventQuery;
use posthorn_core::sns::{SnsHostRules, TopicAllowList};
use posthorn_server::{router, AppState};
use posthorn_webhook::{SnsFetchSettings, SnsHttpFetcher};
use serde_json::{json, Value};

use crate::harness::{send_body, Res, TestApp, ADMIN};
use crate::sns_signer::{sign, SIGNER};

const TOPIC: &str = "arn:aws:sns:us-east-1:123456789012:ses-feedback";
const OTHER_TOPIC: &str = "arn:aws:sns:us-east-1:999999999999:attacker";

/// A loopback HTTP server that serves the certificate at any `*.pem` path and answers the
/// subscribe URL, counting requests per path.
struct CertServer {
    base: String,
    host_port: String,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl CertServer {
    async fn start() -> Self {
        let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let app = axum::Router::new()
            .fallback(
                |State(hits): State<Arc<Mutex<HashMap<String, usize>>>>,
                 OriginalUri(uri): OriginalUri| async move {
                    let path = uri.path().to_string();
                    *hits.lock().expect("hits").entry(path.clone()).or_default() += 1;
                    if path.ends_with(".pem") {
                        (axum::http::StatusCode::OK, SIGNER.1.clone())
                    } else {
                        (
                            axum::http::StatusCode::OK,
                            "<ConfirmSubscriptionResponse/>".to_string(),
                        )
                    }
                },
            )
            .with_state(hits.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            base: format!("http://{addr}"),
            host_port: addr.to_string(),
            hits,
        }
    }

    fn hits(&self, path: &str) -> usize {
        self.hits
            .lock()
            .expect("hits")
            .get(path)
            .copied()
            .unwrap_or(0)
    }

    fn total(&self) -> usize {
        self.hits.lock().expect("hits").values().sum()
    }

    fn cert_url(&self) -> String {
        format!("{}/SimpleNotificationService-test.pem", self.base)
    }
}

struct Sns {
    app: TestApp,
    server: CertServer,
}

async fn setup() -> Sns {
    let mut app = TestApp::new().await;
    let server = CertServer::start().await;
    let hosts = SnsHostRules::parse(&server.host_port).expect("host list");
    let topics = TopicAllowList::parse(TOPIC).expect("topics");
    let fetcher = SnsHttpFetcher::new(hosts.clone(), SnsFetchSettings::default()).expect("fetcher");
    let receiver = SnsReceiver::new(Arc::new(fetcher), topics, hosts);
    app.router =
        router(AppState::new(app.engine.clone(), Some(ADMIN.to_string())).with_sns(receiver));
    Sns { app, server }
}

impl Sns {
    /// An SNS notification carrying `ses` (signed with `version`).
    fn notification(&self, message_id: &str, ses: &Value, version: u8) -> Value {
        let mut message = json!({
            "Type": "Notification",
            "MessageId": message_id,
            "TopicArn": TOPIC,
            "Message": ses.to_string(),
            "Timestamp": "2026-11-21T10:05:00.000Z",
            "SigningCertURL": self.server.cert_url(),
            "UnsubscribeURL": format!("{}/?Action=Unsubscribe", self.server.base),
        });
        sign(&mut message, version);
        message
    }

    async fn post(&self, message: &Value) -> Res {
        self.app
            .raw(
                Method::POST,
                "/webhooks/sns",
                None,
                Some(&message.to_string()),
                Some("text/plain; charset=UTF-8"),
                &[(
                    "x-amz-sns-message-type",
                    message["Type"].as_str().unwrap_or("Notification"),
                )],
            )
            .await
    }

    /// Sends one email to a subscribed contact (tracking as asked), delivers it, and
    /// returns its record.
    async fn sent_email(&self, to: &str, tracking: bool) -> EmailRecord {
        let mut body = send_body(json!(to));
        body["subscribed"] = json!(true);
        body["tracking"] = json!(tracking);
        self.send_and_run(body).await
    }

    /// Posts `body` to `/v1/send`, runs the jobs, and returns the first email's record.
    async fn send_and_run(&self, body: Value) -> EmailRecord {
        let res = self.app.post("/v1/send", body).await.expect(200);
        let id = res.body["data"]["emails"][0]["email"]
            .as_str()
            .expect("email id")
            .to_string();
        self.app.run_jobs().await;
        self.email(&id).await
    }

    async fn email(&self, id: &str) -> EmailRecord {
        self.app
            .engine
            .store
            .email(&self.app.ws(), &EmailId::from(id))
            .await
            .expect("read")
            .expect("email exists")
    }

    async fn subscribed(&self, email: &EmailRecord) -> bool {
        self.app
            .engine
            .store
            .contact(&self.app.ws(), &email.contact_id)
            .await
            .expect("read")
            .expect("contact")
            .subscribed
    }

    async fn events(&self, name: &str) -> Vec<Value> {
        let query = EventQuery {
            name: Some(name.to_string()),
            contact_id: None,
            limit: 100,
        };
        self.app
            .engine
            .store
            .events(&self.app.ws(), &query)
            .await
            .expect("events")
            .into_iter()
            .map(|e| e.data)
            .collect()
    }
}

/// The `mail` object of an SES notification about `email`, matched by SES's message id
/// (the provider id) unless `by_header`, then only by the `Message-ID` header.
fn mail(email: &EmailRecord, by_header: bool) -> Value {
    let ses_id = if by_header {
        "0100018f-unknown-to-posthorn".to_string()
    } else {
        email.provider_message_id.clone().expect("sent")
    };
    json!({
        "timestamp": "2026-11-21T10:00:00.000Z",
        "source": "hello@example.com",
        "sourceArn": "arn:aws:ses:us-east-1:123456789012:identity/example.com",
        "sendingAccountId": "123456789012",
        "messageId": ses_id,
        "destination": [email.to.email],
        "headersTruncated": false,
        "commonHeaders": {
            "from": ["hello@example.com"],
            "to": [email.to.email],
            "messageId": format!("<{}>", email.message_id),
            "subject": email.subject
        }
    })
}

fn delivery(email: &EmailRecord, by_header: bool) -> Value {
    json!({"notificationType": "Delivery", "mail": mail(email, by_header), "delivery": {
        "timestamp": "2026-11-21T10:05:00.000Z", "processingTimeMillis": 546,
        "recipients": [email.to.email], "smtpResponse": "250 2.6.0 Message received",
        "remoteMtaIp": "192.0.2.10", "reportingMTA": "a8-70.smtp-out.amazonses.com"}})
}

fn bounce(email: &EmailRecord, kind: &str, sub: &str, status: &str) -> Value {
    json!({"notificationType": "Bounce", "mail": mail(email, false), "bounce": {
        "bounceType": kind, "bounceSubType": sub,
        "bouncedRecipients": [{"emailAddress": email.to.email, "action": "failed",
            "status": status, "diagnosticCode": format!("smtp; 550 {status} mailbox problem")}],
        "timestamp": "2026-11-21T10:04:00.000Z", "feedbackId": "0100018f-feedback",
        "remoteMtaIp": "192.0.2.10", "reportingMTA": "dsn; a8-70.smtp-out.amazonses.com"}})
}

fn complaint(email: &EmailRecord) -> Value {
    json!({"notificationType": "Complaint", "mail": mail(email, false), "complaint": {
        "feedbackId": "0100018f-complaint", "complaintSubType": null,
        "complainedRecipients": [{"emailAddress": email.to.email}],
        "timestamp": "2026-11-21T10:06:00.000Z", "userAgent": "Yahoo!-Mail-Feedback/2.0",
        "complaintFeedbackType": "abuse", "arrivalDate": "2026-11-21T10:05:30.000Z"}})
}

fn open(email: &EmailRecord) -> Value {
    json!({"eventType": "Open", "mail": mail(email, false), "open": {
        "ipAddress": "192.0.2.1", "timestamp": "2026-11-21T10:07:00.000Z",
        "userAgent": "Mozilla/5.0"}})
}

fn click(email: &EmailRecord) -> Value {
    json!({"eventType": "Click", "mail": mail(email, false), "click": {
        "ipAddress": "192.0.2.1", "timestamp": "2026-11-21T10:08:00.000Z",
        "link": "https://shop.example/a", "linkTags": {"campaign": ["x"]},
        "userAgent": "Mozilla/5.0"}})
}

#[tokio::test]
async fn a_topic_not_listed_is_refused_and_nothing_is_fetched() {
    let sns = setup().await;
    let email = sns.sent_email("ada@example.org", true).await;
    let mut message = sns.notification(
        "m-other",
        &bounce(&email, "Permanent", "General", "5.1.1"),
        2,
    );
    message["TopicArn"] = json!(OTHER_TOPIC);
    sign(&mut message, 2);
    sns.post(&message).await.expect_error(403, "FORBIDDEN");
    assert_eq!(
        sns.server.total(),
        0,
        "nothing may be fetched for another topic"
    );
    assert_eq!(sns.email(email.id.as_str()).await.status, EmailStatus::Sent);
    assert!(sns.subscribed(&email).await);

    // Nor is another topic's subscription confirmed.
    let mut confirm = json!({
        "Type": "SubscriptionConfirmation", "MessageId": "c-other", "Token": "t",
        "TopicArn": OTHER_TOPIC, "Message": "You have chosen to subscribe",
        "SubscribeURL": format!("{}/confirm?Token=t", sns.server.base),
        "Timestamp": "2026-11-21T10:00:00.000Z", "SigningCertURL": sns.server.cert_url(),
    });
    sign(&mut confirm, 1);
    sns.post(&confirm).await.expect_error(403, "FORBIDDEN");
    assert_eq!(sns.server.total(), 0);
}

#[tokio::test]
async fn a_bad_signature_is_refused_and_changes_nothing() {
    let sns = setup().await;
    let email = sns.sent_email("ada@example.org", true).await;
    for version in [1, 2] {
        let mut message = sns.notification(
            "m-forged",
            &bounce(&email, "Permanent", "General", "5.1.1"),
            version,
        );
        // The signature of a transient bounce on a permanent one's message.
        let genuine = sns.notification(
            "m-forged",
            &bounce(&email, "Transient", "General", "4.4.7"),
            version,
        );
        message["Signature"] = genuine["Signature"].clone();
        sns.post(&message).await.expect_error(403, "FORBIDDEN");
        let mut garbage = message.clone();
        garbage["Signature"] = json!("AAAA");
        sns.post(&garbage).await.expect_error(403, "FORBIDDEN");
    }
    let stored = sns.email(email.id.as_str()).await;
    assert_eq!(stored.status, EmailStatus::Sent);
    assert_eq!(stored.lifecycle.bounce_type, None);
    assert!(sns.subscribed(&email).await);
    assert!(sns.events("email.bounce").await.is_empty());
    // A forged message does not use up its MessageId: the genuine one is still processed.
    let genuine = sns.notification(
        "m-forged",
        &bounce(&email, "Permanent", "General", "5.1.1"),
        2,
    );
    let res = sns.post(&genuine).await.expect(200);
    assert_eq!(res.body["data"]["outcome"], "recorded");
}

#[tokio::test]
async fn a_certificate_on_a_host_not_allowed_is_refused_without_fetching() {
    let sns = setup().await;
    let email = sns.sent_email("ada@example.org", true).await;
    for url in [
        // Loopback, but not the listed port.
        "http://127.0.0.1:1/cert.pem".to_string(),
        // An AWS-looking host that is not sns.<region>.amazonaws.com.
        "https://sns.us-east-1.amazonaws.com.evil.example/cert.pem".to_string(),
        // The right host over plain http.
        "http://sns.us-east-1.amazonaws.com/cert.pem".to_string(),
    ] {
        let mut message = sns.notification("m-host", &delivery(&email, false), 2);
        message["SigningCertURL"] = json!(url);
        sign(&mut message, 2);
        sns.post(&message).await.expect_error(403, "FORBIDDEN");
    }
    assert_eq!(sns.server.total(), 0);
    assert_eq!(sns.email(email.id.as_str()).await.status, EmailStatus::Sent);
}

#[tokio::test]
async fn a_subscription_of_a_listed_topic_is_confirmed_once() {
    let sns = setup().await;
    let mut confirm = json!({
        "Type": "SubscriptionConfirmation", "MessageId": "165545c9-confirm", "Token": "2336412f37",
        "TopicArn": TOPIC,
        "Message": format!("You have chosen to subscribe to the topic {TOPIC}.\nTo confirm the subscription, visit the SubscribeURL included in this message."),
        "SubscribeURL": format!("{}/confirm?Action=ConfirmSubscription&Token=2336412f37", sns.server.base),
        "Timestamp": "2026-11-21T10:00:00.000Z", "SigningCertURL": sns.server.cert_url(),
    });
    sign(&mut confirm, 1);
    let res = sns.post(&confirm).await.expect(200);
    assert_eq!(res.body["data"]["outcome"], "subscriptionConfirmed");
    assert_eq!(sns.server.hits("/confirm"), 1);
    // SNS delivers the same confirmation again: not fetched twice.
    let res = sns.post(&confirm).await.expect(200);
    assert_eq!(res.body["data"]["outcome"], "duplicate");
    assert_eq!(sns.server.hits("/confirm"), 1);

    // A subscribe URL on a host the rules refuse is not fetched.
    let mut elsewhere = confirm.clone();
    elsewhere["MessageId"] = json!("confirm-elsewhere");
    elsewhere["SubscribeURL"] = json!("http://127.0.0.2:9/confirm?Token=x");
    sign(&mut elsewhere, 2);
    sns.post(&elsewhere).await.expect_error(403, "FORBIDDEN");
    assert_eq!(sns.server.hits("/confirm"), 1);
}

#[tokio::test]
async fn deliveries_match_by_provider_id_or_header_and_redeliveries_count_once() {
    let sns = setup().await;
    let first = sns.sent_email("ada@example.org", true).await;
    let second = sns.sent_email("bob@example.org", true).await;

    let by_id = sns.notification("m-delivery-1", &delivery(&first, false), 1);
    let res = sns.post(&by_id).await.expect(200);
    assert_eq!(res.body["data"]["outcome"], "recorded");
    assert_eq!(res.body["data"]["emailId"], first.id.as_str());
    assert_eq!(res.body["data"]["event"], "email.delivery");
    // The same message again (SNS redelivers): processed once.
    let res = sns.post(&by_id).await.expect(200);
    assert_eq!(res.body["data"]["outcome"], "duplicate");

    let by_header = sns.notification("m-delivery-2", &delivery(&second, true), 2);
    let res = sns.post(&by_header).await.expect(200);
    assert_eq!(res.body["data"]["emailId"], second.id.as_str());

    for email in [&first, &second] {
        let stored = sns.email(email.id.as_str()).await;
        assert_eq!(stored.status, EmailStatus::Delivered);
        assert!(stored.lifecycle.delivered_at.is_some());
    }
    assert_eq!(sns.events("email.delivery").await.len(), 2);
    // One certificate fetch served every message.
    assert_eq!(sns.server.hits("/SimpleNotificationService-test.pem"), 1);

    // A notification about mail Posthorn never sent is acknowledged and changes nothing.
    let mut stranger = delivery(&first, true);
    stranger["mail"]["commonHeaders"]["messageId"] = json!("<nobody@elsewhere.example>");
    let res = sns
        .post(&sns.notification("m-stranger", &stranger, 2))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["outcome"], "noEmail");
}

#[tokio::test]
async fn a_permanent_bounce_unsubscribes_once_and_a_late_delivery_keeps_it() {
    let sns = setup().await;
    let email = sns.sent_email("ada@example.org", true).await;
    let res = sns
        .post(&sns.notification(
            "m-bounce-1",
            &bounce(&email, "Permanent", "General", "5.1.1"),
            2,
        ))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["event"], "email.bounce");
    assert_eq!(res.body["data"]["unsubscribed"], true);
    // Another permanent bounce report (a new SNS message) changes nothing more.
    let res = sns
        .post(&sns.notification(
            "m-bounce-2",
            &bounce(&email, "Permanent", "NoEmail", "5.1.1"),
            1,
        ))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["outcome"], "unchanged");
    // A late delivery report does not undo the bounce.
    let res = sns
        .post(&sns.notification("m-late-delivery", &delivery(&email, false), 2))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["outcome"], "unchanged");

    let stored = sns.email(email.id.as_str()).await;
    assert_eq!(stored.status, EmailStatus::Bounced);
    assert!(stored.lifecycle.delivered_at.is_none());
    assert!(!sns.subscribed(&email).await);
    let bounces = sns.events("email.bounce").await;
    assert_eq!(bounces.len(), 1);
    assert_eq!(bounces[0]["bounceType"], "Permanent");
    let unsubscribed = sns.events("contact.unsubscribed").await;
    assert_eq!(unsubscribed, vec![json!({"reason": "bounce"})]);
}

#[tokio::test]
async fn a_transient_or_policy_bounce_changes_only_the_record() {
    let sns = setup().await;
    let email = sns.sent_email("ada@example.org", true).await;
    let res = sns
        .post(&sns.notification(
            "m-transient",
            &bounce(&email, "Transient", "MailboxFull", "4.2.2"),
            2,
        ))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["outcome"], "recorded");
    assert_eq!(res.body["data"]["unsubscribed"], false);
    // A "Permanent" general bounce whose status is a policy refusal (5.7.1) is not about
    // the recipient: transient, like the same SMTP reply.
    let res = sns
        .post(&sns.notification(
            "m-policy",
            &bounce(&email, "Permanent", "General", "5.7.1"),
            1,
        ))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["unsubscribed"], false);
    let stored = sns.email(email.id.as_str()).await;
    assert_eq!(stored.status, EmailStatus::Sent);
    assert_eq!(
        stored.lifecycle.bounce_type,
        Some(posthorn_core::model::BounceType::Transient)
    );
    assert!(stored
        .lifecycle
        .bounce_detail
        .as_deref()
        .is_some_and(|d| d.contains("5.7.1")));
    assert!(sns.subscribed(&email).await);
    assert!(sns.events("contact.unsubscribed").await.is_empty());
}

#[tokio::test]
async fn a_complaint_unsubscribes_with_its_reason() {
    let sns = setup().await;
    let email = sns.sent_email("ada@example.org", true).await;
    let res = sns
        .post(&sns.notification("m-complaint", &complaint(&email), 1))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["event"], "email.complaint");
    assert_eq!(res.body["data"]["unsubscribed"], true);
    assert_eq!(
        sns.email(email.id.as_str()).await.status,
        EmailStatus::Complained
    );
    assert_eq!(
        sns.events("contact.unsubscribed").await,
        vec![json!({"reason": "complaint"})]
    );
}

#[tokio::test]
async fn a_public_key_cannot_subscribe_again_whom_a_complaint_unsubscribed() {
    let sns = setup().await;
    let email = sns.sent_email("ada@example.org", true).await;
    sns.post(&sns.notification("m-complaint", &complaint(&email), 1))
        .await
        .expect(200);
    assert!(!sns.subscribed(&email).await);
    let track = |key: String, address: &'static str| {
        let app = &sns.app;
        async move {
            app.call(
                Method::POST,
                "/v1/track",
                Some(&key),
                Some(json!({"email": address, "event": "signed-up", "subscribed": true})),
                &[],
            )
            .await
            .expect(200)
        }
    };
    // A web page's call is recorded, and the contact stays unsubscribed.
    track(sns.app.pk.clone(), "ada@example.org").await;
    assert!(!sns.subscribed(&email).await);
    assert_eq!(sns.events("signed-up").await.len(), 1);
    // A contact who unsubscribed by hand may sign up again from a page.
    let bob = sns.sent_email("bob@example.org", true).await;
    sns.set_subscribed(&bob, false).await;
    track(sns.app.pk.clone(), "bob@example.org").await;
    assert!(sns.subscribed(&bob).await);
    // The workspace's own servers (a secret key) may lift the complaint's unsubscription.
    track(sns.app.sk.clone(), "ada@example.org").await;
    assert!(sns.subscribed(&email).await);
}

#[tokio::test]
async fn ses_opens_and_clicks_count_only_where_posthorn_does_not_track() {
    let sns = setup().await;
    let tracked = sns.sent_email("ada@example.org", true).await;
    assert!(
        tracked.html.contains("/t/o/"),
        "Posthorn's pixel is in the mail"
    );
    let res = sns
        .post(&sns.notification("m-open-tracked", &open(&tracked), 2))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["outcome"], "trackedByPosthorn");
    assert_eq!(sns.email(tracked.id.as_str()).await.lifecycle.opens, 0);

    let untracked = sns.sent_email("bob@example.org", false).await;
    assert!(!untracked.html.contains("/t/o/"));
    let res = sns
        .post(&sns.notification("m-open", &open(&untracked), 2))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["event"], "email.open");
    let res = sns
        .post(&sns.notification("m-click", &click(&untracked), 1))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["event"], "email.click");
    let stored = sns.email(untracked.id.as_str()).await;
    assert_eq!((stored.lifecycle.opens, stored.lifecycle.clicks), (1, 1));
    assert_eq!(stored.status, EmailStatus::Clicked);
    let clicks = sns.events("email.click").await;
    assert_eq!(clicks.len(), 1);
    assert_eq!(clicks[0]["link"], "https://shop.example/a");
}

#[tokio::test]
async fn received_mail_becomes_email_received_once() {
    let sns = setup().await;
    let raw =
        "From: someone@elsewhere.example\r\nTo: inbox@example.com\r\nSubject: Hi\r\n\r\nHello";
    let received = json!({"notificationType": "Received",
        "mail": {"timestamp": "2026-11-21T10:00:00.000Z", "source": "someone@elsewhere.example",
            "messageId": "o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g1", "destination": ["inbox@example.com"],
            "headersTruncated": false,
            "commonHeaders": {"from": ["someone@elsewhere.example"], "to": ["inbox@example.com"],
                "messageId": "<inbound-1@elsewhere.example>", "subject": "Hi"}},
        "receipt": {"timestamp": "2026-11-21T10:00:00.000Z", "processingTimeMillis": 222,
            "recipients": ["inbox@example.com"], "spamVerdict": {"status": "PASS"},
            "virusVerdict": {"status": "FAIL"}, "spfVerdict": {"status": "PASS"},
            "dkimVerdict": {"status": "DISABLED"}, "dmarcVerdict": {"status": "PASS"},
            "action": {"type": "SNS", "topicArn": TOPIC, "encoding": "BASE64"}},
        "content": base64::engine::general_purpose::STANDARD.encode(raw)});

    // example.com does not receive mail yet: acknowledged (SNS must not redeliver), not stored.
    let res = sns
        .post(&sns.notification("m-received-early", &received, 2))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["outcome"], "inboundNotStored");

    crate::inbound::enable_inbound(&sns.app).await;
    let res = sns
        .post(&sns.notification("m-received", &received, 2))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["outcome"], "inbound");
    let email_id = res.body["data"]["emailId"].clone();
    assert!(email_id.is_string(), "{}", res.body);
    // A redelivery of the same SNS message stores nothing more.
    let again = sns
        .post(&sns.notification("m-received", &received, 2))
        .await
        .expect(200);
    assert_eq!(again.body["data"]["outcome"], "duplicate");
    sns.app.run_jobs().await;
    let events = crate::inbound::received(&sns.app).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["emailId"], email_id);
    assert_eq!(events[0]["data"]["subject"], "Hi");
    assert_eq!(events[0]["data"]["from"], "someone@elsewhere.example");
    // SES's verdicts stand where it gave one: SPF (Posthorn has no client address to check
    // it against, so its own would be GRAY) and the virus scan (Posthorn has none). Where
    // SES did not check (DKIM `DISABLED`), Posthorn's own verdict is used: not signed.
    let data = &events[0]["data"];
    assert_eq!(data["spfVerdict"], "PASS", "{data}");
    assert_eq!(data["virusVerdict"], "FAIL", "{data}");
    assert_eq!(data["spamVerdict"], "PASS", "{data}");
    assert_eq!(data["dmarcVerdict"], "PASS", "{data}");
    assert_eq!(data["dkimVerdict"], "GRAY", "{data}");
    // An infected message makes no contact of its sender, and its event has none.
    assert!(events[0]["contactId"].is_null(), "{:?}", events[0]);
    let contacts = sns
        .app
        .get("/contacts?search=someone%40elsewhere.example")
        .await
        .expect(200);
    assert_eq!(contacts.body["data"], json!([]), "{}", contacts.body);

    // Without content (an S3 action) nothing can be stored: acknowledged and said so.
    let mut no_content = received.clone();
    no_content
        .as_object_mut()
        .expect("object")
        .remove("content");
    no_content["receipt"]["action"] = json!({"type": "S3", "bucketName": "b", "objectKey": "k"});
    let res = sns
        .post(&sns.notification("m-received-s3", &no_content, 1))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["outcome"], "inboundNotStored");
    assert_eq!(crate::inbound::received(&sns.app).await.len(), 1);

    // Bad base64 content in a signed Received notification is a bad request.
    let mut broken = received.clone();
    broken["content"] = json!("***");
    sns.post(&sns.notification("m-received-broken", &broken, 2))
        .await
        .expect_error(400, "BAD_REQUEST");
}

#[tokio::test]
async fn bodies_that_are_not_sns_messages_are_bad_requests() {
    let sns = setup().await;
    for body in ["", "not json", "[]", "{\"Type\": \"Notification\"}"] {
        sns.app
            .raw(
                Method::POST,
                "/webhooks/sns",
                None,
                Some(body),
                Some("text/plain"),
                &[],
            )
            .await
            .expect_error(400, "BAD_REQUEST");
    }
    assert_eq!(sns.server.total(), 0);
}

#[tokio::test]
async fn without_a_receiver_every_message_is_refused() {
    let app = TestApp::new().await;
    let res = app
        .raw(
            Method::POST,
            "/webhooks/sns",
            None,
            Some("{}"),
            Some("text/plain"),
            &[],
        )
        .await;
    res.expect_error(403, "FORBIDDEN");
}

#[tokio::test]
async fn a_message_older_than_seven_days_is_refused_and_changes_nothing() {
    let sns = setup().await;
    let email = sns.sent_email("ada@example.org", true).await;
    let mut stale = sns.notification("m-stale", &delivery(&email, false), 1);
    // Eight days before the test clock (2026-11-21T10:00Z), signed as SNS would have.
    stale["Timestamp"] = json!("2026-11-13T10:00:00.000Z");
    sign(&mut stale, 1);
    let res = sns.post(&stale).await.expect_error(403, "FORBIDDEN");
    assert!(res.body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("older than 7 days")));
    assert_eq!(sns.email(email.id.as_str()).await.status, EmailStatus::Sent);
    assert!(sns.events("email.delivery").await.is_empty());
}

impl Sns {
    /// Subscribes or unsubscribes the contact `email` went to, with the secret key.
    async fn set_subscribed(&self, email: &EmailRecord, subscribed: bool) {
        self.app
            .patch(
                &format!("/contacts/{}", email.contact_id.as_str()),
                json!({ "subscribed": subscribed }),
            )
            .await
            .expect(200);
    }

    /// Sends one transactional email to `to` (its subscription left as it is), runs the
    /// jobs, and returns its record.
    async fn send_to(&self, to: &str) -> EmailRecord {
        self.send_and_run(send_body(json!(to))).await
    }
}

#[tokio::test]
async fn mail_to_an_address_that_bounced_for_good_is_suppressed_until_subscribed_again() {
    let sns = setup().await;
    let first = sns.sent_email("ada@example.org", true).await;
    assert_eq!(first.status, EmailStatus::Sent);
    sns.post(&sns.notification(
        "m-bounce",
        &bounce(&first, "Permanent", "General", "5.1.1"),
        2,
    ))
    .await
    .expect(200);
    // Accepted and kept, but not handed to the transport.
    let suppressed = sns.send_to("ada@example.org").await;
    assert_eq!(suppressed.status, EmailStatus::Cancelled);
    assert!(suppressed.sent_at.is_none() && suppressed.provider_message_id.is_none());
    let why = suppressed.error.as_deref().unwrap_or_default();
    assert!(
        why.contains("suppressed") && why.contains("bounced"),
        "{why}"
    );
    assert_eq!(sns.events("email.sent").await.len(), 1, "only the first");
    // A transient bounce suppresses nothing, and one who unsubscribed by hand still gets
    // transactional mail.
    let bob = sns.sent_email("bob@example.org", true).await;
    sns.post(&sns.notification(
        "m-transient",
        &bounce(&bob, "Transient", "MailboxFull", "4.2.2"),
        2,
    ))
    .await
    .expect(200);
    sns.set_subscribed(&bob, false).await;
    assert_eq!(
        sns.send_to("bob@example.org").await.status,
        EmailStatus::Sent
    );
    // The workspace subscribing the contact again lifts the suppression, and a later
    // manual unsubscription does not bring it back.
    sns.set_subscribed(&first, true).await;
    sns.set_subscribed(&first, false).await;
    assert_eq!(
        sns.send_to("ada@example.org").await.status,
        EmailStatus::Sent
    );
}

#[tokio::test]
async fn a_complaint_suppresses_its_recipient_only_and_one_who_unsubscribed_first() {
    let sns = setup().await;
    // Ada unsubscribed by hand, then complained about a transactional email: her
    // unsubscription was not made by the complaint, but mail to her is suppressed all the same.
    let ada = sns.sent_email("ada@example.org", true).await;
    sns.set_subscribed(&ada, false).await;
    let receipt = sns.send_to("ada@example.org").await;
    assert_eq!(receipt.status, EmailStatus::Sent);
    sns.post(&sns.notification("m-complaint", &complaint(&receipt), 1))
        .await
        .expect(200);
    sns.sent_email("bob@example.org", true).await;
    let res = sns
        .app
        .post(
            "/v1/send",
            send_body(json!(["ada@example.org", "bob@example.org"])),
        )
        .await
        .expect(200);
    sns.app.run_jobs().await;
    let mut statuses = Vec::new();
    for sent in res.body["data"]["emails"].as_array().expect("emails") {
        let email = sns.email(sent["email"].as_str().expect("id")).await;
        statuses.push((email.to.email.clone(), email.status, email.error.clone()));
    }
    statuses.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(statuses[0].0, "ada@example.org");
    assert_eq!(statuses[0].1, EmailStatus::Cancelled);
    assert!(statuses[0]
        .2
        .as_deref()
        .is_some_and(|e| e.contains("reported mail as spam")));
    assert_eq!(
        (statuses[1].0.as_str(), statuses[1].1),
        ("bob@example.org", EmailStatus::Sent)
    );
}
