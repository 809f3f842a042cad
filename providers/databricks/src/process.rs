//! Running a local program without a shell: the sign-in tools (`databricks auth token`,
//! `az`) and the build commands of `databricks_artifact`. Standard input is closed (a
//! program waiting for an answer would wait forever), what the program prints is captured,
//! and a program that does not finish in time is killed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

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

/// What a program that succeeded printed on standard output.
pub(crate) struct Ran {
    pub stdout: Vec<u8>,
}

/// A program that ran and did not succeed.
pub(crate) struct Failed {
    /// "exited with 3", "was stopped", "did not finish within 120s", "cannot run it: …".
    pub status: String,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// How a command is shown in messages: the program's file name and its arguments.
pub(crate) fn shown(program: &Path, args: &[String]) -> String {
    let name = program.file_name().map_or_else(
        || program.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if args.is_empty() {
        format!("`{name}`")
    } else {
        format!("`{name} {}`", args.join(" "))
    }
}

/// Runs `program args…` in `dir` (the current directory when `None`), without the
/// environment variables `hidden` names, for at most `timeout`.
pub(crate) async fn run(
    program: &Path,
    args: &[String],
    dir: Option<&Path>,
    hidden: &(dyn Fn(&str) -> bool + Sync),
    timeout: Duration,
) -> Result<Ran, Failed> {
    let failed = |status: String| Failed {
        status,
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    for (name, _) in std::env::vars_os() {
        if let Some(name) = name.to_str()
            && hidden(name)
        {
            command.env_remove(name);
        }
    }
    let child = command
        .spawn()
        .map_err(|e| failed(format!("cannot run it: {e}")))?;
    let out = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(failed(format!("failed: {e}"))),
        Err(_) => {
            return Err(failed(format!(
                "did not finish within {}s",
                timeout.as_secs()
            )));
        }
    };
    if out.status.success() {
        return Ok(Ran { stdout: out.stdout });
    }
    Err(Failed {
        status: out
            .status
            .code()
            .map_or_else(|| "was stopped".to_string(), |c| format!("exited with {c}")),
        stdout: out.stdout,
        stderr: out.stderr,
    })
}

/// The last `n` lines of `text` that hold something, joined by `sep`.
pub(crate) fn last_lines(text: &[u8], n: usize, sep: &str) -> String {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(sep)
}
