//! Whether the server's heap may be backed by transparent huge pages.
//!
//! Off unless `POSTHORN_TRANSPARENT_HUGE_PAGES` asks for them. With huge pages the kernel
//! zeroes 2 MiB at the first touch of each one, in the middle of whichever allocation
//! reached it. A store that grows with traffic (the memory store keeps every contact and
//! event in the heap) then stalls every request waiting on the thread that pays for it:
//! on the memory store `/v1/track` with a new contact per request ran 3–8 % slower and its
//! p99 was 2.5 times as long with them (docs/performance.md).

/// Applies the setting to this process; `keep` leaves the system's policy in force.
///
/// Returns an error only when the kernel refuses the request, which costs speed, not
/// correctness, so the caller logs it and goes on.
pub fn apply(keep: bool) -> std::io::Result<()> {
    if keep {
        return Ok(());
    }
    disable()
}

#[cfg(target_os = "linux")]
fn disable() -> std::io::Result<()> {
    // PR_SET_THP_DISABLE holds for the whole process (every thread, every later mapping),
    // whatever the allocator asks for with madvise.
    rustix::thread::disable_transparent_huge_pages(true).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn disable() -> std::io::Result<()> {
    // Transparent huge pages are a Linux feature.
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_process_refuses_huge_pages_once_applied() {
        // The flag belongs to the process; no other test of this binary depends on it.
        apply(true).expect("keeping the policy never fails");
        apply(false).expect("the kernel takes PR_SET_THP_DISABLE");
        assert!(rustix::thread::transparent_huge_pages_are_disabled().expect("prctl answers"));
    }
}
