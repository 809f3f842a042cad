//! A pipeline's event log as `GET /api/2.0/pipelines/{id}/events` answers it: for each
//! update, its `create_update` event and, once it has ended, an `update_progress` event
//! with its final state. A failed update's carries the reason as an ERROR event's
//! `error.exceptions[].message`, where clients read it (databricks/cli bundle/run/
//! pipeline.go, logErrorEvent: the events `level='ERROR'` of the update, most recent first).

use super::Pipeline;
use super::model::missing;
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use crate::store::{Ctx, State};
use crate::util::{compact, iso_date};
use serde_json::{Value, json};

/// The levels a `filter` keeps: `level='ERROR'` or `level in ('WARN', 'ERROR')`; `None`
/// keeps every event.
pub fn parse_levels(filter: Option<&str>) -> ApiResult<Option<Vec<String>>> {
    let Some(f) = filter.map(str::trim).filter(|f| !f.is_empty()) else {
        return Ok(None);
    };
    let bad = || {
        ApiError::invalid(format!(
            "Invalid value for parameter 'filter': '{f}' (the local workspace supports level='LEVEL' and level in ('LEVEL', ...))"
        ))
    };
    let rest = f
        .get(..5)
        .filter(|w| w.eq_ignore_ascii_case("level"))
        .map(|_| f[5..].trim_start())
        .ok_or_else(bad)?;
    let list = if let Some(v) = rest.strip_prefix('=') {
        v.to_string()
    } else if rest.get(..2).is_some_and(|w| w.eq_ignore_ascii_case("in")) {
        let v = rest[2..].trim();
        v.strip_prefix('(')
            .and_then(|v| v.strip_suffix(')'))
            .ok_or_else(bad)?
            .to_string()
    } else {
        return Err(bad());
    };
    list.split(',')
        .map(|l| {
            let l = l.trim();
            l.strip_prefix('\'')
                .and_then(|l| l.strip_suffix('\''))
                .map(str::to_ascii_uppercase)
                .ok_or_else(bad)
        })
        .collect::<ApiResult<Vec<_>>>()
        .map(Some)
}

/// Every event of the pipeline's updates up to `now`, oldest first: (time, event).
fn events(p: &Pipeline, now: i64) -> Vec<(i64, Value)> {
    let name = p.spec.get("name").cloned().unwrap_or(Value::Null);
    let mut out = Vec::new();
    for u in &p.updates {
        let short: String = u.update_id.chars().take(6).collect();
        let origin = json!({"pipeline_id": p.id, "pipeline_name": name, "update_id": u.update_id});
        let event = |n: usize, t: i64, level: &str, event_type: &str, message: String| {
            compact(json!({
                "id": format!("{}-{n}", u.update_id), "sequence": {"control_plane_seq_no": t},
                "origin": origin, "timestamp": iso_date(t), "message": message, "level": level,
                "maturity_level": "STABLE", "event_type": event_type,
            }))
        };
        if u.creation_time <= now {
            let mut e = event(
                0,
                u.creation_time,
                "INFO",
                "create_update",
                format!("Update {short} started by {}.", u.cause),
            );
            e.insert(
                "details".into(),
                json!({"create_update": {"cause": u.cause,
                    "full_refresh": u.request.get("full_refresh").cloned().unwrap_or(json!(false))}}),
            );
            out.push((u.creation_time, Value::Object(e)));
        }
        let state = u.state_at(now);
        if let Some(end) = u.end_time().filter(|_| !u.is_active(now)) {
            let failed = state == "FAILED";
            let mut e = event(
                1,
                end,
                if failed { "ERROR" } else { "INFO" },
                "update_progress",
                format!("Update {short} is {state}."),
            );
            e.insert(
                "details".into(),
                json!({"update_progress": {"state": state}}),
            );
            if let Some(why) = u.failure.as_ref().filter(|_| failed) {
                e.insert(
                    "error".into(),
                    json!({"exceptions": [{"message": why}], "fatal": true}),
                );
            }
            out.push((end, Value::Object(e)));
        }
    }
    out
}

/// One page of a pipeline's events, most recent first unless `ascending`, of the levels
/// given (all when `None`).
pub fn list_events(
    st: &State,
    ctx: &Ctx,
    id: &str,
    levels: Option<&[String]>,
    ascending: bool,
    page: &Page,
) -> ApiResult<(Vec<Value>, Option<String>)> {
    let p = st.pipelines.pipelines.get(id).ok_or_else(|| missing(id))?;
    let mut all: Vec<Value> = {
        let mut e = events(p, ctx.now);
        // Stable: an update's events keep their order at one time.
        e.sort_by_key(|(t, _)| *t);
        e.into_iter().map(|(_, v)| v).collect()
    };
    if !ascending {
        all.reverse();
    }
    let kept = all.into_iter().filter(|e| {
        levels.is_none_or(|l| {
            e.get("level")
                .and_then(Value::as_str)
                .is_some_and(|lv| l.iter().any(|x| x == lv))
        })
    });
    // The token is the id of the last event returned: the next page starts after it.
    let after = page.after.clone();
    let keyed = kept
        .map(|e| {
            (
                e.get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                e,
            )
        })
        .skip_while(|(k, _)| after.as_ref().is_some_and(|a| a != k))
        .skip(usize::from(after.is_some()));
    Ok(page.collect(keyed))
}

#[cfg(test)]
mod tests {
    use super::super::model::{PipelineRequest, create_pipeline, start};
    use super::*;
    use serde_json::Map;

    #[test]
    fn a_failed_update_has_an_error_event_with_its_reason_and_pages_go_back_in_time() {
        let ctx = |now| Ctx::for_test(now, 100);
        let mut st = State::new("u@x", 0);
        let body = json!({"name": "p", "catalog": "c", "schema": "s"});
        let id = create_pipeline(
            &mut st,
            &ctx(0),
            PipelineRequest {
                body: body.as_object().unwrap(),
                name: Some("p"),
                allow_duplicate_names: false,
                run_as: None,
                parameters: None,
            },
        )
        .unwrap();
        let uid = start(&mut st, &ctx(0), &id, "API_CALL", Map::new()).unwrap();
        let all = Page::new(None, None, 25, 100, "max_results").unwrap();
        let errors = ["ERROR".to_string()];
        // Still going: no error yet.
        let (e, _) = list_events(&st, &ctx(100), &id, Some(&errors), false, &all).unwrap();
        assert!(e.is_empty(), "{e:?}");
        let (e, _) = list_events(&st, &ctx(1_000), &id, Some(&errors), false, &all).unwrap();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0]["origin"]["update_id"], json!(uid));
        assert_eq!(e[0]["details"]["update_progress"]["state"], "FAILED");
        assert_eq!(
            e[0]["error"]["exceptions"][0]["message"],
            "Schema 'c.s' does not exist."
        );
        // Every event, one a page, most recent first.
        let one = Page::new(None, Some(1), 25, 100, "max_results").unwrap();
        let (first, token) = list_events(&st, &ctx(1_000), &id, None, false, &one).unwrap();
        assert_eq!(first[0]["event_type"], "update_progress");
        let next = Page::new(token.as_deref(), Some(1), 25, 100, "max_results").unwrap();
        let (second, token) = list_events(&st, &ctx(1_000), &id, None, false, &next).unwrap();
        assert_eq!(second[0]["event_type"], "create_update");
        assert!(token.is_none());
    }

    #[test]
    fn level_filters_are_read_and_others_refused() {
        assert_eq!(parse_levels(None).unwrap(), None);
        assert_eq!(
            parse_levels(Some("level='ERROR'")).unwrap(),
            Some(vec!["ERROR".to_string()])
        );
        assert_eq!(
            parse_levels(Some("LEVEL in ('warn', 'ERROR')")).unwrap(),
            Some(vec!["WARN".to_string(), "ERROR".to_string()])
        );
        assert!(parse_levels(Some("timestamp > '2024-01-01'")).is_err());
        assert!(parse_levels(Some("level=ERROR")).is_err());
    }
}
