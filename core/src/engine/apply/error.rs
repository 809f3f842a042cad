//! Why one node of the apply failed, classified by where the failure came from: the kind
//! of failure decides what the report tells the user, and whether the walk can go on.

use super::report::Failure;
use crate::dag;
use crate::diagnostics::Diagnostics;
use crate::provider::ProviderError;
use brickform_state::StateError;

/// Why one node of the apply failed, by where the failure came from.
#[derive(Debug)]
pub(super) enum NodeError {
    /// The provider's call failed (the service refused it, or could not be reached).
    Provider(ProviderError),
    /// The instance's configuration, evaluated again with the values its dependencies
    /// got, cannot be sent: `diagnostics` locates the problems where there are any.
    Evaluation {
        message: String,
        diagnostics: Diagnostics,
    },
    /// The write-ahead log could not be written (among the causes: the state's lock was
    /// lost to another run). Fatal: no further call could be recorded, so none is made.
    Journal(StateError),
    /// What brickform itself cannot do for this node.
    Engine(EngineFailure),
}

/// What brickform itself cannot do for one node of the apply, by kind.
#[derive(Debug, thiserror::Error)]
pub(super) enum EngineFailure {
    /// The plan recorded no id of the object the change acts on.
    #[error("no id recorded for this object")]
    NoId,
    /// No provider has the plan's type (the plan was made with another provider).
    #[error("unknown {what} type {type_name}")]
    UnknownType {
        what: &'static str,
        type_name: String,
    },
    /// The configuration has no block for the instance the plan names.
    #[error("{address} has no configuration to evaluate")]
    NoConfiguration { address: String },
    /// What a container holds could not be listed before its delete.
    #[error("cannot list what it holds: {}", error_text(.0))]
    NotListed(ProviderError),
    /// A container's contents changed since the plan.
    #[error(transparent)]
    Contents(#[from] crate::engine::containers::ContentsError),
    /// The state entry of the object cannot be made.
    #[error(transparent)]
    StateEntry(StateError),
}

impl From<EngineFailure> for NodeError {
    fn from(e: EngineFailure) -> Self {
        NodeError::Engine(e)
    }
}

impl NodeError {
    pub(super) fn invalid(message: impl Into<String>) -> Self {
        NodeError::Evaluation {
            message: message.into(),
            diagnostics: Diagnostics::new(),
        }
    }

    /// The failure as reported: classified by the provider's error kind, a configuration
    /// problem as one the service would refuse, brickform's own failures unclassified.
    pub(super) fn failure(&self) -> Failure {
        match self {
            NodeError::Provider(e) => Failure::from(e),
            NodeError::Evaluation {
                message,
                diagnostics,
            } => Failure {
                diagnostics: diagnostics.clone(),
                ..Failure::invalid(message.clone())
            },
            NodeError::Journal(e) => Failure::new(None, e.to_string()),
            NodeError::Engine(e) => Failure::new(None, e.to_string()),
        }
    }
}

impl dag::NodeError for NodeError {
    fn is_fatal(&self) -> bool {
        matches!(self, NodeError::Journal(_))
    }
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.failure().message)
    }
}

impl From<ProviderError> for NodeError {
    fn from(e: ProviderError) -> Self {
        NodeError::Provider(e)
    }
}

impl From<StateError> for NodeError {
    fn from(e: StateError) -> Self {
        NodeError::Journal(e)
    }
}

/// A provider's error as the user reads it: its message, then its detail.
pub(super) fn error_text(e: &ProviderError) -> String {
    match &e.detail {
        Some(d) => format!("{}\n{d}", e.message),
        None => e.message.clone(),
    }
}
