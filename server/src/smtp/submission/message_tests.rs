use proptest::prelude::*;

use super::*;

const MIXED: &str = "From: \"Shop Team\" <Hello@Example.com>\r\n\
To: Ada <ada@example.org>, grace@example.org\r\n\
Subject: =?utf-8?q?Caf=C3=A9?= {{not a template}}\r\n\
Reply-To: support@example.com\r\n\
X-Campaign: spring\r\n\
Received: from somewhere\r\n\
Message-ID: <abc@client>\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"outer\"\r\n\
\r\n\
--outer\r\n\
Content-Type: multipart/related; boundary=\"rel\"\r\n\
\r\n\
--rel\r\n\
Content-Type: multipart/alternative; boundary=\"alt\"\r\n\
\r\n\
--alt\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
\r\n\
Hello {{name}}\r\n\
--alt\r\n\
Content-Type: text/html; charset=utf-8\r\n\
\r\n\
<p>Hello <img src=\"cid:logo@x\"></p>\r\n\
--alt--\r\n\
--rel\r\n\
Content-Type: image/png\r\n\
Content-ID: <logo@x>\r\n\
Content-Transfer-Encoding: base64\r\n\
\r\n\
iVBORw0KGgo=\r\n\
--rel--\r\n\
--outer\r\n\
Content-Type: application/pdf; name=\"invoice.pdf\"\r\n\
Content-Disposition: attachment; filename=\"invoice.pdf\"\r\n\
Content-Transfer-Encoding: base64\r\n\
\r\n\
JVBERi0xLjQK\r\n\
--outer--\r\n";

fn rcpts(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_mixed_message_keeps_bodies_parts_and_names() {
    let cmd = to_send_command(
        MIXED.as_bytes(),
        &rcpts(&["ada@example.org", "bcc@example.net"]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (from, name) = cmd.from.clone().unwrap_or_else(|| panic!("from"));
    assert_eq!(from.as_str(), "hello@example.com");
    assert_eq!(name.as_deref(), Some("Shop Team"));
    let to: Vec<_> = cmd
        .to
        .iter()
        .map(|r| (r.email.as_str().to_string(), r.name.clone()))
        .collect();
    assert_eq!(
        to,
        [
            ("ada@example.org".to_string(), Some("Ada".to_string())),
            ("bcc@example.net".to_string(), None)
        ]
    );
    assert_eq!(cmd.subject.as_deref(), Some("Café {{not a template}}"));
    assert!(cmd.verbatim);
    assert!(cmd
        .body
        .as_deref()
        .is_some_and(|b| b.contains("<img src=\"cid:logo@x\">")));
    assert_eq!(cmd.text.as_deref().map(str::trim), Some("Hello {{name}}"));
    assert_eq!(
        cmd.reply.as_ref().map(|r| r.as_str()),
        Some("support@example.com")
    );
    assert_eq!(
        cmd.headers,
        [("X-Campaign".to_string(), "spring".to_string())]
    );
    assert_eq!(cmd.attachments.len(), 2, "{:?}", cmd.attachments);
    let logo = &cmd.attachments[0];
    assert_eq!(logo.content_type, "image/png");
    assert_eq!(logo.content_id.as_deref(), Some("logo@x"));
    assert!(logo.inline);
    assert_eq!(logo.content, b"\x89PNG\r\n\x1a\n");
    let pdf = &cmd.attachments[1];
    assert_eq!(pdf.filename, "invoice.pdf");
    assert_eq!(pdf.content_type, "application/pdf");
    assert!(!pdf.inline);
    assert_eq!(pdf.content, b"%PDF-1.4\n");
    assert_eq!(cmd.validate(), Ok(()));
}

/// The header may spell a domain in Unicode (an SMTPUTF8 client) where the envelope has its
/// A-labels: both are the one address, and its display name is kept.
#[test]
fn an_internationalised_domain_is_one_address_in_either_spelling() {
    let raw = "From: Shop <shop@Bücher.example>\r\nTo: Ada <ada@bücher.example>\r\n\
               Subject: hi\r\n\r\nhello\r\n";
    let cmd = to_send_command(raw.as_bytes(), &rcpts(&["ada@xn--bcher-kva.example"]))
        .unwrap_or_else(|e| panic!("{e}"));
    let (from, _) = cmd.from.clone().unwrap_or_else(|| panic!("from"));
    assert_eq!(from.as_str(), "shop@xn--bcher-kva.example");
    assert_eq!(cmd.to[0].email.as_str(), "ada@xn--bcher-kva.example");
    assert_eq!(cmd.to[0].name.as_deref(), Some("Ada"));
}

#[test]
fn a_text_only_message_gets_an_html_body_and_keeps_its_text() {
    let raw = "From: a@example.com\r\nSubject: plain\r\n\r\nline one\r\n<b>not html</b>\r\n";
    let cmd = to_send_command(raw.as_bytes(), &rcpts(&["x@example.org"]))
        .unwrap_or_else(|e| panic!("{e}"));
    let body = cmd.body.unwrap_or_default();
    assert!(body.contains("&lt;b>not html&lt;/b>"), "{body}");
    assert_eq!(
        cmd.text.as_deref().map(str::trim_end),
        Some("line one\r\n<b>not html</b>")
    );
}

#[test]
fn a_header_flood_is_refused_before_it_is_parsed() {
    let mut raw = b"From: a@example.com\r\n".to_vec();
    while raw.len() <= posthorn_core::app::inbound::MAX_HEADER_BYTES {
        raw.extend_from_slice(b"a:b\r\n");
    }
    raw.extend_from_slice(b"\r\nhi\r\n");
    assert!(matches!(
        to_send_command(&raw, &rcpts(&["x@example.org"])),
        Err(MessageError::Shape(_))
    ));
}

#[test]
fn a_message_without_a_usable_from_is_refused() {
    let to = rcpts(&["x@example.org"]);
    assert_eq!(
        to_send_command(b"Subject: none\r\n\r\nhi\r\n", &to),
        Err(MessageError::NoFrom)
    );
    assert!(matches!(
        to_send_command(b"From: not-an-address\r\n\r\nhi\r\n", &to),
        Err(MessageError::NoFrom | MessageError::BadFrom { .. })
    ));
}

proptest! {
    /// Whatever bytes arrive, the conversion answers (a command or a reason), never panics,
    /// and a command it gives has no header able to break the outgoing message.
    #[test]
    fn any_bytes_convert_or_are_refused(raw in proptest::collection::vec(any::<u8>(), 0..2000)) {
        if let Ok(cmd) = to_send_command(&raw, &rcpts(&["x@example.org"])) {
            for (name, value) in &cmd.headers {
                prop_assert!(posthorn_core::app::send::header_problem(name, value).is_none());
            }
        }
    }

    #[test]
    fn headers_and_bodies_survive_arbitrary_text(
        subject in "[^\r\n]{0,100}",
        body in "\\PC{0,400}",
        name in "[a-zA-Z ]{0,30}",
    ) {
        let raw = format!(
            "From: \"{name}\" <a@example.com>\r\nSubject: {subject}\r\n\
             Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
        );
        let cmd = to_send_command(raw.as_bytes(), &rcpts(&["x@example.org"]));
        prop_assert!(cmd.is_ok(), "{:?}", cmd);
        if let Ok(cmd) = cmd {
            let subject_out = cmd.subject.unwrap_or_default();
            prop_assert!(!subject_out.chars().any(|c| c.is_control() && c != '\t'));
        }
    }
}
