//! Ctrl-C, for every command in one place. A command that has nothing under way that an
//! interruption could lose (loading, planning, asking) stops at the first Ctrl-C: its future
//! is dropped, which releases the state lock it holds (a volume lock too, through its drop),
//! and the command exits 130, a shell's code for SIGINT. A command that writes, or follows
//! what it started, says so with [`graceful`]: the first Ctrl-C then only cancels the token
//! it got, so what is under way finishes and is recorded; a second one stops at once, as
//! above — the write-ahead log lets the next run finish what was cut.

use crate::failure::{Failure, Outcome};
use std::future::Future;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// Exit status of a command stopped by Ctrl-C: a shell's for a command ended by SIGINT.
pub const INTERRUPTED: u8 = 130;

/// The token of the phase that handles the first Ctrl-C itself, when one is running.
static GRACEFUL: Mutex<Option<CancellationToken>> = Mutex::new(None);

/// From now on the first Ctrl-C cancels the returned token instead of stopping the command.
pub fn graceful() -> CancellationToken {
    let token = CancellationToken::new();
    *GRACEFUL.lock().unwrap_or_else(|p| p.into_inner()) = Some(token.clone());
    token
}

fn graceful_token() -> Option<CancellationToken> {
    GRACEFUL.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Runs `command` until it ends or Ctrl-C stops it (see the module doc).
pub async fn supervise(command: impl Future<Output = Outcome>) -> Outcome {
    // Listening starts here, before the command is first polled: a Ctrl-C that arrives
    // while it takes the lock must not find the default handler, which kills the process
    // with the lock held.
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::interrupt()) {
            Ok(mut interrupts) => {
                supervised(command, async || interrupts.recv().await.is_some()).await
            }
            Err(_) => command.await,
        }
    }
    #[cfg(not(unix))]
    supervised(command, async || tokio::signal::ctrl_c().await.is_ok()).await
}

/// `supervise` with the signal as a parameter, so tests can send it.
async fn supervised(
    command: impl Future<Output = Outcome>,
    mut interrupt: impl AsyncFnMut() -> bool,
) -> Outcome {
    tokio::pin!(command);
    let mut seen = 0u32;
    loop {
        tokio::select! {
            // A command that has ended is done, whatever else arrived meanwhile.
            biased;
            outcome = &mut command => return outcome,
            heard = interrupt() => {
                if !heard {
                    // Signals cannot be listened to: the command runs to its end.
                    return command.await;
                }
                seen += 1;
                match graceful_token() {
                    Some(token) if seen == 1 => token.cancel(),
                    _ => {
                        eprintln!("\nInterrupted: brickform stops here and releases the state lock.");
                        return Err(Failure::reported_with(INTERRUPTED));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Stands for the state lock: records that it was dropped.
    struct Guard(Arc<AtomicBool>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// The tests share the process's one graceful phase.
    static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    fn code(o: &Outcome) -> Option<u8> {
        match o {
            Ok(_) => Some(0),
            Err(_) => None,
        }
    }

    #[tokio::test]
    async fn ctrl_c_while_planning_stops_and_drops_what_the_command_holds() {
        let _one = SERIAL.lock().await;
        *GRACEFUL.lock().unwrap() = None;
        let released = Arc::new(AtomicBool::new(false));
        let guard = Guard(released.clone());
        let planning = async move {
            let _held = guard;
            std::future::pending::<()>().await;
            Ok(ExitCode::SUCCESS)
        };
        let out = supervised(planning, async || true).await;
        assert_eq!(code(&out), None);
        assert!(released.load(Ordering::SeqCst), "the lock is released");
    }

    #[tokio::test]
    async fn a_graceful_phase_gets_the_first_ctrl_c_and_a_second_one_stops_it() {
        let _one = SERIAL.lock().await;
        let released = Arc::new(AtomicBool::new(false));
        let guard = Guard(released.clone());
        let token = graceful();
        let seen = token.clone();
        // Ends by itself once cancelled: the first Ctrl-C is the command's.
        let applying = async move {
            let _held = guard;
            seen.cancelled().await;
            Ok(ExitCode::SUCCESS)
        };
        let out = supervised(applying, async || true).await;
        assert_eq!(code(&out), Some(0));
        assert!(token.is_cancelled());
        // One that does not end on the first is stopped by the second.
        let released2 = Arc::new(AtomicBool::new(false));
        let guard = Guard(released2.clone());
        graceful();
        let stuck = async move {
            let _held = guard;
            std::future::pending::<()>().await;
            Ok(ExitCode::SUCCESS)
        };
        let out = supervised(stuck, async || true).await;
        assert_eq!(code(&out), None);
        assert!(released.load(Ordering::SeqCst) && released2.load(Ordering::SeqCst));
        *GRACEFUL.lock().unwrap() = None;
    }
}
