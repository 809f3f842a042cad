//! The rules of a job's configuration that its schema cannot say: one task's own, the
//! job-wide ones, a `sql_task`'s, and the tasks as a graph (every dependency names a task
//! of the job, and none forms a cycle).

use super::*;

/// One task's own rules: exactly one task type, and the job clusters and environments it
/// names exist. `at` is the task's path; nested tasks (`for_each_task.task`) too.
pub(super) fn check_task(
    task: &Object,
    at: &[PathStep],
    clusters: &[&str],
    environments: &[&str],
    out: &mut Vec<Finding>,
) {
    let name = known_str(task, "task_key").unwrap_or("?");
    let types: Vec<&str> = TASK_TYPES
        .iter()
        .map(|t| t.name)
        .filter(|t| task.get(*t).is_some_and(|v| !v.is_null()))
        .collect();
    match types.as_slice() {
        [] => out.push(
            Finding::error(&[], format!("task {} has no task type", quote(name)))
                .at(at.to_vec())
                .hint(format!(
                    "add one block of: {}",
                    task_types::names().join(", ")
                )),
        ),
        [_] => {}
        [first, rest @ ..] => {
            for t in rest {
                let mut p = at.to_vec();
                p.push(key(t));
                out.push(
                    Finding::error(
                        &[],
                        format!("task {} has two task types, {first} and {t}", quote(name)),
                    )
                    .at(p)
                    .hint("a task does one thing: move this block into a task of its own"),
                );
            }
        }
    }
    check_sql_task(task, at, out);
    let set = |k: &str| task.get(k).is_some_and(|v| !v.is_null());
    if set("spark_submit_task") && !set("new_cluster") && !set("job_cluster_key") {
        let mut p = at.to_vec();
        p.push(key("spark_submit_task"));
        out.push(
            Finding::error(
                &[],
                format!(
                    "task {} runs spark-submit, which needs a cluster of its own",
                    quote(name)
                ),
            )
            .at(p)
            .hint("give the task a new_cluster block or a job_cluster_key"),
        );
    }
    for (attr, declared, block) in [
        ("job_cluster_key", clusters, "job_cluster"),
        ("environment_key", environments, "environment"),
    ] {
        let Some(v) = known_str(task, attr) else {
            continue;
        };
        if declared.contains(&v) {
            continue;
        }
        let mut p = at.to_vec();
        p.push(key(attr));
        let hint = did_you_mean_value(v, declared.iter().copied())
            .unwrap_or_else(|| format!("declare a {block} block with {attr} = {}", quote(v)));
        out.push(
            Finding::error(
                &[],
                format!(
                    "task {} uses {attr} {}, which no {block} block of this job declares",
                    quote(name),
                    quote(v)
                ),
            )
            .at(p)
            .hint(hint),
        );
    }
}

/// Job-wide rules of the configuration that the schema cannot say.
pub(super) fn check_job(schema: &Schema, config: &Object, out: &mut Vec<Finding>) {
    check_git_sources(config, out);
    // `triggers` replaces the three legacy ways of starting a job; the service takes one
    // or the other.
    if list(config, "triggers").next().is_some() {
        for k in ["schedule", "trigger", "continuous"] {
            if config.get(k).is_some_and(|v| !v.is_null()) {
                out.push(
                    Finding::error(&[k], format!("{k} beside triggers"))
                        .hint(format!("write it as one of the triggers blocks (triggers {{ {k} {{ … }} }}), or leave triggers out")),
                );
            }
        }
    }
    if config.get("control_run_state").and_then(Value::as_bool) == Some(true)
        && config.get("continuous").is_none_or(Value::is_null)
    {
        out.push(
            Finding::error(
                &["control_run_state"],
                "control_run_state is for continuous jobs",
            )
            .hint("add a continuous block, or leave control_run_state out"),
        );
    }
    check_single_task(schema, config, out);
}

/// A `sql_task` runs exactly one of a query, a file, an alert or a dashboard.
pub(super) fn check_sql_task(task: &Object, at: &[PathStep], out: &mut Vec<Finding>) {
    let Some(sql) = task.get("sql_task").and_then(Value::as_object) else {
        return;
    };
    let forms = ["query", "file", "alert", "dashboard"];
    let set: Vec<&str> = forms
        .iter()
        .copied()
        .filter(|f| sql.get(*f).is_some_and(|v| !v.is_null()))
        .collect();
    let mut p = at.to_vec();
    p.push(key("sql_task"));
    match set.as_slice() {
        [_] => {}
        [] => out.push(
            Finding::error(&[], "sql_task runs nothing")
                .at(p)
                .hint("add one block of: query, file, alert, dashboard"),
        ),
        [first, rest @ ..] => {
            for f in rest {
                let mut q = p.clone();
                q.push(key(f));
                out.push(
                    Finding::error(&[], format!("sql_task has both {first} and {f}"))
                        .at(q)
                        .hint("a sql_task runs one of them: move this one into a task of its own"),
                );
            }
        }
    }
}

/// The job's tasks as a graph: every `depends_on` names a task of the job, and the
/// dependencies have no cycle (the service refuses both). Duplicate task keys are the
/// decoder's (keyed blocks). Unknown values say nothing.
pub(super) fn check_tasks(config: &Object) -> Vec<Finding> {
    let mut out = Vec::new();
    let keys_of = |block: &str, k: &str| -> Vec<&str> {
        list(config, block)
            .filter_map(|(_, o)| known_str(o, k))
            .collect()
    };
    let clusters = keys_of("job_cluster", "job_cluster_key");
    let environments = keys_of("environment", "environment_key");
    let tasks: Vec<(usize, &Object)> = list(config, "task").collect();
    let task_keys: Vec<&str> = tasks
        .iter()
        .filter_map(|(_, t)| known_str(t, "task_key"))
        .collect();
    // Edges task → dependency, with the path of the depends_on entry that made each.
    let mut edges: Vec<Vec<(usize, Vec<PathStep>)>> = vec![Vec::new(); tasks.len()];
    for (n, (i, task)) in tasks.iter().enumerate() {
        let at = vec![key("task"), PathStep::Index(*i)];
        check_task(task, &at, &clusters, &environments, &mut out);
        if let Some(inner) = for_each_inner(task) {
            let mut p = at.clone();
            p.extend([key("for_each_task"), key("task")]);
            check_task(inner, &p, &clusters, &environments, &mut out);
        }
        let name = known_str(task, "task_key").unwrap_or("?");
        for (j, dep) in list(task, "depends_on") {
            let Some(target) = known_str(dep, "task_key") else {
                continue;
            };
            let mut p = at.clone();
            p.extend([key("depends_on"), PathStep::Index(j), key("task_key")]);
            match task_keys.iter().position(|k| *k == target) {
                Some(t) => {
                    let is_condition = tasks[t]
                        .1
                        .get("condition_task")
                        .is_some_and(|c| !c.is_null());
                    if dep.get("outcome").is_some_and(|o| !o.is_null()) && !is_condition {
                        let mut at_outcome = p.clone();
                        at_outcome.pop();
                        at_outcome.push(key("outcome"));
                        out.push(
                            Finding::error(
                                &[],
                                format!(
                                    "task {} sets outcome on its dependency {}, which is not a condition_task: outcome applies only to a condition's result",
                                    quote(name),
                                    quote(target)
                                ),
                            )
                            .at(at_outcome)
                            .hint(use_run_if()),
                        );
                    }
                    edges[n].push((t, p))
                }
                None => {
                    let hint = did_you_mean_value(
                        target,
                        task_keys.iter().copied().filter(|k| *k != name),
                    )
                    .unwrap_or_else(|| format!("the job's tasks are {}", quoted_list(&task_keys)));
                    out.push(
                        Finding::error(
                            &[],
                            format!(
                                "task {} depends on {}, which is not a task of this job",
                                quote(name),
                                quote(target)
                            ),
                        )
                        .at(p)
                        .hint(hint),
                    );
                }
            }
        }
    }
    // Depth-first search; a dependency on a task still on the stack closes a cycle. Each
    // cycle is reported once, at the depends_on entry that closes it.
    let mut state = vec![0u8; tasks.len()]; // 0 new, 1 on the stack, 2 done
    let mut stack: Vec<usize> = Vec::new();
    for start in 0..tasks.len() {
        if state[start] != 0 {
            continue;
        }
        let mut frames: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        stack.push(start);
        while let Some((node, next)) = frames.last_mut() {
            let node = *node;
            let Some((target, path)) = edges[node].get(*next) else {
                state[node] = 2;
                stack.pop();
                frames.pop();
                continue;
            };
            *next += 1;
            match state[*target] {
                0 => {
                    state[*target] = 1;
                    stack.push(*target);
                    frames.push((*target, 0));
                }
                1 => {
                    let from = stack.iter().position(|t| t == target).unwrap_or(0);
                    let mut names: Vec<&str> = stack[from..]
                        .iter()
                        .map(|t| known_str(tasks[*t].1, "task_key").unwrap_or("?"))
                        .collect();
                    names.push(known_str(tasks[*target].1, "task_key").unwrap_or("?"));
                    out.push(
                        Finding::error(
                            &[],
                            format!(
                                "the job's tasks depend on each other in a cycle: {}",
                                names.join(" → ")
                            ),
                        )
                        .at(path.clone())
                        .hint("remove one of these depends_on entries"),
                    );
                }
                _ => {}
            }
        }
    }
    out
}
