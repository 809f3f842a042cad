//! `/__emulator/…`: fault injection, latency, rate limits, reset, request log, state dump,
//! timings and clock. This module holds the rules (faults, latency, rate limits, the request
//! log) and what they decide; [`middleware`] applies them to every API request and [`routes`]
//! serves the endpoints.

mod middleware;
mod routes;

pub use middleware::{guard, middleware};
pub use routes::routes;

use crate::body::Obj;
use crate::config::EmulatorConfig;
use crate::errors::{ApiError, ApiResult};
use crate::store::lock;
use axum::Json;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use regex::Regex;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What the request log shows instead of a write-only value.
pub const REDACTED: &str = "**REDACTED**";

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

    /// Adds what the request showed (never a credential) to its log entry.
    fn log_note(&self, seq: u64, key: &str, value: Value) {
        let mut log = lock(&self.log);
        if let Some(e) = log
            .entries
            .iter_mut()
            .rev()
            .find(|e| e["seq"] == json!(seq))
        {
            e[key] = value;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

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
