use serde_json::json;

use crate::harness::TestApp;

#[tokio::test]
async fn verify_reports_every_boolean() {
    let app = TestApp::new().await;
    let res = app
        .post("/v1/verify", json!({"email": "John.Smith+news@gmail.com"}))
        .await
        .expect(200);
    let d = &res.body["data"];
    assert_eq!(res.body["success"], json!(true));
    for key in [
        "valid",
        "isDisposable",
        "isAlias",
        "isTypo",
        "isPlusAddressed",
        "isRandomInput",
        "isPersonalEmail",
        "domainExists",
        "hasWebsite",
        "hasMxRecords",
    ] {
        assert!(d[key].is_boolean(), "{key} missing: {d}");
    }
    assert!(d["reasons"].is_array());
    assert_eq!(d["valid"], json!(true));
    assert_eq!(d["isPlusAddressed"], json!(true));
    assert_eq!(d["isPersonalEmail"], json!(true));
    assert_eq!(d["hasMxRecords"], json!(true));
}

#[tokio::test]
async fn verify_flags_bad_addresses_with_reasons() {
    let app = TestApp::new().await;
    let typo = app
        .post("/v1/verify", json!({"email": "ada@gmial.com"}))
        .await
        .expect(200);
    assert_eq!(typo.body["data"]["isTypo"], json!(true));
    assert_eq!(typo.body["data"]["suggestedEmail"], json!("ada@gmail.com"));
    let missing = app
        .post(
            "/v1/verify",
            json!({"email": "a@does-not-exist-posthorn.com"}),
        )
        .await
        .expect(200);
    assert_eq!(missing.body["data"]["valid"], json!(false));
    assert_eq!(missing.body["data"]["domainExists"], json!(false));
    assert!(missing.body["data"]["reasons"]
        .as_array()
        .is_some_and(|r| !r.is_empty()));
    let syntax = app
        .post("/v1/verify", json!({"email": "not an email"}))
        .await
        .expect(200);
    assert_eq!(syntax.body["data"]["valid"], json!(false));
    let disposable = app
        .post("/v1/verify", json!({"email": "x@mailinator.com"}))
        .await
        .expect(200);
    assert_eq!(disposable.body["data"]["isDisposable"], json!(true));
}

#[tokio::test]
async fn verify_needs_an_email_string() {
    let app = TestApp::new().await;
    let res = app
        .post("/v1/verify", json!({}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["email"]);
    app.post("/v1/verify", json!({"email": 5}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
}
