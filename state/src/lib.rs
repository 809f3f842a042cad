//! brickform state (docs/architecture.md, State): the state document, the write-ahead log that
//! makes apply crash safe, the state lock, and the backends that store them.
//!
//! A command's life with state:
//! 1. `backend.lock(env, LockInfo::new("apply"), timeout)` and keep the guard alive;
//! 2. `backend::recover(backend, env)` loads the state and replays the log;
//! 3. resolve `Recovery::unresolved` and `journal.checkpoint(&mut doc)`;
//! 4. around each mutating call, `journal.intent(..)` before and `journal.result(..)` after;
//! 5. `journal.checkpoint(&mut doc)` at the end (and whenever a save is wanted).

pub mod address;
pub mod backend;
pub mod document;
pub mod error;
pub mod fingerprint;
pub mod lock;
pub mod sensitive_path;
pub mod wal;

pub use address::{
    AddressError, FieldAddressError, InstanceAddr, InstanceKey, ModuleInstance, ModuleStep,
    PartNames, ResourceAddr, ResourceMode,
};
pub use backend::{
    Backend, Journal, LocalBackend, ObjectStore, Recovery, StateLock, StoreError, VolumeBackend,
    recover,
};
pub use document::{
    Forgotten, OutputState, Redactor, ResourceState, ResourceStatus, STATE_VERSION, StateDocument,
};
pub use error::{Result, StateError};
pub use fingerprint::{fingerprint, fingerprint_matches};
pub use lock::LockInfo;
pub use wal::{Intent, Outcome, ResultRecord, WalOp, WalRecord, replay};
