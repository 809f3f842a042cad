//! Argument groups several commands share: variables, and what a plan is asked for.

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Clone, Default)]
pub struct VarArgs {
    /// Set a variable: --var name=value (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Read variables from an HCL file (repeatable).
    #[arg(long = "var-file", value_name = "FILE")]
    pub var_files: Vec<PathBuf>,
    /// Ask on the terminal for variables that have no value (default true); --input=false
    /// fails naming them instead, as a CI job should.
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
    /// Calls to the service in flight at once.
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

impl PlanArgs {
    /// What the engine is asked to plan; `destroy` for the destroy command.
    pub fn request(&self, destroy: bool) -> brickform_core::engine::PlanRequest {
        use brickform_core::plan::PlanMode;
        brickform_core::engine::PlanRequest {
            mode: if destroy || self.destroy {
                PlanMode::Destroy
            } else if self.refresh_only {
                PlanMode::RefreshOnly
            } else {
                PlanMode::Normal
            },
            refresh: self.refresh,
            targets: self.targets.clone(),
            replace: self.replace.clone(),
            parallelism: self.parallelism,
            allow_destroy: self.allow_destroy,
            in_turn_only: false,
        }
    }
}
