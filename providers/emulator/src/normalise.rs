//! The `normalise_answers` behaviour: answers that differ from what the client sent, the way
//! the real service's do (a comment's case, a user principal lower-cased, an older enum
//! alias, a default nobody set, a write-only flag left out, a list in another order).
//!
//! Applied to answers only: the domain keeps what it was sent, so validation, runs and
//! lookups behave as without it. Every decision is a hash of (seed, route family, field path,
//! value) — no state, no randomness at run time — so every answer that shows a field shows
//! it rewritten the same way, a list answer as its get answer does, and a test that fails
//! fails again with the same seed. Seed 0 applies every rewriting everywhere; any other seed
//! turns each one on or off per route family and field path, so seeds give different mixes.
//!
//! Only rewritings the service accepts back unchanged, and none that touches identity
//! (names, ids, keys), so a client that sends an answer back as its next request is fine;
//! and each is idempotent, so what was answered, sent back, is answered the same again.

use serde_json::{Map, Value};

/// One kind of rewriting; its name goes into the hash, so each is chosen independently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// `comment` / `description` in another case.
    FreeTextCase,
    /// A user principal (an e-mail address) lower-cased.
    PrincipalLowerCase,
    /// A list whose order means nothing, in another order (job tasks sorted by task key).
    Reorder,
    /// A boolean the service acts on but never returns, left out.
    DropWriteOnly,
    /// An optional field the client did not send, with the service's default.
    FillDefault,
    /// An enum value answered by its older alias.
    EnumAlias,
}

impl Rule {
    fn name(self) -> &'static str {
        match self {
            Rule::FreeTextCase => "free_text_case",
            Rule::PrincipalLowerCase => "principal_lower_case",
            Rule::Reorder => "reorder",
            Rule::DropWriteOnly => "drop_write_only",
            Rule::FillDefault => "fill_default",
            Rule::EnumAlias => "enum_alias",
        }
    }
}

/// Free text the service stores but may answer in another case.
const FREE_TEXT: &[&str] = &["comment", "description"];

/// Fields that name a principal; a value with `@` is a user name, which the service answers
/// lower-cased.
const PRINCIPALS: &[&str] = &[
    "principal",
    "user_name",
    "owner",
    "created_by",
    "updated_by",
    "creator_user_name",
    "creator_name",
    "run_as_user_name",
];

/// Lists whose order carries no meaning: sets of privileges, dependencies, tags, e-mail
/// recipients, access control entries and privilege assignments (each keyed by principal).
const UNORDERED: &[&str] = &[
    "privileges",
    "depends_on",
    "custom_tags",
    "on_start",
    "on_success",
    "on_failure",
    "on_duration_warning_threshold_exceeded",
    "on_streaming_backlog_exceeded",
    "access_control_list",
    "privilege_assignments",
];

/// Lists the service answers sorted by a key of their items: a job's tasks by task key.
const SORTED_BY: &[(&str, &str)] = &[("tasks", "task_key")];

/// Booleans accepted on write and never answered: `(parent object, field)`. A job cluster's
/// `apply_policy_default_values` (databricks/cli libs/testserver/jobs.go, jobFixUps: "The real
/// Jobs API consumes apply_policy_default_values but does not return it in GET responses").
/// The jobs domain models it too (`apply_policy_default_values_consumed`); this rewriting
/// is what remains with that off.
const WRITE_ONLY: &[(&str, &str)] = &[("new_cluster", "apply_policy_default_values")];

/// Enum values answered by an older alias: a cluster's access mode (the Terraform provider's
/// clusters resource suppresses exactly these differences, DataSecurityModeDiffSuppressFunc).
/// The jobs domain holds them so (`data_security_mode_aliases`); this is what remains with
/// that off.
const ALIASES: &[(&str, &str, &str)] = &[
    (
        "data_security_mode",
        "DATA_SECURITY_MODE_DEDICATED",
        "SINGLE_USER",
    ),
    (
        "data_security_mode",
        "DATA_SECURITY_MODE_STANDARD",
        "USER_ISOLATION",
    ),
];

/// Root keys of list answers whose items are the objects a get answers: an item's fields get
/// the same paths as in the get answer, so both show the same rewriting.
const LIST_WRAPPERS: &[&str] = &[
    "catalogs",
    "schemas",
    "volumes",
    "connections",
    "tables",
    "jobs",
    "runs",
    "statuses",
    "warehouses",
    "scopes",
    "secrets",
    "items",
    "objects",
];

/// The service's default for an optional field, filled in where the answer lacks it.
struct Default_ {
    /// The route family whose answers get it.
    family: &'static str,
    /// Path of the object that holds the field (keys joined by `.`, list indices left out).
    parent: &'static str,
    field: &'static str,
    value: fn() -> Value,
    /// Whether the object is one the service fills it into.
    applies: fn(&Map<String, Value>) -> bool,
}

/// Defaults the real service fills in and the emulator's domain does not (what it already
/// fills — a job's `max_concurrent_runs`, `timeout_seconds`, `format`, `email_notifications`,
/// a pipeline's `channel` and `edition` — it fills whether this behaviour is on or not).
const DEFAULTS: &[Default_] = &[
    // databricks/cli libs/testserver/jobs.go, setSourceIfNotSet: a notebook task without a
    // source reads back with `source: WORKSPACE` (the jobs domain answers it so, GIT with a
    // git_source, with `task_source_filled` on; this is what remains with that off).
    Default_ {
        family: "jobs",
        parent: "settings.tasks.notebook_task",
        field: "source",
        value: || Value::from("WORKSPACE"),
        applies: |_| true,
    },
    // A classic pipeline reads back with Photon off (serverless ones always run Photon).
    Default_ {
        family: "pipelines",
        parent: "spec",
        field: "photon",
        value: || Value::Bool(false),
        applies: |spec| spec.get("serverless") != Some(&Value::Bool(true)),
    },
    // databricks/cli libs/testserver/pipelines.go, setSpecDefaults: the backend default
    // `spark.sql.ansi.enabled = true` shows in the configuration of a pipeline that set none.
    Default_ {
        family: "pipelines",
        parent: "spec",
        field: "configuration",
        value: || serde_json::json!({"spark.sql.ansi.enabled": "true"}),
        applies: |_| true,
    },
];

/// Rewrites one answer in place.
pub fn answer(seed: u64, request_path: &str, body: &mut Value) {
    let n = Normaliser {
        seed,
        family: family(request_path),
    };
    let Value::Object(root) = body else {
        return;
    };
    for (k, v) in root.iter_mut() {
        match v {
            Value::Array(items) if LIST_WRAPPERS.contains(&k.as_str()) => {
                for item in items.iter_mut() {
                    n.walk(item, "");
                }
            }
            _ => n.field(k, v, ""),
        }
    }
    n.fill_defaults(root, "");
}

/// The API area of a request path, so two endpoints of one object share their decisions:
/// `unity-catalog/catalogs`, `jobs`, `pipelines`, `sql/warehouses`, `permissions`.
fn family(path: &str) -> String {
    let mut parts = path
        .trim_start_matches('/')
        .split('/')
        .skip_while(|p| *p == "api")
        // The version (`2.0`, `2.1`, `2.2`) is not part of the family: jobs answer alike in each.
        .skip_while(|p| p.starts_with(|c: char| c.is_ascii_digit()))
        .filter(|p| *p != "preview");
    let first = parts.next().unwrap_or_default();
    match first {
        "unity-catalog" | "sql" | "scim" => {
            let rest: Vec<&str> = parts.filter(|p| *p != "v2").take(1).collect();
            format!("{first}/{}", rest.join("/"))
        }
        _ => first.to_string(),
    }
}

struct Normaliser {
    seed: u64,
    family: String,
}

impl Normaliser {
    /// Whether `rule` applies at `path` under this seed.
    fn on(&self, rule: Rule, path: &str) -> bool {
        self.seed == 0 || self.hash(&[rule.name(), path]) & 1 == 1
    }

    /// A 64-bit hash of the seed, the family and `parts`: FNV-1a, finished with SplitMix64
    /// so nearby inputs spread. Stable across builds and platforms (the std hasher is not
    /// promised to be).
    fn hash(&self, parts: &[&str]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            // A separator, so ("ab", "c") and ("a", "bc") differ.
            h ^= 0xff;
            h = h.wrapping_mul(0x0100_0000_01b3);
        };
        eat(&self.seed.to_le_bytes());
        eat(self.family.as_bytes());
        for p in parts {
            eat(p.as_bytes());
        }
        let mut z = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Rewrites the fields of an object at `path`.
    fn walk(&self, v: &mut Value, path: &str) {
        match v {
            Value::Object(o) => {
                let parent = path.rsplit('.').next().unwrap_or(path);
                let dropped: Vec<String> = WRITE_ONLY
                    .iter()
                    .filter(|(p, f)| *p == parent && o.get(*f).is_some_and(Value::is_boolean))
                    .map(|(_, f)| (*f).to_string())
                    .filter(|f| self.on(Rule::DropWriteOnly, &join(path, f)))
                    .collect();
                for f in dropped {
                    o.remove(&f);
                }
                for (k, v) in o.iter_mut() {
                    self.field(k, v, path);
                }
                self.fill_defaults(o, path);
            }
            Value::Array(items) => {
                for item in items {
                    self.walk(item, path);
                }
            }
            _ => {}
        }
    }

    /// Rewrites the value of field `key` of the object at `parent`.
    fn field(&self, key: &str, v: &mut Value, parent: &str) {
        let path = join(parent, key);
        match v {
            Value::String(s) => {
                if let Some(new) = self.string(key, s, &path) {
                    *s = new;
                }
            }
            Value::Array(items) => {
                // The items first: their own rewriting is part of what the order hashes.
                for item in items.iter_mut() {
                    self.walk(item, &path);
                }
                self.reorder(key, items, &path);
            }
            Value::Object(_) => self.walk(v, &path),
            _ => {}
        }
    }

    fn string(&self, key: &str, s: &str, path: &str) -> Option<String> {
        if FREE_TEXT.contains(&key) && self.on(Rule::FreeTextCase, path) {
            // Which case is chosen by the value too, so two comments of one field may differ;
            // by its lower-cased form, so an answer sent back answers the same again.
            // Both forms change lower-case text, the form clients mostly send.
            let upper = self.hash(&[path, &s.to_lowercase()]) & 1 == 1;
            let new = if upper {
                s.to_uppercase()
            } else {
                capitalised(s)
            };
            return (new != s).then_some(new);
        }
        if PRINCIPALS.contains(&key)
            && s.contains('@')
            && s.chars().any(char::is_uppercase)
            && self.on(Rule::PrincipalLowerCase, path)
        {
            return Some(s.to_lowercase());
        }
        ALIASES
            .iter()
            .find(|(k, from, _)| *k == key && *from == s)
            .filter(|_| self.on(Rule::EnumAlias, path))
            .map(|(_, _, to)| (*to).to_string())
    }

    fn reorder(&self, key: &str, items: &mut [Value], path: &str) {
        if let Some((_, by)) = SORTED_BY.iter().find(|(k, _)| *k == key) {
            if self.on(Rule::Reorder, path) {
                items.sort_by(|a, b| {
                    let k = |v: &Value| v.get(*by).and_then(Value::as_str).map(str::to_string);
                    k(a).cmp(&k(b))
                });
            }
            return;
        }
        if UNORDERED.contains(&key) && self.on(Rule::Reorder, path) {
            // Each item's place comes from its own content, so the same set answers in the
            // same order whatever order it was sent in.
            items.sort_by_cached_key(|item| self.hash(&[path, &item.to_string()]));
        }
    }

    fn fill_defaults(&self, o: &mut Map<String, Value>, path: &str) {
        for d in DEFAULTS
            .iter()
            .filter(|d| d.family == self.family && d.parent == path)
        {
            if !o.contains_key(d.field)
                && (d.applies)(o)
                && self.on(Rule::FillDefault, &join(path, d.field))
            {
                o.insert(d.field.to_string(), (d.value)());
            }
        }
    }
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// `s` with its first letter upper-case and the rest lower-case ("nightly Load" → "Nightly
/// load").
fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c
            .to_uppercase()
            .chain(chars.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn families_group_the_endpoints_of_one_object() {
        assert_eq!(family("/api/2.2/jobs/get"), "jobs");
        assert_eq!(family("/api/2.1/jobs/list"), "jobs");
        assert_eq!(
            family("/api/2.1/unity-catalog/catalogs/x"),
            "unity-catalog/catalogs"
        );
        assert_eq!(
            family("/api/2.1/unity-catalog/catalogs"),
            "unity-catalog/catalogs"
        );
        assert_eq!(family("/api/2.0/pipelines/abc"), "pipelines");
        assert_eq!(family("/api/2.0/sql/warehouses/1/edit"), "sql/warehouses");
        assert_eq!(family("/api/2.0/preview/scim/v2/Me"), "scim/Me");
        assert_eq!(family("/api/2.0/permissions/jobs/1"), "permissions");
    }

    fn job() -> Value {
        json!({"job_id": 1, "creator_user_name": "Ann@Example.com", "settings": {
        "name": "Nightly", "description": "nightly load",
        "tasks": [
            {"task_key": "b", "depends_on": [{"task_key": "z"}, {"task_key": "a"}],
             "notebook_task": {"notebook_path": "/x"},
             "new_cluster": {"data_security_mode": "DATA_SECURITY_MODE_DEDICATED",
                             "apply_policy_default_values": true}},
            {"task_key": "a", "notebook_task": {"notebook_path": "/y", "source": "GIT"}}
        ]}})
    }

    #[test]
    fn seed_zero_applies_every_rewriting_and_leaves_identity_alone() {
        let mut v = job();
        answer(0, "/api/2.2/jobs/get", &mut v);
        let s = &v["settings"];
        let mut again = v.clone();
        answer(0, "/api/2.2/jobs/get", &mut again);
        assert_eq!(again, v, "an answer sent back answers the same");
        assert_eq!(s["name"], "Nightly", "names are identity");
        assert_ne!(s["description"], "nightly load", "sent in lower case");
        assert!(
            ["NIGHTLY LOAD", "Nightly load"].contains(&s["description"].as_str().unwrap_or("")),
            "{}",
            s["description"]
        );
        assert_eq!(v["creator_user_name"], "ann@example.com");
        assert_eq!(s["tasks"][0]["task_key"], "a", "tasks sorted by key");
        assert_eq!(
            s["tasks"][0]["notebook_task"]["source"], "GIT",
            "a set value stays"
        );
        let b = &s["tasks"][1];
        assert_eq!(b["notebook_task"]["source"], "WORKSPACE");
        assert_eq!(b["new_cluster"]["data_security_mode"], "SINGLE_USER");
        assert!(
            b["new_cluster"]
                .get("apply_policy_default_values")
                .is_none()
        );
        let mut deps: Vec<&str> = b["depends_on"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["task_key"].as_str())
            .collect();
        deps.sort_unstable();
        assert_eq!(deps, ["a", "z"], "reordered, nothing lost");
    }

    #[test]
    fn a_list_answer_shows_what_the_get_answer_shows() {
        let mut got = job();
        answer(5, "/api/2.2/jobs/get", &mut got);
        let mut listed = json!({"jobs": [job()], "has_more": false});
        answer(5, "/api/2.1/jobs/list", &mut listed);
        assert_eq!(listed["jobs"][0], got);
    }

    #[test]
    fn the_same_set_answers_in_the_same_order_whatever_order_it_was_sent_in() {
        let p = |privileges: Value| {
            let mut v = json!({"privilege_assignments": [
                {"principal": "users", "privileges": privileges}]});
            answer(0, "/api/2.1/unity-catalog/permissions/catalog/c", &mut v);
            v
        };
        assert_eq!(
            p(json!(["SELECT", "USE_CATALOG", "BROWSE"])),
            p(json!(["BROWSE", "SELECT", "USE_CATALOG"]))
        );
    }

    #[test]
    fn seeds_give_different_mixes_and_each_is_repeatable() {
        let run = |seed| {
            let mut v = job();
            answer(seed, "/api/2.2/jobs/get", &mut v);
            v
        };
        let mixes: std::collections::BTreeSet<String> =
            (1..=8).map(|s| run(s).to_string()).collect();
        assert!(mixes.len() > 1, "every seed gave the same answer");
        assert_eq!(run(3), run(3));
    }

    #[test]
    fn defaults_fill_only_what_is_missing_and_only_where_the_service_does() {
        let mut classic = json!({"spec": {"name": "p"}});
        answer(0, "/api/2.0/pipelines/x", &mut classic);
        assert_eq!(classic["spec"]["photon"], false);
        assert_eq!(
            classic["spec"]["configuration"]["spark.sql.ansi.enabled"],
            "true"
        );
        let mut serverless =
            json!({"spec": {"name": "p", "serverless": true, "configuration": {"a": "b"}}});
        answer(0, "/api/2.0/pipelines/x", &mut serverless);
        assert!(serverless["spec"].get("photon").is_none());
        assert_eq!(serverless["spec"]["configuration"], json!({"a": "b"}));
    }
}
