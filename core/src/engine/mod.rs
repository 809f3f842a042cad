//! The engine: plans a configuration against state and the live world, and applies plans.

mod adopt;
pub mod apply;
mod checks;
mod configuration;
mod configure;
pub mod console;
mod containers;
pub mod inputs;
mod instance;
mod placeholders;
mod planner;
pub mod promote;
mod providers;
mod recover;
mod refresh;
mod sensitive;
mod values;
pub mod watch;
pub mod world;

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::Config;
use crate::plan::{InstanceKey, Plan, PlanMode};
use crate::provider::Registry;
use crate::value::Value;
use brickform_state::StateDocument;
pub use inputs::{VarInputs, Variables};
pub use instance::merged_from;
pub use planner::block_paths;
pub use recover::{ImportOutcome, KnownImport};

/// What the development presets changed, by instance address.
pub type PresetNotes =
    std::collections::BTreeMap<crate::addrs::InstanceAddr, Vec<crate::provider::PresetChange>>;

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
    /// `--allow-destroy`: a protected environment may delete or replace data objects.
    pub allow_destroy: bool,
    /// Provider calls in flight while planning: refresh reads, lookups, imports, name checks
    /// (0 means the default, 10).
    pub parallelism: usize,
    /// Plan each block only in its turn, never ahead of it while the reads it waits for are
    /// made (see `planner::speculate`): the plan is the same, only slower. For comparing.
    pub in_turn_only: bool,
}

impl PlanRequest {
    /// [`PlanRequest::parallelism`], the default for 0.
    pub fn calls_in_flight(&self) -> usize {
        match self.parallelism {
            0 => 10,
            n => n,
        }
    }
}

/// How one planned instance is evaluated again at apply time.
#[derive(Debug, Clone)]
pub struct InstanceSpec {
    pub address: crate::addrs::InstanceAddr,
    /// The resource block (`TYPE.NAME` or `data.TYPE.NAME`, in its module instance); `None`
    /// for instances only state knows (orphans to delete).
    pub resource: Option<crate::addrs::ResourceAddr>,
    pub key: Option<InstanceKey>,
    pub each_value: Option<Value>,
    /// For a kept instance of a kind whose objects lie in containers: what its new object
    /// would hold if it were replaced (the configuration, the service's defaults, unknown
    /// what the service assigns), planned as the walk plans a replacement, for the case
    /// where its container is replaced and takes it along. Sensitive values left out.
    pub if_replaced: Option<crate::value::Object>,
    /// Whether anything in the configuration reads the instance (another block, a local, an
    /// output): only then does it get a value in the world expressions are evaluated in.
    pub referenced: bool,
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
    /// The configuration with its module calls expanded for this environment's variables
    /// (see `lang::modules`): borrowed as loaded when it calls no module.
    pub config: std::borrow::Cow<'a, Config>,
    pub registry: &'a Registry,
    pub vars: &'a Variables,
    pub environment: String,
    /// The selected environment's block: mode, protection, provider settings.
    pub settings: crate::lang::environment::EnvironmentSettings,
    /// Problems of the environment blocks, reported by every plan and validate.
    settings_diags: Diagnostics,
    /// No provider calls at all (`validate`): data sources and imports stay unknown.
    pub offline: bool,
    /// Development presets, once the providers are configured (they need the user's name).
    presets: std::sync::OnceLock<Option<crate::provider::Presets>>,
    /// The backend's other states, which say whose a found object is (see `adopt`).
    other_states: adopt::OtherStates,
    /// Every other configuration of a provider (`provider "NAME" { alias = "A" }`), by its
    /// key `NAME.A`: a registry of its own, so its objects go through its own connection.
    aliases: std::sync::Arc<std::collections::BTreeMap<String, Registry>>,
}

impl<'a> Engine<'a> {
    pub fn new(
        config: &'a Config,
        registry: &'a Registry,
        vars: &'a Variables,
        environment: &str,
    ) -> Self {
        let (settings, mut settings_diags) =
            crate::lang::environment::resolve(config, environment, registry);
        let config = if config.module_calls.is_empty() {
            std::borrow::Cow::Borrowed(config)
        } else {
            let mut expanded = config.clone();
            settings_diags.extend(crate::lang::modules::expand(
                &mut expanded,
                &vars.values,
                &vars.sensitive,
                environment,
            ));
            std::borrow::Cow::Owned(expanded)
        };
        let mut aliases = std::collections::BTreeMap::new();
        for key in config.providers.keys() {
            let addr = crate::addrs::ProviderConfigAddr::parse(key);
            if addr.alias.is_none() {
                continue;
            }
            if let Some(p) = registry.provider(&addr.name).and_then(|p| p.another()) {
                let mut r = Registry::new();
                r.register(p);
                aliases.insert(key.clone(), r);
            }
        }
        Engine {
            config,
            registry,
            vars,
            environment: environment.to_string(),
            settings,
            settings_diags,
            offline: false,
            presets: std::sync::OnceLock::new(),
            other_states: Default::default(),
            aliases: std::sync::Arc::new(aliases),
        }
    }

    /// The registry of a provider configuration (`NAME`, or `NAME.ALIAS` for an aliased
    /// one): its kinds hold its connection. A key nothing declares is the default's.
    pub fn registry_for(&self, key: &str) -> &Registry {
        self.aliases.get(key).unwrap_or(self.registry)
    }

    /// The registry of the instance at `address`, by what the configuration declares there
    /// (the default's when it declares nothing).
    pub fn registry_at(&self, address: &str) -> &Registry {
        let resource = crate::addrs::ResourceAddr::of_instance(address)
            .and_then(|r| self.config.resources.get(&r));
        match resource {
            Some(r) => self.registry_for(&self.provider_key(r)),
            None => self.registry,
        }
    }

    /// The provider configuration a resource block uses (see [`Config::provider_key`]).
    pub fn provider_key(&self, r: &crate::lang::load::Resource) -> String {
        let name = self
            .registry
            .provider_of(&r.type_name)
            .map(|p| p.name())
            .unwrap_or_default();
        self.config.provider_key(r, name)
    }

    /// Lets plans read the other environments' states of `backend`, so an object another
    /// state manages is never imported into this one (see `adopt`). Without it, a plan
    /// imports only what this state's own evidence (its ownership tag, `state rm`) says is
    /// its own.
    pub fn with_backend(mut self, backend: std::sync::Arc<dyn brickform_state::Backend>) -> Self {
        self.other_states = adopt::OtherStates::new(backend);
        self
    }

    /// The configuration as this environment resolves it, without state or network: every
    /// instance planned for creation with its values, development presets applied for
    /// `user` when the environment is in development mode. `promote` compares two of these.
    pub async fn resolve_offline(
        &self,
        user: Option<&str>,
    ) -> (Option<Planned>, PresetNotes, Diagnostics) {
        let engine = Engine {
            config: std::borrow::Cow::Borrowed(&*self.config),
            registry: self.registry,
            vars: self.vars,
            environment: self.environment.clone(),
            settings: self.settings.clone(),
            settings_diags: self.settings_diags.clone(),
            offline: true,
            presets: std::sync::OnceLock::new(),
            other_states: Default::default(),
            aliases: self.aliases.clone(),
        };
        let development =
            self.settings.mode == Some(crate::lang::environment::EnvMode::Development);
        let _ = engine.presets.set(match (development, user) {
            (true, Some(u)) => Some(crate::provider::Presets::new(u, &self.settings.settings)),
            _ => None,
        });
        let state = StateDocument::new(&self.environment);
        engine.build_plan(&state, &PlanRequest::default()).await
    }

    /// The context of a provider call for `address`, in the state of `lineage`.
    pub(super) fn op_context(
        &self,
        address: &str,
        lineage: impl std::fmt::Display,
    ) -> crate::provider::OpContext {
        crate::provider::OpContext {
            address: address.to_string(),
            lineage: lineage.to_string(),
            environment: self.environment.clone(),
            base_dir: self.config.dir.clone(),
            create_token: None,
            output: None,
            planned: None,
        }
    }

    /// The development presets in force, if the environment is in development mode and the
    /// providers have been configured.
    pub fn presets(&self) -> Option<&crate::provider::Presets> {
        self.presets.get().and_then(Option::as_ref)
    }

    /// Plans the configuration against `state`. Diagnostics include warnings even on success.
    pub async fn plan(
        &self,
        state: &StateDocument,
        req: &PlanRequest,
    ) -> (Option<Planned>, Diagnostics) {
        if let Some(d) = self.no_configuration(state, req.mode) {
            if d.is_error() {
                return (None, d.into());
            }
            let (planned, _, mut diags) = self.build_plan(state, req).await;
            diags.push(d);
            return (planned, diags);
        }
        let (planned, _, diags) = self.build_plan(state, req).await;
        (planned, diags)
    }

    /// A directory without configuration files: planning it normally would delete
    /// everything the state manages, which is what a wrong `-C`, a checkout of another
    /// branch or files moved away look like, not an intent. That plan is refused (destroy
    /// says it on purpose); with nothing in state there is nothing to plan, and a warning
    /// says why.
    fn no_configuration(&self, state: &StateDocument, mode: PlanMode) -> Option<Diagnostic> {
        if self.config.sources.files().next().is_some() {
            return None;
        }
        let dir = self.config.dir.display();
        let suffix = crate::lang::load::CONFIG_SUFFIX;
        let managed = state
            .resources()
            .iter()
            .filter(|r| r.mode() == brickform_state::ResourceMode::Managed)
            .count();
        if managed == 0 {
            return Some(
                Diagnostic::warning(format!("No *{suffix} files in {dir}"))
                    .detail("There is no configuration here, and the state manages nothing: there is nothing to plan."),
            );
        }
        if mode != PlanMode::Normal {
            return None;
        }
        Some(
            Diagnostic::error(format!(
                "No *{suffix} files in {dir}; the state of environment \"{}\" manages {managed} object{}",
                self.environment,
                if managed == 1 { "" } else { "s" }
            ))
            .detail("Planning without a configuration would delete every object the state manages. If the configuration is elsewhere, run brickform there (-C DIR); if its files are gone by mistake, restore them.")
            .hint("to delete everything this state manages, run `brickform destroy`"),
        )
    }

    /// Everything `validate` checks: structure, references, cycles, types, expressions,
    /// schemas; no network.
    pub async fn validate(&self) -> Diagnostics {
        let engine = Engine {
            config: std::borrow::Cow::Borrowed(&*self.config),
            registry: self.registry,
            vars: self.vars,
            environment: self.environment.clone(),
            settings: self.settings.clone(),
            settings_diags: self.settings_diags.clone(),
            offline: true,
            presets: std::sync::OnceLock::new(),
            other_states: Default::default(),
            aliases: self.aliases.clone(),
        };
        let state = StateDocument::new(&self.environment);
        let (_, _, mut diags) = engine.build_plan(&state, &PlanRequest::default()).await;
        if self.config.sources.files().next().is_none() {
            diags.push(
                Diagnostic::warning(format!(
                    "No *{} files in {}",
                    crate::lang::load::CONFIG_SUFFIX,
                    self.config.dir.display()
                ))
                .detail("There is no configuration here to validate."),
            );
        }
        diags
    }
}
