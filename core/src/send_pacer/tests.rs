use std::time::Duration;

use chrono::{TimeDelta, TimeZone, Utc};

use super::*;
use crate::ports::ManualClock;

const DIRECT: SendClass = SendClass::Direct;
const BULK: SendClass = SendClass::Bulk;

fn quota(limit: u32) -> Quota {
    Quota {
        limit,
        window: Duration::from_secs(1),
    }
}

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + secs, 0)
        .single()
        .expect("a valid time")
}

fn workspace() -> WorkspaceId {
    WorkspaceId::generate(&ManualClock::new(at(0)))
}

#[test]
fn each_window_takes_a_budget_of_deliveries() {
    let pacer = SendPacer::default();
    let ws = workspace();
    let windows: Vec<i64> = (0..7)
        .map(|_| (pacer.next_window(&ws, DIRECT, quota(3), at(1)) - at(0)).num_seconds())
        .collect();
    assert_eq!(windows, [1, 1, 1, 2, 2, 2, 3]);
}

#[test]
fn workspaces_are_paced_apart() {
    let pacer = SendPacer::default();
    let (a, b) = (workspace(), workspace());
    for _ in 0..2 {
        assert_eq!(pacer.next_window(&a, DIRECT, quota(2), at(1)), at(1));
    }
    assert_eq!(pacer.next_window(&a, DIRECT, quota(2), at(1)), at(2));
    assert_eq!(pacer.next_window(&b, DIRECT, quota(2), at(1)), at(1));
}

#[test]
fn windows_in_the_past_are_not_handed_out() {
    let pacer = SendPacer::default();
    let ws = workspace();
    for _ in 0..5 {
        pacer.next_window(&ws, DIRECT, quota(1), at(1));
    }
    // Later, the limiter's next window is past every window handed out so far.
    assert_eq!(pacer.next_window(&ws, DIRECT, quota(1), at(60)), at(60));
    assert_eq!(pacer.next_window(&ws, DIRECT, quota(1), at(60)), at(61));
}

#[test]
fn no_window_lies_beyond_max_ahead() {
    let pacer = SendPacer::default();
    let ws = workspace();
    let ahead = MAX_AHEAD.num_seconds();
    let last = (0..ahead + 50)
        .map(|_| pacer.next_window(&ws, DIRECT, quota(1), at(1)))
        .max()
        .expect("windows");
    assert_eq!(last, at(1) + TimeDelta::seconds(ahead));
}

#[test]
fn slow_quotas_hand_out_windows_of_their_length() {
    let pacer = SendPacer::default();
    let ws = workspace();
    let slow = Quota {
        limit: 1,
        window: Duration::from_secs(4),
    };
    let windows: Vec<DateTime<Utc>> = (0..3)
        .map(|_| pacer.next_window(&ws, DIRECT, slow, at(4)))
        .collect();
    assert_eq!(windows, [at(4), at(8), at(12)]);
}

#[test]
fn direct_mail_is_not_placed_behind_a_campaign_backlog() {
    let pacer = SendPacer::default();
    let ws = workspace();
    for _ in 0..100 {
        pacer.next_window(&ws, BULK, quota(2), at(1));
    }
    assert_eq!(pacer.next_window(&ws, BULK, quota(2), at(1)), at(51));
    assert_eq!(pacer.next_window(&ws, DIRECT, quota(2), at(1)), at(1));
}

#[test]
fn a_forgotten_class_starts_again_from_the_next_window() {
    let pacer = SendPacer::default();
    let ws = workspace();
    for _ in 0..10 {
        pacer.next_window(&ws, BULK, quota(1), at(1));
        pacer.next_window(&ws, DIRECT, quota(1), at(1));
    }
    pacer.forget(&ws, BULK);
    assert_eq!(pacer.next_window(&ws, BULK, quota(1), at(1)), at(1));
    assert_eq!(pacer.next_window(&ws, DIRECT, quota(1), at(1)), at(11));
}
