//! `brickform completion SHELL`: each script loads in its shell and completes brickform's
//! own commands and flags. bash, zsh and fish are run (CI installs zsh and fish from
//! Debian packages); PowerShell is not packaged for Debian, so its script is checked for
//! the registration it makes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::Command;

/// Runs `script` in `shell` with BF set to the brickform binary; its stdout.
fn in_shell(shell: &str, args: &[&str], script: &str) -> String {
    let out = Command::new(shell)
        .args(args)
        .arg(script)
        .env("BF", common::bin())
        .output()
        .unwrap_or_else(|e| panic!("{shell} is needed for this test: {e}"));
    let (stdout, stderr) = common::texts(&out);
    assert!(out.status.success(), "{shell}: {stdout}\n{stderr}");
    stdout
}

#[test]
fn bash_completes_commands_and_flags() {
    let words = in_shell(
        "bash",
        &["-c"],
        r#"source <("$BF" completion bash)
complete -p brickform
COMP_WORDS=(brickform pla); COMP_CWORD=1; _brickform brickform pla brickform
echo "commands: ${COMPREPLY[*]}"
COMP_WORDS=(brickform plan --detailed); COMP_CWORD=2; _brickform brickform --detailed plan
echo "flags: ${COMPREPLY[*]}""#,
    );
    assert!(words.contains("-F _brickform"), "{words}");
    assert!(words.contains("commands: plan"), "{words}");
    assert!(words.contains("flags: --detailed-exitcode"), "{words}");
}

#[test]
fn zsh_registers_its_completion_function() {
    let out = in_shell(
        "zsh",
        &["-f", "-c"],
        r#"autoload -U compinit && compinit -u -D
source <("$BF" completion zsh)
print "registered: ${_comps[brickform]}"
whence -w _brickform"#,
    );
    assert!(out.contains("registered: _brickform"), "{out}");
    assert!(out.contains("_brickform: function"), "{out}");
}

#[test]
fn fish_completes_commands_and_flags() {
    let out = in_shell(
        "fish",
        &["--no-config", "-c"],
        r#""$BF" completion fish | source
complete -C 'brickform pla'
complete -C 'brickform plan --detailed'"#,
    );
    assert!(out.contains("plan\tShow what apply would change"), "{out}");
    assert!(out.contains("--detailed-exitcode"), "{out}");
}

#[test]
fn powershell_script_registers_a_completer_for_brickform() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_ok(dir.path(), &["completion", "powershell"], &[]);
    assert!(
        out.contains("Register-ArgumentCompleter -Native -CommandName 'brickform'"),
        "{out}"
    );
    assert!(out.contains("'brickform;plan'"), "{out}");
}

#[test]
fn an_unknown_shell_is_refused_naming_the_ones_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = common::run(dir.path(), &["completion", "tcsh"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("invalid value 'tcsh'") && err.contains("bash, zsh, fish, powershell"),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");
}

#[test]
fn the_version_names_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_ok(dir.path(), &["--version"], &[]);
    let line = out.trim();
    assert!(
        line.starts_with(&format!("brickform {} (", env!("CARGO_PKG_VERSION"))),
        "{line}"
    );
    let commit = line
        .rsplit_once("(commit ")
        .map(|(_, c)| c.trim_end_matches(')'))
        .unwrap_or_else(|| panic!("no commit in {line}"));
    assert!(
        commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit()),
        "{line}"
    );
}
