//! What the Repos API does to the workspace state, apart from HTTP. The request and answer
//! fields are databricks-sdk-go's (service/workspace/model.go: CreateRepoRequest, RepoInfo,
//! UpdateRepoRequest, ListReposRequest); what the service answers beyond them follows
//! terraform-provider-databricks (repos/resource_repo.go and its tests, and the errors its
//! users quote in its issues).

use super::Repo;
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use crate::store::{Ctx, State};
use axum::http::StatusCode;
use serde_json::{Value, json};

/// The Git providers the service takes, in any case (CreateRepoRequest.Provider: "This
/// field is case-insensitive").
pub const PROVIDERS: &[&str] = &[
    "gitHub",
    "bitbucketCloud",
    "gitLab",
    "azureDevOpsServices",
    "gitHubEnterprise",
    "bitbucketServer",
    "gitLabEnterpriseEdition",
    "awsCodeCommit",
];

/// The branch a new clone is on: the remote's default, which the local workspace cannot
/// know; databricks/cli's fake workspace (libs/testserver/repos.go) answers `main` too.
const DEFAULT_BRANCH: &str = "main";

/// A create, as read from its body.
pub struct CreateRequest {
    pub url: String,
    pub provider: String,
    pub path: Option<String>,
    pub sparse_checkout: Option<Vec<String>>,
}

/// An update (a checkout, or new sparse checkout patterns), as read from its body.
pub struct UpdateRequest {
    pub branch: Option<String>,
    pub tag: Option<String>,
    pub sparse_checkout: Option<Vec<String>>,
}

fn missing(id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Repo could not be found: {id}"),
    )
}

/// The id in a request's path: a number, as the service's ids are.
pub fn parse_id(raw: &str) -> ApiResult<i64> {
    raw.parse::<i64>()
        .map_err(|_| ApiError::invalid(format!("Invalid value for parameter 'repo_id': {raw}")))
}

/// A made-up commit id for what a checkout reports: the same remote and ref give the same
/// id, another ref another one. Forty hexadecimal digits, as a SHA-1's.
fn commit_of(url: &str, reference: &str) -> String {
    let mut out = String::new();
    for seed in 0u64..3 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
        for b in url.bytes().chain([0]).chain(reference.bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
    }
    out.truncate(40);
    out
}

/// The folder name the service gives a Git folder made without a path: the remote's last
/// path segment without `.git` (terraform-provider-databricks repos/resource_repo_test.go,
/// TestResourceRepoCreateNoBranch: `https://github.com/user/test.git` is made at
/// `/Repos/<user>/test`).
fn default_name(url: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    let last = trimmed.rsplit('/').next().unwrap_or(trimmed);
    last.strip_suffix(".git").unwrap_or(last).to_string()
}

/// The provider as the service accepts it: one of [`PROVIDERS`] in any case, kept as sent.
fn check_provider(p: &str) -> ApiResult<()> {
    if PROVIDERS.iter().any(|k| k.eq_ignore_ascii_case(p)) {
        Ok(())
    } else {
        Err(ApiError::invalid(format!(
            "Invalid value for field 'provider': '{p}' is not one of {}",
            PROVIDERS.join(", ")
        )))
    }
}

/// A path under `/Repos` is `/Repos/<folder>/<repo>` (CreateRepoRequest.Path; the Terraform
/// provider checks the same, repos/resource_repo.go validatePath).
fn check_path(path: &str) -> ApiResult<()> {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if segs.first() == Some(&"Repos") && segs.len() != 3 {
        return Err(ApiError::invalid(format!(
            "Invalid repo path {path}: a repo in /Repos must be at /Repos/{{folder}}/{{repo-name}}"
        )));
    }
    if segs.is_empty() {
        return Err(ApiError::invalid("Invalid repo path /"));
    }
    Ok(())
}

/// The answer of a get (and of a create): RepoInfo's fields.
fn info(id: i64, r: &Repo) -> Value {
    let mut v = json!({
        "id": id,
        "path": r.path,
        "url": r.url,
        "provider": r.provider,
        "head_commit_id": r.head_commit_id,
    });
    if let Some(b) = &r.branch {
        v["branch"] = json!(b);
    }
    if let Some(p) = &r.sparse_checkout {
        v["sparse_checkout"] = json!({ "patterns": p });
    }
    v
}

/// Makes a Git folder: its node in the workspace tree, then its Git side. Without a path
/// it goes to the caller's folder in `/Repos`, which the service makes when missing; a
/// path given must have its parent folder already ("Parent directory /Repos/Client-Repo
/// does not exist.", terraform-provider-databricks issue #862, why the provider makes it
/// first). A path that holds anything is refused (the message of issue #2295).
pub fn create(st: &mut State, ctx: &Ctx, r: CreateRequest) -> ApiResult<Value> {
    if !(r.url.starts_with("https://") || r.url.starts_with("http://")) {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'url': '{}' is not an http(s) URL of a Git repository",
            r.url
        )));
    }
    check_provider(&r.provider)?;
    if r.sparse_checkout.as_ref().is_some_and(Vec::is_empty) {
        return Err(ApiError::invalid(
            "Invalid value for field 'sparse_checkout.patterns': at least one pattern is needed",
        ));
    }
    let path = match &r.path {
        Some(p) => {
            let p = crate::workspace::normalize(p)?;
            check_path(&p)?;
            p
        }
        None => {
            let home = format!("/Repos/{}", ctx.user);
            crate::workspace::mkdirs(st, &home, ctx.now)?;
            format!("{home}/{}", default_name(&r.url))
        }
    };
    if st
        .workspace
        .workspace
        .get(&path)
        .is_some_and(|o| o.object_type == "REPO")
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "RESOURCE_ALREADY_EXISTS",
            format!(
                "Repo {path} already exists. If you would like to create two repos from the same remote Git repo, rename the first repo before creating the second repo."
            ),
        ));
    }
    let id = st.next_id();
    crate::workspace::place_repo(st, &path, id, ctx.now)?;
    let repo = Repo {
        path,
        head_commit_id: commit_of(&r.url, DEFAULT_BRANCH),
        url: r.url,
        provider: r.provider,
        branch: Some(DEFAULT_BRANCH.to_string()),
        sparse_checkout: r.sparse_checkout,
    };
    let answer = info(id, &repo);
    st.repos.repos.insert(id, repo);
    Ok(answer)
}

pub fn get(st: &State, raw: &str) -> ApiResult<Value> {
    let id = parse_id(raw)?;
    st.repos
        .repos
        .get(&id)
        .map(|r| info(id, r))
        .ok_or_else(|| missing(raw))
}

/// Checks out a branch or a tag (a tag leaves no branch), or sets new sparse checkout
/// patterns, which only a folder made with sparse checkout takes (UpdateRepoRequest:
/// "The update will fail if sparse checkout is not enabled for the repo"). The path is not
/// changed by an update (the Terraform provider replaces a Git folder whose path changes:
/// "remove force_new after the Update API will support changing the path").
pub fn update(st: &mut State, raw: &str, u: UpdateRequest) -> ApiResult<()> {
    let id = parse_id(raw)?;
    let repo = st.repos.repos.get(&id).ok_or_else(|| missing(raw))?;
    if u.branch.is_some() && u.tag.is_some() {
        return Err(ApiError::invalid(
            "Only one of branch or tag can be specified",
        ));
    }
    if u.sparse_checkout.is_some() && repo.sparse_checkout.is_none() {
        return Err(ApiError::invalid(
            "Sparse checkout is not enabled for this repo: it can only be enabled when the repo is created",
        ));
    }
    let mut repo = repo.clone();
    if let Some(b) = u.branch {
        repo.head_commit_id = commit_of(&repo.url, &b);
        repo.branch = Some(b);
    } else if let Some(t) = u.tag {
        repo.head_commit_id = commit_of(&repo.url, &format!("refs/tags/{t}"));
        repo.branch = None;
    }
    if let Some(p) = u.sparse_checkout {
        repo.sparse_checkout = Some(p);
    }
    st.repos.repos.insert(id, repo);
    Ok(())
}

/// Deletes the Git folder with what is in it: the workspace tree removes its node and
/// everything under it, and tells this domain and the permissions to forget it.
pub fn delete(st: &mut State, raw: &str) -> ApiResult<()> {
    let id = parse_id(raw)?;
    let path = st
        .repos
        .repos
        .get(&id)
        .map(|r| r.path.clone())
        .ok_or_else(|| missing(raw))?;
    crate::workspace::delete(st, &path, true)?;
    // A tree that lost the node some other way still lets the repo go.
    forget(st, id);
    Ok(())
}

/// Forgets a Git folder's Git side: its node left the workspace tree.
pub fn forget(st: &mut State, id: i64) {
    st.repos.repos.remove(&id);
}

/// The Git folders whose paths start with `prefix`; without one (or with an effectively
/// empty one, `/` or `/Workspace`) those in `/Repos` (ListReposRequest.PathPrefix).
pub fn list(st: &State, prefix: Option<&str>, page: &Page) -> ApiResult<Value> {
    let prefix = match prefix.filter(|p| !p.is_empty()) {
        None => "/Repos".to_string(),
        Some(p) => match crate::workspace::normalize(p)? {
            root if root == "/" => "/Repos".to_string(),
            p => p,
        },
    };
    let after = page.after.clone();
    let mut found: Vec<(String, Value)> = st
        .repos
        .repos
        .iter()
        .filter(|(_, r)| r.path.starts_with(&prefix))
        .filter(|(_, r)| after.as_deref().is_none_or(|a| r.path.as_str() > a))
        .map(|(id, r)| (r.path.clone(), info(*id, r)))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let (repos, next) = page.collect(found.into_iter());
    let mut out = json!({ "repos": repos });
    if let Some(t) = next {
        out["next_page_token"] = json!(t);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx<'static> {
        Ctx::for_test(1, 1)
    }

    fn req(path: Option<&str>) -> CreateRequest {
        CreateRequest {
            url: "https://github.com/user/demo.git".into(),
            provider: "github".into(),
            path: path.map(str::to_string),
            sparse_checkout: None,
        }
    }

    #[test]
    fn a_repo_without_a_path_goes_to_the_callers_repos_folder() {
        let mut st = State::new("u@x", 0);
        let c = ctx();
        let got = create(&mut st, &c, req(None)).unwrap();
        let path = format!("/Repos/{}/demo", c.user);
        assert_eq!(got["path"], json!(path));
        assert_eq!(got["branch"], json!("main"));
        assert_eq!(got["head_commit_id"].as_str().unwrap().len(), 40);
        let node = &st.workspace.workspace[&path];
        assert_eq!(node.object_type, "REPO");
        assert_eq!(json!(node.object_id), got["id"]);
        let e = create(&mut st, &c, req(None)).unwrap_err();
        assert_eq!(e.code, "RESOURCE_ALREADY_EXISTS");
        assert!(
            e.message
                .starts_with(&format!("Repo {path} already exists"))
        );
    }

    #[test]
    fn a_path_needs_its_parent_and_three_parts_under_repos() {
        let mut st = State::new("u@x", 0);
        let e = create(&mut st, &ctx(), req(Some("/Repos/team/a/b"))).unwrap_err();
        assert!(
            e.message.contains("/Repos/{folder}/{repo-name}"),
            "{}",
            e.message
        );
        let e = create(&mut st, &ctx(), req(Some("/Repos/team/a"))).unwrap_err();
        assert_eq!(e.message, "Parent directory /Repos/team does not exist.");
        let got = create(&mut st, &ctx(), req(Some("/Workspace/Shared/demo"))).unwrap();
        assert_eq!(got["path"], json!("/Shared/demo"));
        let e = create(&mut st, &ctx(), req(Some("/Shared"))).unwrap_err();
        assert_eq!(e.code, "RESOURCE_ALREADY_EXISTS");
    }

    #[test]
    fn checkouts_move_the_head_and_a_tag_leaves_no_branch() {
        let mut st = State::new("u@x", 0);
        let id = create(&mut st, &ctx(), req(Some("/Shared/demo"))).unwrap()["id"].to_string();
        let first = get(&st, &id).unwrap()["head_commit_id"].clone();
        let up = |branch: Option<&str>, tag: Option<&str>| UpdateRequest {
            branch: branch.map(str::to_string),
            tag: tag.map(str::to_string),
            sparse_checkout: None,
        };
        update(&mut st, &id, up(Some("dev"), None)).unwrap();
        let got = get(&st, &id).unwrap();
        assert_eq!(got["branch"], json!("dev"));
        assert_ne!(got["head_commit_id"], first);
        update(&mut st, &id, up(None, Some("v1"))).unwrap();
        assert!(get(&st, &id).unwrap().get("branch").is_none());
        assert!(update(&mut st, &id, up(Some("a"), Some("b"))).is_err());
        let e = update(
            &mut st,
            &id,
            UpdateRequest {
                sparse_checkout: Some(vec!["a".into()]),
                ..up(None, None)
            },
        )
        .unwrap_err();
        assert!(e.message.contains("Sparse checkout is not enabled"));
        delete(&mut st, &id).unwrap();
        assert!(!st.workspace.workspace.contains_key("/Shared/demo"));
        assert_eq!(get(&st, &id).unwrap_err().code, "RESOURCE_DOES_NOT_EXIST");
    }
}
