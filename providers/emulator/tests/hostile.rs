//! The local workspace against hostile or broken clients: auth before the body, size limits,
//! timeouts for idle and stalled connections, guarded control endpoints, a redacted log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_emulator::EmulatorConfig;
use common::start_with;
use serde_json::{Value, json};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const TOKEN: &str = "right";
const CATALOGS: &str = "/api/2.1/unity-catalog/catalogs";

fn with_token() -> EmulatorConfig {
    EmulatorConfig {
        tokens: Some(vec![TOKEN.into()]),
        ..EmulatorConfig::for_tests()
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Reads until the server closes the connection (or the read timeout): what it sent.
fn read_all(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => panic!("read: {e} after {:?}", String::from_utf8_lossy(&out)),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads one response head (up to the blank line).
fn read_head(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut b = [0u8; 1];
    while !out.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(0) => break,
            Ok(_) => out.push(b[0]),
            Err(e) => panic!("read: {e} after {:?}", String::from_utf8_lossy(&out)),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn post_head(path: &str, len: u64, token: Option<&str>) -> String {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {len}\r\n\r\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unauthenticated_request_is_refused_before_its_body_is_read() {
    let c = start_with(with_token()).await;
    let addr = c.emu.addr();
    const HALF_GIB: u64 = 500 * 1024 * 1024;

    // Only the head is sent: the 401 can only come if the server did not wait for the body.
    let head = tokio::task::spawn_blocking(move || {
        let mut s = connect(addr);
        s.write_all(post_head(CATALOGS, HALF_GIB, None).as_bytes())
            .unwrap();
        let t = Instant::now();
        let head = read_head(&mut s);
        (head, t.elapsed())
    })
    .await
    .unwrap();
    assert!(head.0.starts_with("HTTP/1.1 401"), "{}", head.0);
    assert!(head.1 < Duration::from_secs(2), "401 took {:?}", head.1);

    // Eight clients pushing 500 MiB each at once: each is cut off, and the server keeps
    // answering (this crashed it when bodies were buffered before the token was checked).
    let pushers: Vec<_> = (0..8)
        .map(|_| {
            tokio::task::spawn_blocking(move || {
                let mut s = connect(addr);
                s.write_all(post_head(CATALOGS, HALF_GIB, Some("wrong")).as_bytes())
                    .unwrap();
                let chunk = vec![b' '; 1024 * 1024];
                let mut sent: u64 = 0;
                while sent < HALF_GIB {
                    match s.write(&chunk) {
                        Ok(n) => sent += n as u64,
                        Err(_) => break,
                    }
                }
                sent
            })
        })
        .collect();
    let (s, v) = c.get(CATALOGS).await;
    assert_eq!(s, 401, "{v}");
    let mut authed = c.http.get(c.url(CATALOGS)).bearer_auth(TOKEN);
    authed = authed.timeout(Duration::from_secs(10));
    assert_eq!(authed.send().await.unwrap().status(), 200);
    for p in pushers {
        let sent = p.await.unwrap();
        assert!(
            sent < HALF_GIB,
            "the server read a whole unauthenticated 500 MiB body ({sent} bytes)"
        );
    }
    let r = c
        .http
        .get(c.url(CATALOGS))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the server is still up");
}

#[tokio::test]
async fn bodies_over_the_limit_get_413_with_an_error_body_and_files_have_their_own_limit() {
    let mut c = start_with(EmulatorConfig {
        body_limit: 4 * 1024,
        file_body_limit: 64 * 1024,
        ..EmulatorConfig::for_tests()
    })
    .await;
    c.token = "any".into();
    let big = json!({"name": "c", "comment": "x".repeat(8 * 1024)});
    let (s, v) = c.post(CATALOGS, big).await;
    assert_eq!(s, 413, "{v}");
    assert_eq!(v["error_code"], "INVALID_PARAMETER_VALUE", "{v}");
    assert!(v["message"].as_str().unwrap().contains("4096 bytes"), "{v}");
    // Nothing was created, and a body under the limit works.
    let (s, v) = c.post(CATALOGS, json!({"name": "c"})).await;
    assert_eq!(s, 200, "{v}");

    // A chunked body (no Content-Length) is cut off once it grows past the limit.
    let addr = c.emu.addr();
    let head = tokio::task::spawn_blocking(move || {
        let mut s = connect(addr);
        s.write_all(
            format!("POST {CATALOGS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nTransfer-Encoding: chunked\r\n\r\n")
                .as_bytes(),
        )
        .unwrap();
        let chunk = format!("1000\r\n{}\r\n", " ".repeat(0x1000));
        for _ in 0..4 {
            if s.write_all(chunk.as_bytes()).is_err() {
                break;
            }
        }
        read_head(&mut s)
    })
    .await
    .unwrap();
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");

    // Volume files: above the API limit is fine, above the file limit is not.
    c.ok(
        "/api/2.1/unity-catalog/schemas",
        json!({"name": "s", "catalog_name": "c"}),
    )
    .await;
    c.ok(
        "/api/2.1/unity-catalog/volumes",
        json!({"name": "v", "catalog_name": "c", "schema_name": "s", "volume_type": "MANAGED"}),
    )
    .await;
    let put = |n: usize| {
        c.http
            .put(c.url("/api/2.0/fs/files/Volumes/c/s/v/f.bin"))
            .bearer_auth("t")
            .header("content-type", "application/octet-stream")
            .body(vec![7u8; n])
            .send()
    };
    assert!(put(32 * 1024).await.unwrap().status().is_success());
    let r = put(128 * 1024).await.unwrap();
    assert_eq!(r.status(), 413);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error_code"], "INVALID_PARAMETER_VALUE", "{v}");
    // The control endpoints read bodies under the API limit too.
    let (s, _) = c
        .post(
            "/__emulator/faults",
            json!({"message": "x".repeat(8 * 1024)}),
        )
        .await;
    assert_eq!(s, 413);
}

#[test]
fn the_default_limits_fit_real_use() {
    let d = EmulatorConfig::default();
    // A 10 MB workspace import arrives base64-encoded inside JSON.
    assert!(d.body_limit >= 10 * 1024 * 1024 * 4 / 3 + 1024);
    assert!(d.file_body_limit >= 1024 * 1024 * 1024);
    assert!(d.header_timeout >= Duration::from_secs(10));
}

fn closed_within(mut s: TcpStream, limit: Duration) -> Duration {
    let t = Instant::now();
    let rest = read_all(&mut s);
    let took = t.elapsed();
    assert!(took < limit, "still open after {took:?}; got {rest:?}");
    took
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_half_open_and_stalled_connections_time_out() {
    let c = start_with(EmulatorConfig {
        header_timeout: Duration::from_millis(400),
        body_timeout: Duration::from_millis(400),
        ..EmulatorConfig::for_tests()
    })
    .await;
    let addr = c.emu.addr();
    tokio::task::spawn_blocking(move || {
        // Connects and sends nothing.
        closed_within(connect(addr), Duration::from_secs(3));
        // Sends half a request head and stops.
        let mut s = connect(addr);
        s.write_all(b"GET /api/2.1/unity-catalog/catalogs HTTP/1.1\r\nHost: x\r\nAuthor")
            .unwrap();
        closed_within(s, Duration::from_secs(3));
        // One complete keep-alive request, then idle.
        let mut s = connect(addr);
        s.write_all(b"GET /__emulator/health HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        assert!(read_head(&mut s).starts_with("HTTP/1.1 200"));
        closed_within(s, Duration::from_secs(3));
        // A body that stops arriving gets 408 instead of holding the connection.
        let mut s = connect(addr);
        s.write_all(post_head(CATALOGS, 100, Some("t")).as_bytes())
            .unwrap();
        s.write_all(b"{\"name\":").unwrap();
        let t = Instant::now();
        let head = read_head(&mut s);
        assert!(head.starts_with("HTTP/1.1 408"), "{head}");
        assert!(t.elapsed() < Duration::from_secs(3));
    })
    .await
    .unwrap();
    // The server still serves.
    assert_eq!(c.get("/__emulator/health").await.0, 200);
}

#[tokio::test]
async fn control_endpoints_need_the_token_when_one_is_set() {
    let mut c = start_with(with_token()).await;
    for (method, path) in [
        ("GET", "/__emulator/state"),
        ("GET", "/__emulator/requests"),
        ("DELETE", "/__emulator/requests"),
        ("POST", "/__emulator/reset"),
        ("POST", "/__emulator/faults"),
        ("GET", "/__emulator/faults"),
        ("POST", "/__emulator/clock"),
        ("GET", "/__emulator/health"),
    ] {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let r = c.http.request(m.clone(), c.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 401, "{method} {path} without a token");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["error_code"], "UNAUTHENTICATED");
        c.token = "wrong".into();
        assert_eq!(
            c.call(m.clone(), path, None).await.0,
            401,
            "{method} {path}"
        );
    }
    c.token = TOKEN.into();
    assert_eq!(c.get("/__emulator/state").await.0, 200);
    assert_eq!(c.get("/__emulator/requests").await.0, 200);

    // Without configured tokens the workspace accepts anyone, and so do its controls.
    let open = start_with(EmulatorConfig::for_tests()).await;
    let r = open
        .http
        .get(open.url("/__emulator/state"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn the_request_log_redacts_write_only_values() {
    let c = start_with(EmulatorConfig::for_tests()).await;
    c.ok(
        "/api/2.1/unity-catalog/connections",
        json!({"name": "pg", "connection_type": "POSTGRESQL",
               "options": {"host": "db", "port": "5432", "user": "u", "Password": "hunter2-pw"}}),
    )
    .await;
    let (s, v) = c
        .patch(
            "/api/2.1/unity-catalog/connections/pg",
            json!({"options": {"host": "db", "user": "u", "password": "second-pw"}}),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    c.ok("/api/2.0/secrets/scopes/create", json!({"scope": "sc"}))
        .await;
    c.ok(
        "/api/2.0/secrets/put",
        json!({"scope": "sc", "key": "k", "string_value": "s3cr3t-string"}),
    )
    .await;
    c.ok(
        "/api/2.0/secrets/put",
        json!({"scope": "sc", "key": "b", "bytes_value": "c2VjcmV0LWJ5dGVz"}),
    )
    .await;
    let r = c
        .http
        .post(c.url("/oidc/v1/token"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", "app"),
            ("client_secret", "oauth-client-secret"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let log = c.ok_get("/__emulator/requests").await;
    let text = log.to_string();
    for secret in [
        "hunter2-pw",
        "second-pw",
        "s3cr3t-string",
        "c2VjcmV0LWJ5dGVz",
        "oauth-client-secret",
    ] {
        assert!(
            !text.contains(secret),
            "{secret} in the request log: {text}"
        );
    }
    let reqs = log["requests"].as_array().unwrap();
    let create = &reqs[0]["body"];
    assert_eq!(create["options"]["Password"], "**REDACTED**", "{create}");
    // The user name is withheld on read like the password, so it is redacted too; what is
    // not write-only stays, so tests can still see what was sent.
    assert_eq!(create["options"]["user"], "**REDACTED**", "{create}");
    assert_eq!(create["options"]["host"], "db");
    assert_eq!(reqs[3]["body"]["string_value"], "**REDACTED**");
    assert_eq!(reqs[3]["body"]["key"], "k");
    let form = reqs[5]["body"].as_str().unwrap();
    assert!(form.contains("grant_type=client_credentials"), "{form}");
    assert!(form.contains("client_secret=**REDACTED**"), "{form}");
}

#[tokio::test]
async fn a_small_change_to_a_large_workspace_does_not_rewrite_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = EmulatorConfig {
        data_dir: Some(dir.path().to_path_buf()),
        ..EmulatorConfig::for_tests()
    };
    let c = start_with(cfg.clone()).await;
    c.ok(CATALOGS, json!({"name": "c"})).await;
    c.ok(
        "/api/2.1/unity-catalog/schemas",
        json!({"name": "s", "catalog_name": "c"}),
    )
    .await;
    c.ok(
        "/api/2.1/unity-catalog/volumes",
        json!({"name": "v", "catalog_name": "c", "schema_name": "s", "volume_type": "MANAGED"}),
    )
    .await;
    // 24 MiB of volume files: more than the journal holds before it is folded in.
    for i in 0..3 {
        let r = c
            .http
            .put(c.url(&format!("/api/2.0/fs/files/Volumes/c/s/v/f{i}.bin")))
            .bearer_auth("t")
            .header("content-type", "application/octet-stream")
            .body(vec![b'x'; 8 << 20])
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }
    let snapshot = dir.path().join(brickform_emulator::STATE_FILE);
    let journal = dir.path().join(brickform_emulator::JOURNAL_FILE);
    let before = std::fs::read(&snapshot).unwrap();
    let journal_before = std::fs::metadata(&journal).unwrap().len();
    assert!(
        before.len() > 8 << 20,
        "the files are in the snapshot by now"
    );

    c.ok(CATALOGS, json!({"name": "small", "comment": "one more"}))
        .await;
    let written = std::fs::metadata(&journal).unwrap().len() - journal_before;
    // The catalog with its default and information_schema schemas: a few KiB.
    assert!(written < 16 * 1024, "a new catalog wrote {written} bytes");
    assert_eq!(
        std::fs::read(&snapshot).unwrap(),
        before,
        "workspace.json was rewritten"
    );

    // The change is durable: a restart, and a reader of the directory, see it.
    c.emu.shutdown().await;
    let on_disk = brickform_emulator::read_workspace(dir.path())
        .unwrap()
        .unwrap();
    assert_eq!(on_disk["catalogs"]["small"]["comment"], "one more");
    let c = start_with(cfg).await;
    assert_eq!(
        c.ok_get(&format!("{CATALOGS}/small")).await["comment"],
        "one more"
    );
    assert_eq!(
        c.ok_get("/__emulator/state").await["files"]
            .as_object()
            .unwrap()
            .len(),
        3
    );
}
