//! `brickform convert DIR`: a Terraform configuration written for the Databricks provider,
//! rewritten as brickform configuration; with `--state`, the objects its Terraform state
//! holds are adopted into the brickform state, so nothing is recreated.

use crate::args::{PlanArgs, VarArgs};
use crate::context::{self, Ctx, Session};
use crate::failure::{Failure, Outcome};
use anyhow::anyhow;
use brickform_databricks::terraform::{convert_dir, tfstate};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The directory of .tf files. (Not named `dir`: that is the global -C option's id.)
    #[arg(value_name = "DIR")]
    terraform_dir: PathBuf,
    /// Where to write the .bf.hcl files (default: DIR itself, beside the .tf files, which
    /// stay as they are). Other files of DIR (notebook sources, …) are copied there.
    #[arg(long, value_name = "OUTDIR")]
    out: Option<PathBuf>,
    /// A Terraform state (terraform.tfstate, or what `terraform state pull` prints): the
    /// objects it holds are read from the workspace and recorded in the brickform state of
    /// OUTDIR, with the sensitive values it holds as fingerprints only.
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    #[command(flatten)]
    vars: VarArgs,
}

pub async fn exec(ctx: &Ctx, args: Args) -> Outcome {
    let src = ctx.dir.join(&args.terraform_dir);
    let out = args
        .out
        .as_ref()
        .map_or_else(|| src.clone(), |o| ctx.dir.join(o));
    let provider = context::databricks(None);
    let conv = convert_dir(&src, &out, provider.as_ref())?;

    println!(
        "Converted {} file(s) from {} into {}:",
        conv.written.len(),
        src.display(),
        out.display()
    );
    for (from, to) in &conv.written {
        println!("  {} -> {}", from.display(), to.display());
    }
    println!(
        "{} resource(s) and {} data source(s) carried over in the root module.",
        conv.resources.len(),
        conv.data_sources
    );
    for m in &conv.modules {
        let kinds: Vec<String> = m
            .resources
            .iter()
            .map(|(from, now)| match from.split_once('.') {
                Some((t, n)) if t != now => format!("{from} (now {now}.{n})"),
                _ => from.clone(),
            })
            .collect();
        println!(
            "Module {} -> {}: {} resource(s){}, {} data source(s).",
            m.source.display(),
            m.placed.display(),
            m.resources.len(),
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({})", kinds.join(", "))
            },
            m.data_sources
        );
    }
    if !conv.changes.is_empty() {
        println!("\nChanged on the way:");
        for f in &conv.changes {
            println!("  {f}");
        }
    }
    if conv.not_converted.is_empty() {
        println!("\nEverything was converted.");
    } else {
        println!(
            "\nNot converted (left out, kept in the output as `# brickform convert:` comments):"
        );
        for f in &conv.not_converted {
            println!("  {f}");
        }
    }

    let Some(state) = &args.state else {
        println!(
            "\nNext: `brickform -C {} validate`, then `plan`.",
            out.display()
        );
        return Ok(ExitCode::SUCCESS);
    };
    let plan = PlanArgs {
        vars: args.vars,
        lock_timeout: "0s".into(),
        ..PlanArgs::default()
    };
    // The converted Terraform state becomes the environment's state: made on purpose.
    let out_ctx = Ctx {
        dir: out.clone(),
        ..ctx.making_state()
    };
    let mut s = Session::open(&out_ctx, &plan, "import").await?;
    s.finish_interrupted().await?;
    let engine = s.env.engine();
    // A resource inside a module: the converted configuration's resource of that name in
    // that module instance, of the same type or of the kind its block became (a Lakeflow
    // Connect pipeline's).
    let config = &engine.config;
    let in_module = |module: &str, type_name: &str, name: &str| -> Option<String> {
        let same = format!("{module}.{type_name}.{name}");
        if config.resources.contains_key(&same) {
            return Some(same);
        }
        let renamed: Vec<&String> = config
            .resources
            .iter()
            .filter(|(_, r)| r.module.to_string() == module && r.name == name)
            .filter(|(_, r)| {
                conv.renamed_kinds(type_name)
                    .contains(&r.type_name.as_str())
            })
            .map(|(a, _)| a)
            .collect();
        match renamed.as_slice() {
            [one] => Some((*one).clone()),
            _ => None,
        }
    };
    let adoptions = tfstate::read(
        &ctx.dir.join(state),
        &conv,
        &src,
        provider.as_ref(),
        &in_module,
    )?;
    println!("\nAdopting the objects of {}:", state.display());
    let (mut adopted, mut kept, mut failed) = (0, 0, 0);
    for a in &adoptions.adopt {
        if s.doc.get(&a.address).is_some() {
            println!("  {}: already in the brickform state, kept", a.address);
            kept += 1;
            continue;
        }
        match engine
            .import_known(&mut s.doc, &s.journal, &a.address, &a.id, &a.known)
            .await
        {
            Ok((line, warnings)) => {
                context::print_diags(&warnings, &s.env.config);
                println!("  {line} (from {})", a.terraform_address);
                adopted += 1;
            }
            Err(diags) => {
                context::print_diags(&diags, &s.env.config);
                failed += 1;
            }
        }
    }
    // Outputs the configuration still declares and the state does not hold yet.
    for (name, value, sensitive) in &adoptions.outputs {
        if s.env.config.outputs.contains_key(name) && !s.doc.outputs().contains_key(name) {
            s.doc.set_output(name, value.clone(), *sensitive);
        }
    }
    s.journal
        .checkpoint(&mut s.doc)
        .await
        .map_err(|e| anyhow!("saving state: {e}"))?;
    for why in &adoptions.skipped {
        println!("  not adopted: {why}");
    }
    println!(
        "\n{adopted} adopted, {kept} already there, {failed} failed. Run `brickform -C {} plan`: for what was adopted it plans nothing unless the configuration and the workspace differ.",
        out.display()
    );
    if failed > 0 {
        return Err(Failure::reported());
    }
    Ok(ExitCode::SUCCESS)
}
