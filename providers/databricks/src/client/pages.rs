//! Pagination: every list call follows `next_page_token` until it is absent or empty, asking
//! for the largest page each API allows so a refresh takes few round trips.

use serde_json::Value;

use super::{ApiError, Client};

/// The page-size parameter and value for a list path, per API. UC lists take `max_results=0`
/// ("server picks", what the SDK sends), except volumes, which have no such default.
fn page_size_param(path: &str) -> Option<(&'static str, &'static str)> {
    let path = path.trim_end_matches('/');
    if path.starts_with("/api/2.1/unity-catalog/volumes") {
        None
    } else if path.starts_with("/api/2.1/unity-catalog/") {
        Some(("max_results", "0"))
    } else if path == "/api/2.0/pipelines" {
        Some(("max_results", "100"))
    } else if path.ends_with("/jobs/list") {
        Some(("limit", "100"))
    } else if path.ends_with("/jobs/runs/list") {
        // The real service caps runs pages lower than jobs pages.
        Some(("limit", "25"))
    } else if path.starts_with("/api/2.0/fs/directories") {
        Some(("page_size", "1000"))
    } else {
        None
    }
}

impl Client {
    /// Every page of a list call. `items_key` is the array in each page (`catalogs`, `jobs`,
    /// `statuses`, `contents`, …); a page without it counts as empty (pages may be empty yet
    /// carry a token). A page-size parameter already in `query` wins over the per-API default.
    pub async fn list_all(
        &self,
        path: &str,
        query: &[(&str, String)],
        items_key: &str,
    ) -> Result<Vec<Value>, ApiError> {
        let mut base: Vec<(&str, String)> = query
            .iter()
            .filter(|(k, _)| *k != "page_token")
            .cloned()
            .collect();
        if let Some((param, value)) = page_size_param(path)
            && !base.iter().any(|(k, _)| *k == param)
        {
            base.push((param, value.to_string()));
        }
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        loop {
            let mut q = base.clone();
            if let Some(t) = &token {
                q.push(("page_token", t.clone()));
            }
            let page = self.get(path, &q).await?;
            if let Some(Value::Array(list)) = page.get(items_key) {
                items.extend(list.iter().cloned());
            }
            match page.get("next_page_token").and_then(Value::as_str) {
                Some(t) if !t.is_empty() => {
                    // A server that hands back a token it already gave would loop forever.
                    if !seen.insert(t.to_string()) {
                        return Err(ApiError::bad_body(
                            200,
                            format!("{path}: the server repeated page token {t:?}"),
                        ));
                    }
                    token = Some(t.to_string());
                }
                _ => return Ok(items),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_sizes() {
        assert_eq!(
            page_size_param("/api/2.1/unity-catalog/schemas"),
            Some(("max_results", "0"))
        );
        assert_eq!(page_size_param("/api/2.1/unity-catalog/volumes"), None);
        assert_eq!(
            page_size_param("/api/2.2/jobs/list"),
            Some(("limit", "100"))
        );
        assert_eq!(
            page_size_param("/api/2.0/pipelines"),
            Some(("max_results", "100"))
        );
        assert_eq!(
            page_size_param("/api/2.0/fs/directories/Volumes/a"),
            Some(("page_size", "1000"))
        );
    }
}
