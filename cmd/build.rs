//! Stamps the binary with the commit it was built from, for `brickform --version`: the
//! `BRICKFORM_COMMIT` environment variable when a packager sets it (a build from a source
//! archive has no repository), else `git rev-parse` of the checkout, else "unknown commit".

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=BRICKFORM_COMMIT");
    let commit = match std::env::var("BRICKFORM_COMMIT") {
        Ok(c) if !c.trim().is_empty() => format!("commit {}", c.trim()),
        _ => {
            // Rebuilt when HEAD moves: the HEAD file, and the branch file it names.
            if let Some(head) = git(&["rev-parse", "--git-path", "HEAD"]) {
                println!("cargo:rerun-if-changed={head}");
            }
            if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
                && let Some(file) = git(&["rev-parse", "--git-path", &branch])
            {
                println!("cargo:rerun-if-changed={file}");
            }
            git(&["rev-parse", "--short=12", "HEAD"])
                .map(|c| format!("commit {c}"))
                .unwrap_or_else(|| "unknown commit".to_string())
        }
    };
    println!("cargo:rustc-env=BRICKFORM_COMMIT={commit}");
}
