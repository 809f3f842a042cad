//! Fuzzing the loader and the evaluator: generated HCL-ish configurations — valid and broken
//! syntax, every standard function with arguments of any type, huge numbers, references
//! that double values, loops over loops, `count`/`for_each` from any expression, file
//! functions on a named pipe, a device, a directory and a file past the size limit — are
//! loaded and planned against the test provider. Whatever the input, the case must end: a
//! plan or diagnostics, never a panic (proptest reports one as a failure), an abort or a
//! hang. Time is bounded by the limits (core/src/limits.rs), not by a clock here.
//!
//! CI runs `BRICKFORM_FUZZ_CASES` cases (default 2000) from a fixed seed, about a second. The
//! longer run, as a benchmark-style job:
//!
//!   BRICKFORM_FUZZ_CASES=20000 cargo test --release -p brickform-core --test fuzz -- --nocapture
//!
//! It prints the number of cases run and how they ended.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::PlanMode;
use brickform_state::StateDocument;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::cell::Cell;
use std::path::Path;
use support::Harness;

/// Paths the file functions are given: a regular file, a template, a named pipe, a device, a
/// directory, a sparse file past the size limit, nothing.
const PATHS: &[&str] = &[
    "small.txt",
    "t.tpl",
    "pipe",
    "/dev/zero",
    "/dev/urandom",
    "sub",
    "huge.bin",
    "missing.txt",
];

fn fixtures(dir: &Path) {
    std::fs::write(dir.join("small.txt"), "a,b\n1,2\n").unwrap();
    std::fs::write(
        dir.join("t.tpl"),
        "%{ for x in xs }${x}%{ endfor }${file(\"pipe\")}",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::File::create(dir.join("huge.bin"))
        .unwrap()
        .set_len(brickform_core::limits::MAX_FILE_BYTES + 1)
        .unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..20).prop_map(|n| n.to_string()),
        Just("-1".to_string()),
        Just("1.5".to_string()),
        Just("1e9".to_string()),
        Just("1e18".to_string()),
        Just("9007199254740993".to_string()),
        Just("18446744073709551616".to_string()),
        Just("1e308".to_string()),
        Just("-1e308".to_string()),
        Just("0.000001".to_string()),
    ]
}

fn string_lit() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"\"".to_string()),
        Just("\"a\"".to_string()),
        Just("\"a\\nb\\nc\"".to_string()),
        Just("\"%d%s%v%1000000d\"".to_string()),
        Just("\"/a(b)*/\"".to_string()),
        Just("\"${\"".to_string()),
        Just("\"k\"".to_string()),
        Just("\"\\u00e9\\t\"".to_string()),
        "[a-z ,{}\\[\\]:\"0-9]{0,12}".prop_map(|s| format!("{s:?}")),
        prop::sample::select(PATHS).prop_map(|p| format!("{p:?}")),
    ]
}

/// Names of the standard functions and the lazy ones the evaluator owns.
fn function() -> impl Strategy<Value = &'static str> {
    let mut names: Vec<&'static str> = brickform_core::lang::functions::names().to_vec();
    names.extend(["try", "can", "templatefile", "nosuchfunction"]);
    prop::sample::select(names)
}

/// A reference to something the generated configuration may define (or not).
fn reference() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u8..6).prop_map(|i| format!("local.l{i}")),
        Just("var.v".to_string()),
        Just("var.nope".to_string()),
        Just("count.index".to_string()),
        Just("each.key".to_string()),
        Just("each.value".to_string()),
        Just("test_thing.r.name".to_string()),
        Just("test_thing.r[0].name".to_string()),
        Just("test_thing.r[*].name".to_string()),
        Just("data.test_info.i.user".to_string()),
        Just("path.module".to_string()),
    ]
}

fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        number(),
        string_lit(),
        Just("true".to_string()),
        Just("null".to_string()),
        reference(),
    ];
    leaf.prop_recursive(4, 48, 4, |inner| {
        prop_oneof![
            4 => (function(), prop::collection::vec(inner.clone(), 0..4), any::<bool>()).prop_map(
                |(f, args, expand)| {
                    let dots = if expand && !args.is_empty() { "..." } else { "" };
                    format!("{f}({}{dots})", args.join(", "))
                }
            ),
            1 => prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            1 => prop::collection::vec(inner.clone(), 0..3).prop_map(|v| {
                let fields: Vec<String> = v.iter().enumerate().map(|(i, e)| format!("k{i} = {e}")).collect();
                format!("{{ {} }}", fields.join(", "))
            }),
            1 => (inner.clone(), prop::sample::select(vec!["+", "-", "*", "/", "%", "==", "<", "&&", "||"]), inner.clone())
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            1 => (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
            1 => (inner.clone(), inner.clone()).prop_map(|(c, v)| format!("[for x in {c} : {v}]")),
            1 => (inner.clone(), inner.clone()).prop_map(|(c, v)| format!("{{ for k, x in {c} : tostring(k) => {v}... }}")),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("\"${{{a}}}-${{{b}}}\"")),
            1 => (inner.clone(), inner.clone()).prop_map(|(c, b)| format!("\"%{{ for x in {c} }}${{{b}}}%{{ endfor }}\"")),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, i)| format!("{a}[{i}]")),
            1 => inner.clone().prop_map(|a| format!("{a}[*].k0")),
            1 => inner.clone().prop_map(|a| format!("-{a}")),
            1 => inner.clone().prop_map(|a| format!("!{a}")),
        ]
    })
}

/// A fragment of text that may break the syntax.
fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9 ={}\\[\\]()\",.:?\\n$%~*<>!&|#/-]{0,40}",
        (1usize..2000).prop_map(|n| "[".repeat(n)),
        (1usize..500).prop_map(|n| format!("{}1{}", "(".repeat(n), ")".repeat(n))),
        Just("<<EOT\nunterminated".to_string()),
        Just("\"${".to_string()),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    locals: Vec<String>,
    count: Option<String>,
    for_each: Option<String>,
    name: String,
    output: String,
    default: String,
    junk: Option<String>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(expr(), 0..6),
        // A bare number as often as an expression: counts are mostly literals.
        prop::option::weighted(0.3, prop_oneof![number(), expr()]),
        prop::option::weighted(0.2, expr()),
        prop_oneof![3 => Just("\"x\"".to_string()), 1 => expr()],
        expr(),
        expr(),
        prop::option::weighted(0.15, junk()),
    )
        .prop_map(
            |(locals, count, for_each, name, output, default, junk)| Case {
                locals,
                count,
                for_each,
                name,
                output,
                default,
                junk,
            },
        )
}

fn render(c: &Case) -> String {
    let mut out = format!("variable \"v\" {{\n  default = {}\n}}\n\n", c.default);
    out.push_str("locals {\n");
    for (i, l) in c.locals.iter().enumerate() {
        out.push_str(&format!("  l{i} = {l}\n"));
    }
    out.push_str("}\n\ndata \"test_info\" \"i\" {}\n\nresource \"test_thing\" \"r\" {\n");
    if let Some(n) = &c.count {
        out.push_str(&format!("  count = {n}\n"));
    }
    if let Some(f) = &c.for_each {
        out.push_str(&format!("  for_each = {f}\n"));
    }
    out.push_str(&format!("  name = {}\n}}\n\n", c.name));
    out.push_str(&format!("output \"o\" {{\n  value = {}\n}}\n", c.output));
    if let Some(j) = &c.junk {
        out.push_str(j);
        out.push('\n');
    }
    out
}

/// How the cases ended, for the report.
#[derive(Default)]
struct Tally {
    cases: Cell<u32>,
    /// Refused by the loader (syntax, structure).
    unloaded: Cell<u32>,
    /// Loaded, then refused with diagnostics while planning (evaluation errors, limits).
    rejected: Cell<u32>,
    planned: Cell<u32>,
}

/// Loads and plans one configuration. Either outcome is fine; only ending matters.
async fn run(h: &Harness, src: &str, tally: &Tally) {
    tally.cases.set(tally.cases.get() + 1);
    let (config, d) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
    );
    // Rendering every diagnostic is part of what must not panic.
    let _ = d.render_plain(&config.sources);
    if d.has_errors() {
        tally.unloaded.set(tally.unloaded.get() + 1);
        return;
    }
    let (vars, d) = resolve(&config, &VarInputs::default(), None);
    let _ = d.render_plain(&config.sources);
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let doc = StateDocument::new("default");
    let (planned, d) = engine
        .plan(
            &doc,
            &PlanRequest {
                mode: PlanMode::Normal,
                refresh: false,
                ..Default::default()
            },
        )
        .await;
    let _ = d.render_plain(&config.sources);
    if planned.is_some() {
        tally.planned.set(tally.planned.get() + 1);
    } else {
        tally.rejected.set(tally.rejected.get() + 1);
    }
}

#[test]
fn generated_configurations_load_and_plan_without_panic_or_hang() {
    let cases = std::env::var("BRICKFORM_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2000);
    let h = Harness::new();
    fixtures(h.dir.path());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tally = Tally::default();
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let result = runner.run(&case(), |c| {
        rt.block_on(run(&h, &render(&c), &tally));
        Ok(())
    });
    eprintln!(
        "fuzz: {} cases run: {} refused by the loader, {} by the planner with diagnostics, {} planned",
        tally.cases.get(),
        tally.unloaded.get(),
        tally.rejected.get(),
        tally.planned.get(),
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(tally.cases.get() >= cases);
    // The generator reaches every outcome: it is not only producing syntax errors.
    assert!(tally.unloaded.get() > 0 && tally.rejected.get() > 0 && tally.planned.get() > 0);
}

/// The cases issue 12 found by hand, through the same path as the generated ones.
#[test]
fn the_cases_found_by_hand_end_in_diagnostics() {
    let h = Harness::new();
    fixtures(h.dir.path());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let doubling: String = (1..=40)
        .map(|i| format!("  s{i} = \"${{local.s{}}}${{local.s{}}}\"\n", i - 1, i - 1))
        .collect();
    let lists: String = (1..=40)
        .map(|i| format!("  l{i} = [local.l{}, local.l{}]\n", i - 1, i - 1))
        .collect();
    let cases = [
        (
            "resource \"test_thing\" \"r\" {\n  count = 1e18\n  name = \"x\"\n}\n".to_string(),
            "at most 100000",
        ),
        (
            "resource \"test_thing\" \"r\" {\n  count = 9007199254740993\n  name = \"x\"\n}\n"
                .to_string(),
            "at most 100000",
        ),
        (
            "locals {\n  x = indent(1e9, \"a\\nb\")\n}\n".to_string(),
            "limit of 64 MiB",
        ),
        (
            "locals {\n  r = range(1000)\n  x = setproduct(local.r, local.r, local.r)\n}\n"
                .to_string(),
            "limit of 1000000",
        ),
        (
            format!("locals {{\n  s0 = \"0123456789abcdef\"\n{doubling}}}\n"),
            "limit of 64 MiB",
        ),
        (
            format!("locals {{\n  l0 = [1, 2, 3, 4]\n{lists}}}\n"),
            "more than 256 MiB of data",
        ),
        (
            "locals {\n  x = [for a in range(1000) : [for b in range(1000) : [for c in range(1000) : c]]]\n}\n".to_string(),
            "more than 256 MiB of data",
        ),
        (
            "locals {\n  x = can([for a in range(1000) : [for b in range(1000) : [for c in range(1000) : c]]])\n}\n".to_string(),
            "more than 256 MiB of data",
        ),
        (
            "locals {\n  x = file(\"pipe\")\n}\n".to_string(),
            "named pipe",
        ),
        (
            "locals {\n  x = filesha256(\"/dev/urandom\")\n}\n".to_string(),
            "a device",
        ),
        (
            "locals {\n  x = filebase64(\"huge.bin\")\n}\n".to_string(),
            "more than the limit of 256 MiB",
        ),
        (
            "locals {\n  x = format(\"%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d%1000000d\", 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)\n}\n".to_string(),
            "limit of 64 MiB",
        ),
        (
            "locals {\n  x = replace(join(\"\", [for i in range(1000) : \"aaaaaaaaaa\"]), \"\", join(\"\", [for i in range(1000) : \"bbbbbbbbbb\"]))\n}\n".to_string(),
            "limit of 64 MiB",
        ),
    ];
    for (src, why) in cases {
        let (config, d) = load_sources(
            h.dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.clone())],
        );
        assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
        let (vars, _) = resolve(&config, &VarInputs::default(), None);
        let engine = Engine::new(&config, &h.registry, &vars, "default");
        let doc = StateDocument::new("default");
        let (planned, d) = rt.block_on(engine.plan(&doc, &PlanRequest::default()));
        let text = d.render_plain(&config.sources);
        assert!(planned.is_none(), "{src}");
        assert!(text.contains(why), "{src}\n{text}");
        assert!(text.contains("main.bf.hcl:"), "{src}\n{text}");
    }
}
