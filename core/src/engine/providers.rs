//! Configuring the providers before anything is read: their blocks evaluated against their
//! schemas, the environment's settings over them, and who the development presets are for.

use crate::addrs::ConfigNode;
use crate::addrs::ProviderConfigAddr;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::engine::Engine;
use crate::engine::world::World;
use crate::lang::decode::Decoder;
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
        self.configure_providers_with(order, state, &[]).await
    }

    /// As [`Engine::configure_providers`], and configures the providers named in `also` even
    /// when nothing in the configuration or the state uses them yet (with no block of
    /// their own, from their defaults and environment, as for a resource without one).
    pub(super) async fn configure_providers_with(
        &self,
        order: &[ConfigNode],
        state: &StateDocument,
        also: &[&str],
    ) -> Diagnostics {
        let mut diags = Diagnostics::new();
        let world = self.provider_world(order);
        let mut settings = self.top_level_settings(&world, &mut diags);
        self.merge_environment_settings(&world, &mut settings, &mut diags);
        let mut used = self.used_by_resources(&mut diags);
        self.refused_by_configuration(&settings, &mut diags);
        if self.offline || diags.has_errors() {
            return diags;
        }
        used.extend(self.used_by_state(state));
        used.extend(settings.keys().cloned());
        used.extend(also.iter().map(|p| p.to_string()));
        self.configure_used(&used, settings, &mut diags).await;
        let used: HashSet<&str> = used
            .iter()
            .filter(|k| !ProviderConfigAddr::is_aliased(k))
            .map(String::as_str)
            .collect();
        if !diags.has_errors() && self.presets.get().is_none() {
            diags.extend(self.resolve_presets(&used).await);
        }
        diags
    }

    /// The world provider settings are evaluated in: variables and the root module's
    /// locals, not resources (none has been read yet).
    fn provider_world(&self, order: &[ConfigNode]) -> World {
        let config = &*self.config;
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
        world
    }

    /// The top-level `provider` blocks decoded, by provider configuration: `NAME`, or
    /// `NAME.ALIAS` for an aliased one. A block of an unknown provider, an alias its
    /// provider cannot have, or one that reads a resource is reported and left out.
    fn top_level_settings(
        &self,
        world: &World,
        diags: &mut Diagnostics,
    ) -> BTreeMap<String, Object> {
        let config = &*self.config;
        let mut settings: BTreeMap<String, Object> = BTreeMap::new();
        for (key, block) in &config.providers {
            let name = ProviderConfigAddr::name_of(key);
            let Some(provider) = self.registry.provider(name) else {
                let names: Vec<&str> = self.registry.providers.iter().map(|p| p.name()).collect();
                diags.push(
                    Diagnostic::error("Unknown provider")
                        .at(block.span.clone())
                        .detail(format!("There is no provider named \"{name}\"."))
                        .maybe_hint(crate::diagnostics::did_you_mean(name, names)),
                );
                continue;
            };
            if ProviderConfigAddr::is_aliased(key) && !self.aliases.contains_key(key) {
                diags.push(
                    Diagnostic::error("Provider aliases are not supported by this provider")
                        .at(block.span.clone())
                        .detail(format!(
                            "The provider \"{name}\" has one configuration only."
                        )),
                );
                continue;
            }
            if !reads_only_early_values(config, block, diags) {
                // Evaluating it would only repeat the same mistake as another error.
                continue;
            }
            let (decoded, d) = decode_settings(world, &config.dir, block, provider.as_ref());
            diags.extend(d);
            settings.insert(key.clone(), decoded);
        }
        settings
    }

    /// The environment's provider settings override the top-level ones, key by key (of
    /// each provider's default configuration); a null leaves the top-level value.
    fn merge_environment_settings(
        &self,
        world: &World,
        settings: &mut BTreeMap<String, Object>,
        diags: &mut Diagnostics,
    ) {
        for (name, block) in &self.settings.providers {
            let Some(provider) = self.registry.provider(name) else {
                diags.push(
                    Diagnostic::error("Unknown provider")
                        .at(block.span.clone())
                        .detail(format!("There is no provider named \"{name}\".")),
                );
                continue;
            };
            let (decoded, d) = decode_settings(world, &self.config.dir, block, provider.as_ref());
            diags.extend(d);
            let merged = settings.entry(provider.name().to_string()).or_default();
            for (k, v) in decoded {
                if !v.is_null() {
                    merged.insert(k, v);
                }
            }
        }
    }

    /// The provider configurations the resources use. Every aliased configuration a
    /// resource names must be declared, and be one of the provider its type belongs to.
    fn used_by_resources(&self, diags: &mut Diagnostics) -> HashSet<String> {
        let config = &*self.config;
        let mut used: HashSet<String> = HashSet::new();
        for r in config.resources.values() {
            if let (Some(written), Some(owner)) =
                (&r.provider_ref, self.registry.provider_of(&r.type_name))
            {
                let name = ProviderConfigAddr::name_of(written);
                if name != owner.name() {
                    let owner = owner.name();
                    diags.push(
                        Diagnostic::error("Invalid provider reference")
                            .at(r.provider_span.clone())
                            .detail(format!(
                                "A {} belongs to the provider \"{owner}\", not \"{name}\".",
                                r.type_name
                            ))
                            .hint(format!(
                                "write provider = {owner} (or {owner}.ALIAS), or leave it out"
                            )),
                    );
                    continue;
                }
            }
            let key = self.provider_key(r);
            let addr = ProviderConfigAddr::parse(&key);
            if addr.alias.is_some() && !config.providers.contains_key(&key) {
                diags.push(
                    Diagnostic::error("Provider configuration not present")
                        .at(r.span.clone())
                        .detail(format!(
                            "{} uses the provider configuration {key}, which is not declared: add provider \"{}\" {{ alias = \"{}\" … }} to the root module{}.",
                            r.address(),
                            addr.name,
                            addr.alias.as_deref().unwrap_or(""),
                            if r.module.is_root() { "" } else { ", and pass it to the module with providers = { … }" }
                        )),
                );
            }
            used.insert(key);
        }
        used
    }

    /// Resource blocks whose provider configuration cannot hold their kind, as the provider
    /// says from the configuration's settings (see [`crate::provider::Provider::refuses`]).
    fn refused_by_configuration(
        &self,
        settings: &BTreeMap<String, Object>,
        diags: &mut Diagnostics,
    ) {
        let none = Object::default();
        for r in self.config.resources.values() {
            let Some(provider) = self.registry.provider_of(&r.type_name) else {
                continue;
            };
            let key = self.provider_key(r);
            let data = r.mode == brickform_state::ResourceMode::Data;
            let written = settings.get(&key).unwrap_or(&none);
            if let Some(refusal) = provider.refuses(written, &r.type_name, data) {
                diags.push(
                    Diagnostic::error(format!(
                        "{} cannot use the provider configuration {key}",
                        r.address()
                    ))
                    .at(r.provider_span.clone().or_else(|| r.span.clone()))
                    .detail(format!("{}.", refusal.message))
                    .hint(refusal.hint),
                );
            }
        }
    }

    /// The provider configurations the state's resources were made through.
    fn used_by_state<'s>(&'s self, state: &'s StateDocument) -> impl Iterator<Item = String> + 's {
        state.resources().iter().map(|r| {
            match r.provider.as_str() {
                // States written before provider keys were recorded name the default.
                "" => self
                    .registry
                    .provider_of(r.type_name())
                    .map(|p| p.name().to_string())
                    .unwrap_or_default(),
                key => key.to_string(),
            }
        })
    }

    /// Configures every provider configuration in `used`, each with its settings (none: its
    /// defaults and environment); settings not known before apply cannot configure one.
    async fn configure_used(
        &self,
        used: &HashSet<String>,
        mut settings: BTreeMap<String, Object>,
        diags: &mut Diagnostics,
    ) {
        let mut configured: Vec<(String, &std::sync::Arc<dyn crate::provider::Provider>)> = self
            .registry
            .providers
            .iter()
            .map(|p| (p.name().to_string(), p))
            .collect();
        for (key, r) in self.aliases.iter() {
            for p in &r.providers {
                configured.push((key.clone(), p));
            }
        }
        for (key, p) in configured {
            if !used.contains(&key) {
                continue;
            }
            let s = settings.remove(&key).unwrap_or_default();
            if s.values().any(Value::contains_unknown) {
                diags.push(
                    Diagnostic::error(format!("Provider \"{key}\" configuration is not known"))
                        .detail("Its settings depend on values that are only known after apply."),
                );
                continue;
            }
            if let Err(e) = p.configure(&s).await {
                let span = self.config.providers.get(&key).and_then(|b| b.span.clone());
                diags.push(
                    Diagnostic::error(format!(
                        "Cannot configure provider \"{key}\": {}",
                        e.message
                    ))
                    .at(span)
                    .detail(e.detail.unwrap_or_default()),
                );
            }
        }
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

/// Whether a `provider` block reads only variables, locals, paths and brickform's own
/// values; each reference to anything else (a resource) is reported, since a provider's
/// settings must be known before any resource is read.
fn reads_only_early_values(
    config: &crate::lang::load::Config,
    block: &crate::lang::load::ProviderBlock,
    diags: &mut Diagnostics,
) -> bool {
    let refs = crate::lang::refs::body_refs(&block.body.body);
    let undeclared = crate::graph::undeclared_in_provider_block(config, &refs, block.body.file);
    let mut ok = undeclared.is_empty();
    for d in undeclared {
        diags.push(d);
    }
    for r in refs {
        let reads_resource = !matches!(r.root.as_str(), "var" | "local" | "path" | "brickform");
        if reads_resource {
            ok = false;
            diags.push(
                Diagnostic::error("Invalid provider configuration reference")
                    .at(r.span.map(|s| crate::source::Span::new(block.body.file, s)))
                    .detail("A provider block may only use variables, locals and brickform.environment; its values must be known before any resource is read."),
            );
        }
    }
    ok
}
