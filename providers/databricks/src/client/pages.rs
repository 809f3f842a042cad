//! Pagination: every list call follows `next_page_token` until it is absent or empty, asking
//! for the largest page each API allows so a refresh takes few round trips.

use serde_json::Value;

use super::{ApiError, Client};

/// How a list API is asked for its largest page: the parameter and its value. Each kind
/// declares its list call's page size next to its schema (UC lists take `max_results=0`,
/// "server picks", what the SDK sends; jobs take `limit=100`); `None` for APIs with no
/// such parameter or no useful default (UC volumes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSize {
    pub param: &'static str,
    pub value: &'static str,
}

impl PageSize {
    pub const fn new(param: &'static str, value: &'static str) -> Self {
        PageSize { param, value }
    }
}

impl Client {
    /// Every item of a list call if it takes at most `max_pages` pages; `None` when there
    /// are more (a listing meant to replace a few lookups that would cost more than them).
    pub async fn list_pages(
        &self,
        path: &str,
        items_key: &str,
        page: PageSize,
        max_pages: usize,
    ) -> Result<Option<Vec<Value>>, ApiError> {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..max_pages {
            let mut q = vec![(page.param, page.value.to_string())];
            if let Some(t) = &token {
                q.push(("page_token", t.clone()));
            }
            let answer = self.get(path, &q).await?;
            if let Some(Value::Array(list)) = answer.get(items_key) {
                items.extend(list.iter().cloned());
            }
            match answer.get("next_page_token").and_then(Value::as_str) {
                Some(t) if !t.is_empty() && token.as_deref() != Some(t) => {
                    token = Some(t.to_string())
                }
                _ => return Ok(Some(items)),
            }
        }
        Ok(None)
    }

    /// Every page of a list call. `items_key` is the array in each page (`catalogs`, `jobs`,
    /// `statuses`, `contents`, …); a page without it counts as empty (pages may be empty yet
    /// carry a token). `page` is the caller's page size; one already in `query` wins.
    pub async fn list_all(
        &self,
        path: &str,
        query: &[(&str, String)],
        items_key: &str,
        page: Option<PageSize>,
    ) -> Result<Vec<Value>, ApiError> {
        let mut base: Vec<(&str, String)> = query
            .iter()
            .filter(|(k, _)| *k != "page_token")
            .cloned()
            .collect();
        if let Some(PageSize { param, value }) = page
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
