//! `import` blocks: the id each import target is imported from.

use crate::addrs::InstanceAddr;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::engine::Engine;
use crate::engine::world::World;
use crate::lang::eval::Evaluator;
use crate::plan::InstanceKey;
use crate::value::Value;
use std::collections::BTreeMap;

impl Engine<'_> {
    /// The id to import, by instance address.
    pub(super) fn import_ids(
        &self,
        world: &World,
        diags: &mut Diagnostics,
    ) -> BTreeMap<InstanceAddr, String> {
        let mut out = BTreeMap::new();
        for i in &self.config.imports {
            let key = match &i.to_key {
                None => None,
                Some(k) => match Evaluator::new(world, &self.config.dir).eval(&k.expr) {
                    Ok(Value::String(s)) => Some(InstanceKey::Key(s)),
                    Ok(v) if v.as_i64().is_some() => {
                        Some(InstanceKey::Index(v.as_i64().unwrap_or(0) as usize))
                    }
                    Ok(_) | Err(_) => {
                        diags.push(Diagnostic::error("Invalid import address").at(k.span()).detail("The instance key of \"to\" must be a string or a number known at plan time."));
                        continue;
                    }
                },
            };
            let Some(resource) = self.config.resource_at(&i.to.target) else {
                diags.push(
                    Diagnostic::error("Configuration for import target does not exist")
                        .at(i.to.span.clone())
                        .detail(format!("The configuration for the given import target {} does not exist. All import targets must exist within the configuration.", i.to.target)),
                );
                continue;
            };
            match Evaluator::new(world, &self.config.dir).eval(&i.id.expr) {
                Ok(Value::String(id)) => {
                    out.insert(resource.addr().instance(key), id);
                }
                Ok(other) => diags.push(
                    Diagnostic::error("Invalid import id")
                        .at(i.id.span())
                        .detail(format!(
                            "The import id must be a string known at plan time, not {}.",
                            other.type_name()
                        )),
                ),
                Err(e) => diags.push(e.to_diagnostic(i.id.file)),
            }
        }
        out
    }
}
