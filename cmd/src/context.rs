//! What commands share: the global options, and the steps most of them take in turn —
//! load the configuration, select the environment, resolve variables, start the providers
//! (and the local workspace), connect the state backend (where an environment no block
//! declares must have a state), take the lock, finish what a crash interrupted. Each step
//! prints what went wrong where it finds it, with its source.

use crate::args::{PlanArgs, VarArgs};
use crate::backend::{self, BackendSpec};
use crate::diag;
use crate::failure::{Failure, Said, fail};
use anyhow::anyhow;
use brickform_core::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use brickform_core::engine::Engine;
use brickform_core::engine::inputs::{self, VarInputs, Variables};
use brickform_core::lang::load::{Config, load_dir};
use brickform_core::plan::render_text;
use brickform_core::provider::Registry;
use brickform_core::value::Object;
use brickform_state::{Backend, LocalBackend, StateDocument, recover};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The global options every command runs with.
#[derive(Clone)]
pub struct Ctx {
    pub dir: PathBuf,
    pub environment: Option<String>,
    pub color: bool,
    pub local: bool,
    /// The command makes the selected environment's state on purpose (`convert --state`
    /// writes a new configuration with its state, `state push` a document that names its
    /// environment), so a name no state has yet is no misspelling (see [`require_known`]).
    pub makes_state: bool,
}

impl Ctx {
    pub fn new(cli: &crate::Cli) -> Self {
        Ctx {
            dir: cli.dir.clone(),
            environment: cli.environment.clone(),
            color: !cli.no_color
                && std::env::var_os("NO_COLOR").is_none()
                && std::io::stdout().is_terminal(),
            local: cli.local,
            makes_state: false,
        }
    }

    /// The same options for a command that makes the environment's state on purpose.
    pub fn making_state(&self) -> Ctx {
        Ctx {
            makes_state: true,
            ..self.clone()
        }
    }

    /// The same options for another environment (`apply FILE` takes the plan's, `promote`
    /// plans its `--to`).
    pub fn in_environment(&self, env: &str) -> Ctx {
        Ctx {
            environment: Some(env.to_string()),
            ..self.clone()
        }
    }

    pub fn text_options(&self) -> render_text::TextOptions {
        render_text::TextOptions {
            color: self.color,
            show_unchanged: false,
        }
    }
}

/// Prints diagnostics with their source excerpts.
pub fn print_diags(diags: &Diagnostics, config: &Config) {
    if !diags.is_empty() {
        diag::print(diags, &config.sources);
    }
}

/// Prints `diags` and, when one is an error, fails.
pub fn check(diags: &Diagnostics, config: &Config) -> Result<(), Failure> {
    print_diags(diags, config);
    if diags.has_errors() {
        return Err(Failure::reported());
    }
    Ok(())
}

/// Loads the configuration, failing with rendered diagnostics.
pub fn load(ctx: &Ctx) -> Result<Config, Failure> {
    if !ctx.dir.is_dir() {
        fail!(
            "the configuration directory {} does not exist",
            ctx.dir.display()
        );
    }
    let (config, diags) = load_dir(&ctx.dir);
    check(&diags, &config)?;
    Ok(config)
}

/// The environment the command works in (see `environment::select`); an `--env` that names
/// no declared environment is reported, and fails the command.
pub fn environment(ctx: &Ctx, config: &Config) -> Result<String, Failure> {
    brickform_core::lang::environment::select(config, ctx.environment.as_deref()).map_err(|d| {
        print_diags(&(*d).into(), config);
        Failure::reported()
    })
}

/// The environment a configuration without environment blocks works in when none is asked
/// for; it needs no state to be selected.
const DEFAULT_ENVIRONMENT: &str = "default";

/// Whether only the backend can say that `env` exists: the configuration declares no
/// environments (when it does, `environment` has checked the name against them), and the
/// name is not the implicit one.
fn needs_state(ctx: &Ctx, config: &Config, env: &str) -> bool {
    !ctx.makes_state && config.environments.is_empty() && env != DEFAULT_ENVIRONMENT
}

/// Refuses an environment that neither the configuration declares nor `backend` holds a
/// state of. Without this, `--env prdo` in a configuration without environment blocks would
/// select a fresh, empty state, and apply would create a second copy of every object;
/// `brickform env new NAME` is how a new environment is made on purpose. Call it before
/// anything is written (the lock is a file too).
pub async fn require_known(
    ctx: &Ctx,
    config: &Config,
    env: &str,
    backend: &dyn Backend,
) -> Result<(), Failure> {
    if !needs_state(ctx, config, env) {
        return Ok(());
    }
    let with_state = backend
        .environments()
        .await
        .map_err(|e| anyhow!("cannot list the environments that have a state: {e}"))?;
    if with_state.iter().any(|e| e == env) {
        return Ok(());
    }
    print_diags(&unknown_environment(env, &with_state).into(), config);
    Err(Failure::reported())
}

/// [`require_known`] for a command that does not otherwise reach the state backend (init,
/// graph): it is reached only when the name needs it.
pub async fn require_known_connecting(
    ctx: &Ctx,
    config: &Config,
    env: &str,
) -> Result<(), Failure> {
    if !needs_state(ctx, config, env) {
        return Ok(());
    }
    let access = StateAccess::connect(ctx, config, env).await?;
    require_known(ctx, config, env, access.backend.as_ref()).await
}

/// The error for an environment nothing knows, with the ones that exist.
fn unknown_environment(env: &str, with_state: &[String]) -> Diagnostic {
    let mut known = vec![DEFAULT_ENVIRONMENT];
    known.extend(
        with_state
            .iter()
            .map(String::as_str)
            .filter(|e| *e != DEFAULT_ENVIRONMENT),
    );
    let listed: Vec<String> = known.iter().map(|k| format!("\"{k}\"")).collect();
    Diagnostic::error(format!("There is no environment \"{env}\""))
        .detail(format!(
            "--env (or BRICKFORM_ENV) names \"{env}\", which the configuration does not declare (it has no environment blocks) and the state backend holds no state of. The environments are {}. A new name starts from an empty state, into which apply would create a second copy of every object; to start a new environment on purpose, create it first: brickform env new {env}",
            listed.join(", ")
        ))
        .maybe_hint(did_you_mean(env, known.iter().copied()))
}

/// The variable values given on the command line, in files and in `BRICKFORM_VAR_*`.
pub fn var_inputs(args: &VarArgs, allow_unknown: bool) -> anyhow::Result<VarInputs> {
    let mut vars = Vec::new();
    for v in &args.vars {
        let (k, val) = v
            .split_once('=')
            .ok_or_else(|| anyhow!("invalid --var {v:?}: expected NAME=VALUE"))?;
        vars.push((k.trim().to_string(), val.to_string()));
    }
    Ok(VarInputs {
        files: args.var_files.clone(),
        vars,
        env: Vec::new(),
        allow_unknown,
    }
    .with_process_env())
}

/// Resolves variables, prompting on a terminal for required ones that have no value.
pub fn variables(
    config: &Config,
    args: &VarArgs,
    env: &str,
    allow_unknown: bool,
) -> Result<Variables, Failure> {
    let mut inputs = var_inputs(args, allow_unknown)?;
    if !allow_unknown && args.input && std::io::stdin().is_terminal() {
        for name in inputs::missing_required(config, &inputs, Some(env)) {
            let v = &config.variables[&name];
            eprintln!("var.{name}");
            if let Some(d) = &v.description {
                eprintln!("  {d}");
            }
            eprint!("\n  Enter a value: ");
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            if std::io::stdin().lock().read_line(&mut line).is_ok() {
                inputs.vars.push((
                    name.clone(),
                    line.trim_end_matches(['\n', '\r']).to_string(),
                ));
            }
        }
    }
    let (vars, diags) = inputs::resolve(config, &inputs, Some(env));
    check(&diags, config)?;
    Ok(vars)
}

/// The local workspace lives next to the configuration, in the same format as
/// `brickform local serve --data`.
pub fn local_dir(dir: &Path) -> PathBuf {
    dir.join(".brickform").join("local")
}

/// Where a named local workspace (`host = "local:prod"`) is kept, beside the default one, so
/// one configuration can run dev and prod on two local workspaces.
pub fn named_local_dir(dir: &Path, name: Option<&str>) -> PathBuf {
    match name {
        None => local_dir(dir),
        Some(n) => dir.join(".brickform").join(format!("local-{n}")),
    }
}

/// The literal `host` of a databricks provider block, if it is one.
fn literal_host(body: &hcl_edit::structure::Body) -> Option<String> {
    match &body.get_attribute("host")?.value {
        hcl_edit::expr::Expression::String(s) => Some(s.value().clone()),
        _ => None,
    }
}

/// Which local workspace the selected environment's provider settings ask for: `host =
/// "local"` is the default one, `host = "local:NAME"` a named one; the environment's
/// provider block wins over the top-level one. `None` when the host is not local.
fn wanted_local(config: &Config, env: &str) -> Option<Option<String>> {
    let (settings, _) = brickform_core::lang::environment::resolve(
        config,
        env,
        // Only the provider blocks are read here, before the providers exist.
        &Registry::default(),
    );
    let env_host = settings
        .providers
        .get("databricks")
        .and_then(|b| literal_host(&b.body.body));
    let host = env_host.or_else(|| {
        config
            .providers
            .get("databricks")
            .and_then(|p| literal_host(&p.body.body))
    })?;
    match host.as_str() {
        "local" => Some(None),
        h => h.strip_prefix("local:").map(|n| Some(n.to_string())),
    }
}

/// Set to a whole number, turns on the local workspace's `normalise_answers` with that seed
/// (answers rewritten as the real service rewrites what it is sent), for `host = "local"`,
/// `--local` and `brickform local serve`: how a test proves that plans survive rewritings
/// nobody listed.
pub const NORMALISE_SEED_VAR: &str = "BRICKFORM_LOCAL_NORMALISE_SEED";

/// The behaviours and `normalise_answers` seed of a local workspace this process starts: the
/// defaults, with `normalise_answers` on when [`NORMALISE_SEED_VAR`] is set.
pub fn local_behaviours() -> anyhow::Result<(brickform_emulator::Behaviours, u64)> {
    let defaults = brickform_emulator::Behaviours::default();
    let Some(raw) = std::env::var_os(NORMALISE_SEED_VAR) else {
        return Ok((defaults, 0));
    };
    let seed = raw
        .to_str()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .ok_or_else(|| {
            anyhow!(
                "{NORMALISE_SEED_VAR} must be a whole number (the seed), not {:?}",
                raw.to_string_lossy()
            )
        })?;
    Ok((
        defaults.with(brickform_emulator::Behaviour::NormaliseAnswers),
        seed,
    ))
}

pub fn databricks(
    local: Option<(String, String)>,
) -> Arc<brickform_databricks::DatabricksProvider> {
    Arc::new(brickform_databricks::DatabricksProvider::new(
        brickform_databricks::Options {
            local,
            secrets: Arc::new(brickform_databricks::client::KeyringStore),
            env: Arc::new(|k: &str| std::env::var(k).ok()),
        },
    ))
}

/// Providers for commands that do not talk to a workspace (validate, graph, schema).
pub fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(databricks(None));
    r
}

/// The providers the binary ships, and the local workspace when the command runs against
/// it (kept alive for the command's duration).
pub struct Providers {
    pub registry: Registry,
    pub databricks: Arc<brickform_databricks::DatabricksProvider>,
    _local: Option<brickform_emulator::RunningEmulator>,
}

impl Providers {
    /// Providers for commands that do talk to a workspace, starting the local workspace
    /// when asked for.
    pub async fn start(ctx: &Ctx, config: &Config, env: &str) -> anyhow::Result<Providers> {
        let mut registry = Registry::new();
        let mut running = None;
        let mut local = None;
        let wanted = wanted_local(config, env);
        if ctx.local || wanted.is_some() {
            let dir = named_local_dir(&ctx.dir, wanted.flatten().as_deref());
            let (behaviours, normalise_seed) = local_behaviours()?;
            let cfg = brickform_emulator::EmulatorConfig {
                data_dir: Some(dir.clone()),
                behaviours,
                normalise_seed,
                ..Default::default()
            };
            let emu = brickform_emulator::Emulator::start(cfg)
                .await
                .map_err(|e| {
                    anyhow!("cannot start the local workspace in {}: {e}", dir.display())
                })?;
            local = Some((emu.url(), "local".to_string()));
            running = Some(emu);
        }
        let provider = databricks(local);
        registry.register(provider.clone());
        Ok(Providers {
            registry,
            databricks: provider,
            _local: running,
        })
    }

    /// The Databricks client, configured as the provider would be for `config`.
    async fn workspace_client(
        &self,
        config: &Config,
        vars: &Variables,
        env: &str,
    ) -> Result<brickform_databricks::client::Client, Failure> {
        let shared = self.databricks.shared();
        if let Ok(c) = shared.client() {
            return Ok(c);
        }
        let engine = Engine::new(config, &self.registry, vars, env);
        let diags = engine.configure(&StateDocument::new(env)).await;
        if diags.has_errors() {
            print_diags(&diags, config);
            fail!("cannot connect to the workspace that keeps the state (backend \"volume\")");
        }
        if let Ok(c) = shared.client() {
            return Ok(c);
        }
        // Nothing in the configuration uses the provider, so it was not configured: connect
        // with what the environment and profile say.
        brickform_core::provider::Provider::configure(self.databricks.as_ref(), &Object::default())
            .await
            .map_err(|e| {
                anyhow!(
                    "cannot connect to the workspace that keeps the state (backend \"volume\"): {}",
                    e.message
                )
            })?;
        Ok(shared.client().map_err(|e| anyhow!("{}", e.message))?)
    }

    /// The backend `spec` names, connected: a volume through this provider's connection, so
    /// these providers (and the local workspace they may run) must outlive it.
    pub async fn backend(
        &self,
        spec: &BackendSpec,
        ctx: &Ctx,
        config: &Config,
        vars: &Variables,
        env: &str,
    ) -> Result<Arc<dyn Backend>, Failure> {
        let client = match spec {
            BackendSpec::Local => None,
            BackendSpec::Volume { .. } => Some(self.workspace_client(config, vars, env).await?),
        };
        Ok(backend::connect(spec, &ctx.dir, client))
    }
}

/// A configuration opened to read the workspace and its state without the state's lock
/// (commands that change no state: `run`, `adopt`): its environment, variables, providers
/// (the local workspace among them, kept running while this lives), its backend and the
/// environment's state as stored.
pub struct Reading {
    pub config: Config,
    pub env: String,
    pub vars: Variables,
    pub providers: Providers,
    pub backend: Arc<dyn Backend>,
    /// `None` when the environment has no state yet.
    pub doc: Option<brickform_state::StateDocument>,
}

impl Reading {
    pub async fn open(ctx: &Ctx, args: &VarArgs) -> Result<Reading, Failure> {
        let config = load(ctx)?;
        let env = environment(ctx, &config)?;
        let vars = variables(&config, args, &env, false)?;
        let providers = Providers::start(ctx, &config, &env).await?;
        let spec = backend_spec(&config)?;
        let backend = providers.backend(&spec, ctx, &config, &vars, &env).await?;
        require_known(ctx, &config, &env, backend.as_ref()).await?;
        let doc = backend.load(&env).await.said()?;
        Ok(Reading {
            config,
            env,
            vars,
            providers,
            backend,
            doc,
        })
    }

    pub fn engine(&self) -> Engine<'_> {
        Engine::new(
            &self.config,
            &self.providers.registry,
            &self.vars,
            &self.env,
        )
    }
}

/// The configuration's backend block, checked; problems are printed.
pub fn backend_spec(config: &Config) -> Result<BackendSpec, Failure> {
    BackendSpec::of(config).map_err(|d| {
        print_diags(&d, config);
        Failure::reported()
    })
}

/// The selected environment of a loaded configuration, with its variables, its providers
/// and its state backend connected.
pub struct Environment {
    pub name: String,
    pub config: Config,
    pub vars: Variables,
    pub backend: Arc<dyn Backend>,
    pub providers: Providers,
}

impl Environment {
    /// The engine over this environment.
    pub fn engine(&self) -> Engine<'_> {
        Engine::new(
            &self.config,
            &self.providers.registry,
            &self.vars,
            &self.name,
        )
        .with_backend(self.backend.clone())
    }
}

/// An environment's state opened for a command that plans: under its lock, recovered from
/// its log.
pub struct Session {
    /// Declared before `env`: a volume lock is released through the providers' connection
    /// (and the local workspace they may run), so it must be dropped first.
    _lock: Box<dyn brickform_state::StateLock>,
    pub doc: StateDocument,
    pub journal: brickform_state::Journal,
    /// Operations a crash interrupted; resolved by [`Session::finish_interrupted`].
    unresolved: Vec<brickform_state::Intent>,
    /// Whether the state was on disk (or has been saved) when the command started.
    pub saved: bool,
    pub env: Environment,
}

impl Session {
    /// Loads, selects the environment, resolves variables, starts the providers, connects
    /// the backend, takes the lock for `operation` and reads the state.
    pub async fn open(ctx: &Ctx, args: &PlanArgs, operation: &str) -> Result<Session, Failure> {
        let config = load(ctx)?;
        let name = environment(ctx, &config)?;
        let vars = variables(&config, &args.vars, &name, false)?;
        let providers = Providers::start(ctx, &config, &name).await?;
        let spec = backend_spec(&config)?;
        let backend = providers.backend(&spec, ctx, &config, &vars, &name).await?;
        require_known(ctx, &config, &name, backend.as_ref()).await?;
        let timeout = crate::duration::parse(&args.lock_timeout)?;
        let lock = backend::lock_state(&backend, &name, operation, timeout).await?;
        let rec = recover(backend.clone(), &name)
            .await
            .map_err(|e| anyhow!("cannot load the state of environment \"{name}\": {e}"))?;
        let mut doc = rec.document;
        // A new state is saved before anything can be written to its log (the lineage that
        // ownership tags carry must be on disk); a plan writes nothing, so it saves nothing.
        if !rec.existed && operation != "plan" {
            backend
                .save(&name, &mut doc)
                .await
                .map_err(|e| anyhow!("cannot create the state of environment \"{name}\": {e}"))?;
        }
        Ok(Session {
            _lock: lock,
            doc,
            journal: rec.journal,
            unresolved: rec.unresolved,
            saved: rec.existed || operation != "plan",
            env: Environment {
                name,
                config,
                vars,
                backend,
                providers,
            },
        })
    }

    /// Finishes what a crash interrupted (see the engine's recovery), then saves.
    pub async fn finish_interrupted(&mut self) -> Result<(), Failure> {
        if self.unresolved.is_empty() {
            return Ok(());
        }
        let engine = self.env.engine();
        match engine
            .recover_interrupted(&mut self.doc, &self.journal, &self.unresolved)
            .await
        {
            Ok(lines) => {
                for l in lines {
                    eprintln!("Recovered: {l}");
                }
                self.unresolved.clear();
                self.journal
                    .checkpoint(&mut self.doc)
                    .await
                    .map_err(|e| anyhow!("cannot save the recovered state: {e}"))?;
                Ok(())
            }
            Err(diags) => {
                print_diags(&diags, &self.env.config);
                Err(Failure::reported())
            }
        }
    }
}

/// The backend for commands that read or edit the state without planning, with what keeps
/// it reachable.
pub struct StateAccess {
    pub env: String,
    pub backend: Arc<dyn Backend>,
    pub providers: Option<Providers>,
}

impl StateAccess {
    /// Connects the selected environment's backend, refusing an environment that does not
    /// exist (see [`require_known`]).
    pub async fn open(ctx: &Ctx) -> Result<StateAccess, Failure> {
        let (config, _) = load_dir(&ctx.dir);
        let env = environment(ctx, &config)?;
        let access = StateAccess::connect(ctx, &config, &env).await?;
        require_known(ctx, &config, &env, access.backend.as_ref()).await?;
        Ok(access)
    }

    /// Connects the backend as environment `env` reaches it, whether or not `env` exists
    /// (`env new` and `env rename` make it exist). The local backend needs neither
    /// variables nor providers; a volume is reached with the provider settings as far as
    /// they are known.
    pub async fn connect(ctx: &Ctx, config: &Config, env: &str) -> Result<StateAccess, Failure> {
        let env = env.to_string();
        let spec = backend_spec(config)?;
        if spec == BackendSpec::Local {
            return Ok(StateAccess {
                env,
                backend: Arc::new(LocalBackend::new(&ctx.dir)),
                providers: None,
            });
        }
        let vars = variables(config, &VarArgs::default(), &env, true)?;
        let providers = Providers::start(ctx, config, &env).await?;
        let backend = providers.backend(&spec, ctx, config, &vars, &env).await?;
        Ok(StateAccess {
            env,
            backend,
            providers: Some(providers),
        })
    }

    /// The state document, if the environment has one.
    pub async fn load(&self) -> Result<Option<StateDocument>, Failure> {
        Ok(self.backend.load(&self.env).await.said()?)
    }
}
