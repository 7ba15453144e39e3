use proptest::prelude::*;
use serde_json::json;

use super::*;

fn notification(subject: Option<&str>) -> serde_json::Value {
    let mut v = json!({
        "Type": "Notification",
        "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
        "TopicArn": "arn:aws:sns:us-west-2:123456789012:MyTopic",
        "Message": "{\"notificationType\":\"Delivery\"}",
        "Timestamp": "2012-05-02T00:54:06.655Z",
        "SignatureVersion": "1",
        "Signature": "AAEC",
        "SigningCertURL": "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem",
        "UnsubscribeURL": "https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe"
    });
    if let Some(s) = subject {
        v["Subject"] = json!(s);
    }
    v
}

#[test]
fn a_notification_parses_and_signs_its_documented_fields() {
    let env = SnsEnvelope::parse(notification(Some("Hi")).to_string().as_bytes()).expect("parses");
    assert_eq!(env.signature, vec![0, 1, 2]);
    assert_eq!(env.signature_version, SignatureVersion::V1);
    assert_eq!(
        env.string_to_sign(),
        "Message\n{\"notificationType\":\"Delivery\"}\nMessageId\n22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324\n\
         Subject\nHi\nTimestamp\n2012-05-02T00:54:06.655Z\n\
         TopicArn\narn:aws:sns:us-west-2:123456789012:MyTopic\nType\nNotification\n"
    );
    let bare = SnsEnvelope::parse(notification(None).to_string().as_bytes()).expect("parses");
    assert!(!bare.string_to_sign().contains("Subject"));
}

#[test]
fn a_subscription_confirmation_signs_url_and_token() {
    let body = json!({
        "Type": "SubscriptionConfirmation",
        "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
        "Token": "2336412f37",
        "TopicArn": "arn:aws:sns:us-west-2:123456789012:MyTopic",
        "Message": "You have chosen to subscribe",
        "SubscribeURL": "https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&Token=2336412f37",
        "Timestamp": "2012-04-26T20:45:04.751Z",
        "SignatureVersion": "2",
        "Signature": "AAEC",
        "SigningCertURL": "https://sns.us-west-2.amazonaws.com/x.pem"
    });
    let env = SnsEnvelope::parse(body.to_string().as_bytes()).expect("parses");
    assert_eq!(env.signature_version, SignatureVersion::V2);
    assert_eq!(
        env.string_to_sign(),
        "Message\nYou have chosen to subscribe\nMessageId\n165545c9-2a5c-472c-8df2-7ff2be2b3b1b\n\
         SubscribeURL\nhttps://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&Token=2336412f37\n\
         Timestamp\n2012-04-26T20:45:04.751Z\nToken\n2336412f37\n\
         TopicArn\narn:aws:sns:us-west-2:123456789012:MyTopic\nType\nSubscriptionConfirmation\n"
    );
}

#[test]
fn malformed_envelopes_say_what_is_wrong() {
    let mut v = notification(None);
    v["SignatureVersion"] = json!("3");
    assert_eq!(
        SnsEnvelope::parse(v.to_string().as_bytes()),
        Err(EnvelopeError::UnknownSignatureVersion("3".into()))
    );
    let mut v = notification(None);
    v["Type"] = json!("Other");
    assert!(matches!(
        SnsEnvelope::parse(v.to_string().as_bytes()),
        Err(EnvelopeError::UnknownType(_))
    ));
    let mut v = notification(None);
    v["Signature"] = json!("!!not base64!!");
    assert_eq!(
        SnsEnvelope::parse(v.to_string().as_bytes()),
        Err(EnvelopeError::BadSignatureEncoding)
    );
    let mut v = notification(None);
    v["TopicArn"] = json!("");
    assert_eq!(
        SnsEnvelope::parse(v.to_string().as_bytes()),
        Err(EnvelopeError::Missing("TopicArn"))
    );
    let mut v = notification(None);
    v["Type"] = json!("SubscriptionConfirmation");
    assert_eq!(
        SnsEnvelope::parse(v.to_string().as_bytes()),
        Err(EnvelopeError::Missing("SubscribeURL"))
    );
    assert!(matches!(
        SnsEnvelope::parse(b"[1,2]"),
        Err(EnvelopeError::NotJson(_))
    ));
    assert!(matches!(
        SnsEnvelope::parse(b"{\"Type\": 5}"),
        Err(EnvelopeError::NotJson(_))
    ));
}

proptest! {
    #[test]
    fn arbitrary_bodies_never_panic(body in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = SnsEnvelope::parse(&body);
    }

    #[test]
    fn arbitrary_json_objects_never_panic(
        fields in proptest::collection::btree_map(
            prop_oneof![
                Just("Type".to_string()), Just("MessageId".to_string()),
                Just("Signature".to_string()), Just("SignatureVersion".to_string()),
                Just("SubscribeURL".to_string()), ".{0,8}"
            ],
            prop_oneof![any::<String>().prop_map(|s| json!(s)), any::<i64>().prop_map(|n| json!(n)), Just(json!(null))],
            0..8,
        )
    ) {
        let body = serde_json::to_vec(&fields).expect("json");
        let _ = SnsEnvelope::parse(&body);
    }

    #[test]
    fn well_formed_envelopes_parse_back_to_their_fields(
        message in any::<String>(),
        subject in proptest::option::of(any::<String>()),
        id in "[a-f0-9-]{1,36}",
        signature in proptest::collection::vec(any::<u8>(), 1..300),
        v2 in any::<bool>(),
    ) {
        let encoded = base64::engine::general_purpose::STANDARD.encode(&signature);
        let mut body = notification(None);
        body["Message"] = json!(message);
        body["MessageId"] = json!(id);
        body["Signature"] = json!(encoded);
        body["SignatureVersion"] = json!(if v2 { "2" } else { "1" });
        if let Some(s) = &subject {
            body["Subject"] = json!(s);
        }
        let env = SnsEnvelope::parse(body.to_string().as_bytes()).expect("parses");
        prop_assert_eq!(&env.message, &message);
        prop_assert_eq!(&env.message_id, &id);
        prop_assert_eq!(&env.signature, &signature);
        prop_assert_eq!(&env.kind, &SnsKind::Notification { subject: subject.clone() });
        let signed = env.string_to_sign();
        let message_part = format!("Message\n{message}\nMessageId\n{id}\n");
        prop_assert!(signed.starts_with(&message_part));
        prop_assert!(signed.ends_with("\nType\nNotification\n"));
    }
}
