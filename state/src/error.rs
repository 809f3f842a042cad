//! One error type for the crate; every variant that touches a file names it, because a user
//! reading "permission denied" with no path cannot act on it.

use std::path::PathBuf;

use crate::lock::LockInfo;

pub type Result<T, E = StateError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("state file {} is corrupt: {source}", path.display())]
    Corrupt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    #[error(
        "state file {} has format version {found}; this brickform reads up to version {supported}",
        path.display()
    )]
    UnsupportedVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },

    #[error(
        "refusing to overwrite state {}: it has lineage {on_disk}, the state being saved has lineage {ours} \
         (they are different states; move one aside if this is intended)",
        path.display()
    )]
    LineageMismatch {
        path: PathBuf,
        on_disk: String,
        ours: String,
    },

    #[error(
        "refusing to overwrite state {}: it is at serial {on_disk}, newer than serial {ours} this run started from \
         (another run wrote it; run again to pick up its changes)",
        path.display()
    )]
    StaleSerial {
        path: PathBuf,
        on_disk: u64,
        ours: u64,
    },

    #[error("state for environment `{ours}` cannot be saved as environment `{requested}`")]
    EnvironmentMismatch { requested: String, ours: String },

    #[error(
        "invalid environment name `{0}`: use letters, digits, `-` and `_` (it becomes a file name)"
    )]
    InvalidEnvironment(String),

    #[error("invalid resource address `{address}`: {reason}")]
    InvalidAddress { address: String, reason: String },

    #[error("resource `{0}` is already in the state")]
    AddressExists(String),

    #[error("resource `{0}` is not in the state")]
    AddressNotFound(String),

    #[error("cannot move `{from}` to `{to}`: {reason}")]
    InvalidMove {
        from: String,
        to: String,
        reason: String,
    },

    #[error("error acquiring the state lock {}\n{}", path.display(), describe_holder(holder.as_deref()))]
    Locked {
        path: PathBuf,
        holder: Option<Box<LockInfo>>,
    },

    #[error(
        "lock {} is held by lock ID {actual}, not {given}; nothing was unlocked",
        path.display()
    )]
    LockIdMismatch {
        path: PathBuf,
        given: String,
        actual: String,
    },

    #[error("state {} is not locked", path.display())]
    NotLocked { path: PathBuf },

    #[error(
        "the lock of {} is held by a run that is still going: {holder}. Removing it would let two runs write the state at once; wait for it or stop it (force-unlock --even-if-running removes it anyway)",
        path.display()
    )]
    HolderRunning { path: PathBuf, holder: String },

    #[error("write-ahead log {} is corrupt at line {line}: {source}", path.display())]
    WalCorrupt {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },

    #[error(
        "write-ahead log record {seq} is a result for intent {intent_seq}, which the log does not hold"
    )]
    WalOrphanResult { seq: u64, intent_seq: u64 },

    /// A remote store (a Unity Catalog volume) failed.
    #[error("cannot {action} {location}: {source}")]
    Remote {
        action: &'static str,
        location: String,
        #[source]
        source: crate::backend::StoreError,
    },

    /// A remote lock file holds no lock info, so whose it is cannot be told.
    #[error(
        "cannot read lock {location}: it does not hold lock info; delete it by hand if no run holds the lock"
    )]
    LockUnreadable { location: String },

    /// The lock this process held was removed or taken over by someone else (after it
    /// expired, or with `force-unlock`); writing the state now could overwrite theirs.
    #[error(
        "the state lock {location} is no longer held by this run ({reason}); stopping before anything more is written to the state"
    )]
    LockLost { location: String, reason: String },

    /// The write-ahead log in a volume does not read back as one log: a batch is missing or
    /// another writer wrote a batch this run also wrote.
    #[error("write-ahead log {location}: {reason}")]
    WalInconsistent { location: String, reason: String },

    #[error("cannot encode {what}: {source}")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

impl StateError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl Fn(std::io::Error) -> Self {
        let path = path.into();
        move |source| StateError::Io {
            action,
            path: path.clone(),
            source,
        }
    }

    /// The holder of the lock, when this error is a lock conflict and the holder left its info.
    pub fn lock_holder(&self) -> Option<&LockInfo> {
        match self {
            StateError::Locked { holder, .. } => holder.as_deref(),
            _ => None,
        }
    }
}

fn describe_holder(holder: Option<&LockInfo>) -> String {
    match holder {
        Some(info) => info.to_string(),
        // The holder takes the OS lock before it writes its info, so for a moment there is none.
        None => "Lock Info: (not yet written by the holder)".to_string(),
    }
}

impl From<crate::address::AddressError> for StateError {
    fn from(e: crate::address::AddressError) -> StateError {
        StateError::InvalidAddress {
            address: e.address,
            reason: e.reason.to_string(),
        }
    }
}
