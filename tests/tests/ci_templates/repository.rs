//! The templates' repository: commits holding the configuration in infra/.

use std::collections::BTreeMap;
use std::path::Path;

/// The volume directory the configuration keeps its state in.
const STATE_PATH: &str = "/Volumes/ops/brickform/state/lakehouse";

/// The configuration of the templates' repository: its state in a volume, the environment
/// `prod`, a sensitive variable (from the CI's secrets), and the host and credentials from
/// the DATABRICKS_* variables the templates set.
fn infra(comment: &str) -> String {
    format!(
        r#"brickform {{
  backend "volume" {{
    path = "{STATE_PATH}"
  }}
}}

environment "prod" {{}}

variable "db_password" {{
  type      = string
  sensitive = true
}}

provider "databricks" {{}}

resource "databricks_catalog" "sales" {{
  name    = "sales"
  comment = "{comment}"
}}

resource "databricks_schema" "raw" {{
  catalog_name = databricks_catalog.sales.name
  name         = "raw"
}}

resource "databricks_connection" "pg" {{
  name            = "sales_pg"
  connection_type = "POSTGRESQL"
  options = {{
    host     = "db.example.com"
    port     = "5432"
    user     = "app"
    password = var.db_password
  }}
}}
"#
    )
}

#[derive(Default)]
pub struct Repo {
    commits: BTreeMap<String, BTreeMap<String, String>>,
}

impl Repo {
    /// A commit whose infra/main.bf.hcl sets the catalog's comment; returns its SHA.
    pub fn commit(&mut self, comment: &str) -> String {
        // Distinct in their first characters, as the short SHAs the comments show.
        let n = self.commits.len() as u64 + 1;
        let sha = format!("{:016x}{n:024x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let files = BTreeMap::from([
            ("README.md".to_string(), "# lakehouse\n".to_string()),
            ("infra/main.bf.hcl".to_string(), infra(comment)),
        ]);
        self.commits.insert(sha.clone(), files);
        sha
    }

    /// Writes the commit's files into `into`.
    pub fn checkout(&self, sha: &str, into: &Path) {
        let files = self
            .commits
            .get(sha)
            .unwrap_or_else(|| panic!("no commit {sha}"));
        for (path, text) in files {
            let p = into.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }
}
