//! `databricks_mlflow_experiment`: an MLflow experiment, through the Experiments API
//! (`/api/2.0/mlflow/experiments/…`, databricks-sdk-go service/ml/impl.go). The service
//! assigns its id (`experiment_id`, also the resource's id); its name is a workspace path
//! where the experiment lies in the workspace tree, unique among live experiments, which
//! finds it again after a lost create answer.
//!
//! As in the Terraform provider (terraform-provider-databricks
//! mlflow/resource_mlflow_experiment.go): a new name is a rename (experiments/update,
//! `new_name`), a new `artifact_location` a replacement; the service answers the name
//! without the `/Workspace` prefix and a trailing slash, so neither means anything
//! (experimentNameSuppressDiff; databricks/cli bundle/direct/dresources/experiment.go).
//!
//! A delete is soft: the experiment stays, readable by id with `lifecycle_stage` "deleted",
//! and its name is free for a new one (mlflow/mlflow#6445), so a read of a deleted
//! experiment reports it gone and a destroy then apply of the same name makes a new one.
//!
//! Tags: the service adds its own (`mlflow.*`: owner, source name, experiment type;
//! databricks/cli libs/testserver/experiments.go), which are not the configuration's. It
//! has a call that sets a tag and none that deletes one (the Go SDK's Experiments API), so
//! a tag removed from the configuration stays on the experiment, no longer managed: the
//! resource reads the tags it manages (those its last apply set), all of them on import.
//! `description` is the experiment's note, the `mlflow.note.content` tag the MLflow UI
//! shows as its description (the Terraform provider keeps it in its state alone, as "the
//! API never accepts description").

use super::place::Place;
use super::{created_id, read_back};
use super::{err, given, none_if_missing, str_attr, unmounted};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::location::Location;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, ErrorKind, Finding, Normalize, OpContext, ProviderError,
    ProviderResult, Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value, quote};
use serde_json::{Value as Json, json};
use std::sync::Arc;

const BASE: &str = "/api/2.0/mlflow/experiments";
/// The tag holding an experiment's description (its note).
const NOTE: &str = "mlflow.note.content";
/// The prefix of the tags the service keeps for itself.
const SERVICE_TAGS: &str = "mlflow.";

pub struct MlflowExperiment {
    schema: Schema,
    shared: Arc<Shared>,
}

fn s() -> AttrType {
    AttrType::String
}

/// Key/value tags, keyed by key: their order means nothing.
pub fn tags_block(what: &'static str) -> BlockType {
    BlockType::keyed(
        "tags",
        "key",
        Schema::new()
            .attr(Attribute::required("key", s()))
            .attr(Attribute::required("value", s())),
    )
    .describe(what)
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("An MLflow experiment. Its name is the workspace path it lies at (an absolute path whose folder exists); a new name renames it, a new artifact_location replaces it. A destroy deletes it softly: the service keeps it, deleted, and the name is free again.")
        .attr(
            Attribute::required("name", s())
                .normalize(Normalize::MountedPath(super::WORKSPACE_MOUNT))
                .describe("The experiment's workspace path, e.g. /Users/<user>/my-experiment; the /Workspace prefix and a trailing slash mean nothing."),
        )
        .attr(
            Attribute::optional_computed("artifact_location", s())
                .force_new()
                .describe("Where the experiment's artifacts are stored; left out, the service's (dbfs:/databricks/mlflow-tracking/<id>)."),
        )
        .attr(
            Attribute::optional("description", s())
                .describe("The experiment's description: its note, the mlflow.note.content tag."),
        )
        .block(
            // Immutable on the service ("cannot be updated after the experiment is
            // created": databricks-sdk-go service/ml/model.go, CreateExperiment), a
            // replacement in the Terraform provider (RequiresReplace).
            BlockType::single(
                "trace_location",
                Schema::new().block(
                    BlockType::single(
                        "uc_trace_location",
                        Schema::new()
                            .attr(Attribute::required("catalog", s()))
                            .attr(Attribute::required("schema", s()))
                            .attr(Attribute::optional("table_prefix", s()).describe("The prefix of the trace tables ({catalog}.{schema}.{table_prefix}_otel_*): letters, digits and underscores, at most 238 characters; left out, the service's."))
                            .attr(Attribute::computed("effective_table_prefix", s()).describe("The prefix in effect: table_prefix, or the one the service chose.")),
                    )
                    .min(1),
                ),
            )
            .force_new()
            .describe("The Unity Catalog schema the experiment's traces are stored in (Delta tables); a change replaces the experiment."),
        )
        .block(tags_block("A tag of the experiment. The service has no call that deletes an experiment's tag: one removed from the configuration stays on the experiment. Keys starting mlflow. are the service's."))
        .attr(Attribute::computed("experiment_id", s()))
        .attr(Attribute::computed("lifecycle_stage", s()).describe("active (a deleted experiment is gone)."))
        .attr(Attribute::computed("creation_time", AttrType::Number).describe("Milliseconds since the epoch."))
        .attr(Attribute::computed("last_update_time", AttrType::Number).describe("Milliseconds since the epoch."))
        .attr(Attribute::computed("id", s()).describe("The experiment_id."))
}

impl MlflowExperiment {
    pub fn new(shared: Arc<Shared>) -> Self {
        MlflowExperiment {
            schema: schema(),
            shared,
        }
    }
}

/// The configured tags, `(key, value)`, in order (those whose values are known).
pub fn configured_tags(config: &Object) -> Vec<(String, String)> {
    config
        .get("tags")
        .and_then(Value::as_list)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter_map(|t| {
            Some((
                str_attr(t, "key")?.to_string(),
                str_attr(t, "value")?.to_string(),
            ))
        })
        .collect()
}

/// The create body: the name, the artifact location if set, the tags with the note.
fn create_body(config: &Object) -> Json {
    let mut b = json!({ "name": str_attr(config, "name").unwrap_or_default() });
    if let Some(a) = str_attr(config, "artifact_location").filter(|a| !a.is_empty()) {
        b["artifact_location"] = json!(a);
    }
    let mut tags: Vec<Json> = configured_tags(config)
        .into_iter()
        .map(|(k, v)| json!({ "key": k, "value": v }))
        .collect();
    if let Some(d) = given(config, "description") {
        tags.push(json!({ "key": NOTE, "value": d }));
    }
    if !tags.is_empty() {
        b["tags"] = Json::Array(tags);
    }
    if let Some(Value::Object(t)) = config.get("trace_location")
        && let Some(Value::Object(uc)) = t.get("uc_trace_location")
    {
        let mut at = serde_json::Map::new();
        for k in ["catalog", "schema", "table_prefix"] {
            if let Some(v) = given(uc, k) {
                at.insert(k.into(), json!(v));
            }
        }
        b["trace_location"] = json!({ "uc_trace_location": at });
    }
    b
}

/// The resource's attributes from a get's `experiment`: `None` for a deleted one. The tags
/// read are those not the service's that `prior` manages (all of them when `prior` names
/// none, as on import).
fn remote(e: &Json, prior: &Object) -> Option<Remote> {
    if e.get("lifecycle_stage").and_then(Json::as_str) == Some("deleted") {
        return None;
    }
    let id = e.get("experiment_id").and_then(Json::as_str)?.to_string();
    let managed: Option<Vec<String>> = prior.get("tags").and_then(Value::as_list).map(|l| {
        l.iter()
            .filter_map(Value::as_object)
            .filter_map(|t| str_attr(t, "key").map(str::to_string))
            .collect()
    });
    let mut tags = Vec::new();
    let mut note = None;
    for t in e.get("tags").and_then(Json::as_array).into_iter().flatten() {
        let (Some(k), Some(v)) = (
            t.get("key").and_then(Json::as_str),
            t.get("value").and_then(Json::as_str),
        ) else {
            continue;
        };
        if k == NOTE {
            note = Some(v).filter(|v| !v.is_empty());
        } else if !k.starts_with(SERVICE_TAGS)
            && managed.as_ref().is_none_or(|m| m.iter().any(|x| x == k))
        {
            let mut o = Object::default();
            o.insert("key".into(), Value::from(k));
            o.insert("value".into(), Value::from(v));
            tags.push(Value::object(o));
        }
    }
    let mut attrs = Object::default();
    attrs.insert(
        "trace_location".into(),
        e.get("trace_location")
            .map_or(Value::Null, Value::from_json),
    );
    for k in ["name", "artifact_location", "lifecycle_stage"] {
        if let Some(v) = e.get(k) {
            attrs.insert(k.into(), Value::from_json(v));
        }
    }
    for k in ["creation_time", "last_update_time"] {
        if let Some(v) = e.get(k) {
            attrs.insert(k.into(), Value::from_json(v));
        }
    }
    attrs.insert(
        "description".into(),
        note.map(Value::from).unwrap_or(Value::Null),
    );
    attrs.insert("tags".into(), Value::List(tags));
    attrs.insert("experiment_id".into(), Value::from(id.as_str()));
    attrs.insert("id".into(), Value::from(id.as_str()));
    Some(Remote { id, attrs })
}

impl MlflowExperiment {
    async fn get(&self, id: &str, prior: &Object) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let got = none_if_missing(
            client
                .get(&format!("{BASE}/get"), &[("experiment_id", id.to_string())])
                .await,
        )?;
        Ok(got
            .as_ref()
            .and_then(|g| g.get("experiment"))
            .and_then(|e| remote(e, prior)))
    }

    async fn set_tag(&self, id: &str, key: &str, value: &str) -> ProviderResult<()> {
        let client = self.shared.client()?;
        client
            .idempotent()
            .post(
                &format!("{BASE}/set-experiment-tag"),
                &json!({ "experiment_id": id, "key": key, "value": value }),
            )
            .await
            .map_err(err)?;
        Ok(())
    }
}

#[async_trait]
impl ResourceKind for MlflowExperiment {
    fn type_name(&self) -> &'static str {
        "databricks_mlflow_experiment"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The service refuses a name that is not an absolute workspace path (mlflow/mlflow#8269:
    /// "An experiment name must be an absolute path within the Databricks workspace"), and
    /// keeps the `mlflow.` tags for itself.
    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = Vec::new();
        if let Some(name) = str_attr(config, "name")
            && (!name.starts_with('/') || unmounted(name) == "/")
        {
            out.push(
                Finding::error(
                    &["name"],
                    format!(
                        "{} is not a workspace path: an experiment's name is an absolute path in the workspace",
                        quote(name)
                    ),
                )
                .hint("name it like /Users/<user>/my-experiment or /Shared/my-experiment"),
            );
        }
        for (k, _) in configured_tags(config) {
            if k.starts_with(SERVICE_TAGS) {
                out.push(
                    Finding::error(
                        &["tags"],
                        format!(
                            "tag {} is the service's: keys starting mlflow. are",
                            quote(&k)
                        ),
                    )
                    .hint(if k == NOTE {
                        "set description instead"
                    } else {
                        "choose a key of your own"
                    }),
                );
            }
        }
        out
    }

    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let answer = client
            .post(&format!("{BASE}/create"), &create_body(config))
            .await
            .map_err(err)?;
        let id = created_id(&answer, "experiment_id", "experiment")?;
        read_back(self.get(&id, config).await?, "experiment", &id)
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
        let name = str_attr(config, "name").unwrap_or_default();
        if str_attr(prior, "name").map(unmounted) != Some(unmounted(name)) {
            client
                .idempotent()
                .post(
                    &format!("{BASE}/update"),
                    &json!({ "experiment_id": id, "new_name": name }),
                )
                .await
                .map_err(err)?;
        }
        let before = configured_tags(prior);
        for (k, v) in configured_tags(config) {
            if !before.iter().any(|(pk, pv)| *pk == k && *pv == v) {
                self.set_tag(id, &k, &v).await?;
            }
        }
        if given(prior, "description") != given(config, "description") {
            // No call deletes a tag: an empty note is no description.
            self.set_tag(id, NOTE, given(config, "description").unwrap_or_default())
                .await?;
        }
        self.get(id, config)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("experiment {id} no longer exists")))
    }

    /// A deleted experiment is refused a second delete ("must be in the 'active' state"):
    /// gone either way.
    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        match client
            .idempotent()
            .post(&format!("{BASE}/delete"), &json!({ "experiment_id": id }))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(()),
            Err(e) if e.kind == ErrorKind::InvalidInput => {
                match self.get(id, &Object::default()).await? {
                    None => Ok(()),
                    Some(_) => Err(err(e)),
                }
            }
            Err(e) => Err(err(e)),
        }
    }

    /// The name is unique among live experiments: it finds the experiment.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        str_attr(config, "name").map(unmounted)
    }

    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let got = none_if_missing(
            client
                .get(
                    &format!("{BASE}/get-by-name"),
                    &[("experiment_name", key.to_string())],
                )
                .await,
        )?;
        Ok(got
            .as_ref()
            .and_then(|g| g.get("experiment"))
            .and_then(|e| remote(e, &Object::default())))
    }

    fn location(&self, attrs: &Object) -> Option<Location> {
        str_attr(attrs, "name").map(|p| Place::workspace(p).into())
    }

    fn show_location(&self, location: &Location) -> String {
        Place::shown(location)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind() -> MlflowExperiment {
        MlflowExperiment::new(Arc::new(Shared::default()))
    }

    fn decoded(v: Json) -> Object {
        super::super::decoded(kind().schema(), v)
    }

    #[test]
    fn names_are_workspace_paths_as_the_service_answers_them() {
        assert_eq!(unmounted("/Workspace/Shared/e/"), "/Shared/e");
        assert_eq!(unmounted("/Shared/e"), "/Shared/e");
        assert_eq!(unmounted("/WorkspaceX/e"), "/WorkspaceX/e");
        let k = kind();
        let bad = k.check(&decoded(json!({"name": "my-experiment"})));
        assert!(
            bad.iter()
                .any(|f| f.message.contains("not a workspace path")),
            "{bad:?}"
        );
        assert!(k.check(&decoded(json!({"name": "/Shared/e"}))).is_empty());
        let tag = k.check(&decoded(
            json!({"name": "/Shared/e", "tags": [{"key": "mlflow.note.content", "value": "x"}]}),
        ));
        assert!(
            tag.iter().any(|f| f.message.contains("the service's")),
            "{tag:?}"
        );
    }

    #[test]
    fn the_note_is_the_description_and_service_tags_are_left_out() {
        let c = decoded(
            json!({"name": "/Shared/e", "description": "d", "tags": [{"key": "a", "value": "1"}]}),
        );
        assert_eq!(
            create_body(&c),
            json!({"name": "/Shared/e", "tags": [{"key": "a", "value": "1"}, {"key": NOTE, "value": "d"}]})
        );
        let answer = json!({
            "experiment_id": "7", "name": "/Shared/e", "lifecycle_stage": "active",
            "tags": [{"key": "a", "value": "1"}, {"key": "b", "value": "2"},
                     {"key": NOTE, "value": "d"}, {"key": "mlflow.ownerEmail", "value": "u"}],
        });
        let r = remote(&answer, &c).unwrap();
        assert_eq!(r.id, "7");
        assert_eq!(r.attrs["description"], Value::from("d"));
        // `b` is not the configuration's: left alone.
        assert_eq!(r.attrs["tags"].as_list().map(<[Value]>::len), Some(1));
        // On import every tag of the user's is read.
        let all = remote(&answer, &Object::default()).unwrap();
        assert_eq!(all.attrs["tags"].as_list().map(<[Value]>::len), Some(2));
        let deleted = json!({"experiment_id": "7", "lifecycle_stage": "deleted"});
        assert!(remote(&deleted, &c).is_none());
    }

    #[test]
    fn a_trace_location_goes_out_without_what_the_service_fills_in() {
        let c = decoded(
            json!({"name": "/Shared/e", "trace_location": {"uc_trace_location": {
            "catalog": "main", "schema": "traces"}}}),
        );
        assert_eq!(
            create_body(&c),
            json!({"name": "/Shared/e", "trace_location": {"uc_trace_location": {"catalog": "main", "schema": "traces"}}})
        );
        let answer = json!({"experiment_id": "7", "name": "/Shared/e", "lifecycle_stage": "active",
            "trace_location": {"uc_trace_location": {"catalog": "main", "schema": "traces", "effective_table_prefix": "trace_7"}}});
        let r = remote(&answer, &c).unwrap();
        assert_eq!(
            r.attrs["trace_location"].to_json()["uc_trace_location"]["effective_table_prefix"],
            json!("trace_7")
        );
        let none = remote(&json!({"experiment_id": "8", "name": "/Shared/f"}), &c).unwrap();
        assert_eq!(none.attrs["trace_location"], Value::Null);
    }
}
