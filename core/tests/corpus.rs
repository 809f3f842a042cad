//! The corpus of invalid resource configurations (`core/tests/corpus/NAME/`), validated in
//! process through `Engine::validate` with a test-only provider, so the engine's own
//! errors are checked without any provider's rules. Each case directory holds `*.bf.hcl` files and `expected.txt`:
//!
//! - line 1: the summary of one error diagnostic;
//! - line 2: where that same diagnostic points, `file:line:column`;
//! - further lines: text that must appear in the plain rendering of all the diagnostics
//!   (details and hints such as "did you mean `name`?").
//!
//! Validation never calls the provider: every call is counted and must stay at zero.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use async_trait::async_trait;
use brickform_core::diagnostics::Diagnostics;
use brickform_core::engine::Engine;
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::lang::load::load_dir;
use brickform_core::provider::*;
use brickform_core::value::Object;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts provider calls; validation must make none.
static CALLS: AtomicUsize = AtomicUsize::new(0);

fn called() -> ProviderError {
    CALLS.fetch_add(1, Ordering::SeqCst);
    ProviderError::other("validate must not call the provider")
}

struct Kind {
    name: &'static str,
    schema: Schema,
}

#[async_trait]
impl ResourceKind for Kind {
    fn type_name(&self) -> &'static str {
        self.name
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn create(&self, _: &OpContext, _: &Object) -> ProviderResult<Remote> {
        Err(called())
    }
    async fn read(&self, _: &OpContext, _: &str, _: &Object) -> ProviderResult<Option<Remote>> {
        Err(called())
    }
    async fn update(
        &self,
        _: &OpContext,
        _: &str,
        _: &Object,
        _: &Object,
    ) -> ProviderResult<Remote> {
        Err(called())
    }
    async fn delete(&self, _: &OpContext, _: &str, _: &Object) -> ProviderResult<()> {
        Err(called())
    }
}

struct Info {
    schema: Schema,
}

#[async_trait]
impl DataSource for Info {
    fn type_name(&self) -> &'static str {
        "test_info"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, _: &Object) -> ProviderResult<Object> {
        Err(called())
    }
}

struct TestProvider {
    schema: Schema,
}

#[async_trait]
impl Provider for TestProvider {
    fn name(&self) -> &'static str {
        "test"
    }
    fn config_schema(&self) -> &Schema {
        &self.schema
    }
    fn resource_kinds(&self) -> Vec<Arc<dyn ResourceKind>> {
        vec![
            Arc::new(Kind {
                name: "test_thing",
                schema: thing_schema(),
            }),
            Arc::new(Kind {
                name: "test_job",
                schema: job_schema(),
            }),
        ]
    }
    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        vec![Arc::new(Info {
            schema: Schema::new()
                .attr(Attribute::optional("filter", AttrType::String))
                .attr(Attribute::computed("user", AttrType::String)),
        })]
    }
    async fn configure(&self, _: &Object) -> ProviderResult<()> {
        Err(called())
    }
}

/// Required, optional and computed attributes of several types, a keyed block and a single
/// block with a block nested in it.
fn thing_schema() -> Schema {
    Schema::new()
        .attr(Attribute::required("name", AttrType::String))
        .attr(Attribute::optional("comment", AttrType::String))
        .attr(Attribute::optional("size", AttrType::Number))
        .attr(Attribute::optional("enabled", AttrType::Bool))
        .attr(Attribute::optional(
            "tags",
            AttrType::Map(Box::new(AttrType::String)),
        ))
        .attr(Attribute::optional_computed("owner", AttrType::String))
        .attr(Attribute::computed("id", AttrType::String))
        .attr(Attribute::computed(
            "endpoints",
            AttrType::List(Box::new(AttrType::String)),
        ))
        .block(BlockType::keyed(
            "item",
            "key",
            Schema::new()
                .attr(Attribute::required("key", AttrType::String))
                .attr(Attribute::optional("value", AttrType::String)),
        ))
        .block(BlockType::single(
            "settings",
            Schema::new()
                .attr(Attribute::required("mode", AttrType::String))
                .block(BlockType::single(
                    "retry",
                    Schema::new().attr(Attribute::optional("attempts", AttrType::Number)),
                )),
        ))
}

/// A kind whose `task` block is required.
fn job_schema() -> Schema {
    Schema::new()
        .attr(Attribute::required("name", AttrType::String))
        .block(
            BlockType::list(
                "task",
                Schema::new().attr(Attribute::required("task_key", AttrType::String)),
            )
            .min(1),
        )
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(Arc::new(TestProvider {
        schema: Schema::new().attr(Attribute::required("host", AttrType::String)),
    }));
    r
}

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// What `brickform validate` does, with the test provider registered.
async fn validate(dir: &Path, registry: &Registry) -> (Diagnostics, String, Vec<String>) {
    let (config, mut diags) = load_dir(dir);
    if !diags.has_errors() {
        let inputs = VarInputs {
            allow_unknown: true,
            ..VarInputs::default()
        };
        let (vars, d) = resolve(&config, &inputs, Some("default"));
        diags.extend(d);
        let engine = Engine::new(&config, registry, &vars, "default");
        diags.extend(engine.validate().await);
    }
    diags.sort();
    let text = diags.render_plain(&config.sources);
    let located = diags
        .iter()
        .map(|d| {
            let at = d
                .location(&config.sources)
                .map(|(f, l, c)| format!("{f}:{l}:{c}"))
                .unwrap_or_else(|| "(no location)".into());
            format!("{} @ {at}", d.summary)
        })
        .collect();
    (diags, text, located)
}

async fn check(dir: &Path, registry: &Registry) -> Result<(), String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let expected: Vec<String> = std::fs::read_to_string(dir.join("expected.txt"))
        .map_err(|e| format!("{name}: expected.txt: {e}"))?
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    let [summary, location, rest @ ..] = expected.as_slice() else {
        return Err(format!(
            "{name}: expected.txt needs a summary and a location"
        ));
    };
    let (diags, text, located) = validate(dir, registry).await;
    let mut problems = Vec::new();
    if !diags.has_errors() {
        problems.push("no error reported".to_string());
    }
    let want = format!("{summary} @ {location}");
    if !located.contains(&want) {
        problems.push(format!("no diagnostic {want:?}"));
    }
    for line in rest {
        if !text.contains(line.as_str()) {
            problems.push(format!("the diagnostics lack {line:?}"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{name}: {}\n  diagnostics: {located:#?}\n{text}",
            problems.join("; ")
        ))
    }
}

#[tokio::test]
async fn every_invalid_resource_configuration_is_reported_where_it_is() {
    let registry = registry();
    let cases = cases();
    assert!(cases.len() >= 30, "only {} corpus cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        if let Err(e) = check(c, &registry).await {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
    assert_eq!(
        CALLS.load(Ordering::SeqCst),
        0,
        "validate called the provider"
    );
}

/// The corpus harness itself: a valid configuration passes with no diagnostics, so the errors
/// above come from the cases and not from the test provider or the harness.
#[tokio::test]
async fn a_valid_configuration_passes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("main.bf.hcl"),
        r#"
provider "test" {
  host = "localhost"
}
variable "names" {
  default = ["a", "b"]
}
data "test_info" "me" {}
resource "test_thing" "base" {
  name = "base"
  settings {
    mode = "fast"
    retry { attempts = 3 }
  }
}
resource "test_thing" "each" {
  for_each = toset(var.names)
  name     = "${each.key}-${data.test_info.me.user}"
  size     = 2
  tags     = { team = "data" }
  comment  = test_thing.base.id
  dynamic "item" {
    for_each = var.names
    iterator = n
    content {
      key   = n.value
      value = "v"
    }
  }
  lifecycle {
    ignore_changes = [comment]
  }
}
resource "test_job" "j" {
  count = 2
  name  = "job-${count.index}"
  task { task_key = "t" }
  depends_on = [test_thing.each]
}
output "ids" {
  value = [for t in test_thing.each : t.id]
}
"#,
    )
    .unwrap();
    let (diags, text, _) = validate(dir.path(), &registry()).await;
    assert!(diags.is_empty(), "{text}");
}
