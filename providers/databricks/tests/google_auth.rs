//! Google Cloud sign-in against the local workspace's Google stand-ins: a service-account
//! key (`google-credentials`), an impersonated service account with application default
//! credentials (`google-id`), tokens renewed as they expire, and errors that name the method
//! and hold no secret.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::OnceLock;

use aws_lc_rs::encoding::AsDer;
use base64::Engine;
use brickform_databricks::client::{AuthType, Client, ClientError, NoStore, Settings, Source};
use brickform_emulator::{Emulator, EmulatorConfig, RunningEmulator};
use serde_json::{Value, json};

const ME: &str = "/api/2.0/preview/scim/v2/Me";
const TOKEN: &str = "/_identity/google/token";
/// The workspace takes only tokens it minted, plus this one (for its control endpoints).
const ADMIN: &str = "admin-token";
const SA: &str = "deployer@project-1.iam.gserviceaccount.com";

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

async fn connect(settings: &Settings, env: &[(&str, &str)]) -> Result<Client, ClientError> {
    Client::connect(settings, &env_of(env), &NoStore).await
}

async fn emulator() -> RunningEmulator {
    Emulator::start(EmulatorConfig {
        tokens: Some(vec![ADMIN.to_string()]),
        ..EmulatorConfig::for_tests()
    })
    .await
    .unwrap()
}

fn host(emu: &RunningEmulator) -> Settings {
    Settings {
        host: Some(emu.url()),
        retry_timeout: Some(std::time::Duration::from_secs(5)),
        ..Settings::default()
    }
}

async fn logged(emu: &RunningEmulator, path_regex: &str) -> Vec<Value> {
    let r: Value = reqwest::Client::new()
        .get(format!("{}/__emulator/requests", emu.url()))
        .query(&[("path", path_regex)])
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    r["requests"].as_array().cloned().unwrap_or_default()
}

async fn control(emu: &RunningEmulator, path: &str, body: Value) {
    let r = reqwest::Client::new()
        .post(format!("{}/__emulator/{path}", emu.url()))
        .bearer_auth(ADMIN)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{path}: {}", r.status());
}

/// A 2048-bit RSA key in PKCS#8 PEM, made once per test run (no key is kept in the tree).
fn private_key_pem() -> &'static str {
    static PEM: OnceLock<String> = OnceLock::new();
    PEM.get_or_init(|| {
        let key = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
        let der: aws_lc_rs::encoding::Pkcs8V1Der = key.as_der().unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            lines.join("\n")
        )
    })
}

/// A line from the middle of the key's base64: what must never show in a message or a log.
fn key_fragment() -> String {
    private_key_pem().lines().nth(5).unwrap().to_string()
}

fn service_account_key(emu: &RunningEmulator) -> Value {
    json!({
        "type": "service_account",
        "project_id": "project-1",
        "private_key_id": "key-id-1",
        "private_key": private_key_pem(),
        "client_email": SA,
        "client_id": "1234567890",
        "token_uri": format!("{}{TOKEN}", emu.url()),
    })
}

fn assert_no_secret(text: &str) {
    assert!(!text.contains(&key_fragment()), "the key shows: {text}");
    assert!(!text.contains("ya29."), "an access token shows: {text}");
    assert!(!text.contains("eyJ"), "a JWT shows: {text}");
    assert!(
        !text.contains("refresh-SECRET"),
        "a refresh token shows: {text}"
    );
    assert!(
        !text.contains("client-SECRET"),
        "a client secret shows: {text}"
    );
}

/// The last `Me` call succeeded, with a Google access token the stand-in minted beside it.
async fn assert_me_with_access_token(emu: &RunningEmulator) {
    let me = logged(emu, ME).await;
    let last = me.last().expect("Me was called");
    assert_eq!(last["status"], 200, "{last}");
    assert_eq!(last["gcp_sa_access_token"], "minted", "{last}");
}

#[tokio::test]
async fn google_credentials_from_a_key_file_and_inline_json() {
    let emu = emulator().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("key.json");
    std::fs::write(&file, service_account_key(&emu).to_string()).unwrap();

    // A key file's path, from the provider block; the attribute picks the method.
    let c = connect(
        &Settings {
            google_credentials: Some(file.display().to_string()),
            ..host(&emu)
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(c.credential_info().auth_type, AuthType::GoogleCredentials);
    assert_eq!(c.credential_info().credential_source, Source::Settings);
    assert_eq!(
        c.get(ME, &[]).await.unwrap()["userName"],
        "local-user@brickform.local"
    );
    assert_me_with_access_token(&emu).await;
    assert_no_secret(&format!("{c:?}"));

    // Two JWT-bearer exchanges (the ID token, the access token); the log hides assertions.
    let token_calls = logged(&emu, TOKEN).await;
    assert_eq!(token_calls.len(), 2, "{token_calls:?}");
    for call in &token_calls {
        let body = call["body"].as_str().unwrap();
        assert!(
            body.contains("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"),
            "{body}"
        );
        assert!(body.contains("assertion=**REDACTED**"), "{body}");
        assert_eq!(call["status"], 200);
    }

    // The JSON itself, from GOOGLE_CREDENTIALS, with auth_type pinned.
    let json = service_account_key(&emu).to_string();
    let c = connect(
        &Settings {
            auth_type: Some("google-credentials".into()),
            ..host(&emu)
        },
        &[("GOOGLE_CREDENTIALS", &json)],
    )
    .await
    .unwrap();
    assert_eq!(
        c.credential_info().credential_source,
        Source::Env("GOOGLE_CREDENTIALS")
    );
    c.get(ME, &[]).await.unwrap();
    assert_me_with_access_token(&emu).await;
    assert_no_secret(
        &logged(&emu, ".*")
            .await
            .iter()
            .map(Value::to_string)
            .collect::<String>(),
    );
}

#[tokio::test]
async fn without_an_access_token_the_id_token_still_signs_in() {
    let emu = emulator().await;
    // The second exchange (the access token) is refused.
    control(
        &emu,
        "faults",
        json!({"path": TOKEN, "status": 400, "after": 1, "times": 1,
               "body": {"error": "invalid_scope", "error_description": "Not allowed."}}),
    )
    .await;
    let c = connect(
        &Settings {
            google_credentials: Some(service_account_key(&emu).to_string()),
            ..host(&emu)
        },
        &[],
    )
    .await
    .unwrap();
    c.get(ME, &[]).await.unwrap();
    let me = logged(&emu, ME).await;
    assert_eq!(me[0]["status"], 200);
    assert!(me[0].get("gcp_sa_access_token").is_none(), "{}", me[0]);
}

/// Connects with a service-account key, calls the API twice, and counts the exchanges at
/// the token endpoint after connecting and after each call.
async fn token_exchanges(emu: &RunningEmulator, lifetimes: Value) -> Vec<usize> {
    control(emu, "identity/google", lifetimes).await;
    let before = logged(emu, TOKEN).await.len();
    let c = connect(
        &Settings {
            google_credentials: Some(service_account_key(emu).to_string()),
            ..host(emu)
        },
        &[],
    )
    .await
    .unwrap();
    let mut counts = vec![logged(emu, TOKEN).await.len() - before];
    for _ in 0..2 {
        c.get(ME, &[]).await.unwrap();
        counts.push(logged(emu, TOKEN).await.len() - before);
    }
    assert_me_with_access_token(emu).await;
    counts
}

#[tokio::test]
async fn a_token_that_expires_soon_is_fetched_again() {
    let emu = emulator().await;
    // Tokens count as expired 40 s early, so a 30 s token is renewed before every call:
    // the ID token's expiry is its `exp` claim, and the pair lasts as long as the shorter.
    let hour = 3600;
    let short_id = json!({"id_token_lifetime_s": 30, "access_token_lifetime_s": hour});
    assert_eq!(token_exchanges(&emu, short_id).await, [2, 4, 6]);
    let short_access = json!({"id_token_lifetime_s": hour, "access_token_lifetime_s": 30});
    assert_eq!(token_exchanges(&emu, short_access).await, [2, 4, 6]);
    // Tokens of an hour are kept.
    let long = json!({"id_token_lifetime_s": hour, "access_token_lifetime_s": hour});
    assert_eq!(token_exchanges(&emu, long).await, [2, 2, 2]);
}

fn google_id_env<'a>(emu_iam: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut env = vec![
        ("DATABRICKS_GOOGLE_SERVICE_ACCOUNT", SA),
        ("GOOGLE_IAM_CREDENTIALS_CUSTOM_ENDPOINT", emu_iam),
    ];
    env.extend_from_slice(extra);
    env
}

fn authorized_user(emu: &RunningEmulator) -> String {
    json!({
        "type": "authorized_user",
        "client_id": "123.apps.googleusercontent.com",
        "client_secret": "client-SECRET",
        "refresh_token": "refresh-SECRET",
        "token_uri": format!("{}{TOKEN}", emu.url()),
    })
    .to_string()
}

#[tokio::test]
async fn google_id_with_a_gcloud_login() {
    let emu = emulator().await;
    let iam = format!("{}/_identity/google/iam", emu.url());
    let dir = tempfile::tempdir().unwrap();
    let adc = dir.path().join("adc.json");
    std::fs::write(&adc, authorized_user(&emu)).unwrap();
    let adc = adc.display().to_string();

    let c = connect(
        &host(&emu),
        &google_id_env(&iam, &[("GOOGLE_APPLICATION_CREDENTIALS", &adc)]),
    )
    .await
    .unwrap();
    let info = c.credential_info();
    assert_eq!(info.auth_type, AuthType::GoogleId);
    assert_eq!(
        info.credential_source,
        Source::Env("DATABRICKS_GOOGLE_SERVICE_ACCOUNT")
    );
    c.get(ME, &[]).await.unwrap();
    assert_me_with_access_token(&emu).await;

    let refresh = logged(&emu, TOKEN).await;
    assert_eq!(refresh.len(), 1, "{refresh:?}");
    let body = refresh[0]["body"].as_str().unwrap();
    assert!(body.contains("grant_type=refresh_token"), "{body}");
    let iam_calls = logged(&emu, "/_identity/google/iam/.*").await;
    let paths: Vec<&str> = iam_calls
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            format!("/_identity/google/iam/v1/projects/-/serviceAccounts/{SA}:generateIdToken"),
            format!("/_identity/google/iam/v1/projects/-/serviceAccounts/{SA}:generateAccessToken"),
        ]
    );
    assert_eq!(
        iam_calls[0]["body"],
        json!({"audience": emu.url(), "includeEmail": true})
    );
    assert_eq!(iam_calls[1]["body"]["lifetime"], "3600s");
    assert_no_secret(
        &logged(&emu, ".*")
            .await
            .iter()
            .map(Value::to_string)
            .collect::<String>(),
    );

    // gcloud's well-known file, in CLOUDSDK_CONFIG; the service account from settings.
    let gcloud = dir.path().join("gcloud");
    std::fs::create_dir(&gcloud).unwrap();
    std::fs::write(
        gcloud.join("application_default_credentials.json"),
        authorized_user(&emu),
    )
    .unwrap();
    let gcloud = gcloud.display().to_string();
    let c = connect(
        &Settings {
            google_service_account: Some(SA.into()),
            ..host(&emu)
        },
        &[
            ("GOOGLE_IAM_CREDENTIALS_CUSTOM_ENDPOINT", &iam),
            ("CLOUDSDK_CONFIG", &gcloud),
        ],
    )
    .await
    .unwrap();
    assert_eq!(c.credential_info().credential_source, Source::Settings);
    c.get(ME, &[]).await.unwrap();
    assert_me_with_access_token(&emu).await;
}

#[tokio::test]
async fn google_id_with_a_service_account_key_as_adc() {
    let emu = emulator().await;
    let iam = format!("{}/_identity/google/iam", emu.url());
    let dir = tempfile::tempdir().unwrap();
    let adc = dir.path().join("key.json");
    std::fs::write(&adc, service_account_key(&emu).to_string()).unwrap();
    let adc = adc.display().to_string();
    let c = connect(
        &host(&emu),
        &google_id_env(&iam, &[("GOOGLE_APPLICATION_CREDENTIALS", &adc)]),
    )
    .await
    .unwrap();
    c.get(ME, &[]).await.unwrap();
    assert_me_with_access_token(&emu).await;
}

#[tokio::test]
async fn google_id_on_a_google_cloud_machine() {
    let emu = emulator().await;
    let iam = format!("{}/_identity/google/iam", emu.url());
    let metadata = format!("{}/_identity/google/metadata", emu.addr());
    // A home without gcloud's file: the metadata server is next.
    let home = tempfile::tempdir().unwrap();
    let home = home.path().display().to_string();
    let c = connect(
        &host(&emu),
        &google_id_env(&iam, &[("GCE_METADATA_HOST", &metadata), ("HOME", &home)]),
    )
    .await
    .unwrap();
    c.get(ME, &[]).await.unwrap();
    assert_me_with_access_token(&emu).await;
    let asked = logged(&emu, "/_identity/google/metadata/.*").await;
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["status"], 200);

    // No metadata server there: the message says what to do.
    let e = connect(
        &host(&emu),
        &google_id_env(
            &iam,
            &[("GCE_METADATA_HOST", "127.0.0.1:1"), ("HOME", &home)],
        ),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("signing in with google-id failed:"), "{e}");
    assert!(e.contains("gcloud auth application-default login"), "{e}");
    // The metadata server speaks plain http, so only its own address or loopback.
    let e = connect(
        &host(&emu),
        &google_id_env(
            &iam,
            &[
                ("GCE_METADATA_HOST", "metadata.example.com"),
                ("HOME", &home),
            ],
        ),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("GCE_METADATA_HOST"), "{e}");
}

fn one_line(e: &str) {
    assert!(!e.contains('\n'), "not one line: {e}");
    assert_no_secret(e);
}

#[tokio::test]
async fn errors_name_the_method_and_hold_no_secret() {
    let emu = emulator().await;
    let iam = format!("{}/_identity/google/iam", emu.url());
    let dir = tempfile::tempdir().unwrap();
    let creds = |value: String| Settings {
        google_credentials: Some(value),
        ..host(&emu)
    };

    // A key file that does not exist.
    let missing = dir.path().join("missing.json").display().to_string();
    let e = connect(&creds(missing), &[]).await.unwrap_err().to_string();
    assert!(
        e.starts_with("signing in with google-credentials failed:"),
        "{e}"
    );
    assert!(e.contains("neither a file that exists nor"), "{e}");
    one_line(&e);

    // JSON cut short, with the key in it.
    let key = service_account_key(&emu).to_string();
    let cut = key[..key.len() / 2].to_string();
    let e = connect(&creds(cut), &[]).await.unwrap_err().to_string();
    assert!(
        e.starts_with("signing in with google-credentials failed:"),
        "{e}"
    );
    assert!(e.contains("not valid JSON"), "{e}");
    one_line(&e);

    // A key that is not one.
    let mut bad = service_account_key(&emu);
    bad["private_key"] = json!(
        "-----BEGIN PRIVATE KEY-----\nMIIBVAIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
    );
    let e = connect(&creds(bad.to_string()), &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an RSA key"), "{e}");
    one_line(&e);

    // A token endpoint in clear text elsewhere than loopback.
    let mut far = service_account_key(&emu);
    far["token_uri"] = json!("http://oauth.example.com/token");
    let e = connect(&creds(far.to_string()), &[])
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("token_uri"), "{e}");
    one_line(&e);

    // Application default credentials of a type brickform does not sign in with.
    let adc = dir.path().join("adc.json");
    std::fs::write(
        &adc,
        json!({"type": "external_account", "audience": "x", "subject_token_type": "y"}).to_string(),
    )
    .unwrap();
    let adc = adc.display().to_string();
    let e = connect(
        &host(&emu),
        &google_id_env(&iam, &[("GOOGLE_APPLICATION_CREDENTIALS", &adc)]),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("signing in with google-id failed:"), "{e}");
    assert!(e.contains("\"external_account\""), "{e}");
    one_line(&e);

    // IAM refuses to let the caller impersonate the account.
    let user = dir.path().join("user.json");
    std::fs::write(&user, authorized_user(&emu)).unwrap();
    let user = user.display().to_string();
    let e = connect(
        &host(&emu),
        &[
            ("DATABRICKS_GOOGLE_SERVICE_ACCOUNT", "someone@example.com"),
            ("GOOGLE_IAM_CREDENTIALS_CUSTOM_ENDPOINT", &iam),
            ("GOOGLE_APPLICATION_CREDENTIALS", &user),
        ],
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("signing in with google-id failed:"), "{e}");
    assert!(e.contains("HTTP 403"), "{e}");
    assert!(
        e.contains("Permission 'iam.serviceAccounts.getOpenIdToken' denied"),
        "{e}"
    );
    assert!(e.contains("someone@example.com"), "{e}");
    one_line(&e);

    // An IAM endpoint in clear text elsewhere than loopback.
    let e = connect(
        &host(&emu),
        &[
            ("DATABRICKS_GOOGLE_SERVICE_ACCOUNT", SA),
            (
                "GOOGLE_IAM_CREDENTIALS_CUSTOM_ENDPOINT",
                "http://iam.example.com",
            ),
            ("GOOGLE_APPLICATION_CREDENTIALS", &user),
        ],
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("GOOGLE_IAM_CREDENTIALS_CUSTOM_ENDPOINT"), "{e}");
}

#[tokio::test]
async fn a_pinned_method_without_its_attribute_says_which() {
    let emu = emulator().await;
    let pinned = |t: &str| Settings {
        auth_type: Some(t.into()),
        ..host(&emu)
    };
    let e = connect(&pinned("google-credentials"), &[])
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Incomplete(_)), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("google_credentials (GOOGLE_CREDENTIALS)"), "{e}");
    let e = connect(&pinned("google-id"), &[]).await.unwrap_err();
    assert!(matches!(e, ClientError::Incomplete(_)), "{e:?}");
    assert!(
        e.to_string()
            .contains("google_service_account (DATABRICKS_GOOGLE_SERVICE_ACCOUNT)"),
        "{e}"
    );

    // A Google attribute and a token: two methods, as the SDK says.
    let e = connect(
        &Settings {
            token: Some("dapi-x".into()),
            ..host(&emu)
        },
        &[("GOOGLE_CREDENTIALS", "{}")],
    )
    .await
    .unwrap_err();
    assert!(matches!(e, ClientError::Ambiguous { .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("google and pat"), "{e}");
    assert!(
        e.contains("google_credentials from env GOOGLE_CREDENTIALS"),
        "{e}"
    );
    assert!(!e.contains("{}"), "{e}");
}

#[test]
fn settings_debug_hides_google_credentials() {
    let s = Settings {
        google_credentials: Some(format!(r#"{{"private_key": "{}"}}"#, key_fragment())),
        google_service_account: Some(SA.into()),
        ..Settings::default()
    };
    let d = format!("{s:?}");
    assert!(!d.contains(&key_fragment()), "{d}");
    assert!(
        d.contains("google_credentials: Some(\"[REDACTED]\")"),
        "{d}"
    );
    assert!(d.contains(SA), "{d}");
}
