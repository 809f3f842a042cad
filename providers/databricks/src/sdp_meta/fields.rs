//! The one mapping between `sdp_meta_flow`'s attributes and the keys of sdp-meta's onboarding
//! file (docs/architecture.md, sdp-meta onboarding facts), as data. [`super::render`] walks
//! it to write rows, [`super::import`] walks the same tables to read rows back, and the checks
//! spell sdp-meta's keys with it.
//!
//! A table lists the fields of one block in the order the rows carry them (render writes
//! them in this order); import reads them in the order the block's schema declares them, so
//! its configuration and its warnings follow the schema. Each field names its attribute, its
//! key, and how the value is converted. Fields that need code name it ([`Special`]); the
//! walkers say what that code does.

/// How a key is spelled in a row of a given layer and env.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// As written.
    Plain(&'static str),
    /// `<key>_<env>`.
    Env(&'static str),
    /// `<layer>_<key>`.
    Layer(&'static str),
    /// `<layer>_<key>_<env>`.
    LayerEnv(&'static str),
}

impl Key {
    /// The key in a row of `layer` for `env`.
    pub fn spell(self, layer: &str, env: &str) -> String {
        match self {
            Key::Plain(k) => k.to_string(),
            Key::Env(k) => format!("{k}_{env}"),
            Key::Layer(k) => format!("{layer}_{k}"),
            Key::LayerEnv(k) => format!("{layer}_{k}_{env}"),
        }
    }

    /// The key of `layer` with the env written `<env>`, for messages.
    pub fn generic(self, layer: &str) -> String {
        self.spell(layer, "<env>")
    }
}

/// How a value is converted between the attribute and the key.
#[derive(Debug, Clone, Copy)]
pub enum Conv {
    /// A string (import also takes numbers and bools, as HCL would convert them).
    Str,
    /// A bool (import also takes `"true"` / `"false"` in any case).
    Bool,
    /// A bool the row carries as the string `"True"` / `"False"`.
    BoolText,
    /// A bool that sdp-meta requires: `false` when unset.
    BoolOrFalse,
    /// A list of strings (import also takes one string).
    List,
    /// A list of strings, left out when empty; import also takes its string form
    /// `"['a','b']"` (sdp-meta rejects a plain `"a,b"`, V20).
    ListOrListString,
    /// A list of strings the row carries as `"a,b"` (V20), left out when empty.
    CommaList,
    /// A map of strings, left out when empty.
    Map,
    /// A map of strings that sdp-meta requires: `{}` when unset.
    MapOrEmpty,
    /// Other keys of the same object, verbatim: the attribute's map is merged into the object
    /// (a key set twice is an error); import takes every key left when the source format is
    /// the block's name (`kafka`, `eventhub`).
    Verbatim,
    /// A free-form object verbatim, with the typed fields of the table merged into it
    /// (nested flows' `source_details` with `source_path_<env>`).
    Details(&'static [Field]),
    /// A single block ↔ an object under the key.
    Block(&'static [Field]),
    /// A single block ↔ an object under the key, left out when it has no field set.
    BlockUnlessEmpty(&'static [Field]),
    /// Repeated blocks ↔ a list of objects under the key, left out when there are none.
    Items(&'static [Field]),
    /// Repeated blocks ↔ a list of objects under the key that sdp-meta requires (`[]`).
    ItemsOrEmpty(&'static [Field]),
    /// A single block whose fields sit in the same object as the block's parent
    /// (`quarantine`, `kafka`, `eventhub`); the key is not used.
    Flat(&'static [Field]),
    /// A string; unset, it is written as null when any row of the file has expectations for
    /// the layer, since 0.1.0 indexes the key directly (V4).
    StrOrNullWithExpectations,
    /// Code.
    Special(Special),
}

/// The fields whose conversion is code, named for the walkers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// `source_database` / `source_table`: render also takes them from `table` or
    /// `ingestion_table` (`catalog.schema.table`, split), and folds `source_catalog` into
    /// `source_database` for delta and snapshot sources (V15); import writes them as given.
    SourceTable,
    /// `source_catalog_<env>`: only for formats other than delta and snapshot (V15); import
    /// warns when a delta or snapshot row relies on it.
    SourceCatalog,
    /// The layer's expectations: an `expectations` block is rendered to a file brickform
    /// writes (`dqe/<data_flow_id>/<layer>_expectations.json`, keys of [`EXPECTATIONS`]),
    /// `expectations_file` is referenced as it is; import inlines a file it can read.
    Expectations,
    /// Silver's `select_exp` / `where_clause` go to the transformations file brickform writes
    /// (keys of [`TRANSFORMATION`]), `transformation_file` is referenced as it is; every
    /// silver row without CDC flows references one. Import inlines an entry it can read.
    Transformation,
}

/// One field: the attribute, the key, the conversion.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub attr: &'static str,
    pub key: Key,
    pub conv: Conv,
}

const fn f(attr: &'static str, key: Key, conv: Conv) -> Field {
    Field { attr, key, conv }
}

/// A field whose key is its attribute's name.
const fn same(attr: &'static str, conv: Conv) -> Field {
    f(attr, Key::Plain(attr), conv)
}

use Conv::*;
use Key::*;

/// The flow's identity, first in every row.
pub const DATA_FLOW_ID: Field = same("data_flow_id", Str);

/// The flow's other top-level fields, after `data_flow_id`.
pub const FLOW: &[Field] = &[same("data_flow_group", Str), same("source_system", Str)];

/// `source.format`, a top-level key; the other `source` fields are in `source_details`.
pub const SOURCE_FORMAT: Field = f("format", Plain("source_format"), Str);

/// The key of the object holding the `source` block's other fields.
pub const SOURCE_DETAILS_KEY: &str = "source_details";

/// `source` ↔ `source_details`.
pub const SOURCE_DETAILS: &[Field] = &[
    f("source_path", Env("source_path"), Str),
    f(
        "source_catalog",
        Env("source_catalog"),
        Special(Special::SourceCatalog),
    ),
    same("source_database", Special(Special::SourceTable)),
    same("source_table", Special(Special::SourceTable)),
    same("snapshot_format", Str),
    same("source_schema_path", Str),
    same("source_metadata", BlockUnlessEmpty(SOURCE_METADATA)),
    f("kafka", Plain(""), Flat(KAFKA)),
    f("eventhub", Plain(""), Flat(EVENTHUB)),
];

/// `source.source_metadata` ↔ `source_details.source_metadata`.
pub const SOURCE_METADATA: &[Field] = &[
    same("include_autoloader_metadata_column", BoolText),
    same("autoloader_metadata_col_name", Str),
    same("select_metadata_cols", Map),
];

/// `source.kafka`, in `source_details`.
pub const KAFKA: &[Field] = &[
    f("bootstrap_servers", Plain("kafka.bootstrap.servers"), Str),
    f(
        "servers_secrets_scope_name",
        Plain("kafka_source_servers_secrets_scope_name"),
        Str,
    ),
    f(
        "servers_secrets_scope_key",
        Plain("kafka_source_servers_secrets_scope_key"),
        Str,
    ),
    same("subscribe", Str),
    f("options", Plain(""), Verbatim),
];

/// `source.eventhub`, in `source_details`.
pub const EVENTHUB: &[Field] = &[
    f("namespace", Plain("eventhub.namespace"), Str),
    f("port", Plain("eventhub.port"), Str),
    f("name", Plain("eventhub.name"), Str),
    f("access_key_name", Plain("eventhub.accessKeyName"), Str),
    f(
        "access_key_secret_name",
        Plain("eventhub.accessKeySecretName"),
        Str,
    ),
    f(
        "secrets_scope_name",
        Plain("eventhub.secretsScopeName"),
        Str,
    ),
    f("options", Plain(""), Verbatim),
];

/// `bronze` / `silver` ↔ the row's `<layer>_*` keys.
pub const LAYER: &[Field] = &[
    f("database", LayerEnv("database"), Str),
    f("catalog", LayerEnv("catalog"), Str),
    f("table", Layer("table"), Str),
    f("comment", Layer("table_comment"), Str),
    f("path", LayerEnv("table_path"), Str),
    f(
        "transformation_file",
        LayerEnv("transformation_json"),
        Special(Special::Transformation),
    ),
    f("reader_options", Layer("reader_options"), Map),
    f("table_properties", Layer("table_properties"), Map),
    f("partition_columns", Layer("partition_columns"), CommaList),
    f("cluster_by", Layer("cluster_by"), ListOrListString),
    f("cluster_by_auto", Layer("cluster_by_auto"), Bool),
    f("row_filter", Layer("row_filter"), Str),
    f("cdc_apply_changes", Layer("cdc_apply_changes"), Block(CDC)),
    f(
        "cdc_apply_changes_flows",
        Layer("cdc_apply_changes_flows"),
        Block(CDC_FLOWS),
    ),
    f(
        "apply_changes_from_snapshot",
        Layer("apply_changes_from_snapshot"),
        Block(SNAPSHOT),
    ),
    f(
        "expectations_file",
        LayerEnv("data_quality_expectations_json"),
        Special(Special::Expectations),
    ),
    f("quarantine", Plain(""), Flat(QUARANTINE)),
    f("quarantine_row_filter", Layer("quarantine_row_filter"), Str),
    f("append_flow", Layer("append_flows"), Items(APPEND_FLOW)),
    f("sink", Layer("sinks"), Items(SINK)),
];

/// `<layer>.quarantine`, in the row.
pub const QUARANTINE: &[Field] = &[
    f(
        "table",
        Layer("quarantine_table"),
        StrOrNullWithExpectations,
    ),
    f("database", LayerEnv("database_quarantine"), Str),
    f("catalog", LayerEnv("catalog_quarantine"), Str),
    f("comment", Layer("quarantine_table_comment"), Str),
    f("path", LayerEnv("quarantine_table_path"), Str),
    f(
        "partitions",
        Layer("quarantine_table_partitions"),
        CommaList,
    ),
    f(
        "table_properties",
        Layer("quarantine_table_properties"),
        Map,
    ),
    f(
        "cluster_by",
        Layer("quarantine_table_cluster_by"),
        ListOrListString,
    ),
    f(
        "cluster_by_auto",
        Layer("quarantine_table_cluster_by_auto"),
        Bool,
    ),
];

/// `<layer>.cdc_apply_changes` ↔ `<layer>_cdc_apply_changes`.
pub const CDC: &[Field] = &[
    same("keys", List),
    same("sequence_by", Str),
    same("scd_type", Str),
    same("where", Str),
    same("ignore_null_updates", Bool),
    same("apply_as_deletes", Str),
    same("apply_as_truncates", Str),
    same("column_list", List),
    same("except_column_list", List),
    same("track_history_column_list", List),
    same("track_history_except_column_list", List),
    same("flow_name", Str),
    same("once", Bool),
    same("ignore_null_updates_column_list", List),
    same("ignore_null_updates_except_column_list", List),
];

/// `<layer>.cdc_apply_changes_flows` ↔ `<layer>_cdc_apply_changes_flows`: the fields of
/// [`CDC`] but `flow_name` and `once`, which are per flow, and the flows.
pub const CDC_FLOWS: &[Field] = &[
    same("keys", List),
    same("sequence_by", Str),
    same("scd_type", Str),
    same("where", Str),
    same("ignore_null_updates", Bool),
    same("apply_as_deletes", Str),
    same("apply_as_truncates", Str),
    same("column_list", List),
    same("except_column_list", List),
    same("track_history_column_list", List),
    same("track_history_except_column_list", List),
    same("ignore_null_updates_column_list", List),
    same("ignore_null_updates_except_column_list", List),
    f("flow", Plain("flows"), ItemsOrEmpty(CDC_FLOW)),
];

/// A `flow` of `cdc_apply_changes_flows`.
pub const CDC_FLOW: &[Field] = &[
    same("name", Str),
    same("source_format", Str),
    same("source_details", Details(NESTED_SOURCE)),
    same("reader_options", Map),
    same("select_exp", List),
    same("where_clause", List),
    same("once", Bool),
];

/// The typed fields of a nested flow's `source_details`.
pub const NESTED_SOURCE: &[Field] = &[f("source_path", Env("source_path"), Str)];

/// The typed fields of an append flow's `source_details`.
pub const APPEND_SOURCE: &[Field] = &[
    f("source_path", Env("source_path"), Str),
    same("source_schema_path", Str),
];

/// `<layer>.apply_changes_from_snapshot` ↔ `<layer>_apply_changes_from_snapshot`.
pub const SNAPSHOT: &[Field] = &[
    same("keys", List),
    same("scd_type", Str),
    same("track_history_column_list", List),
    same("track_history_except_column_list", List),
];

/// `<layer>.append_flow` ↔ `<layer>_append_flows`.
pub const APPEND_FLOW: &[Field] = &[
    same("name", Str),
    same("source_format", Str),
    same("create_streaming_table", BoolOrFalse),
    same("source_details", Details(APPEND_SOURCE)),
    same("reader_options", Map),
    same("spark_conf", Map),
    same("comment", Str),
    same("once", Bool),
];

/// `<layer>.sink` ↔ `<layer>_sinks`.
pub const SINK: &[Field] = &[
    same("name", Str),
    same("format", Str),
    same("options", MapOrEmpty),
    same("select_exp", List),
    same("where_clause", Str),
];

/// `<layer>.expectations` ↔ the keys of an expectations file, in the order they are written
/// (docs/architecture.md, sdp-meta onboarding facts).
pub const EXPECTATIONS: &[Field] = &[
    same("expect", Map),
    same("expect_all", Map),
    same("expect_or_drop", Map),
    same("expect_all_or_drop", Map),
    same("expect_or_fail", Map),
    same("expect_all_or_fail", Map),
    same("expect_or_quarantine", Map),
];

/// Silver's `select_exp` / `where_clause` ↔ an entry of the transformations file (after its
/// `target_table`, the silver table).
pub const TRANSFORMATION: &[Field] = &[same("select_exp", List), same("where_clause", List)];

/// The key a layer attribute or block is written to, spelled for messages
/// (`bronze_database_<env>`); `None` for attributes of no key of their own.
pub fn layer_key(layer: &str, attr: &str) -> Option<String> {
    LAYER
        .iter()
        .find(|f| f.attr == attr && !matches!(f.conv, Flat(_)))
        .map(|f| f.key.generic(layer))
}

/// How a conversion shows in the docs.
fn how(conv: Conv) -> &'static str {
    match conv {
        Str => "string",
        Bool => "bool",
        BoolText => "bool, as `\"True\"` / `\"False\"`",
        BoolOrFalse => "bool, `false` when unset",
        List => "list",
        ListOrListString => "list, left out when empty",
        CommaList => "list, as `\"a,b\"`, left out when empty",
        Map => "map, left out when empty",
        MapOrEmpty => "map, `{}` when unset",
        Verbatim => "its keys, verbatim, in the same object",
        Details(_) => "object, verbatim, with the fields below",
        Block(_) => "object",
        BlockUnlessEmpty(_) => "object, left out when empty",
        Items(_) => "list of objects, left out when there are none",
        ItemsOrEmpty(_) => "list of objects",
        Flat(_) => "its fields, in the same object",
        StrOrNullWithExpectations => {
            "string; null when unset and a row of the file has expectations for the layer (V4)"
        }
        Special(Special::SourceTable) => {
            "string; also from `table` or `ingestion_table` (`catalog.schema.table`, split), with `source_catalog` folded in for delta and snapshot (V15)"
        }
        Special(Special::SourceCatalog) => "string; formats other than delta and snapshot (V15)",
        Special(Special::Expectations) => {
            "the expectations file brickform writes from `expectations` (keys below), or `expectations_file` as given"
        }
        Special(Special::Transformation) => {
            "the transformations file brickform writes (with `select_exp` / `where_clause`, keys below), or `transformation_file` as given; left out with `cdc_apply_changes_flows`"
        }
    }
}

/// One row per field of `table`, and the rows of its blocks. `file`: the file other than the
/// onboarding file the keys are in.
fn rows(table: &[Field], attr_path: &str, key_path: &str, file: &str, out: &mut String) {
    for f in table {
        // Only silver has a transformation.
        let (attr_path, layer) = match f.conv {
            Special(Special::Transformation) => ("silver.", "silver"),
            _ => (attr_path, "<layer>"),
        };
        let attr = format!("{attr_path}{}", f.attr);
        let key = format!("{key_path}{}", f.key.spell(layer, "{env}"));
        match f.conv {
            Flat(t) => rows(t, &format!("{attr}."), key_path, file, out),
            Verbatim => out.push_str(&format!("| `{attr}` | `{key_path}*` | {} |\n", how(f.conv))),
            _ => out.push_str(&format!("| `{attr}` | `{key}`{file} | {} |\n", how(f.conv))),
        }
        match f.conv {
            Block(t) | BlockUnlessEmpty(t) => {
                rows(t, &format!("{attr}."), &format!("{key}."), file, out)
            }
            Items(t) | ItemsOrEmpty(t) => {
                rows(t, &format!("{attr}[]."), &format!("{key}[]."), file, out)
            }
            Details(t) => rows(t, attr_path, &format!("{key}."), file, out),
            Special(Special::Expectations) => rows(
                EXPECTATIONS,
                &format!("{attr_path}expectations."),
                "",
                " in the expectations file",
                out,
            ),
            Special(Special::Transformation) => rows(
                TRANSFORMATION,
                attr_path,
                "",
                " in the transformations file's entry",
                out,
            ),
            _ => {}
        }
    }
}

/// The table of docs/sdp-meta-flows.md: every attribute of `sdp_meta_flow` and the key it is
/// written to, generated from the tables above.
pub fn markdown() -> String {
    let mut out = String::from("| Attribute | Onboarding key | Written as |\n|---|---|---|\n");
    rows(&[DATA_FLOW_ID], "", "", "", &mut out);
    rows(FLOW, "", "", "", &mut out);
    rows(&[SOURCE_FORMAT], "source.", "", "", &mut out);
    rows(
        SOURCE_DETAILS,
        "source.",
        &format!("{SOURCE_DETAILS_KEY}."),
        "",
        &mut out,
    );
    rows(LAYER, "<layer>.", "", "", &mut out);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::sdp_meta::schema::flow_schema;
    use brickform_core::provider::Schema;

    /// Every table's attributes exist in the block it maps, and every attribute and block of
    /// the flow schema is in some table or named here: nothing is mapped by hand elsewhere.
    #[test]
    fn tables_and_schema_agree() {
        fn walk(table: &[Field], schema: &Schema, path: &str, seen: &mut Vec<String>) {
            for fl in table {
                let here = format!("{path}{}", fl.attr);
                let sub = |name: &str| {
                    schema
                        .blocks
                        .iter()
                        .find(|b| b.name == name)
                        .map(|b| &b.schema)
                        .unwrap_or_else(|| panic!("{here} is a block of the schema"))
                };
                match fl.conv {
                    Block(t) | BlockUnlessEmpty(t) | Items(t) | ItemsOrEmpty(t) | Flat(t) => {
                        walk(t, sub(fl.attr), &format!("{here}."), seen)
                    }
                    Details(t) => {
                        walk(t, schema, path, seen);
                        assert!(schema.attributes.iter().any(|a| a.name == fl.attr));
                    }
                    _ => assert!(
                        schema.attributes.iter().any(|a| a.name == fl.attr)
                            || (fl.attr == "transformation_file"),
                        "{here} is an attribute of the schema"
                    ),
                }
                seen.push(here);
            }
        }
        let schema = flow_schema();
        let mut seen = Vec::new();
        walk(&[DATA_FLOW_ID], &schema, "", &mut seen);
        walk(FLOW, &schema, "", &mut seen);
        let source = &schema
            .blocks
            .iter()
            .find(|b| b.name == "source")
            .unwrap()
            .schema;
        walk(&[SOURCE_FORMAT], source, "source.", &mut seen);
        walk(SOURCE_DETAILS, source, "source.", &mut seen);
        let silver = &schema
            .blocks
            .iter()
            .find(|b| b.name == "silver")
            .unwrap()
            .schema;
        for layer in ["bronze", "silver"] {
            let s = &schema
                .blocks
                .iter()
                .find(|b| b.name == layer)
                .unwrap()
                .schema;
            walk(LAYER, s, &format!("{layer}."), &mut seen);
            let dqe = &s
                .blocks
                .iter()
                .find(|b| b.name == "expectations")
                .unwrap()
                .schema;
            walk(
                EXPECTATIONS,
                dqe,
                &format!("{layer}.expectations."),
                &mut seen,
            );
        }
        walk(TRANSFORMATION, silver, "silver.", &mut seen);
        // Attributes of no key of their own, written by the code of a special field.
        for by_code in [
            "source",
            "bronze",
            "silver",
            "source.table",
            "source.ingestion_table",
            "bronze.expectations",
            "silver.expectations",
        ] {
            seen.push(by_code.to_string());
        }
        fn all(schema: &Schema, path: &str, out: &mut Vec<String>) {
            for a in &schema.attributes {
                out.push(format!("{path}{}", a.name));
            }
            for b in &schema.blocks {
                out.push(format!("{path}{}", b.name));
                all(&b.schema, &format!("{path}{}.", b.name), out);
            }
        }
        let mut every = Vec::new();
        all(&schema, "", &mut every);
        let missing: Vec<&String> = every.iter().filter(|p| !seen.contains(p)).collect();
        assert!(missing.is_empty(), "not in a field table: {missing:?}");
    }

    #[test]
    fn the_docs_field_table_is_current() {
        crate::sdp_meta::schema::testing::check_doc_section(
            "sdp-meta-flows.md",
            "sdp-meta fields",
            &markdown(),
        );
        let md = markdown();
        assert!(md.contains(
            "| `<layer>.quarantine.database` | `<layer>_database_quarantine_{env}` | string |"
        ));
        assert!(md.contains("| `source.kafka.options` | `source_details.*` |"));
        assert!(md.contains(
            "| `<layer>.append_flow[].source_path` | `<layer>_append_flows[].source_details.source_path_{env}` |"
        ));
    }

    #[test]
    fn keys_are_spelled_per_layer_and_env() {
        assert_eq!(
            LayerEnv("database").spell("bronze", "dev"),
            "bronze_database_dev"
        );
        assert_eq!(
            layer_key("silver", "cdc_apply_changes").as_deref(),
            Some("silver_cdc_apply_changes")
        );
        assert_eq!(
            layer_key("bronze", "database").as_deref(),
            Some("bronze_database_<env>")
        );
        assert_eq!(layer_key("bronze", "quarantine"), None);
    }
}

/// For generated flows, importing what render writes gives the flow back, for every field of
/// the tables.
#[cfg(test)]
mod round_trip {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::sdp_meta::import::import;
    use crate::sdp_meta::render::render;
    use crate::sdp_meta::schema::flow_schema;
    use crate::sdp_meta::schema::testing::{decode_flows, onboarding};
    use brickform_core::provider::{Presence, Schema};
    use brickform_core::value::{Object, Value, source_key, source_string};
    use proptest::prelude::*;
    use proptest::test_runner::{RngAlgorithm, TestRng};
    use serde_json::{Map, Value as Json, json};

    /// Random choices for one generated flow.
    struct Gen(TestRng);

    impl Gen {
        fn below(&mut self, n: u64) -> u64 {
            self.0.next_u64() % n
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }
        /// A column-like name: it survives the comma lists.
        fn ident(&mut self) -> String {
            const WORDS: [&str; 6] = ["id", "ts", "name", "amount", "region", "_op"];
            format!("{}{}", WORDS[self.below(6) as usize], self.below(10))
        }
        /// Text with what quoting must keep: quotes, template markers, backslashes, spaces.
        fn text(&mut self) -> String {
            const PARTS: [&str; 10] = [
                "a", "Z9", " ", "\"", "${x}", "%{y}", "\\", "é", "'q'", "a.b",
            ];
            (0..1 + self.below(4))
                .map(|_| PARTS[self.below(10) as usize])
                .collect()
        }
        fn list(&mut self) -> Vec<String> {
            (0..1 + self.below(3)).map(|_| self.ident()).collect()
        }
        fn map(&mut self) -> Vec<(String, String)> {
            (0..1 + self.below(2))
                .map(|i| (format!("opt_{i}.{}", self.ident()), self.text()))
                .collect()
        }
    }

    fn hcl_list(items: &[String]) -> String {
        let items: Vec<String> = items.iter().map(|s| source_string(s)).collect();
        format!("[{}]", items.join(", "))
    }

    fn hcl_map(items: &[(String, String)]) -> String {
        let items: Vec<String> = items
            .iter()
            .map(|(k, v)| format!("{} = {}", source_key(k), source_string(v)))
            .collect();
        format!("{{ {} }}", items.join(", "))
    }

    /// What to leave out of a block: attributes another field of the flow excludes.
    type Skip<'s> = &'s dyn Fn(&str) -> bool;

    fn sub<'s>(schema: &'s Schema, name: &str) -> &'s Schema {
        &schema
            .blocks
            .iter()
            .find(|b| b.name == name)
            .unwrap()
            .schema
    }

    /// The body of a block of `table` (of `schema`): its required fields and some others.
    fn body(g: &mut Gen, table: &[Field], schema: &Schema, skip: Skip<'_>, out: &mut String) {
        for f in table {
            let required = schema
                .attributes
                .iter()
                .any(|x| x.name == f.attr && x.presence == Presence::Required);
            if skip(f.attr) || !(required || g.chance(55)) {
                continue;
            }
            let a = f.attr;
            match f.conv {
                Str | StrOrNullWithExpectations => {
                    out.push_str(&format!("{a} = {}\n", source_string(&g.text())))
                }
                Bool | BoolText | BoolOrFalse => out.push_str(&format!("{a} = {}\n", g.chance(50))),
                List | ListOrListString | CommaList => {
                    let l = g.list();
                    out.push_str(&format!("{a} = {}\n", hcl_list(&l)))
                }
                Map | MapOrEmpty | Verbatim | Details(_) => {
                    let m = g.map();
                    out.push_str(&format!("{a} = {}\n", hcl_map(&m)));
                    if let Details(typed) = f.conv {
                        body(g, typed, schema, skip, out);
                    }
                }
                Block(t) | BlockUnlessEmpty(t) | Flat(t) => {
                    out.push_str(&format!("{a} {{\n"));
                    body(g, t, sub(schema, a), skip, out);
                    out.push_str("}\n");
                }
                Items(t) | ItemsOrEmpty(t) => {
                    for i in 0..g.below(3) {
                        out.push_str(&format!("{a} \"{a}_{i}\" {{\n"));
                        body(g, t, sub(schema, a), &|n| n == "name" || skip(n), out);
                        out.push_str("}\n");
                    }
                }
                Special(Special::SourceTable | Special::SourceCatalog) => {
                    out.push_str(&format!("{a} = {}\n", source_string(&g.ident())))
                }
                Special(Special::Expectations) => {
                    if g.chance(50) {
                        out.push_str("expectations {\n");
                        body(
                            g,
                            EXPECTATIONS,
                            sub(schema, "expectations"),
                            &|_| false,
                            out,
                        );
                        out.push_str("}\n");
                    } else {
                        out.push_str(&format!(
                            "{a} = \"/Volumes/x/y/z/dqe_{}.json\"\n",
                            g.ident()
                        ));
                    }
                }
                Special(Special::Transformation) => {}
            }
        }
    }

    const FORMATS: [&str; 5] = ["cloudFiles", "delta", "kafka", "eventhub", "snapshot"];

    /// One flow in HCL: a source with bronze, silver, or both.
    fn flow(g: &mut Gen) -> String {
        let schema = flow_schema();
        let mut out = String::from("resource \"sdp_meta_flow\" \"f\" {\n");
        out.push_str("data_flow_id = \"1\"\n");
        out.push_str(&format!("data_flow_group = {}\n", source_string(&g.text())));
        body(g, FLOW, &schema, &|n| n == "data_flow_group", &mut out);
        let with_source = g.chance(75);
        if with_source {
            let format = FORMATS[g.below(5) as usize];
            out.push_str(&format!("source {{\nformat = \"{format}\"\n"));
            let table_like = matches!(format, "delta" | "snapshot");
            body(
                g,
                SOURCE_DETAILS,
                sub(&schema, "source"),
                &|n| {
                    (n == "source_catalog" && table_like)
                        || (n == "kafka" && format != "kafka")
                        || (n == "eventhub" && format != "eventhub")
                },
                &mut out,
            );
            out.push_str("}\n");
        }
        for layer in ["bronze", "silver"] {
            let wanted = match layer {
                "bronze" => with_source,
                _ => !with_source || g.chance(50),
            };
            if !wanted {
                continue;
            }
            out.push_str(&format!("{layer} {{\n"));
            out.push_str(&format!("database = \"main.{}\"\n", g.ident()));
            out.push_str(&format!("table = \"{layer}_{}\"\n", g.ident()));
            let cdc_flows = g.chance(25);
            let inline = layer == "silver" && !cdc_flows && g.chance(50);
            let ls = sub(&schema, layer);
            body(
                g,
                LAYER,
                ls,
                &|n| {
                    n == "database"
                        || n == "table"
                        || (n == "cdc_apply_changes_flows" && !cdc_flows)
                },
                &mut out,
            );
            if layer == "silver" && !cdc_flows {
                if inline {
                    body(g, TRANSFORMATION, ls, &|_| false, &mut out);
                } else if g.chance(30) {
                    out.push_str("transformation_file = \"/Volumes/x/y/z/t.json\"\n");
                }
            }
            out.push_str("}\n");
        }
        out.push_str("}\n");
        out
    }

    fn get<'o>(o: &'o Object, k: &str) -> Option<&'o Value> {
        o.get(k).filter(|v| !v.is_null())
    }

    /// The flow as the tables see it: every field by attribute, with the values render
    /// gives to unset and empty ones, and repeated blocks by name.
    fn project(o: &Object, table: &[Field], out: &mut Map<String, Json>) {
        for f in table {
            let a = f.attr;
            let v = get(o, a);
            let empty = |v: &Value| match v {
                Value::List(l) => l.is_empty(),
                Value::Object(m) => m.values().all(Value::is_null),
                _ => false,
            };
            let j = match f.conv {
                Map | CommaList | ListOrListString => v.filter(|v| !empty(v)).map(Value::to_json),
                BoolOrFalse => Some(v.map(Value::to_json).unwrap_or(json!(false))),
                MapOrEmpty => Some(v.map(Value::to_json).unwrap_or(json!({}))),
                Block(t) | BlockUnlessEmpty(t) | Flat(t) => {
                    v.and_then(Value::as_object).and_then(|b| {
                        let mut m = Map::new();
                        project(b, t, &mut m);
                        let keep = match f.conv {
                            Block(_) => true,
                            _ => !m.is_empty(),
                        };
                        keep.then_some(Json::Object(m))
                    })
                }
                Items(t) | ItemsOrEmpty(t) => {
                    let mut items: Vec<Json> = v
                        .and_then(Value::as_list)
                        .unwrap_or_default()
                        .iter()
                        .filter_map(Value::as_object)
                        .map(|b| {
                            let mut m = Map::new();
                            project(b, t, &mut m);
                            Json::Object(m)
                        })
                        .collect();
                    items.sort_by_key(|i| i["name"].to_string());
                    match (f.conv, items.is_empty()) {
                        (Items(_), true) => None,
                        _ => Some(Json::Array(items)),
                    }
                }
                Details(typed) => {
                    project(o, typed, out);
                    v.filter(|v| !empty(v)).map(Value::to_json)
                }
                Special(Special::Expectations) => {
                    if let Some(b) = get(o, "expectations").and_then(Value::as_object) {
                        let mut m = Map::new();
                        project(b, EXPECTATIONS, &mut m);
                        out.insert("expectations".into(), Json::Object(m));
                    }
                    v.map(Value::to_json)
                }
                Special(Special::Transformation) => {
                    project(o, TRANSFORMATION, out);
                    v.map(Value::to_json)
                }
                _ => v.map(Value::to_json),
            };
            if let Some(j) = j {
                out.insert(a.to_string(), j);
            }
        }
    }

    fn projection(flow: &Object) -> Json {
        let mut out = Map::new();
        project(flow, &[DATA_FLOW_ID], &mut out);
        project(flow, FLOW, &mut out);
        if let Some(src) = get(flow, "source").and_then(Value::as_object) {
            let mut m = Map::new();
            project(src, &[SOURCE_FORMAT], &mut m);
            project(src, SOURCE_DETAILS, &mut m);
            out.insert("source".into(), Json::Object(m));
        }
        for layer in ["bronze", "silver"] {
            if let Some(l) = get(flow, layer).and_then(Value::as_object) {
                let mut m = Map::new();
                project(l, LAYER, &mut m);
                out.insert(layer.into(), Json::Object(m));
            }
        }
        Json::Object(out)
    }

    proptest! {
        #[test]
        fn import_of_render_gives_the_flow_back(seed in any::<u64>()) {
            let mut bytes = [0u8; 32];
            bytes[..8].copy_from_slice(&seed.to_le_bytes());
            let mut g = Gen(TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
            let src = flow(&mut g);
            let original = decode_flows(&src).remove(0);
            let rendered = render(&onboarding(vec![original.clone()], json!({}))).unwrap();
            let files = rendered.files.clone();
            let imported = import(
                &rendered.onboarding_json,
                "onboarding.json",
                None,
                &|p: &str| files.get(p).cloned(),
            )
            .unwrap();
            prop_assert!(imported.warnings.is_empty(), "{:#?}\n{src}", imported.warnings);
            let back = decode_flows(&imported.hcl).remove(0);
            prop_assert_eq!(
                projection(&back),
                projection(&original),
                "\n{}\n{}\n{}",
                src,
                rendered.onboarding_json,
                imported.hcl
            );
        }
    }
}
