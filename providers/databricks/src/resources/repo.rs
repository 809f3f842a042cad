//! `databricks_repo`: a Git folder (formerly a repo), a clone of a remote Git repository in
//! the workspace, through the Repos API (`/api/2.0/repos`, `/api/2.0/repos/{id}`). Its id
//! is the number the service assigns, also its object id in the workspace tree, where it is
//! an object of type REPO at its path.
//!
//! As in the Terraform provider (terraform-provider-databricks repos/resource_repo.go):
//! - `url`, `git_provider`, `path` and `sparse_checkout` replace the folder when they change
//!   (the Repos API cannot change the remote, and "TODO: remove force_new after the Update
//!   API will support changing the path"); `git_provider` is compared in any case, and left
//!   out it is told from the URL's host (GetGitProviderFromUrl), which `validate` checks;
//! - `path` left out is the service's choice (`/Repos/<user>/<name>`), read back;
//! - `branch` and `tag` are checked out by a PATCH after the create, and by an update; they
//!   conflict. The service answers the branch (none while a tag is checked out, a detached
//!   HEAD) but never the tag; `branch` left out keeps what is checked out;
//! - `commit_hash` is the HEAD commit as of the last checkout;
//! - `git_credential_id` picks the credential a clone or checkout authenticates with; the
//!   service does not keep it, so it is sent with every checkout.

use super::place::Place;
use super::{created_id, read_back};
use super::{err, gone_ok, none_if_missing, str_attr, unmounted, volume_files, workspace_folders};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::location::Location;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, Finding, Normalize, OpContext, ProviderError, ProviderResult,
    Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Map, Value as Json, json};
use std::sync::Arc;

const BASE: &str = "/api/2.0/repos";

/// The Git providers the service takes, in any case (databricks-sdk-go
/// service/workspace/model.go, CreateRepoRequest.Provider).
const PROVIDERS: &[&str] = &[
    "gitHub",
    "gitHubEnterprise",
    "bitbucketCloud",
    "bitbucketServer",
    "azureDevOpsServices",
    "gitLab",
    "gitLabEnterpriseEdition",
    "awsCodeCommit",
];

/// The hosts whose provider the Terraform provider tells from a URL (repos/resource_repo.go,
/// gitProvidersMap); AWS CodeCommit's hosts are `git-codecommit.<region>.amazonaws.com`.
const HOSTS: &[(&str, &str)] = &[
    ("github.com", "gitHub"),
    ("dev.azure.com", "azureDevOpsServices"),
    ("gitlab.com", "gitLab"),
    ("bitbucket.org", "bitbucketCloud"),
];

pub struct Repo {
    schema: Schema,
    shared: Arc<Shared>,
}

fn s() -> AttrType {
    AttrType::String
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("A Git folder (repo): a clone of a remote Git repository in the workspace, checked out at a branch or a tag. Changing url, git_provider, path or sparse_checkout replaces it.")
        .attr(
            Attribute::required("url", s())
                .force_new()
                .describe("The http(s) URL of the Git repository to clone."),
        )
        .attr(
            Attribute::optional_computed("git_provider", s())
                .force_new()
                .one_of_any_case(PROVIDERS)
                .normalize(Normalize::LowerCase)
                .describe("The Git provider, in any case. Told from the URL's host when unset (github.com, dev.azure.com, gitlab.com, bitbucket.org, AWS CodeCommit)."),
        )
        .attr(
            Attribute::optional("git_credential_id", AttrType::Number)
                .unanswered()
                .describe("The Git credential the clone and every checkout authenticate with; the caller's default when unset."),
        )
        .attr(
            Attribute::optional_computed("path", s())
                .force_new()
                .normalize(Normalize::MountedPath("/Workspace"))
                .describe("Where the Git folder goes in the workspace; in /Repos it is /Repos/<folder>/<name>. Left out, the service puts it in /Repos/<user>/, named after the repository. Its parent folder is made when missing."),
        )
        .attr(
            Attribute::optional_computed("branch", s())
                .describe("The branch to check out (conflicts with tag); the repository's default branch when neither is set. Left out later, what is checked out stays."),
        )
        .attr(
            Attribute::optional("tag", s())
                .unanswered()
                .describe("The tag to check out (conflicts with branch), leaving the folder on a detached HEAD."),
        )
        .block(
            BlockType::single(
                "sparse_checkout",
                Schema::new().attr(
                    Attribute::required("patterns", AttrType::List(Box::new(s())))
                        .describe("The directories (cone patterns) checked out."),
                ),
            )
            .force_new()
            .describe("Sparse checkout, which can only be chosen when the Git folder is made: adding, changing or removing it replaces the folder."),
        )
        .attr(
            Attribute::computed("commit_hash", s())
                .changes_on_write()
                .describe("The HEAD commit as of the last checkout; a pull made outside brickform does not change it."),
        )
        .attr(
            Attribute::computed("workspace_path", s())
                .derived_from(&["path"])
                .describe("/Workspace<path>, the path as seen from clusters."),
        )
        .attr(workspace_folders::attribute())
        .attr(Attribute::computed("id", s()).describe("The Git folder's id, a number."))
}

impl Repo {
    pub fn new(shared: Arc<Shared>) -> Self {
        Repo {
            schema: schema(),
            shared,
        }
    }
}

/// A string attribute set to something other than blanks.
fn given<'a>(config: &'a Object, k: &str) -> Option<&'a str> {
    str_attr(config, k).filter(|v| !v.trim().is_empty())
}

/// The provider the Terraform provider tells from a URL's host, if any.
pub fn provider_from_url(url: &str) -> Option<&'static str> {
    let rest = url.split_once("://").map(|(_, r)| r)?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if let Some((_, p)) = HOSTS.iter().find(|(h, _)| *h == host) {
        return Some(p);
    }
    let region = host
        .strip_prefix("git-codecommit.")
        .and_then(|r| r.strip_suffix(".amazonaws.com"));
    region
        .filter(|r| !r.is_empty() && !r.contains('.'))
        .map(|_| "awsCodeCommit")
}

/// The Git folder as read: what the service answers, what brickform recorded.
fn remote(answer: &Json, prior: &Object) -> Remote {
    let text = |k: &str| answer.get(k).and_then(Json::as_str).map(str::to_string);
    let id = match answer.get("id") {
        Some(Json::Number(n)) => n.to_string(),
        Some(Json::String(s)) => s.clone(),
        _ => String::new(),
    };
    let path = text("path").unwrap_or_default();
    let mut attrs = Object::default();
    attrs.insert("id".into(), Value::from(id.as_str()));
    attrs.insert("url".into(), text("url").map_or(Value::Null, Value::from));
    attrs.insert(
        "git_provider".into(),
        text("provider").map_or(Value::Null, Value::from),
    );
    attrs.insert("path".into(), Value::from(path.as_str()));
    attrs.insert(
        "workspace_path".into(),
        Value::from(format!("/Workspace{path}")),
    );
    attrs.insert(
        "branch".into(),
        text("branch")
            .filter(|b| !b.is_empty())
            .map_or(Value::Null, Value::from),
    );
    attrs.insert(
        "commit_hash".into(),
        text("head_commit_id").map_or(Value::Null, Value::from),
    );
    let sparse = answer
        .pointer("/sparse_checkout/patterns")
        .and_then(Json::as_array)
        .map(|ps| {
            let patterns = ps
                .iter()
                .filter_map(Json::as_str)
                .map(Value::from)
                .collect();
            Value::object(Object::from_iter([(
                "patterns".to_string(),
                Value::List(patterns),
            )]))
        });
    attrs.insert("sparse_checkout".into(), sparse.unwrap_or(Value::Null));
    // Brickform's own: the service does not know them.
    if let Some(v) = prior.get(workspace_folders::ATTRIBUTE) {
        attrs.insert(workspace_folders::ATTRIBUTE.into(), v.clone());
    }
    Remote { id, attrs }
}

/// The credential a call authenticates with, when configured.
fn credential(config: &Object, body: &mut Map<String, Json>) {
    if let Some(n) = config.get("git_credential_id").and_then(Value::as_i64) {
        body.insert("git_credential_id".into(), json!(n));
    }
}

/// The create's body: the remote, its provider (told from the URL when unset), where it
/// goes, sparse checkout.
fn create_body(config: &Object) -> ProviderResult<Json> {
    let url = str_attr(config, "url").unwrap_or_default();
    let provider = given(config, "git_provider")
        .or_else(|| provider_from_url(url))
        .ok_or_else(|| {
            ProviderError::invalid(format!(
                "git_provider is not set and cannot be told from the URL {url}"
            ))
        })?;
    let mut b = Map::new();
    b.insert("url".into(), json!(url));
    b.insert("provider".into(), json!(provider));
    if let Some(p) = given(config, "path") {
        b.insert("path".into(), json!(unmounted(p)));
    }
    if let Some(Value::Object(sc)) = config.get("sparse_checkout") {
        let patterns: Vec<Json> = sc
            .get("patterns")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .map(|p| json!(p))
            .collect();
        b.insert("sparse_checkout".into(), json!({ "patterns": patterns }));
    }
    credential(config, &mut b);
    Ok(Json::Object(b))
}

/// The checkout an update sends, as the Terraform provider's Update decides it: a changed
/// tag, else a changed branch, else the branch or tag configured (which puts back a
/// checkout changed outside brickform). Nothing when neither is configured.
fn checkout(prior: &Object, config: &Object) -> Option<Map<String, Json>> {
    let (tag, branch) = (given(config, "tag"), given(config, "branch"));
    let mut b = Map::new();
    if tag.is_some() && tag != given(prior, "tag") {
        b.insert("tag".into(), json!(tag));
    } else if let Some(branch) = branch {
        b.insert("branch".into(), json!(branch));
    } else if let Some(tag) = tag {
        b.insert("tag".into(), json!(tag));
    } else {
        return None;
    }
    credential(config, &mut b);
    Some(b)
}

impl Repo {
    async fn get(&self, id: &str, prior: &Object) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let got = none_if_missing(client.get(&format!("{BASE}/{id}"), &[]).await)?;
        Ok(got.map(|a| remote(&a, prior)))
    }

    /// The Git folder at a path, if one is there: the workspace tree names its id.
    async fn at_path(&self, path: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let status = none_if_missing(
            client
                .get(
                    "/api/2.0/workspace/get-status",
                    &[("path", unmounted(path))],
                )
                .await,
        )?;
        let Some(status) = status else {
            return Ok(None);
        };
        if status.get("object_type").and_then(Json::as_str) != Some("REPO") {
            return Ok(None);
        }
        match status.get("object_id").and_then(Json::as_i64) {
            Some(id) => self.get(&id.to_string(), &Object::default()).await,
            None => Ok(None),
        }
    }
}

#[async_trait]
impl ResourceKind for Repo {
    fn type_name(&self) -> &'static str {
        "databricks_repo"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn plan_computed(&self, config: &Object) -> Object {
        given(config, "path")
            .map(|p| {
                Object::from_iter([(
                    "workspace_path".to_string(),
                    Value::from(format!("/Workspace{}", unmounted(p))),
                )])
            })
            .unwrap_or_default()
    }

    /// The Terraform provider's rules (repos/resource_repo.go): an http(s) URL, a provider
    /// set or told from the URL, branch or tag and neither blank, a path in /Repos of three
    /// parts (validatePath).
    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = Vec::new();
        if let Some(url) = str_attr(config, "url") {
            let scheme_ok = url.starts_with("https://") || url.starts_with("http://");
            if !scheme_ok {
                out.push(Finding::error(
                    &["url"],
                    format!("url is the http(s) URL of a Git repository, not {url:?}"),
                ));
            } else if config.get("git_provider").is_none_or(Value::is_null)
                && provider_from_url(url).is_none()
            {
                // Said at the URL: git_provider is not written.
                out.push(
                    Finding::error(
                        &["url"],
                        format!("git_provider is not set and cannot be told from the URL {url}"),
                    )
                    .hint(format!(
                        "set git_provider to one of {}",
                        PROVIDERS.join(", ")
                    )),
                );
            }
        }
        for k in ["branch", "tag"] {
            if str_attr(config, k).is_some_and(|v| v.trim().is_empty()) {
                out.push(Finding::error(&[k], format!("{k} is blank")));
            }
        }
        if str_attr(config, "branch").is_some() && str_attr(config, "tag").is_some() {
            out.push(
                Finding::error(&["tag"], "branch and tag both set: a checkout is of one")
                    .hint("set the branch or the tag to check out"),
            );
        }
        if let Some(p) = str_attr(config, "path") {
            let p = unmounted(p);
            let parts = p.split('/').filter(|s| !s.is_empty()).count();
            if !p.starts_with('/') {
                out.push(
                    Finding::error(&["path"], format!("{p:?} is not a workspace path"))
                        .hint("a workspace path is absolute: /Repos/…, /Users/…, /Shared/…"),
                );
            } else if p.starts_with("/Repos/") && parts != 3 {
                out.push(Finding::error(
                    &["path"],
                    format!("a Git folder in /Repos is at /Repos/<folder>/<name>: {p} has {parts} parts, not 3"),
                ));
            }
        }
        out
    }

    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let body = create_body(config)?;
        // The service wants the parent folder of a path it is given; the Terraform provider
        // makes it first (repos/resource_repo.go, Create). What was missing is recorded and
        // removed again by the delete.
        let created = match given(config, "path").map(unmounted) {
            Some(p) => match volume_files::parent(&p) {
                Some(parent) if parent != "/" => {
                    workspace_folders::make(&client, &self.shared, parent).await?
                }
                _ => Vec::new(),
            },
            None => Vec::new(),
        };
        let mut known = Object::default();
        known.insert(
            workspace_folders::ATTRIBUTE.into(),
            Value::List(created.into_iter().map(Value::from).collect()),
        );
        let answer = client.post(BASE, &body).await.map_err(err)?;
        let id = created_id(&answer, "id", "Git folder")?;
        let made = remote(&answer, &known);
        // The clone is on the remote's default branch: check out what is configured.
        let mut want = checkout(&Object::default(), config).unwrap_or_default();
        if want.get("branch").and_then(Json::as_str) == answer.get("branch").and_then(Json::as_str)
        {
            want.remove("branch");
        }
        if want.contains_key("branch") || want.contains_key("tag") {
            client
                .idempotent()
                .patch(&format!("{BASE}/{id}"), &Json::Object(want))
                .await
                .map_err(|e| err(e).made(made.clone()))?;
        }
        read_back(self.get(&id, &known).await?, "Git folder", &id)
    }

    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        self.get(id, prior).await
    }

    async fn update(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        if let Some(b) = checkout(prior, config) {
            client
                .idempotent()
                .patch(&format!("{BASE}/{id}"), &Json::Object(b))
                .await
                .map_err(err)?;
        }
        self.get(id, prior)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("Git folder {id} no longer exists")))
    }

    async fn delete(&self, ctx: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        gone_ok(
            client
                .idempotent()
                .delete(&format!("{BASE}/{id}"), &[])
                .await,
        )?;
        match str_attr(prior, "path") {
            Some(p) => {
                workspace_folders::remove_empty(&client, &self.shared, ctx, &unmounted(p), prior)
                    .await
            }
            None => Ok(()),
        }
    }

    /// By its id, a number (as the Terraform provider imports it).
    async fn import(&self, _: &OpContext, id: &str) -> ProviderResult<Option<Remote>> {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ProviderError::invalid(format!(
                "a Git folder is imported by its id, a number, not {id:?}"
            )));
        }
        self.get(id, &Object::default()).await
    }

    /// A configured path holds one object: the Git folder there is the one a create made.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        given(config, "path").map(unmounted)
    }

    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        self.at_path(key).await
    }

    fn location(&self, attrs: &Object) -> Option<Location> {
        given(attrs, "path").map(|p| Place::workspace(p).into())
    }

    fn show_location(&self, location: &Location) -> String {
        Place::shown(location)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind() -> Repo {
        Repo::new(Arc::new(Shared::default()))
    }

    fn messages(config: Json) -> Vec<String> {
        super::super::check_messages(&kind(), config)
    }

    #[test]
    fn the_provider_is_told_from_the_host_as_the_terraform_provider_does() {
        assert_eq!(
            provider_from_url("https://github.com/user/demo.git"),
            Some("gitHub")
        );
        assert_eq!(
            provider_from_url("https://me@dev.azure.com/org/p/_git/r"),
            Some("azureDevOpsServices")
        );
        assert_eq!(
            provider_from_url("https://GitLab.com:443/a/b"),
            Some("gitLab")
        );
        assert_eq!(
            provider_from_url("https://git-codecommit.us-east-2.amazonaws.com/v1/repos/MyDemoRepo"),
            Some("awsCodeCommit")
        );
        assert_eq!(provider_from_url("https://git.example.com/a/b"), None);
        assert_eq!(provider_from_url("github.com/a"), None);
    }

    #[test]
    fn checks_follow_the_terraform_provider() {
        assert!(messages(json!({"url": "https://github.com/user/demo.git"})).is_empty());
        let m = messages(json!({"url": "https://git.example.com/a.git"}));
        assert!(m.iter().any(|m| m.contains("cannot be told")), "{m:?}");
        assert!(
            messages(
                json!({"url": "https://git.example.com/a.git", "git_provider": "gitHubEnterprise"})
            )
            .is_empty()
        );
        let m = messages(json!({"url": "git@github.com:a/b.git"}));
        assert!(m.iter().any(|m| m.contains("http(s) URL")), "{m:?}");
        let m = messages(json!({"url": "https://github.com/a/b", "branch": "main", "tag": "v1"}));
        assert!(m.iter().any(|m| m.contains("both set")), "{m:?}");
        let m = messages(json!({"url": "https://github.com/a/b", "branch": " "}));
        assert!(m.iter().any(|m| m.contains("blank")), "{m:?}");
        let m = messages(json!({"url": "https://github.com/a/b", "path": "/Repos/x/y/z"}));
        assert!(m.iter().any(|m| m.contains("has 4 parts")), "{m:?}");
        assert!(
            messages(json!({"url": "https://github.com/a/b", "path": "/Workspace/Repos/x/y/"}))
                .is_empty()
        );
    }

    #[test]
    fn a_checkout_is_a_changed_tag_else_the_branch_else_the_tag() {
        let k = kind();
        let o = |j: Json| super::super::decoded(k.schema(), j);
        let none = o(json!({"url": "u"}));
        assert_eq!(checkout(&none, &none), None);
        let tag = o(json!({"url": "u", "tag": "v1", "git_credential_id": 7}));
        assert_eq!(
            checkout(&none, &tag).map(Json::Object),
            Some(json!({"tag": "v1", "git_credential_id": 7}))
        );
        let branch = o(json!({"url": "u", "branch": "dev"}));
        assert_eq!(
            checkout(&tag, &branch).map(Json::Object),
            Some(json!({"branch": "dev"}))
        );
        assert_eq!(
            checkout(&tag, &o(json!({"url": "u", "tag": "v1"}))).map(Json::Object),
            Some(json!({"tag": "v1"}))
        );
    }

    #[test]
    fn the_create_body_tells_the_provider_and_unmounts_the_path() {
        let k = kind();
        let c = super::super::decoded(
            k.schema(),
            json!({"url": "https://github.com/a/b.git", "path": "/Workspace/Shared/b/", "sparse_checkout": {"patterns": ["src"]}}),
        );
        assert_eq!(
            create_body(&c).unwrap(),
            json!({"url": "https://github.com/a/b.git", "provider": "gitHub", "path": "/Shared/b", "sparse_checkout": {"patterns": ["src"]}})
        );
        let r = remote(
            &json!({"id": 12, "path": "/Repos/me/b", "provider": "gitHub", "url": "https://github.com/a/b.git", "head_commit_id": "abc"}),
            &Object::default(),
        );
        assert_eq!(r.id, "12");
        assert_eq!(
            r.attrs.get("workspace_path"),
            Some(&Value::from("/Workspace/Repos/me/b"))
        );
        assert_eq!(r.attrs.get("branch"), Some(&Value::Null));
        assert_eq!(r.attrs.get("commit_hash"), Some(&Value::from("abc")));
    }
}
