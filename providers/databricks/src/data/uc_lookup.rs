//! Lookups of existing Unity Catalog securables reuse the resource kind's reading: the
//! identifying attributes are required, everything else is what the service reports. As in
//! the Terraform provider, `name` may instead be the full name (`catalog.schema`), the
//! parent attributes then left out.

use crate::Shared;
use crate::resources::uc::UcKind;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, Nesting, OpContext, Presence, ProviderError, ProviderResult,
    ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

pub struct UcLookup {
    type_name: &'static str,
    kind: UcKind,
    schema: Schema,
    /// The attribute holding the whole object as a list of one, as the provider's data
    /// source has it (`storage_credential_info[0].created_by`), if it has one.
    info: Option<&'static str>,
}

impl UcLookup {
    pub fn new(
        shared: Arc<Shared>,
        type_name: &'static str,
        make: fn(Arc<Shared>) -> UcKind,
    ) -> Self {
        let kind = make(shared);
        let mut schema = Schema::new().describe(kind.schema.description);
        let parts = kind.spec.name_parts;
        for a in &kind.schema.attributes {
            if a.sensitive || a.name == "force_destroy" {
                continue;
            }
            // The parents may be given in `name` instead, as its full name.
            let presence = match parts.iter().position(|p| *p == a.name) {
                Some(i) if i + 1 < parts.len() => Presence::Optional,
                Some(_) => Presence::Required,
                None => Presence::Computed,
            };
            let mut attr = Attribute::new(a.name, a.ty.clone(), presence);
            attr.normalize = a.normalize;
            attr.description = a.description;
            if parts.len() > 1 && parts.last() == Some(&a.name) {
                attr.description = "The name; or the full name (catalog.schema), with the parent attributes left out, as the Terraform provider takes it.";
            }
            attr.allowed = a.allowed;
            attr.check = a.check;
            schema = schema.attr(attr);
        }
        UcLookup {
            type_name,
            kind,
            schema,
            info: None,
        }
    }

    /// Also answers the object as `NAME`, a list of one, its nested blocks lists of one too,
    /// so configurations written for the Terraform provider (`catalog_info[0].owner`,
    /// `storage_credential_info[0].aws_iam_role[0].role_arn`) read it as they did.
    pub fn with_info(mut self, name: &'static str) -> Self {
        self.schema = std::mem::take(&mut self.schema).attr(
            Attribute::computed(name, AttrType::Any).describe(
                "The object as the service answers it, as a list of one (NAME[0].owner), as the Terraform provider has it.",
            ),
        );
        self.info = Some(name);
        self
    }

    /// The object as a list of one, nested blocks as lists of one, what is write-only left
    /// out.
    fn info_value(&self, attrs: &Object) -> Value {
        let schema = &self.kind.schema;
        let shown = attrs
            .iter()
            .filter(|(k, _)| {
                schema
                    .attribute(k)
                    .is_none_or(|a| !a.sensitive && a.name != "force_destroy")
            })
            .map(|(k, v)| {
                let v = match (schema.block_type(k), v) {
                    (Some(b), Value::Object(_)) if b.nesting == Nesting::Single => {
                        Value::List(vec![v.clone()])
                    }
                    _ => v.clone(),
                };
                (k.clone(), v)
            })
            .collect::<brickform_core::value::Object>()
            .into();
        Value::List(vec![Value::Object(shown)])
    }
}

impl UcLookup {
    /// The configuration with every name part set: a full name in `name` (when the parents
    /// are left out) is split into them. Also returns that full name.
    fn identified(&self, config: &Object) -> ProviderResult<(Object, Option<String>)> {
        let parts = self.kind.spec.name_parts;
        let (Some((last, parents)), Some(name)) = (
            parts.split_last(),
            config.get("name").and_then(|v| v.as_str()),
        ) else {
            return Ok((config.clone(), None));
        };
        let given: Vec<&&str> = parents
            .iter()
            .filter(|p| config.get(**p).is_some_and(|v| !v.is_null()))
            .collect();
        if parents.is_empty() || given.len() == parents.len() {
            return Ok((config.clone(), None));
        }
        let pieces: Vec<&str> = name.split('.').collect();
        if !given.is_empty() || pieces.len() != parts.len() || pieces.iter().any(|p| p.is_empty()) {
            return Err(ProviderError::invalid(format!(
                "{}: give {} and {last}, or the full name {} in {last} alone; got {last} = {name:?}",
                self.type_name,
                parents.join(", "),
                parts
                    .iter()
                    .map(|p| p.trim_end_matches("_name").to_uppercase())
                    .collect::<Vec<_>>()
                    .join(".")
            )));
        }
        let mut out = config.clone();
        for (part, piece) in parts.iter().zip(pieces) {
            out.insert(part.to_string(), brickform_core::value::Value::from(piece));
        }
        Ok((out, Some(name.to_string())))
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
        let (config, full_name) = self.identified(config)?;
        let config = &config;
        let ctx = OpContext {
            address: String::new(),
            lineage: String::new(),
            environment: String::new(),
            base_dir: Default::default(),
            create_token: None,
            output: None,
            planned: None,
        };
        let key = self.kind.natural_key(&ctx, config).unwrap_or_default();
        // A plain read, whoever owns the object: a lookup exists to read what others made
        // (the kind's `find_by_key` refuses those, as a create must not adopt them).
        let found = match self.kind.read(&ctx, &key, &Object::default()).await {
            Ok(found) => found,
            Err(e) if e.kind == brickform_core::provider::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        match found {
            Some(r) => {
                let info = self.info.map(|name| (name, self.info_value(&r.attrs)));
                let mut out: Object = r
                    .attrs
                    .into_iter()
                    .filter(|(k, _)| self.schema.attribute(k).is_some())
                    .collect();
                if let Some((name, v)) = info {
                    out.insert(name.into(), v);
                }
                // `name` stays as written: a full name reads back as one.
                if let Some(full) = full_name {
                    out.insert("name".into(), brickform_core::value::Value::from(full));
                }
                Ok(out)
            }
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
