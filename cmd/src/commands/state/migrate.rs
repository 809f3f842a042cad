//! `brickform state migrate --to BACKEND [--all]`: copies the state of the current
//! environment (or of every environment) from the configured backend to BACKEND, leaving the
//! source as it was, then says how to point the configuration at the new place.

use crate::backend::{self, BackendSpec, capitalise};
use crate::context::{self, Ctx, Providers};
use crate::failure::{Failure, Outcome, fail};
use brickform_state::{Backend, recover};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// Where the state should go.
    #[arg(long = "to", value_name = "BACKEND")]
    to: String,
    /// Every environment the current backend holds, not only the selected one.
    #[arg(long)]
    all: bool,
    /// Wait this long for each state lock (e.g. 30s).
    #[arg(long = "lock-timeout", default_value = "0s")]
    lock_timeout: String,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let config = context::load(ctx)?;
    let env = context::environment(ctx, &config)?;
    let from_spec = context::backend_spec(&config)?;
    let to_spec = BackendSpec::parse_target(&args.to)?;
    let timeout = crate::duration::parse(&args.lock_timeout)?;
    if from_spec.same_place(&to_spec) {
        fail!(
            "the state is already in {}; --to names where it should go",
            from_spec.describe()
        );
    }
    let vars = context::variables(&config, &Default::default(), &env, true)?;
    let providers = Providers::start(ctx, &config, &env).await?;
    let from = providers
        .backend(&from_spec, ctx, &config, &vars, &env)
        .await?;
    context::require_known(ctx, &config, &env, from.as_ref()).await?;
    let target = providers
        .backend(&to_spec, ctx, &config, &vars, &env)
        .await?;
    let envs = if args.all {
        from.environments().await?
    } else {
        vec![env.clone()]
    };
    if envs.is_empty() {
        println!(
            "{} holds no state; nothing to migrate.",
            from_spec.describe()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for e in &envs {
        migrate_one(e, &from, &target, &from_spec, &to_spec, timeout).await?;
    }
    println!(
        "\n{} still holds its copy. To use the new one, change the configuration's backend to:\n\n{}",
        capitalise(&from_spec.describe()),
        to_spec.block()
    );
    Ok(ExitCode::SUCCESS)
}

async fn migrate_one(
    env: &str,
    from: &Arc<dyn Backend>,
    target: &Arc<dyn Backend>,
    from_spec: &BackendSpec,
    to_spec: &BackendSpec,
    timeout: Duration,
) -> Result<(), Failure> {
    let _from_lock = backend::lock_state(from, env, "state migrate", timeout).await?;
    let _to_lock = backend::lock_state(target, env, "state migrate", timeout).await?;
    let rec = match recover(from.clone(), env).await {
        Ok(rec) => rec,
        Err(e) => fail!("cannot read the state of environment \"{env}\": {e}"),
    };
    if !rec.existed {
        fail!(
            "{} has no state for environment \"{env}\"",
            from_spec.describe()
        );
    }
    if !rec.unresolved.is_empty() {
        fail!(
            "the state of environment \"{env}\" has {} operation(s) a crash interrupted; run `brickform plan` against {} first, which resolves them",
            rec.unresolved.len(),
            from_spec.describe()
        );
    }
    let mut doc = rec.document;
    let existing = match target.load(env).await {
        Ok(existing) => existing,
        Err(e) => fail!("cannot read {}: {e}", to_spec.describe()),
    };
    if let Some(there) = &existing {
        if there.lineage() != doc.lineage() {
            fail!(
                "{} already holds a different state for environment \"{env}\" (lineage {}, this one is {}); move it aside first if it is not needed",
                to_spec.describe(),
                there.lineage(),
                doc.lineage()
            );
        }
        if there.serial() > doc.serial() {
            fail!(
                "{} holds a newer copy of the state of environment \"{env}\" (serial {} > {}); it was written after this one, so copying would lose changes",
                to_spec.describe(),
                there.serial(),
                doc.serial()
            );
        }
    }
    let pending = match target.wal_read(env).await {
        Ok(pending) => pending,
        Err(e) => fail!("cannot read {}: {e}", to_spec.describe()),
    };
    if !pending.is_empty() {
        fail!(
            "{} has a write-ahead log for environment \"{env}\" ({} records) from an interrupted run; finish that run there first",
            to_spec.describe(),
            pending.len()
        );
    }
    if let Err(e) = target.save(env, &mut doc).await {
        fail!("cannot write {}: {e}", to_spec.describe());
    }
    println!(
        "Copied the state of environment \"{env}\" ({} resource{}, lineage {}) from {} to {}.",
        doc.resources().len(),
        if doc.resources().len() == 1 { "" } else { "s" },
        doc.lineage(),
        from_spec.describe(),
        to_spec.describe()
    );
    Ok(())
}
