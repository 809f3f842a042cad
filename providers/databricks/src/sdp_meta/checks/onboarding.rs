//! Onboardings: the file set, the runner, the build and the rules across flows (V9, V11–V13, V18, V21, V23, V24, V26).

use super::*;

/// What the sdp-meta build the pipelines run is known to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Build {
    /// 0.1.0 / 0.1.1 / upstream main (or a version brickform does not know): #265 0.1.0
    /// behaviour, #266 and #268 unfixed.
    PreFix,
    /// A wheel built from the PR #267 branch.
    Fixed,
    /// `sdp_meta_version` known only after apply.
    Unknown,
}

pub(super) const KNOWN_VERSIONS: [&str; 2] = ["0.1.0", "0.1.1"];
pub(super) const DEFAULT_VERSION: &str = "0.1.0";

impl Build {
    pub(super) fn of(o: &Object, out: &mut Vec<Finding>) -> Build {
        let version = match text(o, "sdp_meta_version") {
            Tri::Known(v) => v.trim(),
            Tri::Absent => DEFAULT_VERSION,
            Tri::Unknown => return Build::Unknown,
        };
        if version.contains("+pr267") {
            return Build::Fixed;
        }
        if !KNOWN_VERSIONS.contains(&version) {
            let mut r = Report {
                flow: None,
                base: None,
                out,
            };
            r.warn(
                &rules::VERSION,
                &At::root().key("sdp_meta_version"),
                &format!("sdp_meta_version = {} is not a build brickform knows", quote(version)),
                "brickform knows 0.1.0, 0.1.1 (upstream main) and wheels built from the PR #267 branch (\"+pr267\"), and checks this one as if it lacked the fixes for #265, #266 and #268",
                "set sdp_meta_version to \"0.1.0\", \"0.1.1\" or \"<version>+pr267\" to match the wheel the pipelines install",
            );
        }
        Build::PreFix
    }
}

/// What the runner notebook passes to sdp-meta, and for which groups' pipelines.
#[derive(Debug, Clone)]
pub(super) struct Runner {
    pub(super) bronze_fn: Tri<bool>,
    pub(super) silver_fn: Tri<bool>,
    /// The groups whose pipelines run this runner; `None` for every group.
    pub(super) groups: Option<Vec<String>>,
    /// The groups are not known yet: nothing is decided about any group.
    pub(super) groups_unknown: bool,
}

impl Runner {
    pub(super) fn of(o: &Object) -> Runner {
        let flag = |b: &Object, k: &str| match get(b, k) {
            Tri::Known(Value::Bool(x)) => Tri::Known(*x),
            Tri::Known(Value::String(s)) => Tri::Known(s.trim().eq_ignore_ascii_case("true")),
            Tri::Absent => Tri::Known(false),
            _ => Tri::Unknown,
        };
        match block(o, "runner") {
            Tri::Known(b) => {
                let (groups, groups_unknown) = match get(b, "groups") {
                    Tri::Known(Value::List(l)) => (
                        Some(
                            l.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect(),
                        ),
                        l.iter().any(|v| matches!(v, Value::Unknown)),
                    ),
                    Tri::Unknown => (None, true),
                    _ => (None, false),
                };
                Runner {
                    bronze_fn: flag(b, "bronze_snapshot_function"),
                    silver_fn: flag(b, "silver_snapshot_function"),
                    groups,
                    groups_unknown,
                }
            }
            Tri::Absent => Runner {
                bronze_fn: Tri::Known(false),
                silver_fn: Tri::Known(false),
                groups: None,
                groups_unknown: false,
            },
            Tri::Unknown => Runner {
                bronze_fn: Tri::Unknown,
                silver_fn: Tri::Unknown,
                groups: None,
                groups_unknown: true,
            },
        }
    }
    /// Whether the pipelines of `group` pass the layer's snapshot function.
    pub(super) fn function(&self, layer: Layer, group: Option<&str>) -> Tri<bool> {
        if self.groups_unknown {
            return Tri::Unknown;
        }
        if let (Some(groups), Some(g)) = (&self.groups, group)
            && !groups.iter().any(|x| x == g)
        {
            return Tri::Known(false);
        }
        match layer {
            Layer::Bronze => self.bronze_fn,
            Layer::Silver => self.silver_fn,
        }
    }
}

pub(super) struct OnboardingCtx {
    pub(super) build: Build,
    pub(super) runner: Runner,
    pub(super) uc_enabled: Tri<bool>,
}

/// The onboarding's own attributes: names, overwrite, dependency.
pub(super) fn attribute_rules(o: &Object, out: &mut Vec<Finding>) {
    let mut r = Report {
        flow: None,
        base: None,
        out,
    };
    let root = At::root();
    check_database(o, "database", &root, &mut r);
    check_identifier(o, "bronze_dataflowspec_table", &root, &mut r);
    check_identifier(o, "silver_dataflowspec_table", &root, &mut r);

    if let Tri::Known(p) = text(o, "volume_path") {
        let at = root.key("volume_path");
        let volume = crate::volume_path::VolumePath::parse(p).filter(|v| v.rest.is_empty());
        let segments: Vec<String> = volume
            .map(|v| v.names().map(str::to_string).to_vec())
            .unwrap_or_default();
        if segments.len() != 3 {
            r.error(
                &rules::VOLUME,
                &at,
                &format!("volume_path = {} is not a volume's path", quote(p)),
                "the files are uploaded to a Unity Catalog volume, /Volumes/<catalog>/<schema>/<volume>",
                "use a volume's volume_path, e.g. databricks_volume.conf.volume_path",
            );
        } else {
            for s in &segments {
                if let Some(problem) = identifier_problem(s) {
                    r.error(
                        &rules::V1,
                        &at,
                        &format!("volume_path = {}: segment {}", quote(p), quote(s)),
                        &problem,
                        IDENT_HINT,
                    );
                }
            }
        }
    }
    if let Tri::Known(f) = text(o, "file_name") {
        let lower = f.to_ascii_lowercase();
        if ![".json", ".yml", ".yaml"]
            .iter()
            .any(|e| lower.ends_with(e))
        {
            r.error(
                &rules::FILE_NAME,
                &root.key("file_name"),
                &format!("file_name = {} has an unsupported extension", quote(f)),
                "sdp-meta fails with \"Onboarding file format not supported! Please provide a .json, .yml, or .yaml file\"",
                "name the file onboarding.json (or .yml / .yaml)",
            );
        }
    }
    if let Tri::Known(Value::String(s)) = get(o, "overwrite")
        && s != "True"
    {
        r.warn(
            &rules::V21,
            &root.key("overwrite"),
            &format!("overwrite = {} is not exactly \"True\"", quote(s)),
            "sdp-meta then merges into the dataflowspec tables: that fails when they do not exist yet, and flows removed from the configuration stay in them",
            "set overwrite = \"True\" (the default), unless the spec tables exist and another onboarding shares them",
        );
    }
    if let Tri::Known(Value::String(dep)) = get(o, "dependency") {
        dependency_rules(dep, o, &mut r);
    }
}

pub(super) fn dependency_rules(dep: &str, o: &Object, r: &mut Report) {
    let at = At::root().key("dependency");
    let d = dep.trim();
    let hint = "use \"databricks-labs-sdp-meta==<version>\" or the path of a wheel on a volume (/Volumes/…/databricks_labs_sdp_meta-<version>-py3-none-any.whl)";
    if d.is_empty() || d == "__SET_ME__" {
        r.error(
            &rules::V26,
            &at,
            &format!("dependency = {}", quote(dep)),
            "the runner installs nothing usable (the DAB runner raises ValueError on __SET_ME__)",
            hint,
        );
        return;
    }
    // A PyPI requirement: the project name up to the first version specifier.
    let name_end = d
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(d.len());
    let name: String = d[..name_end]
        .chars()
        .map(|c| {
            if matches!(c, '_' | '.') {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    if name == "sdp-meta" {
        r.error(
            &rules::V26,
            &at,
            &format!("dependency = {} names the PyPI project sdp-meta", quote(dep)),
            "no such project exists on PyPI (sdp-meta 0.1.0's CLI pins it by mistake); the install fails",
            hint,
        );
        return;
    }
    // The version the dependency installs, to compare with sdp_meta_version.
    let pinned = if name == "databricks-labs-sdp-meta" {
        d[name_end..].trim().strip_prefix("==").map(str::trim)
    } else if d.ends_with(".whl") {
        d.rsplit('/').next().and_then(|file| {
            let mut parts = file.split('-');
            match (parts.next(), parts.next()) {
                (Some(n), Some(v)) if n.eq_ignore_ascii_case("databricks_labs_sdp_meta") => Some(v),
                _ => None,
            }
        })
    } else {
        None
    };
    let declared = match text(o, "sdp_meta_version") {
        Tri::Known(v) => v.trim(),
        Tri::Absent => DEFAULT_VERSION,
        Tri::Unknown => return,
    };
    if let Some(pinned) = pinned
        && !pinned.is_empty()
        && pinned != declared
    {
        r.warn(
            &rules::VERSION,
            &at,
            &format!("dependency installs sdp-meta {pinned} but sdp_meta_version = {}", quote(declared)),
            "brickform checks the flows against sdp_meta_version, so the version checks may not match what the pipelines run",
            &format!("set sdp_meta_version = {}", quote(pinned)),
        );
    }
}

/// Per (group, layer): are flows snapshot flows?
#[derive(Default)]
pub(super) struct GroupFacts {
    pub(super) snapshot: usize,
    pub(super) others: usize,
    pub(super) first_other: Option<usize>,
}

/// A table a flow writes or reads: lower-cased `[catalog.]schema` and table.
pub(super) fn table_key(layer: &Object) -> Option<(String, String)> {
    let db = text(layer, "database").known()?;
    let table = text(layer, "table").known()?;
    let db = match text(layer, "catalog") {
        Tri::Known(c) if !db.contains('.') => format!("{c}.{db}"),
        Tri::Unknown => return None,
        _ => db.to_string(),
    };
    Some((db.to_ascii_lowercase(), table.to_ascii_lowercase()))
}

/// The rules that compare an onboarding's flows with each other, and the rules of each flow
/// that depend on the onboarding (its runner, build and Unity Catalog setting).
pub(super) fn cross_flow_rules(flows: &[Value], ctx: &OnboardingCtx, out: &mut Vec<Finding>) {
    let flows = Flows::new(flows);
    let mut seen = Seen::default();
    for i in 0..flows.views.len() {
        let Some((v, mut r)) = flows.report(i, out) else {
            continue;
        };
        seen.record(i, v, &flows.views, &mut r);
        runner_rules(v, ctx, &mut r);
        for layer in [Layer::Bronze, Layer::Silver] {
            if let Some(l) = v.layer(layer) {
                dq_cdc_rule(layer, l, ctx.build, &mut r);
            }
        }
        if ctx.uc_enabled == Tri::Known(false) {
            non_uc_rules(v, &mut r);
        }
        seen.count_snapshots(i, v);
    }
    seen.silver_reader_rules(&flows, out);
    // V11: a snapshot function breaks the non-snapshot flows of the layer on pre-fix builds.
    if ctx.build != Build::PreFix {
        return;
    }
    for (&(group, layer), facts) in &seen.groups {
        let (Tri::Known(true), Some(first)) =
            (ctx.runner.function(layer, Some(group)), facts.first_other)
        else {
            continue;
        };
        if let Some((v, mut r)) = flows.report(first, out) {
            mixed_snapshot_rule(v, (group, layer), facts, &mut r);
        }
    }
}

/// An onboarding's flows, each with the path every finding about it points at.
struct Flows<'f> {
    views: Vec<Option<FlowView<'f>>>,
    paths: Vec<Vec<PathStep>>,
}

impl<'f> Flows<'f> {
    fn new(flows: &'f [Value]) -> Self {
        let views: Vec<Option<FlowView>> = flows
            .iter()
            .map(|v| v.as_object().map(FlowView::new))
            .collect();
        let paths = (0..views.len())
            .map(|i| vec![PathStep::Key("flows".to_string()), PathStep::Index(i)])
            .collect();
        Flows { views, paths }
    }

    /// Flow `i`, and a report of findings about it; `None` when it is not an object.
    fn report<'s>(
        &'s self,
        i: usize,
        out: &'s mut Vec<Finding>,
    ) -> Option<(&'s FlowView<'f>, Report<'s>)> {
        let v = self.views.get(i)?.as_ref()?;
        let r = Report {
            flow: Some(&v.label),
            base: Some(&self.paths[i]),
            out,
        };
        Some((v, r))
    }
}

/// The tables of one layer the flows write: the first flow writing each, and, by the name
/// two of them must not share (`K`), the first flow and the schema of its table.
#[derive(Default)]
struct Tables<K> {
    writers: HashMap<(String, String), usize>,
    names: HashMap<K, (usize, String)>,
}

impl<K: std::hash::Hash + Eq> Tables<K> {
    /// The flow that wrote the table `key` before flow `i`; else `i` is recorded as its writer.
    fn earlier_writer(&mut self, key: &(String, String), i: usize) -> Option<usize> {
        if let Some(first) = self.writers.get(key) {
            return Some(*first);
        }
        self.writers.insert(key.clone(), i);
        None
    }

    /// The first flow to write a table named `name`, with its schema, when that is not
    /// `db`; flow `i` is recorded (`owned` makes the key) when it is the first.
    fn in_other_schema<Q>(
        &mut self,
        name: &Q,
        owned: impl FnOnce() -> K,
        i: usize,
        db: &str,
    ) -> Option<(usize, &str)>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        if !self.names.contains_key(name) {
            self.names.insert(owned(), (i, db.to_string()));
            return None;
        }
        let (first, first_db) = self.names.get(name)?;
        (first_db != db).then_some((*first, first_db.as_str()))
    }
}

/// What the rules across flows gather from the flows read so far.
#[derive(Default)]
struct Seen<'f> {
    ids: HashMap<&'f str, usize>,
    /// Bronze tables: two of one group must not share a name.
    bronze: Tables<(&'f str, String)>,
    /// Silver tables: no two may share a name.
    silver: Tables<String>,
    groups: BTreeMap<(&'f str, Layer), GroupFacts>,
    /// Silver-only flows: (flow, the bronze table they read).
    readers: Vec<(usize, (String, String))>,
}

impl<'f> Seen<'f> {
    /// Checks flow `i` against the flows before it, and records it for the ones after.
    fn record(&mut self, i: usize, v: &FlowView<'f>, views: &[Option<FlowView>], r: &mut Report) {
        self.check_id(i, v, r);
        let silver = v.layer(Layer::Silver);
        if let Some(key) = v.layer(Layer::Bronze).and_then(table_key) {
            self.bronze_table(i, v, &key, views, r);
        }
        if let Some(key) = silver.and_then(table_key) {
            self.silver_table(i, &key, views, r);
        }
        // Silver-only flows read a bronze table another flow may write.
        if let (Some(_), Tri::Absent, Tri::Known(b)) = (silver, v.source, v.bronze)
            && let Some(key) = table_key(b)
        {
            self.readers.push((i, key));
        }
    }

    /// V24: duplicate data_flow_id.
    fn check_id(&mut self, i: usize, v: &FlowView<'f>, r: &mut Report) {
        let Tri::Known(id) = v.id else { return };
        if let Some(&first) = self.ids.get(id) {
            r.error(
                &rules::V24,
                &At::root().key("data_flow_id"),
                &format!("data_flow_id {} is also used by flows[{first}]", quote(id)),
                "sdp-meta onboarding fails with \"onboarding file have duplicated data_flow_ids!\"",
                "give every flow of the onboarding its own data_flow_id",
            );
        } else {
            self.ids.insert(id, i);
        }
    }

    /// The bronze table `key` of flow `i`: one writer per table, and (V23) distinct names
    /// within a group.
    fn bronze_table(
        &mut self,
        i: usize,
        v: &FlowView<'f>,
        key: &(String, String),
        views: &[Option<FlowView>],
        r: &mut Report,
    ) {
        if let Some(first) = self.bronze.earlier_writer(key, i) {
            same_target(Layer::Bronze, key, first, views, r);
            return;
        }
        let Tri::Known(g) = v.group else { return };
        let owned = || (g, key.1.clone());
        let Some((first, db)) = self.bronze.in_other_schema(&owned(), owned, i, &key.0) else {
            return;
        };
        r.warn(
            &rules::V23,
            &At::root().key("bronze").key("table"),
            &format!(
                "bronze.table {} is also written by {} in group {} (schema {db})",
                quote(&key.1),
                label_of(views, first),
                quote(g)
            ),
            "in a pipeline using the legacy publishing mode (target) both land in the pipeline's schema, and the input views {table}_bronze_inputview collide",
            "give the bronze tables of one group distinct names, or publish the pipeline with schema (direct publishing mode)",
        );
    }

    /// The silver table `key` of flow `i`: one writer per table, and (V24) distinct names.
    fn silver_table(
        &mut self,
        i: usize,
        key: &(String, String),
        views: &[Option<FlowView>],
        r: &mut Report,
    ) {
        if let Some(first) = self.silver.earlier_writer(key, i) {
            same_target(Layer::Silver, key, first, views, r);
            return;
        }
        let owned = || key.1.clone();
        let Some((first, db)) = self
            .silver
            .in_other_schema(key.1.as_str(), owned, i, &key.0)
        else {
            return;
        };
        r.warn(
            &rules::V24,
            &At::root().key("silver").key("table"),
            &format!(
                "silver.table {} is also the silver table of {} (schema {db})",
                quote(&key.1),
                label_of(views, first)
            ),
            "the silver transformations file is joined on the table name only, so both flows get the same select_exp / where_clause",
            "give the silver tables distinct names",
        );
    }

    /// Counts flow `i`'s layers as snapshot flows or not, by group, for V11.
    fn count_snapshots(&mut self, i: usize, v: &FlowView<'f>) {
        let Tri::Known(g) = v.group else { return };
        let bronze_snapshot = v
            .layer(Layer::Bronze)
            .and_then(|_| v.format().map(|f| f == Format::Snapshot));
        let silver_snapshot = v
            .layer(Layer::Silver)
            .and_then(|s| configured(s, "apply_changes_from_snapshot"));
        for (layer, snapshot) in [
            (Layer::Bronze, bronze_snapshot),
            (Layer::Silver, silver_snapshot),
        ] {
            let Some(snapshot) = snapshot else { continue };
            let facts = self.groups.entry((g, layer)).or_default();
            if snapshot {
                facts.snapshot += 1;
            } else {
                facts.others += 1;
                facts.first_other.get_or_insert(i);
            }
        }
    }

    /// V18 across flows: silver-only flows reading another flow's AUTO CDC target.
    fn silver_reader_rules(&self, flows: &Flows, out: &mut Vec<Finding>) {
        for (i, key) in &self.readers {
            let Some(writer) = self.bronze.writers.get(key) else {
                continue;
            };
            let Some(Some(w)) = flows.views.get(*writer) else {
                continue;
            };
            let Some((v, mut r)) = flows.report(*i, out) else {
                continue;
            };
            let (Some(s), Some(b)) = (v.silver.known(), w.layer(Layer::Bronze)) else {
                continue;
            };
            silver_reads_bronze_rules(b, s, Some(&w.label), &mut r);
        }
    }
}

/// V11: the runner passes the layer's snapshot function to the group of `v`, a
/// non-snapshot flow, which builds before the #268 fix break.
fn mixed_snapshot_rule(
    v: &FlowView,
    (group, layer): (&str, Layer),
    facts: &GroupFacts,
    r: &mut Report,
) {
    let ln = layer.name();
    let (field, what) = match layer {
        Layer::Bronze => {
            let f = v.format().map_or("?", Format::name);
            (
                At::root().key("source").key("format"),
                format!("source.format = {} is not a snapshot", quote(f)),
            )
        }
        Layer::Silver => (
            At::root().key("silver"),
            "silver has no apply_changes_from_snapshot".to_string(),
        ),
    };
    let group_is = if facts.snapshot > 0 {
        format!(
            "group {} mixes snapshot and non-snapshot {ln} flows",
            quote(group)
        )
    } else {
        format!("its group {} has no {ln} snapshot flow", quote(group))
    };
    let others = match facts.others {
        0 | 1 => String::new(),
        n => format!(
            " (and the group's {} other non-snapshot {ln} flow(s))",
            n - 1
        ),
    };
    r.error(
        &rules::V11,
        &field,
        &format!("{what}, the runner passes {ln}_next_snapshot_and_version, and {group_is}"),
        &format!("sdp-meta before the #268 fix applies the function to every {ln} flow of the pipeline and registers no input view for this flow{others}, whose writes fail with dataset-not-found"),
        &format!("give snapshot and non-snapshot {ln} flows separate groups and runners (pass the function only where snapshot flows run), or run a build with the fixes (sdp_meta_version \"<version>+pr267\")"),
    );
}

pub(super) fn label_of(views: &[Option<FlowView>], i: usize) -> String {
    match views.get(i) {
        Some(Some(v)) => v.label.clone(),
        _ => format!("flows[{i}]"),
    }
}

/// Two flows writing the same table: `first` wrote it before flow `i`.
pub(super) fn same_target(
    layer: Layer,
    key: &(String, String),
    first: usize,
    views: &[Option<FlowView>],
    r: &mut Report,
) {
    let ln = layer.name();
    r.error(
        &rules::TARGET,
        &At::root().key(ln).key("table"),
        &format!(
            "{ln} table {}.{} is also written by {}",
            key.0,
            key.1,
            label_of(views, first)
        ),
        "a table has one writer: two flows declaring it fail in one pipeline and conflict across pipelines",
        &format!("give each flow its own {ln} table (append_flow adds a second source to one table)"),
    );
}

/// V9 and V12: the bronze snapshot reader function.
pub(super) fn runner_rules(v: &FlowView, ctx: &OnboardingCtx, r: &mut Report) {
    if v.layer(Layer::Bronze).is_none() || v.format() != Some(Format::Snapshot) {
        return;
    }
    let at = At::root().key("source").key("snapshot_format");
    let group = match v.group {
        Tri::Known(g) => Some(g),
        _ => None,
    };
    let function = ctx.runner.function(Layer::Bronze, group);
    match v.snapshot_format() {
        Tri::Known("delta") => match (function, ctx.build) {
            (Tri::Known(false), Build::PreFix) => r.error(
                &rules::V9,
                &at,
                "source.snapshot_format = \"delta\" and the runner passes no bronze_next_snapshot_and_version",
                "sdp-meta before the #266 fix fails at pipeline start with \"Snapshot reader function not provided!\"",
                "set runner { bronze_snapshot_function = true } and pass bronze_next_snapshot_and_version in the runner, or run a build with the fixes (sdp_meta_version \"<version>+pr267\")",
            ),
            (Tri::Known(true), Build::PreFix) => r.warn(
                &rules::V12,
                &at,
                "the runner passes bronze_next_snapshot_and_version but source.snapshot_format = \"delta\"",
                "sdp-meta before the #268 fix reads the built-in view and silently ignores the function (a full scan every run, and no column renames, so keys such as lfc_end_at cannot resolve)",
                "run a build with the fixes (sdp_meta_version \"<version>+pr267\"), or make sure the flow works without the function",
            ),
            _ => {}
        },
        Tri::Known(sf) if function == Tri::Known(false) && sf != "delta" => r.error(
            &rules::V9,
            &at,
            &format!("source.snapshot_format = {} and the runner passes no bronze_next_snapshot_and_version", quote(sf)),
            "only delta snapshots have a built-in reader; sdp-meta fails at pipeline start with \"Snapshot reader function not provided!\"",
            "write a bronze_next_snapshot_and_version(latest_version, dataflowSpec) in the runner and set runner { bronze_snapshot_function = true }",
        ),
        _ => {}
    }
}

/// V13: expectations together with cdc_apply_changes, worded for the build.
pub(super) fn dq_cdc_rule(layer: Layer, l: &Object, build: Build, r: &mut Report) {
    if configured(l, "cdc_apply_changes") != Some(true)
        || any_configured(l, &["expectations", "expectations_file"]) != Some(true)
    {
        return;
    }
    let ln = layer.name();
    let table = match text(l, "table") {
        Tri::Known(t) => t.to_string(),
        _ => "<table>".to_string(),
    };
    let why = match build {
        Build::PreFix => format!(
            "this build attaches the rules to the AUTO CDC target and evaluates them on raw change events: drop/fail rules see deletes and update pre-images, and expect_or_quarantine quarantines raw events (#265); builds with the fix behave differently and add a table {table}_dq"
        ),
        Build::Fixed => format!(
            "this build (#265 fix) writes the rules into an extra table {table}_dq, then applies changes from it into {table}: one more table to store and destroy, whose name must not collide with another flow's; drop/fail rules still see raw change events (deletes, update pre-images)"
        ),
        Build::Unknown => format!(
            "the rules run on raw change events (drop/fail rules see deletes and update pre-images), and builds with the #265 fix add a table {table}_dq"
        ),
    };
    r.warn(
        &rules::V13,
        &At::root().key(ln).key("cdc_apply_changes"),
        &format!("{ln} has expectations together with {ln}.cdc_apply_changes"),
        &why,
        "keep only rules that hold for every change event (e.g. expect, not drop/fail on columns deletes leave null), or check the data quality in silver",
    );
}

/// `uc_enabled = false`: what sdp-meta then requires.
pub(super) fn non_uc_rules(v: &FlowView, r: &mut Report) {
    let Some(b) = v.layer(Layer::Bronze) else {
        return;
    };
    if configured(b, "path") == Some(false) {
        r.error(
            &rules::UC_PATH,
            &At::root().key("bronze").key("path"),
            "bronze.path is not set and the onboarding has uc_enabled = false",
            "without Unity Catalog sdp-meta onboarding fails with \"bronze_table_path_<env> not provided\"",
            "set bronze.path to the table's storage location, or use Unity Catalog (uc_enabled = true)",
        );
    }
    if v.format() == Some(Format::Snapshot)
        && let Tri::Known(src) = v.source
        && configured(src, "source_path") == Some(false)
    {
        r.error(
            &rules::UC_PATH,
            &At::root().key("source").key("source_path"),
            "source.source_path is not set for a snapshot source and the onboarding has uc_enabled = false",
            "sdp-meta fails with \"source_path_<env> is missing in the source_details for snapshot source (required when Unity Catalog is not enabled)\"",
            "set source.source_path",
        );
    }
}
