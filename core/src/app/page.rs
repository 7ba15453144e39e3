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

/// Refuses a page size outside 1..=100 or a page 0.
pub fn check_page(page: &PageRequest) -> Result<()> {
    if !(1..=100).contains(&page.page_size) {
        return Err(Error::field(
            "pageSize",
            "out_of_range",
            "pageSize must be between 1 and 100",
        ));
    }
    if page.page == 0 {
        return Err(Error::field(
            "page",
            "out_of_range",
            "page must be between 1 and 1000000",
        ));
    }
    Ok(())
}
