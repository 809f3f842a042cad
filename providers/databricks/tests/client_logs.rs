//! `BRICKFORM_LOG=debug` output of the client. A test binary of its own, because tracing
//! caches per-callsite interest process-wide: a subscriber installed while other tests run
//! would miss events whose callsites those tests registered first.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use brickform_databricks::client::{Client, NoStore, Settings};
use brickform_emulator::{Emulator, EmulatorConfig};
use serde_json::json;

const ME: &str = "/api/2.0/preview/scim/v2/Me";

#[derive(Clone, Default)]
struct LogBuf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for LogBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `BRICKFORM_LOG=debug` output: method, path, status and timing, never a token, a client
/// secret or the body of a secrets call.
#[tokio::test]
async fn debug_logs_carry_no_secrets() {
    let buf = LogBuf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("debug"))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let emu = Emulator::start(EmulatorConfig::for_tests()).await.unwrap();
    let settings = Settings {
        host: Some(emu.url()),
        token: Some("dapi-LOGSECRET".into()),
        retry_timeout: Some(Duration::from_secs(10)),
        ..Settings::default()
    };
    let pat_client = Client::connect(&settings, &|_| None, &NoStore)
        .await
        .unwrap();
    pat_client
        .post("/api/2.0/secrets/scopes/create", &json!({"scope": "s"}))
        .await
        .unwrap();
    pat_client
        .post(
            "/api/2.0/secrets/put",
            &json!({"scope": "s", "key": "k", "string_value": "VALUE-LOGSECRET"}),
        )
        .await
        .unwrap();
    pat_client
        .get(
            "/api/2.0/secrets/get",
            &[("scope", "s".into()), ("key", "k".into())],
        )
        .await
        .unwrap();
    reqwest::Client::new()
        .post(format!("{}/__emulator/faults", emu.url()))
        .json(&json!({"path": ME, "status": 503, "times": 1}))
        .send()
        .await
        .unwrap();
    pat_client.get(ME, &[]).await.unwrap();
    let m2m_settings = Settings {
        host: Some(emu.url()),
        client_id: Some("id".into()),
        client_secret: Some("oauth-LOGSECRET".into()),
        ..Settings::default()
    };
    let m2m = Client::connect(&m2m_settings, &|_| None, &NoStore)
        .await
        .unwrap();
    m2m.get(ME, &[]).await.unwrap();

    let logs = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("/api/2.0/secrets/put")
            && logs.contains("status=200")
            && logs.contains("elapsed_ms"),
        "{logs}"
    );
    assert!(logs.contains("retrying"), "{logs}");
    assert!(!logs.contains("LOGSECRET"), "{logs}");
    assert!(!logs.to_ascii_lowercase().contains("bearer"), "{logs}");
}
