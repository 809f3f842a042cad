//! Typed addresses: resources, their instances, and the nodes of the configuration graph.
//!
//! The resource and instance addresses, the mode and the instance key are defined in the
//! state crate (state records them, and this crate depends on it) and re-exported here, so
//! plan, state and graph share one of each. [`ConfigNode`] is the engine's own: what a node of
//! the configuration graph stands for.

use std::fmt;

pub use brickform_state::address::{
    AddressError, FieldAddressError, InstanceAddr, InstanceKey, ModuleInstance, ModuleStep,
    PartNames, RecordedAddressError, ResourceAddr, ResourceMode, Target, quote, sort_by_text,
    split_module,
};

/// A provider configuration: a provider's default one (`NAME`), or one of its aliased ones
/// (`NAME.ALIAS`). Configurations are keyed by its text form; the two parts are read from
/// it here, and nowhere else.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProviderConfigAddr {
    pub name: String,
    pub alias: Option<String>,
}

impl ProviderConfigAddr {
    pub fn new(name: &str, alias: Option<&str>) -> Self {
        ProviderConfigAddr {
            name: name.to_string(),
            alias: alias.map(str::to_string),
        }
    }

    /// The configuration a key (`NAME` or `NAME.ALIAS`) names. A provider's name holds no
    /// dot, so the first one ends it.
    pub fn parse(key: &str) -> Self {
        match key.split_once('.') {
            Some((name, alias)) => Self::new(name, Some(alias)),
            None => Self::new(key, None),
        }
    }

    /// The provider's name (`NAME` of `NAME.ALIAS`) of a key, without building the address.
    pub fn name_of(key: &str) -> &str {
        key.split_once('.').map_or(key, |(name, _)| name)
    }

    /// Whether a key names an aliased configuration.
    pub fn is_aliased(key: &str) -> bool {
        key.contains('.')
    }
}

impl fmt::Display for ProviderConfigAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.alias {
            Some(alias) => write!(f, "{}.{alias}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// A named value of one module instance: a variable, a local or an output.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Scoped {
    pub module: ModuleInstance,
    pub name: String,
}

impl Scoped {
    pub fn new(module: &ModuleInstance, name: &str) -> Scoped {
        Scoped {
            module: module.clone(),
            name: name.to_string(),
        }
    }

    /// A value of the root module.
    pub fn root(name: &str) -> Scoped {
        Scoped::new(&ModuleInstance::root(), name)
    }

    /// How the value is written: `var.x`, `module.m["k"].local.y` (`prefix` is `var`,
    /// `local` or `output`).
    pub fn text(&self, prefix: &str) -> String {
        if self.module.is_root() {
            format!("{prefix}.{}", self.name)
        } else {
            format!("{}.{prefix}.{}", self.module, self.name)
        }
    }
}

/// One node of the configuration graph: `TYPE.NAME`, `data.TYPE.NAME`, `var.NAME`,
/// `local.NAME` or `output.NAME`, each in its module instance (`module.m.var.NAME`).
/// Displays as the id the graph, its errors and `graph` output show.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConfigNode {
    /// A managed resource or a data source (by its mode).
    Resource(ResourceAddr),
    /// An input variable: the root's, or a module's, set by its call.
    Variable(Scoped),
    Local(Scoped),
    /// An output: the root's, or a module's, read by its caller as `module.NAME.OUTPUT`.
    Output(Scoped),
}

impl ConfigNode {
    /// Reads a node id. Lexical: a resource's type and name are taken as
    /// the configuration declared them (the loader reports invalid names itself). `None`
    /// for a text that is none of the forms.
    pub fn parse(id: &str) -> Option<ConfigNode> {
        let (module, id) = split_module(id).ok()?;
        if let Some(name) = id.strip_prefix("var.") {
            return Some(ConfigNode::Variable(Scoped::new(&module, name)));
        }
        if let Some(name) = id.strip_prefix("local.") {
            return Some(ConfigNode::Local(Scoped::new(&module, name)));
        }
        if let Some(name) = id.strip_prefix("output.") {
            return Some(ConfigNode::Output(Scoped::new(&module, name)));
        }
        let (mode, rest) = match id.strip_prefix("data.") {
            Some(rest) => (ResourceMode::Data, rest),
            None => (ResourceMode::Managed, id),
        };
        let (type_name, name) = rest.split_once('.')?;
        Some(ConfigNode::Resource(ResourceAddr::in_module(
            module, mode, type_name, name,
        )))
    }

    /// The module instance the node belongs to.
    pub fn module(&self) -> &ModuleInstance {
        match self {
            ConfigNode::Resource(r) => &r.module,
            ConfigNode::Variable(s) | ConfigNode::Local(s) | ConfigNode::Output(s) => &s.module,
        }
    }

    /// The resource this node is, when it is one (a managed resource or a data source).
    pub fn resource(&self) -> Option<&ResourceAddr> {
        match self {
            ConfigNode::Resource(r) => Some(r),
            _ => None,
        }
    }
}

impl fmt::Display for ConfigNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigNode::Resource(r) => write!(f, "{r}"),
            ConfigNode::Variable(n) => f.write_str(&n.text("var")),
            ConfigNode::Local(n) => f.write_str(&n.text("local")),
            ConfigNode::Output(n) => f.write_str(&n.text("output")),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_configuration_reads_and_writes_its_two_parts() {
        let default = ProviderConfigAddr::parse("databricks");
        assert_eq!(default, ProviderConfigAddr::new("databricks", None));
        assert_eq!(default.to_string(), "databricks");
        let aliased = ProviderConfigAddr::parse("databricks.prod");
        assert_eq!(aliased.name, "databricks");
        assert_eq!(aliased.alias.as_deref(), Some("prod"));
        assert_eq!(aliased.to_string(), "databricks.prod");
        assert_eq!(ProviderConfigAddr::name_of("databricks.prod"), "databricks");
        assert_eq!(ProviderConfigAddr::name_of("databricks"), "databricks");
        assert!(ProviderConfigAddr::is_aliased("databricks.prod"));
        assert!(!ProviderConfigAddr::is_aliased("databricks"));
    }
    use proptest::prelude::*;

    #[test]
    fn node_ids_round_trip_and_tell_resources_apart() {
        for (text, resource) in [
            ("t.n", true),
            ("data.t.n", true),
            ("var.env", false),
            ("local.cat", false),
            ("output.o", false),
            ("module.m[\"k\"].var.x", false),
            ("module.m.module.n[0].local.y", false),
            ("module.m.output.o", false),
            ("module.m[\"a.b\"].data.t.n", true),
        ] {
            let id = ConfigNode::parse(text).unwrap();
            assert_eq!(id.to_string(), text);
            assert_eq!(id.resource().is_some(), resource, "{text}");
        }
        assert_eq!(
            ConfigNode::parse("data.t.n")
                .unwrap()
                .resource()
                .unwrap()
                .mode,
            ResourceMode::Data
        );
        assert_eq!(ConfigNode::parse("nodot"), None);
    }

    #[test]
    fn instance_keys_format_as_the_plan_shows_them() {
        let r = ResourceAddr::new(ResourceMode::Managed, "t", "n");
        assert_eq!(r.instance(None).to_string(), "t.n");
        assert_eq!(
            r.instance(Some(InstanceKey::Index(2))).to_string(),
            "t.n[2]"
        );
        assert_eq!(
            r.instance(Some(InstanceKey::Key("a\"b\\c\nd".into())))
                .to_string(),
            "t.n[\"a\\\"b\\\\c\\nd\"]"
        );
    }

    fn identifier() -> impl Strategy<Value = String> {
        "[a-zA-Z_][a-zA-Z0-9_-]{0,12}"
    }

    fn instance_addr() -> impl Strategy<Value = InstanceAddr> {
        let mode = prop_oneof![Just(ResourceMode::Managed), Just(ResourceMode::Data)];
        let key = prop_oneof![
            Just(None),
            any::<usize>().prop_map(|i| Some(InstanceKey::Index(i))),
            any::<String>().prop_map(|k| Some(InstanceKey::Key(k))),
        ];
        (mode, identifier(), identifier(), key).prop_map(|(mode, t, n, key)| InstanceAddr {
            resource: ResourceAddr::new(mode, &t, &n),
            key,
        })
    }

    proptest! {
        #[test]
        fn instance_addresses_round_trip(addr in instance_addr()) {
            let text = addr.to_string();
            prop_assert_eq!(InstanceAddr::parse(&text), Ok(addr.clone()));
            prop_assert_eq!(ResourceAddr::of_instance(&text), Some(addr.resource.clone()));
            prop_assert_eq!(addr.resource.instance(addr.key.clone()).to_string(), text.clone());
            let id = ConfigNode::parse(&addr.resource.to_string()).unwrap();
            prop_assert_eq!(id, ConfigNode::Resource(addr.resource.clone()));
        }

        #[test]
        fn any_text_parses_or_is_refused_without_panic(text in any::<String>()) {
            if let Ok(a) = InstanceAddr::parse(&text) {
                prop_assert_eq!(InstanceAddr::parse(&a.to_string()), Ok(a));
            }
            let _ = crate::addrs::Target::parse(&text);
            let _ = ConfigNode::parse(&text);
        }
    }
}
