//! What the Cluster Policies API does to the workspace state, apart from HTTP.

use crate::behaviours::Behaviour;
use crate::body::Obj;
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use serde_json::{Map, Value, json};

/// Names are 1 to 100 characters (terraform-provider-databricks
/// docs/resources/cluster_policy.md: "Length must be between 1 and 100 characters").
const MAX_NAME: usize = 100;
/// The library kinds a policy's `libraries` entry names one of (as a cluster's).
const LIBRARIES: &[&str] = &["jar", "egg", "whl", "requirements", "pypi", "maven", "cran"];

fn missing_policy(id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Can't find a cluster policy with id: {id}."),
    )
}

fn bad(why: impl Into<String>) -> ApiError {
    ApiError::invalid(why)
}

/// A policy definition as the service holds it: it must be a JSON object; it is answered
/// in the service's own layout when `policy_definition_reformatted` is on (whitespace
/// differs from what was sent), as sent otherwise.
fn definition(field: &str, text: &str, reformat: bool) -> ApiResult<String> {
    let parsed: Value = serde_json::from_str(text)
        .map_err(|e| bad(format!("Invalid policy definition in {field}: {e}")))?;
    if !parsed.is_object() {
        return Err(bad(format!(
            "Invalid policy definition in {field}: a policy definition is a JSON object"
        )));
    }
    Ok(if reformat {
        serde_json::to_string_pretty(&parsed).unwrap_or_else(|_| text.to_string())
    } else {
        text.to_string()
    })
}

/// Checks a create or edit body and returns the policy's settings as the service keeps
/// them. An edit takes the whole policy the same way.
pub fn settings(body: &Map<String, Value>, reformat: bool) -> ApiResult<Map<String, Value>> {
    let o = Obj::root(body);
    let name = o.req_str("name")?;
    let len = name.chars().count();
    if len == 0 || len > MAX_NAME {
        return Err(bad(format!(
            "Invalid value for field 'name': must be between 1 and {MAX_NAME} characters, got {len}"
        )));
    }
    let mut out = Map::new();
    out.insert("name".into(), json!(name));
    let family = o.str("policy_family_id")?;
    let given = o.str("definition")?.filter(|d| !d.is_empty());
    if let Some(f) = family {
        if given.is_some() {
            return Err(bad(
                "definition cannot be set with policy_family_id: a policy from a family takes its family's definition (customise it with policy_family_definition_overrides)",
            ));
        }
        // No family is modelled (see the module comment).
        return Err(ApiError::not_found(
            "RESOURCE_DOES_NOT_EXIST",
            format!("Policy family {f} does not exist."),
        ));
    }
    if o.str("policy_family_definition_overrides")?
        .is_some_and(|s| !s.is_empty())
    {
        return Err(bad(
            "policy_family_definition_overrides can only be set with policy_family_id",
        ));
    }
    // Without a definition the policy has no rules: the empty definition.
    let def = definition("definition", given.unwrap_or("{}"), reformat)?;
    out.insert("definition".into(), json!(def));
    if let Some(d) = o.str("description")? {
        out.insert("description".into(), json!(d));
    }
    if let Some(n) = o.int("max_clusters_per_user")? {
        if n <= 0 {
            return Err(bad(format!(
                "Invalid value for field 'max_clusters_per_user': must be greater than zero, got {n}"
            )));
        }
        out.insert("max_clusters_per_user".into(), json!(n));
    }
    let mut libs = Vec::new();
    for (path, l) in o.objs("libraries")? {
        Obj::at(l, &path).one_of(LIBRARIES)?;
        libs.push(Value::Object(l.clone()));
    }
    if !libs.is_empty() {
        out.insert("libraries".into(), Value::Array(libs));
    }
    Ok(out)
}

/// A name is unique among the workspace's policies.
fn name_free(st: &State, name: &str, except: Option<&str>) -> ApiResult<()> {
    if st
        .policies
        .cluster_policies
        .iter()
        .any(|(id, p)| Some(id.as_str()) != except && p.get("name") == Some(&json!(name)))
    {
        return Err(bad(format!(
            "Cluster policy with name {name} already exists."
        )));
    }
    Ok(())
}

/// Makes a policy; returns its id (16 upper-case hexadecimal digits, as the service's).
pub fn create(st: &mut State, ctx: &Ctx, mut spec: Map<String, Value>) -> ApiResult<String> {
    let name = spec.get("name").and_then(Value::as_str).unwrap_or_default();
    name_free(st, name, None)?;
    let id = uuid::Uuid::new_v4().simple().to_string()[..16].to_uppercase();
    spec.insert("policy_id".into(), json!(id));
    spec.insert("created_at_timestamp".into(), json!(ctx.now));
    spec.insert("creator_user_name".into(), json!(ctx.user));
    spec.insert("is_default".into(), json!(false));
    st.policies.cluster_policies.insert(id.clone(), spec);
    Ok(id)
}

/// Replaces the policy's settings; what the service filled in stays.
pub fn edit(st: &mut State, id: &str, spec: Map<String, Value>) -> ApiResult<()> {
    let name = spec.get("name").and_then(Value::as_str).unwrap_or_default();
    get(st, id)?;
    name_free(st, name, Some(id))?;
    let p = st
        .policies
        .cluster_policies
        .get_mut(id)
        .ok_or_else(|| missing_policy(id))?;
    let kept: Map<String, Value> = [
        "policy_id",
        "created_at_timestamp",
        "creator_user_name",
        "is_default",
    ]
    .iter()
    .filter_map(|k| p.get(*k).map(|v| (k.to_string(), v.clone())))
    .collect();
    *p = spec;
    p.extend(kept);
    Ok(())
}

pub fn get<'a>(st: &'a State, id: &str) -> ApiResult<&'a Map<String, Value>> {
    st.policies
        .cluster_policies
        .get(id)
        .ok_or_else(|| missing_policy(id))
}

pub fn delete(st: &mut State, id: &str) -> ApiResult<()> {
    st.policies
        .cluster_policies
        .remove(id)
        .ok_or_else(|| missing_policy(id))?;
    crate::permissions::forget(st, "cluster-policies", id);
    Ok(())
}

pub fn list(st: &State) -> Value {
    let all: Vec<Value> = st
        .policies
        .cluster_policies
        .values()
        .map(|p| Value::Object(p.clone()))
        .collect();
    json!({ "policies": all })
}

/// Whether the service answers definitions in its own layout.
pub fn reformats(ctx: &Ctx) -> bool {
    ctx.behaviours.on(Behaviour::PolicyDefinitionReformatted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn a_policy_is_checked_made_edited_and_deleted() {
        let mut st = State::new("u@x", 0);
        let ctx = Ctx::for_test(5, 0);
        let spec = settings(
            &body(json!({"name": "p", "definition": "{\"spark_version\":{\"type\":\"fixed\",\"value\":\"x\"}}", "max_clusters_per_user": 2})),
            true,
        )
        .unwrap();
        // Answered in the service's layout: the same document, other whitespace.
        let def = spec["definition"].as_str().unwrap();
        assert!(def.contains('\n'));
        assert_eq!(
            serde_json::from_str::<Value>(def).unwrap(),
            json!({"spark_version": {"type": "fixed", "value": "x"}})
        );
        let id = create(&mut st, &ctx, spec.clone()).unwrap();
        assert_eq!(id.len(), 16);
        assert_eq!(get(&st, &id).unwrap()["creator_user_name"], "u@x");
        assert!(create(&mut st, &ctx, spec).is_err(), "names are unique");
        let renamed = settings(&body(json!({"name": "q"})), true).unwrap();
        edit(&mut st, &id, renamed).unwrap();
        let p = get(&st, &id).unwrap();
        assert_eq!(p["name"], "q");
        assert_eq!(p["definition"], "{}");
        assert_eq!(p["policy_id"], json!(id));
        assert!(p.get("max_clusters_per_user").is_none());
        delete(&mut st, &id).unwrap();
        assert_eq!(get(&st, &id).unwrap_err().code, "RESOURCE_DOES_NOT_EXIST");
    }

    #[test]
    fn what_the_service_refuses() {
        for (b, says) in [
            (
                json!({"name": "p", "definition": "{not json"}),
                "Invalid policy definition",
            ),
            (json!({"name": "p", "definition": "[1]"}), "JSON object"),
            (json!({"name": "", "definition": "{}"}), "name"),
            (
                json!({"name": "n".repeat(101), "definition": "{}"}),
                "between 1 and 100",
            ),
            (
                json!({"name": "p", "max_clusters_per_user": 0}),
                "greater than zero",
            ),
            (
                json!({"name": "p", "definition": "{}", "policy_family_id": "personal-vm"}),
                "cannot be set with policy_family_id",
            ),
            (
                json!({"name": "p", "policy_family_id": "personal-vm"}),
                "does not exist",
            ),
            (
                json!({"name": "p", "policy_family_definition_overrides": "{}"}),
                "only be set with policy_family_id",
            ),
            (json!({"name": "p", "libraries": [{}]}), "Exactly one of"),
        ] {
            let e = settings(&body(b), true).unwrap_err();
            assert!(e.message.contains(says), "{says}: {}", e.message);
        }
        let sent = "{ \"a\": {\"type\": \"unlimited\"} }";
        let kept = settings(&body(json!({"name": "p", "definition": sent})), false).unwrap();
        assert_eq!(kept["definition"], sent);
    }
}
