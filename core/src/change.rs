//! What one planned change is, as the plan and the provider interface both speak of it: the
//! action planned for an instance, and what the change does to data. It lies below both, so
//! a provider can say what a change does without depending on the plan's model.

use serde::{Deserialize, Serialize};

/// The action planned for one resource instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    NoOp,
    /// A data source read during apply (its configuration depends on unknown values).
    Read,
    Update,
    /// Replace: delete the old object, then create the new one (`-/+`).
    DeleteThenCreate,
    /// Replace with `create_before_destroy`: create the new one first (`+/-`).
    CreateThenDelete,
    Create,
    Delete,
    /// Remove from state without destroying (`removed { lifecycle { destroy = false } }`).
    Forget,
}

impl Action {
    /// Terraform's `change.actions` list.
    pub fn json_actions(self) -> &'static [&'static str] {
        match self {
            Action::NoOp => &["no-op"],
            Action::Read => &["read"],
            Action::Update => &["update"],
            Action::DeleteThenCreate => &["delete", "create"],
            Action::CreateThenDelete => &["create", "delete"],
            Action::Create => &["create"],
            Action::Delete => &["delete"],
            Action::Forget => &["forget"],
        }
    }
    pub fn is_replace(self) -> bool {
        matches!(self, Action::DeleteThenCreate | Action::CreateThenDelete)
    }
}

/// Data a planned change drops, loads again or resets, named before it happens, so a
/// reviewer sees it and a policy can refuse it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataImpact {
    /// The instance whose change it is (written as its text).
    pub address: crate::addrs::InstanceAddr,
    pub kind: DataImpactKind,
    /// The tables it concerns (full names), where the service says which; `None` when
    /// it cannot tell (the message then speaks of every table the object publishes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables: Option<Vec<String>>,
    /// What the finding is about, by name (which part of the object, which file, which
    /// types), so a policy reads it without parsing `message`: each is a field of the entry
    /// itself, named by the resource kind that found it (docs/plan-json.md lists them for
    /// each [`DataImpactKind`]). Never one of the entry's own field names (see
    /// [`DataImpact::of`]). Empty in plans saved before the fields were written.
    #[serde(flatten)]
    pub details: std::collections::BTreeMap<String, String>,
    /// One line saying what happens to the data.
    pub message: String,
    /// What to do about it, where there is something to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The fields of a [`DataImpact`] entry of its own, which a detail may not take: a detail
/// of the same name would write the field twice, and read back as the entry's own.
const OWN_FIELDS: &[&str] = &["address", "kind", "tables", "message", "hint"];

impl DataImpact {
    /// What a kind found its change of the instance at `address` does to data. A detail
    /// named like one of the entry's own fields is left out (it would collide with it).
    pub fn of(address: crate::addrs::InstanceAddr, found: DataEffect) -> DataImpact {
        let DataEffect {
            kind,
            tables,
            mut details,
            message,
            hint,
        } = found;
        details.retain(|k, _| !OWN_FIELDS.contains(&k.as_str()));
        DataImpact {
            address,
            kind,
            tables,
            details,
            message,
            hint,
        }
    }
}

/// What a change does to data as a kind says it of its own change (see [`DataImpact`] for
/// the fields): a kind does not know the instance's address, which the engine adds.
#[derive(Debug, Clone, PartialEq)]
pub struct DataEffect {
    pub kind: DataImpactKind,
    pub tables: Option<Vec<String>>,
    pub details: std::collections::BTreeMap<String, String>,
    pub message: String,
    pub hint: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataImpactKind {
    /// Tables are dropped with their data (what publishes them is destroyed or replaced).
    TablesDropped,
    /// Tables are dropped and loaded again from the start of their source (what ingests
    /// them is replaced).
    TablesReloaded,
    /// A full refresh resets streaming state and drops data no longer in the source.
    FullRefresh,
    /// A dataset changes between streaming table and materialized view: the update fails.
    DatasetTypeChanged,
}
