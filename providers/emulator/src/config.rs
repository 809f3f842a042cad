//! How an emulator instance is started: port, persistence, auth and timings.

use crate::behaviours::Behaviours;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    /// Loopback port; 0 picks a free one (see `RunningEmulator::url`).
    pub port: u16,
    /// Persist the workspace in this directory (`workspace.json`), reloaded on the next start.
    /// `None` keeps everything in memory.
    pub data_dir: Option<PathBuf>,
    /// Fixed latency added to every API request (control endpoints are not delayed).
    pub latency: Duration,
    /// Accepted bearer tokens. `None` accepts any non-empty token. When set, OAuth M2M
    /// clients must use one of these as their client secret.
    pub tokens: Option<Vec<String>>,
    /// The workspace user every request acts as (SCIM `Me`, owners, creators).
    pub user_name: String,
    pub timings: Timings,
    /// How many requests `/__emulator/requests` keeps (oldest dropped first).
    pub request_log_capacity: usize,
    /// How long a connection may take to send a request's headers, counted from when it is
    /// opened or finished its previous request: idle keep-alive connections and clients
    /// that connect and send nothing are closed after this.
    pub header_timeout: Duration,
    /// The longest pause allowed while a request body arrives (408 after it).
    pub body_timeout: Duration,
    /// The largest API request body, in bytes (413 above it). The real service caps JSON
    /// requests at about 10 MB (workspace imports of 10 MB arrive base64-encoded).
    pub body_limit: usize,
    /// The largest volume file upload (`PUT /api/2.0/fs/files/...`), in bytes. The real
    /// service takes up to 5 GiB in one request; the local workspace holds files in memory,
    /// so its default is lower.
    pub file_body_limit: usize,
    /// Which of the real service's behaviours are modelled: all but the opt-in ones by
    /// default; a focused test may turn one off or on (also at runtime,
    /// `POST /__emulator/behaviours`).
    pub behaviours: Behaviours,
    /// What `normalise_answers` hashes with its choices (also at runtime,
    /// `POST /__emulator/normalise {"seed": N}`); 0 applies every rewriting.
    pub normalise_seed: u64,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        EmulatorConfig {
            port: 0,
            data_dir: None,
            latency: Duration::ZERO,
            tokens: None,
            user_name: "local-user@brickform.local".to_string(),
            timings: Timings::default(),
            request_log_capacity: 5_000,
            header_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(30),
            body_limit: 32 * 1024 * 1024,
            file_body_limit: 1024 * 1024 * 1024,
            behaviours: Behaviours::default(),
            normalise_seed: 0,
        }
    }
}

impl EmulatorConfig {
    /// In memory, ephemeral port, and runs/updates that finish as soon as they are read:
    /// what most tests want.
    pub fn for_tests() -> Self {
        EmulatorConfig {
            timings: Timings::instant(),
            ..Default::default()
        }
    }
}

/// How long simulated work takes. Runs and pipeline updates advance through their states
/// by elapsed time, evaluated whenever the workspace is read, so there are no timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    /// Time spent in each non-terminal pipeline update state (QUEUED … RUNNING).
    #[serde(with = "millis")]
    pub update_step: Duration,
    /// Time a job run spends PENDING before its first task starts.
    #[serde(with = "millis")]
    pub run_setup: Duration,
    /// Time each task of a job run takes (pipeline tasks take as long as their update).
    #[serde(with = "millis")]
    pub task: Duration,
}

impl Default for Timings {
    fn default() -> Self {
        Timings {
            update_step: Duration::from_millis(300),
            run_setup: Duration::from_millis(300),
            task: Duration::from_millis(500),
        }
    }
}

impl Timings {
    pub fn instant() -> Self {
        Timings {
            update_step: Duration::ZERO,
            run_setup: Duration::ZERO,
            task: Duration::ZERO,
        }
    }

    pub fn update_step_ms(&self) -> i64 {
        ms(self.update_step)
    }
    pub fn run_setup_ms(&self) -> i64 {
        ms(self.run_setup)
    }
    pub fn task_ms(&self) -> i64 {
        ms(self.task)
    }
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Durations as integer milliseconds on the wire (`{"task": 50}`).
pub mod millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}
