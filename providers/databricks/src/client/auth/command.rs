//! Running a sign-in tool (`databricks auth token`, `az account get-access-token`) and reading
//! the JSON it prints. Its output holds a token: it is never logged or shown, only its errors.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// A tool that does not answer in this long is treated as broken (a prompt waiting for input
/// that never comes, say), not waited on forever.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The first `name` on `path` (a `PATH` value) that is a file, as the shell would pick it. A
/// name with a slash is taken as it is.
pub(crate) fn find_executable(name: &str, path: Option<&str>) -> Option<PathBuf> {
    if name.contains('/') || name.contains(std::path::MAIN_SEPARATOR) {
        let p = PathBuf::from(name);
        return p.is_file().then_some(p);
    }
    let path = path?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Runs `program args…` without a shell and parses what it prints on standard output as
/// JSON. A failure says what was run (the arguments name a profile or a resource, never a
/// secret) and what the tool wrote on standard error; standard output is never repeated,
/// since it may hold a token.
pub(crate) async fn run_json(program: &Path, args: &[String]) -> Result<serde_json::Value, String> {
    let shown = format!(
        "`{} {}`",
        program.file_name().map_or_else(
            || program.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        ),
        args.join(" ")
    );
    let child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let out = match tokio::time::timeout(TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(format!("{shown} failed: {e}")),
        Err(_) => {
            return Err(format!(
                "{shown} did not finish within {}s",
                TIMEOUT.as_secs()
            ));
        }
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said = last_lines(&stderr, 6);
        let status = out
            .status
            .code()
            .map_or_else(|| "was stopped".to_string(), |c| format!("exited with {c}"));
        return Err(if said.is_empty() {
            format!("{shown} {status}")
        } else {
            format!("{shown} {status}: {said}")
        });
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("{shown} printed something that is not JSON ({e})"))
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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
            .unwrap_err();
        assert!(
            e.contains("`bad auth token` exited with 3: not logged in"),
            "{e}"
        );
        assert!(!e.contains("SECRET"), "{e}");
        let garbage = script(dir.path(), "garbage", "echo SECRET-TOKEN");
        let e = run_json(&garbage, &[]).await.unwrap_err();
        assert!(e.contains("not JSON") && !e.contains("SECRET"), "{e}");
        let e = run_json(&dir.path().join("missing"), &[])
            .await
            .unwrap_err();
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
