//! How a job went, and the checks the story makes of it.

use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Outcome {
    pub ran: bool,
    pub ok: bool,
    /// The step that failed.
    pub failed: Option<String>,
    /// Every step's output.
    pub log: String,
    /// What the steps wrote to GITHUB_STEP_SUMMARY.
    pub summary: String,
}

/// A workflow run's (pipeline's) jobs by name; the skipped ones did not run.
pub type Jobs = BTreeMap<String, Outcome>;

pub fn assert_ran(o: &Outcome, what: &str) {
    assert!(o.ran, "{what} did not run");
    assert!(
        o.ok,
        "{what} failed at {:?}:\n{}",
        o.failed.as_deref().unwrap_or_default(),
        o.log
    );
}

pub fn assert_refused(o: &Outcome, what: &str, message: &str) {
    assert!(o.ran, "{what} did not run");
    assert!(!o.ok, "{what} was not refused:\n{}", o.log);
    assert!(
        o.log.contains(message),
        "{what}: expected {message:?} in:\n{}",
        o.log
    );
}
