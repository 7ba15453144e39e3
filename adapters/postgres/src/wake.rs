//! Wake-ups for idle workers: one lazily started `LISTEN posthorn_jobs` shared by every
//! caller of `wait_for_work` on the same store.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::postgres::PgListener;
use sqlx::PgPool;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::JOBS_CHANNEL;

/// Pause before reconnecting a failed listener.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// The shared listener task and the signal it raises on every notification.
pub(crate) struct Wake {
    pool: PgPool,
    notify: Arc<Notify>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Wake {
    /// A wake-up source on `pool`; nothing listens until the first [`Wake::wait`].
    pub(crate) fn new(pool: PgPool) -> Self {
        Self {
            pool,
            notify: Arc::new(Notify::new()),
            task: Mutex::new(None),
        }
    }

    /// Returns when a notification arrives or `timeout` passes. While the listener cannot
    /// connect this simply sleeps for `timeout`, so callers fall back to polling.
    pub(crate) async fn wait(&self, timeout: Duration) {
        let notified = self.notify.notified();
        self.ensure_listening();
        // Elapsing is the normal outcome of an idle wait, not an error.
        let _elapsed = tokio::time::timeout(timeout, notified).await;
    }

    /// Starts the listener task unless it is running (it dies with its runtime).
    fn ensure_listening(&self) {
        let mut task = self.task.lock().unwrap_or_else(|e| e.into_inner());
        if task.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        *task = Some(tokio::spawn(listen(self.pool.clone(), self.notify.clone())));
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

/// Listens on [`JOBS_CHANNEL`] until the pool closes, reconnecting after failures.
async fn listen(pool: PgPool, notify: Arc<Notify>) {
    let mut reconnecting = false;
    while !pool.is_closed() {
        match subscribe(&pool).await {
            Ok(mut listener) => {
                if reconnecting {
                    // Notifications sent while disconnected are lost: let waiters re-poll.
                    notify.notify_waiters();
                }
                loop {
                    match listener.recv().await {
                        Ok(_) => notify.notify_waiters(),
                        Err(err) => {
                            tracing::warn!(error = %err, "job listener lost its connection");
                            break;
                        }
                    }
                }
            }
            Err(err) => tracing::warn!(error = %err, "job listener cannot connect"),
        }
        reconnecting = true;
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

async fn subscribe(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(JOBS_CHANNEL).await?;
    Ok(listener)
}
