//! The binary turns transparent huge pages off for itself unless told to keep them
//! (`POSTHORN_TRANSPARENT_HUGE_PAGES`), as the kernel reports in `/proc/<pid>/status`.

use std::path::Path;

use crate::support::posthorn::{free_port, note, Posthorn};

/// `THP_enabled` of `/proc/<pid>/status`: false once the process set PR_SET_THP_DISABLE.
fn thp_enabled(process: &Posthorn) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{}/status", process.pid()))
        .unwrap_or_else(|e| panic!("{}: reading its /proc status failed: {e}", process.name));
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("THP_enabled:"))
        .unwrap_or_else(|| panic!("{}: no THP_enabled line in\n{status}", process.name));
    line.trim() == "1"
}

#[tokio::test]
async fn the_server_refuses_huge_pages_unless_told_to_keep_them() {
    if !Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
        note("huge pages test skipped: this kernel has no transparent huge pages");
        return;
    }
    let mut default = Posthorn::start("thp-default", "memory", free_port()).await;
    assert!(
        !thp_enabled(&default),
        "{}: transparent huge pages are still enabled\n{}",
        default.name,
        default.logs()
    );
    default.sigkill().await;

    let mut keeping = Posthorn::start_with(
        "thp-kept",
        "memory",
        free_port(),
        &[("POSTHORN_TRANSPARENT_HUGE_PAGES", "true")],
    )
    .await;
    assert!(
        thp_enabled(&keeping),
        "{}: POSTHORN_TRANSPARENT_HUGE_PAGES=true did not keep them\n{}",
        keeping.name,
        keeping.logs()
    );
    keeping.sigkill().await;
}
