//! The runners' shell: bash, with the stand-ins first on PATH (`gh`, and `pip` and `apt-get`
//! recording what they were asked to install), then the brickform built here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub struct Tools {
    dir: tempfile::TempDir,
    /// Where `pip` and `apt-get` write what they were asked to install (FAKE_INSTALL_LOG).
    pub log: PathBuf,
}

impl Tools {
    pub fn new() -> Tools {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let log = dir.path().join("installs.log");
        let script = |name: &str, text: &str| {
            use std::os::unix::fs::PermissionsExt;
            let p = bin.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        script("gh", crate::gh::STAND_IN);
        for tool in ["pip", "apt-get"] {
            script(
                tool,
                &format!("#!/usr/bin/env bash\necho \"{tool} $*\" >> \"$FAKE_INSTALL_LOG\"\n"),
            );
        }
        std::os::unix::fs::symlink(crate::common::bin(), bin.join("brickform")).unwrap();
        Tools { dir, log }
    }

    /// PATH: `extra`, then the stand-ins, then this process's PATH.
    pub fn path(&self, extra: &[PathBuf]) -> String {
        let mut parts: Vec<String> = extra.iter().map(|p| p.display().to_string()).collect();
        parts.push(self.dir.path().join("bin").display().to_string());
        parts.push(std::env::var("PATH").unwrap_or_default());
        parts.join(":")
    }

    /// What the stand-ins were asked to install, one line each, since the last call.
    pub fn installs(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let _ = std::fs::remove_file(&self.log);
        text.lines().map(str::to_string).collect()
    }
}

/// Environment variables from `(name, value)` pairs.
pub fn vars<'a>(pairs: impl IntoIterator<Item = (&'a str, String)>) -> BTreeMap<String, String> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Runs `script` with `bash ARGS` in `dir` with only `env`, for at most two minutes: the
/// script written to `file`, its output to `out` (no pipe to fill). Whether it succeeded,
/// and its output.
pub fn bash(
    args: &[&str],
    script: &str,
    file: &Path,
    dir: &Path,
    env: &BTreeMap<String, String>,
    out: &Path,
) -> (bool, String) {
    std::fs::write(file, script).unwrap();
    let log = std::fs::File::create(out).unwrap();
    let mut child = std::process::Command::new("bash")
        .args(args)
        .arg(file)
        .current_dir(dir)
        .env_clear()
        .envs(env)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("bash");
    let deadline = Instant::now() + Duration::from_secs(120);
    let ok = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.success();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} ran for more than two minutes", file.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (ok, std::fs::read_to_string(out).unwrap())
}
