//! The API client against the in-process emulator over HTTP: auth resolution, OAuth M2M,
//! retries, the adaptive limiter, pagination, error classification and secret hygiene.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use brickform_core::provider::{ErrorKind, ProviderError};
use brickform_databricks::client::{
    ApiError, AuthType, Client, ClientError, MemoryStore, NoStore, SecretStore, Settings, Source,
};
use brickform_emulator::{Emulator, EmulatorConfig, RunningEmulator};
use serde_json::{Value, json};

const UC: &str = "/api/2.1/unity-catalog";
const ME: &str = "/api/2.0/preview/scim/v2/Me";

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

async fn connect(
    settings: &Settings,
    env: &[(&str, &str)],
    secrets: &dyn SecretStore,
) -> Result<Client, ClientError> {
    Client::connect(settings, &env_of(env), secrets).await
}

fn pat(url: &str) -> Settings {
    Settings {
        host: Some(url.to_string()),
        token: Some("dapi-test-token".into()),
        retry_timeout: Some(Duration::from_secs(10)),
        ..Settings::default()
    }
}

async fn emulator() -> RunningEmulator {
    Emulator::start(EmulatorConfig::for_tests()).await.unwrap()
}

async fn control(emu: &RunningEmulator, method: reqwest::Method, path: &str, body: Value) -> Value {
    let r = reqwest::Client::new()
        .request(method, format!("{}/__emulator/{path}", emu.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{path}: {}", r.status());
    r.json().await.unwrap_or(Value::Null)
}

async fn fault(emu: &RunningEmulator, spec: Value) {
    control(emu, reqwest::Method::POST, "faults", spec).await;
}

async fn logged(emu: &RunningEmulator, path_regex: &str) -> Vec<Value> {
    logged_as(emu, None, path_regex).await
}

/// The request log of a workspace with tokens: its control endpoints want one of them.
async fn logged_as(emu: &RunningEmulator, token: Option<&str>, path_regex: &str) -> Vec<Value> {
    let mut req = reqwest::Client::new()
        .get(format!("{}/__emulator/requests", emu.url()))
        .query(&[("path", path_regex)]);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r: Value = req.send().await.unwrap().json().await.unwrap();
    r["requests"].as_array().cloned().unwrap_or_default()
}

fn write_cfg(dir: &Path, text: &str) -> String {
    let p = dir.join(".databrickscfg");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

// ---------------------------------------------------------------- auth resolution

#[tokio::test]
async fn precedence_settings_env_profile_keyring() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    write_cfg(
        dir.path(),
        "[DEFAULT]\nhost = https://profile.example.com\ntoken = dapi-profile\n\n[other]\nhost = https://other.example.com\ntoken = dapi-other\n",
    );
    let keyring = MemoryStore::with("https://keyring.example.com", "dapi-keyring");

    // Settings beat env.
    let c = connect(
        &Settings {
            host: Some("https://settings.example.com".into()),
            token: Some("dapi-settings".into()),
            ..Settings::default()
        },
        &[
            ("DATABRICKS_HOST", "https://env.example.com"),
            ("DATABRICKS_TOKEN", "dapi-env"),
            ("HOME", &home),
        ],
        &keyring,
    )
    .await
    .unwrap();
    assert_eq!(c.host(), "https://settings.example.com");
    assert_eq!(c.credential_info().credential_source, Source::Settings);

    // Per attribute: host from settings, token from env.
    let c = connect(
        &Settings {
            host: Some("settings.example.com/".into()),
            ..Settings::default()
        },
        &[("DATABRICKS_TOKEN", "dapi-env"), ("HOME", &home)],
        &keyring,
    )
    .await
    .unwrap();
    assert_eq!(c.host(), "https://settings.example.com");
    assert_eq!(c.credential_info().host_source, Source::Settings);
    assert_eq!(
        c.credential_info().credential_source,
        Source::Env("DATABRICKS_TOKEN")
    );

    // Env beats the profile file (which is then not even read).
    let c = connect(
        &Settings::default(),
        &[
            ("DATABRICKS_HOST", "https://env.example.com"),
            ("DATABRICKS_TOKEN", "dapi-env"),
            ("HOME", &home),
        ],
        &keyring,
    )
    .await
    .unwrap();
    assert_eq!(c.host(), "https://env.example.com");
    assert_eq!(
        c.credential_info().credential_source,
        Source::Env("DATABRICKS_TOKEN")
    );

    // Nothing else set: the DEFAULT profile.
    let c = connect(&Settings::default(), &[("HOME", &home)], &keyring)
        .await
        .unwrap();
    assert_eq!(c.host(), "https://profile.example.com");
    assert!(
        matches!(&c.credential_info().credential_source, Source::Profile { name, .. } if name == "DEFAULT")
    );

    // Explicit profile by env var.
    let c = connect(
        &Settings::default(),
        &[("HOME", &home), ("DATABRICKS_CONFIG_PROFILE", "other")],
        &keyring,
    )
    .await
    .unwrap();
    assert_eq!(c.host(), "https://other.example.com");

    // A host from env with no token: the file is not consulted (the SDK's rule), the keyring is.
    let c = connect(
        &Settings::default(),
        &[("HOME", &home), ("DATABRICKS_HOST", "keyring.example.com")],
        &keyring,
    )
    .await
    .unwrap();
    assert_eq!(c.host(), "https://keyring.example.com");
    assert_eq!(c.credential_info().credential_source, Source::Keyring);

    // The keyring is last: a token anywhere else wins over it.
    let c = connect(
        &Settings::default(),
        &[
            ("HOME", &home),
            ("DATABRICKS_HOST", "keyring.example.com"),
            ("DATABRICKS_TOKEN", "dapi-env"),
        ],
        &keyring,
    )
    .await
    .unwrap();
    assert_eq!(
        c.credential_info().credential_source,
        Source::Env("DATABRICKS_TOKEN")
    );

    // A host with no credentials anywhere: the error names the host's source and the ways out.
    let e = connect(
        &Settings::default(),
        &[("HOME", &home), ("DATABRICKS_HOST", "nothing.example.com")],
        &keyring,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("env DATABRICKS_HOST") && e.contains("brickform auth login"),
        "{e}"
    );
}

#[tokio::test]
async fn profile_selection_rules() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        dir.path(),
        "[__settings__]\ndefault_profile = dev\n\n[DEFAULT]\nhost = https://default.example.com\ntoken = dapi-d\n\n[dev]\nhost = https://dev.example.com\ntoken = dapi-dev\n\n[nohost]\ntoken = dapi-x\n",
    );
    // [__settings__] default_profile beats [DEFAULT].
    let c = connect(
        &Settings::default(),
        &[("DATABRICKS_CONFIG_FILE", &cfg)],
        &NoStore,
    )
    .await
    .unwrap();
    assert_eq!(c.host(), "https://dev.example.com");

    // config_file from settings, explicit profile from settings beats the default_profile.
    let s = Settings {
        config_file: Some(cfg.clone().into()),
        profile: Some("DEFAULT".into()),
        ..Settings::default()
    };
    let c = connect(&s, &[], &NoStore).await.unwrap();
    assert_eq!(c.host(), "https://default.example.com");

    // [DEFAULT] is not merged into a named profile: `nohost` has no host.
    let s = Settings {
        config_file: Some(cfg.clone().into()),
        profile: Some("nohost".into()),
        ..Settings::default()
    };
    let e = connect(&s, &[], &NoStore).await.unwrap_err();
    assert!(matches!(e, ClientError::NoHost { .. }), "{e}");

    // An explicitly requested profile that does not exist is an error naming the profiles.
    let s = Settings {
        config_file: Some(cfg.clone().into()),
        profile: Some("prod".into()),
        ..Settings::default()
    };
    let e = connect(&s, &[], &NoStore).await.unwrap_err().to_string();
    assert!(e.contains("[prod]") && e.contains("dev"), "{e}");

    // ... and so is a requested profile in a file that does not exist.
    let e = connect(
        &Settings::default(),
        &[
            ("HOME", "/nonexistent-home"),
            ("DATABRICKS_CONFIG_PROFILE", "dev"),
        ],
        &NoStore,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("does not exist") && e.contains("DATABRICKS_CONFIG_PROFILE"),
        "{e}"
    );

    // Without any profile request, a missing file is simply skipped.
    let e = connect(
        &Settings::default(),
        &[("HOME", "/nonexistent-home")],
        &NoStore,
    )
    .await
    .unwrap_err();
    assert!(matches!(e, ClientError::NoHost { .. }), "{e}");

    // A broken file is reported with its path.
    let bad = dir.path().join("bad.cfg");
    std::fs::write(&bad, "token = x\n").unwrap();
    let e = connect(
        &Settings::default(),
        &[("DATABRICKS_CONFIG_FILE", &bad.display().to_string())],
        &NoStore,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("bad.cfg"), "{e}");
}

#[tokio::test]
async fn auth_method_selection() {
    let host = "https://x.example.com";
    // Two families without auth_type: the SDK's error.
    let e = connect(
        &Settings {
            host: Some(host.into()),
            token: Some("dapi-secret-1".into()),
            ..Settings::default()
        },
        &[
            ("DATABRICKS_CLIENT_ID", "id"),
            ("DATABRICKS_CLIENT_SECRET", "oauth-secret-1"),
        ],
        &NoStore,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("more than one authorization method configured: oauth and pat"),
        "{e}"
    );
    assert!(
        e.contains("token from provider settings")
            && e.contains("client_id from env DATABRICKS_CLIENT_ID"),
        "{e}"
    );
    assert!(
        !e.contains("dapi-secret-1") && !e.contains("oauth-secret-1"),
        "{e}"
    );

    // auth_type pins one.
    let c = connect(
        &Settings {
            host: Some(host.into()),
            token: Some("dapi-secret-1".into()),
            auth_type: Some("pat".into()),
            ..Settings::default()
        },
        &[
            ("DATABRICKS_CLIENT_ID", "id"),
            ("DATABRICKS_CLIENT_SECRET", "oauth-secret-1"),
        ],
        &NoStore,
    )
    .await
    .unwrap();
    assert_eq!(c.credential_info().auth_type, AuthType::Pat);

    // Half an M2M configuration says what is missing.
    let e = connect(
        &Settings {
            host: Some(host.into()),
            client_id: Some("id".into()),
            ..Settings::default()
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("client_secret") && e.contains("client_id from provider settings"),
        "{e}"
    );

    // Unknown methods are refused.
    let e = connect(
        &Settings {
            host: Some(host.into()),
            token: Some("t".into()),
            auth_type: Some("external-browser".into()),
            ..Settings::default()
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap_err();
    assert!(matches!(e, ClientError::UnsupportedAuthType { .. }), "{e}");
    let e = e.to_string();
    assert!(
        e.contains("\"external-browser\" is not supported")
            && e.contains("databricks-cli (`databricks auth login`)")
            && e.contains("azure-msi"),
        "{e}"
    );
}

#[tokio::test]
async fn http_refused_except_loopback() {
    for host in [
        "http://dbc-123.cloud.databricks.com",
        "http://192.168.1.10:8080",
        "http://localhost.example.com",
    ] {
        let e = connect(
            &Settings {
                host: Some(host.into()),
                token: Some("dapi-x".into()),
                ..Settings::default()
            },
            &[],
            &NoStore,
        )
        .await
        .unwrap_err();
        assert!(matches!(e, ClientError::InvalidHost { .. }), "{host}: {e}");
        assert!(e.to_string().contains("https"), "{e}");
    }
    for host in [
        "http://127.0.0.1:1",
        "http://localhost:2",
        "http://[::1]:3",
        "dbc-1.cloud.databricks.com/",
    ] {
        connect(
            &Settings {
                host: Some(host.into()),
                token: Some("dapi-x".into()),
                ..Settings::default()
            },
            &[],
            &NoStore,
        )
        .await
        .unwrap();
    }
}

// ---------------------------------------------------------------- requests and auth on the wire

#[tokio::test]
async fn pat_requests_and_401_shape() {
    let emu = Emulator::start(EmulatorConfig {
        tokens: Some(vec!["dapi-good".into()]),
        ..EmulatorConfig::for_tests()
    })
    .await
    .unwrap();
    let good = connect(
        &Settings {
            token: Some("dapi-good".into()),
            ..pat(&emu.url())
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    let me = good.get(ME, &[]).await.unwrap();
    assert_eq!(me["userName"], "local-user@brickform.local");

    let bad = connect(
        &Settings {
            token: Some("dapi-wrong-secret".into()),
            ..pat(&emu.url())
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    let e = bad.get(ME, &[]).await.unwrap_err();
    assert_eq!(e.status, 401);
    assert_eq!(e.error_code, "UNAUTHENTICATED");
    assert_eq!(e.kind, ErrorKind::PermissionDenied);
    assert_eq!(bad.stats().requests, 1, "a 401 with a PAT is not retried");
    assert!(!format!("{e} {e:?}").contains("dapi-wrong-secret"));
    assert!(!format!("{bad:?}").contains("dapi-wrong-secret"));
}

#[tokio::test]
async fn oauth_m2m_flow() {
    let emu = Emulator::start(EmulatorConfig {
        tokens: Some(vec!["sp-client-secret".into()]),
        ..EmulatorConfig::for_tests()
    })
    .await
    .unwrap();
    let settings = Settings {
        host: Some(emu.url()),
        retry_timeout: Some(Duration::from_secs(5)),
        ..Settings::default()
    };
    let c = connect(
        &settings,
        &[
            ("DATABRICKS_CLIENT_ID", "sp-app-id"),
            ("DATABRICKS_CLIENT_SECRET", "sp-client-secret"),
        ],
        &NoStore,
    )
    .await
    .unwrap();
    assert_eq!(c.credential_info().auth_type, AuthType::OAuthM2m);
    assert!(!format!("{c:?}").contains("sp-client-secret"));
    for _ in 0..3 {
        c.get(ME, &[]).await.unwrap();
    }
    assert_eq!(
        logged_as(
            &emu,
            Some("sp-client-secret"),
            "/.well-known/databricks-config"
        )
        .await
        .len(),
        1
    );
    assert_eq!(
        logged_as(
            &emu,
            Some("sp-client-secret"),
            "/oidc/.well-known/oauth-authorization-server"
        )
        .await
        .len(),
        1
    );
    let tokens = logged_as(&emu, Some("sp-client-secret"), "/oidc/v1/token").await;
    assert_eq!(tokens.len(), 1, "the token is cached across calls");
    assert!(
        !tokens[0].to_string().contains("sp-client-secret"),
        "credentials go in the Basic header, not the form"
    );

    // A wrong secret: the token endpoint's refusal, without the secret in it.
    let c = connect(
        &settings,
        &[
            ("DATABRICKS_CLIENT_ID", "sp-app-id"),
            ("DATABRICKS_CLIENT_SECRET", "not-the-secret"),
        ],
        &NoStore,
    )
    .await
    .unwrap();
    let e = c.get(ME, &[]).await.unwrap_err();
    assert_eq!(e.status, 401);
    assert!(e.message.contains("OAuth token request failed"), "{e}");
    assert!(!format!("{e:?}").contains("not-the-secret"));
}

// ---------------------------------------------------------------- retries

#[tokio::test]
async fn retries_503_then_succeeds() {
    let emu = emulator().await;
    fault(&emu, json!({"path": ME, "status": 503, "times": 3})).await;
    let c = connect(&pat(&emu.url()), &[], &NoStore).await.unwrap();
    c.get(ME, &[]).await.unwrap();
    let s = c.stats();
    assert_eq!((s.requests, s.retries), (4, 3), "{s:?}");
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let emu = emulator().await;
    fault(
        &emu,
        json!({"path": ME, "status": 429, "times": 1, "retry_after": 1}),
    )
    .await;
    let c = connect(&pat(&emu.url()), &[], &NoStore).await.unwrap();
    let t = Instant::now();
    c.get(ME, &[]).await.unwrap();
    assert!(t.elapsed() >= Duration::from_secs(1), "{:?}", t.elapsed());
    let s = c.stats();
    assert_eq!((s.retries, s.throttled), (1, 1), "{s:?}");
}

/// Each request takes one of the engine's call slots for its exchange only: it waits while
/// every slot is held, and gives its slot back while it waits to retry.
#[tokio::test]
async fn each_request_takes_a_call_slot_for_its_exchange_only() {
    use brickform_core::call_slots;
    use std::sync::Arc;
    let emu = emulator().await;
    let c = connect(&pat(&emu.url()), &[], &NoStore).await.unwrap();
    let slots = Arc::new(tokio::sync::Semaphore::new(1));
    call_slots::within(slots.clone(), async {
        let held = call_slots::take().await;
        let c2 = c.clone();
        let waiting = tokio::spawn(call_slots::carried(call_slots::current(), async move {
            c2.get(ME, &[]).await
        }));
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(logged(&emu, ME).await.is_empty(), "sent without a slot");
        assert!(!waiting.is_finished());
        drop(held);
        waiting.await.unwrap().unwrap();
        assert_eq!(logged(&emu, ME).await.len(), 1);
    })
    .await;
    assert_eq!(slots.available_permits(), 1);

    fault(
        &emu,
        json!({"path": ME, "status": 429, "times": 1, "retry_after": 1}),
    )
    .await;
    let c2 = c.clone();
    let retrying = tokio::spawn(call_slots::within(slots.clone(), async move {
        c2.get(ME, &[]).await
    }));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(logged(&emu, ME).await.len(), 2, "the 429 came back");
    assert_eq!(slots.available_permits(), 1, "a retry's wait holds no slot");
    retrying.await.unwrap().unwrap();
}

#[tokio::test]
async fn non_retryable_errors_are_final() {
    let emu = emulator().await;
    let c = connect(&pat(&emu.url()), &[], &NoStore).await.unwrap();
    for status in [400, 404, 409] {
        fault(&emu, json!({"path": ME, "status": status, "times": 1})).await;
        let before = c.stats().requests;
        let e = c.get(ME, &[]).await.unwrap_err();
        assert_eq!(e.status, status);
        assert_eq!(c.stats().requests - before, 1, "{status} was retried");
    }
    // A write answered with a server error may have happened: it is not sent again.
    let create = "/api/2.0/secrets/scopes/create";
    for status in [500, 502, 504] {
        fault(&emu, json!({"path": create, "status": status, "times": 1})).await;
        let before = c.stats().requests;
        let e = c.post(create, &json!({"scope": "s"})).await.unwrap_err();
        assert_eq!(e.status, status);
        assert_eq!(
            c.stats().requests - before,
            1,
            "a write's {status} was retried"
        );
    }
    assert_eq!(c.stats().retries, 0);
}

#[tokio::test]
async fn reads_are_retried_on_server_errors() {
    let emu = emulator().await;
    let c = connect(&pat(&emu.url()), &[], &NoStore).await.unwrap();
    for status in [500, 502, 504] {
        fault(&emu, json!({"path": ME, "status": status, "times": 1})).await;
        let before = c.stats().requests;
        c.get(ME, &[]).await.unwrap();
        assert_eq!(
            c.stats().requests - before,
            2,
            "a read's {status} is retried once"
        );
    }
    assert_eq!(c.stats().retries, 3);
}

#[tokio::test]
async fn retry_budget_exhausted() {
    let emu = emulator().await;
    fault(&emu, json!({"path": ME, "status": 503, "times": 0})).await;
    let c = connect(
        &Settings {
            retry_timeout: Some(Duration::from_millis(600)),
            ..pat(&emu.url())
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    let t = Instant::now();
    let e = c.get(ME, &[]).await.unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(e.status, 503);
    assert_eq!(e.kind, ErrorKind::Transient);
    assert!(e.message.contains("retry budget"), "{e}");
    assert!(c.stats().retries >= 1);
}

#[tokio::test]
async fn transport_errors_are_retried_then_reported() {
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let c = connect(
        &Settings {
            retry_timeout: Some(Duration::from_millis(500)),
            ..pat(&format!("http://127.0.0.1:{port}"))
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    let e = c.get(ME, &[]).await.unwrap_err();
    assert_eq!(e.status, 0, "{e}");
    assert!(e.message.contains("connection refused"), "{e}");
    assert!(!e.maybe_sent, "a refused connection carried nothing");
    let s = c.stats();
    assert!(s.transport_errors >= 2 && s.retries >= 1, "{s:?}");
    assert!(!e.to_string().contains("dapi-test-token"));
}

/// A write whose connection is dropped, or whose answer outlasts the HTTP timeout, after the
/// workspace carried it out is sent exactly once and fails as uncertain (the engine then
/// looks for what it made); a read in the same plight is simply sent again.
#[tokio::test]
async fn a_write_whose_answer_is_lost_in_transport_is_sent_once_and_uncertain() {
    let emu = emulator().await;
    let c = connect(
        &Settings {
            http_timeout: Some(Duration::from_millis(500)),
            ..pat(&emu.url())
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    let create = "/api/2.0/secrets/scopes/create";
    for (scope, lost) in [
        ("dropped", json!({"drop": true})),
        ("late", json!({"delay_ms": 1500})),
    ] {
        let mut spec =
            json!({"method": "POST", "path": create, "times": 1, "after_side_effect": true});
        spec.as_object_mut()
            .unwrap()
            .extend(lost.as_object().unwrap().clone());
        fault(&emu, spec).await;
        let before = c.stats().requests;
        let e = c.post(create, &json!({"scope": scope})).await.unwrap_err();
        assert_eq!(e.status, 0, "{scope}: {e}");
        assert!(e.maybe_sent, "{scope}: {e}");
        assert!(e.message.contains("not sent again"), "{scope}: {e}");
        assert!(ProviderError::from(e).uncertain, "{scope}");
        assert_eq!(c.stats().requests - before, 1, "{scope}: sent once");
        let sent: Vec<Value> = logged(&emu, create)
            .await
            .into_iter()
            .filter(|r| r["body"]["scope"] == scope)
            .collect();
        assert_eq!(
            sent.len(),
            1,
            "{scope}: the workspace saw one request: {sent:?}"
        );
    }
    // Both were carried out: the engine's lookup will find them.
    let scopes = c.get("/api/2.0/secrets/scopes/list", &[]).await.unwrap();
    for scope in ["dropped", "late"] {
        assert!(scopes.to_string().contains(scope), "{scopes}");
    }
    assert_eq!(c.stats().retries, 0, "no write was repeated");
    // A read is repeated: nothing changes however often it is sent.
    for lost in [json!({"drop": true}), json!({"delay_ms": 1500})] {
        let mut spec = json!({"method": "GET", "path": ME, "times": 1});
        spec.as_object_mut()
            .unwrap()
            .extend(lost.as_object().unwrap().clone());
        fault(&emu, spec).await;
        let before = c.stats().requests;
        c.get(ME, &[]).await.unwrap();
        assert_eq!(c.stats().requests - before, 2, "{lost}: read once more");
    }
}

#[tokio::test]
async fn a_host_that_does_not_resolve_fails_at_once() {
    // `.invalid` never resolves (RFC 6761).
    let c = connect(&pat("https://adb-1.brickform.invalid"), &[], &NoStore)
        .await
        .unwrap();
    let e = c.get(ME, &[]).await.unwrap_err();
    assert!(e.message.contains("cannot resolve the host"), "{e}");
    assert_eq!(c.stats().retries, 0, "not retried");
}

#[tokio::test]
async fn a_tls_failure_is_not_retried() {
    use tokio::io::AsyncWriteExt;
    // Something that answers a TLS hello in plain HTTP.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let _ = sock
                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                .await;
        }
    });
    let c = connect(&pat(&url), &[], &NoStore).await.unwrap();
    let e = c.get(ME, &[]).await.unwrap_err();
    assert!(e.message.contains("the TLS connection"), "{e}");
    assert_eq!(c.stats().retries, 0, "not retried");
}

// ---------------------------------------------------------------- rate limiting

/// Against a server limit of 20 req/s, 200 concurrent requests all succeed and the client's
/// measured rate settles near the limit. Bounds are loose: this checks the adaptation, not
/// performance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_limiter_converges_on_server_limit() {
    let emu = emulator().await;
    control(
        &emu,
        reqwest::Method::POST,
        "rate-limits",
        json!({"per_second": 20, "burst": 20, "retry_after": 1}),
    )
    .await;
    let c = connect(
        &Settings {
            initial_rate: Some(30.0),
            ..pat(&emu.url())
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    let t = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..200 {
        let c = c.clone();
        tasks.push(tokio::spawn(async move { c.get(ME, &[]).await }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let elapsed = t.elapsed().as_secs_f64();
    let rate = 200.0 / elapsed;
    let s = c.stats();
    eprintln!("200 requests in {elapsed:.1}s = {rate:.1} req/s; {s:?}");
    assert!(
        (8.0..=26.0).contains(&rate),
        "measured {rate:.1} req/s; {s:?}"
    );
    assert!(s.current_rate < 30.0, "the limiter adapted down: {s:?}");
    assert!(s.throttled < 60, "429s stay a minority: {s:?}");
}

#[tokio::test]
async fn fixed_cap_is_respected() {
    let emu = emulator().await;
    let c = connect(
        &Settings {
            rate_limit: Some(20.0),
            initial_rate: Some(100.0),
            ..pat(&emu.url())
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    let t = Instant::now();
    for _ in 0..21 {
        c.get(ME, &[]).await.unwrap();
    }
    assert!(
        t.elapsed() >= Duration::from_millis(950),
        "21 requests at 20 req/s took {:?}",
        t.elapsed()
    );
    assert!(c.stats().current_rate <= 20.0);
}

// ---------------------------------------------------------------- pagination, errors, files

#[tokio::test]
async fn list_all_follows_pages() {
    let emu = emulator().await;
    let c = connect(&pat(&emu.url()), &[], &NoStore).await.unwrap();
    c.post(&format!("{UC}/catalogs"), &json!({"name": "pages"}))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..250 {
        let c = c.clone();
        tasks.push(tokio::spawn(async move {
            c.post(
                &format!("{UC}/schemas"),
                &json!({"catalog_name": "pages", "name": format!("s{i:03}")}),
            )
            .await
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let all = c
        .list_all(
            &format!("{UC}/schemas"),
            &[
                ("catalog_name", "pages".into()),
                ("max_results", "100".into()),
            ],
            "schemas",
            Some(brickform_databricks::resources::schema::LIST_PAGE),
        )
        .await
        .unwrap();
    let mine = all
        .iter()
        .filter(|s| s["name"].as_str().is_some_and(|n| n.starts_with('s')))
        .count();
    assert_eq!(mine, 250);
    assert!(
        logged(&emu, &format!("{UC}/schemas"))
            .await
            .iter()
            .filter(|r| r["method"] == "GET")
            .count()
            >= 3
    );

    // The default page size (server picks) gets them in one go.
    let all = c
        .list_all(
            &format!("{UC}/schemas"),
            &[("catalog_name", "pages".into())],
            "schemas",
            Some(brickform_databricks::resources::schema::LIST_PAGE),
        )
        .await
        .unwrap();
    assert!(all.len() >= 250);
}

#[tokio::test]
async fn errors_are_classified() {
    let emu = emulator().await;
    let c = connect(&pat(&emu.url()), &[], &NoStore).await.unwrap();
    let e = c
        .get(&format!("{UC}/catalogs/nope"), &[])
        .await
        .unwrap_err();
    assert_eq!((e.status, e.kind), (404, ErrorKind::NotFound), "{e}");
    let p: ProviderError = e.clone().into();
    assert_eq!(p.kind, ErrorKind::NotFound);
    assert!(
        p.message.starts_with(&format!("{}: ", e.error_code)),
        "{}",
        p.message
    );

    c.post(&format!("{UC}/catalogs"), &json!({"name": "dup"}))
        .await
        .unwrap();
    let e = c
        .post(&format!("{UC}/catalogs"), &json!({"name": "dup"}))
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::AlreadyExists, "{e}");

    let e = c
        .post(&format!("{UC}/catalogs"), &json!({"name": 5}))
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidInput, "{e}");

    c.post(
        &format!("{UC}/schemas"),
        &json!({"catalog_name": "dup", "name": "s"}),
    )
    .await
    .unwrap();
    let e = c
        .delete(&format!("{UC}/catalogs/dup"), &[])
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict, "{e}");

    // A wrong route is not "not found": a delete must not silently succeed on it.
    let e = c.get("/api/2.0/no/such/endpoint", &[]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Other, "{e}");

    // Error code wins over status: an injected 400 that says ALREADY_EXISTS.
    fault(&emu, json!({"path": ME, "status": 400, "error_code": "CATALOG_ALREADY_EXISTS", "message": "x", "times": 1})).await;
    let e = c.get(ME, &[]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::AlreadyExists, "{e}");
}

#[tokio::test]
async fn files_api_bytes_and_head() {
    let emu = emulator().await;
    let c = connect(&pat(&emu.url()), &[], &NoStore).await.unwrap();
    c.post(&format!("{UC}/catalogs"), &json!({"name": "f"}))
        .await
        .unwrap();
    c.post(
        &format!("{UC}/schemas"),
        &json!({"catalog_name": "f", "name": "s"}),
    )
    .await
    .unwrap();
    c.post(
        &format!("{UC}/volumes"),
        &json!({"catalog_name": "f", "schema_name": "s", "name": "v", "volume_type": "MANAGED"}),
    )
    .await
    .unwrap();
    let path = "/api/2.0/fs/files/Volumes/f/s/v/dir/a file.bin";
    assert_eq!(c.head(path).await.unwrap(), None);
    let data: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    c.put_bytes(path, &[("overwrite", "true".into())], data.clone())
        .await
        .unwrap();
    assert_eq!(c.get_bytes(path).await.unwrap(), data);
    let meta = c.head(path).await.unwrap().unwrap();
    assert_eq!(meta.content_length, Some(3000));
    assert!(meta.last_modified.is_some());
    let listed = c
        .list_all(
            "/api/2.0/fs/directories/Volumes/f/s/v/dir",
            &[],
            "contents",
            Some(brickform_databricks::client::files::DIRECTORY_PAGE),
        )
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    c.delete(path, &[]).await.unwrap();
    assert_eq!(c.head(path).await.unwrap(), None);
}

#[tokio::test]
async fn secrets_never_in_debug_or_errors() {
    let s = Settings {
        host: Some("https://h.example.com".into()),
        token: Some("dapi-SEKRIT".into()),
        client_secret: Some("oauth-SEKRIT".into()),
        client_id: Some("id".into()),
        ..Settings::default()
    };
    assert!(!format!("{s:?}").contains("SEKRIT"));
    let e = connect(&s, &[], &NoStore).await.unwrap_err();
    assert!(!format!("{e} {e:?}").contains("SEKRIT"), "{e:?}");
    let c = connect(
        &Settings {
            auth_type: Some("pat".into()),
            ..s.clone()
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    assert!(!format!("{c:?} {:?}", c.credential_info()).contains("SEKRIT"));
    let store = MemoryStore::with("https://h.example.com", "dapi-SEKRIT");
    assert!(!format!("{store:?}").contains("SEKRIT"));
}

// ---------------------------------------------------------------- wire headers and logs

/// A one-shot HTTP server that records the raw request head and answers `{}`.
async fn capture_one_request() -> (String, tokio::task::JoinHandle<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = sock.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
            .await
            .unwrap();
        String::from_utf8_lossy(&head).to_string()
    });
    (url, handle)
}

#[tokio::test]
async fn user_agent_and_bearer_on_the_wire() {
    let (url, handle) = capture_one_request().await;
    let c = connect(&pat(&url), &[], &NoStore).await.unwrap();
    c.get("/api/2.1/unity-catalog/catalogs/a b", &[("x", "1".into())])
        .await
        .unwrap();
    let head = handle.await.unwrap().to_ascii_lowercase();
    assert!(
        head.starts_with("get /api/2.1/unity-catalog/catalogs/a%20b?x=1 "),
        "{head}"
    );
    let ua = format!(
        "user-agent: brickform/{} os/{} auth/pat",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS
    );
    assert!(head.contains(&ua), "{head}");
    assert!(
        head.contains("authorization: bearer dapi-test-token"),
        "{head}"
    );
}

#[tokio::test]
async fn m2m_token_refetched_once_after_401() {
    let emu = emulator().await;
    let c = connect(
        &Settings {
            host: Some(emu.url()),
            client_id: Some("id".into()),
            client_secret: Some("sec".into()),
            ..Settings::default()
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    c.get(ME, &[]).await.unwrap();
    fault(&emu, json!({"path": ME, "status": 401, "times": 1})).await;
    c.get(ME, &[]).await.unwrap();
    assert_eq!(
        logged(&emu, "/oidc/v1/token").await.len(),
        2,
        "a 401 drops the cached token once"
    );
    // A 401 that persists is reported, not looped on.
    fault(&emu, json!({"path": ME, "status": 401, "times": 0})).await;
    let e = c.get(ME, &[]).await.unwrap_err();
    assert_eq!(e.status, 401);
    assert_eq!(logged(&emu, "/oidc/v1/token").await.len(), 3);
}

/// A plan asks whether each new name is free and hears 404 for nearly all: those answers
/// prove the rate as well as 200s do, so the limiter leaves its start behind as fast as for
/// reads that find something. (It once counted only 2xx, and such a plan of 500 objects ran
/// at the 30 req/s start throughout.)
#[tokio::test]
async fn not_found_answers_raise_the_rate_like_successes() {
    let emu = emulator().await;
    let c = connect(&pat(&emu.url()), &[], &NoStore).await.unwrap();
    let start = c.stats().current_rate;
    let mut tasks = Vec::new();
    for i in 0..120 {
        let c = c.clone();
        tasks.push(tokio::spawn(async move {
            c.get(&format!("{UC}/catalogs/missing_{i}"), &[]).await
        }));
    }
    for t in tasks {
        let e = t.await.unwrap().unwrap_err();
        assert_eq!(e.status, 404, "{e:?}");
    }
    let s = c.stats();
    assert!(
        s.current_rate > 2.0 * start,
        "the limiter stayed near its start of {start} req/s: {s:?}"
    );
    assert_eq!(s.throttled, 0, "{s:?}");
}

// ---------------------------------------------------------------- writes safe to repeat

/// A write the tests below send, marked safe to repeat by `idempotent()` (or, for the Files
/// API, by the client's own calls).
#[derive(Debug, Clone, Copy)]
enum SafeWrite {
    Mkdirs,
    ImportOverwrite,
    FilePutOverwrite,
    DirectoryMake,
    JobReset,
}

impl SafeWrite {
    /// The method and path a fault matches.
    fn target(self) -> (&'static str, &'static str) {
        match self {
            SafeWrite::Mkdirs => ("POST", "/api/2.0/workspace/mkdirs"),
            SafeWrite::ImportOverwrite => ("POST", "/api/2.0/workspace/import"),
            SafeWrite::FilePutOverwrite => ("PUT", "/api/2.0/fs/files/.*"),
            SafeWrite::DirectoryMake => ("PUT", "/api/2.0/fs/directories/.*"),
            SafeWrite::JobReset => ("POST", "/api/2.2/jobs/reset"),
        }
    }

    /// Sends it; `n` makes each send write something new.
    async fn send(self, c: &Client, job: &Value, n: usize) -> Result<(), ApiError> {
        match self {
            SafeWrite::Mkdirs => c
                .idempotent()
                .post(
                    "/api/2.0/workspace/mkdirs",
                    &json!({"path": format!("/Users/me/safe/d{n}")}),
                )
                .await
                .map(drop),
            SafeWrite::ImportOverwrite => c
                .idempotent()
                .post(
                    "/api/2.0/workspace/import",
                    &json!({
                        "path": "/Users/me/safe/f.txt",
                        "content": base64(&format!("version {n}")),
                        "format": "AUTO",
                        "overwrite": true,
                    }),
                )
                .await
                .map(drop),
            SafeWrite::FilePutOverwrite => {
                c.file_put("/Volumes/c/s/v/f.csv", format!("version {n}").into(), true)
                    .await
            }
            SafeWrite::DirectoryMake => c.directory_make(&format!("/Volumes/c/s/v/d{n}")).await,
            SafeWrite::JobReset => c
                .idempotent()
                .post(
                    "/api/2.2/jobs/reset",
                    &json!({"job_id": job, "new_settings": {"name": format!("job {n}")}}),
                )
                .await
                .map(drop),
        }
    }
}

fn base64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A catalog `c`, schema `s`, volume `v`, the folder `/Users/me/safe` and a job.
async fn safe_write_targets(c: &Client) -> Value {
    c.post(&format!("{UC}/catalogs"), &json!({"name": "c"}))
        .await
        .unwrap();
    c.post(
        &format!("{UC}/schemas"),
        &json!({"name": "s", "catalog_name": "c"}),
    )
    .await
    .unwrap();
    c.post(
        &format!("{UC}/volumes"),
        &json!({"catalog_name": "c", "schema_name": "s", "name": "v", "volume_type": "MANAGED"}),
    )
    .await
    .unwrap();
    c.post(
        "/api/2.0/workspace/mkdirs",
        &json!({"path": "/Users/me/safe"}),
    )
    .await
    .unwrap();
    let (job, _) = c
        .post_create("/api/2.2/jobs/create", &json!({"name": "job"}))
        .await
        .unwrap();
    job["job_id"].clone()
}

fn with(mut spec: Value, more: &Value) -> Value {
    spec.as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    spec
}

/// Server errors and lost answers a write can meet: before it was carried out (500, 502,
/// 504) and after (a 500, a dropped connection, an answer later than the HTTP timeout).
fn write_faults() -> Vec<Value> {
    vec![
        json!({"status": 500}),
        json!({"status": 502}),
        json!({"status": 504}),
        json!({"status": 500, "after_side_effect": true}),
        json!({"drop": true, "after_side_effect": true}),
        json!({"delay_ms": 1000, "after_side_effect": true}),
    ]
}

/// A write marked safe to repeat (an upload with overwrite, `mkdirs`, making a directory,
/// `jobs/reset`) that meets a server error or loses its answer is sent again and succeeds,
/// leaving what the last attempt wrote; the same fault fails a create at once, sent once.
#[tokio::test]
async fn an_idempotent_write_is_retried_after_a_server_error_or_a_lost_answer() {
    let emu = emulator().await;
    let c = connect(
        &Settings {
            http_timeout: Some(Duration::from_millis(300)),
            ..pat(&emu.url())
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    let job = safe_write_targets(&c).await;
    let mut n = 0;
    for write in [
        SafeWrite::Mkdirs,
        SafeWrite::ImportOverwrite,
        SafeWrite::FilePutOverwrite,
        SafeWrite::DirectoryMake,
        SafeWrite::JobReset,
    ] {
        let (method, path) = write.target();
        for f in write_faults() {
            n += 1;
            fault(
                &emu,
                with(json!({"method": method, "path": path, "times": 1}), &f),
            )
            .await;
            let before = c.stats();
            write
                .send(&c, &job, n)
                .await
                .unwrap_or_else(|e| panic!("{write:?} after {f}: {e}"));
            let after = c.stats();
            assert_eq!(
                (
                    after.requests - before.requests,
                    after.retries - before.retries
                ),
                (2, 1),
                "{write:?} after {f}: sent again once"
            );
        }
    }
    let faults = control(&emu, reqwest::Method::GET, "faults", Value::Null).await;
    for f in faults["faults"].as_array().unwrap() {
        assert_eq!(f["fired"], 1, "{f}");
    }
    // What the last attempt of each wrote is there.
    let file = c.file_get("/Volumes/c/s/v/f.csv").await.unwrap().unwrap();
    assert_eq!(String::from_utf8(file).unwrap(), "version 18");
    let exported = c
        .get(
            "/api/2.0/workspace/export",
            &[
                ("path", "/Users/me/safe/f.txt".into()),
                ("format", "AUTO".into()),
            ],
        )
        .await
        .unwrap();
    assert_eq!(exported["content"], base64("version 12"), "{exported}");
    let got = c
        .get("/api/2.2/jobs/get", &[("job_id", job.to_string())])
        .await
        .unwrap();
    assert_eq!(got["settings"]["name"], "job 30", "{got}");
    for d in [1, 6, 19, 24] {
        let path = if d < 7 {
            format!("/Users/me/safe/d{d}")
        } else {
            format!("/Volumes/c/s/v/d{d}")
        };
        let found = if d < 7 {
            c.get("/api/2.0/workspace/get-status", &[("path", path.clone())])
                .await
                .is_ok()
        } else {
            c.directory_entries(&path).await.unwrap().is_some()
        };
        assert!(found, "{path} was made");
    }

    // Without the marker, the same faults end a write at once: sent once, uncertain when it
    // may have been carried out (the engine then looks for what it made).
    for f in write_faults() {
        fault(
            &emu,
            with(
                json!({"method": "POST", "path": "/api/2.2/jobs/create", "times": 1}),
                &f,
            ),
        )
        .await;
        let before = c.stats().requests;
        let e = c
            .post_create("/api/2.2/jobs/create", &json!({"name": "once"}))
            .await
            .unwrap_err();
        assert!(ProviderError::from(e).uncertain, "{f}");
        assert_eq!(c.stats().requests - before, 1, "a create after {f}");
    }
    // And an upload without overwrite (a repeat of one carried out is ALREADY_EXISTS).
    fault(
        &emu,
        json!({"method": "PUT", "path": "/api/2.0/fs/files/.*", "status": 502, "times": 1}),
    )
    .await;
    let before = c.stats().requests;
    let e = c
        .file_put("/Volumes/c/s/v/new.csv", b"x".to_vec(), false)
        .await
        .unwrap_err();
    assert_eq!(e.status, 502);
    assert_eq!(c.stats().requests - before, 1);
}

/// A delete carried out whose answer was lost is sent again, meets 404, and counts as
/// deleted, for the Files API, a workspace object and a job.
#[tokio::test]
async fn a_delete_whose_answer_is_lost_after_it_took_effect_counts_as_deleted() {
    use brickform_databricks::resources::{gone_ok, job::job_missing, volume_files};
    let emu = emulator().await;
    let c = connect(
        &Settings {
            http_timeout: Some(Duration::from_millis(300)),
            ..pat(&emu.url())
        },
        &[],
        &NoStore,
    )
    .await
    .unwrap();
    let job = safe_write_targets(&c).await;
    c.file_put("/Volumes/c/s/v/f.csv", b"x".to_vec(), true)
        .await
        .unwrap();
    for (i, lost) in write_faults()
        .into_iter()
        .filter(|f| f["after_side_effect"] == true)
        .enumerate()
    {
        let label = lost.to_string();
        let path = format!("/Users/me/safe/gone{i}");
        c.post("/api/2.0/workspace/mkdirs", &json!({ "path": path }))
            .await
            .unwrap();
        let (made, _) = c
            .post_create("/api/2.2/jobs/create", &json!({"name": "gone"}))
            .await
            .unwrap();
        let file = format!("/Volumes/c/s/v/gone{i}.csv");
        c.file_put(&file, b"x".to_vec(), true).await.unwrap();
        for (method, p) in [
            ("DELETE", "/api/2.0/fs/files/.*"),
            ("POST", "/api/2.0/workspace/delete"),
            ("POST", "/api/2.2/jobs/delete"),
        ] {
            fault(
                &emu,
                with(json!({"method": method, "path": p, "times": 1}), &lost),
            )
            .await;
        }
        let before = c.stats().requests;
        volume_files::delete(&c, &file)
            .await
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        gone_ok(
            c.idempotent()
                .post("/api/2.0/workspace/delete", &json!({ "path": path }))
                .await,
        )
        .unwrap_or_else(|e| panic!("{label}: {e}"));
        match c
            .idempotent()
            .post("/api/2.2/jobs/delete", &json!({"job_id": made["job_id"]}))
            .await
        {
            Ok(_) => {}
            Err(e) if job_missing(&e) => {}
            Err(e) => panic!("{label}: {e}"),
        }
        assert_eq!(c.stats().requests - before, 6, "{label}: each sent twice");
        // The second of each met what the first did: nothing there (for a job, the
        // service's 400 "Job N does not exist").
        for (p, status) in [
            ("/api/2.0/fs/files/Volumes/c/s/v/gone.*", 404),
            ("/api/2.0/workspace/delete", 404),
            ("/api/2.2/jobs/delete", 400),
        ] {
            let last = logged(&emu, p).await.pop().unwrap();
            assert_eq!(last["status"], status, "{label}: {last}");
        }
        assert!(c.file_get(&file).await.unwrap().is_none(), "{label}");
        let status = c
            .get("/api/2.0/workspace/get-status", &[("path", path.clone())])
            .await
            .unwrap_err();
        assert_eq!(status.status, 404, "{label}");
        let e = c
            .get(
                "/api/2.2/jobs/get",
                &[("job_id", made["job_id"].to_string())],
            )
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound, "{label}: {e}");
    }
    // The job the targets made is still there: only what was asked was deleted.
    c.get("/api/2.2/jobs/get", &[("job_id", job.to_string())])
        .await
        .unwrap();
}

/// `account_id` is read as the SDKs read it: the setting, then DATABRICKS_ACCOUNT_ID, then
/// the profile's `account_id` (config/config.go: `name:"account_id" env:"DATABRICKS_ACCOUNT_ID"`).
#[tokio::test]
async fn the_account_id_comes_from_settings_env_or_profile() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    write_cfg(
        dir.path(),
        "[acct]\nhost = https://accounts.cloud.databricks.com\ntoken = dapi-profile\naccount_id = from-profile\n",
    );
    let accounts = |account_id: Option<&str>| Settings {
        host: Some("https://accounts.cloud.databricks.com".into()),
        token: Some("dapi-x".into()),
        account_id: account_id.map(str::to_string),
        ..Settings::default()
    };
    let env = [
        ("DATABRICKS_ACCOUNT_ID", "from-env"),
        ("HOME", home.as_str()),
    ];
    let c = connect(&accounts(Some("from-settings")), &env, &NoStore)
        .await
        .unwrap();
    assert_eq!(c.account_id(), Some("from-settings"));
    let c = connect(&accounts(None), &env, &NoStore).await.unwrap();
    assert_eq!(c.account_id(), Some("from-env"));
    let c = connect(
        &Settings {
            profile: Some("acct".into()),
            ..Settings::default()
        },
        &[("HOME", home.as_str())],
        &NoStore,
    )
    .await
    .unwrap();
    assert_eq!(c.account_id(), Some("from-profile"));
    assert_eq!(c.host(), "https://accounts.cloud.databricks.com");
    let c = connect(&accounts(None), &[("HOME", home.as_str())], &NoStore)
        .await
        .unwrap();
    assert_eq!(c.account_id(), None);
}
