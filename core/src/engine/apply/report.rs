//! What an apply tells its caller: progress as it goes (`ApplyEvent`), and at the end what
//! was done and what failed (`ApplyReport`), each failure classified (`Failure`) so the
//! caller can say what to do. `ApplyReport::settle` is the bookkeeping of the walk: what
//! each node came to, counted before anything that depends on it starts.

use super::error::{NodeError, error_text};
use super::graph::{Part, shown_action};
use crate::addrs::ResourceAddr;
use crate::dag::{NodeError as _, Outcome};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::Config;
use crate::plan::{Action, ResourceChange};
use crate::provider::ErrorKind;
use crate::value::Value;
use std::time::Duration;

/// Progress of an apply, for the terminal.
#[derive(Debug, Clone)]
pub enum ApplyEvent {
    Started {
        address: String,
        action: Action,
        id: Option<String>,
    },
    StillRunning {
        address: String,
        action: Action,
        elapsed: Duration,
    },
    Finished {
        address: String,
        action: Action,
        id: Option<String>,
        elapsed: Duration,
    },
    Failed {
        address: String,
        action: Action,
        error: Failure,
    },
    Skipped {
        address: String,
        because: String,
    },
    /// A line a step printed as it went (a build's output).
    Output {
        address: String,
        line: String,
    },
}

#[derive(Debug, Default, Clone)]
pub struct ApplyReport {
    pub added: usize,
    pub changed: usize,
    pub destroyed: usize,
    pub imported: usize,
    pub forgotten: usize,
    pub failed: Vec<(String, Failure)>,
    pub skipped: Vec<String>,
    pub interrupted: bool,
    /// Why the apply stopped before trying everything, when going on was not safe (the
    /// write-ahead log could not be written, the lock was lost); what did not start is in
    /// `skipped`.
    pub stopped: Option<String>,
    /// Calls whose outcome is still unknown (a create that may have happened and could not be
    /// looked up): their intents stay in the write-ahead log, which must not be truncated, so
    /// the next run resolves them.
    pub unresolved: usize,
    /// Output values after apply (sensitive ones included; the caller masks them).
    pub outputs: Vec<(String, Value, bool)>,
    /// What the configuration's `check` blocks found once the apply finished: warnings.
    pub checks: Diagnostics,
}

/// Why an instance could not be applied, classified so the caller can say what to do: a
/// configuration the service rejects is not fixed by running the command again.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub message: String,
    /// The class of the provider's error; `None` for brickform's own failures (the state,
    /// the write-ahead log).
    pub kind: Option<ErrorKind>,
    /// Configuration problems found when the instance was evaluated again with the values
    /// its dependencies got, located in the configuration.
    pub diagnostics: Diagnostics,
}

impl Failure {
    pub fn new(kind: Option<ErrorKind>, message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            kind,
            diagnostics: Diagnostics::new(),
        }
    }
    /// A configuration the service (or brickform, with the values known at apply) refuses.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Some(ErrorKind::InvalidInput), message)
    }
    /// Whether running the same command again may succeed without changing anything.
    pub fn retry_may_help(&self) -> bool {
        matches!(
            self.kind,
            None | Some(ErrorKind::Transient | ErrorKind::Conflict | ErrorKind::Other)
        )
    }
    pub fn contains(&self, s: &str) -> bool {
        self.message.contains(s)
    }
}

impl Failure {
    /// What to do about it, by class.
    fn hint(&self, address: &str) -> Option<String> {
        Some(match self.kind? {
            ErrorKind::InvalidInput => format!(
                "the service rejected the configuration of {address}: change it as the message says, then apply again (running the command again unchanged fails the same way)"
            ),
            ErrorKind::PermissionDenied => "the identity brickform acts as lacks a permission this needs: grant it, or configure an identity that has it, then apply again".to_string(),
            ErrorKind::AlreadyExists => format!(
                "an object of this name exists outside this state: import it (`brickform import {address} ID`) or give {address} another name"
            ),
            ErrorKind::NotFound => format!(
                "something {address} refers to does not exist: check the names and ids it uses"
            ),
            ErrorKind::Conflict => "another change to this object was under way: run the command again when it has finished".to_string(),
            ErrorKind::Transient => "a temporary failure: run the command again".to_string(),
            ErrorKind::Other => return None,
        })
    }

    /// The failure as diagnostics: the configuration problems found at apply where they
    /// are written, otherwise one error at the resource's block saying what to do.
    pub fn to_diagnostics(&self, address: &str, config: &Config) -> Diagnostics {
        let mut out = Diagnostics::new();
        for d in self.diagnostics.iter() {
            let mut d = d.clone();
            d.summary = format!("{address}: {}", d.summary);
            out.push(d);
        }
        if !out.is_empty() {
            return out;
        }
        let span = ResourceAddr::of_instance(address)
            .and_then(|r| config.resources.get(&r))
            .and_then(|r| r.span.clone());
        let (first, rest) = self
            .message
            .split_once('\n')
            .map(|(a, b)| (a, Some(b.trim())))
            .unwrap_or((self.message.as_str(), None));
        let mut d = Diagnostic::error(format!("{address}: {first}"))
            .at(span)
            .maybe_hint(self.hint(address));
        if let Some(rest) = rest.filter(|r| !r.is_empty()) {
            d = d.detail(rest);
        }
        out.push(d);
        out
    }
}

impl ApplyReport {
    /// Whether running the same command again may finish the work: it was interrupted, or
    /// a failure may be temporary. Not when the service refused the configuration.
    pub fn retry_may_help(&self) -> bool {
        self.interrupted || self.failed.iter().any(|(_, f)| f.retry_may_help())
    }
}

impl From<&crate::provider::ProviderError> for Failure {
    fn from(e: &crate::provider::ProviderError) -> Self {
        Failure::new(Some(e.kind), error_text(e))
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::new(None, message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure::new(None, message)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What one node of the walk came to.
pub(super) struct Settled<'a> {
    pub change: &'a ResourceChange,
    pub part: Part,
    pub outcome: &'a Outcome<(), NodeError>,
    /// For a node skipped: the address of the failure that skipped it.
    pub cause: Option<&'a str>,
}

impl ApplyReport {
    /// Puts what one node came to in the report, announcing what the node's own task could
    /// not (a skip, a panic); says whether the node was done.
    pub(super) fn settle(&mut self, node: Settled<'_>, on_event: &dyn Fn(ApplyEvent)) -> bool {
        let change = node.change;
        let address = change.address();
        match node.outcome {
            Outcome::Done(()) => {
                self.count_done(change, node.part);
                return true;
            }
            Outcome::Failed(e) => {
                if e.is_fatal() && self.stopped.is_none() {
                    self.stopped = Some(format!("{address} could not be recorded: {e}"));
                }
                self.failed.push((address, e.failure()));
            }
            Outcome::Panicked(message) => {
                let failure = Failure::from(format!(
                    "brickform failed while applying this (a bug): {message}"
                ));
                on_event(ApplyEvent::Failed {
                    address: address.clone(),
                    action: shown_action(change.action, node.part),
                    error: failure.clone(),
                });
                self.failed.push((address, failure));
            }
            Outcome::Skipped { .. } => {
                let cause = node.cause.unwrap_or_default();
                on_event(ApplyEvent::Skipped {
                    address: address.clone(),
                    because: format!("{cause} failed"),
                });
                self.skipped.push(address);
            }
            // The walk stopped (interrupted, or a fatal error) before these started. Not
            // announced one by one (an interrupted apply of many instances would print a
            // line for each): the summary lists them with the reason.
            Outcome::NotStarted { stop: Some(_) } => self.skipped.push(address),
            // On a cycle: never left unsaid (planning refuses such a plan, so this is a bug).
            Outcome::NotStarted { stop: None } => {
                let failure = Failure::from(
                    "brickform could not order this change: it waits for a change that waits for it (a bug)".to_string(),
                );
                on_event(ApplyEvent::Failed {
                    address: address.clone(),
                    action: shown_action(change.action, node.part),
                    error: failure.clone(),
                });
                self.failed.push((address, failure));
            }
        }
        false
    }

    /// Counts a node that was done, by what it did: each half of a replacement as what
    /// it does.
    fn count_done(&mut self, change: &ResourceChange, part: Part) {
        match change.action {
            Action::Create => self.added += 1,
            Action::Update => self.changed += 1,
            Action::Delete => self.destroyed += 1,
            Action::DeleteThenCreate | Action::CreateThenDelete => match part {
                Part::Delete => self.destroyed += 1,
                _ => self.added += 1,
            },
            Action::Forget => self.forgotten += 1,
            Action::NoOp | Action::Read => {}
        }
        if change.importing.is_some() {
            self.imported += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brickform_state::StateError;
    use std::sync::Mutex;

    fn settle(
        report: &mut ApplyReport,
        change: &ResourceChange,
        part: Part,
        outcome: Outcome<(), NodeError>,
    ) -> (bool, Vec<String>) {
        let seen = Mutex::new(Vec::new());
        let node = Settled {
            change,
            part,
            outcome: &outcome,
            cause: Some("test_thing.parent"),
        };
        let done = report.settle(node, &|e| seen.lock().unwrap().push(format!("{e:?}")));
        (done, seen.into_inner().unwrap())
    }

    #[test]
    fn each_half_of_a_replacement_counts_as_what_it_does() {
        let mut report = ApplyReport::default();
        let mut c = ResourceChange::bare("test_thing", "a", "test", Action::CreateThenDelete);
        assert!(settle(&mut report, &c, Part::Create, Outcome::Done(())).0);
        assert!(settle(&mut report, &c, Part::Delete, Outcome::Done(())).0);
        c.action = Action::NoOp;
        c.importing = Some("id-1".into());
        settle(&mut report, &c, Part::Whole, Outcome::Done(()));
        assert_eq!((report.added, report.destroyed), (1, 1));
        assert_eq!((report.changed, report.imported), (0, 1));
    }

    #[test]
    fn a_change_left_on_a_cycle_fails_and_one_an_interruption_left_is_skipped() {
        let mut report = ApplyReport::default();
        let c = ResourceChange::bare("test_thing", "a", "test", Action::Create);
        let on_cycle = Outcome::NotStarted { stop: None };
        let (done, seen) = settle(&mut report, &c, Part::Whole, on_cycle);
        assert!(!done);
        assert_eq!(report.failed.len(), 1, "{report:?}");
        assert!(report.failed[0].1.message.contains("could not order"));
        assert_eq!(seen.len(), 1, "announced: {seen:?}");
        let interrupted = Outcome::NotStarted {
            stop: Some(crate::dag::Stop::Cancelled),
        };
        settle(&mut report, &c, Part::Whole, interrupted);
        assert_eq!((report.failed.len(), report.skipped.len()), (1, 1));
    }

    #[test]
    fn a_failure_to_record_stops_the_apply_and_a_skip_is_announced_with_its_cause() {
        let mut report = ApplyReport::default();
        let c = ResourceChange::bare("test_thing", "a", "test", Action::Create);
        let lost = NodeError::Journal(StateError::LockLost {
            location: "here".into(),
            reason: "taken".into(),
        });
        let (done, seen) = settle(&mut report, &c, Part::Whole, Outcome::Failed(lost));
        assert!(!done && seen.is_empty());
        let stopped = report.stopped.clone().unwrap();
        assert!(
            stopped.starts_with("test_thing.a could not be recorded"),
            "{stopped}"
        );
        let cause = crate::dag::Dag::<(), ()>::new().add_node(());
        let (_, seen) = settle(&mut report, &c, Part::Whole, Outcome::Skipped { cause });
        assert!(seen[0].contains("test_thing.parent failed"), "{seen:?}");
        assert_eq!(report.skipped, ["test_thing.a"]);
        assert_eq!(report.failed.len(), 1);
    }
}
