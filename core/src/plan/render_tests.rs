//! Golden tests for the three plan renderers over hand-built plans, one per situation a
//! reviewer meets. Snapshots live in `snapshots/`; each was read for Terraform-likeness
//! before it was accepted.

use super::super::model::*;
use super::super::{render_json, render_markdown, render_text};
use crate::value::{Object, PathStep, Value};
use std::sync::Arc;

/// A secret that must never appear in any rendering.
const SECRET: &str = "s3cr3t-VALUE-do-not-print";

fn s(x: &str) -> Value {
    Value::from(x)
}
fn n(x: i64) -> Value {
    Value::from(x)
}
fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<crate::value::Object>()
            .into(),
    )
}
fn list(items: Vec<Value>) -> Value {
    Value::List(items)
}
fn ser_obj(v: Value) -> SerObject {
    match v {
        Value::Object(o) => SerObject(Arc::unwrap_or_clone(o)),
        _ => SerObject(Object::default()),
    }
}
fn p(steps: &[&str]) -> Vec<PathStep> {
    steps
        .iter()
        .map(|x| match x.parse::<usize>() {
            Ok(i) => PathStep::Index(i),
            Err(_) => PathStep::Key(x.to_string()),
        })
        .collect()
}
fn fc(
    path: &[&str],
    before: Option<Value>,
    after: Option<Value>,
    reason: FieldReason,
) -> FieldChange {
    FieldChange {
        path: p(path),
        before: before.map(SerValue),
        after: after.map(SerValue),
        live: None,
        reason,
        forces_replacement: false,
        sensitive: false,
    }
}

fn rc(type_name: &str, name: &str, action: Action) -> ResourceChange {
    ResourceChange::bare(type_name, name, "databricks", action)
}

/// Fills `fields` from top-level differences of `before` and `after`, the way the planner
/// reports them.
fn with_top_fields(mut c: ResourceChange) -> ResourceChange {
    let empty = Object::default();
    let b = c.before.as_ref().map(|o| &o.0).unwrap_or(&empty);
    let a = c.after.as_ref().map(|o| &o.0).unwrap_or(&empty);
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        if c.fields
            .iter()
            .any(|f| f.path.first() == Some(&PathStep::Key(k.clone())))
        {
            continue;
        }
        let (bv, av) = (b.get(k), a.get(k));
        if bv != av {
            let reason = match (c.before.is_some(), c.after.is_some()) {
                (false, _) => FieldReason::Create,
                (_, false) => FieldReason::Delete,
                _ if av == Some(&Value::Unknown) => FieldReason::KnownAfterApply,
                _ => FieldReason::Configuration,
            };
            c.fields.push(fc(&[k], bv.cloned(), av.cloned(), reason));
        }
    }
    c
}

fn plan(changes: Vec<ResourceChange>) -> Plan {
    Plan {
        mode: PlanMode::Normal,
        environment: "dev".to_string(),
        changes,
        ..Plan::default()
    }
}

fn job_after() -> Value {
    obj(vec![
        ("id", Value::Unknown),
        ("name", s("nightly etl")),
        ("max_concurrent_runs", n(1)),
        ("url", Value::Unknown),
        (
            "tags",
            obj(vec![("team", s("data")), ("cost-center", s("42"))]),
        ),
        ("queue", Value::Null),
        (
            "task",
            list(vec![
                obj(vec![
                    ("task_key", s("ingest")),
                    (
                        "notebook_task",
                        obj(vec![
                            ("notebook_path", s("/Shared/ingest")),
                            ("source", s("WORKSPACE")),
                        ]),
                    ),
                    ("depends_on", list(vec![])),
                ]),
                obj(vec![
                    ("task_key", s("transform")),
                    ("run_if", s("ALL_SUCCESS")),
                    (
                        "notebook_task",
                        obj(vec![("notebook_path", s("/Shared/transform"))]),
                    ),
                    (
                        "depends_on",
                        list(vec![obj(vec![("task_key", s("ingest"))])]),
                    ),
                    ("job_cluster_key", Value::Unknown),
                ]),
            ]),
        ),
    ])
}

fn job_blocks() -> Vec<Vec<String>> {
    vec![
        vec!["task".into()],
        vec!["task".into(), "notebook_task".into()],
        vec!["task".into(), "depends_on".into()],
    ]
}

fn create_plan() -> Plan {
    let mut job = rc("databricks_job", "etl", Action::Create);
    job.after = Some(ser_obj(job_after()));
    job.block_paths = job_blocks().into();
    job.dependencies = vec![crate::addrs::InstanceAddr::parse("databricks_schema.raw").unwrap()];
    let job = with_top_fields(job);

    let mut schema = rc("databricks_schema", "raw", Action::Create);
    schema.after = Some(ser_obj(obj(vec![
        ("catalog_name", s("main")),
        ("name", s("raw")),
        ("comment", s("Landing zone for \"raw\" files")),
        ("id", Value::Unknown),
        ("properties", obj(vec![])),
    ])));
    let schema = with_top_fields(schema);
    plan(vec![job, schema])
}

fn update_plan() -> Plan {
    let before = obj(vec![
        ("id", s("main.raw")),
        ("name", s("raw")),
        ("catalog_name", s("main")),
        ("owner", s("data-eng")),
        ("storage_root", s("s3://bucket/raw")),
        ("enable_predictive_optimization", s("INHERIT")),
        ("comment", s("landing")),
        (
            "properties",
            obj(vec![
                ("a", s("1")),
                ("b", s("2")),
                ("env", s("dev")),
                ("old", s("x")),
            ]),
        ),
        (
            "grants_to",
            list(vec![s("alice"), s("bob"), s("carol"), s("dave"), s("erin")]),
        ),
    ]);
    let mut after = before.clone();
    if let Value::Object(o) = &mut after {
        Arc::make_mut(o).insert("comment".into(), s("Landing zone"));
        Arc::make_mut(o).insert(
            "properties".into(),
            obj(vec![
                ("a", s("1")),
                ("b", s("2")),
                ("env", s("prod")),
                ("new", s("y")),
            ]),
        );
        Arc::make_mut(o).insert(
            "grants_to".into(),
            list(vec![
                s("alice"),
                s("bob"),
                s("bert"),
                s("carol"),
                s("dave"),
                s("erin"),
            ]),
        );
    }
    let mut schema = rc("databricks_schema", "raw", Action::Update);
    schema.id = Some("main.raw".into());
    schema.before = Some(ser_obj(before));
    schema.after = Some(ser_obj(after));
    let schema = with_top_fields(schema);

    // A job where one of three tasks changes, plus a nested block added.
    let job_before = obj(vec![
        ("id", s("123")),
        ("name", s("nightly")),
        ("timeout_seconds", n(0)),
        ("format", s("MULTI_TASK")),
        (
            "task",
            list(vec![
                obj(vec![
                    ("task_key", s("a")),
                    ("timeout_seconds", n(60)),
                    ("max_retries", n(1)),
                ]),
                obj(vec![
                    ("task_key", s("b")),
                    ("timeout_seconds", n(60)),
                    ("max_retries", n(1)),
                ]),
                obj(vec![
                    ("task_key", s("c")),
                    ("timeout_seconds", n(60)),
                    ("max_retries", n(1)),
                ]),
            ]),
        ),
    ]);
    let job_after = obj(vec![
        ("id", s("123")),
        ("name", s("nightly")),
        ("timeout_seconds", n(0)),
        ("format", s("MULTI_TASK")),
        (
            "task",
            list(vec![
                obj(vec![
                    ("task_key", s("a")),
                    ("timeout_seconds", n(60)),
                    ("max_retries", n(1)),
                ]),
                obj(vec![
                    ("task_key", s("b")),
                    ("timeout_seconds", n(120)),
                    ("max_retries", n(1)),
                    (
                        "email_notifications",
                        obj(vec![("on_failure", list(vec![s("ops@example.com")]))]),
                    ),
                ]),
                obj(vec![
                    ("task_key", s("c")),
                    ("timeout_seconds", n(60)),
                    ("max_retries", n(1)),
                ]),
            ]),
        ),
    ]);
    let mut job = rc("databricks_job", "nightly", Action::Update);
    job.before = Some(ser_obj(job_before));
    job.after = Some(ser_obj(job_after));
    job.block_paths = vec![
        vec!["task".into()],
        vec!["task".into(), "email_notifications".into()],
    ]
    .into();
    let job = with_top_fields(job);
    plan(vec![schema, job])
}

fn replace_plan() -> Plan {
    let before = obj(vec![
        ("id", s("main")),
        ("name", s("main")),
        ("storage_root", s("s3://old-bucket/main")),
        ("comment", s("main catalog")),
        ("metastore_id", s("abc-123")),
    ]);
    let after = obj(vec![
        ("id", Value::Unknown),
        ("name", s("main")),
        ("storage_root", s("s3://new-bucket/main")),
        ("comment", s("main catalog")),
        ("metastore_id", Value::Unknown),
    ]);
    let mut cat = rc("databricks_catalog", "main", Action::DeleteThenCreate);
    cat.reason = Some(ActionReason::ReplaceBecauseCannotUpdate);
    cat.before = Some(ser_obj(before));
    cat.after = Some(ser_obj(after));
    cat.fields = vec![{
        let mut f = fc(
            &["storage_root"],
            Some(s("s3://old-bucket/main")),
            Some(s("s3://new-bucket/main")),
            FieldReason::Configuration,
        );
        f.forces_replacement = true;
        f
    }];
    let cat = with_top_fields(cat);

    let vol = |name: &str, reason: ActionReason, action: Action| {
        let mut v = rc("databricks_volume", name, action);
        v.reason = Some(reason);
        v.addr.key = None;
        v.before = Some(ser_obj(obj(vec![
            ("id", s(&format!("main.raw.{name}"))),
            ("name", s(name)),
            ("volume_type", s("MANAGED")),
        ])));
        v.after = Some(ser_obj(obj(vec![
            ("id", Value::Unknown),
            ("name", s(name)),
            ("volume_type", s("MANAGED")),
        ])));
        with_top_fields(v)
    };
    plan(vec![
        cat,
        vol(
            "files",
            ActionReason::ReplaceByRequest,
            Action::CreateThenDelete,
        ),
        vol(
            "landing",
            ActionReason::ReplaceByTriggers,
            Action::DeleteThenCreate,
        ),
    ])
}

fn delete_plan() -> Plan {
    let gone = |type_name: &str, name: &str, index: Option<InstanceKey>, reason: ActionReason| {
        let mut c = rc(type_name, name, Action::Delete);
        c.addr.key = index;
        c.reason = Some(reason);
        c.before = Some(ser_obj(obj(vec![
            ("id", s("x-1")),
            ("name", s(name)),
            ("comment", Value::Null),
            ("tags", obj(vec![("env", s("dev"))])),
            ("definition", s("SELECT 1\nFROM dual\n")),
        ])));
        with_top_fields(c)
    };
    let mut data = rc("databricks_current_user", "me", Action::Delete);
    data.addr.resource.mode = Mode::Data;
    plan(vec![
        gone(
            "databricks_schema",
            "old",
            None,
            ActionReason::DeleteBecauseNoResourceConfig,
        ),
        gone(
            "databricks_volume",
            "by_key",
            Some(InstanceKey::Key("stale".into())),
            ActionReason::DeleteBecauseEachKey,
        ),
        gone(
            "databricks_volume",
            "by_count",
            Some(InstanceKey::Index(2)),
            ActionReason::DeleteBecauseCountIndex,
        ),
        data,
    ])
}

fn import_moved_forget_plan() -> Plan {
    let base = obj(vec![
        ("id", s("main.raw")),
        ("name", s("raw")),
        ("owner", s("me")),
        ("comment", s("c")),
    ]);
    let mut imp = rc("databricks_schema", "imported", Action::NoOp);
    imp.importing = Some("main.imported".into());
    imp.before = Some(ser_obj(base.clone()));
    imp.after = Some(ser_obj(base.clone()));

    let mut imp_upd = rc("databricks_schema", "adopted", Action::Update);
    imp_upd.importing = Some("main.adopted".into());
    imp_upd.before = Some(ser_obj(base.clone()));
    let mut changed = base.clone();
    if let Value::Object(o) = &mut changed {
        Arc::make_mut(o).insert("comment".into(), s("now managed"));
    }
    imp_upd.after = Some(ser_obj(changed.clone()));
    let imp_upd = with_top_fields(imp_upd);

    let mut mv = rc("databricks_schema", "renamed", Action::NoOp);
    mv.moved_from = Some(crate::addrs::InstanceAddr::parse("databricks_schema.old_name").unwrap());
    mv.before = Some(ser_obj(base.clone()));
    mv.after = Some(ser_obj(base.clone()));

    let mut mv_upd = rc("databricks_volume", "moved_and_changed", Action::Update);
    mv_upd.moved_from =
        Some(crate::addrs::InstanceAddr::parse("databricks_volume.before_move").unwrap());
    mv_upd.before = Some(ser_obj(base.clone()));
    mv_upd.after = Some(ser_obj(changed));
    let mv_upd = with_top_fields(mv_upd);

    let mut forget = rc("databricks_schema", "legacy", Action::Forget);
    forget.reason = Some(ActionReason::ForgetBecauseRemoved);
    forget.before = Some(ser_obj(base));

    let mut read = rc("databricks_current_user", "me", Action::Read);
    read.addr.resource.mode = Mode::Data;
    read.reason = Some(ActionReason::ReadBecauseConfigUnknown);
    read.after = Some(ser_obj(obj(vec![
        ("id", Value::Unknown),
        ("user_name", Value::Unknown),
        ("workspace_url", s("https://adb-1.azuredatabricks.net")),
    ])));
    let read = with_top_fields(read);

    let mut recreated = rc("databricks_volume", "vanished", Action::Create);
    recreated.reason = Some(ActionReason::CreateBecauseDeletedOutside);
    recreated.after = Some(ser_obj(obj(vec![
        ("id", Value::Unknown),
        ("name", s("vanished")),
    ])));
    let recreated = with_top_fields(recreated);

    let mut deposed = rc("databricks_volume", "vanished", Action::Delete);
    deposed.reason = Some(ActionReason::DeleteBecauseDeposed);
    deposed.deposed = true;
    deposed.id = Some("main.raw.vanished_old".into());
    deposed.before = Some(ser_obj(obj(vec![("name", s("vanished_old"))])));

    plan(vec![
        imp, imp_upd, mv, mv_upd, forget, read, recreated, deposed,
    ])
}

fn drift_plan() -> Plan {
    let mut p = plan(Vec::new());
    let mut d_comment = fc(
        &["comment"],
        Some(s("landing")),
        Some(s("edited in the UI")),
        FieldReason::Drift,
    );
    d_comment.live = Some(SerValue(s("edited in the UI")));
    let mut d_tag = fc(
        &["properties", "env"],
        Some(s("dev")),
        Some(s("prod")),
        FieldReason::Drift,
    );
    d_tag.live = Some(SerValue(s("prod")));
    p.drift = vec![
        Drift {
            address: crate::addrs::InstanceAddr::parse("databricks_schema.raw").unwrap(),
            type_name: "databricks_schema".into(),
            name: "raw".into(),
            deleted: false,
            fields: vec![d_comment, d_tag],
            block_paths: Default::default(),
            block_keys: Default::default(),
            sensitive_paths: Vec::new(),
        },
        Drift {
            address: crate::addrs::InstanceAddr::parse("databricks_volume.files").unwrap(),
            type_name: "databricks_volume".into(),
            name: "files".into(),
            deleted: true,
            fields: vec![fc(&["name"], Some(s("files")), None, FieldReason::Drift)],
            block_paths: Default::default(),
            block_keys: Default::default(),
            sensitive_paths: Vec::new(),
        },
    ];

    // The planned change puts the configuration back: comment is drift, owner is a
    // configuration change made while the live value drifted too.
    let before = obj(vec![
        ("id", s("main.raw")),
        ("name", s("raw")),
        ("comment", s("landing")),
        ("owner", s("data-eng")),
        (
            "properties",
            obj(vec![("env", s("dev")), ("team", s("data"))]),
        ),
    ]);
    let mut after = before.clone();
    if let Value::Object(o) = &mut after {
        Arc::make_mut(o).insert("owner".into(), s("platform"));
    }
    let mut schema = rc("databricks_schema", "raw", Action::Update);
    schema.before = Some(ser_obj(before));
    schema.after = Some(ser_obj(after));
    let mut f_comment = fc(
        &["comment"],
        Some(s("landing")),
        Some(s("landing")),
        FieldReason::Drift,
    );
    f_comment.live = Some(SerValue(s("edited in the UI")));
    let mut f_owner = fc(
        &["owner"],
        Some(s("data-eng")),
        Some(s("platform")),
        FieldReason::Configuration,
    );
    f_owner.live = Some(SerValue(s("someone-else")));
    let mut f_env = fc(
        &["properties", "env"],
        Some(s("dev")),
        Some(s("dev")),
        FieldReason::Drift,
    );
    f_env.live = Some(SerValue(s("prod")));
    schema.fields = vec![f_comment, f_owner, f_env];

    let mut vol = rc("databricks_volume", "files", Action::Create);
    vol.reason = Some(ActionReason::CreateBecauseDeletedOutside);
    vol.after = Some(ser_obj(obj(vec![
        ("id", Value::Unknown),
        ("name", s("files")),
    ])));
    let vol = with_top_fields(vol);
    // Drift inside a repeated block, reported the way the planner does: on the whole
    // top-level attribute, with the last applied value planned back.
    let task = |t: i64| {
        obj(vec![
            ("task_key", s("a")),
            ("timeout_seconds", n(t)),
            ("max_retries", n(1)),
        ])
    };
    let job_obj = obj(vec![
        ("id", s("42")),
        ("name", s("nightly")),
        ("task", list(vec![task(60)])),
    ]);
    let mut job = rc("databricks_job", "nightly", Action::Update);
    job.before = Some(ser_obj(job_obj.clone()));
    job.after = Some(ser_obj(job_obj));
    job.block_paths = vec![vec!["task".into()]].into();
    let mut f_task = fc(
        &["task"],
        Some(list(vec![task(60)])),
        Some(list(vec![task(60)])),
        FieldReason::Drift,
    );
    f_task.live = Some(SerValue(list(vec![task(30)])));
    job.fields = vec![f_task];
    p.changes = vec![schema, vol, job];
    p
}

const OLD_SQL: &str = "CREATE OR REFRESH STREAMING TABLE orders AS\nSELECT id,\n       name\nFROM main.sales.orders_raw\nWHERE status = 'open'\n  AND region = 'emea'\n  AND amount > 0\n  AND currency = 'EUR'\n  AND deleted = false\n  AND test = false\nORDER BY id\n";
const NEW_SQL: &str = "CREATE OR REFRESH STREAMING TABLE orders AS\nSELECT id,\n       name,\n       amount\nFROM main.sales.orders_raw\nWHERE status = 'open'\n  AND region = 'emea'\n  AND amount > 0\n  AND currency = 'EUR'\n  AND deleted = false\n  AND test = false\nORDER BY id DESC\n";

fn strings_plan() -> Plan {
    let mut file = rc("databricks_workspace_file", "orders_sql", Action::Update);
    file.before = Some(ser_obj(obj(vec![
        ("path", s("/Shared/orders.sql")),
        ("content", s(OLD_SQL)),
        ("readme", s("line one\nline two")),
    ])));
    file.after = Some(ser_obj(obj(vec![
        ("path", s("/Shared/orders.sql")),
        ("content", s(NEW_SQL)),
        ("readme", s("line one  \nline   two")),
    ])));
    let file = with_top_fields(file);

    let mut newfile = rc("databricks_workspace_file", "new_sql", Action::Create);
    newfile.after = Some(ser_obj(obj(vec![
        ("content", s("SELECT 1;\nSELECT 2;\n")),
        ("path", s("/Shared/new.sql")),
    ])));
    let newfile = with_top_fields(newfile);

    let mut pipe = rc("databricks_pipeline", "orders", Action::Update);
    pipe.before = Some(ser_obj(obj(vec![
        ("name", s("orders")),
        (
            "configuration_json",
            s(r#"{"b": 1, "a": {"x": [1, 2], "y": "old"}, "keep": true}"#),
        ),
        ("spec", s(r#"{"z":1,"y":[1,2,3]}"#)),
    ])));
    pipe.after = Some(ser_obj(obj(vec![
        ("name", s("orders")),
        (
            "configuration_json",
            s(
                "{\n  \"a\": {\"x\": [1, 2, 3], \"y\": \"new\"},\n  \"b\": 1,\n  \"keep\": true,\n  \"added\": null\n}",
            ),
        ),
        ("spec", s("{\n  \"y\": [1, 2, 3],\n  \"z\": 1\n}")),
    ])));
    let pipe = with_top_fields(pipe);
    plan(vec![file, newfile, pipe])
}

fn sensitive_plan() -> Plan {
    let mut conn = rc("databricks_connection", "pg", Action::Update);
    conn.before = Some(ser_obj(obj(vec![
        ("name", s("pg")),
        (
            "options",
            obj(vec![
                ("host", s("db.internal")),
                ("password", s(SECRET)),
                ("user", s("app")),
            ]),
        ),
        ("comment", s("old")),
    ])));
    conn.after = Some(ser_obj(obj(vec![
        ("name", s("pg")),
        (
            "options",
            obj(vec![
                ("host", s("db2.internal")),
                ("password", s(&format!("{SECRET}-2"))),
                ("user", s("app")),
            ]),
        ),
        ("comment", s("new")),
    ])));
    conn.sensitive_paths = vec![p(&["options", "password"])];
    let mut f_pw = fc(
        &["options", "password"],
        Some(s(SECRET)),
        Some(s(&format!("{SECRET}-2"))),
        FieldReason::Configuration,
    );
    f_pw.live = Some(SerValue(s(&format!("{SECRET}-live"))));
    f_pw.sensitive = true;
    conn.fields = vec![
        fc(
            &["options", "host"],
            Some(s("db.internal")),
            Some(s("db2.internal")),
            FieldReason::Configuration,
        ),
        f_pw,
    ];
    let conn = with_top_fields(conn);

    let mut secret = rc("databricks_secret", "token", Action::Create);
    secret.after = Some(ser_obj(obj(vec![
        ("key", s("token")),
        ("scope", s("etl")),
        ("string_value", s(SECRET)),
        ("id", Value::Unknown),
    ])));
    let mut f_val = fc(
        &["string_value"],
        None,
        Some(s(SECRET)),
        FieldReason::Create,
    );
    f_val.sensitive = true;
    secret.fields = vec![f_val];
    let secret = with_top_fields(secret);

    // A secret inside a repeated block, declared by attribute path without an index.
    let mut job = rc("databricks_job", "with_secret", Action::Update);
    let task = |v: &str| {
        obj(vec![
            ("task_key", s("a")),
            ("env", obj(vec![("API_KEY", s(v)), ("MODE", s("x"))])),
        ])
    };
    job.before = Some(ser_obj(obj(vec![
        ("name", s("j")),
        ("task", list(vec![task(SECRET)])),
    ])));
    job.after = Some(ser_obj(obj(vec![
        ("name", s("j")),
        ("task", list(vec![task("rotated-but-secret")])),
    ])));
    job.block_paths = vec![vec!["task".into()]].into();
    job.sensitive_paths = vec![p(&["task", "env", "API_KEY"])];
    let job = with_top_fields(job);

    let mut pl = plan(vec![conn, secret, job]);
    let mut drift_pw = fc(
        &["options", "password"],
        Some(s(SECRET)),
        Some(s(&format!("{SECRET}-ui"))),
        FieldReason::Drift,
    );
    drift_pw.sensitive = true;
    pl.drift = vec![Drift {
        address: crate::addrs::InstanceAddr::parse("databricks_connection.pg").unwrap(),
        type_name: "databricks_connection".into(),
        name: "pg".into(),
        deleted: false,
        fields: vec![drift_pw],
        block_paths: Default::default(),
        block_keys: Default::default(),
        sensitive_paths: vec![p(&["options", "password"])],
    }];
    pl.outputs = vec![
        OutputChange {
            name: "token".into(),
            action: Action::Update,
            before: Some(SerValue(s(SECRET))),
            after: Some(SerValue(s(&format!("{SECRET}-3")))),
            sensitive: true,
        },
        OutputChange {
            name: "conn_name".into(),
            action: Action::NoOp,
            before: Some(SerValue(s("pg"))),
            after: Some(SerValue(s("pg"))),
            sensitive: false,
        },
    ];
    pl
}

fn outputs() -> Vec<OutputChange> {
    vec![
        OutputChange {
            name: "catalog_id".into(),
            action: Action::Create,
            before: None,
            after: Some(SerValue(Value::Unknown)),
            sensitive: false,
        },
        OutputChange {
            name: "schema_names".into(),
            action: Action::Update,
            before: Some(SerValue(list(vec![s("raw"), s("silver")]))),
            after: Some(SerValue(list(vec![s("raw"), s("silver"), s("gold")]))),
            sensitive: false,
        },
        OutputChange {
            name: "old".into(),
            action: Action::Delete,
            before: Some(SerValue(s("bye"))),
            after: None,
            sensitive: false,
        },
        OutputChange {
            name: "workspace_url".into(),
            action: Action::Update,
            before: Some(SerValue(s("https://a"))),
            after: Some(SerValue(s("https://b"))),
            sensitive: false,
        },
    ]
}

fn outputs_plan() -> Plan {
    let mut p = create_plan();
    p.changes.truncate(1);
    p.changes[0].after = Some(ser_obj(obj(vec![
        ("id", Value::Unknown),
        ("name", s("nightly etl")),
    ])));
    p.changes[0].block_paths = Default::default();
    p.changes[0].fields.clear();
    let c = p.changes.remove(0);
    p.changes.push(with_top_fields(c));
    p.outputs = outputs();
    p.warnings = vec![
        "Resource targeting is in effect\nYou are creating a plan with --target, which means that the result of this plan may not represent all of the changes requested by the current configuration.".into(),
    ];
    p.targeted = true;
    p
}

fn output_only_plan() -> Plan {
    let mut p = plan(Vec::new());
    p.outputs = outputs();
    p
}

fn noop_plan() -> Plan {
    let mut c = rc("databricks_catalog", "main", Action::NoOp);
    c.before = Some(ser_obj(obj(vec![("id", s("main")), ("name", s("main"))])));
    c.after = c.before.clone();
    let mut p = plan(vec![c]);
    p.outputs = vec![OutputChange {
        name: "x".into(),
        action: Action::NoOp,
        before: Some(SerValue(s("a"))),
        after: Some(SerValue(s("a"))),
        sensitive: false,
    }];
    p
}

fn refresh_only_plan() -> Plan {
    let mut p = drift_plan();
    p.mode = PlanMode::RefreshOnly;
    p.changes.clear();
    p
}

fn refresh_only_clean_plan() -> Plan {
    let mut p = noop_plan();
    p.mode = PlanMode::RefreshOnly;
    p
}

fn destroy_plan() -> Plan {
    let mut p = delete_plan();
    p.mode = PlanMode::Destroy;
    for c in &mut p.changes {
        c.reason = None;
    }
    p.changes.truncate(2);
    p.changes[0].dependencies =
        vec![crate::addrs::InstanceAddr::parse("databricks_volume.by_key").unwrap()];
    p.outputs = vec![OutputChange {
        name: "schema_id".into(),
        action: Action::Delete,
        before: Some(SerValue(s("main.old"))),
        after: None,
        sensitive: false,
    }];
    p
}

fn destroy_noop_plan() -> Plan {
    let mut p = plan(Vec::new());
    p.mode = PlanMode::Destroy;
    p
}

/// A destroy that drops tables with their data, an update whose schedule runs full
/// refreshes, and a source whose dataset changes type: what the plan says the changes do
/// to data, with the details each kind names its finding by.
fn data_impact_plan() -> Plan {
    use crate::plan::{DataImpact, DataImpactKind};
    let mut p = destroy_plan();
    p.data_impact = vec![
        DataImpact {
            address: crate::addrs::InstanceAddr::parse("databricks_pipeline.sales").unwrap(),
            kind: DataImpactKind::TablesDropped,
            tables: Some(vec!["main.sales.orders".into(), "main.sales.customers".into()]),
            details: Default::default(),
            message: "its destroy drops the tables it published, with their data".into(),
            hint: Some("to keep the tables, set cascade = false and apply that first".into()),
        },
        DataImpact {
            address: crate::addrs::InstanceAddr::parse("databricks_job.nightly").unwrap(),
            kind: DataImpactKind::FullRefresh,
            tables: None,
            details: [("task".to_string(), "load".to_string())].into(),
            message: "task \"load\" runs a full refresh of its pipeline on every run the job's schedule starts".into(),
            hint: None,
        },
        DataImpact {
            address: crate::addrs::InstanceAddr::parse("databricks_notebook.bronze").unwrap(),
            kind: DataImpactKind::DatasetTypeChanged,
            tables: None,
            details: [
                ("dataset", "orders"),
                ("file", "/Shared/bronze"),
                ("from_type", "streaming_table"),
                ("to_type", "materialized_view"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            message: "dataset orders in /Shared/bronze changes from a streaming table to a materialized view".into(),
            hint: Some("give the new materialized view another name".into()),
        },
    ];
    p
}

fn all_plans() -> Vec<(&'static str, Plan)> {
    vec![
        ("create", create_plan()),
        ("update", update_plan()),
        ("replace", replace_plan()),
        ("delete", delete_plan()),
        ("import_moved_forget_read", import_moved_forget_plan()),
        ("drift", drift_plan()),
        ("strings", strings_plan()),
        ("sensitive", sensitive_plan()),
        ("outputs", outputs_plan()),
        ("output_only", output_only_plan()),
        ("noop", noop_plan()),
        ("refresh_only", refresh_only_plan()),
        ("refresh_only_clean", refresh_only_clean_plan()),
        ("destroy", destroy_plan()),
        ("destroy_noop", destroy_noop_plan()),
        ("data_impact", data_impact_plan()),
    ]
}

fn text(p: &Plan) -> String {
    render_text::render(p, &render_text::TextOptions::default())
}

#[test]
fn text_snapshots() {
    for (name, p) in all_plans() {
        insta::assert_snapshot!(format!("text_{name}"), text(&p));
    }
}

#[test]
fn json_snapshots() {
    for (name, p) in all_plans() {
        let mut doc = render_json::render(&p);
        // The version changes with every release; the snapshot is about the shape.
        doc["brickform_version"] = serde_json::json!("[version]");
        insta::assert_json_snapshot!(format!("json_{name}"), doc);
    }
}

#[test]
fn markdown_snapshots() {
    for (name, p) in all_plans() {
        insta::assert_snapshot!(format!("markdown_{name}"), render_markdown::render(&p));
    }
}

#[test]
fn text_with_unchanged_shown() {
    let opts = render_text::TextOptions {
        color: false,
        show_unchanged: true,
    };
    insta::assert_snapshot!(
        "text_update_show_unchanged",
        render_text::render(&update_plan(), &opts)
    );
}

#[test]
fn colour_codes_only_when_asked() {
    let p = update_plan();
    assert!(!text(&p).contains('\x1b'));
    let coloured = render_text::render(
        &p,
        &render_text::TextOptions {
            color: true,
            show_unchanged: false,
        },
    );
    assert!(coloured.contains("\x1b[33m~\x1b[0m"), "{coloured}");
    assert!(coloured.contains("\x1b[1mPlan:\x1b[0m"));
}

#[test]
fn secrets_never_rendered() {
    for (name, p) in all_plans() {
        let mut rendered = vec![
            text(&p),
            render_text::render(
                &p,
                &render_text::TextOptions {
                    color: true,
                    show_unchanged: true,
                },
            ),
            serde_json::to_string(&render_json::render(&p)).unwrap(),
            render_markdown::render(&p),
        ];
        rendered.retain(|r| r.contains("s3cr3t") || r.contains("rotated-but-secret"));
        assert!(
            rendered.is_empty(),
            "{name} leaks a secret:\n{}",
            rendered.join("\n----\n")
        );
    }
}

#[test]
fn json_matches_the_documented_schema() {
    let schema_text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/plan-json.schema.json"
    ))
    .unwrap();
    let schema: serde_json::Value = serde_json::from_str(&schema_text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for (name, p) in all_plans() {
        let doc = render_json::render(&p);
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{name}: {}", errors.join("\n"));
    }
}

#[test]
fn documented_example_matches_the_schema() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/");
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}plan-json.schema.json")).unwrap(),
    )
    .unwrap();
    let doc = std::fs::read_to_string(format!("{root}plan-json.md")).unwrap();
    let start = doc.find("```json\n").unwrap() + "```json\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let example: serde_json::Value = serde_json::from_str(&doc[start..end]).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&example)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn json_follows_terraform_unknown_and_sensitive_rules() {
    let doc = render_json::render(&create_plan());
    let job = &doc["resource_changes"][0];
    assert_eq!(job["address"], "databricks_job.etl");
    let change = &job["change"];
    assert_eq!(change["before"], serde_json::Value::Null);
    assert_eq!(change["before_sensitive"], false);
    // Unknown leaves are omitted from `after` and marked in `after_unknown`.
    assert!(change["after"].get("id").is_none());
    assert_eq!(change["after_unknown"]["id"], true);
    // As in Terraform, known nested objects stay as `{}` and lists keep their positions; a
    // single block is a one-element list, as the Terraform provider writes it.
    assert_eq!(
        change["after_unknown"]["task"][0],
        serde_json::json!({"depends_on": [], "notebook_task": [{}]})
    );
    assert_eq!(change["after_unknown"]["task"][1]["job_cluster_key"], true);
    assert!(change["after_unknown"].get("name").is_none());

    let doc = render_json::render(&sensitive_plan());
    let conn = &doc["resource_changes"][0];
    assert_eq!(
        conn["change"]["after"]["options"]["password"],
        serde_json::Value::Null
    );
    assert_eq!(
        conn["change"]["after_sensitive"],
        serde_json::json!({"options": {"password": true}})
    );
    assert_eq!(doc["output_changes"]["token"]["after_sensitive"], true);
}

#[test]
fn path_within_tolerates_missing_indexes() {
    assert!(path_within(
        &p(&["task", "0", "env", "K"]),
        &p(&["task", "env"])
    ));
    assert!(path_within(&p(&["a", "b"]), &p(&["a"])));
    assert!(!path_within(&p(&["a"]), &p(&["a", "b"])));
    assert!(!path_within(&p(&["task", "0", "x"]), &p(&["task", "1"])));
    assert!(path_within(&p(&["x"]), &[]));
}

// Markdown for pull requests: graph addresses, long plans, and the shape GitHub and GitLab
// render (checked by `markdown_is_well_formed`; the Mermaid blocks of the snapshots are also
// parsed by mermaid itself in tests/mermaid).

/// An instance of `type_name.name` with an instance key.
fn instance(type_name: &str, name: &str, key: InstanceKey, action: Action) -> ResourceChange {
    let mut c = rc(type_name, name, action);
    c.addr.key = Some(key);
    c
}

/// Addresses Mermaid could misread (quotes, brackets, `#…;` entities, `:`/`;`/`%`, angle
/// brackets, backticks, non-ASCII) and dependencies on whole `for_each` resources, on
/// unchanged instances and on resources the plan does not hold.
fn graph_addresses_plan() -> Plan {
    let key = |k: &str| InstanceKey::Key(k.to_string());
    let mut raw = instance("databricks_schema", "layer", key("raw"), Action::Create);
    raw.after = Some(ser_obj(obj(vec![
        ("name", s("raw")),
        ("id", Value::Unknown),
    ])));
    let raw = with_top_fields(raw);
    let mut bronze = instance("databricks_schema", "layer", key("bronze"), Action::NoOp);
    bronze.before = Some(ser_obj(obj(vec![("name", s("bronze"))])));
    bronze.after = bronze.before.clone();

    let flow = |k: &str| {
        let mut f = instance("sdp_meta_flow", "t", key(k), Action::Create);
        f.after = Some(ser_obj(obj(vec![
            ("data_flow_id", s(k)),
            ("source_table", s(&format!("raw.{k}"))),
        ])));
        f.dependencies = vec![
            crate::addrs::InstanceAddr::parse("databricks_schema.layer").unwrap(),
            crate::addrs::InstanceAddr::parse("databricks_volume.conf").unwrap(),
        ];
        with_top_fields(f)
    };
    let mut job = instance("databricks_job", "x", InstanceKey::Index(0), Action::Update);
    job.before = Some(ser_obj(obj(vec![("id", s("7")), ("name", s("onboard"))])));
    job.after = Some(ser_obj(obj(vec![
        ("id", s("7")),
        ("name", s("onboard all")),
    ])));
    job.dependencies = vec![crate::addrs::InstanceAddr::parse("sdp_meta_flow.t").unwrap()];
    let job = with_top_fields(job);

    let mut pipeline = rc("databricks_pipeline", "bronze", Action::DeleteThenCreate);
    pipeline.reason = Some(ActionReason::ReplaceBecauseCannotUpdate);
    pipeline.before = Some(ser_obj(obj(vec![("catalog", s("old"))])));
    pipeline.after = Some(ser_obj(obj(vec![("catalog", s("new"))])));
    pipeline.dependencies = vec![
        crate::addrs::InstanceAddr::parse("sdp_meta_flow.t[\"201\"]").unwrap(),
        crate::addrs::InstanceAddr::parse("databricks_schema.layer[\"bronze\"]").unwrap(),
    ];
    let mut pipeline = with_top_fields(pipeline);
    pipeline.fields[0].forces_replacement = true;

    let mut old = rc("databricks_volume", "old", Action::Delete);
    old.before = Some(ser_obj(obj(vec![("name", s("old"))])));
    old.dependencies =
        vec![crate::addrs::InstanceAddr::parse("databricks_schema.layer[\"raw\"]").unwrap()];
    let old = with_top_fields(old);

    plan(vec![
        raw,
        bronze,
        flow("201"),
        flow("a#quot;b"),
        flow("weird: key; 100% <b>&amp;</b> `x` é \"q\""),
        flow("%%{init: {}}%%"),
        job,
        pipeline,
        old,
    ])
}

/// A plan the size of examples/flows-from-csv: `flows` sdp-meta flows created in two groups,
/// with their schemas, pipelines and onboarding file, plus drift on two objects.
fn large_plan(flows: usize) -> Plan {
    let mut changes = Vec::new();
    for layer in ["bronze", "silver"] {
        let mut sc = instance(
            "databricks_schema",
            "layer",
            InstanceKey::Key(layer.into()),
            Action::Create,
        );
        sc.after = Some(ser_obj(obj(vec![
            ("catalog_name", s("csv_flows")),
            ("name", s(layer)),
            ("id", Value::Unknown),
        ])));
        sc.dependencies =
            vec![crate::addrs::InstanceAddr::parse("databricks_catalog.main").unwrap()];
        changes.push(with_top_fields(sc));
    }
    for group in ["finance", "retail"] {
        let mut p = instance(
            "databricks_pipeline",
            "layer",
            InstanceKey::Key(format!("{group}_bronze")),
            Action::Update,
        );
        p.before = Some(ser_obj(obj(vec![
            ("id", s("p-1")),
            ("name", s(&format!("{group} bronze"))),
            ("development", Value::Bool(false)),
        ])));
        p.after = Some(ser_obj(obj(vec![
            ("id", s("p-1")),
            ("name", s(&format!("{group} bronze"))),
            ("development", Value::Bool(true)),
        ])));
        p.dependencies =
            vec![crate::addrs::InstanceAddr::parse("databricks_schema.layer").unwrap()];
        changes.push(with_top_fields(p));
    }
    for i in 0..flows {
        let group = if i % 2 == 0 { "retail" } else { "finance" };
        let id = format!("{i:04}");
        let mut f = instance(
            "sdp_meta_flow",
            "t",
            InstanceKey::Key(id.clone()),
            Action::Create,
        );
        f.after = Some(ser_obj(obj(vec![
            ("data_flow_id", s(&id)),
            ("data_flow_group", s(group)),
            ("source_format", s("cloudFiles")),
            (
                "source_path",
                s(&format!("/Volumes/csv_flows/raw/landing/{id}/")),
            ),
            ("bronze_table", s(&format!("csv_flows.bronze.t_{id}"))),
            ("silver_table", s(&format!("csv_flows.silver.t_{id}"))),
            (
                "reader_options",
                obj(vec![("cloudFiles.format", s("csv")), ("header", s("true"))]),
            ),
            ("id", Value::Unknown),
        ])));
        f.dependencies = vec![
            crate::addrs::InstanceAddr::parse("databricks_schema.layer").unwrap(),
            crate::addrs::InstanceAddr::parse(&format!(
                "databricks_pipeline.layer[\"{group}_bronze\"]"
            ))
            .unwrap(),
        ];
        changes.push(with_top_fields(f));
    }
    let mut p = plan(changes);
    let drifted = |address: &str| {
        let mut f = fc(
            &["comment"],
            Some(s("managed")),
            Some(s("edited")),
            FieldReason::Drift,
        );
        f.live = Some(SerValue(s("edited")));
        Drift {
            address: crate::addrs::InstanceAddr::parse(address).unwrap(),
            type_name: "databricks_pipeline".into(),
            name: "layer".into(),
            deleted: false,
            fields: vec![f],
            block_paths: Default::default(),
            block_keys: Default::default(),
            sensitive_paths: Vec::new(),
        }
    };
    p.drift = vec![
        drifted("databricks_pipeline.layer[\"finance_bronze\"]"),
        drifted("databricks_pipeline.layer[\"retail_bronze\"]"),
    ];
    p
}

#[test]
fn markdown_graph_addresses_snapshot() {
    insta::assert_snapshot!(
        "markdown_graph_addresses",
        render_markdown::render(&graph_addresses_plan())
    );
}

#[test]
fn markdown_shortened_snapshot() {
    // A small budget so the snapshot stays readable: both drift sections and the first
    // changes keep their diff, the rest are listed.
    insta::assert_snapshot!(
        "markdown_shortened",
        render_markdown::render_with_limit(&large_plan(6), Some(5_000))
    );
}

#[test]
fn markdown_large_graph_snapshot() {
    // 250 flows: the Markdown is shortened and the graph drawn one node per resource.
    let md = render_markdown::render(&large_plan(250));
    let graph = &md[md.find("#### Dependency graph").unwrap()..];
    insta::assert_snapshot!("markdown_large_graph", graph);
}

/// Checks the Mermaid block of a rendering against the subset of the flowchart grammar the
/// renderer writes, and the limits GitHub draws within. Returns the number of nodes.
fn check_mermaid(md: &str) -> usize {
    let Some(start) = md.find("```mermaid\n") else {
        return 0;
    };
    let body = &md[start + "```mermaid\n".len()..];
    let body = &body[..body.find("```\n").expect("the mermaid block is closed")];
    assert!(body.len() < 50_000, "mermaid's maxTextSize");
    let mut lines = body.lines();
    assert_eq!(lines.next(), Some("flowchart LR"));
    let mut nodes = std::collections::BTreeSet::new();
    let mut classes = std::collections::BTreeSet::new();
    let mut edges = 0;
    let node_id = |id: &str, nodes: &std::collections::BTreeSet<String>| {
        assert!(
            nodes.contains(id),
            "edge or class names undeclared node {id}"
        );
    };
    for line in lines {
        let l = line
            .strip_prefix("  ")
            .unwrap_or_else(|| panic!("unindented line {line:?}"));
        if let Some((a, b)) = l.split_once(" --> ") {
            node_id(a, &nodes);
            node_id(b, &nodes);
            assert_ne!(a, b, "self loop");
            edges += 1;
        } else if let Some(rest) = l.strip_prefix("classDef ") {
            let (name, style) = rest.split_once(' ').expect("classDef NAME STYLE");
            assert!(name.chars().all(|c| c.is_ascii_lowercase()), "{name}");
            assert!(!style.contains(';') && !style.contains(' ') || style.contains("dasharray"));
            classes.insert(name.to_string());
        } else if let Some(rest) = l.strip_prefix("class ") {
            let (ids, name) = rest.split_once(' ').expect("class IDS NAME");
            assert!(
                classes.contains(name),
                "class {name} used before its classDef"
            );
            for id in ids.split(',') {
                node_id(id, &nodes);
            }
        } else {
            let (id, label) = l.split_once('[').unwrap_or_else(|| panic!("{l:?}"));
            assert!(id.starts_with('n') && id[1..].chars().all(|c| c.is_ascii_digit()));
            let label = label
                .strip_prefix('"')
                .and_then(|x| x.strip_suffix("\"]"))
                .unwrap_or_else(|| panic!("unquoted label {l:?}"));
            // Only safe characters, and `#…;` entities that Mermaid decodes.
            let mut rest = label;
            while let Some(i) = rest.find('#') {
                let (before, after) = rest.split_at(i);
                assert!(
                    before
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_.-[]/(), ".contains(c)),
                    "unsafe character in label {label:?}"
                );
                let end = after.find(';').expect("an entity ends with ;");
                let name = &after[1..end];
                assert!(
                    name == "quot" || name.chars().all(|c| c.is_ascii_digit()),
                    "entity {name} in {label:?}"
                );
                rest = &after[end + 1..];
            }
            assert!(
                rest.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.-[]/(), ".contains(c)),
                "unsafe character in label {label:?}"
            );
            assert!(nodes.insert(id.to_string()), "node {id} declared twice");
        }
    }
    assert!(
        nodes.len() <= 150 && edges <= 400,
        "{} nodes, {edges} edges",
        nodes.len()
    );
    nodes.len()
}

/// Decodes a label written by the renderer back to the address.
fn mermaid_unlabel(label: &str) -> String {
    let mut out = String::new();
    let mut rest = label;
    while let Some(i) = rest.find('#') {
        out.push_str(&rest[..i]);
        let end = i + rest[i..].find(';').unwrap();
        let name = &rest[i + 1..end];
        if name == "quot" {
            out.push('"');
        } else {
            out.push(char::from_u32(name.parse().unwrap()).unwrap());
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `<details>` blocks balance, every fence closes, drift comes before the resource
/// changes, and the Mermaid block is well formed.
fn check_markdown(name: &str, md: &str) {
    assert_eq!(
        md.matches("<details>").count(),
        md.matches("</details>").count(),
        "{name}"
    );
    let mut fence: Option<String> = None;
    for line in md.lines() {
        let ticks = line.len() - line.trim_start_matches('`').len();
        match &fence {
            None if ticks >= 3 => fence = Some("`".repeat(ticks)),
            Some(f) if line == f => fence = None,
            _ => {}
        }
    }
    assert!(fence.is_none(), "{name}: unclosed fence");
    if let (Some(d), Some(c)) = (
        md.find("#### Changed outside of brickform"),
        md.find("#### Resource changes"),
    ) {
        assert!(d < c, "{name}: drift comes first");
    }
    if let (Some(t), Some(d)) = (md.find("| ➕ Add"), md.find("#### Changed outside")) {
        assert!(t < d, "{name}: the summary table comes first");
    }
    check_mermaid(md);
}

#[test]
fn markdown_is_well_formed() {
    let mut plans = all_plans();
    plans.push(("graph_addresses", graph_addresses_plan()));
    plans.push(("large", large_plan(250)));
    plans.push(("huge", large_plan(3_000)));
    for (name, p) in plans {
        let md = render_markdown::render(&p);
        check_markdown(name, &md);
        assert!(md.len() <= render_markdown::DEFAULT_MAX_BYTES, "{name}");
        // One collapsed section per drifted object and per changed resource, unless the
        // plan was shortened.
        if !md.contains("too long for one comment") {
            let sections = p.drift.len()
                + if p.mode == PlanMode::RefreshOnly {
                    0
                } else {
                    render_text::shown_changes(&p).len()
                };
            assert_eq!(md.matches("<details><summary>").count(), sections, "{name}");
        }
    }
}

#[test]
fn mermaid_graph_holds_changed_resources_and_their_dependencies() {
    let p = graph_addresses_plan();
    let md = render_markdown::render(&p);
    let start = md.find("```mermaid\n").unwrap();
    let block = &md[start..start + md[start..].find("\n```\n").unwrap()];
    let mut labels: std::collections::BTreeMap<String, String> = Default::default();
    let mut class_of = std::collections::BTreeMap::new();
    let mut edges = std::collections::BTreeSet::new();
    for l in block.lines().skip(2).map(str::trim) {
        // Drawn from the dependent to its dependency; kept as (dependency, dependent).
        if let Some((a, b)) = l.split_once(" --> ") {
            edges.insert((labels[b].clone(), labels[a].clone()));
        } else if let Some(rest) = l.strip_prefix("class ") {
            let (ids, class) = rest.split_once(' ').unwrap();
            for id in ids.split(',') {
                class_of.insert(labels[id].clone(), class.to_string());
            }
        } else if let Some((id, label)) = l.split_once("[\"") {
            labels.insert(
                id.to_string(),
                mermaid_unlabel(label.strip_suffix("\"]").unwrap()),
            );
        }
    }
    // Every shown change is a node, coloured by its action.
    for c in render_text::shown_changes(&p) {
        let class = match c.action {
            Action::Create => "create",
            Action::Update => "update",
            Action::Delete => "delete",
            Action::DeleteThenCreate | Action::CreateThenDelete => "replace",
            _ => "noop",
        };
        assert_eq!(
            class_of.get(&c.address()).map(String::as_str),
            Some(class),
            "{}",
            c.address()
        );
    }
    let e = |a: &str, b: &str| (a.to_string(), b.to_string());
    // The key's quotes are escaped in its address, as every address writes them.
    let weird = "sdp_meta_flow.t[\"weird: key; 100% <b>&amp;</b> `x` é \\\"q\\\"\"]";
    // A dependency on a whole for_each resource stands for each of its instances, changed
    // (raw) or not (bronze, dashed).
    assert!(
        edges.contains(&e("databricks_schema.layer[\"raw\"]", weird)),
        "{edges:?}"
    );
    assert!(edges.contains(&e("databricks_schema.layer[\"bronze\"]", weird)));
    assert_eq!(class_of["databricks_schema.layer[\"bronze\"]"], "noop");
    // A dependency the plan does not hold is drawn unchanged.
    assert!(edges.contains(&e("databricks_volume.conf", "sdp_meta_flow.t[\"201\"]")));
    assert_eq!(class_of["databricks_volume.conf"], "noop");
    assert!(edges.contains(&e(weird, "databricks_job.x[0]")));
    assert!(edges.contains(&e(
        "sdp_meta_flow.t[\"%%{init: {}}%%\"]",
        "databricks_job.x[0]"
    )));
    assert!(edges.contains(&e("sdp_meta_flow.t[\"201\"]", "databricks_pipeline.bronze")));
    assert!(edges.contains(&e(
        "databricks_schema.layer[\"raw\"]",
        "databricks_volume.old"
    )));
    assert_eq!(edges.len(), 19, "{edges:?}");
}

#[test]
fn long_plans_are_shortened_to_fit_a_comment() {
    let p = large_plan(250);
    let full = render_markdown::render_with_limit(&p, None);
    assert!(
        full.len() > render_markdown::GITHUB_COMMENT_LIMIT,
        "{}",
        full.len()
    );
    assert!(!full.contains("too long"));

    let md = render_markdown::render(&p);
    assert!(
        md.len() <= render_markdown::DEFAULT_MAX_BYTES,
        "{}",
        md.len()
    );
    // The summary and the graph are whole; the note says what is missing.
    assert!(md.contains("| 252 | 2 | 0 | 0 | 2 |"), "{}", &md[..400]);
    assert!(md.contains("`Plan: 252 to add, 2 to change, 0 to destroy.`"));
    assert!(md.contains("> **Note:** This plan is too long for one comment."));
    assert!(md.contains("sdp_meta_flow.t (250 instances)"));
    // Drift first and in full; then as many diffs as fit; every other change is named.
    assert_eq!(md.matches("has changed</summary>\n\n```diff").count(), 2);
    let shown = md.matches("</summary>\n\n```diff").count() - 2;
    let listed = md.matches("<li>").count();
    assert!(shown > 20, "{shown}");
    assert_eq!(shown + listed, 254);
    assert!(md.contains(&format!(
        "only {} of 256 sections below are shown with their diff",
        shown + 2
    )));
    assert!(md.contains(&format!(
        "<details><summary>{listed} more resource changes, without their diff</summary>"
    )));
    for c in render_text::shown_changes(&p) {
        assert!(
            md.contains(&format!("<code>{}</code>", c.address())),
            "{}",
            c.address()
        );
    }

    // So many changes that not every address fits: those that do are listed, the rest
    // counted, and the summary and the graph are still there.
    let p = large_plan(3_000);
    let md = render_markdown::render(&p);
    assert!(
        md.len() <= render_markdown::DEFAULT_MAX_BYTES,
        "{}",
        md.len()
    );
    assert!(md.contains("`Plan: 3002 to add, 2 to change, 0 to destroy.`"));
    assert!(md.contains("sdp_meta_flow.t (3000 instances)"));
    let listed = md.matches("<li>").count() - 1;
    let more: usize = md
        .split("<li>… and ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert_eq!(listed + more, 3_006);
    assert!(md.contains(&format!("except {more} that do not fit either")));
}

#[test]
fn shortened_plans_keep_destructive_diffs_first() {
    // A deletion and a replacement that sort after 250 creations still keep their diff;
    // with 3,000 creations they are still named.
    let gone = |flows: usize| {
        let mut p = large_plan(flows);
        let mut del = rc("sdp_meta_flow", "zz_gone", Action::Delete);
        del.before = Some(ser_obj(obj(vec![("data_flow_id", s("old"))])));
        let mut rep = rc("sdp_meta_flow", "zz_moved", Action::DeleteThenCreate);
        rep.before = Some(ser_obj(obj(vec![("data_flow_group", s("a"))])));
        rep.after = Some(ser_obj(obj(vec![("data_flow_group", s("b"))])));
        let mut rep = with_top_fields(rep);
        rep.fields[0].forces_replacement = true;
        p.changes.push(with_top_fields(del));
        p.changes.push(rep);
        p
    };
    let md = render_markdown::render(&gone(250));
    check_markdown("gone", &md);
    assert!(md.contains(
        "<details><summary>🔴 <code>-</code> <code>sdp_meta_flow.zz_gone</code> will be destroyed"
    ));
    assert!(md.contains(
        "<details><summary>🟠 <code>-/+</code> <code>sdp_meta_flow.zz_moved</code> must be replaced"
    ));
    let md = render_markdown::render(&gone(3_000));
    check_markdown("gone", &md);
    assert!(md.len() <= render_markdown::DEFAULT_MAX_BYTES);
    assert!(md.contains("<li>🔴 <code>-</code> <code>sdp_meta_flow.zz_gone</code>"));
    assert!(md.contains("<li>🟠 <code>-/+</code> <code>sdp_meta_flow.zz_moved</code>"));
    // Drift is named first, in the list of objects changed outside brickform.
    assert!(md.contains(
        "<li>🟡 <code>databricks_pipeline.layer[\"finance_bronze\"]</code> has changed</li>"
    ));
}

#[test]
fn a_changed_write_only_value_is_an_update_not_an_addition() {
    let hidden = || Some(Value::from("(sensitive value)"));
    let mut c = rc("databricks_connection", "c", Action::Update);
    let mut obj = Object::default();
    obj.insert("name".into(), Value::from("src"));
    obj.insert("options".into(), Value::from("(sensitive value)"));
    c.before = Some(SerObject(obj.clone()));
    c.after = Some(SerObject(obj));
    c.sensitive_paths = vec![p(&["options"])];
    let mut f = fc(&["options"], hidden(), hidden(), FieldReason::Configuration);
    f.sensitive = true;
    c.fields.push(f);
    let out = text(&plan(vec![c]));
    assert!(out.contains("~ options = (sensitive value)"), "{out}");
    assert!(!out.contains("+ options"), "{out}");
}

/// A keyed block whose key is replaced by another (one principal's grant revoked, another's
/// added) shows as one block removed and one added, never as the key changing.
#[test]
fn keyed_blocks_pair_by_key() {
    let grant = |who: &str, privs: &[&str]| {
        obj(vec![
            ("principal", s(who)),
            ("privileges", list(privs.iter().map(|p| s(p)).collect())),
        ])
    };
    let mut c = rc("databricks_grants", "ext", Action::Update);
    c.before = Some(ser_obj(obj(vec![(
        "grant",
        list(vec![grant("analysts", &["SELECT", "USE_CATALOG"])]),
    )])));
    c.after = Some(ser_obj(obj(vec![(
        "grant",
        list(vec![grant("account users", &["USE_CATALOG"])]),
    )])));
    c.block_paths = vec![vec!["grant".into()]].into();
    c.block_keys = vec![(vec!["grant".into()], "principal".into())].into();
    let out = text(&plan(vec![with_top_fields(c)]));
    assert!(!out.contains("\"analysts\" -> \"account users\""), "{out}");
    let removed = out.find("- grant {").expect(&out);
    let added = out.find("+ grant {").expect(&out);
    // In key order: "account users" before "analysts".
    assert!(added < removed, "{out}");
    assert!(out.contains("- principal  = \"analysts\""), "{out}");
    assert!(out.contains("+ principal  = \"account users\""), "{out}");
}
