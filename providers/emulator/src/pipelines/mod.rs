//! Lakeflow declarative pipelines, including Lakeflow Connect gateways and ingestion
//! pipelines, and their updates.
//!
//! An update's state is a pure function of its creation time, the step duration it was
//! created with, whether it is doomed to fail, and when it was stopped; nothing ticks.
//! [`spec`] checks and builds a pipeline's spec; [`model`] is what the API does to the
//! state; [`routes`] the HTTP side.

mod datasets;
mod events;
mod model;
mod routes;
mod sdp_meta;
mod spec;

pub use model::{advance, cancel_update, start, update_outcome};
pub use routes::routes;
pub use sdp_meta::{SpecTable, onboard};

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use crate::util::compact;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// What pipelines keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    pub pipelines: Tracked<String, Pipeline>,
    /// The rows sdp-meta's onboarding wrote into each dataflowspec table, by the table's full
    /// name (files written before had none).
    #[serde(default)]
    pub dataflow_specs: Tracked<String, SpecTable>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, pipelines, dataflow_specs)
    }
}

const STEPS: &[&str] = &[
    "QUEUED",
    "CREATED",
    "WAITING_FOR_RESOURCES",
    "INITIALIZING",
    "SETTING_UP_TABLES",
    "RUNNING",
];

/// A failing update fails when it would set up tables.
const FAIL_AT: i64 = 4;

const TERMINAL: &[&str] = &["COMPLETED", "FAILED", "CANCELED"];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pipeline {
    pub id: String,
    pub spec: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as: Option<Value>,
    pub creator: String,
    pub last_modified: i64,
    /// Oldest first.
    pub updates: Vec<Update>,
    /// A delete is asynchronous: the pipeline reads as DELETING until this time, then is
    /// gone (see [`advance`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleting_until: Option<i64>,
    /// Whether the delete drops the tables the pipeline defined (`cascade`, default true).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_tables: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Update {
    pub update_id: String,
    pub creation_time: i64,
    pub cause: String,
    pub request: Map<String, Value>,
    pub config: Map<String, Value>,
    pub continuous: bool,
    pub step_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canceled_at: Option<i64>,
}

impl Update {
    fn natural(&self, t: i64) -> &'static str {
        let elapsed = t.saturating_sub(self.creation_time).max(0);
        let k = if self.step_ms <= 0 {
            i64::MAX
        } else {
            elapsed / self.step_ms
        };
        let step = |i: i64| STEPS[usize::try_from(i).unwrap_or(0).min(STEPS.len() - 1)];
        if self.failure.is_some() {
            if k >= FAIL_AT { "FAILED" } else { step(k) }
        } else if self.continuous {
            step(k.min(5))
        } else if k >= 6 {
            "COMPLETED"
        } else {
            step(k)
        }
    }

    pub fn state_at(&self, now: i64) -> &'static str {
        if let Some(c) = self.canceled_at
            && now >= c
            && !TERMINAL.contains(&self.natural(c))
        {
            return "CANCELED";
        }
        self.natural(now)
    }

    pub fn is_active(&self, now: i64) -> bool {
        !TERMINAL.contains(&self.state_at(now))
    }

    /// When the update reaches a terminal state, if it does (continuous ones run until stopped).
    pub fn end_time(&self) -> Option<i64> {
        let natural = if self.failure.is_some() {
            Some(
                self.creation_time
                    .saturating_add(FAIL_AT.saturating_mul(self.step_ms.max(0))),
            )
        } else if self.continuous {
            None
        } else {
            Some(
                self.creation_time
                    .saturating_add(self.step_ms.max(0).saturating_mul(6)),
            )
        };
        match (natural, self.canceled_at) {
            (Some(n), Some(c)) => Some(n.min(c)),
            (n, c) => n.or(c),
        }
    }

    fn info(&self, pipeline_id: &str, now: i64, with_config: bool) -> Value {
        let mut m = compact(json!({
            "pipeline_id": pipeline_id, "update_id": self.update_id, "state": self.state_at(now), "cause": self.cause,
            "creation_time": self.creation_time, "full_refresh": self.request.get("full_refresh").cloned().unwrap_or(json!(false)),
            "mode": if self.continuous { "CONTINUOUS" } else { "DEFAULT" },
        }));
        for (k, v) in &self.request {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if with_config {
            m.insert("config".into(), Value::Object(self.config.clone()));
        }
        Value::Object(m)
    }
}
