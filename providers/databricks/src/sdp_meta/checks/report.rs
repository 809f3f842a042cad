//! Where a finding points, and how it is worded.

use super::*;

/// A field within the flow (or onboarding) body: its path and its HCL spelling.
#[derive(Debug, Clone)]
pub(super) struct At {
    pub(super) steps: Vec<PathStep>,
    pub(super) text: String,
}

impl At {
    pub(super) fn root() -> At {
        At {
            steps: Vec::new(),
            text: String::new(),
        }
    }
    pub(super) fn key(&self, k: &str) -> At {
        let mut steps = self.steps.clone();
        steps.push(PathStep::Key(k.to_string()));
        let text = if self.text.is_empty() {
            k.to_string()
        } else {
            format!("{}.{k}", self.text)
        };
        At { steps, text }
    }
    /// An element of a repeated block, spelled with its label when known.
    pub(super) fn item(&self, i: usize, label: Tri<&str>) -> At {
        let mut steps = self.steps.clone();
        steps.push(PathStep::Index(i));
        let text = match label {
            Tri::Known(l) => format!("{} {}", self.text, quote(l)),
            _ => format!("{}[{i}]", self.text),
        };
        At { steps, text }
    }
}

pub(super) struct Report<'a> {
    /// `flow "2"`; `None` for findings about the onboarding itself.
    pub(super) flow: Option<&'a str>,
    /// Inside an onboarding: `flows[i]`, which every finding about the flow points at.
    pub(super) base: Option<&'a [PathStep]>,
    pub(super) out: &'a mut Vec<Finding>,
}

impl Report<'_> {
    pub(super) fn push(
        &mut self,
        level: FindingLevel,
        rule: &Rule,
        at: &At,
        what: &str,
        why: &str,
        hint: &str,
    ) {
        // The table's level is what the docs promise; the unit tests hold the checks to it.
        if cfg!(test) {
            assert!(
                rule.level.allows(level),
                "{} is reported as {level:?}, but the rules table says {:?}",
                rule.id,
                rule.level
            );
        }
        // The rule id is shown after the message by whoever reports the finding.
        let message = match self.flow {
            Some(flow) => format!("{flow}: {what}: {why}"),
            None => format!("{what}: {why}"),
        };
        let path = match self.base {
            Some(b) => b.to_vec(),
            None => at.steps.clone(),
        };
        let finding = match level {
            FindingLevel::Error => Finding::error(&[], message),
            FindingLevel::Warning => Finding::warning(&[], message),
        };
        self.out.push(finding.at(path).rule(rule.id).hint(hint));
    }
    pub(super) fn error(&mut self, rule: &Rule, at: &At, what: &str, why: &str, hint: &str) {
        self.push(FindingLevel::Error, rule, at, what, why, hint);
    }
    pub(super) fn warn(&mut self, rule: &Rule, at: &At, what: &str, why: &str, hint: &str) {
        self.push(FindingLevel::Warning, rule, at, what, why, hint);
    }
    /// A mandatory field that is not set.
    pub(super) fn missing(&mut self, at: &At, why: &str, hint: &str) {
        self.error(
            &rules::REQUIRED,
            at,
            &format!("{} is not set", at.text),
            why,
            hint,
        );
    }
}
