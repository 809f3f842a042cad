//! The `brickform` command.

mod args;
mod backend;
mod commands;
mod context;
mod diag;
mod duration;
mod failure;
mod habits;
mod interrupt;
mod saved;
mod volume_store;

use clap::{Parser, Subcommand};
use commands::*;
use failure::BROKEN_PIPE_EXIT;
use std::path::PathBuf;
use std::process::ExitCode;

/// jemalloc instead of the C library's allocator. A plan decodes and compares every
/// attribute of every instance, each an allocation of its own, many times over, and frees
/// them as fast. In the jobs benchmark (200 jobs of 20 tasks, 100 pipelines;
/// `cargo bench -p brickform-databricks --bench jobs_scale`, which runs with the same
/// allocator), paired medians of 6 runs: no-op plan 1.94 → 1.36 of its bound, destroy 1.27
/// → 1.17, apply unchanged (1.33 → 1.32); the Unity Catalog benchmark unchanged or slightly
/// better. Windows keeps the system allocator: the crate does not build there.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "brickform",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("BRICKFORM_COMMIT"), ")"),
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

#[derive(Subcommand)]
enum Command {
    /// Prepare a configuration directory (state folder, check the configuration loads).
    Init(init::Args),
    /// Check the configuration without any network access.
    Validate(validate::Args),
    /// Rewrite configuration files in canonical format.
    Fmt(fmt::Args),
    /// Show what apply would change.
    Plan(plan::Args),
    /// Make the changes (from a fresh plan, or a saved plan FILE).
    Apply(apply::Args),
    /// Destroy everything this state manages.
    Destroy(destroy::Args),
    /// Show the state, or a saved plan.
    Show(show::Args),
    /// Print output values.
    Output(output::Args),
    /// Try expressions against the configuration and its state, as `terraform console`.
    ///
    /// Reads one expression a line and prints its value: at a `> ` prompt on a terminal
    /// (`exit` or Ctrl-D ends it), or from standard input otherwise (`echo 'var.env' |
    /// brickform console`), one result a line, exiting 1 when an expression failed.
    /// Everything the configuration declares can be read: var.NAME, local.NAME,
    /// TYPE.NAME.ATTR (TYPE.NAME[0], TYPE.NAME["key"]), data.TYPE.NAME.ATTR,
    /// module.NAME.OUTPUT, path.module, path.root, path.cwd, brickform.environment, and
    /// every function. Resources hold what the state recorded at the last apply: what it
    /// does not hold yet is (known after apply). A value read from a sensitive one is
    /// printed as (sensitive value). The state is only read: no lock is taken, nothing is
    /// written, and the workspace is not contacted (unless the state is kept in a volume).
    Console(console::Args),
    /// Print the dependency graph (DOT, or SVG/PNG through Graphviz).
    Graph(graph::Args),
    /// Inspect and change state.
    #[command(subcommand)]
    State(state::Command),
    /// Environments.
    #[command(subcommand)]
    Env(env::Command),
    /// Remove a stale state lock by its id.
    ForceUnlock(force_unlock::Args),
    /// Bring an existing object under management: brickform import ADDR ID.
    Import(import::Args),
    /// Write configuration and import blocks for live objects found by a rule (a catalog,
    /// a name prefix, a tag, a creator), with references between them.
    Adopt(adopt::Args),
    /// Rewrite a Terraform configuration for the Databricks provider as brickform
    /// configuration (and adopt its Terraform state with --state).
    Convert(convert::Args),
    /// Start a job run or a pipeline update and follow it to its end; repair or cancel a job run.
    Run(run::Args),
    /// Print the schemas of every resource kind and data source (JSON, or Markdown).
    Schema(schema::Args),
    /// The local workspace: an emulator of the Databricks REST API.
    Local(local::Args),
    /// Credentials kept in the OS keyring: login, logout, status.
    Auth(auth::Args),
    /// sdp-meta flows: import an existing onboarding file as configuration.
    Flows(flows::Args),
    /// Plan one environment from another's configuration and show where they differ.
    Promote(promote::Args),
    /// Print the shell completion script for bash, zsh, fish or powershell.
    Completion(completion::Args),
    /// Terraform's workspaces: says what brickform's environments do instead.
    #[command(hide = true)]
    Workspace(habits::WorkspaceArgs),
    /// Serve the language server protocol on standard input and output, for editors.
    Lsp(lsp::Args),
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
            std::process::exit(i32::from(BROKEN_PIPE_EXIT));
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

fn main() -> ExitCode {
    install_panic_hook();
    let command = <Cli as clap::CommandFactory>::command();
    let long = long_options(&command);
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(message) =
        habits::unknown_single_dash(&args, &long, &habits::short_options(&command))
    {
        eprintln!("error: {message}\n\nFor more information, try '--help'.");
        return ExitCode::FAILURE;
    }
    // A usage error exits 1, as every other error does (and as Terraform's do): 2 is what
    // `--detailed-exitcode` says of a plan with changes, which a CI script acts on.
    let mut cli = match Cli::try_parse_from(terraform_style_args(args.into_iter(), &long)) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    if cli.no_color {
        diag::disable_color();
    }
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
        saved::changed_to(&cli.dir);
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
    match runtime.block_on(Box::pin(run(cli))) {
        Ok(code) => code,
        Err(failure) => failure.exit(),
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

async fn run(cli: Cli) -> failure::Outcome {
    // A deliberate panic inside the runtime, so the end-to-end tests see what any panic
    // looks like to a user (tests/tests/limits.rs).
    if std::env::var_os("BRICKFORM_TEST_PANIC").is_some() {
        panic!("BRICKFORM_TEST_PANIC is set");
    }
    let ctx = context::Ctx::new(&cli);
    interrupt::supervise(dispatch(ctx, cli.command)).await
}

async fn dispatch(ctx: context::Ctx, command: Command) -> failure::Outcome {
    match command {
        Command::Init(a) => init::exec(&ctx, a).await,
        Command::Validate(a) => validate::exec(&ctx, a).await,
        Command::Fmt(a) => fmt::exec(&ctx, a),
        Command::Plan(a) => plan::exec(&ctx, a).await,
        Command::Apply(a) => apply::exec(&ctx, a).await,
        Command::Destroy(a) => destroy::exec(&ctx, a).await,
        Command::Show(a) => show::exec(&ctx, a).await,
        Command::Output(a) => output::exec(&ctx, a).await,
        Command::Console(a) => console::exec(&ctx, a).await,
        Command::Graph(a) => graph::exec(&ctx, a).await,
        Command::State(c) => state::exec(&ctx, c).await,
        Command::Env(c) => env::exec(&ctx, c).await,
        Command::ForceUnlock(a) => force_unlock::exec(&ctx, a).await,
        Command::Import(a) => import::exec(&ctx, a).await,
        Command::Convert(a) => convert::exec(&ctx, a).await,
        Command::Adopt(a) => adopt::exec(&ctx, a).await,
        Command::Run(a) => run::exec(&ctx, a).await,
        Command::Schema(a) => schema::exec(a),
        Command::Local(a) => local::exec(&ctx, a).await,
        Command::Auth(a) => auth::exec(a).await,
        Command::Flows(a) => flows::exec(a),
        Command::Promote(a) => promote::exec(&ctx, a).await,
        Command::Completion(a) => completion::exec(a, <Cli as clap::CommandFactory>::command()),
        Command::Workspace(a) => {
            eprintln!("Error: {}", habits::workspace(&a));
            Err(failure::Failure::reported())
        }
        Command::Lsp(a) => lsp::exec(&ctx, a).await,
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
            matches!(cli.command, Command::Plan(ref a) if a.out.as_deref().and_then(|p| p.to_str()) == Some("p.plan"))
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
