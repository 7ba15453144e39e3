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
fn no_window_of_its_own_lies_beyond_max_ahead() {
    let pacer = SendPacer::default();
    let ws = workspace();
    let ahead = MAX_AHEAD.num_seconds();
    let own: Vec<DateTime<Utc>> = (0..=ahead)
        .map(|_| pacer.next_window(&ws, DIRECT, quota(1), at(1)))
        .collect();
    assert_eq!(own.last(), Some(&(at(1) + TimeDelta::seconds(ahead))));
    assert!(own.windows(2).all(|w| w[1] == w[0] + TimeDelta::seconds(1)));
}

#[test]
fn a_backlog_beyond_max_ahead_is_spread_over_the_windows_after_it() {
    let pacer = SendPacer::default();
    let ws = workspace();
    let ahead = MAX_AHEAD.num_seconds();
    let farthest = at(1) + TimeDelta::seconds(ahead);
    for _ in 0..=ahead {
        pacer.next_window(&ws, DIRECT, quota(1), at(1));
    }
    // Twice the windows after the farthest: each of them gets two, in turn.
    let mut spilled = std::collections::BTreeMap::<i64, u32>::new();
    for _ in 0..2 * ahead {
        let w = pacer.next_window(&ws, DIRECT, quota(1), at(1));
        *spilled.entry((w - farthest).num_seconds()).or_default() += 1;
    }
    assert_eq!(spilled.len() as i64, ahead);
    assert_eq!(spilled.keys().next(), Some(&1));
    assert_eq!(spilled.keys().last(), Some(&ahead));
    assert!(spilled.values().all(|n| *n == 2), "{spilled:?}");
    // They are not counted: a second later the window after the farthest is free again.
    assert_eq!(
        pacer.next_window(&ws, DIRECT, quota(1), at(2)),
        farthest + TimeDelta::seconds(1)
    );
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
