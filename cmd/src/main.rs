//! The `brickform` command.

mod auth;
mod backend;
mod diag;
mod flows;
mod local;
mod ops;
mod promote;
mod run;
mod saved;
mod schema;
mod volume_store;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "brickform",
    version,
    about = "Manage a Databricks lakehouse as code"
)]
pub struct Cli {
    /// Configuration directory (all *.bf.hcl files in it are one configuration). The command
    /// runs there: relative paths given to it are relative to DIR.
    #[arg(short = 'C', long = "chdir", global = true, default_value = ".")]
    pub dir: PathBuf,
    /// Environment (selects the state and an `environment` block).
    #[arg(short = 'e', long = "env", global = true, env = "BRICKFORM_ENV")]
    pub environment: Option<String>,
    /// Disable colours.
    #[arg(long = "no-color", global = true)]
    pub no_color: bool,
    /// Run against the local workspace kept in .brickform/local (no account needed).
    #[arg(long = "local", global = true)]
    pub local: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone, Default)]
pub struct VarArgs {
    /// Set a variable: --var name=value (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Read variables from an HCL file (repeatable).
    #[arg(long = "var-file", value_name = "FILE")]
    pub var_files: Vec<PathBuf>,
    /// Never prompt for missing variables.
    #[arg(long = "input", default_value_t = true, action = clap::ArgAction::Set)]
    pub input: bool,
}

#[derive(Args, Clone, Default)]
pub struct PlanArgs {
    #[command(flatten)]
    pub vars: VarArgs,
    /// Only these resources (and what they depend on). Repeatable.
    #[arg(long = "target", value_name = "ADDR")]
    pub targets: Vec<String>,
    /// Replace these resources even if nothing changed. Repeatable.
    #[arg(long = "replace", value_name = "ADDR")]
    pub replace: Vec<String>,
    /// Read live objects first (default true).
    #[arg(long = "refresh", default_value_t = true, action = clap::ArgAction::Set)]
    pub refresh: bool,
    /// Only update state to match live objects.
    #[arg(long = "refresh-only")]
    pub refresh_only: bool,
    /// Plan to destroy everything.
    #[arg(long = "destroy")]
    pub destroy: bool,
    /// Concurrent operations.
    #[arg(long = "parallelism", default_value_t = 10)]
    pub parallelism: usize,
    /// Let an environment with protect = true delete or replace catalogs, schemas, volumes
    /// and pipelines.
    #[arg(long = "allow-destroy")]
    pub allow_destroy: bool,
    /// Wait this long for the state lock (e.g. 30s).
    #[arg(long = "lock-timeout", default_value = "0s")]
    pub lock_timeout: String,
}

#[derive(Subcommand)]
enum Command {
    /// Prepare a configuration directory (state folder, check the configuration loads).
    Init,
    /// Check the configuration without any network access.
    Validate {
        #[command(flatten)]
        vars: VarArgs,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Rewrite configuration files in canonical format.
    Fmt {
        /// Only check; exit 3 when files need formatting.
        #[arg(long)]
        check: bool,
    },
    /// Show what apply would change.
    Plan {
        #[command(flatten)]
        args: PlanArgs,
        /// Save the plan to this file for `apply FILE`.
        #[arg(long = "out", value_name = "FILE")]
        out: Option<PathBuf>,
        /// Print the plan as JSON (see docs/plan-json.md).
        #[arg(long)]
        json: bool,
        /// Print the plan as Markdown (for pull requests).
        #[arg(long)]
        markdown: bool,
        /// Exit 0 with no changes, 2 with changes, 1 on error.
        #[arg(long = "detailed-exitcode")]
        detailed_exitcode: bool,
    },
    /// Make the changes (from a fresh plan, or a saved plan FILE).
    Apply {
        /// A plan saved with `plan -out FILE`.
        plan_file: Option<PathBuf>,
        #[command(flatten)]
        args: PlanArgs,
        /// Do not ask for confirmation.
        #[arg(long = "auto-approve")]
        auto_approve: bool,
    },
    /// Destroy everything this state manages.
    Destroy {
        #[command(flatten)]
        args: PlanArgs,
        #[arg(long = "auto-approve")]
        auto_approve: bool,
    },
    /// Show the state, or a saved plan.
    Show {
        file: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Print output values.
    Output {
        name: Option<String>,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        raw: bool,
    },
    /// Print the dependency graph (DOT, or SVG/PNG through Graphviz).
    Graph {
        #[arg(long, default_value = "dot")]
        format: String,
    },
    /// Inspect and change state.
    #[command(subcommand)]
    State(StateCommand),
    /// Environments.
    #[command(subcommand)]
    Env(EnvCommand),
    /// Remove a stale state lock by its id.
    ForceUnlock {
        id: String,
        /// Remove it even though its holder still runs on this host (two runs then write
        /// the state at once).
        #[arg(long = "even-if-running")]
        even_if_running: bool,
    },
    /// Bring an existing object under management: brickform import ADDR ID.
    Import {
        /// The resource address in the configuration, e.g. databricks_catalog.main.
        address: String,
        /// The object's id in the workspace, e.g. the catalog name.
        id: String,
        #[command(flatten)]
        vars: VarArgs,
    },
    /// Start a job run or a pipeline update and follow it to its end.
    Run(run::RunArgs),
    /// Print the schemas of every resource kind and data source (JSON, or Markdown).
    Schema {
        #[arg(long)]
        markdown: bool,
    },
    /// The local workspace: an emulator of the Databricks REST API.
    Local(local::LocalArgs),
    /// Credentials kept in the OS keyring: login, logout, status.
    Auth(auth::AuthArgs),
    /// sdp-meta flows: import an existing onboarding file as configuration.
    Flows(flows::FlowsArgs),
    /// Plan one environment from another's configuration and show where they differ.
    Promote {
        /// The environment the configuration was tried in (e.g. dev).
        #[arg(long)]
        from: String,
        /// The environment to plan (e.g. prod).
        #[arg(long)]
        to: String,
        #[command(flatten)]
        args: PlanArgs,
        /// Exit 0 with no changes, 2 with changes, 1 on error.
        #[arg(long = "detailed-exitcode")]
        detailed_exitcode: bool,
    },
}

#[derive(Subcommand)]
pub enum StateCommand {
    /// List the addresses in state.
    List,
    /// Show one resource's state.
    Show { address: String },
    /// Forget resources without destroying them.
    Rm { addresses: Vec<String> },
    /// Rename a resource in state.
    Mv { from: String, to: String },
    /// Print the state document.
    Pull,
    /// Replace the state with a document from a file (lineage must match).
    Push { file: PathBuf },
    /// Copy the state to another backend: --to local, or --to volume:/Volumes/C/S/V/DIR.
    Migrate {
        /// Where the state should go.
        #[arg(long = "to", value_name = "BACKEND")]
        to: String,
        /// Every environment the current backend holds, not only the selected one.
        #[arg(long)]
        all: bool,
        /// Wait this long for each state lock (e.g. 30s).
        #[arg(long = "lock-timeout", default_value = "0s")]
        lock_timeout: String,
    },
}

#[derive(Subcommand)]
pub enum EnvCommand {
    /// List environments (declared and with state).
    List,
}

/// Every long option of the command line, in every subcommand (global ones, flattened
/// argument groups, clap's own `--help` and `--version`): Terraform users write them with a
/// single dash (`-out=plan`, `-var x=1`). Read from clap's command tree so a new flag is
/// covered the day it is declared.
fn long_options(cmd: &clap::Command) -> std::collections::BTreeSet<String> {
    fn collect(cmd: &clap::Command, into: &mut std::collections::BTreeSet<String>) {
        for arg in cmd.get_arguments() {
            for long in arg.get_long_and_visible_aliases().into_iter().flatten() {
                into.insert(long.to_string());
            }
        }
        for sub in cmd.get_subcommands() {
            collect(sub, into);
        }
    }
    // Building propagates global options and adds help and version, as parsing does.
    let mut cmd = cmd.clone();
    cmd.build();
    let mut into = std::collections::BTreeSet::new();
    collect(&cmd, &mut into);
    into
}

/// Rewrites `-out=x` to `--out=x` so habits carry over. Short flags (`-C`, `-e`) and words
/// that name no long option (a value `-1`) are untouched, and so is everything after `--`.
/// A one-letter long name would read as a short flag, so it is never rewritten.
fn terraform_style_args(
    args: impl Iterator<Item = std::ffi::OsString>,
    long: &std::collections::BTreeSet<String>,
) -> Vec<std::ffi::OsString> {
    let mut rest_is_positional = false;
    args.map(|a| {
        let Some(s) = a.to_str() else { return a };
        if rest_is_positional {
            return a;
        }
        if s == "--" {
            rest_is_positional = true;
            return a;
        }
        if let Some(rest) = s.strip_prefix('-')
            && !rest.starts_with('-')
            && let Some(name) = rest.split('=').next()
            && name.chars().count() > 1
            && long.contains(name)
        {
            return format!("-{s}").into();
        }
        a
    })
    .collect()
}

/// Exit status of a command whose output pipe closed: what a shell reports for a tool ended
/// by SIGPIPE (128 + 13), as `yes | head` gives.
const BROKEN_PIPE_EXIT: i32 = 141;

/// Exit status after a panic: Rust's own for a panicking process, distinct from 1 (an error
/// in the configuration or the workspace).
const PANIC_EXIT: i32 = 101;

/// A panic ends the process at once with a one-line report and [`PANIC_EXIT`], whichever
/// thread it happens on (a runtime worker would otherwise swallow it), instead of a
/// backtrace and exit 1. A write to a closed stdout or stderr (`brickform show | head`)
/// panics inside `println!`: that ends the command quietly, as a Unix tool does.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        if is_broken_pipe_message(&message) {
            std::process::exit(BROKEN_PIPE_EXIT);
        }
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let line = message.lines().next().unwrap_or_default();
        // stderr may be the closed pipe itself: nothing else can be told then.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "Error: brickform stopped on an internal error (a bug; please report it): {line}{at}"
        );
        std::process::exit(PANIC_EXIT);
    }));
}

/// `println!`'s and `eprintln!`'s panic on a closed pipe.
fn is_broken_pipe_message(message: &str) -> bool {
    (message.starts_with("failed printing to stdout")
        || message.starts_with("failed printing to stderr"))
        && message.contains("Broken pipe")
}

/// An error that is a write to a closed pipe (a `write_all` on stdout propagated with `?`).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn main() -> ExitCode {
    install_panic_hook();
    let long = long_options(&<Cli as clap::CommandFactory>::command());
    let mut cli = Cli::parse_from(terraform_style_args(std::env::args_os(), &long));
    init_logging();
    // `-C DIR` works as Terraform's -chdir: the command runs in DIR, so every relative path
    // it is given (`-out`, a plan file, `--var-file`) is read or written there too.
    if cli.dir != std::path::Path::new(".") {
        if let Ok(start) = std::env::current_dir() {
            brickform_core::engine::world::started_in(start);
        }
        if let Err(e) = std::env::set_current_dir(&cli.dir) {
            eprintln!(
                "Error: cannot change to the configuration directory {}: {e}",
                cli.dir.display()
            );
            return ExitCode::FAILURE;
        }
        cli.dir = ".".into();
    }
    run_blocking(cli)
}

fn run_blocking(cli: Cli) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(Box::pin(run(cli)));
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::from(BROKEN_PIPE_EXIT as u8),
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging() {
    match tracing_subscriber::EnvFilter::try_from_env("BRICKFORM_LOG") {
        Ok(filter) => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .try_init();
        }
        // Without BRICKFORM_LOG only notices for the user reach the terminal (the client
        // saying it waits for a host that refuses connections), as plain lines.
        Err(_) => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new("notice=warn"))
                .with_writer(std::io::stderr)
                .without_time()
                .with_target(false)
                .with_level(false)
                .try_init();
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // A deliberate panic inside the runtime, so the end-to-end tests see what any panic
    // looks like to a user (tests/tests/limits.rs).
    if std::env::var_os("BRICKFORM_TEST_PANIC").is_some() {
        panic!("BRICKFORM_TEST_PANIC is set");
    }
    let ctx = ops::Ctx::new(&cli);
    match cli.command {
        Command::Init => ops::init(&ctx).await,
        Command::Validate { vars, json } => ops::validate(&ctx, &vars, json).await,
        Command::Fmt { check } => ops::fmt(&ctx, check),
        Command::Plan {
            args,
            out,
            json,
            markdown,
            detailed_exitcode,
        } => ops::plan(&ctx, &args, out, json, markdown, detailed_exitcode).await,
        Command::Apply {
            plan_file,
            args,
            auto_approve,
        } => ops::apply(&ctx, &args, plan_file, auto_approve, false).await,
        Command::Destroy { args, auto_approve } => {
            ops::apply(&ctx, &args, None, auto_approve, true).await
        }
        Command::Show { file, json } => ops::show(&ctx, file, json).await,
        Command::Output { name, json, raw } => ops::output(&ctx, name, json, raw).await,
        Command::Graph { format } => ops::graph(&ctx, &format),
        Command::State(StateCommand::Migrate {
            to,
            all,
            lock_timeout,
        }) => backend::migrate(&ctx, &to, all, &lock_timeout).await,
        Command::State(c) => ops::state(&ctx, c).await,
        Command::Env(EnvCommand::List) => ops::env_list(&ctx).await,
        Command::ForceUnlock {
            id,
            even_if_running,
        } => ops::force_unlock(&ctx, &id, even_if_running).await,
        Command::Import { address, id, vars } => ops::import(&ctx, &address, &id, &vars).await,
        Command::Run(args) => run::run(&ctx, args).await,
        Command::Schema { markdown } => schema::run(&ops::registry(), markdown),
        Command::Local(args) => local::run(&ctx, args).await,
        Command::Auth(args) => auth::run(args).await,
        Command::Flows(args) => flows::run(args),
        Command::Promote {
            from,
            to,
            args,
            detailed_exitcode,
        } => promote::run(&ctx, &args, &from, &to, detailed_exitcode).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn rewrite(args: &[&str]) -> Vec<String> {
        terraform_style_args(
            args.iter().map(std::ffi::OsString::from),
            &long_options(&Cli::command()),
        )
        .into_iter()
        .map(|a| a.into_string().unwrap())
        .collect()
    }

    #[test]
    fn single_dash_long_options_are_accepted() {
        let got = rewrite(&[
            "brickform",
            "plan",
            "-out=p.plan",
            "-var",
            "x=1",
            "-C",
            "dir",
            "-detailed-exitcode",
        ]);
        assert_eq!(
            got,
            [
                "brickform",
                "plan",
                "--out=p.plan",
                "--var",
                "x=1",
                "-C",
                "dir",
                "--detailed-exitcode"
            ]
        );
        let cli = Cli::try_parse_from(rewrite(&["brickform", "plan", "-out=p.plan"])).unwrap();
        assert!(
            matches!(cli.command, Command::Plan { out: Some(ref p), .. } if p.to_str() == Some("p.plan"))
        );
    }

    /// Every subcommand (by its path from the root) with the command it names.
    fn subcommands(
        cmd: &clap::Command,
        path: Vec<String>,
        into: &mut Vec<(Vec<String>, clap::Command)>,
    ) {
        into.push((path.clone(), cmd.clone()));
        for sub in cmd.get_subcommands() {
            // clap's own `help` subcommand takes subcommand names, not options.
            if sub.get_name() == "help" {
                continue;
            }
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            subcommands(sub, p, into);
        }
    }

    #[test]
    fn every_long_option_of_every_subcommand_is_accepted_with_one_dash() {
        let mut root = Cli::command();
        root.build();
        let mut all = Vec::new();
        subcommands(&root, Vec::new(), &mut all);
        let mut checked = 0;
        for (path, cmd) in &all {
            for arg in cmd.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                let word = if arg.get_action().takes_values() {
                    format!("-{long}=1")
                } else {
                    format!("-{long}")
                };
                let mut argv = vec!["brickform".to_string()];
                argv.extend(path.iter().cloned());
                argv.push(word.clone());
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                let got = rewrite(&argv);
                assert_eq!(
                    got.last().map(String::as_str),
                    Some(format!("-{word}").as_str()),
                    "{word} in `{}` is not rewritten",
                    path.join(" ")
                );
                // The value may be refused and a positional may be missing; the option
                // itself must be known.
                if let Err(e) = Cli::try_parse_from(&got) {
                    assert_ne!(
                        e.kind(),
                        clap::error::ErrorKind::UnknownArgument,
                        "{word} in `{}`: {e}",
                        path.join(" ")
                    );
                }
                checked += 1;
            }
        }
        // The flags the hand-written list used to miss are among them.
        let long = long_options(&Cli::command());
        for name in [
            "full-refresh",
            "no-wait",
            "param",
            "timeout",
            "to",
            "validate-only",
        ] {
            assert!(long.contains(name), "{name}");
        }
        assert!(checked > 50, "only {checked} options checked");
    }

    #[test]
    fn single_dash_words_that_name_no_option_are_left_alone() {
        let argv = [
            "brickform",
            "plan",
            "--var",
            "-1",
            "-5",
            "-e",
            "dev",
            "-nonesuch",
            "--",
            "-json",
        ];
        assert_eq!(rewrite(&argv), argv);
    }
}
