//! Page-style query parameters: `page` and `pageSize` (or its alias `limit`).

use std::collections::HashMap;

use posthorn_core::app::PageRequest;
use posthorn_core::validate::Checker;

/// Reads `page` (>= 1, default 1) and the page size (`pageSize`, or `limit`; 1 to 100,
/// default 20), recording what is wrong.
pub fn page_request(c: &mut Checker, query: &HashMap<String, String>) -> PageRequest {
    let page = c.query_int(query, "page", 1, 1_000_000, 1) as u64;
    PageRequest {
        page,
        page_size: c.page_size(query),
    }
}
