//! A `Dns` that holds every lookup until the test opens it: `POST /v1/verify` then stays
//! in flight, inside its handler, for exactly as long as a test needs. No sleeping: the
//! test waits for the signal that a lookup reached the gate.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use posthorn_core::ports::{Dns, DnsError, RecordKind};
use posthorn_dns::StaticDns;
use tokio::sync::{watch, Notify};

pub struct GatedDns {
    inner: StaticDns,
    open: watch::Sender<bool>,
    entered: Notify,
    lookups: AtomicUsize,
}

impl GatedDns {
    /// A closed gate in front of `inner`.
    pub fn closed(inner: StaticDns) -> Arc<Self> {
        Arc::new(Self {
            inner,
            open: watch::Sender::new(false),
            entered: Notify::new(),
            lookups: AtomicUsize::new(0),
        })
    }

    /// Returns once a lookup has reached the gate (panics after 10 s without one).
    pub async fn entered(&self) {
        tokio::time::timeout(Duration::from_secs(10), self.entered.notified())
            .await
            .expect("no DNS lookup reached the gate within 10 s");
    }

    /// Lets every held and later lookup through.
    pub fn open(&self) {
        self.open.send_replace(true);
    }

    /// How many lookups were asked for so far.
    pub fn lookups(&self) -> usize {
        self.lookups.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Dns for GatedDns {
    async fn lookup(&self, name: &str, kind: RecordKind) -> Result<Vec<String>, DnsError> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        let mut open = self.open.subscribe();
        self.entered.notify_one();
        // The sender lives as long as `self`: this only returns once the gate is open.
        let _ = open.wait_for(|open| *open).await;
        self.inner.lookup(name, kind).await
    }
}

/// `request`'s answer; panics after `within` instead of hanging when it is held at a
/// closed gate (the behaviour under test is then missing).
pub async fn answered<T>(within: Duration, request: impl Future<Output = T>) -> T {
    tokio::time::timeout(within, request)
        .await
        .unwrap_or_else(|_| panic!("no answer within {within:?}: held at the gate?"))
}
