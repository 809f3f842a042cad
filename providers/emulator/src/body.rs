//! Request extractors and field validation. Every rejection becomes a 400
//! `INVALID_PARAMETER_VALUE` that names the offending field, instead of axum's plain-text
//! rejections, so clients always get the Databricks error body.

use crate::errors::{ApiError, ApiResult};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The `{}` answer of the calls that return nothing.
pub fn done() -> axum::Json<Value> {
    axum::Json(Value::Object(Map::new()))
}

/// A JSON object body. An empty body counts as `{}` because the SDK sends none on
/// calls such as `pipelines/{id}/stop`.
pub struct JsonBody(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::invalid(format!("Cannot read the request body: {e}")))?;
        parse_object(&bytes).map(JsonBody)
    }
}

pub fn parse_object(bytes: &[u8]) -> ApiResult<Map<String, Value>> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ApiError::invalid("The request body must be a JSON object.")),
        Err(e) => Err(ApiError::invalid(format!(
            "Malformed JSON request body: {e}"
        ))),
    }
}

/// Path parameters with our error body on rejection.
pub struct PathParam<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for PathParam<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| PathParam(p.0))
            .map_err(|e| ApiError::invalid(format!("Invalid path parameter: {e}")))
    }
}

/// Query parameters, typed on access so a bad value names its parameter.
#[derive(Debug, Default)]
pub struct Params(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let q = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&parts.uri)
            .map_err(|e| ApiError::invalid(format!("Invalid query string: {e}")))?;
        Ok(Params(q.0))
    }
}

impl Params {
    pub fn str(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn req_str(&self, key: &str) -> ApiResult<&str> {
        match self.str(key) {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(ApiError::invalid(format!("Missing required field: {key}"))),
        }
    }

    pub fn bool(&self, key: &str) -> ApiResult<Option<bool>> {
        match self.str(key) {
            None | Some("") => Ok(None),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(v) => Err(ApiError::invalid(format!(
                "Invalid value for parameter '{key}': expected true or false, got '{v}'"
            ))),
        }
    }

    pub fn int(&self, key: &str) -> ApiResult<Option<i64>> {
        match self.str(key) {
            None | Some("") => Ok(None),
            Some(v) => v.parse::<i64>().map(Some).map_err(|_| {
                ApiError::invalid(format!(
                    "Invalid value for parameter '{key}': expected an integer, got '{v}'"
                ))
            }),
        }
    }
}

/// A view of a JSON object that knows its position in the request (`tasks[2].notebook_task`),
/// so every type error names the full field path.
#[derive(Clone, Copy)]
pub struct Obj<'a> {
    pub map: &'a Map<String, Value>,
    prefix: &'a str,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub fn wrong_type(field: &str, expected: &str, got: &Value) -> ApiError {
    ApiError::invalid(format!(
        "Invalid value for field '{field}': expected {expected}, got {}",
        type_name(got)
    ))
}

pub fn missing(field: &str) -> ApiError {
    ApiError::invalid(format!("Missing required field: {field}"))
}

pub fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

impl<'a> Obj<'a> {
    pub fn root(map: &'a Map<String, Value>) -> Self {
        Obj { map, prefix: "" }
    }

    pub fn at(map: &'a Map<String, Value>, prefix: &'a str) -> Self {
        Obj { map, prefix }
    }

    pub fn path(&self, key: &str) -> String {
        join(self.prefix, key)
    }

    /// A present, non-null value. Null is treated as absent, like the SDK's omission of `None`.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn str(&self, key: &str) -> ApiResult<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(wrong_type(&self.path(key), "a string", v)),
        }
    }

    pub fn req_str(&self, key: &str) -> ApiResult<&'a str> {
        match self.str(key)? {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(missing(&self.path(key))),
        }
    }

    pub fn bool(&self, key: &str) -> ApiResult<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(wrong_type(&self.path(key), "a boolean", v)),
        }
    }

    /// int64 fields: proto3 JSON also allows a decimal string.
    pub fn int(&self, key: &str) -> ApiResult<Option<i64>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| {
                wrong_type(&self.path(key), "an integer", &Value::Number(n.clone()))
            }),
            Some(Value::String(s)) => s.parse().map(Some).map_err(|_| {
                ApiError::invalid(format!(
                    "Invalid value for field '{}': expected an integer, got '{s}'",
                    self.path(key)
                ))
            }),
            Some(v) => Err(wrong_type(&self.path(key), "an integer", v)),
        }
    }

    pub fn req_int(&self, key: &str) -> ApiResult<i64> {
        self.int(key)?.ok_or_else(|| missing(&self.path(key)))
    }

    pub fn obj(&self, key: &str) -> ApiResult<Option<&'a Map<String, Value>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(v) => Err(wrong_type(&self.path(key), "an object", v)),
        }
    }

    pub fn req_obj(&self, key: &str) -> ApiResult<&'a Map<String, Value>> {
        self.obj(key)?.ok_or_else(|| missing(&self.path(key)))
    }

    pub fn arr(&self, key: &str) -> ApiResult<&'a [Value]> {
        match self.get(key) {
            None => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(v) => Err(wrong_type(&self.path(key), "an array", v)),
        }
    }

    /// An array of objects; each element's path is `key[i]`.
    pub fn objs(&self, key: &str) -> ApiResult<Vec<(String, &'a Map<String, Value>)>> {
        let mut out = Vec::new();
        for (i, v) in self.arr(key)?.iter().enumerate() {
            let p = format!("{}[{i}]", self.path(key));
            match v {
                Value::Object(m) => out.push((p, m)),
                other => return Err(wrong_type(&p, "an object", other)),
            }
        }
        Ok(out)
    }

    pub fn strs(&self, key: &str) -> ApiResult<Vec<&'a str>> {
        let mut out = Vec::new();
        for (i, v) in self.arr(key)?.iter().enumerate() {
            match v {
                Value::String(s) => out.push(s.as_str()),
                other => {
                    return Err(wrong_type(
                        &format!("{}[{i}]", self.path(key)),
                        "a string",
                        other,
                    ));
                }
            }
        }
        Ok(out)
    }

    /// A `map<string,string>` field.
    pub fn str_map(&self, key: &str) -> ApiResult<Option<&'a Map<String, Value>>> {
        let Some(m) = self.obj(key)? else {
            return Ok(None);
        };
        for (k, v) in m {
            if !v.is_string() {
                return Err(wrong_type(
                    &format!("{}.{k}", self.path(key)),
                    "a string",
                    v,
                ));
            }
        }
        Ok(Some(m))
    }

    pub fn enum_str(&self, key: &str, allowed: &[&str]) -> ApiResult<Option<&'a str>> {
        match self.str(key)? {
            None => Ok(None),
            Some(s) if allowed.contains(&s) => Ok(Some(s)),
            Some(s) => Err(ApiError::invalid(format!(
                "Invalid value for field '{}': '{s}' is not one of {}",
                self.path(key),
                allowed.join(", ")
            ))),
        }
    }

    /// Like [`Obj::enum_str`] for a field the service takes in any case.
    pub fn enum_str_any_case(&self, key: &str, allowed: &[&str]) -> ApiResult<Option<&'a str>> {
        match self.str(key)? {
            Some(s) if !allowed.iter().any(|a| a.eq_ignore_ascii_case(s)) => {
                Err(ApiError::invalid(format!(
                    "Invalid value for field '{}': '{s}' is not one of {}",
                    self.path(key),
                    allowed.join(", ")
                )))
            }
            other => Ok(other),
        }
    }

    /// Every element of a list of strings is one of `allowed`.
    pub fn enum_strs(&self, key: &str, allowed: &[&str]) -> ApiResult<()> {
        for (i, s) in self.strs(key)?.into_iter().enumerate() {
            if !allowed.contains(&s) {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field '{}[{i}]': '{s}' is not one of {}",
                    self.path(key),
                    allowed.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Exactly one of `keys` must be present (the API's `oneof`).
    pub fn one_of(&self, keys: &[&'static str]) -> ApiResult<&'static str> {
        let present: Vec<&'static str> = keys.iter().copied().filter(|k| self.has(k)).collect();
        match present.as_slice() {
            [one] => Ok(one),
            [] => Err(ApiError::invalid(format!(
                "Exactly one of {} must be set{}",
                keys.iter()
                    .map(|k| self.path(k))
                    .collect::<Vec<_>>()
                    .join(", "),
                if self.prefix.is_empty() {
                    String::new()
                } else {
                    format!(" in '{}'", self.prefix)
                }
            ))),
            many => Err(ApiError::invalid(format!(
                "Only one of {} may be set",
                many.iter()
                    .map(|k| self.path(k))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// Reads a request body of at most `limit` bytes. A declared `Content-Length` over the limit
/// is refused before anything is read; a body that grows past it stops being read. 413 for
/// both, 408 when the body stops arriving (the server's body timeout), 400 when the
/// connection breaks.
pub async fn read_limited(
    headers: &axum::http::HeaderMap,
    body: axum::body::Body,
    limit: usize,
) -> ApiResult<axum::body::Bytes> {
    let declared = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large(limit));
    }
    use http_body_util::BodyExt as _;
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) if caused_by::<http_body_util::LengthLimitError>(&*e) => Err(too_large(limit)),
        Err(e) if caused_by::<tower_http::timeout::TimeoutError>(&*e) => Err(ApiError::new(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            "REQUEST_TIMEOUT",
            "The request body stopped arriving.",
        )),
        Err(e) => Err(ApiError::invalid(format!(
            "Cannot read the request body: {e}"
        ))),
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::PAYLOAD_TOO_LARGE,
        "INVALID_PARAMETER_VALUE",
        format!("The request body is larger than the limit of {limit} bytes."),
    )
}

/// Whether `E` is anywhere in the error's source chain (body errors arrive wrapped).
fn caused_by<E: std::error::Error + 'static>(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err.is::<E>() {
            return true;
        }
        cur = err.source();
    }
    false
}
