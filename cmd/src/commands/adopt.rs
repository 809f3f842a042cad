//! `brickform adopt`: configuration and import blocks for live objects that scripts (or the
//! UI) made, found by a rule, with references between them, so that the next plan imports
//! them and changes nothing, and a destroy removes them in order.

use crate::context::{self, Ctx, Reading};
use crate::failure::{Outcome, Said, fail};
use anyhow::anyhow;
use brickform_core::engine::merged_from;
use brickform_core::lang::generate::{Adopted, Known, configuration};
use brickform_core::location::Location;
use brickform_core::provider::Schema;
use brickform_core::value::Value;
use brickform_databricks::adopt::{Discovered, ForState, Rules, discover, what};
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
    /// Also adopt what the rules choose that carries the ownership tag of another brickform
    /// state (another configuration directory, another environment): left out otherwise,
    /// since both states would then manage it and a destroy in either would delete it.
    #[arg(long = "take-from-other-states")]
    take_from_other_states: bool,
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
    if args.prefixes.iter().any(String::is_empty) {
        return Err(anyhow!(
            "--prefix is empty: give the start of the names to adopt"
        ));
    }
    if args.creator.as_deref().is_some_and(|c| c.trim().is_empty()) {
        return Err(anyhow!("--creator is empty: give a user name, or me"));
    }
    // A rule given twice chooses nothing more.
    let rules = Rules {
        catalogs: deduped(args.catalogs.iter().map(|c| c.to_lowercase())),
        prefixes: deduped(args.prefixes.iter().cloned()),
        tags: deduped(tags.into_iter()),
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

/// Each item once, in the order first given.
fn deduped<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The file adopt writes: a new `*.bf.hcl` file directly in the configuration directory,
/// where the next plan loads it.
fn out_file(dir: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    let name = out
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.ends_with(".bf.hcl") && n.len() > ".bf.hcl".len());
    let plain = out.parent().is_none_or(|p| p.as_os_str().is_empty());
    let Some(name) = name.filter(|_| plain) else {
        return Err(anyhow!(
            "--out {}: give a file name ending in .bf.hcl, with no folder: adopt writes into the configuration directory, where plan reads *.bf.hcl files",
            out.display()
        ));
    };
    let path = dir.join(name);
    if path.exists() {
        return Err(anyhow!(
            "{} exists already: adopt writes a new file (move it away, or name another with --out)",
            path.display()
        ));
    }
    Ok(path)
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let mut rules = rules(&args)?;
    let out = out_file(&ctx.dir, &args.out)?;
    let r = Reading::open(ctx, &args.vars).await?;
    let (config, env, p) = (&r.config, &r.env, &r.providers);
    let doc = r
        .doc
        .clone()
        .unwrap_or_else(|| brickform_state::StateDocument::new(env));
    // The provider is configured though nothing in the configuration uses it yet.
    let provider = brickform_core::provider::Provider::name(p.databricks.as_ref());
    context::check(
        &r.engine().configure_including(&doc, &[provider]).await,
        config,
    )?;
    let shared = p.databricks.shared();
    if rules.creator.as_deref() == Some("me") {
        let Some(me) = shared.current_user().await.said()? else {
            fail!("the workspace does not say who you are: name the user, --creator USER");
        };
        rules.creator = Some(me);
    }
    let managed = Managed::by_any_state(&p.registry, r.backend.as_ref(), env, &doc).await?;
    let for_state = ForState {
        lineage: doc.lineage().to_string(),
        environment: env.clone(),
        take_from_others: args.take_from_other_states,
    };
    println!("Looking for what the rules choose…");
    let is_managed = |t: &str, id: &str, at: Option<&Location>| managed.holds(t, id, at);
    let discovered = discover(&shared, &rules, &for_state, &is_managed)
        .await
        .said()?;
    let left_out = print_left_out(&discovered);
    let found = discovered.found;
    if found.is_empty() {
        println!(
            "\nNothing to adopt: {}",
            if left_out {
                "what the rules choose is managed already or owned by another state."
            } else {
                "no object matches the rules."
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    let client = shared.client().said()?;
    let (adopted, mut files) = adoptions(&client, &found, &for_state, &ctx.dir).await?;
    let (existing, known) = names_taken(config, &p.registry, &doc);
    let written = configuration(&adopted, &existing, &known);
    let content_files = files.len();
    files.push((
        out.clone(),
        (HEADER.to_string() + &written.text).into_bytes(),
    ));
    write_all(&files)?;
    print_adopted(&ctx.dir, &out, &found, &written, content_files);
    Ok(ExitCode::SUCCESS)
}

/// What the file written starts with.
const HEADER: &str = "# Written by `brickform adopt`: the objects its rules chose, each with the import block\n# that takes it under management. `brickform plan` imports them and changes nothing.\n\n";

/// What any state of the backend manages (each environment's), which is that state's: by
/// type and id, and by where it lives.
struct Managed {
    ids: HashSet<(String, String)>,
    at: HashSet<Location>,
}

impl Managed {
    async fn by_any_state(
        registry: &brickform_core::provider::Registry,
        backend: &dyn brickform_state::Backend,
        env: &str,
        doc: &brickform_state::StateDocument,
    ) -> anyhow::Result<Managed> {
        let mut m = Managed {
            ids: HashSet::new(),
            at: HashSet::new(),
        };
        for e in backend
            .environments()
            .await
            .said()?
            .iter()
            .filter(|e| *e != env)
        {
            if let Some(d) = backend.load(e).await.said()? {
                m.record(registry, &d);
            }
        }
        m.record(registry, doc);
        Ok(m)
    }

    fn record(
        &mut self,
        registry: &brickform_core::provider::Registry,
        d: &brickform_state::StateDocument,
    ) {
        for r in managed_entries(d) {
            self.ids.insert((r.type_name().to_string(), r.id.clone()));
            if let Some(loc) = registry
                .kind(r.type_name())
                .and_then(|k| k.location(&merged_from(r, k.schema())))
            {
                self.at.insert(loc);
            }
        }
    }

    fn holds(&self, t: &str, id: &str, location: Option<&Location>) -> bool {
        self.ids.contains(&(t.to_string(), id.to_string()))
            || location.is_some_and(|l| self.at.contains(l))
    }
}

/// The configuration of each object found, with a comment saying why it was chosen, and
/// the files of content exported for them (under the content folder of `dir`).
async fn adoptions<'f>(
    client: &brickform_databricks::client::Client,
    found: &'f [brickform_databricks::adopt::Found],
    for_state: &ForState,
    dir: &Path,
) -> anyhow::Result<(Vec<Adopted<'f>>, Vec<(PathBuf, Vec<u8>)>)> {
    let locations: Vec<Location> = found
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
    for f in found {
        let a = f
            .kind
            .adoption(client, &f.remote, &locations)
            .await
            .map_err(|e| anyhow!("{}: {e}", what(f)))?;
        let mut values = a.values;
        let mut comment = vec![format!("{} ({})", what(f), f.why)];
        comment.extend(f.taken_from(for_state));
        if let Some(file) = a.file {
            let rel = unique(dir, &files, &file.name);
            values.insert(file.attr.into(), Value::from(rel.as_str()));
            comment.push(format!("Its content, as exported, is in {rel}."));
            files.push((dir.join(&rel), file.bytes));
        }
        if values.get("force_destroy") == Some(&Value::Bool(true)) {
            comment.push(
                "It holds what brickform does not manage (objects, or files in a volume): force_destroy lets a destroy delete that with it, and a destroy plan lists what each delete takes."
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
    Ok((adopted, files))
}

/// Names the configuration or its state has, which are not taken again (an address the
/// state still holds, its block removed and not yet applied, would take the import as an
/// update of the old object); and what this configuration manages and still declares,
/// which adopted objects refer to by its address.
fn names_taken(
    config: &brickform_core::lang::load::Config,
    registry: &brickform_core::provider::Registry,
    doc: &brickform_state::StateDocument,
) -> (Vec<String>, Vec<Known>) {
    let existing: Vec<String> = config
        .resources
        .keys()
        .map(ToString::to_string)
        .chain(config.variables.keys().map(|v| format!("var.{v}")))
        .chain(
            doc.resources()
                .iter()
                .filter(|r| r.module().is_root())
                .map(|r| r.resource().to_string()),
        )
        .collect();
    let known: Vec<Known> = managed_entries(doc)
        .filter(|r| r.module().is_root() && config.resources.contains_key(r.resource()))
        .map(|r| {
            let schema = registry
                .kind(r.type_name())
                .map_or(Schema::empty(), |k| k.schema());
            Known {
                type_name: r.type_name().to_string(),
                address: r.address(),
                id: r.id.clone(),
                values: merged_from(r, schema),
            }
        })
        .collect();
    (existing, known)
}

/// What was adopted, where it was written, and what to give and do next.
fn print_adopted(
    dir: &Path,
    out: &Path,
    found: &[brickform_databricks::adopt::Found],
    written: &brickform_core::lang::generate::Written,
    content_files: usize,
) {
    println!("\nAdopting {} object(s):", found.len());
    for (f, addr) in found.iter().zip(&written.addresses) {
        println!("  {addr}: {} ({})", what(f), f.why);
    }
    println!("\nWrote {}", shown(dir, out));
    if content_files > 0 {
        println!(
            "and {} file(s) of content under {}/",
            content_files,
            shown(dir, &dir.join(CONTENT_DIR))
        );
    }
    if !written.secrets.is_empty() {
        println!(
            "\nSensitive values are never written into the file; give these (BRICKFORM_VAR_NAME, --var or a .bfvars.hcl file):"
        );
        for s in &written.secrets {
            println!("  var.{s}");
        }
        println!(
            "Where the service does not read a value back, nothing can show it is the one it holds, so the first apply writes it (the plan shows an update)."
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
}

/// Says what discovery left out, and why; whether it left out anything.
fn print_left_out(d: &Discovered) -> bool {
    for a in &d.managed {
        println!("  managed already, left out: {a}");
    }
    for (a, tag) in &d.others {
        println!("  owned by another brickform state, left out: {a} ({tag})");
    }
    if !d.others.is_empty() {
        println!("  (to take them from that state, run adopt again with --take-from-other-states)");
    }
    !(d.managed.is_empty() && d.others.is_empty())
}

/// Writes every file, or none: a failure removes what was written before it (and the
/// folders made for it), so a second try starts from where the first did.
fn write_all(files: &[(PathBuf, Vec<u8>)]) -> anyhow::Result<()> {
    let mut made: Vec<PathBuf> = Vec::new();
    let mut written: Vec<&Path> = Vec::new();
    let result = (|| -> anyhow::Result<()> {
        for (path, bytes) in files {
            if let Some(dir) = path.parent().filter(|d| !d.exists()) {
                std::fs::create_dir_all(dir)
                    .map_err(|e| anyhow!("creating {}: {e}", dir.display()))?;
                made.push(dir.to_path_buf());
            }
            // create_new: a file that appeared since the names were chosen is not overwritten.
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, bytes))
                .map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
            written.push(path);
        }
        Ok(())
    })();
    if result.is_err() {
        for p in written {
            let _ = std::fs::remove_file(p);
        }
        for d in made.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
    result
}

/// The objects a state manages (a data source only reads what it names).
fn managed_entries(
    doc: &brickform_state::StateDocument,
) -> impl Iterator<Item = &brickform_state::ResourceState> {
    doc.resources()
        .iter()
        .filter(|r| r.mode() == brickform_state::ResourceMode::Managed)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_failed_write_takes_back_what_was_written_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("taken.bf.hcl")).unwrap();
        let files = vec![
            (d.join("adopted/a.py"), b"print(1)".to_vec()),
            (d.join("adopted/b.sql"), b"select 1".to_vec()),
            // A folder where the file should go: this write fails.
            (d.join("taken.bf.hcl"), b"x".to_vec()),
        ];
        let e = write_all(&files).unwrap_err().to_string();
        assert!(e.contains("taken.bf.hcl"), "{e}");
        assert!(
            !d.join("adopted").exists(),
            "the folder made for the content stays"
        );
        write_all(&files[..2]).unwrap();
        assert_eq!(std::fs::read(d.join("adopted/b.sql")).unwrap(), b"select 1");
    }

    #[test]
    fn the_file_written_is_a_new_configuration_file_of_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(
            out_file(d, Path::new("adopted.bf.hcl")).unwrap(),
            d.join("adopted.bf.hcl")
        );
        for bad in [
            "x.hcl",
            "sub/x.bf.hcl",
            "../x.bf.hcl",
            ".bf.hcl",
            "/tmp/x.bf.hcl",
        ] {
            assert!(out_file(d, Path::new(bad)).is_err(), "{bad}");
        }
        std::fs::write(d.join("mine.bf.hcl"), "").unwrap();
        let e = out_file(d, Path::new("mine.bf.hcl"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exists already"), "{e}");
    }

    #[test]
    fn rules_given_twice_count_once_and_empty_ones_are_refused() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let parse = |a: &[&str]| {
            Cli::try_parse_from(std::iter::once("adopt").chain(a.iter().copied()))
                .unwrap()
                .args
        };
        let r = rules(&parse(&[
            "--catalog",
            "Main",
            "--catalog",
            "main",
            "--tag",
            "a=b",
            "--tag",
            "a=b",
        ]))
        .unwrap();
        assert_eq!(r.catalogs, ["main"]);
        assert_eq!(r.tags.len(), 1);
        assert!(rules(&parse(&["--prefix", ""])).is_err());
        assert!(rules(&parse(&["--creator", " "])).is_err());
        assert!(rules(&parse(&["--tag", "nokey"])).is_err());
    }
}
