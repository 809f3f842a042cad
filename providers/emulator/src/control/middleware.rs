//! The middleware every API request passes: latency, auth, the body read under its limit,
//! the request log, rate limits and faults; and the guard of the control endpoints.

use super::{DropConnection, dropped};
use crate::app::App;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Request paths (prefixes) whose JSON bodies carry write-only values, and what hides them
/// in the log. Each service knows its own write-only fields.
type Redact = fn(&mut Value);

const WRITE_ONLY: &[(&str, Redact)] = &[
    (crate::uc::CONNECTIONS_PATH, crate::uc::redact_write_only),
    (
        crate::uc::STORAGE_CREDENTIALS_PATH,
        crate::uc::redact_credential_secret,
    ),
    (
        crate::uc::CREDENTIALS_PATH,
        crate::uc::redact_credential_secret,
    ),
    (crate::secrets::PUT_PATH, crate::secrets::redact_write_only),
];

/// Bodies larger than this are logged as a size only.
const LOG_BODY_MAX: usize = 16 * 1024;

/// The latency set, to within a fraction of a millisecond. The runtime's timer counts in
/// whole milliseconds and wakes at the tick after the deadline, so its sleep of 20 ms takes
/// 21 to 22: a latency of 20 ms would be 5–10% more than asked. The last stretch is slept by
/// a thread of the blocking pool, whose sleep is precise; only that stretch holds a thread.
async fn hold(delay: Duration) {
    /// How early the runtime's timer hands over to a thread: more than its overshoot.
    const HANDOVER: Duration = Duration::from_millis(3);
    let deadline = Instant::now() + delay;
    if let Some(coarse) = delay.checked_sub(HANDOVER) {
        tokio::time::sleep(coarse).await;
    }
    let rest = deadline.saturating_duration_since(Instant::now());
    if !rest.is_zero() {
        // A blocking pool that cannot take the task (the runtime shutting down) leaves the
        // request a little early rather than not answered.
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(rest)).await;
    }
}

/// Applied to every API request, in this order: latency, auth, body read (under the size
/// limit), log, rate limit, fault, handler, after-side-effect fault. Auth looks at the
/// headers only, so an unauthenticated request is answered without its body being read.
pub async fn middleware(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let method = parts.method.clone();
    let path = parts.uri.path().to_string();
    let c = &app.control;

    let delay = c.delay();
    if !delay.is_zero() {
        hold(delay).await;
    }
    if !crate::auth::is_public(&path)
        && let Err(e) = app.auth.check(&parts.headers)
    {
        let seq = c.log_request(&method, &path, parts.uri.query(), Value::Null);
        c.log_status(seq, e.status);
        return e.into_response();
    }
    let limit = c.body_limit(&method, &path);
    let bytes = match crate::body::read_limited(&parts.headers, body, limit).await {
        Ok(b) => b,
        Err(e) => {
            let seq = c.log_request(&method, &path, parts.uri.query(), Value::Null);
            c.log_status(seq, e.status);
            return e.into_response();
        }
    };
    // File contents are data, not API requests: the log keeps only their size.
    let binary = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/octet-stream"));
    let logged = log_body(&path, &bytes, binary);
    let seq = c.log_request(&method, &path, parts.uri.query(), logged);
    let azure = crate::entra::log_note(&app, &parts.headers);
    if !azure.is_null() {
        c.log_note(seq, "azure", azure);
    }
    if let Some(note) = crate::identity::sa_token_note(&app, &parts.headers) {
        c.log_note(seq, "gcp_sa_access_token", note);
    }

    let response = 'r: {
        if let Some(r) = c.rate_limited(&method, &path) {
            break 'r r;
        }
        let Some(f) = c.fault(&method, &path) else {
            break 'r next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
        };
        let mut request = Some((next, Request::from_parts(parts, Body::from(bytes))));
        let mut answer = None;
        if f.after_side_effect
            && let Some((next, req)) = request.take()
        {
            answer = Some(next.run(req).await);
        }
        if let Some(d) = f.delay {
            tokio::time::sleep(d).await;
        }
        if f.drop {
            break 'r dropped();
        }
        if let Some(r) = f.response {
            break 'r r;
        }
        // `delay_ms` alone: the real answer, late; without `after_side_effect` the request is
        // performed only after the wait (if the client has not closed the connection by then).
        match (answer, request) {
            (Some(a), _) => a,
            (None, Some((next, req))) => next.run(req).await,
            (None, None) => dropped(),
        }
    };
    if response.extensions().get::<DropConnection>().is_some() {
        c.log_outcome(seq, Value::Null, true);
        return response;
    }
    c.log_status(seq, response.status());
    normalised(&app, &path, response).await
}

/// The answer as `normalise_answers` rewrites it, when that behaviour is on: successful JSON
/// answers only (errors, files and exports are not the service's rendering of an object).
async fn normalised(app: &App, path: &str, response: Response) -> Response {
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !app
        .behaviours()
        .on(crate::behaviours::Behaviour::NormaliseAnswers)
        || !response.status().is_success()
        || !json
    {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // Handlers answer from memory, so reading the body whole cannot wait on a client.
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(e) => {
            return crate::errors::ApiError::internal(format!("cannot read an answer: {e}"))
                .into_response();
        }
    };
    let Ok(mut v) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    crate::normalise::answer(app.normalise_seed(), path, &mut v);
    // The length changes with the rewriting; hyper counts the new body.
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(v.to_string()))
}

/// Guards `/__emulator/*`: when the workspace has tokens, the control endpoints want one of
/// them too (they dump secrets and can reset everything); bodies are read under the API limit.
pub async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    if app.auth.has_tokens()
        && let Err(e) = app.auth.check(&parts.headers)
    {
        return e.into_response();
    }
    match crate::body::read_limited(&parts.headers, body, app.control.body_limit).await {
        Ok(bytes) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(e) => e.into_response(),
    }
}

/// What the request log keeps of a body: its JSON (write-only values redacted), its text, or
/// its size.
fn log_body(path: &str, body: &[u8], binary: bool) -> Value {
    if body.is_empty() {
        Value::Null
    } else if binary || body.len() > LOG_BODY_MAX {
        json!({"bytes": body.len()})
    } else if let Ok(mut v) = serde_json::from_slice::<Value>(body) {
        if let Some((_, redact)) = WRITE_ONLY.iter().find(|(p, _)| path.starts_with(p)) {
            redact(&mut v);
        }
        v
    } else if let Ok(s) = std::str::from_utf8(body) {
        // Token requests carry client secrets, assertions and refresh tokens in their forms.
        if path.starts_with(crate::auth::TOKEN_PATH) || path.starts_with("/_identity/") {
            Value::String(crate::auth::redact_form(s))
        } else {
            Value::String(s.to_string())
        }
    } else {
        json!({"bytes": body.len()})
    }
}
