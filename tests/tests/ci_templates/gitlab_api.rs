//! GitLab's API, as far as the template calls it: merge request notes, the merge requests of
//! a commit, a pipeline's jobs and a job's artifacts.

use crate::forge::{Hub, Note, Request, form};
use crate::{GITLAB_TOKEN, PROJECT_ID};
use serde_json::{Value, json};

/// The answer to a request to the API: its status and body.
pub fn answer(req: &Request, hub: &mut Hub) -> (u16, Vec<u8>) {
    let prefix = format!("/api/v4/projects/{PROJECT_ID}/");
    let Some(rest) = req.path.strip_prefix(&prefix) else {
        return (404, b"{\"message\":\"404 Not Found\"}".to_vec());
    };
    if req.headers.get("private-token").map(String::as_str) != Some(GITLAB_TOKEN) {
        return (401, b"{\"message\":\"401 Unauthorized\"}".to_vec());
    }
    endpoint(hub, req, &rest.split('/').collect::<Vec<_>>())
}

fn reply(status: u16, v: Value) -> (u16, Vec<u8>) {
    (status, v.to_string().into_bytes())
}

fn not_found() -> (u16, Vec<u8>) {
    reply(404, json!({"message": "404 Not found"}))
}

fn number(s: &str) -> u64 {
    s.parse().unwrap()
}

/// The calls below /projects/:id/, split at `/`.
fn endpoint(hub: &mut Hub, req: &Request, seg: &[&str]) -> (u16, Vec<u8>) {
    let m = req.method.as_str();
    match seg {
        ["merge_requests", iid, "notes"] if m == "GET" => {
            let iid = number(iid);
            let mut notes: Vec<&Note> = hub.notes.iter().filter(|n| n.mr == iid).collect();
            // GitLab lists the newest first unless asked otherwise.
            if req.query("sort") != Some("asc") {
                notes.reverse();
            }
            let per_page: usize = req.query("per_page").map_or(20, |p| p.parse().unwrap());
            let page: usize = req.query("page").map_or(1, |p| p.parse().unwrap());
            let items: Vec<Value> = notes
                .iter()
                .skip((page - 1) * per_page)
                .take(per_page)
                .map(|n| json!({"id": n.id, "body": n.body, "system": false}))
                .collect();
            reply(200, Value::Array(items))
        }
        ["merge_requests", iid, "notes"] if m == "POST" => {
            let body = note_body(req);
            let id = hub.id();
            hub.notes.push(Note {
                id,
                mr: number(iid),
                body,
            });
            reply(201, json!({"id": id}))
        }
        ["merge_requests", iid, "notes", id] if m == "PUT" => {
            let (iid, id) = (number(iid), number(id));
            let body = note_body(req);
            match hub.notes.iter_mut().find(|n| n.id == id && n.mr == iid) {
                Some(n) => {
                    n.body = body;
                    reply(200, json!({"id": id}))
                }
                None => not_found(),
            }
        }
        ["repository", "commits", sha, "merge_requests"] if m == "GET" => {
            let mrs: Vec<Value> = hub
                .mrs
                .iter()
                .filter(|mr| mr.merge_commit_sha.as_deref() == Some(*sha))
                .map(|mr| json!({"iid": mr.iid, "state": mr.state}))
                .collect();
            reply(200, Value::Array(mrs))
        }
        ["merge_requests", iid] if m == "GET" => {
            let iid = number(iid);
            match hub.mrs.iter().find(|mr| mr.iid == iid) {
                Some(mr) => reply(
                    200,
                    json!({
                        "iid": iid,
                        "state": mr.state,
                        "head_pipeline": mr.head_pipeline.map(|p| json!({"id": p})),
                    }),
                ),
                None => not_found(),
            }
        }
        ["pipelines", pipeline, "jobs"] if m == "GET" => {
            let pipeline = number(pipeline);
            let scope = req.query("scope[]");
            let jobs: Vec<Value> = hub
                .jobs
                .iter()
                .filter(|j| j.pipeline == pipeline && scope.is_none_or(|s| s == j.status))
                .map(|j| json!({"id": j.id, "name": j.name, "status": j.status}))
                .collect();
            reply(200, Value::Array(jobs))
        }
        ["jobs", id, "artifacts", path @ ..] if m == "GET" => {
            let id = number(id);
            let path = path.join("/");
            match hub
                .jobs
                .iter()
                .find(|j| j.id == id)
                .and_then(|j| j.artifacts.get(&path))
            {
                Some(bytes) => (200, bytes.clone()),
                None => not_found(),
            }
        }
        _ => not_found(),
    }
}

/// The `body` of a note, sent form-encoded.
fn note_body(req: &Request) -> String {
    form(std::str::from_utf8(&req.body).unwrap())
        .into_iter()
        .find(|(k, _)| k == "body")
        .map(|(_, v)| v)
        .expect("a note's body")
}
