//! `sdp_meta_flow`: one sdp-meta dataflow. It is rendered, not sent: the workspace holds no
//! object of its own, so create, read and delete only record it. Its content reaches the
//! workspace through the `sdp_meta_onboarding` that lists it, which renders and uploads the
//! onboarding file set; a flow is a resource of its own so each one is a separate,
//! reviewable, `for_each`-able block with its own checks and plan entry.

use crate::sdp_meta::{checks, schema};
use async_trait::async_trait;
use brickform_core::provider::{
    Finding, OpContext, ProviderError, ProviderResult, Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};

pub struct Flow {
    schema: Schema,
}

impl Flow {
    pub fn new() -> Self {
        Flow {
            schema: schema::flow_schema(),
        }
    }
}

impl Default for Flow {
    fn default() -> Self {
        Self::new()
    }
}

fn recorded(config: &Object) -> Remote {
    let id = config
        .get("data_flow_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Remote {
        id,
        attrs: config.clone(),
    }
}

#[async_trait]
impl ResourceKind for Flow {
    fn type_name(&self) -> &'static str {
        "sdp_meta_flow"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn check(&self, config: &Object) -> Vec<Finding> {
        checks::check_flow(config)
    }
    async fn create(&self, _ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        Ok(recorded(config))
    }
    async fn read(
        &self,
        _ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        // Nothing lives in the workspace: what was applied is what there is. Drift in the
        // rendered files is the onboarding's to find.
        Ok(Some(Remote {
            id: id.to_string(),
            attrs: prior.clone(),
        }))
    }
    async fn update(
        &self,
        _ctx: &OpContext,
        _id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        Ok(recorded(config))
    }
    async fn delete(&self, _ctx: &OpContext, _id: &str, _prior: &Object) -> ProviderResult<()> {
        Ok(())
    }
    async fn import(&self, _ctx: &OpContext, _id: &str) -> ProviderResult<Option<Remote>> {
        Err(ProviderError::invalid(
            "an sdp_meta_flow has no object in the workspace to import; run `brickform flows import FILE` to turn an existing onboarding file into sdp_meta_flow configuration",
        ))
    }
}
