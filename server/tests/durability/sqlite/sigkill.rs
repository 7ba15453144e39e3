//! The SIGKILL scenario of `crate::sigkill` on SQLite: the restarted process opens the same
//! file (the lock died with the killed one).

use super::{sqlite_rows, DataDir};
use crate::sigkill::{sigkill_scenario, DurableStore};

impl DurableStore for DataDir {
    fn url(&self) -> String {
        self.store()
    }

    async fn leased_jobs(&self) -> Vec<(String, Option<String>)> {
        // No server holds the file now: read the leases it left.
        sqlite_rows(
            &self.db(),
            "SELECT id, json_extract(payload, '$.email_id') FROM jobs \
             WHERE state = 'running' ORDER BY id",
        )
        .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sigkill_mid_delivery_loses_nothing() {
    sigkill_scenario("sqlite sigkill", &DataDir::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sigkill_mid_workflow_resumes_every_execution() {
    crate::workflows::workflow_sigkill_scenario("sqlite workflow sigkill", &DataDir::new()).await;
}
