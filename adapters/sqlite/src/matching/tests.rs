//! Unit tests of the lowering: what is decided in Rust, never sent to SQL.

use super::render::json_path;
use super::*;
use chrono::TimeZone;
use posthorn_core::segment::TimeUnit;
use serde_json::json;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 6, 1, 12, 0, 0)
        .single()
        .expect("date")
}

fn filter(field: Field, op: Operator, value: Option<Value>, unit: Option<TimeUnit>) -> Filter {
    Filter {
        field,
        op,
        value,
        unit,
    }
}

fn data(path: &[&str]) -> Field {
    Field::Data(path.iter().map(|k| k.to_string()).collect())
}

#[test]
fn values_of_the_wrong_type_are_constants() {
    let f = filter(Field::Email, Operator::Equals, Some(json!(5)), None);
    assert_eq!(lower_filter(&f, now()), Pred::Const(false));
    let f = filter(Field::Email, Operator::NotEquals, Some(json!(5)), None);
    assert_eq!(lower_filter(&f, now()), Pred::Const(true));
    let f = filter(data(&["a"]), Operator::Equals, Some(json!(null)), None);
    assert_eq!(lower_filter(&f, now()), Pred::Const(false));
    let f = filter(
        data(&["a"]),
        Operator::GreaterThan,
        Some(json!("soon")),
        None,
    );
    assert_eq!(lower_filter(&f, now()), Pred::Const(false));
    let f = filter(
        Field::Subscribed,
        Operator::Contains,
        Some(json!(true)),
        None,
    );
    assert_eq!(lower_filter(&f, now()), Pred::Const(false));
}

#[test]
fn impossible_windows_are_constants() {
    let f = filter(
        Field::Event("x".into()),
        Operator::NotTriggeredWithin,
        Some(json!(0)),
        Some(TimeUnit::Days),
    );
    assert_eq!(lower_filter(&f, now()), Pred::Const(true));
    let f = filter(Field::CreatedAt, Operator::Within, Some(json!(1)), None);
    assert_eq!(lower_filter(&f, now()), Pred::Const(false));
}

#[test]
fn equality_is_typed_and_numbers_compare_as_floats() {
    let f = filter(data(&["a", "b"]), Operator::Equals, Some(json!("x")), None);
    assert_eq!(
        lower_filter(&f, now()),
        Pred::DataText(vec!["a".into(), "b".into()], "x".into())
    );
    let f = filter(data(&["a"]), Operator::NotEquals, Some(json!(1)), None);
    assert_eq!(
        lower_filter(&f, now()),
        Pred::Not(Box::new(Pred::DataNumber(vec!["a".into()], Cmp::Eq, 1.0)))
    );
}

#[test]
fn activity_names_match_the_core_mapping() {
    for kind in Activity::ALL {
        let names = activity_event_names(kind);
        assert_eq!(names.len(), 1, "{kind:?}");
        assert_eq!(activity_of_event(&names[0]), Some(kind));
    }
}

#[test]
fn cutoffs_round_up_to_microseconds() {
    let at = now() + Duration::nanoseconds(1_500);
    assert_eq!(ceil_micros(at), now() + Duration::microseconds(2));
    assert_eq!(ceil_micros(now()), now());
    let before_epoch = Utc.timestamp_opt(-1, 999_999_001).single().expect("time");
    assert_eq!(
        ceil_micros(before_epoch),
        Utc.timestamp_opt(0, 0).single().expect("time")
    );
}

#[test]
fn empty_structures_fold() {
    let empty_or = Condition {
        logic: Logic::Or,
        groups: vec![],
    };
    assert_eq!(lower(&empty_or, now()), Pred::Const(true));
    let empty_group = Condition {
        logic: Logic::Or,
        groups: vec![Group::default()],
    };
    assert_eq!(lower(&empty_group, now()), Pred::Const(true));
}

#[test]
fn json_paths_quote_every_label() {
    let path = |keys: &[&str]| json_path(&keys.iter().map(|k| k.to_string()).collect::<Vec<_>>());
    assert_eq!(path(&["a", "b"]), r#"$."a"."b""#);
    assert_eq!(path(&["0"]), r#"$."0""#);
    assert_eq!(path(&["a.b[0]"]), r#"$."a.b[0]""#);
    assert_eq!(path(&["say \"hi\" \\"]), r#"$."say \u0022hi\u0022 \\""#);
    assert_eq!(path(&["nul\0"]), r#"$."nul\u0000""#);
}
