//! `/__emulator/…`: fault injection, latency, rate limits, reset, request log, state dump,
//! timings and clock. Also the middleware that applies them to every API request.

use crate::app::App;
use crate::body::{JsonBody, Obj};
use crate::config::{EmulatorConfig, Timings};
use crate::errors::{ApiError, ApiResult};
use crate::store::lock;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use regex::Regex;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the request log shows instead of a write-only value.
pub const REDACTED: &str = "**REDACTED**";

/// Request paths (prefixes) whose JSON bodies carry write-only values, and what hides them
/// in the log. Each service knows its own write-only fields.
type Redact = fn(&mut Value);
const WRITE_ONLY: &[(&str, Redact)] = &[
    (crate::uc::CONNECTIONS_PATH, crate::uc::redact_write_only),
    (crate::secrets::PUT_PATH, crate::secrets::redact_write_only),
];

/// Bodies larger than this are logged as a size only.
const LOG_BODY_MAX: usize = 16 * 1024;

pub struct Control {
    faults: Mutex<Vec<Fault>>,
    latency: Mutex<Latency>,
    limits: Mutex<Vec<RateLimit>>,
    log: Mutex<RequestLog>,
    body_limit: usize,
    file_body_limit: usize,
}

struct RequestLog {
    entries: VecDeque<Value>,
    capacity: usize,
    seq: u64,
}

/// Which requests a rule applies to: optional method, and a regex that must match the
/// whole path (query excluded).
#[derive(Clone)]
struct Matcher {
    method: Option<Method>,
    path: Regex,
    path_src: String,
}

impl Matcher {
    fn parse(o: Obj) -> ApiResult<Matcher> {
        let method = match o.str("method")? {
            None => None,
            Some(m) => Some(
                Method::from_bytes(m.to_ascii_uppercase().as_bytes()).map_err(|_| {
                    ApiError::invalid(format!("Invalid value for field 'method': '{m}'"))
                })?,
            ),
        };
        let src = o.str("path")?.unwrap_or(".*").to_string();
        let path = Regex::new(&format!("^(?:{src})$"))
            .map_err(|e| ApiError::invalid(format!("Invalid value for field 'path': {e}")))?;
        Ok(Matcher {
            method,
            path,
            path_src: src,
        })
    }

    fn matches(&self, method: &Method, path: &str) -> bool {
        self.method.as_ref().is_none_or(|m| m == method) && self.path.is_match(path)
    }

    fn describe(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(
            "method".into(),
            self.method
                .as_ref()
                .map_or(Value::Null, |m| Value::String(m.to_string())),
        );
        m.insert("path".into(), Value::String(self.path_src.clone()));
        m
    }
}

struct Fault {
    id: u64,
    matcher: Matcher,
    /// The injected error answer; `None` when the fault only holds the real answer
    /// (`delay_ms` alone) or drops the connection.
    status: Option<StatusCode>,
    body: Value,
    retry_after: Option<u64>,
    /// Close the connection instead of answering: the client sees a reset or an incomplete
    /// message, as when a proxy or the service dies mid-request.
    drop: bool,
    /// Hold the answer this long before sending it (or before dropping), so a client with a
    /// shorter timeout gives up first.
    delay: Option<Duration>,
    /// Let this many matching requests through first.
    after: u64,
    /// Fire this many times; 0 means every time.
    times: u64,
    /// Perform the request, then answer with the fault (the caller never learns it worked).
    after_side_effect: bool,
    /// Chance that a matching request (past `after`) fails; 1 means every one.
    probability: f64,
    /// Draws for `probability`, seeded so a test sees the same sequence every run.
    rng: StdRng,
    seen: u64,
    fired: u64,
}

impl Fault {
    fn fired(&self) -> Fired {
        let response = self.status.map(|status| {
            let mut r = (status, Json(self.body.clone())).into_response();
            if let Some(s) = self.retry_after
                && let Ok(v) = HeaderValue::from_str(&s.to_string())
            {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
            r
        });
        Fired {
            response,
            after_side_effect: self.after_side_effect,
            drop: self.drop,
            delay: self.delay,
        }
    }
}

/// What a fault that fires does to one request.
struct Fired {
    /// The injected answer; `None`: the handler's own (or none, when dropped).
    response: Option<Response>,
    /// Perform the request first.
    after_side_effect: bool,
    drop: bool,
    delay: Option<Duration>,
}

/// Marks a response that must not be sent: the accept loop closes the connection instead
/// (see `serve` in lib.rs). The response itself is what an embedder of the bare router sees.
#[derive(Clone, Copy)]
pub struct DropConnection;

fn dropped() -> Response {
    let mut r = ApiError::new(
        StatusCode::BAD_GATEWAY,
        "CONNECTION_DROPPED",
        "The connection was dropped by an injected fault.",
    )
    .into_response();
    r.extensions_mut().insert(DropConnection);
    r
}

/// The longest `delay_ms` a fault may hold an answer: long enough for any client timeout a
/// test sets, short enough that a typo does not park a connection for hours.
const MAX_FAULT_DELAY_MS: u64 = 10 * 60 * 1000;

#[derive(Default, Clone, Copy)]
struct Latency {
    min_ms: u64,
    max_ms: u64,
}

struct RateLimit {
    matcher: Matcher,
    per_second: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
    retry_after: Option<u64>,
}

fn default_code(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "INVALID_PARAMETER_VALUE",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "REQUEST_LIMIT_EXCEEDED",
        500 => "INTERNAL_ERROR",
        501 => "NOT_IMPLEMENTED",
        503 => "TEMPORARILY_UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    }
}

impl Control {
    pub fn new(config: &EmulatorConfig) -> Control {
        let ms = u64::try_from(config.latency.as_millis()).unwrap_or(u64::MAX);
        Control {
            faults: Mutex::new(Vec::new()),
            latency: Mutex::new(Latency {
                min_ms: ms,
                max_ms: ms,
            }),
            limits: Mutex::new(Vec::new()),
            log: Mutex::new(RequestLog {
                entries: VecDeque::new(),
                capacity: config.request_log_capacity,
                seq: 0,
            }),
            body_limit: config.body_limit,
            file_body_limit: config.file_body_limit,
        }
    }

    /// Volume file uploads carry file contents and get their own, higher limit.
    fn body_limit(&self, method: &Method, path: &str) -> usize {
        if method == Method::PUT && path.starts_with(crate::files::FILES_PREFIX) {
            self.file_body_limit
        } else {
            self.body_limit
        }
    }

    fn clear(&self) {
        lock(&self.faults).clear();
        *lock(&self.latency) = Latency::default();
        lock(&self.limits).clear();
        let mut log = lock(&self.log);
        log.entries.clear();
    }

    fn delay(&self) -> Duration {
        let l = *lock(&self.latency);
        let ms = if l.max_ms > l.min_ms {
            rand::random_range(l.min_ms..=l.max_ms)
        } else {
            l.min_ms
        };
        Duration::from_millis(ms)
    }

    fn rate_limited(&self, method: &Method, path: &str) -> Option<Response> {
        let mut limits = lock(&self.limits);
        let now = Instant::now();
        for l in limits
            .iter_mut()
            .filter(|l| l.matcher.matches(method, path))
        {
            let elapsed = now.duration_since(l.last).as_secs_f64();
            l.last = now;
            l.tokens = (l.tokens + elapsed * l.per_second).min(l.burst);
            if l.tokens >= 1.0 {
                l.tokens -= 1.0;
                continue;
            }
            let wait = l
                .retry_after
                .unwrap_or_else(|| ((1.0 - l.tokens) / l.per_second).ceil().max(1.0) as u64);
            let err = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "REQUEST_LIMIT_EXCEEDED",
                format!("Rate limit exceeded for {method} {path}; retry after {wait} s."),
            );
            let mut r = err.into_response();
            if let Ok(v) = HeaderValue::from_str(&wait.to_string()) {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
            return Some(r);
        }
        None
    }

    /// The first fault that fires for this request.
    fn fault(&self, method: &Method, path: &str) -> Option<Fired> {
        let mut faults = lock(&self.faults);
        for f in faults
            .iter_mut()
            .filter(|f| f.matcher.matches(method, path))
        {
            if f.times != 0 && f.fired >= f.times {
                continue;
            }
            f.seen += 1;
            if f.seen <= f.after {
                continue;
            }
            if f.probability < 1.0 && f.rng.random::<f64>() >= f.probability {
                continue;
            }
            f.fired += 1;
            return Some(f.fired());
        }
        None
    }

    fn log_request(&self, method: &Method, path: &str, query: Option<&str>, body: Value) -> u64 {
        let mut log = lock(&self.log);
        log.seq += 1;
        let seq = log.seq;
        if log.capacity == 0 {
            return seq;
        }
        while log.entries.len() >= log.capacity {
            log.entries.pop_front();
        }
        log.entries.push_back(json!({"seq": seq, "method": method.as_str(), "path": path, "query": query, "body": body, "status": Value::Null}));
        seq
    }

    fn log_status(&self, seq: u64, status: StatusCode) {
        self.log_outcome(seq, json!(status.as_u16()), false);
    }

    /// Records the answer's status, or that the connection was dropped (status null).
    fn log_outcome(&self, seq: u64, status: Value, dropped: bool) {
        let mut log = lock(&self.log);
        if let Some(e) = log
            .entries
            .iter_mut()
            .rev()
            .find(|e| e["seq"] == json!(seq))
        {
            e["status"] = status;
            if dropped {
                e["dropped"] = json!(true);
            }
        }
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
        tokio::time::sleep(delay).await;
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
    } else {
        c.log_status(seq, response.status());
    }
    response
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
        if path.starts_with(crate::auth::TOKEN_PATH) {
            Value::String(crate::auth::redact_form(s))
        } else {
            Value::String(s.to_string())
        }
    } else {
        json!({"bytes": body.len()})
    }
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            "/__emulator/faults",
            post(add_fault).get(list_faults).delete(clear_faults),
        )
        .route(
            "/__emulator/latency",
            post(set_latency).get(get_latency).delete(clear_latency),
        )
        .route(
            "/__emulator/rate-limits",
            post(add_limit).get(list_limits).delete(clear_limits),
        )
        .route("/__emulator/requests", get(requests).delete(clear_requests))
        .route("/__emulator/reset", post(reset))
        .route("/__emulator/state", get(state))
        .route("/__emulator/timings", get(get_timings).post(set_timings))
        .route("/__emulator/clock", get(get_clock).post(advance_clock))
        .route(
            "/__emulator/behaviours",
            get(get_behaviours).post(set_behaviours),
        )
        .route(
            "/__emulator/health",
            get(|| async { Json(json!({"status": "ok"})) }),
        )
}

fn non_negative(o: Obj, key: &str) -> ApiResult<Option<u64>> {
    match o.int(key)? {
        None => Ok(None),
        Some(n) => u64::try_from(n).map(Some).map_err(|_| {
            ApiError::invalid(format!(
                "Invalid value for field '{key}': must not be negative"
            ))
        }),
    }
}

async fn add_fault(State(app): State<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let mut faults = lock(&app.control.faults);
    let id = faults.iter().map(|f| f.id).max().unwrap_or(0) + 1;
    faults.push(Fault::parse(id, &b)?);
    Ok(Json(json!({"id": id})))
}

impl Fault {
    /// A fault from the body of `POST /__emulator/faults`.
    fn parse(id: u64, b: &Map<String, Value>) -> ApiResult<Fault> {
        let o = Obj::root(b);
        let matcher = Matcher::parse(o)?;
        let drop = o.bool("drop")?.unwrap_or(false);
        let delay = match non_negative(o, "delay_ms")? {
            Some(ms) if ms > MAX_FAULT_DELAY_MS => {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field 'delay_ms': {ms}; at most {MAX_FAULT_DELAY_MS}"
                )));
            }
            ms => ms.map(Duration::from_millis),
        };
        let given = |k: &str| o.get(k).is_some_and(|v| !v.is_null());
        // The fields that shape an injected answer, which a dropped connection never sends
        // and a delay alone (the real answer, late) does not make.
        let answer_fields = ["status", "body", "error_code", "message", "retry_after"];
        if drop && let Some(k) = answer_fields.iter().find(|k| given(k)) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{k}': a fault with 'drop' sends no answer"
            )));
        }
        if delay.is_some()
            && !given("status")
            && let Some(k) = answer_fields[1..].iter().find(|k| given(k))
        {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{k}': it shapes an injected answer; set 'status' too (without it, 'delay_ms' holds the real answer)"
            )));
        }
        let status = match o.int("status")? {
            None if drop || delay.is_some() => None,
            code => {
                let code = code.unwrap_or(503);
                Some(
                    u16::try_from(code)
                        .ok()
                        .and_then(|c| StatusCode::from_u16(c).ok())
                        .filter(|s| s.as_u16() >= 200)
                        .ok_or_else(|| {
                            ApiError::invalid(format!("Invalid value for field 'status': {code}"))
                        })?,
                )
            }
        };
        let body = match (o.get("body"), status) {
            (_, None) => Value::Null,
            (Some(v), _) => v.clone(),
            (None, Some(status)) => json!({
                "error_code": o.str("error_code")?.unwrap_or(default_code(status)),
                "message": o.str("message")?.unwrap_or("Injected fault"),
            }),
        };
        let probability = match o.get("probability") {
            None | Some(Value::Null) => 1.0,
            Some(v) => v
                .as_f64()
                .filter(|p| (0.0..=1.0).contains(p))
                .ok_or_else(|| {
                    ApiError::invalid(format!(
                        "Invalid value for field 'probability': {v}; expected a number from 0 to 1"
                    ))
                })?,
        };
        Ok(Fault {
            id,
            matcher,
            status,
            body,
            retry_after: non_negative(o, "retry_after")?,
            drop,
            delay,
            after: non_negative(o, "after")?.unwrap_or(0),
            times: non_negative(o, "times")?.unwrap_or(1),
            after_side_effect: o.bool("after_side_effect")?.unwrap_or(false),
            probability,
            rng: match non_negative(o, "seed")? {
                Some(seed) => StdRng::seed_from_u64(seed),
                None => StdRng::from_os_rng(),
            },
            seen: 0,
            fired: 0,
        })
    }
}

async fn list_faults(State(app): State<Arc<App>>) -> Json<Value> {
    let faults = lock(&app.control.faults);
    let list: Vec<Value> = faults
        .iter()
        .map(|f| {
            let mut m = f.matcher.describe();
            m.insert("id".into(), json!(f.id));
            m.insert("status".into(), json!(f.status.map(|s| s.as_u16())));
            m.insert("drop".into(), json!(f.drop));
            m.insert(
                "delay_ms".into(),
                json!(
                    f.delay
                        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                ),
            );
            m.insert("body".into(), f.body.clone());
            m.insert("after".into(), json!(f.after));
            m.insert("times".into(), json!(f.times));
            m.insert("after_side_effect".into(), json!(f.after_side_effect));
            m.insert("probability".into(), json!(f.probability));
            m.insert("fired".into(), json!(f.fired));
            Value::Object(m)
        })
        .collect();
    Json(json!({"faults": list}))
}

async fn clear_faults(State(app): State<Arc<App>>) -> Json<Value> {
    lock(&app.control.faults).clear();
    Json(json!({}))
}

async fn set_latency(State(app): State<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let l = match (
        non_negative(o, "fixed_ms")?,
        non_negative(o, "min_ms")?,
        non_negative(o, "max_ms")?,
    ) {
        (Some(f), None, None) => Latency {
            min_ms: f,
            max_ms: f,
        },
        (None, Some(a), Some(b)) if a <= b => Latency {
            min_ms: a,
            max_ms: b,
        },
        _ => {
            return Err(ApiError::invalid(
                "Set either 'fixed_ms', or 'min_ms' and 'max_ms' with min_ms <= max_ms",
            ));
        }
    };
    *lock(&app.control.latency) = l;
    Ok(Json(json!({"min_ms": l.min_ms, "max_ms": l.max_ms})))
}

async fn get_latency(State(app): State<Arc<App>>) -> Json<Value> {
    let l = *lock(&app.control.latency);
    Json(json!({"min_ms": l.min_ms, "max_ms": l.max_ms}))
}

async fn clear_latency(State(app): State<Arc<App>>) -> Json<Value> {
    *lock(&app.control.latency) = Latency::default();
    Json(json!({}))
}

async fn add_limit(State(app): State<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let matcher = Matcher::parse(o)?;
    let per_second = match o.get("per_second") {
        Some(Value::Number(n)) => n.as_f64().filter(|f| *f > 0.0),
        _ => None,
    }
    .ok_or_else(|| {
        ApiError::invalid("Invalid value for field 'per_second': expected a number > 0")
    })?;
    let burst = non_negative(o, "burst")?
        .map_or(per_second.ceil(), |b| b as f64)
        .max(1.0);
    lock(&app.control.limits).push(RateLimit {
        matcher,
        per_second,
        burst,
        tokens: burst,
        last: Instant::now(),
        retry_after: non_negative(o, "retry_after")?,
    });
    Ok(Json(json!({})))
}

async fn list_limits(State(app): State<Arc<App>>) -> Json<Value> {
    let limits = lock(&app.control.limits);
    let list: Vec<Value> = limits
        .iter()
        .map(|l| {
            let mut m = l.matcher.describe();
            m.insert("per_second".into(), json!(l.per_second));
            m.insert("burst".into(), json!(l.burst));
            Value::Object(m)
        })
        .collect();
    Json(json!({"rate_limits": list}))
}

async fn clear_limits(State(app): State<Arc<App>>) -> Json<Value> {
    lock(&app.control.limits).clear();
    Json(json!({}))
}

async fn requests(
    State(app): State<Arc<App>>,
    crate::body::Params(q): crate::body::Params,
) -> ApiResult<Json<Value>> {
    let q = crate::body::Params(q);
    let path =
        match q.str("path") {
            Some(p) => Some(Regex::new(&format!("^(?:{p})$")).map_err(|e| {
                ApiError::invalid(format!("Invalid value for parameter 'path': {e}"))
            })?),
            None => None,
        };
    let method = q.str("method").map(str::to_ascii_uppercase);
    let log = lock(&app.control.log);
    let list: Vec<Value> = log
        .entries
        .iter()
        .filter(|e| method.as_deref().is_none_or(|m| e["method"] == m))
        .filter(|e| {
            path.as_ref()
                .is_none_or(|r| e["path"].as_str().is_some_and(|p| r.is_match(p)))
        })
        .cloned()
        .collect();
    Ok(Json(json!({"requests": list})))
}

async fn clear_requests(State(app): State<Arc<App>>) -> Json<Value> {
    lock(&app.control.log).entries.clear();
    Json(json!({}))
}

async fn reset(State(app): State<Arc<App>>) -> ApiResult<Json<Value>> {
    app.reset()?;
    app.control.clear();
    Ok(Json(json!({})))
}

async fn state(State(app): State<Arc<App>>) -> ApiResult<Json<Value>> {
    app.dump().map(Json)
}

async fn get_timings(State(app): State<Arc<App>>) -> Json<Value> {
    Json(serde_json::to_value(app.timings()).unwrap_or(Value::Null))
}

async fn set_timings(State(app): State<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let mut t = app.timings();
    let ms = |k: &str| -> ApiResult<Option<Duration>> {
        Ok(non_negative(o, k)?.map(Duration::from_millis))
    };
    if let Some(d) = ms("update_step")? {
        t.update_step = d;
    }
    if let Some(d) = ms("run_setup")? {
        t.run_setup = d;
    }
    if let Some(d) = ms("task")? {
        t.task = d;
    }
    app.set_timings(t);
    Ok(Json(
        serde_json::to_value(Timings { ..t }).unwrap_or(Value::Null),
    ))
}

/// `{"behaviours": {"name": on, …}, "descriptions": {"name": "what the service does"}}`.
async fn get_behaviours(State(app): State<Arc<App>>) -> Json<Value> {
    let descriptions: Map<String, Value> = crate::behaviours::BEHAVIOURS
        .iter()
        .map(|(_, n, d)| ((*n).to_string(), Value::String((*d).to_string())))
        .collect();
    Json(json!({"behaviours": app.behaviours().to_json(), "descriptions": descriptions}))
}

/// `{"async_pipeline_delete": false, …}` turns the named behaviours on or off; the others
/// stay as they are. An unknown name is a 400 naming the known ones, and changes nothing.
async fn set_behaviours(
    State(app): State<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let mut now = app.behaviours();
    now.apply(&b).map_err(ApiError::invalid)?;
    app.set_behaviours(now);
    Ok(Json(json!({"behaviours": now.to_json()})))
}

async fn get_clock(State(app): State<Arc<App>>) -> Json<Value> {
    Json(json!({"now_ms": app.now()}))
}

async fn advance_clock(
    State(app): State<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let ms = non_negative(Obj::root(&b), "advance_ms")?
        .ok_or_else(|| crate::body::missing("advance_ms"))?;
    app.advance_clock(i64::try_from(ms).unwrap_or(i64::MAX));
    Ok(Json(json!({"now_ms": app.now()})))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fired(control: &Control, n: usize) -> Vec<bool> {
        (0..n)
            .map(|_| control.fault(&Method::GET, "/api/x").is_some())
            .collect()
    }

    fn parse(body: Value) -> ApiResult<Fault> {
        Fault::parse(1, body.as_object().unwrap_or(&Map::new()))
    }

    fn with_fault(body: Value) -> Control {
        let c = Control::new(&EmulatorConfig::for_tests());
        lock(&c.faults).push(parse(body).unwrap_or_else(|e| panic!("{e:?}")));
        c
    }

    #[test]
    fn probability_faults_fire_about_that_often_and_a_seed_repeats_the_sequence() {
        let body = json!({"status": 429, "times": 0, "probability": 0.2, "seed": 7});
        let a = fired(&with_fault(body.clone()), 2000);
        let b = fired(&with_fault(body), 2000);
        assert_eq!(a, b, "the same seed gives the same sequence");
        let n = a.iter().filter(|f| **f).count();
        assert!((300..=500).contains(&n), "{n} of 2000 fired at p = 0.2");
        // Without probability every matching request fails, as before.
        let all = fired(&with_fault(json!({"times": 0})), 50);
        assert!(all.iter().all(|f| *f));
        // `times` still caps how often it fires.
        let capped = fired(
            &with_fault(json!({"times": 3, "probability": 0.5, "seed": 1})),
            200,
        );
        assert_eq!(capped.iter().filter(|f| **f).count(), 3);
        for bad in [json!(1.5), json!(-0.1), json!("half")] {
            assert!(parse(json!({"probability": bad})).is_err(), "{bad}");
        }
    }

    #[test]
    fn drop_and_delay_faults_parse_and_refuse_what_they_cannot_do() {
        let f = parse(json!({"drop": true, "after_side_effect": true})).unwrap();
        assert!(f.drop && f.status.is_none() && f.delay.is_none());
        let f = parse(json!({"delay_ms": 2000})).unwrap();
        assert_eq!(f.delay, Some(Duration::from_secs(2)));
        assert!(f.status.is_none(), "a delay alone holds the real answer");
        let f = parse(json!({"delay_ms": 10, "status": 500})).unwrap();
        assert_eq!(f.status, Some(StatusCode::INTERNAL_SERVER_ERROR));
        let f = parse(json!({"drop": true, "delay_ms": 5})).unwrap();
        assert!(f.drop && f.delay.is_some());
        // Without either, the old default stays.
        assert_eq!(
            parse(json!({})).unwrap().status,
            Some(StatusCode::SERVICE_UNAVAILABLE)
        );
        let message = |body: Value| match parse(body) {
            Ok(_) => String::new(),
            Err(e) => e.message,
        };
        for (bad, says) in [
            (json!({"drop": true, "status": 500}), "'status'"),
            (json!({"drop": true, "body": {}}), "'body'"),
            (json!({"drop": true, "retry_after": 1}), "'retry_after'"),
            (json!({"drop": "yes"}), "drop"),
            (json!({"delay_ms": 10, "message": "m"}), "set 'status' too"),
            (json!({"delay_ms": -1}), "must not be negative"),
            (json!({"delay_ms": "1s"}), "delay_ms"),
            (json!({"delay_ms": MAX_FAULT_DELAY_MS + 1}), "at most"),
        ] {
            let m = message(bad.clone());
            assert!(m.contains(says), "{bad}: {m:?}");
        }
        // `times` and `probability` apply to them as to any fault.
        let c = with_fault(json!({"drop": true, "times": 2}));
        let fired: Vec<bool> = (0..4)
            .map(|_| {
                c.fault(&Method::POST, "/api/x")
                    .is_some_and(|f| f.drop && f.response.is_none())
            })
            .collect();
        assert_eq!(fired, [true, true, false, false]);
        let n = fired_n(
            &with_fault(json!({"delay_ms": 1, "times": 0, "probability": 0.5, "seed": 3})),
            400,
        );
        assert!((120..=280).contains(&n), "{n} of 400 at p = 0.5");
    }

    fn fired_n(control: &Control, n: usize) -> usize {
        fired(control, n).iter().filter(|f| **f).count()
    }

    /// The router marks a dropped answer (the accept loop closes the connection for it) after
    /// performing the request when `after_side_effect` is set, and holds a delayed answer.
    #[tokio::test]
    async fn a_dropped_answer_is_marked_and_a_delayed_one_is_held() {
        use tower::ServiceExt as _;
        let router = crate::Emulator::router(&EmulatorConfig::for_tests()).unwrap();
        let call = |method: &str, path: &str, body: Value| {
            let router = router.clone();
            let req = axum::http::Request::builder()
                .method(method)
                .uri(path)
                .header(header::AUTHORIZATION, "Bearer t")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_string()))
                .unwrap();
            async move { router.oneshot(req).await.unwrap() }
        };
        let scopes = "/api/2.0/secrets/scopes/create";
        let r = call(
            "POST",
            "/__emulator/faults",
            json!({"method": "POST", "path": scopes, "drop": true, "after_side_effect": true}),
        )
        .await;
        assert_eq!(r.status(), StatusCode::OK);
        let r = call("POST", scopes, json!({"scope": "made"})).await;
        assert!(r.extensions().get::<DropConnection>().is_some());
        let r = call("POST", scopes, json!({"scope": "made"})).await;
        assert_eq!(
            r.status(),
            StatusCode::CONFLICT,
            "the dropped create was performed, so a second one hears it exists"
        );

        let r = call(
            "POST",
            "/__emulator/faults",
            json!({"method": "POST", "path": scopes, "drop": true}),
        )
        .await;
        assert_eq!(r.status(), StatusCode::OK);
        let r = call("POST", scopes, json!({"scope": "never"})).await;
        assert!(r.extensions().get::<DropConnection>().is_some());
        let r = call("POST", scopes, json!({"scope": "never"})).await;
        assert_eq!(r.status(), StatusCode::OK, "dropped before the side effect");

        let r = call(
            "POST",
            "/__emulator/faults",
            json!({"method": "POST", "path": scopes, "delay_ms": 300, "after_side_effect": true}),
        )
        .await;
        assert_eq!(r.status(), StatusCode::OK);
        let t = Instant::now();
        let r = call("POST", scopes, json!({"scope": "late"})).await;
        assert!(
            t.elapsed() >= Duration::from_millis(300),
            "{:?}",
            t.elapsed()
        );
        assert_eq!(r.status(), StatusCode::OK, "the real answer, late");
        assert!(r.extensions().get::<DropConnection>().is_none());

        let r = call(
            "GET",
            "/__emulator/requests?path=/api/2.0/secrets/scopes/create",
            Value::Null,
        )
        .await;
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
        let log: Value = serde_json::from_slice(&bytes).unwrap();
        let outcomes: Vec<(Value, bool)> = log["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["status"].clone(), e["dropped"] == json!(true)))
            .collect();
        assert_eq!(
            outcomes,
            [
                (Value::Null, true),
                (json!(409), false),
                (Value::Null, true),
                (json!(200), false),
                (json!(200), false),
            ]
        );
    }
}
