//! A GitHub-hosted runner, as far as the workflow templates go: `pull_request` events, jobs
//! and their `if:`, `run:` steps in bash with the runner's files (GITHUB_OUTPUT, GITHUB_ENV,
//! GITHUB_PATH, GITHUB_STEP_SUMMARY), the actions they use (checkout, setup-python,
//! upload-artifact, and brickform's own composite action, action.yml).

use crate::expressions::{condition, interpolate, text};
use crate::forge::{Comment, Hub, Run};
use crate::outcome::{Jobs, Outcome};
use crate::project::{root, yaml};
use crate::shell::{bash, vars};
use crate::story::Ci;
use crate::world::World;
use crate::{CLIENT_ID, CLIENT_SECRET, DB_PASSWORD, GH_TOKEN, REPO};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A `pull_request` event.
struct Pr {
    number: u64,
    action: &'static str,
    head: String,
    merge_commit: Option<String>,
}

/// A GitHub-hosted runner and GitHub Actions, running the workflows against `world`.
struct GitHub<'a> {
    world: &'a World,
}

/// A job as it runs: its directories, its `github` context, the environment and PATH the
/// steps have added to, what they logged.
struct Job {
    /// The runner's directories, removed with the job.
    _root: tempfile::TempDir,
    workspace: PathBuf,
    temp: PathBuf,
    github: Value,
    base: BTreeMap<String, String>,
    path: Vec<PathBuf>,
    run_id: u64,
    steps_run: usize,
    log: String,
    summary: String,
}

/// The contexts of one list of steps: a job's, or a composite action's.
struct Scope {
    steps: Map<String, Value>,
    inputs: Value,
    action_path: Option<PathBuf>,
    env: BTreeMap<String, String>,
    composite: bool,
}

impl GitHub<'_> {
    /// Runs the workflow `wf` for `pr`: every job whose `if:` holds, as one workflow run.
    fn run(&self, wf: &Value, pr: &Pr) -> Jobs {
        let run_id = {
            let mut hub = self.world.fake.hub();
            let id = hub.id();
            hub.runs.push(Run {
                id,
                head_sha: pr.head.clone(),
                artifacts: BTreeMap::new(),
            });
            id
        };
        let merged = pr.merge_commit.is_some();
        let github = json!({
            "event_name": "pull_request",
            "event": {
                "action": pr.action,
                "number": pr.number,
                "pull_request": {
                    "number": pr.number,
                    "merged": merged,
                    "merge_commit_sha": pr.merge_commit,
                    "head": {"sha": pr.head},
                },
            },
            "repository": REPO,
            "repository_owner": "acme",
            "server_url": "https://github.com",
            "api_url": "https://api.github.com",
            "run_id": run_id,
            "token": GH_TOKEN,
            "sha": pr.merge_commit.clone().unwrap_or_else(|| pr.head.clone()),
            "ref": if merged { "refs/heads/main".to_string() } else { format!("refs/pull/{}/merge", pr.number) },
        });
        let mut out = BTreeMap::new();
        for (name, job) in wf["jobs"].as_object().unwrap() {
            let ctx = json!({"github": github, "vars": self.vars(), "inputs": {}});
            if let Some(c) = job.get("if")
                && !condition(c, &ctx)
            {
                out.insert(name.clone(), Outcome::default());
                continue;
            }
            out.insert(name.clone(), self.job(wf, name, job, &github, run_id));
        }
        out
    }

    fn vars(&self) -> Value {
        json!({"DATABRICKS_HOST": self.world.serve.url})
    }

    fn secrets() -> Value {
        json!({
            "DATABRICKS_CLIENT_ID": CLIENT_ID,
            "DATABRICKS_CLIENT_SECRET": CLIENT_SECRET,
            "DB_PASSWORD": DB_PASSWORD,
            "GITHUB_TOKEN": GH_TOKEN,
        })
    }

    fn job(&self, wf: &Value, name: &str, job: &Value, github: &Value, run_id: u64) -> Outcome {
        let root = tempfile::tempdir().unwrap();
        let workspace = root.path().join("work/lakehouse/lakehouse");
        let temp = root.path().join("work/_temp");
        let home = root.path().join("home");
        for d in [&workspace, &temp, &home] {
            std::fs::create_dir_all(d).unwrap();
        }
        let event_path = temp.join("event.json");
        std::fs::write(&event_path, github["event"].to_string()).unwrap();
        let base = vars([
            ("CI", "true".to_string()),
            ("GITHUB_ACTIONS", "true".into()),
            ("GITHUB_WORKSPACE", workspace.display().to_string()),
            ("GITHUB_REPOSITORY", REPO.into()),
            ("GITHUB_REPOSITORY_OWNER", "acme".into()),
            ("GITHUB_EVENT_NAME", "pull_request".into()),
            ("GITHUB_EVENT_PATH", event_path.display().to_string()),
            ("GITHUB_RUN_ID", run_id.to_string()),
            ("GITHUB_RUN_ATTEMPT", "1".into()),
            ("GITHUB_JOB", name.into()),
            ("GITHUB_SERVER_URL", text(&github["server_url"])),
            ("GITHUB_API_URL", text(&github["api_url"])),
            ("GITHUB_SHA", text(&github["sha"])),
            ("GITHUB_REF", text(&github["ref"])),
            ("RUNNER_TEMP", temp.display().to_string()),
            ("RUNNER_OS", "Linux".into()),
            ("RUNNER_ARCH", "X64".into()),
            ("HOME", home.display().to_string()),
            ("FAKE_SERVICES", self.world.fake.url.clone()),
            (
                "FAKE_INSTALL_LOG",
                self.world.tools.log.display().to_string(),
            ),
        ]);
        let mut st = Job {
            workspace,
            temp,
            github: github.clone(),
            base,
            path: Vec::new(),
            run_id,
            steps_run: 0,
            log: String::new(),
            summary: String::new(),
            _root: root,
        };
        let mut scope = Scope {
            steps: Map::new(),
            inputs: json!({}),
            action_path: None,
            env: BTreeMap::new(),
            composite: false,
        };
        // The workflow's env, then the job's, each seeing what came before.
        for source in [&wf["env"], &job["env"]] {
            for (k, v) in source.as_object().into_iter().flatten() {
                let value = interpolate(v, &self.ctx(&st, &scope));
                scope.env.insert(k.clone(), value);
            }
        }
        let result = self.steps(&mut st, &job["steps"], &mut scope);
        Outcome {
            ran: true,
            ok: result.is_ok(),
            failed: result.err(),
            log: st.log,
            summary: st.summary,
        }
    }

    fn ctx(&self, st: &Job, scope: &Scope) -> Value {
        let mut github = st.github.clone();
        if let Some(p) = &scope.action_path {
            github["action_path"] = json!(p.display().to_string());
        }
        json!({
            "github": github,
            "vars": self.vars(),
            "secrets": Self::secrets(),
            "runner": {"temp": st.temp.display().to_string(), "os": "Linux", "arch": "X64"},
            "env": scope.env,
            "steps": scope.steps,
            "inputs": scope.inputs,
            "job": {},
            "matrix": {},
        })
    }

    fn steps(&self, st: &mut Job, steps: &Value, scope: &mut Scope) -> Result<(), String> {
        for step in steps.as_array().unwrap() {
            let name = step["name"]
                .as_str()
                .or(step["uses"].as_str())
                .or(step["run"].as_str())
                .unwrap()
                .to_string();
            let ctx = self.ctx(st, scope);
            if let Some(c) = step.get("if")
                && !condition(c, &ctx)
            {
                st.log.push_str(&format!("== {name} (skipped)\n"));
                continue;
            }
            let mut env = scope.env.clone();
            for (k, v) in step["env"].as_object().into_iter().flatten() {
                env.insert(k.clone(), interpolate(v, &ctx));
            }
            let outputs = if let Some(run) = step["run"].as_str() {
                assert!(
                    !run.contains("${{"),
                    "{name}: a run script takes values through env:, never ${{{{ }}}} (which a value could inject script into)"
                );
                let shell = step["shell"].as_str();
                assert!(
                    !scope.composite || shell.is_some(),
                    "{name}: a composite action's run step needs shell:"
                );
                let dir = match step["working-directory"].as_str() {
                    Some(d) => st.workspace.join(interpolate(&json!(d), &ctx)),
                    None => st.workspace.clone(),
                };
                self.bash_step(st, &name, run, shell, &env, &dir)?
            } else {
                let uses = step["uses"].as_str().unwrap();
                self.uses(st, &name, uses, step, &env, &ctx)?
            };
            if let Some(id) = step["id"].as_str() {
                scope.steps.insert(
                    id.to_string(),
                    json!({"outputs": outputs, "outcome": "success", "conclusion": "success"}),
                );
            }
        }
        Ok(())
    }

    fn bash_step(
        &self,
        st: &mut Job,
        name: &str,
        script: &str,
        shell: Option<&str>,
        env: &BTreeMap<String, String>,
        dir: &Path,
    ) -> Result<Map<String, Value>, String> {
        st.steps_run += 1;
        let n = st.steps_run;
        let files = st.temp.join("_runner_file_commands");
        std::fs::create_dir_all(&files).unwrap();
        let file = |what: &str| files.join(format!("{what}_{n}"));
        let (script_file, output, env_file, path_file, summary, log_file) = (
            st.temp.join(format!("step_{n}.sh")),
            file("set_output"),
            file("set_env"),
            file("add_path"),
            file("step_summary"),
            file("log"),
        );
        for f in [&output, &env_file, &path_file, &summary] {
            std::fs::write(f, "").unwrap();
        }
        // As the runner starts `run:` scripts: `bash -e {0}` by default, and
        // `bash --noprofile --norc -eo pipefail {0}` for `shell: bash`.
        let args: &[&str] = match shell {
            None => &["-e"],
            Some("bash") => &["--noprofile", "--norc", "-eo", "pipefail"],
            Some(other) => panic!("{name}: the test runs bash, not {other}"),
        };
        let mut all = st.base.clone();
        all.extend(env.clone());
        all.insert("PATH".into(), self.world.tools.path(&st.path));
        all.insert("GITHUB_OUTPUT".into(), output.display().to_string());
        all.insert("GITHUB_ENV".into(), env_file.display().to_string());
        all.insert("GITHUB_PATH".into(), path_file.display().to_string());
        all.insert("GITHUB_STEP_SUMMARY".into(), summary.display().to_string());
        let (ok, log) = bash(args, script, &script_file, dir, &all, &log_file);
        st.log.push_str(&format!("== {name}\n{log}"));
        st.summary
            .push_str(&std::fs::read_to_string(&summary).unwrap());
        for (k, v) in key_values(&std::fs::read_to_string(&env_file).unwrap()) {
            st.base.insert(k, text(&v));
        }
        for p in std::fs::read_to_string(&path_file).unwrap().lines() {
            st.path.insert(0, PathBuf::from(p));
        }
        if !ok {
            return Err(name.to_string());
        }
        Ok(key_values(&std::fs::read_to_string(&output).unwrap()))
    }

    fn uses(
        &self,
        st: &mut Job,
        name: &str,
        uses: &str,
        step: &Value,
        env: &BTreeMap<String, String>,
        ctx: &Value,
    ) -> Result<Map<String, Value>, String> {
        let with = |k: &str| step["with"].get(k).map(|v| interpolate(v, ctx));
        let (action, _) = uses.split_once('@').expect("a pinned action");
        st.log.push_str(&format!("== {name}\n"));
        match action {
            "actions/checkout" => {
                let sha = with("ref").unwrap_or_else(|| text(&st.github["sha"]));
                self.world.repo.checkout(&sha, &st.workspace);
            }
            "actions/setup-python" => {
                assert!(with("python-version").is_some_and(|v| !v.is_empty()));
            }
            "actions/upload-artifact" => {
                let (name, path) = (with("name").unwrap(), with("path").unwrap());
                let path = st.workspace.join(path);
                if !path.is_file() {
                    assert_eq!(with("if-no-files-found").as_deref(), Some("error"));
                    st.log
                        .push_str(&format!("No files were found at {}\n", path.display()));
                    return Err(name);
                }
                let file = path.file_name().unwrap().to_string_lossy().into_owned();
                let bytes = std::fs::read(&path).unwrap();
                let mut hub = self.world.fake.hub();
                let run = hub.runs.iter_mut().find(|r| r.id == st.run_id).unwrap();
                run.artifacts.insert(name, vec![(file, bytes)]);
            }
            // brickform's own action, as ci-templates/github/brickform-action.yml names it.
            "OWNER/REPO" => return self.composite(st, step, env, ctx),
            other => panic!("{name}: the test does not play the action {other}"),
        }
        Ok(Map::new())
    }

    /// action.yml: its inputs (defaults evaluated where it is used, then `with:`), its steps
    /// in a scope of their own, then its outputs.
    fn composite(
        &self,
        st: &mut Job,
        step: &Value,
        env: &BTreeMap<String, String>,
        ctx: &Value,
    ) -> Result<Map<String, Value>, String> {
        let action = yaml("action.yml");
        assert_eq!(action["runs"]["using"], "composite");
        let declared = action["inputs"].as_object().unwrap();
        let with = step["with"].as_object().cloned().unwrap_or_default();
        for k in with.keys() {
            assert!(declared.contains_key(k), "action.yml has no input {k}");
        }
        let inputs: Map<String, Value> = declared
            .iter()
            .map(|(k, spec)| {
                let v = with.get(k).unwrap_or(&spec["default"]);
                (k.clone(), json!(interpolate(v, ctx)))
            })
            .collect();
        let mut env = env.clone();
        env.insert("GITHUB_ACTION_PATH".into(), root().display().to_string());
        let mut scope = Scope {
            steps: Map::new(),
            inputs: Value::Object(inputs),
            action_path: Some(root()),
            env,
            composite: true,
        };
        self.steps(st, &action["runs"]["steps"], &mut scope)?;
        let ctx = self.ctx(st, &scope);
        Ok(action["outputs"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, spec)| (k.clone(), json!(interpolate(&spec["value"], &ctx))))
            .collect())
    }
}

/// A GITHUB_OUTPUT (GITHUB_ENV) file: `key=value` lines and `key<<DELIMITER` blocks.
fn key_values(text: &str) -> Map<String, Value> {
    let mut out = Map::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((k, delim)) = line.split_once("<<") {
            let mut v = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                v.push(l);
            }
            out.insert(k.to_string(), json!(v.join("\n")));
        } else if let Some((k, v)) = line.split_once('=') {
            out.insert(k.to_string(), json!(v));
        }
    }
    out
}

/// A workflow template, which the story runs on pull request events.
pub struct Workflow(Value);

impl Workflow {
    pub fn read(file: &str) -> Workflow {
        Workflow(yaml(file))
    }

    /// The workflow run of an event of pull request `number`.
    fn on(
        &self,
        world: &World,
        number: u64,
        action: &'static str,
        head: &str,
        merge_commit: Option<&str>,
    ) -> Jobs {
        let pr = Pr {
            number,
            action,
            head: head.to_string(),
            merge_commit: merge_commit.map(str::to_string),
        };
        GitHub { world }.run(&self.0, &pr)
    }
}

impl Ci for Workflow {
    const REQUEST: &str = "pull request";
    const COMMENT: &str = "comment";
    const MERGED: &str = "once merged";
    const SHORT_SHA: usize = 7;
    const REQUESTS: [u64; 2] = [7, 8];
    const PREREQUISITES: &[&str] = &[];
    const NO_PLAN: &str = "No saved plan of";

    fn post(hub: &mut Hub, request: u64, id: u64, body: String, bot: bool) {
        hub.comments.push(Comment {
            id,
            issue: request,
            body,
            bot,
        });
    }

    fn comments(hub: &Hub) -> Vec<(u64, u64, String)> {
        let c = hub.comments.iter();
        c.map(|c| (c.issue, c.id, c.body.clone())).collect()
    }

    fn open(&self, world: &World, request: u64, head: &str) -> Jobs {
        self.on(world, request, "opened", head, None)
    }

    fn push(&self, world: &World, request: u64, head: &str) -> Jobs {
        self.on(world, request, "synchronize", head, None)
    }

    fn merge(&self, world: &World, request: u64, head: &str, merge: &str) -> Jobs {
        self.on(world, request, "closed", head, Some(merge))
    }

    /// A pull request merged without a plan.
    fn merge_unplanned(&self, world: &World, sha: &str) -> Jobs {
        self.on(world, 9, "closed", sha, Some(sha))
    }

    fn check_plan_job(plan: &Outcome) {
        assert!(
            plan.summary.contains("### brickform plan for `prod`"),
            "the plan is in the job summary:\n{}",
            plan.summary
        );
    }
}
