//! Batching: calls that arrive while the runners are busy are served together, in one
//! round trip to PostgreSQL, instead of one each.
//!
//! A call queues its item and, when fewer than the batcher's runners are at work, spawns
//! one. A runner takes everything queued (up to the batch limit), serves it with one call of
//! the batch function, answers each caller with its own outcome, and goes on until the queue
//! is empty. With no contention a call is served at once, alone; under load the queue fills
//! while a batch is in flight, so the cost of a round trip is shared by everybody waiting.
//! Runners are spawned tasks, so a caller that gives up (its request is cancelled) abandons
//! nobody else's item; an item whose caller gave up before its batch started is dropped.
//!
//! When a batch failed as unavailable after waiting at least [`OUTAGE_WAIT`] (no connection
//! came within the pool's time limit: PostgreSQL is down or unreachable), the items queued
//! meanwhile get that answer at once instead of waiting as long again for a batch of their
//! own: while the database is down every call is answered within one time limit, not two.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use posthorn_core::ports::StoreError;
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};

/// How long a batch that failed as unavailable must have waited for the items queued behind
/// it to get the same answer at once: far above a round trip, far below the pool's time
/// limit for a connection.
const OUTAGE_WAIT: Duration = Duration::from_secs(1);

/// An item waiting for a runner, and where its outcome goes.
struct Pending<T, R> {
    item: T,
    reply: oneshot::Sender<Result<R, StoreError>>,
}

/// The items waiting for a runner, and how many runners are at work.
struct Queue<T, R> {
    items: Vec<Pending<T, R>>,
    running: usize,
}

/// What serves a batch: one outcome per item, in the batch's order.
pub(crate) type Serve<T, R> = Arc<
    dyn Fn(Vec<T>) -> Pin<Box<dyn Future<Output = Vec<Result<R, StoreError>>> + Send>>
        + Send
        + Sync,
>;

/// A queue of items served in batches by at most `runners` tasks at once.
pub(crate) struct Batcher<T, R> {
    queue: Arc<Mutex<Queue<T, R>>>,
    serve: Serve<T, R>,
    max_batch: usize,
    runners: usize,
    /// Batches served so far (for tests: calls under load share batches).
    batches: Arc<AtomicU64>,
}

fn lock<T, R>(queue: &Mutex<Queue<T, R>>) -> MutexGuard<'_, Queue<T, R>> {
    // The queue stays consistent across a panic (a push or a drain), so a poisoned lock
    // is still usable.
    queue.lock().unwrap_or_else(|p| p.into_inner())
}

impl<T: Send + 'static, R: Send + 'static> Batcher<T, R> {
    /// A batcher whose batches `serve` serves, at most `max_batch` items each, with at
    /// most `runners` batches in flight at once (each usually holds a pooled connection).
    pub(crate) fn new(max_batch: usize, runners: usize, serve: Serve<T, R>) -> Self {
        Self {
            queue: Arc::new(Mutex::new(Queue {
                items: Vec::new(),
                running: 0,
            })),
            serve,
            max_batch: max_batch.max(1),
            runners: runners.max(1),
            batches: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Serves `item`, possibly together with others. Answers once the batch holding
    /// `item` was served.
    pub(crate) async fn call(&self, item: T) -> Result<R, StoreError> {
        let (reply, outcome) = oneshot::channel();
        let start = {
            let mut queue = lock(&self.queue);
            queue.items.push(Pending { item, reply });
            let start = queue.running < self.runners;
            if start {
                queue.running += 1;
            }
            start
        };
        if start {
            let mut runner = Runner {
                queue: Arc::clone(&self.queue),
                serve: Arc::clone(&self.serve),
                max_batch: self.max_batch,
                batches: Arc::clone(&self.batches),
                finished: false,
            };
            tokio::spawn(async move { runner.run().await });
        }
        outcome.await.unwrap_or_else(|_| Err(abandoned()))
    }

    /// Batches served so far.
    #[cfg(all(test, posthorn_pg_tests))]
    pub(crate) fn batches(&self) -> u64 {
        self.batches.load(Ordering::Relaxed)
    }
}

/// The outcome of each of `count` items whose batch failed with `failure`: that failure,
/// for every one of them (a batch is one statement: it answers all its items or none).
pub(crate) fn fail_all<R>(count: usize, failure: &StoreError) -> Vec<Result<R, StoreError>> {
    (0..count).map(|_| Err(failure.clone())).collect()
}

/// The error of a batch that found the database unavailable after waiting for it at least
/// [`OUTAGE_WAIT`]: every outcome `Unavailable`.
fn outage<R>(outcomes: &[Result<R, StoreError>], waited: Duration) -> Option<StoreError> {
    if waited < OUTAGE_WAIT {
        return None;
    }
    let mut errors = outcomes.iter().map(|o| match o {
        Err(err @ StoreError::Unavailable(_)) => Some(err),
        _ => None,
    });
    let first = errors.next()??;
    errors.all(|e| e.is_some()).then(|| first.clone())
}

fn abandoned() -> StoreError {
    StoreError::Unavailable("the call was abandoned (the store is closing)".to_string())
}

/// A task that serves the queue, batch after batch, until it is empty.
struct Runner<T, R> {
    queue: Arc<Mutex<Queue<T, R>>>,
    serve: Serve<T, R>,
    max_batch: usize,
    batches: Arc<AtomicU64>,
    /// Set when it stopped because the queue was empty (not by a panic or a shutdown).
    finished: bool,
}

impl<T, R> Runner<T, R> {
    async fn run(&mut self) {
        loop {
            let batch: Vec<Pending<T, R>> = {
                let mut queue = lock(&self.queue);
                let n = queue.items.len().min(self.max_batch);
                if n == 0 {
                    queue.running -= 1;
                    self.finished = true;
                    return;
                }
                queue.items.drain(..n).collect()
            };
            // A caller that gave up before its batch started is not served at all.
            let (items, replies): (Vec<T>, Vec<_>) = batch
                .into_iter()
                .filter(|p| !p.reply.is_closed())
                .map(|p| (p.item, p.reply))
                .unzip();
            if items.is_empty() {
                continue;
            }
            self.batches.fetch_add(1, Ordering::Relaxed);
            let started = Instant::now();
            let outcomes = (self.serve)(items).await;
            let outage = outage(&outcomes, started.elapsed());
            let mut outcomes = outcomes.into_iter();
            for reply in replies {
                // A batch function that answered too few leaves the rest unanswered
                // rather than wrongly answered.
                let outcome = outcomes.next().unwrap_or_else(|| {
                    Err(StoreError::Unavailable(
                        "the batch answered fewer outcomes than it had items".to_string(),
                    ))
                });
                // A caller that gave up meanwhile no longer listens.
                let _ = reply.send(outcome);
            }
            if let Some(err) = outage {
                let queued: Vec<Pending<T, R>> = lock(&self.queue).items.drain(..).collect();
                for pending in queued {
                    let _ = pending.reply.send(Err(err.clone()));
                }
            }
        }
    }
}

impl<T, R> Drop for Runner<T, R> {
    /// Also when the task ends without emptying the queue (a panic, the runtime shutting
    /// down): the next caller can start a new runner, and when none is left the items
    /// still queued are answered `Unavailable` (their senders are dropped) instead of
    /// waiting forever.
    fn drop(&mut self) {
        if !self.finished {
            let mut queue = lock(&self.queue);
            queue.running -= 1;
            if queue.running == 0 {
                queue.items.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Doubles each item; a batch of more than one gets one outcome only, and the item
    /// 1000 waits for `gate` first.
    fn doubling(gate: Arc<tokio::sync::Notify>) -> Serve<u32, u32> {
        Arc::new(move |items: Vec<u32>| {
            let gate = Arc::clone(&gate);
            Box::pin(async move {
                if items == [1000] {
                    gate.notified().await;
                }
                let answered = if items.len() > 1 && items.contains(&7) {
                    1
                } else {
                    items.len()
                };
                items
                    .into_iter()
                    .take(answered)
                    .map(|i| Ok(i * 2))
                    .collect()
            })
        })
    }

    fn batcher(max_batch: usize) -> (Arc<Batcher<u32, u32>>, Arc<tokio::sync::Notify>) {
        let gate = Arc::new(tokio::sync::Notify::new());
        let serve = doubling(Arc::clone(&gate));
        (Arc::new(Batcher::new(max_batch, 1, serve)), gate)
    }

    #[tokio::test]
    async fn a_lone_call_is_served_alone() {
        let (batcher, _) = batcher(8);
        assert_eq!(batcher.call(21).await.ok(), Some(42));
        assert_eq!(batcher.batches.load(Ordering::Relaxed), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_calls_each_get_their_own_outcome() {
        let (batcher, _) = batcher(4);
        let calls: Vec<_> = (0..100u32)
            .map(|i| {
                let batcher = Arc::clone(&batcher);
                tokio::spawn(async move { (i, batcher.call(i + 10).await) })
            })
            .collect();
        for call in calls {
            let (i, outcome) = call.await.expect("the call task ran");
            assert_eq!(outcome.ok(), Some((i + 10) * 2));
        }
    }

    /// Queues `items` behind a call that holds the runner, then lets it go: the queued
    /// items are served as one batch.
    async fn behind_a_held_runner(
        max_batch: usize,
        items: &[u32],
    ) -> (Arc<Batcher<u32, u32>>, Vec<Result<u32, StoreError>>) {
        let (batcher, gate) = batcher(max_batch);
        let held = {
            let batcher = Arc::clone(&batcher);
            tokio::spawn(async move { batcher.call(1000).await })
        };
        while batcher.batches.load(Ordering::Relaxed) == 0 {
            tokio::task::yield_now().await;
        }
        let calls: Vec<_> = items
            .iter()
            .map(|&i| {
                let batcher = Arc::clone(&batcher);
                tokio::spawn(async move { batcher.call(i).await })
            })
            .collect();
        while lock(&batcher.queue).items.len() < items.len() {
            tokio::task::yield_now().await;
        }
        gate.notify_one();
        assert_eq!(held.await.ok().and_then(|o| o.ok()), Some(2000));
        let mut outcomes = Vec::new();
        for call in calls {
            outcomes.push(call.await.unwrap_or_else(|_| Err(abandoned())));
        }
        (batcher, outcomes)
    }

    #[tokio::test]
    async fn calls_queued_behind_a_batch_share_the_next() {
        let (batcher, outcomes) = behind_a_held_runner(8, &[1, 2, 3]).await;
        let answers: Vec<_> = outcomes.into_iter().map(|o| o.ok()).collect();
        assert_eq!(answers, [Some(2), Some(4), Some(6)]);
        assert_eq!(batcher.batches.load(Ordering::Relaxed), 2);
    }

    #[tokio::test]
    async fn a_batch_is_at_most_max_batch_items() {
        let (batcher, outcomes) = behind_a_held_runner(2, &[1, 2, 3]).await;
        assert!(outcomes.iter().all(|o| o.is_ok()));
        assert_eq!(batcher.batches.load(Ordering::Relaxed), 3);
    }

    #[tokio::test]
    async fn a_short_answer_fails_the_unanswered_not_the_answered() {
        let (_, outcomes) = behind_a_held_runner(8, &[7, 8]).await;
        assert_eq!(outcomes[0].as_ref().ok(), Some(&14));
        assert!(matches!(outcomes[1], Err(StoreError::Unavailable(_))));
    }

    /// A batcher whose every batch fails as unavailable after `delay`, and how many
    /// batches it served.
    fn failing_after(delay: Duration) -> (Arc<Batcher<u32, u32>>, Arc<AtomicU64>) {
        let served = Arc::new(AtomicU64::new(0));
        let count = Arc::clone(&served);
        let serve: Serve<u32, u32> = Arc::new(move |items: Vec<u32>| {
            count.fetch_add(1, Ordering::Relaxed);
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                fail_all(
                    items.len(),
                    &StoreError::Unavailable("no connection".into()),
                )
            })
        });
        (Arc::new(Batcher::new(8, 1, serve)), served)
    }

    /// Starts a call, queues two more behind its batch, and returns the three outcomes.
    async fn queued_behind(batcher: &Arc<Batcher<u32, u32>>) -> Vec<Result<u32, StoreError>> {
        let call = |i| {
            let batcher = Arc::clone(batcher);
            tokio::spawn(async move { batcher.call(i).await })
        };
        let first = call(1);
        while batcher.batches.load(Ordering::Relaxed) == 0 {
            tokio::task::yield_now().await;
        }
        let queued = [call(2), call(3)];
        while lock(&batcher.queue).items.len() < 2 {
            tokio::task::yield_now().await;
        }
        let mut outcomes = vec![first.await.unwrap_or_else(|_| Err(abandoned()))];
        for call in queued {
            outcomes.push(call.await.unwrap_or_else(|_| Err(abandoned())));
        }
        outcomes
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_queued_behind_a_batch_that_waited_out_an_outage_fail_with_it() {
        let (batcher, served) = failing_after(OUTAGE_WAIT + Duration::from_millis(100));
        let started = Instant::now();
        let outcomes = queued_behind(&batcher).await;
        assert!(outcomes
            .iter()
            .all(|o| matches!(o, Err(StoreError::Unavailable(_)))));
        assert_eq!(
            served.load(Ordering::Relaxed),
            1,
            "the queued calls waited again"
        );
        assert!(
            started.elapsed() < 2 * OUTAGE_WAIT,
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_queued_behind_a_quick_failure_get_a_batch_of_their_own() {
        let (batcher, served) = failing_after(Duration::from_millis(20));
        let outcomes = queued_behind(&batcher).await;
        assert!(outcomes
            .iter()
            .all(|o| matches!(o, Err(StoreError::Unavailable(_)))));
        assert_eq!(served.load(Ordering::Relaxed), 2);
    }
}
