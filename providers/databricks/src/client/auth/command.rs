//! Running a sign-in tool (`databricks auth token`, `az account get-access-token`) and reading
//! the JSON it prints. Its output holds a token: it is never logged or shown, only its errors.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::error::AuthError;

/// A tool that does not answer in this long is treated as broken (a prompt waiting for input
/// that never comes, say), not waited on forever.
const TIMEOUT: Duration = Duration::from_secs(120);

pub(crate) use crate::process::find_executable;

/// Runs `program args…` without a shell and parses what it prints on standard output as
/// JSON. A failure says what was run (the arguments name a profile or a resource, never a
/// secret) and what the tool wrote on standard error; standard output is never repeated,
/// since it may hold a token.
pub(crate) async fn run_json(
    program: &Path,
    args: &[String],
) -> Result<serde_json::Value, AuthError> {
    let shown = crate::process::shown(program, args);
    let out = crate::process::run(program, args, None, &|_| false, TIMEOUT)
        .await
        .map_err(|f| AuthError::CommandFailed {
            command: shown.clone(),
            status: f.status,
            said: crate::process::last_lines(&f.stderr, 6, " / "),
        })?;
    serde_json::from_slice(&out.stdout).map_err(|e| AuthError::CommandNotJson {
        command: shown,
        source: Arc::new(e),
    })
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[tokio::test]
    async fn output_is_json_and_failures_say_stderr_not_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let ok = script(dir.path(), "ok", r#"echo "{\"a\": \"$1\"}""#);
        let v = run_json(&ok, &["x".into()]).await.unwrap();
        assert_eq!(v["a"], "x");
        let bad = script(
            dir.path(),
            "bad",
            "echo SECRET-TOKEN; echo 'not logged in' >&2; exit 3",
        );
        let e = run_json(&bad, &["auth".into(), "token".into()])
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`bad auth token` exited with 3: not logged in"),
            "{e}"
        );
        assert!(!e.contains("SECRET"), "{e}");
        let garbage = script(dir.path(), "garbage", "echo SECRET-TOKEN");
        let e = run_json(&garbage, &[]).await.unwrap_err().to_string();
        assert!(e.contains("not JSON") && !e.contains("SECRET"), "{e}");
        let e = run_json(&dir.path().join("missing"), &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot run"), "{e}");
    }

    #[test]
    fn executables_are_found_on_the_path_given() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("databricks"), "not executable").unwrap();
        let want = script(dir.path(), "databricks", "true");
        let path = std::env::join_paths([other.path(), dir.path()]).unwrap();
        let found = find_executable("databricks", path.to_str());
        assert_eq!(found.as_deref(), Some(want.as_path()));
        assert_eq!(find_executable("databricks", None), None);
        assert_eq!(find_executable("az", path.to_str()), None);
        assert_eq!(
            find_executable(want.to_str().unwrap(), None).as_deref(),
            Some(want.as_path())
        );
    }
}
