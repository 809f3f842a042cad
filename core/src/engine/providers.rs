//! Configuring the providers before anything is read: their blocks evaluated against their
//! schemas, the environment's settings over them, and who the development presets are for.

use crate::addrs::ConfigNode;
use crate::engine::Engine;
use crate::engine::world::World;
use crate::lang::decode::Decoder;
use crate::lang::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::eval::Evaluator;
use crate::value::{Object, Value};
use brickform_state::StateDocument;
use std::collections::{BTreeMap, HashSet};

impl Engine<'_> {
    /// Evaluates each `provider` block against its provider's schema and, unless offline,
    /// configures every provider the configuration or the state uses.
    pub(super) async fn configure_providers(
        &self,
        order: &[ConfigNode],
        state: &StateDocument,
    ) -> Diagnostics {
        let config = &*self.config;
        let mut diags = Diagnostics::new();
        // Provider settings may read variables and locals, not resources.
        let mut world = World::new(
            self.vars.values.clone(),
            self.vars.sensitive.clone(),
            &self.environment,
            &config.dir,
            self.registry,
        );
        for id in order {
            if let ConfigNode::Local(s) = id
                && s.module.is_root()
                && let Some(l) = config.local(s)
            {
                // Errors are reported by the plan, which evaluates locals again.
                let _ = world.evaluate_local(&s.module, &s.name, &l.expr.expr, &config.dir);
            }
        }
        let mut settings: BTreeMap<&str, Object> = BTreeMap::new();
        for (name, block) in &config.providers {
            let Some(provider) = self.registry.provider(name) else {
                let names: Vec<&str> = self.registry.providers.iter().map(|p| p.name()).collect();
                diags.push(
                    Diagnostic::error("Unknown provider")
                        .at(block.span.clone())
                        .detail(format!("There is no provider named \"{name}\"."))
                        .maybe_hint(crate::lang::diagnostics::did_you_mean(name, names)),
                );
                continue;
            };
            let mut bad_reference = false;
            for r in crate::lang::refs::body_refs(&block.body.body) {
                let reads_resource =
                    !matches!(r.root.as_str(), "var" | "local" | "path" | "brickform");
                if reads_resource {
                    bad_reference = true;
                    diags.push(
                        Diagnostic::error("Invalid provider configuration reference")
                            .at(r.span.map(|s| crate::lang::source::Span::new(block.body.file, s)))
                            .detail("A provider block may only use variables, locals and brickform.environment; its values must be known before any resource is read."),
                    );
                }
            }
            if bad_reference {
                // Evaluating it would only repeat the same mistake as another error.
                continue;
            }
            let (decoded, d) = decode_settings(&world, &config.dir, block, provider.as_ref());
            diags.extend(d);
            settings.insert(provider.name(), decoded);
        }
        // The environment's provider settings override the top-level ones, key by key.
        for (name, block) in &self.settings.providers {
            let Some(provider) = self.registry.provider(name) else {
                diags.push(
                    Diagnostic::error("Unknown provider")
                        .at(block.span.clone())
                        .detail(format!("There is no provider named \"{name}\".")),
                );
                continue;
            };
            let (decoded, d) = decode_settings(&world, &config.dir, block, provider.as_ref());
            diags.extend(d);
            let merged = settings.entry(provider.name()).or_default();
            for (k, v) in decoded {
                if !v.is_null() {
                    merged.insert(k, v);
                }
            }
        }
        if self.offline || diags.has_errors() {
            return diags;
        }
        let used: HashSet<&str> = config
            .resources
            .values()
            .filter_map(|r| self.registry.provider_of(&r.type_name).map(|p| p.name()))
            .chain(state.resources().iter().filter_map(|r| {
                self.registry
                    .provider_of(&r.resource_type)
                    .map(|p| p.name())
            }))
            .chain(settings.keys().copied())
            .collect();
        for p in &self.registry.providers {
            if !used.contains(p.name()) {
                continue;
            }
            let s = settings.remove(p.name()).unwrap_or_default();
            if s.values().any(Value::contains_unknown) {
                diags.push(
                    Diagnostic::error(format!(
                        "Provider \"{}\" configuration is not known",
                        p.name()
                    ))
                    .detail("Its settings depend on values that are only known after apply."),
                );
                continue;
            }
            if let Err(e) = p.configure(&s).await {
                let span = config.providers.get(p.name()).and_then(|b| b.span.clone());
                diags.push(
                    Diagnostic::error(format!(
                        "Cannot configure provider \"{}\": {}",
                        p.name(),
                        e.message
                    ))
                    .at(span)
                    .detail(e.detail.unwrap_or_default()),
                );
            }
        }
        if !diags.has_errors() && self.presets.get().is_none() {
            diags.extend(self.resolve_presets(&used).await);
        }
        diags
    }

    /// In development mode, asks the providers whose user the presets name.
    async fn resolve_presets(&self, used: &HashSet<&str>) -> Diagnostics {
        let mut diags = Diagnostics::new();
        if self.settings.mode != Some(crate::lang::environment::EnvMode::Development) {
            let _ = self.presets.set(None);
            return diags;
        }
        let mut user = None;
        for p in self
            .registry
            .providers
            .iter()
            .filter(|p| used.contains(p.name()))
        {
            match p.current_user().await {
                Ok(Some(u)) => {
                    user = Some(u);
                    break;
                }
                Ok(None) => {}
                Err(e) => diags.push(
                    Diagnostic::error(format!(
                        "Cannot tell who you are for the development presets of environment \"{}\": {}",
                        self.environment, e.message
                    ))
                    .at(self.settings.span.clone()),
                ),
            }
        }
        let _ = self
            .presets
            .set(user.map(|u| crate::provider::Presets::new(&u, &self.settings.settings)));
        diags
    }
}

/// A `provider` block (top-level or an environment's) evaluated against its provider's schema.
fn decode_settings(
    world: &World,
    dir: &std::path::Path,
    block: &crate::lang::load::ProviderBlock,
    provider: &dyn crate::provider::Provider,
) -> (Object, Diagnostics) {
    let mut ev = Evaluator::new(world, dir);
    let header = block.span.as_ref().map(|s| s.range.clone());
    let (decoded, d) = Decoder::new(&mut ev, block.body.file).decode(
        &block.body.body,
        provider.config_schema(),
        header,
    );
    (decoded.value, d)
}
