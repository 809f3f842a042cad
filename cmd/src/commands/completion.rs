//! `brickform completion SHELL`: the completion script for a shell, printed for the user to
//! load (`source <(brickform completion bash)`) or install where the shell looks.

use crate::failure::Outcome;
use clap_complete::Shell;
use std::io::Write as _;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "Load it in the running shell or install it:
  bash:       source <(brickform completion bash)   (or write it to ~/.local/share/bash-completion/completions/brickform)
  zsh:        brickform completion zsh > \"${fpath[1]}/_brickform\"   (then restart zsh)
  fish:       brickform completion fish > ~/.config/fish/completions/brickform.fish
  powershell: brickform completion powershell | Out-String | Invoke-Expression")]
pub struct Args {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: Completable,
}

/// The shells a script is written for (clap_complete has more; these are the ones the
/// project tests or documents).
#[derive(Clone, Copy, clap::ValueEnum)]
enum Completable {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

impl From<Completable> for Shell {
    fn from(c: Completable) -> Shell {
        match c {
            Completable::Bash => Shell::Bash,
            Completable::Zsh => Shell::Zsh,
            Completable::Fish => Shell::Fish,
            Completable::Powershell => Shell::PowerShell,
        }
    }
}

/// Written whole and then printed: the generator panics on a failed write, and a closed
/// pipe (`brickform completion bash | head`) must end the command quietly instead.
pub fn exec(a: Args, mut cmd: clap::Command) -> Outcome {
    let mut script = Vec::new();
    clap_complete::generate(Shell::from(a.shell), &mut cmd, "brickform", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
