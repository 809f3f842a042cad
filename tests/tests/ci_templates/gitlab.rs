//! A GitLab runner (shell executor with bash), as far as the pipeline template goes:
//! merge request and push pipelines, stages, `rules:`, a job's `before_script` and `script`
//! in one bash, its `artifacts:` kept.

use crate::expressions::{gitlab_if, text};
use crate::forge::{GlJob, Hub, Mr, Note};
use crate::outcome::{Jobs, Outcome};
use crate::project::yaml;
use crate::shell::{bash, vars};
use crate::story::Ci;
use crate::world::World;
use crate::{CLIENT_ID, CLIENT_SECRET, DB_PASSWORD, GITLAB_TOKEN, PROJECT_ID, REPO};
use serde_json::Value;
use std::collections::BTreeMap;

/// A pipeline: of a merge request, or of a push to the default branch.
struct Pipeline {
    sha: String,
    mr: Option<u64>,
}

/// A GitLab runner (shell executor with bash) and GitLab CI, running the pipelines against
/// `world`.
struct GitLab<'a> {
    world: &'a World,
}

impl GitLab<'_> {
    fn run(&self, ci: &Value, p: &Pipeline) -> Jobs {
        let pipeline = {
            let mut hub = self.world.fake.hub();
            let id = hub.id();
            if let Some(iid) = p.mr {
                let mr = hub.mrs.iter_mut().find(|m| m.iid == iid).unwrap();
                mr.head_pipeline = Some(id);
            }
            id
        };
        let mut vars = vars([
            ("CI", "true".to_string()),
            ("GITLAB_CI", "true".into()),
            ("CI_SERVER_URL", "https://gitlab.example.com".into()),
            ("CI_API_V4_URL", format!("{}/api/v4", self.world.fake.url)),
            ("CI_PROJECT_ID", PROJECT_ID.to_string()),
            ("CI_PROJECT_PATH", REPO.into()),
            ("CI_PIPELINE_ID", pipeline.to_string()),
            (
                "CI_PIPELINE_URL",
                format!("https://gitlab.example.com/{REPO}/-/pipelines/{pipeline}"),
            ),
            ("CI_COMMIT_SHA", p.sha.clone()),
            ("CI_COMMIT_SHORT_SHA", p.sha[..8].to_string()),
            ("CI_DEFAULT_BRANCH", "main".into()),
            // Masked CI/CD variables of the project.
            ("DATABRICKS_HOST", self.world.serve.url.clone()),
            ("DATABRICKS_CLIENT_ID", CLIENT_ID.into()),
            ("DATABRICKS_CLIENT_SECRET", CLIENT_SECRET.into()),
            ("BRICKFORM_VAR_db_password", DB_PASSWORD.into()),
            ("GITLAB_TOKEN", GITLAB_TOKEN.into()),
            (
                "FAKE_INSTALL_LOG",
                self.world.tools.log.display().to_string(),
            ),
        ]);
        match p.mr {
            Some(iid) => {
                vars.insert("CI_PIPELINE_SOURCE".into(), "merge_request_event".into());
                vars.insert("CI_MERGE_REQUEST_IID".into(), iid.to_string());
                vars.insert("CI_COMMIT_REF_NAME".into(), format!("feature-{iid}"));
            }
            None => {
                vars.insert("CI_PIPELINE_SOURCE".into(), "push".into());
                vars.insert("CI_COMMIT_BRANCH".into(), "main".into());
                vars.insert("CI_COMMIT_REF_NAME".into(), "main".into());
            }
        }
        for (k, v) in ci["variables"].as_object().unwrap() {
            let v = text(v);
            assert!(!v.contains('$'), "the test does not expand {k}: {v}");
            vars.insert(k.clone(), v);
        }
        let mut out = BTreeMap::new();
        let mut failed = false;
        for stage in ci["stages"].as_array().unwrap() {
            for (name, job) in ci.as_object().unwrap() {
                if job.get("stage") != Some(stage) {
                    continue;
                }
                let runs = !failed
                    && job["rules"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|rule| applies(rule, &vars));
                if !runs {
                    out.insert(name.clone(), Outcome::default());
                    continue;
                }
                let outcome = self.job(ci, name, job, &vars, pipeline, p);
                failed |= !outcome.ok;
                out.insert(name.clone(), outcome);
            }
        }
        out
    }

    fn job(
        &self,
        ci: &Value,
        name: &str,
        job: &Value,
        vars: &BTreeMap<String, String>,
        pipeline: u64,
        p: &Pipeline,
    ) -> Outcome {
        let id = {
            let mut hub = self.world.fake.hub();
            let id = hub.id();
            hub.jobs.push(GlJob {
                id,
                pipeline,
                name: name.into(),
                status: "running".into(),
                artifacts: BTreeMap::new(),
            });
            id
        };
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("builds/acme/lakehouse");
        let home = root.path().join("home");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        self.world.repo.checkout(&p.sha, &project);
        let mut env = vars.clone();
        env.insert("CI_PROJECT_DIR".into(), project.display().to_string());
        env.insert("CI_JOB_ID".into(), id.to_string());
        env.insert("CI_JOB_NAME".into(), name.into());
        env.insert("HOME".into(), home.display().to_string());
        env.insert("PATH".into(), self.world.tools.path(&[]));
        // The runner's bash script: -eo pipefail, then before_script and script, one entry
        // after the other in the same shell.
        let entries = job
            .get("before_script")
            .unwrap_or(&ci["default"]["before_script"])
            .as_array()
            .into_iter()
            .flatten()
            .chain(job["script"].as_array().unwrap());
        let mut script = String::from("set -eo pipefail\nset +o noclobber\n");
        for e in entries {
            script.push_str(e.as_str().unwrap());
            script.push('\n');
        }
        let (ok, log) = bash(
            &[],
            &script,
            &root.path().join("script.sh"),
            &project,
            &env,
            &root.path().join("job.log"),
        );
        // Artifacts are kept from the job's directory; a path that matches nothing is only
        // a warning in the job log.
        let mut hub = self.world.fake.hub();
        let gl_job = hub.jobs.iter_mut().find(|j| j.id == id).unwrap();
        gl_job.status = if ok { "success" } else { "failed" }.into();
        for path in job["artifacts"]["paths"].as_array().into_iter().flatten() {
            let path = path.as_str().unwrap();
            if let Ok(bytes) = std::fs::read(project.join(path)) {
                gl_job.artifacts.insert(path.to_string(), bytes);
            }
        }
        Outcome {
            ran: true,
            ok,
            failed: (!ok).then(|| name.to_string()),
            log,
            summary: String::new(),
        }
    }
}

/// Whether a `rules:` entry lets a job run: its `if:`, and its `changes:` (`dir/**/*`
/// globs) matching the one file the commits change, infra/main.bf.hcl.
fn applies(rule: &Value, vars: &BTreeMap<String, String>) -> bool {
    let changes_match = rule["changes"].as_array().is_none_or(|globs| {
        globs.iter().any(|g| {
            let g = g.as_str().unwrap();
            let prefix = g.strip_suffix("**/*").expect("a dir/**/* glob");
            "infra/main.bf.hcl".starts_with(prefix)
        })
    });
    gitlab_if(rule["if"].as_str().unwrap(), vars) && changes_match
}

/// The pipeline template, which the story runs on merge requests and pushes to main.
pub struct Pipelines(Value);

impl Pipelines {
    pub fn read(file: &str) -> Pipelines {
        Pipelines(yaml(file))
    }

    fn run(&self, world: &World, sha: &str, mr: Option<u64>) -> Jobs {
        let pipeline = Pipeline {
            sha: sha.to_string(),
            mr,
        };
        GitLab { world }.run(&self.0, &pipeline)
    }
}

impl Ci for Pipelines {
    const REQUEST: &str = "merge request";
    const COMMENT: &str = "note";
    const MERGED: &str = "on the default branch";
    const SHORT_SHA: usize = 8;
    const REQUESTS: [u64; 2] = [5, 6];
    const PREREQUISITES: &[&str] = &[
        "apt-get update -qq",
        "apt-get install -y -qq --no-install-recommends curl jq",
    ];
    const NO_PLAN: &str = "No merged merge request for";

    fn open_requests(hub: &mut Hub) {
        for iid in Self::REQUESTS {
            hub.mrs.push(Mr {
                iid,
                state: "opened".into(),
                merge_commit_sha: None,
                head_pipeline: None,
            });
        }
    }

    /// Notes have no author here: GitLab's template finds its note by the marker alone.
    fn post(hub: &mut Hub, request: u64, id: u64, body: String, _bot: bool) {
        hub.notes.push(Note {
            id,
            mr: request,
            body,
        });
    }

    fn comments(hub: &Hub) -> Vec<(u64, u64, String)> {
        let n = hub.notes.iter();
        n.map(|n| (n.mr, n.id, n.body.clone())).collect()
    }

    /// The merge request's pipeline.
    fn open(&self, world: &World, request: u64, head: &str) -> Jobs {
        self.run(world, head, Some(request))
    }

    /// The merge request's pipeline, again.
    fn push(&self, world: &World, request: u64, head: &str) -> Jobs {
        self.open(world, request, head)
    }

    /// The merge request merged, then the push pipeline on main.
    fn merge(&self, world: &World, request: u64, _head: &str, merge: &str) -> Jobs {
        {
            let mut hub = world.fake.hub();
            let mr = hub.mrs.iter_mut().find(|m| m.iid == request).unwrap();
            mr.state = "merged".into();
            mr.merge_commit_sha = Some(merge.to_string());
        }
        self.run(world, merge, None)
    }

    /// A push to main with no merge request.
    fn merge_unplanned(&self, world: &World, sha: &str) -> Jobs {
        self.run(world, sha, None)
    }
}
