//! The job queue of a [`MemoryStore`] and its `Jobs` port.

use posthorn_core::model::JobId;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use posthorn_core::ports::{ClaimedJob, DeadJob, JobPayload, JobStats, Jobs, NewJob, PortError};

use crate::MemoryStore;

/// Where a job is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
enum JobState {
    /// Waiting for its `run_at`, or due.
    Waiting,
    /// Claimed; the lease holds until `until`.
    Leased { token: String, until: DateTime<Utc> },
    /// Given up.
    Dead,
}

#[derive(Debug)]
struct JobEntry {
    payload: JobPayload,
    run_at: DateTime<Utc>,
    /// Enqueue order, to keep jobs due at the same instant first in, first out.
    seq: u64,
    attempts: u32,
    /// Claims since enqueued or last retried.
    claims: u32,
    state: JobState,
    last_error: Option<String>,
}

impl JobEntry {
    /// The entry as a listed dead job, when it is dead.
    fn as_dead(&self, id: &JobId) -> Option<DeadJob> {
        (self.state == JobState::Dead).then(|| DeadJob {
            id: id.clone(),
            payload: self.payload.clone(),
            attempts: self.attempts,
            last_error: self.last_error.clone(),
        })
    }
}

/// Jobs indexed by due time and by lease expiry.
#[derive(Debug, Default)]
pub(crate) struct JobQueue {
    /// By id. A B-tree grows a node at a time; a hash map grows by rehashing every job at
    /// once, under the store's write lock (jobs join the queue inside a commit), which at a
    /// campaign's million jobs held every request for as long.
    jobs: BTreeMap<JobId, JobEntry>,
    /// Waiting jobs by (run_at, seq, id).
    waiting: BTreeSet<(DateTime<Utc>, u64, JobId)>,
    /// Leased jobs by (lease end, id).
    leased: BTreeSet<(DateTime<Utc>, JobId)>,
    dead: u64,
    next_seq: u64,
}

impl JobQueue {
    /// Whether a job has this id, in any state (`Write::EnqueueJob` then conflicts).
    pub(crate) fn contains(&self, id: &JobId) -> bool {
        self.jobs.contains_key(id)
    }

    /// Whether the job with this id is queued or running, a lapsed lease included
    /// (`Write::EnqueueJobUnlessPending` then writes nothing).
    pub(crate) fn is_pending(&self, id: &JobId) -> bool {
        self.jobs
            .get(id)
            .is_some_and(|entry| entry.state != JobState::Dead)
    }

    /// Adds a job. A dead job with its id is replaced; a pending one is left as it is (the
    /// commit has decided already, under the store's write lock, that the job is to be
    /// enqueued: this only keeps the queue whole should one be found).
    pub(crate) fn enqueue(&mut self, job: NewJob) {
        match self.jobs.get(&job.id) {
            Some(entry) if entry.state == JobState::Dead => {
                self.dead = self.dead.saturating_sub(1);
            }
            Some(_) => return,
            None => {}
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.waiting.insert((job.run_at, seq, job.id.clone()));
        self.jobs.insert(
            job.id,
            JobEntry {
                payload: job.payload,
                run_at: job.run_at,
                seq,
                attempts: 0,
                claims: 0,
                state: JobState::Waiting,
                last_error: None,
            },
        );
    }

    /// Returns the jobs whose lease ended at or before `now` to the waiting set.
    fn release_expired(&mut self, now: DateTime<Utc>) {
        while let Some((until, id)) = self.leased.first().cloned() {
            if until > now {
                break;
            }
            self.leased.remove(&(until, id.clone()));
            if let Some(entry) = self.jobs.get_mut(&id) {
                entry.state = JobState::Waiting;
                self.waiting.insert((entry.run_at, entry.seq, id));
            }
        }
    }

    fn claim(&mut self, now: DateTime<Utc>, lease: Duration, max: usize) -> Vec<ClaimedJob> {
        self.release_expired(now);
        let until = lease_end(now, lease);
        let mut claimed = Vec::new();
        while claimed.len() < max {
            let Some(first) = self.waiting.first() else {
                break;
            };
            if first.0 > now {
                break;
            }
            let Some((_, _, id)) = self.waiting.pop_first() else {
                break;
            };
            let Some(entry) = self.jobs.get_mut(&id) else {
                continue;
            };
            let token = uuid::Uuid::new_v4().to_string();
            entry.claims = entry.claims.saturating_add(1);
            entry.state = JobState::Leased {
                token: token.clone(),
                until,
            };
            self.leased.insert((until, id.clone()));
            claimed.push(ClaimedJob {
                id,
                payload: entry.payload.clone(),
                attempts: entry.attempts,
                claims: entry.claims,
                lease_token: token,
            });
        }
        claimed
    }

    /// Ends `job`'s lease if its token is current; returns the entry when it was.
    fn take_lease(&mut self, job: &ClaimedJob) -> Option<&mut JobEntry> {
        let entry = self.jobs.get_mut(&job.id)?;
        let JobState::Leased { token, until } = &entry.state else {
            return None;
        };
        if *token != job.lease_token {
            return None;
        }
        self.leased.remove(&(*until, job.id.clone()));
        Some(entry)
    }

    /// Moves `job`'s lease end to `now + lease` if its token is current.
    fn extend(&mut self, job: &ClaimedJob, now: DateTime<Utc>, lease: Duration) -> bool {
        let Some(entry) = self.jobs.get_mut(&job.id) else {
            return false;
        };
        let JobState::Leased { token, until } = &mut entry.state else {
            return false;
        };
        if *token != job.lease_token {
            return false;
        }
        let new_until = lease_end(now, lease);
        self.leased.remove(&(*until, job.id.clone()));
        self.leased.insert((new_until, job.id.clone()));
        *until = new_until;
        true
    }

    fn complete(&mut self, job: &ClaimedJob) -> bool {
        if self.take_lease(job).is_none() {
            return false;
        }
        self.jobs.remove(&job.id);
        true
    }

    fn retry(&mut self, job: &ClaimedJob, at: DateTime<Utc>, failed: bool, error: &str) -> bool {
        let Some(entry) = self.take_lease(job) else {
            return false;
        };
        entry.run_at = at;
        entry.state = JobState::Waiting;
        entry.claims = 0;
        if failed {
            entry.attempts = entry.attempts.saturating_add(1);
        }
        entry.last_error = Some(error.to_string());
        let key = (at, entry.seq, job.id.clone());
        self.waiting.insert(key);
        true
    }

    fn dead_letter(&mut self, job: &ClaimedJob, error: &str) -> bool {
        let Some(entry) = self.take_lease(job) else {
            return false;
        };
        entry.state = JobState::Dead;
        entry.last_error = Some(error.to_string());
        self.dead += 1;
        true
    }

    /// Dead jobs, oldest first by id, at most `limit`.
    fn dead(&self, limit: usize) -> Vec<DeadJob> {
        self.jobs
            .iter()
            .filter_map(|(id, entry)| entry.as_dead(id))
            .take(limit)
            .collect()
    }

    fn dead_job(&self, id: &JobId) -> Option<DeadJob> {
        self.jobs.get(id).and_then(|entry| entry.as_dead(id))
    }

    /// Queues the dead job `id` again at `at`; `false` when no dead job has that id.
    fn revive(&mut self, id: &JobId, at: DateTime<Utc>) -> bool {
        let Some(entry) = self.jobs.get_mut(id) else {
            return false;
        };
        if entry.state != JobState::Dead {
            return false;
        }
        entry.state = JobState::Waiting;
        entry.run_at = at;
        entry.attempts = 0;
        entry.claims = 0;
        self.waiting.insert((at, entry.seq, id.clone()));
        self.dead = self.dead.saturating_sub(1);
        true
    }

    fn stats(&self, now: DateTime<Utc>) -> JobStats {
        let expired = self
            .leased
            .iter()
            .take_while(|(until, _)| *until <= now)
            .count();
        JobStats {
            queued: (self.waiting.len() + expired) as u64,
            running: (self.leased.len() - expired) as u64,
            dead: self.dead,
        }
    }
}

/// `now + lease`, or the end of time when that overflows.
fn lease_end(now: DateTime<Utc>, lease: Duration) -> DateTime<Utc> {
    TimeDelta::from_std(lease)
        .ok()
        .and_then(|lease| now.checked_add_signed(lease))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

impl MemoryStore {
    fn with_queue<T>(&self, f: impl FnOnce(&mut JobQueue) -> T) -> T {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut queue)
    }
}

#[async_trait]
impl Jobs for MemoryStore {
    async fn claim(
        &self,
        now: DateTime<Utc>,
        lease: Duration,
        max: usize,
    ) -> Result<Vec<ClaimedJob>, PortError> {
        Ok(self.with_queue(|q| q.claim(now, lease, max)))
    }

    async fn extend(
        &self,
        job: &ClaimedJob,
        now: DateTime<Utc>,
        lease: Duration,
    ) -> Result<bool, PortError> {
        Ok(self.with_queue(|q| q.extend(job, now, lease)))
    }

    async fn complete(&self, job: &ClaimedJob) -> Result<bool, PortError> {
        Ok(self.with_queue(|q| q.complete(job)))
    }

    async fn retry(
        &self,
        job: &ClaimedJob,
        at: DateTime<Utc>,
        failed: bool,
        error: &str,
    ) -> Result<bool, PortError> {
        let retried = self.with_queue(|q| q.retry(job, at, failed, error));
        if retried {
            self.wake_workers();
        }
        Ok(retried)
    }

    async fn dead_letter(&self, job: &ClaimedJob, error: &str) -> Result<bool, PortError> {
        Ok(self.with_queue(|q| q.dead_letter(job, error)))
    }

    async fn wait_for_work(&self, timeout: Duration) {
        let _ = tokio::time::timeout(timeout, self.work.notified()).await;
    }

    async fn stats(&self, now: DateTime<Utc>) -> Result<JobStats, PortError> {
        Ok(self.with_queue(|q| q.stats(now)))
    }

    async fn dead(&self, limit: usize) -> Result<Vec<DeadJob>, PortError> {
        Ok(self.with_queue(|q| q.dead(limit)))
    }

    async fn dead_job(&self, id: &JobId) -> Result<Option<DeadJob>, PortError> {
        Ok(self.with_queue(|q| q.dead_job(id)))
    }

    async fn revive(&self, id: &JobId, at: DateTime<Utc>) -> Result<bool, PortError> {
        let revived = self.with_queue(|q| q.revive(id, at));
        if revived {
            self.wake_workers();
        }
        Ok(revived)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(run_at: DateTime<Utc>) -> NewJob {
        let clock = posthorn_core::ports::SystemClock;
        NewJob::at(
            &clock,
            JobPayload::DeliverEmail {
                workspace_id: "w".into(),
                email_id: posthorn_core::model::EmailId::generate(&clock),
            },
            run_at,
        )
    }

    #[test]
    fn jobs_due_together_come_out_in_enqueue_order() {
        let now = Utc::now();
        let mut queue = JobQueue::default();
        let jobs: Vec<NewJob> = (0..5).map(|_| job(now)).collect();
        for j in &jobs {
            queue.enqueue(j.clone());
        }
        let claimed: Vec<JobId> = queue
            .claim(now, Duration::from_secs(30), 10)
            .into_iter()
            .map(|c| c.id)
            .collect();
        let expected: Vec<JobId> = jobs.into_iter().map(|j| j.id).collect();
        assert_eq!(claimed, expected);
    }

    #[test]
    fn enqueueing_a_known_id_keeps_the_first() {
        let now = Utc::now();
        let mut queue = JobQueue::default();
        let first = job(now);
        let mut again = first.clone();
        again.run_at = now + TimeDelta::hours(1);
        queue.enqueue(first);
        queue.enqueue(again);
        assert_eq!(queue.claim(now, Duration::from_secs(1), 10).len(), 1);
        assert_eq!(queue.stats(now).running, 1);
    }

    #[test]
    fn enqueueing_over_a_dead_job_replaces_it() {
        let now = Utc::now();
        let mut queue = JobQueue::default();
        let first = job(now);
        queue.enqueue(first.clone());
        let claimed = queue.claim(now, Duration::from_secs(1), 1);
        assert!(queue.dead_letter(&claimed[0], "boom"));
        assert!(queue.contains(&first.id) && !queue.is_pending(&first.id));
        queue.enqueue(first.clone());
        assert!(queue.is_pending(&first.id));
        assert_eq!(queue.stats(now).dead, 0);
        let again = queue.claim(now, Duration::from_secs(1), 10);
        assert_eq!(again.len(), 1);
        assert_eq!((again[0].attempts, again[0].claims), (0, 1));
    }

    #[test]
    fn a_huge_lease_does_not_overflow() {
        let now = Utc::now();
        let mut queue = JobQueue::default();
        queue.enqueue(job(now));
        let claimed = queue.claim(now, Duration::MAX, 1);
        assert_eq!(claimed.len(), 1);
        assert_eq!(queue.stats(now).running, 1);
    }
}
