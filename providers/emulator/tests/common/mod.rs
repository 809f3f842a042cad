//! Shared client helpers for the in-process HTTP tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use brickform_emulator::{Emulator, EmulatorConfig, RunningEmulator};
use serde_json::Value;

pub struct Client {
    pub emu: RunningEmulator,
    pub http: reqwest::Client,
    pub token: String,
}

pub async fn start() -> Client {
    start_with(EmulatorConfig::for_tests()).await
}

pub async fn start_with(config: EmulatorConfig) -> Client {
    let emu = Emulator::start(config).await.expect("emulator starts");
    Client {
        emu,
        http: reqwest::Client::new(),
        token: "test-token".into(),
    }
}

impl Client {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.emu.url())
    }

    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, self.url(path))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("request sent");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("body read");
        let v = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, v)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, None).await
    }
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }
    pub async fn patch(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::PATCH, path, Some(body)).await
    }
    pub async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::PUT, path, Some(body)).await
    }
    pub async fn delete(&self, path: &str) -> (u16, Value) {
        self.call(reqwest::Method::DELETE, path, None).await
    }

    /// POST that must succeed; returns the body.
    pub async fn ok(&self, path: &str, body: Value) -> Value {
        let (s, v) = self.post(path, body).await;
        assert_eq!(s, 200, "POST {path}: {v}");
        v
    }

    pub async fn ok_get(&self, path: &str) -> Value {
        let (s, v) = self.get(path).await;
        assert_eq!(s, 200, "GET {path}: {v}");
        v
    }
}
