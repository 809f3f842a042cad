//! What a template runs against: the Databricks workspace (`brickform local serve`, with the
//! volume the state lives in), the fake GitHub and GitLab, the runner's tools and the
//! repository's commits.

use crate::common::Serve;
use crate::forge::Fake;
use crate::repository::Repo;
use crate::shell::Tools;
use serde_json::{Value, json};

pub struct World {
    /// The workspace's data directory, removed with the world.
    _data: tempfile::TempDir,
    pub serve: Serve,
    pub fake: Fake,
    pub tools: Tools,
    pub repo: Repo,
}

impl World {
    pub fn new() -> World {
        let data = tempfile::tempdir().unwrap();
        let serve = Serve::start(data.path(), &[]);
        for (kind, body) in [
            ("catalogs", json!({"name": "ops"})),
            (
                "schemas",
                json!({"catalog_name": "ops", "name": "brickform"}),
            ),
            (
                "volumes",
                json!({"catalog_name": "ops", "schema_name": "brickform", "name": "state", "volume_type": "MANAGED"}),
            ),
        ] {
            serve.ok(
                "POST",
                &format!("/api/2.1/unity-catalog/{kind}"),
                Some(body),
            );
        }
        World {
            _data: data,
            serve,
            fake: Fake::start(),
            tools: Tools::new(),
            repo: Repo::default(),
        }
    }

    /// What the configuration manages, as the workspace holds it: changes nothing when a
    /// plan is refused.
    pub fn managed(&self) -> Value {
        let d = self.serve.dump();
        json!({
            "catalog": d["catalogs"]["sales"]["comment"],
            "schemas": d["schemas"].as_object().map(|m| m.keys().filter(|k| k.starts_with("sales.") && !k.ends_with(".information_schema")).cloned().collect::<Vec<_>>()),
            "connection": d["connections"]["sales_pg"]["options"],
        })
    }
}
