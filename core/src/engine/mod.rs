//! The engine: plans a configuration against state and the live world, and applies plans.

pub mod apply;
pub mod inputs;
mod planner;
mod recover;
mod refresh;
pub mod world;

use crate::lang::diagnostics::Diagnostics;
use crate::lang::load::Config;
use crate::plan::{InstanceKey, Plan, PlanMode};
use crate::provider::Registry;
use crate::value::Value;
use brickform_state::StateDocument;
pub use inputs::{VarInputs, Variables};
pub use planner::{block_paths, instance_address};

/// What a plan is asked to do.
#[derive(Debug, Clone, Default)]
pub struct PlanRequest {
    pub mode: PlanMode,
    /// Read live objects (false for `--refresh=false`).
    pub refresh: bool,
    /// `--target` addresses.
    pub targets: Vec<String>,
    /// `--replace` addresses.
    pub replace: Vec<String>,
    /// Concurrent reads while refreshing (0 means the default, 10).
    pub parallelism: usize,
}

/// How one planned instance is evaluated again at apply time.
#[derive(Debug, Clone)]
pub struct InstanceSpec {
    pub address: String,
    /// The resource block (`TYPE.NAME` or `data.TYPE.NAME`); `None` for instances only state
    /// knows (orphans to delete).
    pub resource: Option<String>,
    pub key: Option<InstanceKey>,
    pub each_value: Option<Value>,
}

/// A plan and what apply needs to carry it out.
#[derive(Debug, Clone)]
pub struct Planned {
    pub plan: Plan,
    /// One spec per `plan.changes` entry, same order.
    pub specs: Vec<InstanceSpec>,
}

/// Everything a plan or apply works from.
pub struct Engine<'a> {
    pub config: &'a Config,
    pub registry: &'a Registry,
    pub vars: &'a Variables,
    pub environment: String,
    /// No provider calls at all (`validate`): data sources and imports stay unknown.
    pub offline: bool,
}

impl<'a> Engine<'a> {
    pub fn new(
        config: &'a Config,
        registry: &'a Registry,
        vars: &'a Variables,
        environment: &str,
    ) -> Self {
        Engine {
            config,
            registry,
            vars,
            environment: environment.to_string(),
            offline: false,
        }
    }

    /// Plans the configuration against `state`. Diagnostics include warnings even on success.
    pub async fn plan(
        &self,
        state: &StateDocument,
        req: &PlanRequest,
    ) -> (Option<Planned>, Diagnostics) {
        self.build_plan(state, req).await
    }

    /// Everything `validate` checks: structure, references, cycles, types, expressions,
    /// schemas; no network.
    pub async fn validate(&self) -> Diagnostics {
        let engine = Engine {
            config: self.config,
            registry: self.registry,
            vars: self.vars,
            environment: self.environment.clone(),
            offline: true,
        };
        let state = StateDocument::new(&self.environment);
        let (_, diags) = engine.build_plan(&state, &PlanRequest::default()).await;
        diags
    }
}
