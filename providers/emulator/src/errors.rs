//! One error type for every handler; it renders the Databricks error body
//! `{"error_code": ..., "message": ...}` with the status the SDK expects for that code.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub type ApiResult<T> = Result<T, ApiError>;

#[derive(Debug, Clone, thiserror::Error)]
#[error("{status} {code}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
    /// The body's `details` (`google.rpc.ErrorInfo` entries: a settings conflict names the
    /// fresh etag there); empty for most errors.
    pub details: Vec<serde_json::Value>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
            details: Vec::new(),
        }
    }

    /// 400 `INVALID_PARAMETER_VALUE`: bad input, always naming the field in the message.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_PARAMETER_VALUE", message)
    }

    /// 400 `INVALID_STATE`: the request is well-formed but the object cannot do it now.
    pub fn invalid_state(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_STATE", message)
    }

    /// 404 with a `*_DOES_NOT_EXIST` / `NOT_FOUND` code.
    pub fn not_found(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    /// 409 with a `*_ALREADY_EXISTS` / conflict code, so the SDK raises `ResourceConflict`.
    pub fn conflict(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    /// 400 with a `*_NOT_EMPTY` code.
    pub fn not_empty(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn unauthenticated(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "UNAUTHENTICATED", message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL_ERROR", message)
    }

    /// Jobs answer a missing job or run with 400 and this exact message shape; the SDK
    /// rewrites it to `ResourceDoesNotExist` by matching the text.
    pub fn job_missing(what: &str, id: i64) -> Self {
        Self::invalid(format!("{what} {id} does not exist."))
    }

    pub fn body(&self) -> serde_json::Value {
        let mut b = json!({"error_code": self.code, "message": self.message});
        if !self.details.is_empty() {
            b["details"] = serde_json::Value::Array(self.details.clone());
        }
        b
    }

    /// The error with a `google.rpc.ErrorInfo` detail holding `metadata`, as the Settings
    /// API answers a stale or missing etag with the fresh one.
    pub fn with_error_info(mut self, reason: &str, metadata: serde_json::Value) -> Self {
        self.details.push(json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": "",
            "metadata": metadata,
        }));
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(self.body())).into_response()
    }
}

impl ApiError {
    /// Same status, a more specific code.
    pub fn with_code(mut self, code: &str) -> Self {
        self.code = code.to_string();
        self
    }
}
