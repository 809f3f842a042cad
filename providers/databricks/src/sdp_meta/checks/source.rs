//! Sources: what each source format needs, snapshots, Lakeflow Connect tables (V8, V10, V16, V17, V18).

use super::*;

/// What each source format needs, and fields it ignores.
pub(super) fn source_rules(v: &FlowView, src: &Object, r: &mut Report) {
    let at = At::root().key("source");
    let fmt = match text(src, "format") {
        Tri::Known(s) => match Format::parse(s) {
            Some(f) => f,
            None => {
                r.error(
                    &rules::FORMAT,
                    &at.key("format"),
                    &format!("source.format = {} is not supported", quote(s)),
                    &format!("sdp-meta supports {FORMATS} (case-insensitive)"),
                    &format!("use one of: {FORMATS}"),
                );
                return;
            }
        },
        Tri::Absent => {
            r.missing(
                &at.key("format"),
                "sdp-meta fails with \"Source format not provided\"",
                &format!("set source.format to one of: {FORMATS}"),
            );
            return;
        }
        Tri::Unknown => return,
    };
    let fmt_text = format!("source.format = {}", quote(fmt.name()));

    // Fields the format ignores.
    let wrong = |field: &str, allowed: &[Format]| -> bool {
        !allowed.contains(&fmt) && configured(src, field) == Some(true)
    };
    let ignored: &[(&str, &[Format], &str)] = &[
        ("kafka", &[Format::Kafka], "kafka"),
        ("eventhub", &[Format::Eventhub], "eventhub"),
        ("snapshot_format", &[Format::Snapshot], "snapshot"),
        ("source_metadata", &[Format::CloudFiles], "cloudFiles"),
        (
            "source_path",
            &[Format::CloudFiles, Format::Snapshot],
            "cloudFiles and snapshot",
        ),
    ];
    for (field, allowed, for_what) in ignored {
        if wrong(field, allowed) {
            r.error(
                &rules::SOURCE,
                &at.key(field),
                &format!("source.{field} is set but {fmt_text}"),
                &format!("sdp-meta uses source.{field} only for {for_what} sources, so it would be ignored"),
                &format!("remove source.{field}, or change source.format"),
            );
        }
    }
    let table_fields = [
        "ingestion_table",
        "table",
        "source_database",
        "source_table",
    ];
    if matches!(fmt, Format::CloudFiles | Format::Kafka | Format::Eventhub) {
        for field in table_fields {
            if configured(src, field) == Some(true) {
                r.error(
                    &rules::SOURCE,
                    &at.key(field),
                    &format!("source.{field} is set but {fmt_text}"),
                    &format!(
                        "a {} source does not read a table, so it would be ignored",
                        fmt.name()
                    ),
                    &format!(
                        "remove source.{field}, or use source.format = \"delta\" (or \"snapshot\")"
                    ),
                );
            }
        }
    }
    if matches!(fmt, Format::Delta | Format::Snapshot) {
        table_rules(src, &at, fmt, r);
    }

    match fmt {
        Format::CloudFiles => {
            if configured(src, "source_path") == Some(false) {
                r.missing(
                    &at.key("source_path"),
                    "a cloudFiles source reads files from source_path; sdp-meta fails with KeyError 'path'",
                    "set source.source_path, e.g. \"/Volumes/<catalog>/<schema>/<volume>/landing/\"",
                );
            }
            if let Tri::Known(b) = v.bronze
                && option_ci(b, "reader_options", "cloudFiles.format").is_absent()
            {
                r.error(
                    &rules::SOURCE,
                    &At::root().key("bronze").key("reader_options"),
                    "bronze.reader_options has no \"cloudFiles.format\"",
                    "Auto Loader needs the file format; the pipeline fails at start",
                    "add \"cloudFiles.format\" = \"json\" (or csv, parquet, …) to bronze.reader_options",
                );
            }
        }
        Format::Kafka => kafka_rules(src, &at, r),
        Format::Eventhub => eventhub_rules(src, &at, r),
        Format::Snapshot => match text(src, "snapshot_format") {
            Tri::Absent => r.missing(
                &at.key("snapshot_format"),
                "sdp-meta onboarding fails with \"snapshot_format is missing in the source_details\"",
                "set source.snapshot_format = \"delta\" (a table) or a file format such as \"csv\" or \"parquet\"",
            ),
            Tri::Known(sf) if sf != "delta" && sf.eq_ignore_ascii_case("delta") => r.error(
                &rules::SOURCE,
                &at.key("snapshot_format"),
                &format!("source.snapshot_format = {}", quote(sf)),
                "sdp-meta compares snapshot_format with \"delta\" exactly, so this is treated as a file snapshot needing a custom reader function",
                "write snapshot_format = \"delta\" in lower case",
            ),
            Tri::Known(sf) if sf != "delta" && configured(src, "source_path") == Some(false) => r.warn(
                &rules::SOURCE,
                &at.key("source_path"),
                &format!("source.snapshot_format = {} without source.source_path", quote(sf)),
                "a file snapshot is read by the runner's bronze_next_snapshot_and_version from sourceDetails.path, and sdp-meta requires it when Unity Catalog is not enabled",
                "set source.source_path to the snapshot files' location",
            ),
            _ => {}
        },
        Format::Delta => {}
    }
}

/// A delta (or delta snapshot) source's table: given exactly one way.
pub(super) fn table_rules(src: &Object, at: &At, fmt: Format, r: &mut Report) {
    let ing = configured(src, "ingestion_table");
    let tbl = configured(src, "table");
    let sdb = configured(src, "source_database");
    let stb = configured(src, "source_table");
    let (Some(ing), Some(tbl), Some(sdb), Some(stb)) = (ing, tbl, sdb, stb) else {
        return;
    };
    let ways = [ing, tbl, sdb || stb].iter().filter(|x| **x).count();
    if ways > 1 {
        r.error(
            &rules::SOURCE,
            at,
            "source names its table more than one way",
            "ingestion_table, table and source_database + source_table are alternatives; brickform would have to guess which one sdp-meta should read",
            "keep one of ingestion_table, table, or source_database + source_table",
        );
        return;
    }
    let snapshot_delta =
        fmt == Format::Snapshot && text(src, "snapshot_format") == Tri::Known("delta");
    let built_in_reader = fmt == Format::Delta || snapshot_delta;
    if built_in_reader && ways == 1 && (sdb != stb) && !ing && !tbl {
        let (set, unset) = if sdb {
            ("source_database", "source_table")
        } else {
            ("source_table", "source_database")
        };
        r.error(
            &rules::SOURCE,
            &at.key(unset),
            &format!("source.{set} is set without source.{unset}"),
            "the delta reader reads source_database.source_table and fails with KeyError without both",
            &format!("set source.{unset}, or give the full name as source.table"),
        );
        return;
    }
    if ways == 0 && built_in_reader {
        let (rule, what, why) = if fmt == Format::Delta {
            (
                &rules::SOURCE,
                "source.format = \"delta\" has no table",
                "the delta reader streams from source_database.source_table; sdp-meta fails with KeyError 'source_database'",
            )
        } else {
            (
                &rules::V10,
                "source.snapshot_format = \"delta\" has no table",
                "the built-in snapshot view reads source_database.source_table (source_path is ignored); sdp-meta fails with KeyError 'source_database'",
            )
        };
        r.error(
            rule,
            at,
            what,
            why,
            "set source.ingestion_table, source.table = \"catalog.schema.table\", or source_database + source_table",
        );
        return;
    }
    if let Tri::Known(t) = text(src, "table") {
        let parts = t.split('.').count();
        if !(2..=3).contains(&parts) {
            r.error(
                &rules::SOURCE,
                &at.key("table"),
                &format!("source.table = {} has {parts} dotted part(s)", quote(t)),
                "brickform splits the full name into source_database and source_table, so it needs schema.table or catalog.schema.table",
                "write source.table as \"catalog.schema.table\"",
            );
        }
    }
    if let Tri::Known(db) = text(src, "source_database")
        && db.split('.').count() > 2
    {
        r.error(
            &rules::SOURCE,
            &at.key("source_database"),
            &format!("source.source_database = {} has more than two dotted parts", quote(db)),
            "the reader reads <source_database>.<source_table>, which would have more than three parts",
            "write source_database as \"catalog.schema\" and the table name in source_table",
        );
    }
}

pub(super) fn kafka_rules(src: &Object, at: &At, r: &mut Report) {
    let k = match block(src, "kafka") {
        Tri::Known(k) => k,
        Tri::Absent => {
            r.error(
                &rules::SOURCE,
                &at.key("kafka"),
                "source.format = \"kafka\" has no kafka block",
                "sdp-meta fails with \"Kafka topic details not found\" / \"Kafka broker details not found\"",
                "add kafka { bootstrap_servers = \"host:9092\", subscribe = \"topic\" } to the source block",
            );
            return;
        }
        Tri::Unknown => return,
    };
    let at = at.key("kafka");
    if configured(k, "subscribe") == Some(false) {
        r.missing(
            &at.key("subscribe"),
            "sdp-meta fails with \"Kafka topic details not found\"",
            "set source.kafka.subscribe to the topic",
        );
    }
    let servers = configured(k, "bootstrap_servers");
    let scope = configured(k, "servers_secrets_scope_name");
    let key = configured(k, "servers_secrets_scope_key");
    let in_options = match option(k, "options", "kafka.bootstrap.servers") {
        Tri::Known(_) => Some(true),
        Tri::Absent => Some(false),
        Tri::Unknown => None,
    };
    if servers == Some(false) && in_options == Some(false) {
        match (scope, key) {
            (Some(false), Some(false)) => r.missing(
                &at.key("bootstrap_servers"),
                "sdp-meta fails with \"Kafka broker details not found\"",
                "set source.kafka.bootstrap_servers, or servers_secrets_scope_name + servers_secrets_scope_key",
            ),
            (Some(true), Some(false)) | (Some(false), Some(true)) => {
                let unset = if scope == Some(false) {
                    "servers_secrets_scope_name"
                } else {
                    "servers_secrets_scope_key"
                };
                r.missing(
                    &at.key(unset),
                    "the brokers come from a secret, which needs both its scope and its key; sdp-meta fails with \"Kafka broker details not found\"",
                    &format!("set source.kafka.{unset}"),
                );
            }
            _ => {}
        }
    }
    // SSL: with both store locations, all four secret references are needed.
    let has = |key: &str| match option(k, "options", key) {
        Tri::Known(_) => Some(true),
        Tri::Absent => Some(false),
        Tri::Unknown => None,
    };
    if has("kafka.ssl.truststore.location") == Some(true)
        && has("kafka.ssl.keystore.location") == Some(true)
    {
        let needed = [
            "kafka.ssl.truststore.secrets.scope",
            "kafka.ssl.truststore.secrets.key",
            "kafka.ssl.keystore.secrets.scope",
            "kafka.ssl.keystore.secrets.key",
        ];
        let absent: Vec<&str> = needed
            .iter()
            .copied()
            .filter(|k| has(k) == Some(false))
            .collect();
        if !absent.is_empty() {
            r.error(
                &rules::SOURCE,
                &at.key("options"),
                &format!(
                    "source.kafka.options sets SSL store locations without {}",
                    absent.join(", ")
                ),
                "sdp-meta fails with \"Kafka ssl required params are: …\"",
                "add the truststore and keystore secrets' scope and key to source.kafka.options",
            );
        }
    }
}

pub(super) fn eventhub_rules(src: &Object, at: &At, r: &mut Report) {
    let e = match block(src, "eventhub") {
        Tri::Known(e) => e,
        Tri::Absent => {
            r.error(
                &rules::SOURCE,
                &at.key("eventhub"),
                "source.format = \"eventhub\" has no eventhub block",
                "sdp-meta needs the Event Hubs namespace, name, port, access key name and secret scope",
                "add eventhub { namespace, name, port, access_key_name, secrets_scope_name } to the source block",
            );
            return;
        }
        Tri::Unknown => return,
    };
    let at = at.key("eventhub");
    for field in [
        "namespace",
        "name",
        "port",
        "access_key_name",
        "secrets_scope_name",
    ] {
        if configured(e, field) == Some(false) {
            r.missing(
                &at.key(field),
                "the Event Hubs reader builds its Kafka options from it and fails without it",
                &format!("set source.eventhub.{field}"),
            );
        }
    }
}

/// V8 and snapshot CDC on a source that is not a snapshot.
pub(super) fn snapshot_source_rules(v: &FlowView, b: &Object, r: &mut Report) {
    let Some(fmt) = v.format() else { return };
    let snap = configured(b, "apply_changes_from_snapshot");
    let at = At::root().key("bronze");
    if fmt == Format::Snapshot && snap == Some(false) {
        r.error(
            &rules::V8,
            &at,
            "source.format = \"snapshot\" needs bronze.apply_changes_from_snapshot",
            "sdp-meta fails at pipeline start with AttributeError",
            "add apply_changes_from_snapshot { keys = [...] scd_type = \"1\" } to the bronze block",
        );
    }
    if fmt != Format::Snapshot && snap == Some(true) {
        r.error(
            &rules::SOURCE,
            &at.key("apply_changes_from_snapshot"),
            &format!("bronze.apply_changes_from_snapshot with source.format = {}", quote(fmt.name())),
            "snapshot CDC reads a snapshot source; sdp-meta has no snapshot to give it",
            "set source.format = \"snapshot\" (with snapshot_format), or use bronze.cdc_apply_changes for a change stream",
        );
    }
}

/// V16 / V17: Lakeflow Connect destination tables as sources.
pub(super) fn lakeflow_connect_rules(v: &FlowView, src: &Object, b: &Object, r: &mut Report) {
    let Tri::Known(Value::Object(it)) = get(src, "ingestion_table") else {
        return;
    };
    let Some(fmt) = v.format() else { return };
    let scd = text(it, "scd_type");
    let reserved = match get(it, "has_reserved_scd2_columns") {
        Tri::Known(Value::Bool(x)) => Some(*x),
        Tri::Absent => Some(false),
        _ => None,
    };
    let name = match text(it, "destination_table") {
        Tri::Known(t) => format!("the Lakeflow Connect table {t}"),
        _ => "the Lakeflow Connect table".to_string(),
    };
    let scd2 = match (scd, reserved) {
        (Tri::Known(s), _) if s.eq_ignore_ascii_case("SCD_TYPE_2") => Some(true),
        (_, Some(true)) => Some(true),
        (Tri::Known(_) | Tri::Absent, Some(false)) => Some(false),
        _ => None,
    };
    let scd1 =
        matches!(scd, Tri::Known(s) if s.eq_ignore_ascii_case("SCD_TYPE_1")) && scd2 == Some(false);
    let at = At::root().key("bronze");
    let cdc = any_configured(b, &["cdc_apply_changes", "cdc_apply_changes_flows"]);
    let rcf = reads_change_feed(b);

    if fmt == Format::Delta && scd2 == Some(true) {
        if cdc == Some(true) {
            r.error(
                &rules::V16,
                &at.key("cdc_apply_changes"),
                &format!("{name} (SCD_TYPE_2, with __START_AT/__END_AT) feeds bronze.cdc_apply_changes"),
                "DLT rejects the system-reserved columns __START_AT/__END_AT (\"Please rename the following system reserved columns\"), even with scd_type = \"1\"",
                "read it as a snapshot: source.format = \"snapshot\", snapshot_format = \"delta\", bronze.apply_changes_from_snapshot with keys including lfc_end_at, and a runner that renames __START_AT/__END_AT to lfc_start_at/lfc_end_at",
            );
        } else if rcf == Some(false) && cdc == Some(false) {
            r.error(
                &rules::V17,
                &at.key("reader_options"),
                &format!("{name} (SCD_TYPE_2) is read as a plain stream"),
                "Lakeflow Connect writes it with MERGE commits, which break a plain streaming read",
                "read it as a snapshot: source.format = \"snapshot\", snapshot_format = \"delta\", bronze.apply_changes_from_snapshot with keys including lfc_end_at",
            );
        }
    }
    if fmt == Format::Delta && scd1 {
        match (rcf, cdc) {
            (Some(false), _) => r.error(
                &rules::V17,
                &at.key("reader_options"),
                &format!("{name} (SCD_TYPE_1) is read without bronze.reader_options readChangeFeed = \"true\""),
                "Lakeflow Connect applies changes with MERGE commits, which break a plain streaming read",
                "set bronze.reader_options = { readChangeFeed = \"true\" } and add bronze.cdc_apply_changes { keys = [...] sequence_by = \"_commit_version\" scd_type = \"1\" apply_as_deletes = \"_change_type = 'delete'\" }",
            ),
            (Some(true), Some(false)) => r.error(
                &rules::V17,
                &at,
                &format!("{name} (SCD_TYPE_1) is read with readChangeFeed but without bronze.cdc_apply_changes"),
                "the change feed's inserts, update images and deletes would be appended to bronze as rows",
                "add bronze.cdc_apply_changes { keys = [...] sequence_by = \"_commit_version\" scd_type = \"1\" apply_as_deletes = \"_change_type = 'delete'\" }",
            ),
            _ => {}
        }
    }
    if fmt == Format::Snapshot
        && scd2 == Some(true)
        && let Tri::Known(snap) = block(b, "apply_changes_from_snapshot")
        && let Some(keys) = string_list(snap, "keys")
    {
        let at = at.key("apply_changes_from_snapshot").key("keys");
        if let Some(k) = keys
            .iter()
            .find(|k| k.eq_ignore_ascii_case("__START_AT") || k.eq_ignore_ascii_case("__END_AT"))
        {
            r.error(
                &rules::V16,
                &at,
                &format!("bronze.apply_changes_from_snapshot.keys names the reserved column {}", quote(k)),
                &format!("DLT strips __START_AT/__END_AT from {name}, so the key cannot resolve"),
                "rename the columns in the runner's snapshot function (__END_AT → lfc_end_at) and key on lfc_end_at",
            );
        } else if keys.iter().any(|k| k.eq_ignore_ascii_case("lfc_start_at")) {
            r.warn(
                &rules::V16,
                &at,
                "bronze.apply_changes_from_snapshot.keys includes lfc_start_at",
                &format!("rows of {name}'s SCD2 history can share __START_AT, which fails with APPLY_CHANGES_FROM_SNAPSHOT_ERROR.DUPLICATE_KEY_VIOLATION"),
                "key on lfc_end_at instead of lfc_start_at (e.g. keys = [\"dt\", \"lfc_end_at\"])",
            );
        }
    }
}

/// V18: silver reading a bronze AUTO CDC target. `bronze_of`: the flow that writes the bronze
/// table, when it is another flow.
pub(super) fn silver_reads_bronze_rules(
    b: &Object,
    s: &Object,
    bronze_of: Option<&str>,
    r: &mut Report,
) {
    let auto_cdc = any_configured(
        b,
        &[
            "cdc_apply_changes",
            "cdc_apply_changes_flows",
            "apply_changes_from_snapshot",
        ],
    );
    if auto_cdc != Some(true) {
        return;
    }
    // A silver snapshot reads bronze in batch; CDC flows read their own sources.
    if any_configured(
        s,
        &["apply_changes_from_snapshot", "cdc_apply_changes_flows"],
    ) != Some(false)
    {
        return;
    }
    let target = match bronze_of {
        Some(other) => format!("the bronze table written by {other} with AUTO CDC"),
        None => "bronze, an AUTO CDC target,".to_string(),
    };
    let at = At::root().key("silver");
    match (reads_change_feed(s), configured(s, "cdc_apply_changes")) {
        (Some(false), _) => r.error(
            &rules::V18,
            &at.key("reader_options"),
            &format!("silver streams from {target} without silver.reader_options readChangeFeed = \"true\""),
            "AUTO CDC updates and deletes rows, so the second run fails with DELTA_SOURCE_TABLE_IGNORE_CHANGES",
            "set silver.reader_options = { readChangeFeed = \"true\" } and add silver.cdc_apply_changes { keys = [...] sequence_by = \"_commit_version\" scd_type = \"1\" }",
        ),
        (Some(true), Some(false)) => r.warn(
            &rules::V18,
            &at,
            &format!("silver reads the change feed of {target} without silver.cdc_apply_changes"),
            "every change event (inserts, update images, deletes) would be appended to silver as a row",
            "add silver.cdc_apply_changes { keys = [...] sequence_by = \"_commit_version\" scd_type = \"1\" apply_as_deletes = \"_change_type = 'delete'\" }",
        ),
        _ => {}
    }
}
