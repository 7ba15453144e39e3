//! The store's notifications, on one lazily started listener connection shared by every
//! caller on the same store: job wake-ups for idle workers ([`JOBS_CHANNEL`]) and access
//! changes for authentication caches ([`ACCESS_CHANNEL`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::postgres::PgListener;
use sqlx::PgPool;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::{ACCESS_CHANNEL, JOBS_CHANNEL};

/// Pause before reconnecting a failed listener.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// The shared listener task and the signals it raises.
pub(crate) struct Wake {
    pool: PgPool,
    signals: Arc<Signals>,
    task: Mutex<Option<JoinHandle<()>>>,
    /// Set once the task was spawned, so the hot path skips the mutex.
    started: AtomicBool,
}

/// What the listener raises.
#[derive(Default)]
struct Signals {
    /// Wakes the workers waiting in `wait_for_work`.
    work: Notify,
    /// Moves on every access notification, and whenever one may have been missed.
    access: AtomicU64,
}

impl Signals {
    /// Wakes every waiting worker, and the next one to wait when none is: a notification
    /// that arrives between a worker's empty claim and its wait would otherwise be lost and
    /// leave the job to the idle poll.
    fn wake_workers(&self) {
        self.work.notify_waiters();
        self.work.notify_one();
    }
}

impl Wake {
    /// A notification source on `pool`; nothing listens until the first use.
    pub(crate) fn new(pool: PgPool) -> Self {
        Self {
            pool,
            signals: Arc::default(),
            task: Mutex::new(None),
            started: AtomicBool::new(false),
        }
    }

    /// Returns when a job notification arrives or `timeout` passes. While the listener
    /// cannot connect this simply sleeps for `timeout`, so callers fall back to polling.
    pub(crate) async fn wait(&self, timeout: Duration) {
        let notified = self.signals.work.notified();
        self.ensure_listening();
        // Elapsing is the normal outcome of an idle wait, not an error.
        let _elapsed = tokio::time::timeout(timeout, notified).await;
    }

    /// The access generation (see `Store::access_generation`); starts the listener.
    pub(crate) fn access_generation(&self) -> u64 {
        if !self.started.load(Ordering::Acquire) {
            self.ensure_listening();
        }
        self.signals.access.load(Ordering::Acquire)
    }

    /// Moves the access generation for a change committed by this process, which need
    /// not wait for its own notification to come back.
    pub(crate) fn access_changed(&self) {
        self.signals.access.fetch_add(1, Ordering::AcqRel);
    }

    /// Starts the listener task unless it is running (it dies with its runtime).
    fn ensure_listening(&self) {
        let mut task = self.task.lock().unwrap_or_else(|e| e.into_inner());
        if task.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        *task = Some(runtime.spawn(listen(self.pool.clone(), self.signals.clone())));
        self.started.store(true, Ordering::Release);
    }
}

impl Drop for Wake {
    fn drop(&mut self) {
        let task = self.task.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(task) = task.take() {
            task.abort();
        }
    }
}

/// Listens on both channels until the pool closes, reconnecting after failures.
async fn listen(pool: PgPool, signals: Arc<Signals>) {
    let mut reconnecting = false;
    while !pool.is_closed() {
        match subscribe(&pool).await {
            Ok(mut listener) => {
                // Whatever was sent before this subscription is lost: access caches filled
                // before now are dropped, and after a reconnection workers re-poll.
                if reconnecting {
                    signals.wake_workers();
                }
                signals.access.fetch_add(1, Ordering::AcqRel);
                loop {
                    match listener.recv().await {
                        Ok(n) if n.channel() == ACCESS_CHANNEL => {
                            signals.access.fetch_add(1, Ordering::AcqRel);
                        }
                        Ok(_) => signals.wake_workers(),
                        Err(err) => {
                            tracing::warn!(error = %err, "store listener lost its connection");
                            // Until it is back, nothing announces revocations: move on now.
                            signals.access.fetch_add(1, Ordering::AcqRel);
                            break;
                        }
                    }
                }
            }
            Err(err) => {
                tracing::warn!(error = %err, "store listener cannot connect");
                signals.access.fetch_add(1, Ordering::AcqRel);
            }
        }
        reconnecting = true;
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

async fn subscribe(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen_all([JOBS_CHANNEL, ACCESS_CHANNEL]).await?;
    Ok(listener)
}
