//! `brickform convert DIR`: a Terraform configuration written for the Databricks provider,
//! rewritten as brickform configuration; with `--state`, the objects its Terraform state
//! holds are adopted into the brickform state, so nothing is recreated.

use crate::args::{PlanArgs, VarArgs};
use crate::context::{self, Ctx, Session};
use crate::failure::{Failure, Outcome};
use anyhow::anyhow;
use brickform_core::engine::ImportOutcome;
use brickform_core::lang::load::Config;
use brickform_databricks::terraform::{Conversion, convert_dir, tfstate};
use std::path::{Path, PathBuf};
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
    print_conversion(&conv, &src, &out);
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
    let in_module =
        |m: &str, t: &str, n: &str| tfstate::module_address(&engine.config, &conv, m, t, n);
    let adoptions = tfstate::read(
        &ctx.dir.join(state),
        &conv,
        &src,
        provider.as_ref(),
        &in_module,
    )?;
    println!("\nAdopting the objects of {}:", state.display());
    let outcomes = engine
        .import_all(&mut s.doc, &s.journal, &adoptions.adopt, &adoptions.outputs)
        .await
        .map_err(|e| anyhow!("saving state: {e}"))?;
    let failed = print_imports(&outcomes, &adoptions.skipped, &s.env.config);
    println!(
        "Run `brickform -C {} plan`: for what was adopted it plans nothing unless the configuration and the workspace differ.",
        out.display()
    );
    if failed {
        return Err(Failure::reported());
    }
    Ok(ExitCode::SUCCESS)
}

/// What was converted, where it went, what changed on the way and what was left out.
fn print_conversion(conv: &Conversion, src: &Path, out: &Path) {
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
}

/// Each object of the Terraform state as it was adopted, kept or not; whether any failed.
fn print_imports(outcomes: &[ImportOutcome], skipped: &[String], config: &Config) -> bool {
    let (mut adopted, mut kept, mut failed) = (0, 0, 0);
    for o in outcomes {
        match o {
            ImportOutcome::Kept(address) => {
                println!("  {address}: already in the brickform state, kept");
                kept += 1;
            }
            ImportOutcome::Imported(line, warnings) => {
                context::print_diags(warnings, config);
                println!("  {line}");
                adopted += 1;
            }
            ImportOutcome::Failed(diags) => {
                context::print_diags(diags, config);
                failed += 1;
            }
        }
    }
    for why in skipped {
        println!("  not adopted: {why}");
    }
    print!("\n{adopted} adopted, {kept} already there, {failed} failed. ");
    failed > 0
}
