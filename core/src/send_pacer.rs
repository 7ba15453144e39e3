//! Pacing of the deliveries a workspace's sending rate turns away.
//!
//! A delivery over its workspace's budget is put back to run later. Put back to the start of
//! the next window, every email of a backlog larger than one window's budget came back at
//! once, and all but a window's worth were turned away again: a campaign of 100,000
//! emails at 14 a second had the workers claim and put back the whole backlog every
//! second for two hours. The pacer hands out the coming windows instead, a budget's worth
//! of emails to each, so each email of a backlog is claimed about once more before it goes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use crate::model::WorkspaceId;
use crate::ports::Quota;
use crate::send_class::SendClass;

/// How far ahead of the limiter's next window the pacer may place a delivery in a window of
/// its own. A backlog beyond it is spread over the windows of the following `MAX_AHEAD`
/// without counting (so it comes due a little at a time, not at once) and is paced again as
/// it comes due. It also bounds how long a delivery may wait behind windows handed out to
/// emails that no longer go.
pub const MAX_AHEAD: chrono::TimeDelta = chrono::TimeDelta::minutes(10);

/// The window each workspace's next turned-away delivery goes to, how many went there, and
/// how many found every window up to [`MAX_AHEAD`] taken.
#[derive(Debug, Clone, Copy)]
struct Slot {
    window: DateTime<Utc>,
    taken: u32,
    spilled: u32,
}

impl Slot {
    fn at(window: DateTime<Utc>) -> Self {
        Self {
            window,
            taken: 0,
            spilled: 0,
        }
    }
}

/// The windows handed out to turned-away deliveries, per workspace and [`SendClass`], in this
/// process; shared by every clone of the settings holding it. (Each process paces its own
/// deliveries; the limiter still decides what goes, so more processes only mean more windows
/// in use.) Each class has windows of its own, so direct mail turned away is never placed
/// behind a campaign's backlog.
#[derive(Clone, Default)]
pub struct SendPacer(Arc<Mutex<HashMap<(WorkspaceId, SendClass), Slot>>>);

impl SendPacer {
    /// When a delivery of `workspace` in `class`, turned away by `quota` (the class's share)
    /// until `reset_at`, should be tried again: the first window from `reset_at` on with room
    /// left in the quota, each window taking `quota.limit` deliveries of the class, at most
    /// [`MAX_AHEAD`] beyond `reset_at`; past that, one of the windows of the following
    /// [`MAX_AHEAD`] in turn.
    pub fn next_window(
        &self,
        workspace: &WorkspaceId,
        class: SendClass,
        quota: Quota,
        reset_at: DateTime<Utc>,
    ) -> DateTime<Utc> {
        let window =
            chrono::TimeDelta::from_std(quota.window).unwrap_or(chrono::TimeDelta::seconds(1));
        let farthest = reset_at + MAX_AHEAD;
        // The map stays consistent across a panic (one entry's update), so a poisoned lock
        // is still usable.
        let mut slots = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let slot = slots
            .entry((workspace.clone(), class))
            .or_insert(Slot::at(reset_at));
        if slot.window < reset_at {
            *slot = Slot::at(reset_at);
        }
        if slot.taken >= quota.limit.max(1) {
            if slot.window + window > farthest {
                // Every window up to the farthest is taken: spread the rest over the windows
                // after it, one each in turn, to be paced again when they come due.
                let spread = (MAX_AHEAD.num_milliseconds() / window.num_milliseconds().max(1))
                    .clamp(1, i64::from(i32::MAX));
                let turn = i64::from(slot.spilled) % spread;
                slot.spilled = slot.spilled.wrapping_add(1);
                return slot.window + window * i32::try_from(turn + 1).unwrap_or(i32::MAX);
            }
            slot.window += window;
            slot.taken = 0;
        }
        slot.taken = slot.taken.saturating_add(1);
        slot.window
    }

    /// Forgets the windows handed out to `workspace`'s `class`: the deliveries they were
    /// handed to no longer go (a cancelled campaign), so later ones need not wait behind them.
    pub fn forget(&self, workspace: &WorkspaceId, class: SendClass) {
        let mut slots = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slots.remove(&(workspace.clone(), class));
    }
}

impl std::fmt::Debug for SendPacer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SendPacer")
    }
}

#[cfg(test)]
mod tests;
