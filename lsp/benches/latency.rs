//! Latency of completion and hover, in process, on a generated configuration of about
//! 2,000 lines: what a keystroke costs once the directory is loaded, and what loading it
//! again after an edit costs (the server reloads before answering a changed directory).
//!
//! Run with `cargo bench -p brickform-lsp --bench latency` (not a timed test: it prints
//! the numbers).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic

use brickform_core::lang::load::load_sources;
use brickform_core::provider::Registry;
use brickform_lsp::analysis;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(Arc::new(brickform_databricks::DatabricksProvider::new(
        brickform_databricks::Options {
            local: None,
            secrets: Arc::new(brickform_databricks::client::NoStore),
            env: Arc::new(|_: &str| None),
        },
    )));
    r
}

/// About 2,000 lines: variables, locals, and catalogs with schemas that refer to them.
fn configuration() -> String {
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(&format!(
            "variable \"owner_{i}\" {{\n  description = \"Owner {i}\"\n  default     = \"team-{i}\"\n}}\n\n"
        ));
    }
    text.push_str("locals {\n");
    for i in 0..40 {
        text.push_str(&format!("  prefix_{i} = \"p{i}\"\n"));
    }
    text.push_str("}\n\n");
    for i in 0..135 {
        text.push_str(&format!(
            "resource \"databricks_catalog\" \"c{i}\" {{\n  name           = \"${{local.prefix_{}}}_c{i}\"\n  comment        = \"catalog {i}\"\n  owner          = var.owner_{}\n  isolation_mode = \"OPEN\"\n}}\n\n",
            i % 40,
            i % 40
        ));
        text.push_str(&format!(
            "resource \"databricks_schema\" \"s{i}\" {{\n  catalog_name = databricks_catalog.c{i}.name\n  name         = \"raw\"\n  comment      = \"schema {i}\"\n}}\n\n"
        ));
    }
    text
}

fn measure(what: &str, runs: usize, mut f: impl FnMut() -> usize) {
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    let mut found = 0;
    for _ in 0..runs {
        let started = Instant::now();
        found = f();
        times.push(started.elapsed());
    }
    times.sort();
    let mean = times.iter().sum::<Duration>() / runs as u32;
    println!(
        "{what:<44} median {:>9.3?}  mean {:>9.3?}  p99 {:>9.3?}  ({found} results)",
        times[runs / 2],
        mean,
        times[runs * 99 / 100]
    );
    assert!(found > 0, "{what}: nothing found");
}

fn main() {
    let registry = registry();
    let base = configuration();
    // The positions completion is asked at, each appended where a user would type it.
    let cases: Vec<(&str, String)> = vec![
        (
            "resource type (resource \"databricks_|)",
            "resource \"databricks_".into(),
        ),
        (
            "argument of databricks_catalog",
            "resource \"databricks_catalog\" \"new\" {\n  ".into(),
        ),
        (
            "enumerated value (isolation_mode = \"|)",
            "resource \"databricks_catalog\" \"new\" {\n  isolation_mode = \"".into(),
        ),
        (
            "var.",
            "resource \"databricks_catalog\" \"new\" {\n  owner = var.".into(),
        ),
        (
            "TYPE.NAME. (attributes)",
            "resource \"databricks_schema\" \"new\" {\n  catalog_name = databricks_catalog.c134."
                .into(),
        ),
        (
            "TYPE. (names)",
            "resource \"databricks_schema\" \"new\" {\n  catalog_name = databricks_catalog.".into(),
        ),
    ];
    println!(
        "configuration: {} lines, {} bytes",
        base.lines().count(),
        base.len()
    );
    let load = || {
        load_sources(
            std::path::Path::new("/bench"),
            vec![(
                "main.bf.hcl".into(),
                "/bench/main.bf.hcl".into(),
                base.clone(),
            )],
        )
    };
    let (config, diags) = load();
    assert!(
        !diags.has_errors(),
        "{}",
        diags.render_plain(&config.sources)
    );
    measure("load the directory (parse, after an edit)", 50, || {
        load().0.resources.len()
    });
    for (what, typed) in &cases {
        let text = format!("{base}{typed}");
        let offset = text.len();
        measure(&format!("completion: {what}"), 200, || {
            analysis::complete(&registry, &config, &text, offset).len()
        });
    }
    // Hover on the last catalog's `isolation_mode`, near the end of the file.
    let offset = base.rfind("isolation_mode").unwrap() + 3;
    measure("hover: argument near the end", 200, || {
        analysis::hover(&registry, &config, &base, offset).map_or(0, |_| 1)
    });
    let offset = base.find("isolation_mode").unwrap() + 3;
    measure("hover: argument near the start", 200, || {
        analysis::hover(&registry, &config, &base, offset).map_or(0, |_| 1)
    });
    let offset = base.rfind("databricks_catalog.c134").unwrap() + 20;
    measure("definition: databricks_catalog.c134", 200, || {
        analysis::definition(&config, &base, offset).map_or(0, |_| 1)
    });
}
