//! `brickform adopt`: configuration and import blocks for live objects that scripts (or the
//! UI) made, found by a rule, with references between them, so that the next plan imports
//! them and changes nothing, and a destroy removes them in order.

use crate::context::{self, Ctx, Providers};
use crate::failure::{Outcome, fail};
use anyhow::anyhow;
use brickform_core::engine::Engine;
use brickform_core::lang::generate::{Adopted, Known, configuration};
use brickform_core::value::Value;
use brickform_databricks::adopt::{Rules, discover, what};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Adopt the catalog CATALOG, its schemas and volumes, and the pipelines that publish
    /// into it (repeatable).
    #[arg(long = "catalog", value_name = "CATALOG")]
    catalogs: Vec<String>,
    /// Adopt the objects whose name starts with PREFIX; a PREFIX starting with / adopts
    /// the notebooks and workspace files under it (repeatable).
    #[arg(long = "prefix", value_name = "PREFIX")]
    prefixes: Vec<String>,
    /// Adopt the jobs and pipelines tagged KEY=VALUE (repeatable).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    tags: Vec<String>,
    /// Of what the other rules choose (of everything, alone), keep what USER made; `me`
    /// for the user brickform signs in as.
    #[arg(long = "creator", value_name = "USER")]
    creator: Option<String>,
    /// The file to write, in the configuration directory.
    #[arg(long = "out", value_name = "FILE", default_value = "adopted.bf.hcl")]
    out: PathBuf,
    #[command(flatten)]
    vars: crate::args::VarArgs,
}

/// Where the content of adopted notebooks and files is written, in the configuration
/// directory.
const CONTENT_DIR: &str = "adopted";

fn rules(args: &Args) -> anyhow::Result<Rules> {
    let mut tags = Vec::new();
    for t in &args.tags {
        let (k, v) = t
            .split_once('=')
            .filter(|(k, _)| !k.trim().is_empty())
            .ok_or_else(|| anyhow!("invalid --tag {t:?}: expected KEY=VALUE"))?;
        tags.push((k.trim().to_string(), v.to_string()));
    }
    let rules = Rules {
        catalogs: args.catalogs.iter().map(|c| c.to_lowercase()).collect(),
        prefixes: args.prefixes.clone(),
        tags,
        creator: args.creator.clone(),
    };
    if rules.catalogs.is_empty()
        && rules.prefixes.is_empty()
        && rules.tags.is_empty()
        && rules.creator.is_none()
    {
        return Err(anyhow!(
            "say what to adopt: --catalog, --prefix, --tag or --creator (see `brickform adopt --help`)"
        ));
    }
    Ok(rules)
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let mut rules = rules(&args)?;
    let out = ctx.dir.join(&args.out);
    if out.exists() {
        fail!(
            "{} exists already: adopt writes a new file (move it away, or name another with --out)",
            out.display()
        );
    }
    let config = context::load(ctx)?;
    let env = context::environment(ctx, &config)?;
    let vars = context::variables(&config, &args.vars, &env, false)?;
    let p = Providers::start(ctx, &config, &env).await?;
    let spec = context::backend_spec(&config)?;
    let backend = p.backend(&spec, ctx, &config, &vars, &env).await?;
    let doc = backend
        .load(&env)
        .await
        .map_err(|e| anyhow!("{e}"))?
        .unwrap_or_else(|| brickform_state::StateDocument::new(&env));
    let engine = Engine::new(&config, &p.registry, &vars, &env);
    context::check(&engine.configure(&doc).await, &config)?;
    let shared = p.databricks.shared();
    if rules.creator.as_deref() == Some("me") {
        let Some(me) = shared.current_user().await.map_err(|e| anyhow!("{e}"))? else {
            fail!("the workspace does not say who you are: name the user, --creator USER");
        };
        rules.creator = Some(me);
    }

    // What any state of this backend manages is that state's.
    let mut managed: HashSet<(String, String)> = HashSet::new();
    let envs = backend.environments().await.map_err(|e| anyhow!("{e}"))?;
    for e in envs.iter().filter(|e| **e != env) {
        if let Some(d) = backend.load(e).await.map_err(|e| anyhow!("{e}"))? {
            managed.extend(ids(&d));
        }
    }
    managed.extend(ids(&doc));
    let is_managed = |t: &str, id: &str| managed.contains(&(t.to_string(), id.to_string()));

    println!("Looking for what the rules choose…");
    let (found, already) = discover(&shared, &rules, &is_managed)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    for a in &already {
        println!("  managed already, left out: {a}");
    }
    if found.is_empty() {
        println!("\nNothing to adopt: no object the rules choose is left unmanaged.");
        return Ok(ExitCode::SUCCESS);
    }

    let client = shared.client().map_err(|e| anyhow!("{e}"))?;
    let locations: Vec<String> = found
        .iter()
        .flat_map(|f| {
            let attrs = &f.remote.attrs;
            f.kind
                .location(attrs)
                .into_iter()
                .chain(f.kind.takes_along(&f.remote.id, attrs))
        })
        .collect();
    let mut adopted = Vec::new();
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for f in &found {
        let a = f
            .kind
            .adoption(&client, &f.remote, &locations)
            .await
            .map_err(|e| anyhow!("{}: {e}", what(f)))?;
        let mut values = a.values;
        let mut comment = vec![format!("{} ({})", what(f), f.why)];
        if let Some(file) = a.file {
            let rel = unique(&ctx.dir, &files, &file.name);
            values.insert(file.attr.into(), Value::from(rel.as_str()));
            comment.push(format!("Its content, as exported, is in {rel}."));
            files.push((ctx.dir.join(&rel), file.bytes));
        }
        if values.get("force_destroy") == Some(&Value::Bool(true)) {
            comment.push(
                "It holds objects brickform does not manage: force_destroy lets a destroy delete them with it (the plan lists them)."
                    .into(),
            );
        }
        adopted.push(Adopted {
            kind: f.kind.as_ref(),
            label: f.label.clone(),
            id: f.remote.id.clone(),
            values,
            comment,
        });
    }
    let existing: Vec<String> = config
        .resources
        .keys()
        .cloned()
        .chain(config.variables.keys().map(|v| format!("var.{v}")))
        .collect();
    // What this configuration manages already is referred to by its address.
    let known: Vec<Known> = doc
        .resources()
        .iter()
        .filter(|r| r.module.is_root() && r.mode == brickform_state::ResourceMode::Managed)
        .map(|r| {
            let mut values = brickform_core::value::Object::new();
            for (k, v) in r.computed.iter().chain(&r.config) {
                let v = Value::from_json(v);
                if !v.is_null() || !values.contains_key(k) {
                    values.insert(k.clone(), v);
                }
            }
            Known {
                type_name: r.resource_type.clone(),
                address: r.address.clone(),
                id: r.id.clone(),
                values,
            }
        })
        .collect();
    let written = configuration(&adopted, &existing, &known);

    for (path, bytes) in &files {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| anyhow!("creating {}: {e}", dir.display()))?;
        }
        std::fs::write(path, bytes).map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
    }
    let header = "# Written by `brickform adopt`: the objects its rules chose, each with the import block\n# that takes it under management. `brickform plan` imports them and changes nothing.\n\n".to_string();
    std::fs::write(&out, header + &written.text)
        .map_err(|e| anyhow!("writing {}: {e}", out.display()))?;

    println!("\nAdopting {} object(s):", found.len());
    for (f, addr) in found.iter().zip(&written.addresses) {
        println!("  {addr}: {} ({})", what(f), f.why);
    }
    println!("\nWrote {}", shown(&ctx.dir, &out));
    if !files.is_empty() {
        println!(
            "and {} file(s) of content under {}/",
            files.len(),
            shown(&ctx.dir, &ctx.dir.join(CONTENT_DIR))
        );
    }
    if !written.secrets.is_empty() {
        println!(
            "\nThe service never reads these back; give their values (BRICKFORM_VAR_NAME, --var or a .bfvars.hcl file):"
        );
        for s in &written.secrets {
            println!("  var.{s}");
        }
        println!(
            "Nothing can show they are the values the service holds, so the first apply writes them (the plan shows each as an update)."
        );
    }
    println!(
        "\nNext: `brickform plan` shows {} to import{}; `brickform apply` takes them under management.",
        found.len(),
        if written.secrets.is_empty() {
            " and nothing else to change"
        } else {
            ""
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// The ids a state manages, by kind.
fn ids(doc: &brickform_state::StateDocument) -> impl Iterator<Item = (String, String)> + '_ {
    doc.resources()
        .iter()
        .map(|r| (r.resource_type.clone(), r.id.clone()))
}

/// A path under the content folder for `name`, relative to the configuration directory,
/// taken by no file written now or before.
fn unique(dir: &Path, taken: &[(PathBuf, Vec<u8>)], name: &str) -> String {
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s.to_string(), format!(".{e}")),
        _ => (name.to_string(), String::new()),
    };
    let mut n = 1;
    loop {
        let candidate = if n == 1 {
            format!("{CONTENT_DIR}/{stem}{ext}")
        } else {
            format!("{CONTENT_DIR}/{stem}_{n}{ext}")
        };
        let path = dir.join(&candidate);
        if !path.exists() && !taken.iter().any(|(p, _)| *p == path) {
            return candidate;
        }
        n += 1;
    }
}

fn shown(dir: &Path, p: &Path) -> String {
    p.strip_prefix(dir).unwrap_or(p).display().to_string()
}
