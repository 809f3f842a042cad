//! Terraform habits that brickform meets differently: a single-dash option brickform does
//! not have (`-lock=false`) is refused naming it in full, with what to do instead, rather
//! than clap's reading of it as a cluster of short flags (`unexpected argument '-l'`).

use std::collections::BTreeSet;
use std::ffi::OsString;

/// What brickform offers instead of a Terraform option it does not have.
const INSTEAD: &[(&str, &str)] = &[
    (
        "lock",
        "brickform always takes the state lock; --lock-timeout DURATION waits for a lock another run holds, and `force-unlock ID` removes a stale one",
    ),
    (
        "state",
        "the state is chosen by the configuration's backend and --env; `state pull`/`state push` move a copy",
    ),
    (
        "state-out",
        "the state is chosen by the configuration's backend and --env; `state pull`/`state push` move a copy",
    ),
    (
        "backup",
        "brickform keeps its own write-ahead log beside the state; there is no backup file to name",
    ),
    (
        "compact-warnings",
        "warnings are always shown once, each with where it comes from",
    ),
    (
        "upgrade",
        "brickform has no plugins to upgrade: `init` only prepares the directory",
    ),
];

/// The first word of `args` (after the program name) that is a single-dash option of more
/// than one letter that brickform does not have, with the message that refuses it. Words
/// after `--`, values (`-1`), a short flag with its value attached (`-eprod`, `-Cdir`) and
/// everything `terraform_style_args` rewrites are left to the parser.
pub fn unknown_single_dash(
    args: &[OsString],
    long: &BTreeSet<String>,
    short: &BTreeSet<char>,
) -> Option<String> {
    for a in args.iter().skip(1) {
        let s = a.to_str()?;
        if s == "--" {
            return None;
        }
        let Some(rest) = s.strip_prefix('-') else {
            continue;
        };
        let name = rest.split('=').next().unwrap_or("");
        let Some(first) = name.chars().next() else {
            continue;
        };
        if rest.starts_with('-')
            || name.chars().count() < 2
            || short.contains(&first)
            || !name.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            || long.contains(name)
        {
            continue;
        }
        let mut message = format!("unknown option '{s}': brickform has no --{name}");
        if let Some((_, instead)) = INSTEAD.iter().find(|(n, _)| *n == name) {
            message.push_str(&format!(" ({instead})"));
        }
        return Some(message);
    }
    None
}

/// The short flags of the command line, in every subcommand.
pub fn short_options(cmd: &clap::Command) -> BTreeSet<char> {
    fn collect(cmd: &clap::Command, into: &mut BTreeSet<char>) {
        for arg in cmd.get_arguments() {
            into.extend(arg.get_short_and_visible_aliases().into_iter().flatten());
        }
        for sub in cmd.get_subcommands() {
            collect(sub, into);
        }
    }
    let mut cmd = cmd.clone();
    cmd.build();
    let mut into = BTreeSet::new();
    collect(&cmd, &mut into);
    into
}

/// `brickform workspace …`: Terraform's workspaces are brickform's environments.
#[derive(clap::Args)]
pub struct WorkspaceArgs {
    /// What Terraform's workspace command would do (list, select, new, show, delete).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    words: Vec<String>,
}

/// Explains the equivalent and fails: nothing is selected or made, so a script that
/// relied on it stops here instead of applying to the wrong state.
pub fn workspace(a: &WorkspaceArgs) -> String {
    let name = a.words.get(1).map(String::as_str).unwrap_or("NAME");
    let what = match a.words.first().map(String::as_str) {
        Some("list") => "`brickform env list` lists the environments".to_string(),
        Some("select") => format!(
            "an environment is chosen per command, not selected once: `brickform --env {name} plan` (or BRICKFORM_ENV={name})"
        ),
        Some("new") => format!(
            "`brickform env new {name}` makes an environment's empty state, or declare `environment \"{name}\" {{ … }}` in the configuration"
        ),
        Some("show") => {
            "the environment is the one --env or BRICKFORM_ENV names (`default` without either)"
                .to_string()
        }
        Some("delete") => format!(
            "destroy what it manages with `brickform --env {name} destroy`, then remove its state file under .brickform/state/"
        ),
        _ => "`brickform env list`, `env new NAME`, and --env NAME on each command".to_string(),
    };
    format!("brickform has no workspaces: environments play their part. Here, {what}.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(words: &[&str]) -> Option<String> {
        let long: BTreeSet<String> = ["out", "var", "lock-timeout", "input"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let short: BTreeSet<char> = ['C', 'e', 'h', 'V'].into_iter().collect();
        let args: Vec<OsString> = words.iter().map(OsString::from).collect();
        unknown_single_dash(&args, &long, &short)
    }

    #[test]
    fn an_unknown_single_dash_option_is_named_in_full() {
        let m = refused(&["brickform", "plan", "-lock=false"]).unwrap();
        assert!(
            m.starts_with("unknown option '-lock=false': brickform has no --lock (brickform always takes the state lock"),
            "{m}"
        );
        let m = refused(&["brickform", "apply", "-no-such"]).unwrap();
        assert_eq!(m, "unknown option '-no-such': brickform has no --no-such");
    }

    #[test]
    fn what_the_parser_reads_is_left_to_it() {
        for words in [
            &["brickform", "plan", "-out=p"][..],
            &["brickform", "plan", "-lock-timeout=5m"],
            &["brickform", "-eprod", "plan"],
            &["brickform", "-Cdir", "plan"],
            &["brickform", "plan", "--var", "x=-1"],
            &["brickform", "plan", "-1"],
            &["brickform", "fmt", "-"],
            &["brickform", "run", "x", "--", "-lock"],
            &["brickform", "plan", "-X"],
        ] {
            assert_eq!(refused(words), None, "{words:?}");
        }
    }

    #[test]
    fn workspace_commands_name_the_environment_equivalent() {
        let say = |words: &[&str]| {
            workspace(&WorkspaceArgs {
                words: words.iter().map(|s| s.to_string()).collect(),
            })
        };
        assert!(say(&["select", "prod"]).contains("brickform --env prod plan"));
        assert!(say(&["new", "dev"]).contains("brickform env new dev"));
        assert!(say(&["list"]).contains("brickform env list"));
        assert!(say(&[]).starts_with("brickform has no workspaces"));
    }
}
