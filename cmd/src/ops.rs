//! Command implementations: each loads the configuration, resolves variables, opens the
//! environment's state under its lock, and hands the work to the engine.

use crate::saved::{self, SavedPlan};
use crate::{Cli, PlanArgs, StateCommand, VarArgs, diag};
use anyhow::{Context, anyhow, bail};
use brickform_core::engine::apply::{ApplyEvent, ApplyOptions};
use brickform_core::engine::inputs::{self, VarInputs, Variables};
use brickform_core::engine::{Engine, PlanRequest, Planned};
use brickform_core::lang::diagnostics::Diagnostics;
use brickform_core::lang::load::{Config, load_dir};
use brickform_core::plan::{Action, PlanMode, render_json, render_markdown, render_text};
use brickform_core::provider::Registry;
use brickform_core::value::Value;
use brickform_state::{Backend, LocalBackend, StateDocument, recover};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub struct Ctx {
    pub dir: PathBuf,
    pub environment: Option<String>,
    pub color: bool,
    pub local: bool,
}

impl Ctx {
    pub fn new(cli: &Cli) -> Self {
        Ctx {
            dir: cli.dir.clone(),
            environment: cli.environment.clone(),
            color: !cli.no_color
                && std::env::var_os("NO_COLOR").is_none()
                && std::io::stdout().is_terminal(),
            local: cli.local,
        }
    }

    /// The backend the configuration's `backend` block names, connected (a volume through
    /// `providers`' connection, so they must outlive it).
    pub(crate) async fn backend(
        &self,
        config: &Config,
        vars: &Variables,
        env: &str,
        providers: &Providers,
    ) -> anyhow::Result<Arc<dyn Backend>> {
        let spec = crate::backend::BackendSpec::of(config).map_err(|d| {
            print_diags(&d, config);
            anyhow!("invalid backend block")
        })?;
        crate::backend::connect(&spec, self, config, vars, env, providers).await
    }
}

/// The providers the binary ships, and the local workspace when the command runs against
/// it (kept alive for the command's duration).
pub(crate) struct Providers {
    pub registry: Registry,
    pub databricks: Arc<brickform_databricks::DatabricksProvider>,
    _local: Option<brickform_emulator::RunningEmulator>,
}

/// The local workspace lives next to the configuration, in the same format as
/// `brickform local serve --data`.
pub fn local_dir(dir: &std::path::Path) -> PathBuf {
    dir.join(".brickform").join("local")
}

/// Where a named local workspace (`host = "local:prod"`) is kept, beside the default one, so
/// one configuration can run dev and prod on two local workspaces.
pub fn named_local_dir(dir: &std::path::Path, name: Option<&str>) -> PathBuf {
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
        &brickform_core::provider::Registry::default(),
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

fn databricks(local: Option<(String, String)>) -> Arc<brickform_databricks::DatabricksProvider> {
    Arc::new(brickform_databricks::DatabricksProvider::new(
        brickform_databricks::Options {
            local,
            secrets: Arc::new(brickform_databricks::client::KeyringStore),
            env: Arc::new(|k: &str| std::env::var(k).ok()),
        },
    ))
}

/// Providers for commands that do not talk to a workspace (validate, graph).
pub(crate) fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(databricks(None));
    r
}

/// Providers for commands that do, starting the local workspace when asked for.
pub(crate) async fn providers(ctx: &Ctx, config: &Config, env: &str) -> anyhow::Result<Providers> {
    let mut registry = Registry::new();
    let mut running = None;
    let mut local = None;
    let wanted = wanted_local(config, env);
    if ctx.local || wanted.is_some() {
        let dir = named_local_dir(&ctx.dir, wanted.flatten().as_deref());
        let cfg = brickform_emulator::EmulatorConfig {
            data_dir: Some(dir.clone()),
            ..Default::default()
        };
        let emu = brickform_emulator::Emulator::start(cfg)
            .await
            .map_err(|e| anyhow!("cannot start the local workspace in {}: {e}", dir.display()))?;
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

/// Loads the configuration, failing with rendered diagnostics.
pub(crate) fn load(ctx: &Ctx) -> Result<Config, ExitCode> {
    if !ctx.dir.is_dir() {
        eprintln!(
            "Error: the configuration directory {} does not exist",
            ctx.dir.display()
        );
        return Err(ExitCode::from(1));
    }
    let (config, diags) = load_dir(&ctx.dir);
    if !diags.is_empty() {
        diag::print(&diags, &config.sources);
    }
    if diags.has_errors() {
        return Err(ExitCode::from(1));
    }
    Ok(config)
}

/// The environment the command works in (see `environment::select`); an `--env` that names
/// no declared environment is reported, and fails the command.
pub(crate) fn environment(ctx: &Ctx, config: &Config) -> Result<String, ExitCode> {
    brickform_core::lang::environment::select(config, ctx.environment.as_deref()).map_err(|d| {
        print_diags(&(*d).into(), config);
        ExitCode::from(1)
    })
}

pub(crate) fn var_inputs(args: &VarArgs, allow_unknown: bool) -> Result<VarInputs, anyhow::Error> {
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
pub(crate) fn variables(
    config: &Config,
    args: &VarArgs,
    env: &str,
    allow_unknown: bool,
) -> Result<Variables, ExitCode> {
    let mut inputs = match var_inputs(args, allow_unknown) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("Error: {e}");
            return Err(ExitCode::from(1));
        }
    };
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
    if !diags.is_empty() {
        diag::print(&diags, &config.sources);
    }
    if diags.has_errors() {
        return Err(ExitCode::from(1));
    }
    Ok(vars)
}

pub(crate) fn print_diags(diags: &Diagnostics, config: &Config) {
    if !diags.is_empty() {
        diag::print(diags, &config.sources);
    }
}

pub async fn init(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let config = match load(ctx) {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let env = match environment(ctx, &config) {
        Ok(e) => e,
        Err(code) => return Ok(code),
    };
    let spec = match crate::backend::BackendSpec::of(&config) {
        Ok(spec) => spec,
        Err(diags) => {
            print_diags(&diags, &config);
            return Ok(ExitCode::from(1));
        }
    };
    let state_dir = ctx.dir.join(".brickform").join("state");
    if spec == crate::backend::BackendSpec::Local {
        std::fs::create_dir_all(&state_dir)
            .with_context(|| format!("creating {}", state_dir.display()))?;
    }
    println!(
        "brickform has been initialized in {} (environment \"{env}\").",
        ctx.dir.display()
    );
    match spec {
        crate::backend::BackendSpec::Volume { path, .. } => {
            println!("State is kept in the volume directory {path}.")
        }
        crate::backend::BackendSpec::Local => {
            println!("State is kept in {}.", state_dir.display())
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn validate(ctx: &Ctx, args: &VarArgs, json: bool) -> anyhow::Result<ExitCode> {
    let (config, mut diags) = load_dir(&ctx.dir);
    let registry = registry();
    let env = brickform_core::lang::environment::select(&config, ctx.environment.as_deref());
    if let Err(d) = &env {
        diags.push((**d).clone());
    }
    if let (false, Ok(env)) = (diags.has_errors(), env) {
        let inputs = var_inputs(args, true)?;
        let (vars, vd) = inputs::resolve(&config, &inputs, Some(&env));
        diags.extend(vd);
        let engine = Engine::new(&config, &registry, &vars, &env);
        diags.extend(engine.validate().await);
        if let Err(d) = crate::backend::BackendSpec::of(&config) {
            diags.extend(d);
        }
    }
    diags.sort();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&diag::to_json(&diags, &config.sources))?
        );
    } else {
        print_diags(&diags, &config);
        if !diags.has_errors() {
            println!("Success! The configuration is valid.");
        }
    }
    Ok(if diags.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub fn fmt(ctx: &Ctx, check: bool) -> anyhow::Result<ExitCode> {
    let (files, diags) = brickform_core::lang::load::read_config_files(&ctx.dir);
    diag::print(&diags, &Default::default());
    let mut changed = Vec::new();
    let mut failed = diags.has_errors();
    for file in files {
        let (f, text) = (file.path, file.text);
        match brickform_core::lang::fmt::format_source(&text) {
            Ok(out) if out != text => {
                changed.push(f.clone());
                if !check {
                    std::fs::write(&f, out)?;
                }
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("Error: {}: {e}", f.display());
                failed = true;
            }
        }
    }
    for f in &changed {
        println!(
            "{}",
            f.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
    }
    Ok(if failed {
        ExitCode::from(2)
    } else if check && !changed.is_empty() {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

pub(crate) fn parse_duration(s: &str) -> anyhow::Result<Duration> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| anyhow!("invalid duration {s:?}; use forms like 30s or 2m"))?;
    Ok(match unit {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" => Duration::from_secs(n * 60),
        _ => bail!("invalid duration {s:?}; use forms like 30s or 2m"),
    })
}

/// `30s`, `2m`, `1m30s`: a duration as `--lock-timeout` takes it.
pub(crate) fn format_duration(d: Duration) -> String {
    let (m, s) = (d.as_secs() / 60, d.as_secs() % 60);
    match (m, s) {
        (0, 0) => format!("{}ms", d.as_millis()),
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s}s"),
    }
}

struct Session {
    config: Config,
    vars: Variables,
    env: String,
    backend: Arc<dyn Backend>,
    _lock: Box<dyn brickform_state::StateLock>,
    doc: StateDocument,
    journal: brickform_state::Journal,
    /// Operations a crash interrupted; resolved once providers are configured.
    unresolved: Vec<brickform_state::Intent>,
    /// Whether the state was on disk (or has been saved) when the command started.
    saved: bool,
    /// Declared after the lock: a volume lock is released through their connection (and the
    /// local workspace they may run), so they must be dropped after it.
    providers: Providers,
}

/// Finishes what a crash interrupted (see the engine's recovery), then saves.
async fn finish_interrupted(
    engine: &Engine<'_>,
    doc: &mut StateDocument,
    journal: &brickform_state::Journal,
    unresolved: &mut Vec<brickform_state::Intent>,
) -> Result<(), ExitCode> {
    if unresolved.is_empty() {
        return Ok(());
    }
    match engine.recover_interrupted(doc, journal, unresolved).await {
        Ok(lines) => {
            for l in lines {
                eprintln!("Recovered: {l}");
            }
            unresolved.clear();
            if let Err(e) = journal.checkpoint(doc).await {
                eprintln!("Error: cannot save the recovered state: {e}");
                return Err(ExitCode::from(1));
            }
            Ok(())
        }
        Err(diags) => {
            print_diags(&diags, engine.config);
            Err(ExitCode::from(1))
        }
    }
}

async fn open(ctx: &Ctx, args: &PlanArgs, operation: &str) -> Result<Session, ExitCode> {
    let config = load(ctx)?;
    let env = environment(ctx, &config)?;
    let vars = variables(&config, &args.vars, &env, false)?;
    let fail = |e: anyhow::Error| {
        eprintln!("Error: {e:#}");
        ExitCode::from(1)
    };
    let providers = providers(ctx, &config, &env).await.map_err(fail)?;
    let backend = ctx
        .backend(&config, &vars, &env, &providers)
        .await
        .map_err(fail)?;
    let timeout = match parse_duration(&args.lock_timeout) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("Error: {e}");
            return Err(ExitCode::from(1));
        }
    };
    let lock = crate::backend::lock_state(&backend, &env, operation, timeout).await?;
    let rec = match recover(backend.clone(), &env).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("Error: cannot load the state of environment \"{env}\": {e}");
            return Err(ExitCode::from(1));
        }
    };
    let mut doc = rec.document;
    let unresolved = rec.unresolved.clone();
    // A new state is saved before anything can be written to its log (the lineage that
    // ownership tags carry must be on disk); a plan writes nothing, so it saves nothing.
    if !rec.existed
        && operation != "plan"
        && let Err(e) = backend.save(&env, &mut doc).await
    {
        eprintln!("Error: cannot create the state of environment \"{env}\": {e}");
        return Err(ExitCode::from(1));
    }
    Ok(Session {
        config,
        vars,
        env,
        backend,
        _lock: lock,
        doc,
        journal: rec.journal,
        unresolved,
        saved: rec.existed || operation != "plan",
        providers,
    })
}

fn request(args: &PlanArgs, destroy: bool) -> PlanRequest {
    PlanRequest {
        mode: if destroy || args.destroy {
            PlanMode::Destroy
        } else if args.refresh_only {
            PlanMode::RefreshOnly
        } else {
            PlanMode::Normal
        },
        refresh: args.refresh,
        targets: args.targets.clone(),
        replace: args.replace.clone(),
        parallelism: args.parallelism,
        allow_destroy: args.allow_destroy,
    }
}

pub(crate) fn text_options(ctx: &Ctx) -> render_text::TextOptions {
    render_text::TextOptions {
        color: ctx.color,
        show_unchanged: false,
    }
}

fn variables_fingerprint(doc: &StateDocument, vars: &Variables) -> String {
    let j = Value::Object(vars.values.clone()).to_json();
    doc.fingerprint(&j)
}

/// Opens the environment's state and plans it as `plan` does; diagnostics are printed.
async fn fresh_plan(ctx: &Ctx, args: &PlanArgs) -> Result<(Session, Planned), ExitCode> {
    let mut s = open(ctx, args, "plan").await?;
    let p = &s.providers;
    let engine =
        Engine::new(&s.config, &p.registry, &s.vars, &s.env).with_backend(s.backend.clone());
    finish_interrupted(&engine, &mut s.doc, &s.journal, &mut s.unresolved).await?;
    let (planned, diags) = engine.plan(&s.doc, &request(args, false)).await;
    print_diags(&diags, &s.config);
    match planned {
        Some(planned) => Ok((s, planned)),
        None => Err(ExitCode::from(1)),
    }
}

/// The plan of `ctx`'s environment for `promote`, with the user the development presets
/// would name and the environment's variables. `None` when planning failed (diagnostics
/// printed).
pub(crate) async fn plan_for_promote(
    ctx: &Ctx,
    args: &PlanArgs,
) -> anyhow::Result<Option<(Planned, Option<String>, Variables)>> {
    let Ok((s, planned)) = fresh_plan(ctx, args).await else {
        return Ok(None);
    };
    // Who would get the development presets: the user the target's provider acts as.
    let mut user = None;
    for provider in &s.providers.registry.providers {
        if let Ok(Some(u)) = provider.current_user().await {
            user = Some(u);
            break;
        }
    }
    Ok(Some((planned, user, s.vars.clone())))
}

pub async fn plan(
    ctx: &Ctx,
    args: &PlanArgs,
    out: Option<PathBuf>,
    json: bool,
    markdown: bool,
    detailed: bool,
) -> anyhow::Result<ExitCode> {
    let (mut s, planned) = match fresh_plan(ctx, args).await {
        Ok(done) => done,
        Err(code) => return Ok(code),
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&render_json::render(&planned.plan))?
        );
    } else if markdown {
        println!("{}", render_markdown::render(&planned.plan));
    } else {
        print!("{}", render_text::render(&planned.plan, &text_options(ctx)));
    }
    if let Some(path) = out {
        // A saved plan names the state's lineage, so that state must exist on disk.
        if !s.saved {
            s.backend
                .save(&s.env, &mut s.doc)
                .await
                .map_err(|e| anyhow!("saving state: {e}"))?;
        }
        let saved = SavedPlan {
            format: saved::FORMAT.into(),
            format_version: saved::FORMAT_VERSION,
            brickform_version: env!("CARGO_PKG_VERSION").into(),
            environment: s.env.clone(),
            lineage: s.doc.lineage().to_string(),
            serial: s.doc.serial(),
            config_hash: saved::config_hash(&s.config),
            variables: variables_fingerprint(&s.doc, &s.vars),
            targets: args.targets.clone(),
            replace: args.replace.clone(),
            destroy: args.destroy,
            refresh_only: args.refresh_only,
            allow_destroy: args.allow_destroy,
            plan: planned.plan.clone(),
        };
        write_private(&path, serde_json::to_vec_pretty(&saved)?.as_slice())?;
        if !json && !markdown {
            println!(
                "\nSaved the plan to: {}\n\nTo perform exactly these actions, run:\n  brickform apply \"{}\"",
                path.display(),
                path.display()
            );
        }
    } else if !json && !markdown && planned.plan.has_changes() {
        println!(
            "\nNote: You didn't use the -out option to save this plan, so brickform can't guarantee to take exactly these actions if you run \"brickform apply\" now."
        );
    }
    Ok(if detailed && planned.plan.has_changes() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

fn write_private(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    f.write_all(bytes)?;
    f.sync_all()?;
    Ok(())
}

fn confirm(destroy: bool) -> bool {
    if destroy {
        println!(
            "\nDo you really want to destroy all resources?\n  brickform will destroy all your managed infrastructure, as shown above.\n  There is no undo. Only 'yes' will be accepted to confirm.\n"
        );
    } else {
        println!(
            "\nDo you want to perform these actions?\n  brickform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n"
        );
    }
    print!("  Enter a value: ");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).is_ok() && line.trim() == "yes"
}

fn verb(action: Action) -> (&'static str, &'static str, &'static str) {
    match action {
        Action::Create => ("Creating...", "Creation complete", "Creation"),
        Action::Update => ("Modifying...", "Modifications complete", "Modification"),
        Action::Delete => ("Destroying...", "Destruction complete", "Destruction"),
        Action::DeleteThenCreate | Action::CreateThenDelete => {
            ("Replacing...", "Replacement complete", "Replacement")
        }
        Action::Read => ("Reading...", "Read complete", "Read"),
        Action::Forget => ("Removing from state...", "Removal complete", "Removal"),
        Action::NoOp => ("Importing...", "Import complete", "Import"),
    }
}

pub async fn apply(
    ctx: &Ctx,
    args: &PlanArgs,
    plan_file: Option<PathBuf>,
    auto_approve: bool,
    destroy: bool,
) -> anyhow::Result<ExitCode> {
    let saved: Option<SavedPlan> = match &plan_file {
        Some(p) => Some(saved::read(p)?),
        None => None,
    };
    let mut args = args.clone();
    let ctx_env;
    if let (Some(sp), Some(asked)) = (&saved, &ctx.environment)
        && asked != &sp.environment
    {
        eprintln!(
            "Error: the plan was made for environment \"{}\", not \"{asked}\"; it cannot be applied there.",
            sp.environment
        );
        return Ok(ExitCode::from(1));
    }
    let ctx = if let Some(sp) = &saved {
        args.targets = sp.targets.clone();
        args.replace = sp.replace.clone();
        args.destroy = sp.destroy;
        args.refresh_only = sp.refresh_only;
        args.allow_destroy = sp.allow_destroy;
        ctx_env = Ctx {
            environment: Some(sp.environment.clone()),
            ..ctx.clone()
        };
        &ctx_env
    } else {
        ctx
    };
    let mut s = match open(ctx, &args, if destroy { "destroy" } else { "apply" }).await {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    if let Some(sp) = &saved {
        let problem = if sp.lineage != s.doc.lineage().to_string() {
            Some("Saved plan does not match the given state: the plan was created for a different state (its lineage differs). It cannot be applied here.".to_string())
        } else if sp.serial != s.doc.serial() {
            Some("Saved plan is stale: the given plan file can no longer be applied because the state was changed by another operation after the plan was created. Create a new plan.".to_string())
        } else if sp.config_hash != saved::config_hash(&s.config) {
            Some("Saved plan is stale: the configuration files changed after the plan was created. Create a new plan.".to_string())
        } else if sp.variables != variables_fingerprint(&s.doc, &s.vars) {
            Some("Saved plan is stale: the variable values differ from those the plan was created with. Create a new plan.".to_string())
        } else {
            None
        };
        if let Some(p) = problem {
            eprintln!("Error: {p}");
            return Ok(ExitCode::from(1));
        }
    }
    let p = &s.providers;
    let engine =
        Engine::new(&s.config, &p.registry, &s.vars, &s.env).with_backend(s.backend.clone());
    if let Err(code) = finish_interrupted(&engine, &mut s.doc, &s.journal, &mut s.unresolved).await
    {
        return Ok(code);
    }
    let req = request(&args, destroy);
    let (planned, diags) = engine.plan(&s.doc, &req).await;
    print_diags(&diags, &s.config);
    let Some(planned): Option<Planned> = planned else {
        return Ok(ExitCode::from(1));
    };
    if let Some(sp) = &saved {
        // The same actions, and the same values for every field they change (what counts
        // is decided in brickform_core::plan::saved).
        let differing = brickform_core::plan::saved::differing_changes(&sp.plan, &planned.plan);
        if !differing.is_empty() {
            let shown: Vec<&str> = differing.iter().take(5).map(|a| a.as_str()).collect();
            let more = differing.len().saturating_sub(shown.len());
            eprintln!(
                "Error: Saved plan is stale: the live objects changed since the plan was created, so its actions no longer hold. Create a new plan.\n  Planned differently now: {}{}.\n  (Files the configuration reads, such as a CSV or a notebook source, count too.)",
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
            return Ok(ExitCode::from(1));
        }
    } else {
        print!("{}", render_text::render(&planned.plan, &text_options(ctx)));
    }
    let has_changes = planned.plan.has_changes();
    if !has_changes
        && planned
            .plan
            .outputs
            .iter()
            .all(|o| o.action == Action::NoOp)
    {
        return Ok(ExitCode::SUCCESS);
    }
    if saved.is_none() && !auto_approve && has_changes {
        if !std::io::stdin().is_terminal() {
            eprintln!(
                "Error: No confirmation given. Use --auto-approve to apply without a prompt, or run in a terminal."
            );
            return Ok(ExitCode::from(1));
        }
        if !confirm(destroy) {
            println!("\nApply cancelled.");
            return Ok(ExitCode::from(1));
        }
    }
    println!();
    let cancel = CancellationToken::new();
    {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!(
                    "\nInterrupt received.\nPlease wait for brickform to exit or data loss may occur.\nGracefully shutting down..."
                );
                cancel.cancel();
            }
        });
    }
    let on_event = Arc::new(|e: ApplyEvent| match e {
        ApplyEvent::Started {
            address,
            action,
            id,
        } => {
            let id = id.map(|i| format!(" [id={i}]")).unwrap_or_default();
            println!(
                "{address}: {}{}",
                verb(action).0,
                if action == Action::Create {
                    String::new()
                } else {
                    id
                }
            );
        }
        ApplyEvent::StillRunning {
            address,
            action,
            elapsed,
        } => println!(
            "{address}: Still {}... [{}s elapsed]",
            verb(action).0.trim_end_matches("...").to_lowercase(),
            elapsed.as_secs()
        ),
        ApplyEvent::Finished {
            address,
            action,
            id,
            elapsed,
        } => {
            let id = id.map(|i| format!(" [id={i}]")).unwrap_or_default();
            println!(
                "{address}: {} after {}s{id}",
                verb(action).1,
                elapsed.as_secs()
            );
        }
        // The error itself is printed once, with what to do, when the apply ends.
        ApplyEvent::Failed {
            address, action, ..
        } => {
            eprintln!("{address}: {} failed", verb(action).2)
        }
        ApplyEvent::Skipped { address, because } => {
            eprintln!("{address}: skipped: {because}")
        }
    });
    let opts = ApplyOptions {
        parallelism: args.parallelism,
        cancel,
        on_event,
    };
    let (mut doc, report) = engine.apply(&planned, s.doc, s.journal, opts).await;
    s.backend
        .save(&s.env, &mut doc)
        .await
        .map_err(|e| anyhow!("saving state: {e}"))?;
    // Calls whose outcome is unknown stay in the log for the next run to resolve.
    if report.unresolved == 0 {
        let _ = s.backend.wal_truncate(&s.env).await;
    }
    if !report.failed.is_empty() {
        eprintln!();
    }
    for (addr, failure) in &report.failed {
        print_diags(&failure.to_diagnostics(addr, &s.config), &s.config);
    }
    if !report.failed.is_empty() || report.interrupted {
        let what = if report.interrupted {
            "interrupted"
        } else {
            "failed"
        };
        // "Run it again" finishes an interrupted or temporarily failed apply; a
        // configuration the service refused needs changing first.
        let next = if report.retry_may_help() {
            "run the command again to finish"
        } else {
            "fix what the errors above say, then run the command again"
        };
        println!(
            "\n{} {what}. Resources: {} added, {} changed, {} destroyed; {} failed, {} skipped. State was saved: {next}.",
            if destroy { "Destroy" } else { "Apply" },
            report.added,
            report.changed,
            report.destroyed,
            report.failed.len(),
            report.skipped.len()
        );
    } else if destroy {
        let left = doc.resources().len();
        println!(
            "\nDestroy complete! {} destroyed, {left} left behind.",
            report.destroyed
        );
    } else {
        let imported = if report.imported > 0 {
            format!("{} imported, ", report.imported)
        } else {
            String::new()
        };
        println!(
            "\nApply complete! Resources: {imported}{} added, {} changed, {} destroyed.",
            report.added, report.changed, report.destroyed
        );
    }
    if let Some(why) = &report.stopped {
        eprintln!(
            "The {} stopped: {why}.",
            if destroy { "destroy" } else { "apply" }
        );
    }
    if !report.skipped.is_empty() {
        let why = if report.interrupted {
            "Not started (interrupted)"
        } else if report.stopped.is_some() {
            "Not started (stopped)"
        } else {
            "Skipped because a dependency failed"
        };
        println!("{why}: {}", report.skipped.join(", "));
    }
    if !destroy && !report.outputs.is_empty() {
        println!("\nOutputs:\n");
        for (name, v, sensitive) in &report.outputs {
            println!(
                "{name} = {}",
                if *sensitive {
                    "<sensitive>".to_string()
                } else {
                    v.to_string()
                }
            );
        }
    }
    Ok(if report.failed.is_empty() && !report.interrupted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The backend for commands that read or edit the state without planning, with what keeps
/// it reachable.
struct StateAccess {
    env: String,
    backend: Arc<dyn Backend>,
    _providers: Option<Providers>,
}

async fn state_access(ctx: &Ctx) -> anyhow::Result<StateAccess> {
    let (config, _) = load_dir(&ctx.dir);
    let env = brickform_core::lang::environment::select(&config, ctx.environment.as_deref())
        .map_err(|d| {
            let d = *d;
            let mut text = d.summary;
            for more in [d.detail, d.hint].into_iter().flatten() {
                text.push_str("\n  ");
                text.push_str(&more);
            }
            anyhow!(text)
        })?;
    let spec = crate::backend::BackendSpec::of(&config).map_err(|d| {
        print_diags(&d, &config);
        anyhow!("invalid backend block")
    })?;
    if spec == crate::backend::BackendSpec::Local {
        return Ok(StateAccess {
            env,
            backend: Arc::new(LocalBackend::new(&ctx.dir)),
            _providers: None,
        });
    }
    let vars = variables(&config, &VarArgs::default(), &env, true)
        .map_err(|_| anyhow!("cannot resolve the variables the provider settings need"))?;
    let providers = providers(ctx, &config, &env).await?;
    let backend = crate::backend::connect(&spec, ctx, &config, &vars, &env, &providers).await?;
    Ok(StateAccess {
        env,
        backend,
        _providers: Some(providers),
    })
}

async fn load_state(ctx: &Ctx) -> anyhow::Result<(StateAccess, Option<StateDocument>)> {
    let access = state_access(ctx).await?;
    let doc = access
        .backend
        .load(&access.env)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    Ok((access, doc))
}

pub async fn show(ctx: &Ctx, file: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    if let Some(f) = file {
        let sp = saved::read(&f)?;
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(&render_json::render(&sp.plan))?
            );
        } else {
            print!("{}", render_text::render(&sp.plan, &text_options(ctx)));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let (access, doc) = load_state(ctx).await?;
    let env = &access.env;
    let Some(doc) = doc else {
        println!("No state (environment \"{env}\").");
        return Ok(ExitCode::SUCCESS);
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    for r in doc.resources() {
        println!("# {}:", r.address);
        println!("resource \"{}\" \"{}\" {{", r.resource_type, r.name);
        println!("    id = {}", brickform_core::value::quote(&r.id));
        let mut merged = r.computed.clone();
        for (k, v) in &r.config {
            if !v.is_null() {
                merged.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in &merged {
            if v.is_null() {
                continue;
            }
            println!("    {k} = {}", Value::from_json(v));
        }
        for k in r.sensitive.keys() {
            println!("    {k} = (sensitive value)");
        }
        println!("}}\n");
    }
    print_outputs(&doc, None, false, false)
}

fn print_outputs(
    doc: &StateDocument,
    name: Option<String>,
    json: bool,
    raw: bool,
) -> anyhow::Result<ExitCode> {
    if let Some(n) = name {
        let Some(o) = doc.outputs().get(&n) else {
            eprintln!(
                "Error: Output \"{n}\" not found. The output variable requested could not be found in the state. Apply the configuration first, or check the name."
            );
            return Ok(ExitCode::from(1));
        };
        let Some(v) = o.value() else {
            eprintln!("Error: Output \"{n}\" is sensitive; its value is not stored in state.");
            return Ok(ExitCode::from(1));
        };
        if raw {
            match v {
                serde_json::Value::String(s) => println!("{s}"),
                serde_json::Value::Number(_) | serde_json::Value::Bool(_) => println!("{v}"),
                _ => {
                    eprintln!(
                        "Error: Unsupported value for raw output: only strings, numbers and bools can be printed with --raw."
                    );
                    return Ok(ExitCode::from(1));
                }
            }
        } else if json {
            println!("{}", serde_json::to_string_pretty(v)?);
        } else {
            println!("{}", Value::from_json(v));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if json {
        let m: serde_json::Map<String, serde_json::Value> = doc
            .outputs()
            .iter()
            .map(|(k, o)| {
                (
                    k.clone(),
                    serde_json::json!({"sensitive": o.sensitive(), "value": o.value()}),
                )
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&m)?);
        return Ok(ExitCode::SUCCESS);
    }
    if !doc.outputs().is_empty() {
        println!("Outputs:\n");
    }
    for (k, o) in doc.outputs() {
        match o.value() {
            Some(v) if !o.sensitive() => println!("{k} = {}", Value::from_json(v)),
            _ => println!("{k} = <sensitive>"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn output(
    ctx: &Ctx,
    name: Option<String>,
    json: bool,
    raw: bool,
) -> anyhow::Result<ExitCode> {
    let (_, doc) = load_state(ctx).await?;
    let doc = doc.unwrap_or_else(|| StateDocument::new("default"));
    print_outputs(&doc, name, json, raw)
}

pub fn graph(ctx: &Ctx, format: &str) -> anyhow::Result<ExitCode> {
    let config = match load(ctx) {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let (g, diags) = brickform_core::graph::build(&config);
    if diags.has_errors() {
        print_diags(&diags, &config);
        return Ok(ExitCode::from(1));
    }
    let dot = g.to_dot();
    match format {
        "dot" => print!("{dot}"),
        "svg" | "png" => {
            let child = std::process::Command::new("dot")
                .arg(format!("-T{format}"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn();
            let mut child = match child {
                Ok(c) => c,
                Err(_) => {
                    eprintln!(
                        "Error: rendering {format} needs Graphviz's `dot` command, which was not found on PATH. Install Graphviz (for example `apt-get install graphviz`), or use `brickform graph` (DOT text) and render it elsewhere."
                    );
                    return Ok(ExitCode::from(1));
                }
            };
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(dot.as_bytes())?;
            }
            let out = child.wait_with_output()?;
            if !out.status.success() {
                bail!("dot failed: {}", String::from_utf8_lossy(&out.stderr));
            }
            std::io::stdout().write_all(&out.stdout)?;
        }
        other => {
            eprintln!("Error: unknown graph format {other:?}; use dot, svg or png.");
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn state(ctx: &Ctx, cmd: StateCommand) -> anyhow::Result<ExitCode> {
    let (access, doc) = load_state(ctx).await?;
    let (env, backend) = (access.env.clone(), access.backend.clone());
    match cmd {
        StateCommand::List => {
            for r in doc.iter().flat_map(|d| d.resources()) {
                println!("{}", r.address);
            }
        }
        StateCommand::Show { address } => {
            let Some(r) = doc.as_ref().and_then(|d| d.get(&address)) else {
                eprintln!("Error: No instance found for the given address {address}.");
                return Ok(ExitCode::from(1));
            };
            println!("{}", serde_json::to_string_pretty(r)?);
        }
        StateCommand::Pull => match doc {
            Some(d) => println!("{}", serde_json::to_string_pretty(&d)?),
            None => println!("{{}}"),
        },
        StateCommand::Rm { addresses } => {
            let _lock = match crate::backend::lock_state(&backend, &env, "state rm", Duration::ZERO)
                .await
            {
                Ok(l) => l,
                Err(code) => return Ok(code),
            };
            let mut d = doc.ok_or_else(|| anyhow!("no state for environment \"{env}\""))?;
            let mut removed = Vec::new();
            for a in &addresses {
                match d.forget(a) {
                    Some(r) => removed.push(r),
                    None => {
                        eprintln!("Error: No instance found for the given address {a}.");
                        return Ok(ExitCode::from(1));
                    }
                }
            }
            backend
                .save(&env, &mut d)
                .await
                .map_err(|e| anyhow!("{e}"))?;
            let outlook = after_forget(
                ctx,
                &env,
                &backend,
                access._providers.as_ref(),
                &d,
                &removed,
            )
            .await;
            for (r, next) in removed.iter().zip(outlook) {
                println!(
                    "Removed {} from the state; the object is not deleted (id {}).\n  {next}",
                    r.address, r.id
                );
            }
            println!(
                "Successfully removed {} resource instance(s).\n\nTo stop managing an object for good, remove it from the configuration too (or declare a `removed` block with `destroy = false`); to delete it, let the next apply import it again, then run `brickform destroy --target ADDRESS`.",
                addresses.len()
            );
        }
        StateCommand::Mv { from, to } => {
            let _lock = match crate::backend::lock_state(&backend, &env, "state mv", Duration::ZERO)
                .await
            {
                Ok(l) => l,
                Err(code) => return Ok(code),
            };
            let mut d = doc.ok_or_else(|| anyhow!("no state for environment \"{env}\""))?;
            d.mv(&from, &to).map_err(|e| anyhow!("{e}"))?;
            backend
                .save(&env, &mut d)
                .await
                .map_err(|e| anyhow!("{e}"))?;
            println!("Move \"{from}\" to \"{to}\"\nSuccessfully moved 1 object(s).");
        }
        // Dispatched to `backend::migrate` by `main`.
        StateCommand::Migrate { .. } => {}
        StateCommand::Push { file } => {
            let _lock = match crate::backend::lock_state(
                &backend,
                &env,
                "state push",
                Duration::ZERO,
            )
            .await
            {
                Ok(l) => l,
                Err(code) => return Ok(code),
            };
            let text = brickform_core::limits::read_text_file(&file)
                .map_err(|why| anyhow!("reading {}: {why}", file.display()))?;
            let mut incoming: StateDocument = serde_json::from_str(&text)
                .map_err(|e| anyhow!("{} is not a state document: {e}", file.display()))?;
            backend
                .save(&env, &mut incoming)
                .await
                .map_err(|e| anyhow!("{e}"))?;
            println!("State pushed to environment \"{env}\".");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// For each instance `state rm` took out of `doc`: what the next plan does about its
/// object, found the way that plan finds it when the workspace can be reached.
async fn after_forget(
    ctx: &Ctx,
    env: &str,
    backend: &Arc<dyn Backend>,
    connected: Option<&Providers>,
    doc: &StateDocument,
    removed: &[brickform_state::ResourceState],
) -> Vec<String> {
    let (config, _) = load_dir(&ctx.dir);
    // Variables as far as they are known without asking; a provider setting that needs
    // one that is not leaves the workspace unreachable, and the offline answer stands.
    let vars = match var_inputs(&VarArgs::default(), true) {
        Ok(inputs) => inputs::resolve(&config, &inputs, Some(env)).0,
        Err(_) => Variables::default(),
    };
    // The backend's providers when it has some (a volume backend), so one local workspace
    // is not started twice on the same data.
    let started = match connected {
        Some(_) => None,
        None => providers(ctx, &config, env).await.ok(),
    };
    let offline = registry();
    let registry = connected
        .or(started.as_ref())
        .map_or(&offline, |p| &p.registry);
    let engine = Engine::new(&config, registry, &vars, env).with_backend(backend.clone());
    let online = !std::ptr::eq(registry, &offline) && !engine.configure(doc).await.has_errors();
    let mut out = Vec::new();
    for r in removed {
        let looked = if online {
            engine.after_forget(doc, r).await
        } else {
            None
        };
        out.push(looked.unwrap_or_else(|| engine.after_forget_offline(r)));
    }
    out
}

pub async fn env_list(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let (config, _) = load_dir(&ctx.dir);
    let current = match environment(ctx, &config) {
        Ok(e) => e,
        Err(code) => return Ok(code),
    };
    let mut names: Vec<String> = config.environments.keys().cloned().collect();
    names.extend(
        state_access(ctx)
            .await?
            .backend
            .environments()
            .await
            .map_err(|e| anyhow!("{e}"))?,
    );
    names.push(current.clone());
    names.sort();
    names.dedup();
    for n in names {
        println!("{} {n}", if n == current { "*" } else { " " });
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn force_unlock(ctx: &Ctx, id: &str, even_if_running: bool) -> anyhow::Result<ExitCode> {
    let access = state_access(ctx).await?;
    access
        .backend
        .force_unlock(&access.env, id, even_if_running)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    println!("brickform state has been successfully unlocked!");
    Ok(ExitCode::SUCCESS)
}

pub async fn import(
    ctx: &Ctx,
    address: &str,
    id: &str,
    vars: &VarArgs,
) -> anyhow::Result<ExitCode> {
    let args = PlanArgs {
        vars: vars.clone(),
        lock_timeout: "0s".into(),
        ..PlanArgs::default()
    };
    let mut s = match open(ctx, &args, "import").await {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let p = &s.providers;
    let engine =
        Engine::new(&s.config, &p.registry, &s.vars, &s.env).with_backend(s.backend.clone());
    if let Err(code) = finish_interrupted(&engine, &mut s.doc, &s.journal, &mut s.unresolved).await
    {
        return Ok(code);
    }
    match engine.import(&mut s.doc, &s.journal, address, id).await {
        Ok(line) => {
            s.journal
                .checkpoint(&mut s.doc)
                .await
                .map_err(|e| anyhow!("saving state: {e}"))?;
            println!(
                "{line}\n\nImport successful!\n\nThe resource is now in the brickform state; run `brickform plan` to compare it with its configuration."
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(diags) => {
            print_diags(&diags, &s.config);
            Ok(ExitCode::from(1))
        }
    }
}
