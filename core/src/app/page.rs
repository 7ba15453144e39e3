//! Page-style lists: which page a caller asks for, and the rules it obeys.

use crate::error::{Error, Result};

/// A 1-based page of a page-style list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// 1-based page number.
    pub page: u64,
    /// Page size, 1 to 100.
    pub page_size: u64,
}

impl Default for PageRequest {
    /// The first page of 20.
    fn default() -> Self {
        Self {
            page: 1,
            page_size: 20,
        }
    }
}

/// The last page a caller may ask for: beyond it a page's offset would only skip
/// everything, and the offset (page - 1) × size stays far from overflowing.
pub const MAX_PAGE: u64 = 1_000_000;

/// Refuses a page size outside 1..=100 or a page outside 1..=[`MAX_PAGE`].
pub fn check_page(page: &PageRequest) -> Result<()> {
    if !(1..=100).contains(&page.page_size) {
        return Err(Error::field(
            "pageSize",
            "out_of_range",
            "pageSize must be between 1 and 100",
        ));
    }
    if !(1..=MAX_PAGE).contains(&page.page) {
        return Err(Error::field(
            "page",
            "out_of_range",
            "page must be between 1 and 1000000",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_outside_one_to_the_last_are_refused() {
        let at = |page| {
            check_page(&PageRequest {
                page,
                page_size: 100,
            })
        };
        assert!(at(1).is_ok());
        assert!(at(MAX_PAGE).is_ok());
        for page in [0, MAX_PAGE + 1, 4_611_686_018_427_387_905, u64::MAX] {
            assert!(at(page).is_err(), "page {page}");
        }
    }
}
