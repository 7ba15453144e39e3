//! The job workers give way to requests: while the API is saturated they run at most the
//! reduced number of jobs at once, claimed together, and take every slot again once the
//! burst has passed. On tokio's paused clock, like the lease tests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use posthorn_runtime::prelude::*;

use crate::lease::burst;

/// A transport that holds each message for 45 to 54 ms (messages sent together finish at
/// different instants, as real deliveries do), recording the most it held at once.
#[derive(Default)]
struct PeakTransport {
    started: AtomicUsize,
    holding: AtomicUsize,
    peak: AtomicUsize,
    sent: AtomicUsize,
}

#[async_trait]
impl MailTransport for PeakTransport {
    async fn send(&self, message: &OutgoingMessage) -> Result<String, TransportError> {
        let holding = self.holding.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(holding, Ordering::SeqCst);
        let n = self.started.fetch_add(1, Ordering::SeqCst) as u64;
        tokio::time::sleep(Duration::from_millis(45 + 3 * (n % 4))).await;
        self.holding.fetch_sub(1, Ordering::SeqCst);
        self.sent.fetch_add(1, Ordering::SeqCst);
        Ok(message.message_id.clone())
    }
}

async fn wait_until_sent(transport: &PeakTransport, count: usize) {
    while transport.sent.load(Ordering::SeqCst) < count {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn workers_run_fewer_jobs_while_the_api_is_saturated_and_all_of_them_after() {
    const EMAILS: usize = 96;
    let transport = Arc::new(PeakTransport::default());
    let (engine, jobs) = burst(transport.clone(), EMAILS).await;

    let requests = RequestGauge::default();
    let saturated: Vec<_> = (0..4).map(|_| requests.enter()).collect();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let workers = tokio::spawn(run_workers(
        engine.clone(),
        WorkerOptions {
            concurrency: 16,
            give_way: Some(GiveWay {
                requests: requests.clone(),
                busy_at: 4,
                concurrency: 2,
            }),
        },
        stopped,
    ));
    wait_until_sent(&transport, EMAILS / 2).await;
    assert_eq!(
        transport.peak.load(Ordering::SeqCst),
        2,
        "at most two deliveries at once while the API is saturated"
    );
    let claims = jobs.claims.load(Ordering::SeqCst);
    assert!(
        claims <= EMAILS / 2 / 2 + 2,
        "{claims} claims for {} jobs: the two slots were not claimed together",
        EMAILS / 2
    );

    drop(saturated);
    transport.peak.store(0, Ordering::SeqCst);
    wait_until_sent(&transport, EMAILS).await;
    stop.send(true).expect("workers listen");
    workers.await.expect("workers stop");
    let peak = transport.peak.load(Ordering::SeqCst);
    assert!(
        peak > 8,
        "the burst has passed: the workers take their slots again (peak {peak})"
    );
    assert_eq!(transport.sent.load(Ordering::SeqCst), EMAILS, "each once");
}
