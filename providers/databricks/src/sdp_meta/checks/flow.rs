//! Flows: the facts several rules share, and how a flow's blocks fit together.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    CloudFiles,
    Delta,
    Kafka,
    Eventhub,
    Snapshot,
}

impl Format {
    pub(super) fn parse(s: &str) -> Option<Format> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cloudfiles" => Some(Format::CloudFiles),
            "delta" => Some(Format::Delta),
            "kafka" => Some(Format::Kafka),
            "eventhub" => Some(Format::Eventhub),
            "snapshot" => Some(Format::Snapshot),
            _ => None,
        }
    }
    pub(super) fn name(self) -> &'static str {
        match self {
            Format::CloudFiles => "cloudFiles",
            Format::Delta => "delta",
            Format::Kafka => "kafka",
            Format::Eventhub => "eventhub",
            Format::Snapshot => "snapshot",
        }
    }
}

pub(super) const FORMATS: &str = "cloudFiles, delta, eventhub, kafka, snapshot";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Layer {
    Bronze,
    Silver,
}

impl Layer {
    pub(super) fn name(self) -> &'static str {
        match self {
            Layer::Bronze => "bronze",
            Layer::Silver => "silver",
        }
    }
}

/// A flow's configuration with the facts several rules share.
pub(super) struct FlowView<'a> {
    pub(super) obj: &'a Object,
    /// `flow "2"`, for messages.
    pub(super) label: String,
    pub(super) id: Tri<&'a str>,
    pub(super) group: Tri<&'a str>,
    pub(super) source: Tri<&'a Object>,
    pub(super) bronze: Tri<&'a Object>,
    pub(super) silver: Tri<&'a Object>,
    /// `Known(None)`: set to something sdp-meta does not support.
    pub(super) format: Tri<Option<Format>>,
}

impl<'a> FlowView<'a> {
    pub(super) fn new(obj: &'a Object) -> FlowView<'a> {
        let label = match obj.get("data_flow_id") {
            Some(Value::Unknown) => "flow (data_flow_id known after apply)".to_string(),
            None | Some(Value::Null) => "flow (no data_flow_id)".to_string(),
            Some(v) => format!("flow {v}"),
        };
        let source = block(obj, "source");
        let format = match source {
            Tri::Known(src) => match text(src, "format") {
                Tri::Known(s) => Tri::Known(Format::parse(s)),
                Tri::Absent => Tri::Absent,
                Tri::Unknown => Tri::Unknown,
            },
            Tri::Absent => Tri::Absent,
            Tri::Unknown => Tri::Unknown,
        };
        FlowView {
            obj,
            label,
            id: text(obj, "data_flow_id"),
            group: text(obj, "data_flow_group"),
            source,
            bronze: block(obj, "bronze"),
            silver: block(obj, "silver"),
            format,
        }
    }

    /// A bronze layer: a source and a bronze block.
    pub(super) fn bronze_active(&self) -> Tri<bool> {
        match (self.source, self.bronze) {
            (Tri::Absent, _) | (_, Tri::Absent) => Tri::Known(false),
            (Tri::Known(_), Tri::Known(_)) => Tri::Known(true),
            _ => Tri::Unknown,
        }
    }

    pub(super) fn layer(&self, layer: Layer) -> Option<&'a Object> {
        match layer {
            Layer::Bronze => match self.bronze_active() {
                Tri::Known(true) => self.bronze.known(),
                _ => None,
            },
            Layer::Silver => self.silver.known(),
        }
    }

    pub(super) fn format(&self) -> Option<Format> {
        self.format.known().flatten()
    }

    pub(super) fn snapshot_format(&self) -> Tri<&'a str> {
        match self.source {
            Tri::Known(src) => text(src, "snapshot_format"),
            Tri::Absent => Tri::Absent,
            Tri::Unknown => Tri::Unknown,
        }
    }
}

pub(super) fn flow_rules(v: &FlowView, r: &mut Report) {
    for k in ["data_flow_id", "data_flow_group"] {
        if text(v.obj, k).is_absent() {
            r.missing(
                &At::root().key(k),
                "sdp-meta onboarding fails with \"Missing field\"",
                &format!("set {k}"),
            );
        }
    }
    structure_rules(v, r);
    if let Tri::Known(src) = v.source {
        source_rules(v, src, r);
    }
    if let Tri::Known(b) = v.bronze {
        layer_rules(v, Layer::Bronze, b, r);
    }
    if let Tri::Known(s) = v.silver {
        layer_rules(v, Layer::Silver, s, r);
    }
    if let (Some(src), Some(b)) = (v.source.known(), v.layer(Layer::Bronze)) {
        snapshot_source_rules(v, b, r);
        lakeflow_connect_rules(v, src, b, r);
        if let Some(s) = v.silver.known() {
            silver_reads_bronze_rules(b, s, None, r);
        }
    }
}

/// Which layers the flow has, and whether its blocks fit together.
pub(super) fn structure_rules(v: &FlowView, r: &mut Report) {
    let root = At::root();
    match (v.source, v.bronze, v.silver) {
        (Tri::Absent, Tri::Absent, Tri::Absent) => r.error(
            &rules::LAYER,
            &root,
            "the flow has no source, bronze or silver block",
            "sdp-meta onboards nothing for it",
            "add source and bronze blocks (a bronze layer) and/or a silver block",
        ),
        (Tri::Known(_), Tri::Absent, _) => r.error(
            &rules::LAYER,
            &root.key("source"),
            "source is set but there is no bronze block",
            "sdp-meta writes a source into a bronze table, so the flow needs bronze { database, table }",
            "add a bronze block with database and table, or remove source",
        ),
        (Tri::Absent, Tri::Known(_), Tri::Absent) => r.error(
            &rules::LAYER,
            &root.key("bronze"),
            "bronze is set without source and without silver",
            "without a source the bronze block only names the table a silver layer reads, and there is no silver block",
            "add a source block (bronze layer) or a silver block (silver reading this bronze table)",
        ),
        _ => {}
    }
    // A silver-only flow reads the bronze table its bronze block names.
    if let Tri::Known(s) = v.silver
        && v.bronze.is_absent()
        && configured(s, "cdc_apply_changes_flows") == Some(false)
    {
        r.error(
            &rules::LAYER,
            &root.key("silver"),
            "silver has no bronze table to read",
            "sdp-meta reads silver from bronze_database/bronze_table and fails with \"Missing bronze source fields\"",
            "add bronze { database = \"…\", table = \"…\" } naming the bronze table silver reads",
        );
    }
    // Bronze settings that only apply to a bronze layer are ignored on a silver-only flow.
    if let (Tri::Absent, Tri::Known(b), Tri::Known(_)) = (v.source, v.bronze, v.silver) {
        let ignored: Vec<&str> = BRONZE_WRITE_FIELDS
            .iter()
            .copied()
            .filter(|k| match b.get(*k) {
                Some(Value::Bool(x)) => *x,
                _ => configured(b, k) == Some(true),
            })
            .collect();
        if !ignored.is_empty() {
            r.warn(
                &rules::LAYER,
                &root.key("bronze"),
                &format!("bronze sets {} but the flow has no source", ignored.join(", ")),
                "without a source sdp-meta makes no bronze row for this flow; the bronze block only names the table silver reads, and these settings are ignored",
                "move these settings to the flow that writes the bronze table, or add a source block",
            );
        }
    }
}

/// Bronze settings that shape the bronze table (as opposed to naming it).
pub(super) const BRONZE_WRITE_FIELDS: &[&str] = &[
    "comment",
    "reader_options",
    "table_properties",
    "partition_columns",
    "cluster_by",
    "cluster_by_auto",
    "row_filter",
    "quarantine_row_filter",
    "cdc_apply_changes",
    "cdc_apply_changes_flows",
    "apply_changes_from_snapshot",
    "expectations",
    "expectations_file",
    "quarantine",
    "append_flow",
    "sink",
];
