//! How a command ends. `Ok(code)` is a successful outcome: 0, or a code a flag asked for (2,
//! "there are changes", with `--detailed-exitcode`; 3, "files need formatting", with
//! `fmt --check`). Everything else is a [`Failure`], which carries its exit code and, unless
//! it has been told already, what went wrong.

use std::process::ExitCode;

/// What every command returns.
pub type Outcome = Result<ExitCode, Failure>;

/// Exit status of a command whose output pipe closed: what a shell reports for a tool ended
/// by SIGPIPE (128 + 13), as `yes | head` gives.
pub const BROKEN_PIPE_EXIT: u8 = 141;

/// A command that did not succeed.
#[derive(Debug)]
pub struct Failure {
    code: u8,
    /// Printed as `Error: …` when the command ends; `None` when what went wrong has been
    /// printed where it was found (diagnostics with their source, a lock's holder).
    error: Option<anyhow::Error>,
}

impl Failure {
    /// The problem has been shown to the user; the command exits 1.
    pub fn reported() -> Self {
        Failure {
            code: 1,
            error: None,
        }
    }

    /// The problem has been shown to the user; the command exits with `code`.
    pub fn reported_with(code: u8) -> Self {
        Failure { code, error: None }
    }

    /// Prints what is left to tell and gives the process's exit status. A write to a closed
    /// pipe (`brickform show | head`) ends the command quietly, as a Unix tool does.
    pub fn exit(self) -> ExitCode {
        match self.error {
            Some(e) if is_broken_pipe(&e) => ExitCode::from(BROKEN_PIPE_EXIT),
            Some(e) => {
                eprintln!("Error: {e:#}");
                ExitCode::from(self.code)
            }
            None => ExitCode::from(self.code),
        }
    }
}

/// Any error becomes a failure that prints it and exits 1, so `?` works on the libraries'
/// results inside a command.
impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure {
            code: 1,
            error: Some(e.into()),
        }
    }
}

/// The one conversion of a library's error into a command's: its message already says what
/// happened and why (the libraries put the cause in the message), so it is kept as that one
/// message and `Error: …` does not print the cause a second time as a chain.
pub trait Said<T> {
    fn said(self) -> anyhow::Result<T>;
}

impl<T, E: std::fmt::Display> Said<T> for Result<T, E> {
    fn said(self) -> anyhow::Result<T> {
        self.map_err(|e| anyhow::anyhow!("{e}"))
    }
}

/// Ends the command with `Error: MESSAGE` and exit 1 (as `anyhow::bail!` does for an
/// `anyhow::Result`).
macro_rules! fail {
    ($($arg:tt)*) => {
        return Err($crate::failure::Failure::from(anyhow::anyhow!($($arg)*)))
    };
}
pub(crate) use fail;

/// An error that is a write to a closed pipe (a `write_all` on stdout propagated with `?`).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_error_exits_one_and_a_reported_failure_its_own_code() {
        let f: Failure = anyhow::anyhow!("boom").into();
        assert_eq!(f.code, 1);
        assert_eq!(f.error.unwrap().to_string(), "boom");
        let f = Failure::reported_with(2);
        assert_eq!((f.code, f.error.is_none()), (2, true));
    }

    #[test]
    fn a_closed_pipe_is_told_apart() {
        let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "closed");
        let e = anyhow::Error::new(io).context("writing the plan");
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }
}
