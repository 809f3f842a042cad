//! Helpers shared by the end-to-end tests: the `brickform` binary and scratch configurations.
#![allow(dead_code)] // each test crate uses a different subset

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The `brickform` binary of this workspace, built once per test process.
///
/// `cargo test -p brickform-tests` does not build other packages' binaries, so the first call
/// runs `cargo build -p brickform` (a no-op when it is up to date) in the same target
/// directory, then finds the binary next to this test executable. `BRICKFORM_BIN` overrides.
pub fn bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("BRICKFORM_BIN") {
            return PathBuf::from(p);
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let built = std::process::Command::new(cargo)
            .args(["build", "--quiet", "-p", "brickform", "--bin", "brickform"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .is_ok_and(|s| s.success());
        let bin = assert_cmd::cargo::cargo_bin("brickform");
        // A workspace member that does not compile right now must not hide a binary that
        // `cargo build --workspace` (the CI's first step) made; say so, and use it.
        if !built {
            eprintln!(
                "warning: `cargo build -p brickform` failed; testing the existing {}",
                bin.display()
            );
        }
        bin
    })
}

/// A command running the binary in `dir` (as `-C dir`), with no inherited `BRICKFORM_*`
/// variables and no colours, so results do not depend on the caller's environment.
pub fn brickform(dir: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(bin());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("BRICKFORM_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env("NO_COLOR", "1").arg("-C").arg(dir);
    cmd
}

/// A fresh configuration directory holding `files` (`name`, `text`).
pub fn config(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("writing a config file");
    }
    dir
}

/// Standard output and error of a finished command, as text.
pub fn texts(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
