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

/// `program args…` ready to start in `dir` (the current directory when `None`), without
/// the environment variables `hidden` names, its output captured.
fn command(
    program: &Path,
    args: &[String],
    dir: Option<&Path>,
    hidden: &(dyn Fn(&str) -> bool + Sync),
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // A group of its own, so what it starts is stopped with it ([`stop_group`]).
    #[cfg(unix)]
    command.process_group(0);
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
    command
}

/// Stops every process left in the group the program led (see [`command`]): what it started
/// in the background and did not wait for, once it has finished or run out of time.
fn stop_group(leader: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = leader
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        // Nothing left to stop is no error.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = leader;
}

/// How long output is still read once the program has exited: what it printed last, not
/// what something it left in the background keeps printing.
const DRAIN: Duration = Duration::from_millis(500);

fn exit_status(status: std::process::ExitStatus) -> String {
    status
        .code()
        .map_or_else(|| "was stopped".to_string(), |c| format!("exited with {c}"))
}

/// Runs `program args…` (see [`command`]) for at most `timeout`, keeping what it prints.
pub(crate) async fn run(
    program: &Path,
    args: &[String],
    dir: Option<&Path>,
    hidden: &(dyn Fn(&str) -> bool + Sync),
    timeout: Duration,
) -> Result<Ran, Failed> {
    let failed = |status: String| Failed {
        status,
        stderr: Vec::new(),
    };
    let child = command(program, args, dir, hidden)
        .spawn()
        .map_err(|e| failed(format!("cannot run it: {e}")))?;
    let leader = child.id();
    let out = tokio::time::timeout(timeout, child.wait_with_output()).await;
    stop_group(leader);
    let out = match out {
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
        status: exit_status(out.status),
        stderr: out.stderr,
    })
}

/// A program run line by line that did not succeed: why, and the last lines it printed.
pub(crate) struct LinesFailed {
    pub status: String,
    pub last: Vec<String>,
}

/// How many of the lines a program printed [`run_lines`] keeps for its failure.
const KEPT_LINES: usize = 200;

/// Runs `program args…` (see [`command`]) for at most `timeout`, handing each line it
/// prints (standard output and error, as they come) to `on_line`.
pub(crate) async fn run_lines(
    program: &Path,
    args: &[String],
    dir: Option<&Path>,
    hidden: &(dyn Fn(&str) -> bool + Sync),
    timeout: Duration,
    on_line: &(dyn Fn(&str) + Sync),
) -> Result<(), LinesFailed> {
    use tokio::io::AsyncBufReadExt as _;
    let failed = |status: String, last: Vec<String>| LinesFailed { status, last };
    let mut child = command(program, args, dir, hidden)
        .spawn()
        .map_err(|e| failed(format!("cannot run it: {e}"), Vec::new()))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(failed(
            "failed: its output could not be read".into(),
            Vec::new(),
        ));
    };
    let mut last: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    let mut keep = |bytes: &[u8]| {
        let line = String::from_utf8_lossy(bytes);
        let line = line.trim_end_matches(['\r', '\n']);
        on_line(line);
        if last.len() == KEPT_LINES {
            last.pop_front();
        }
        last.push_back(line.to_string());
    };
    let leader = child.id();
    let reading = async {
        let mut out = tokio::io::BufReader::new(stdout);
        let mut err = tokio::io::BufReader::new(stderr);
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let (mut out_open, mut err_open) = (true, true);
        while out_open || err_open {
            tokio::select! {
                n = out.read_until(b'\n', &mut o), if out_open => match n {
                    Ok(0) | Err(_) => out_open = false,
                    Ok(_) => { keep(&o); o.clear(); }
                },
                n = err.read_until(b'\n', &mut e), if err_open => match n {
                    Ok(0) | Err(_) => err_open = false,
                    Ok(_) => { keep(&e); e.clear(); }
                },
            }
        }
    };
    // Finished when the program exits, not when its output closes: something it left in
    // the background may hold that open for as long as it runs.
    let run = async {
        tokio::pin!(reading);
        let (status, read_all) = tokio::select! {
            status = child.wait() => (status, false),
            () = &mut reading => (child.wait().await, true),
        };
        if !read_all {
            let _ = tokio::time::timeout(DRAIN, &mut reading).await;
        }
        status
    };
    let status = tokio::time::timeout(timeout, run).await;
    stop_group(leader);
    let status = match status {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return Err(failed(format!("failed: {e}"), last.into())),
        Err(_) => {
            return Err(failed(
                format!("did not finish within {}s", timeout.as_secs()),
                last.into(),
            ));
        }
    };
    if status.success() {
        Ok(())
    } else {
        Err(failed(exit_status(status), last.into()))
    }
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

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn alive(pid_file: &Path) -> bool {
        let pid = std::fs::read_to_string(pid_file).unwrap();
        // A process stopped but not yet reaped by init reads as a zombie.
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .is_ok_and(|stat| !stat.contains(") Z "))
    }

    async fn lines(script: &str, timeout: Duration) -> Result<(), LinesFailed> {
        let sh = PathBuf::from("/bin/sh");
        run_lines(
            &sh,
            &["-c".to_string(), script.to_string()],
            None,
            &|_| false,
            timeout,
            &|_| {},
        )
        .await
    }

    #[tokio::test]
    async fn a_program_is_done_when_it_exits_and_what_it_left_running_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; echo built", pid.display());
        let started = std::time::Instant::now();
        assert!(lines(&script, Duration::from_secs(20)).await.is_ok());
        // Not the 30 s the background sleep holds the output open for.
        assert!(started.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(200));
        assert!(!alive(&pid), "the background sleep was stopped");
    }

    #[tokio::test]
    async fn every_line_a_program_prints_is_handed_on_and_its_failure_kept() {
        let sh = PathBuf::from("/bin/sh");
        for _ in 0..20 {
            let seen = std::sync::Mutex::new(Vec::new());
            let done = run_lines(
                &sh,
                &[
                    "-c".to_string(),
                    "echo one; echo two >&2; echo three".to_string(),
                ],
                None,
                &|_| false,
                Duration::from_secs(20),
                &|l| seen.lock().unwrap().push(l.to_string()),
            )
            .await;
            assert!(done.is_ok());
            let mut seen = seen.into_inner().unwrap();
            seen.sort();
            assert_eq!(seen, ["one", "three", "two"]);
        }
        let err = lines("echo last words; exit 3", Duration::from_secs(20))
            .await
            .err()
            .unwrap();
        assert_eq!(err.status, "exited with 3");
        assert_eq!(err.last, ["last words"]);
    }

    #[tokio::test]
    async fn a_program_out_of_time_is_stopped_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("pid");
        let script = format!("sleep 45 & echo $! > {}; sleep 45", pid.display());
        let err = lines(&script, Duration::from_secs(1)).await.err().unwrap();
        assert_eq!(err.status, "did not finish within 1s");
        std::thread::sleep(Duration::from_millis(200));
        assert!(!alive(&pid), "the background sleep was stopped");
    }
}
