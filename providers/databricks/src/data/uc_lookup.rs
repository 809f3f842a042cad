//! Lookups of existing Unity Catalog securables reuse the resource kind's reading: the
//! identifying attributes are required, everything else is what the service reports.

use crate::Shared;
use crate::resources::uc::UcKind;
use async_trait::async_trait;
use brickform_core::provider::{
    Attribute, DataSource, OpContext, Presence, ProviderError, ProviderResult, ResourceKind, Schema,
};
use brickform_core::value::Object;
use std::sync::Arc;

pub struct UcLookup {
    type_name: &'static str,
    kind: UcKind,
    schema: Schema,
}

impl UcLookup {
    pub fn new(
        shared: Arc<Shared>,
        type_name: &'static str,
        make: fn(Arc<Shared>) -> UcKind,
    ) -> Self {
        let kind = make(shared);
        let mut schema = Schema::new().describe(kind.schema.description);
        for a in &kind.schema.attributes {
            if a.sensitive || a.name == "force_destroy" {
                continue;
            }
            let identifying = kind.spec.name_parts.contains(&a.name);
            let presence = if identifying {
                Presence::Required
            } else {
                Presence::Computed
            };
            let mut attr = Attribute::new(a.name, a.ty.clone(), presence);
            attr.normalize = a.normalize;
            attr.description = a.description;
            attr.allowed = a.allowed;
            attr.check = a.check;
            schema = schema.attr(attr);
        }
        UcLookup {
            type_name,
            kind,
            schema,
        }
    }
}

#[async_trait]
impl DataSource for UcLookup {
    fn type_name(&self) -> &'static str {
        self.type_name
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let ctx = OpContext {
            address: String::new(),
            lineage: String::new(),
            environment: String::new(),
            base_dir: Default::default(),
            create_token: None,
        };
        let key = self.kind.natural_key(&ctx, config).unwrap_or_default();
        match self.kind.find_by_key(&ctx, &key).await? {
            Some(r) => Ok(r
                .attrs
                .into_iter()
                .filter(|(k, _)| self.schema.attribute(k).is_some())
                .collect()),
            None => Err(ProviderError::not_found(format!(
                "{} not found: {}",
                self.type_name,
                self.kind
                    .spec
                    .name_parts
                    .iter()
                    .filter_map(|p| config.get(*p).map(|v| format!("{p} = {v}")))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}
