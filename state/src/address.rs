//! Resource and instance addresses: `TYPE.NAME`, `data.TYPE.NAME`, `TYPE.NAME[0]`,
//! `TYPE.NAME["key"]`, each possibly inside a module instance:
//! `module.src["mysql"].TYPE.NAME`.
//!
//! The types live in the state crate because state records them (`mode`, `index_key`) and
//! the engine (which depends on this crate) plans and applies by them: one mode and one
//! instance-key type serve both. The engine re-exports them as `brickform_core::addrs`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Whether a block is a managed `resource` or a `data` source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceMode {
    Managed,
    Data,
}

/// The key of one instance of a resource with `count` (a number) or `for_each` (a string).
/// Serialised bare (`0`, `"key"`), as Terraform writes `index_key`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InstanceKey {
    Index(usize),
    Key(String),
}

/// One step of a module path: `module.NAME`, `module.NAME[0]` or `module.NAME["key"]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModuleStep {
    pub name: String,
    pub key: Option<InstanceKey>,
}

/// A module instance: the root module (no steps) or a path of module calls with their
/// instance keys, `module.src["mysql"].module.conn`. Serialised as that text (empty for the
/// root), as Terraform writes a resource's `module`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModuleInstance(pub Vec<ModuleStep>);

impl ModuleInstance {
    /// The root module.
    pub fn root() -> ModuleInstance {
        ModuleInstance(Vec::new())
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The instance of the module call `name` (with `key`) inside this one.
    pub fn child(&self, name: &str, key: Option<InstanceKey>) -> ModuleInstance {
        let mut steps = self.0.clone();
        steps.push(ModuleStep {
            name: name.to_string(),
            key,
        });
        ModuleInstance(steps)
    }

    /// The module that calls this one, and the step that calls it; `None` for the root.
    pub fn parent(&self) -> Option<(ModuleInstance, &ModuleStep)> {
        let (last, rest) = self.0.split_last()?;
        Some((ModuleInstance(rest.to_vec()), last))
    }

    /// Whether `other` is this module instance or one inside it.
    pub fn contains(&self, other: &ModuleInstance) -> bool {
        other.0.starts_with(&self.0)
    }

    /// Whether `inner` is this module instance, lies inside it, or — when this path's last
    /// step has no key, as `module.src` — is any instance of that call or lies inside one.
    /// The root holds nothing: an address in the root is named by its resource.
    pub fn holds(&self, inner: &ModuleInstance) -> bool {
        let n = self.0.len();
        if n == 0 || inner.0.len() < n {
            return false;
        }
        self.0.iter().zip(&inner.0).enumerate().all(|(i, (c, m))| {
            c.name == m.name && (c.key == m.key || (i == n - 1 && c.key.is_none()))
        })
    }

    /// `inner` (which this holds) moved to `to`: this prefix replaced by `to`, the key of an
    /// instance kept when both name the call without one (`module.a` → `module.b` moves
    /// `module.a["x"]` to `module.b["x"]`).
    pub fn moved_to(&self, inner: &ModuleInstance, to: &ModuleInstance) -> ModuleInstance {
        let n = self.0.len();
        let mut steps = to.0.clone();
        if let (Some(last), Some(from_last), Some(matched)) = (
            steps.last_mut(),
            self.0.last(),
            inner.0.get(n.wrapping_sub(1)),
        ) && last.key.is_none()
            && from_last.key.is_none()
        {
            last.key = matched.key.clone();
        }
        steps.extend(inner.0.iter().skip(n).cloned());
        ModuleInstance(steps)
    }

    /// Reads `module.a`, `module.a["k"].module.b[0]`; the empty text is the root.
    pub fn parse(text: &str) -> Result<ModuleInstance, AddressError> {
        let (module, rest) = split_module(text)?;
        if !rest.is_empty() {
            return Err(AddressError {
                address: text.to_string(),
                reason: "expected module.NAME, optionally with an index",
            });
        }
        Ok(module)
    }
}

impl fmt::Display for ModuleInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "module.{}", step.name)?;
            if let Some(key) = &step.key {
                write!(f, "[{key}]")?;
            }
        }
        Ok(())
    }
}

impl Serialize for ModuleInstance {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ModuleInstance {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        ModuleInstance::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Reads the module steps at the start of an address: `module.a["k"].module.b.TYPE.NAME` →
/// (`module.a["k"].module.b`, `TYPE.NAME`). A text that is only a module address leaves
/// nothing.
pub fn split_module(text: &str) -> Result<(ModuleInstance, &str), AddressError> {
    let invalid = |reason: &'static str| AddressError {
        address: text.to_string(),
        reason,
    };
    let mut steps = Vec::new();
    let mut rest = text;
    while let Some(after) = rest.strip_prefix("module.") {
        let end = after.find(['.', '[']).unwrap_or(after.len());
        let name = &after[..end];
        if !is_identifier(name) {
            return Err(invalid("the module name is not an identifier"));
        }
        let mut tail = &after[end..];
        let mut key = None;
        if tail.starts_with('[') {
            let close =
                bracket_end(tail).ok_or_else(|| invalid("the module index is not closed"))?;
            let inner = &tail[1..close];
            key =
                Some(parse_key(inner).ok_or_else(|| {
                    invalid("the index must be a whole number or a quoted string")
                })?);
            tail = &tail[close + 1..];
        }
        steps.push(ModuleStep {
            name: name.to_string(),
            key,
        });
        rest = match tail.strip_prefix('.') {
            Some(r) => r,
            None if tail.is_empty() => tail,
            None => return Err(invalid("expected `.` after the module step")),
        };
    }
    Ok((ModuleInstance(steps), rest))
}

/// The position of the `]` that closes the `[` at the start of `text`, a quoted key's own
/// brackets and escaped quotes skipped.
fn bracket_end(text: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ']' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// A resource block's address: `TYPE.NAME` or `data.TYPE.NAME`, in its module instance.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceAddr {
    pub module: ModuleInstance,
    pub mode: ResourceMode,
    pub type_name: String,
    pub name: String,
}

/// One instance of a resource: its block's address and, with `count` or `for_each`, its key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstanceAddr {
    pub resource: ResourceAddr,
    pub key: Option<InstanceKey>,
}

/// Why a text is not an address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid resource address `{address}`: {reason}")]
pub struct AddressError {
    pub address: String,
    pub reason: &'static str,
}

impl ResourceAddr {
    /// A resource of the root module.
    pub fn new(mode: ResourceMode, type_name: &str, name: &str) -> ResourceAddr {
        ResourceAddr::in_module(ModuleInstance::root(), mode, type_name, name)
    }

    /// A resource of the module instance `module`.
    pub fn in_module(
        module: ModuleInstance,
        mode: ResourceMode,
        type_name: &str,
        name: &str,
    ) -> ResourceAddr {
        ResourceAddr {
            module,
            mode,
            type_name: type_name.to_string(),
            name: name.to_string(),
        }
    }

    /// Parses `TYPE.NAME` or `data.TYPE.NAME` (no instance key).
    pub fn parse(text: &str) -> Result<ResourceAddr, AddressError> {
        let addr = InstanceAddr::parse(text)?;
        match addr.key {
            None => Ok(addr.resource),
            Some(_) => Err(AddressError {
                address: text.to_string(),
                reason: "a resource address has no instance key",
            }),
        }
    }

    /// The resource of the instance whose address is `text` (read from the write-ahead log,
    /// the command line, or a record keyed by address text); `None` when it is no address.
    pub fn of_instance(text: &str) -> Option<ResourceAddr> {
        InstanceAddr::parse(text).ok().map(|a| a.resource)
    }

    /// The address of one instance of this resource.
    pub fn instance(&self, key: Option<InstanceKey>) -> InstanceAddr {
        InstanceAddr {
            resource: self.clone(),
            key,
        }
    }
}

impl InstanceAddr {
    pub fn parse(text: &str) -> Result<InstanceAddr, AddressError> {
        let invalid = |reason: &'static str| AddressError {
            address: text.to_string(),
            reason,
        };
        let (module, text_after) = split_module(text)?;
        let (mode, rest) = match text_after.strip_prefix("data.") {
            Some(rest) => (ResourceMode::Data, rest),
            None => (ResourceMode::Managed, text_after),
        };
        let (type_name, rest) = rest
            .split_once('.')
            .ok_or_else(|| invalid("expected TYPE.NAME"))?;
        // The name is an identifier, so the first `[` opens the key even when the key
        // itself holds brackets.
        let (name, index) = match rest.find('[') {
            Some(open) => (&rest[..open], Some(&rest[open..])),
            None => (rest, None),
        };
        if !is_identifier(type_name) {
            return Err(invalid("the type is not an identifier"));
        }
        if !is_identifier(name) {
            return Err(invalid("the name is not an identifier"));
        }
        let key = match index {
            None => None,
            Some(bracketed) => {
                let inner = bracketed
                    .strip_prefix('[')
                    .and_then(|s| s.strip_suffix(']'))
                    .ok_or_else(|| invalid("the index must be `[N]` or `[\"key\"]`"))?;
                Some(parse_key(inner).ok_or_else(|| {
                    invalid("the index must be a whole number or a quoted string")
                })?)
            }
        };
        Ok(InstanceAddr {
            resource: ResourceAddr::in_module(module, mode, type_name, name),
            key,
        })
    }

    /// The block's address as text, without the key: what configuration declares.
    pub fn base(&self) -> String {
        self.resource.to_string()
    }

    /// The address of `key`'s instance of `resource`.
    pub fn new(resource: ResourceAddr, key: Option<InstanceKey>) -> InstanceAddr {
        InstanceAddr { resource, key }
    }

    /// The resource this address names as a whole: an address without a key, whose text
    /// is its resource's too (a dependency names a resource this way, and every instance
    /// of it).
    pub fn whole(&self) -> Option<&ResourceAddr> {
        match self.key {
            None => Some(&self.resource),
            Some(_) => None,
        }
    }

    /// How this address's text orders against `text`, without writing the text out: state
    /// and plans list instances in the order of their text, as Terraform does, and look them
    /// up by it.
    pub fn cmp_text(&self, text: &str) -> std::cmp::Ordering {
        let mut cmp = TextCmp {
            rest: text,
            order: std::cmp::Ordering::Equal,
        };
        // The comparer never fails; it only stops comparing once the order is known.
        let _ = fmt::write(&mut cmp, format_args!("{self}"));
        match cmp.order {
            std::cmp::Ordering::Equal if !cmp.rest.is_empty() => std::cmp::Ordering::Less,
            order => order,
        }
    }
}

/// Compares text written to it with `rest`, piece by piece, keeping what is left of `rest`.
struct TextCmp<'a> {
    rest: &'a str,
    order: std::cmp::Ordering,
}

impl fmt::Write for TextCmp<'_> {
    fn write_str(&mut self, piece: &str) -> fmt::Result {
        if self.order.is_ne() {
            return Ok(());
        }
        let n = piece.len().min(self.rest.len());
        let (head, tail) = self.rest.as_bytes().split_at(n);
        self.order = piece.as_bytes()[..n].cmp(head);
        if self.order.is_eq() {
            if piece.len() > n {
                self.order = std::cmp::Ordering::Greater;
            } else {
                // `n` ends `piece`, a whole text, so it falls on a character boundary of
                // `rest` too (the bytes before it are equal).
                self.rest = std::str::from_utf8(tail).unwrap_or_default();
            }
        }
        Ok(())
    }
}

/// A record whose parts (module, mode, type, name, key) disagree with its address text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("resource `{address}`: its {part} `{found}` disagrees with the address")]
pub struct AddressMismatch {
    pub address: String,
    pub part: &'static str,
    pub found: String,
}

impl InstanceAddr {
    /// Reads an address recorded as text beside its parts (as the state file and saved plans
    /// keep both): the text, checked against each part it gives. A part recorded as `None` (a
    /// module left out for the root, as files written before modules) is taken from the text.
    pub fn from_recorded(
        address: &str,
        module: Option<&ModuleInstance>,
        mode: ResourceMode,
        type_name: &str,
        name: &str,
        key: &Option<InstanceKey>,
    ) -> Result<InstanceAddr, RecordedAddressError> {
        let addr = InstanceAddr::parse(address)?;
        let mismatch = |part: &'static str, found: String| {
            Err(RecordedAddressError::Mismatch(AddressMismatch {
                address: address.to_string(),
                part,
                found,
            }))
        };
        let r = &addr.resource;
        if let Some(m) = module
            && *m != r.module
        {
            return mismatch("module", m.to_string());
        }
        if mode != r.mode {
            return mismatch("mode", mode.to_string());
        }
        if type_name != r.type_name {
            return mismatch("type", type_name.to_string());
        }
        if name != r.name {
            return mismatch("name", name.to_string());
        }
        if *key != addr.key {
            return mismatch(
                "index key",
                key.as_ref()
                    .map_or_else(|| "null".to_string(), |k| k.to_string()),
            );
        }
        Ok(addr)
    }
}

/// Why a recorded address cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordedAddressError {
    #[error(transparent)]
    Invalid(#[from] AddressError),
    #[error(transparent)]
    Mismatch(#[from] AddressMismatch),
    #[error(transparent)]
    Field(#[from] FieldAddressError),
}

/// A record's field (`dependencies`, `moved_from`, …) holding a text that is no address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("resource `{address}`: its {field}: {source}")]
pub struct FieldAddressError {
    /// The record's own address, to find it by.
    pub address: String,
    pub field: &'static str,
    pub source: AddressError,
}

impl FieldAddressError {
    /// Reads the text `text` of field `field` of the record at `address` with `parse`, so a
    /// malformed one is refused naming where it was found.
    pub fn parse<T>(
        address: &InstanceAddr,
        field: &'static str,
        text: &str,
        parse: fn(&str) -> Result<T, AddressError>,
    ) -> Result<T, FieldAddressError> {
        parse(text).map_err(|source| FieldAddressError {
            address: address.to_string(),
            field,
            source,
        })
    }
}

/// The field names under which a record writes an address as text and in parts: the state
/// file and saved plans name them differently (`type` / `type_name`, `index_key` / `index`).
pub struct PartNames {
    pub address: &'static str,
    pub module: &'static str,
    pub mode: &'static str,
    pub type_name: &'static str,
    pub name: &'static str,
    pub key: &'static str,
}

impl InstanceAddr {
    /// Writes this address into a record being serialised, as text and then in parts (the
    /// module left out for the root), under `names`: the one writer of a recorded address,
    /// so the state file and saved plans cannot come to disagree on its shape.
    pub fn serialize_parts<S: serde::ser::SerializeStruct>(
        &self,
        out: &mut S,
        names: &PartNames,
    ) -> Result<(), S::Error> {
        let r = &self.resource;
        out.serialize_field(names.address, &self.to_string())?;
        if r.module.is_root() {
            out.skip_field(names.module)?;
        } else {
            out.serialize_field(names.module, &r.module)?;
        }
        out.serialize_field(names.mode, &r.mode)?;
        out.serialize_field(names.type_name, &r.type_name)?;
        out.serialize_field(names.name, &r.name)?;
        out.serialize_field(names.key, &self.key)
    }
}

/// Written as its text (`module.m.TYPE.NAME[0]`), as records name other instances.
impl Serialize for InstanceAddr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Written as its text (`module.m.TYPE.NAME`), as records name the resources they depend on.
impl Serialize for ResourceAddr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Read from its text, as [`Serialize`] writes it; a malformed one is refused with the reason.
impl<'de> Deserialize<'de> for InstanceAddr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        InstanceAddr::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Sorts resource addresses by their text, the order records list them in (a dependency
/// list is written sorted, and reads back byte for byte only in that order).
pub fn sort_by_text(addrs: &mut [ResourceAddr]) {
    addrs.sort_by_cached_key(ResourceAddr::to_string);
}

/// What `--target` names: one instance, every instance of a resource, or everything in a
/// module instance (`module.src["a"]`) or in every instance of a module call (`module.src`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Instance(InstanceAddr),
    Resource(ResourceAddr),
    Module(ModuleInstance),
}

impl Target {
    /// Reads a target as the command line gives it.
    pub fn parse(text: &str) -> Result<Target, AddressError> {
        if let Ok((module, "")) = split_module(text)
            && !module.is_root()
        {
            return Ok(Target::Module(module));
        }
        let addr = InstanceAddr::parse(text)?;
        Ok(match addr.key {
            Some(_) => Target::Instance(addr),
            None => Target::Resource(addr.resource),
        })
    }

    /// Whether this names the instance `addr`: the instance itself, its resource, or a module
    /// it lies in.
    pub fn matches(&self, addr: &InstanceAddr) -> bool {
        match self {
            Target::Instance(i) => i == addr,
            Target::Resource(r) => *r == addr.resource,
            Target::Module(m) => m.holds(&addr.resource.module),
        }
    }

    /// Whether this names the resource block `resource`, or one of its instances, or a module
    /// it lies in.
    pub fn selects(&self, resource: &ResourceAddr) -> bool {
        match self {
            Target::Instance(i) => i.resource == *resource,
            Target::Resource(r) => r == resource,
            Target::Module(m) => m.holds(&resource.module),
        }
    }
}

fn parse_key(inner: &str) -> Option<InstanceKey> {
    if inner.starts_with('"') {
        return unquote(inner).map(InstanceKey::Key);
    }
    // Digits only: `+1` and ` 1` are not indexes.
    if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) {
        return inner.parse::<usize>().ok().map(InstanceKey::Index);
    }
    None
}

/// A quoted string as [`quote`] writes it; the JSON escapes (`\u0001`, `\/`, `\b`, `\f`) are
/// read too, as addresses written by Terraform and by older versions use them.
fn unquote(text: &str) -> Option<String> {
    let body = text.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => match chars.next()? {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                '/' => out.push('/'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'u' => {
                    let high = hex4(&mut chars)?;
                    let code = if (0xD800..0xDC00).contains(&high) {
                        if chars.next()? != '\\' || chars.next()? != 'u' {
                            return None;
                        }
                        let low = hex4(&mut chars)?;
                        if !(0xDC00..0xE000).contains(&low) {
                            return None;
                        }
                        0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        high
                    };
                    out.push(char::from_u32(code)?);
                }
                _ => return None,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let mut n = 0;
    for _ in 0..4 {
        n = n * 16 + chars.next()?.to_digit(16)?;
    }
    Some(n)
}

/// A string as an HCL quoted literal: `"`, `\` and the line and tab controls escaped, any
/// other control character as `\uNNNN` (so a value holding a terminal escape sequence cannot
/// act on the terminal that shows it), the rest as is. The one quoting of instance keys and of
/// string values in plans and in the console.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl fmt::Display for ResourceMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResourceMode::Managed => "managed",
            ResourceMode::Data => "data",
        })
    }
}

impl fmt::Display for InstanceKey {
    /// The key as written between the brackets: `0`, `"key"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceKey::Index(i) => write!(f, "{i}"),
            InstanceKey::Key(k) => f.write_str(&quote(k)),
        }
    }
}

impl fmt::Display for ResourceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.is_root() {
            write!(f, "{}.", self.module)?;
        }
        if self.mode == ResourceMode::Data {
            f.write_str("data.")?;
        }
        write!(f, "{}.{}", self.type_name, self.name)
    }
}

impl fmt::Display for InstanceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.resource)?;
        match &self.key {
            None => Ok(()),
            Some(key) => write!(f, "[{key}]"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form_and_round_trips() {
        for text in [
            "databricks_catalog.main",
            "databricks_job.etl[0]",
            "sdp_meta_flow.orders[\"eu.orders\"]",
            "data.databricks_current_user.me",
            "t.n[\"a[b]\\\"c\\\\d\\n\"]",
            "module.src.t.n",
            "module.src[\"my.sql\"].module.inner[2].data.t.n[\"k\"]",
            "module.a[\"x]\\\"y\"].t.n[0]",
        ] {
            let address = InstanceAddr::parse(text).unwrap();
            assert_eq!(address.to_string(), text);
        }
        let a = InstanceAddr::parse("data.t.n[\"k\"]").unwrap();
        assert_eq!(a.resource.mode, ResourceMode::Data);
        assert_eq!(a.key, Some(InstanceKey::Key("k".into())));
        assert_eq!(a.base(), "data.t.n");
    }

    #[test]
    fn a_control_character_is_escaped_and_read_back() {
        let key = "a\u{1b}[31mred\u{7}";
        let quoted = quote(key);
        assert_eq!(quoted, "\"a\\u001b[31mred\\u0007\"");
        assert!(!quoted.chars().any(char::is_control));
        let a = InstanceAddr::parse(&format!("t.n[{quoted}]")).unwrap();
        assert_eq!(a.key, Some(InstanceKey::Key(key.into())));
    }

    #[test]
    fn reads_json_escapes() {
        let a = InstanceAddr::parse("t.n[\"\\u0001\\/\\ud83d\\ude00\"]").unwrap();
        assert_eq!(a.key, Some(InstanceKey::Key("\u{1}/😀".into())));
    }

    #[test]
    fn rejects_malformed() {
        for text in [
            "nodot",
            "t.",
            "t.n[",
            "t.n[x]",
            "t.n[1]x",
            "1t.n",
            "t.n[-1]",
            "t.n[+1]",
            "t.n[\"a\"b\"]",
            "t.n[\"\\q\"]",
            "t.n[\"\\ud800\"]",
        ] {
            assert!(
                InstanceAddr::parse(text).is_err(),
                "{text} should be rejected"
            );
        }
        assert!(ResourceAddr::parse("t.n[0]").is_err());
        for text in [
            "module.t.n",
            "module..t.n",
            "module.m[x].t.n",
            "module.m[0]t.n",
        ] {
            assert!(
                InstanceAddr::parse(text).is_err(),
                "{text} should be rejected"
            );
        }
    }

    #[test]
    fn module_instances_parse_and_nest() {
        let m = ModuleInstance::parse("module.a[\"k\"].module.b").unwrap();
        assert_eq!(m.to_string(), "module.a[\"k\"].module.b");
        let (parent, step) = m.parent().unwrap();
        assert_eq!(parent.to_string(), "module.a[\"k\"]");
        assert_eq!(step.name, "b");
        assert!(parent.contains(&m));
        assert!(!m.contains(&parent));
        assert!(ModuleInstance::parse("").unwrap().is_root());
        assert!(ModuleInstance::parse("module.a.t.n").is_err());
        let a = InstanceAddr::parse("module.a[\"k\"].module.b.t.n").unwrap();
        assert_eq!(a.resource.module, m);
        let call = ModuleInstance::parse("module.a").unwrap();
        assert!(call.holds(&m));
        assert!(!ModuleInstance::parse("module.a[\"j\"]").unwrap().holds(&m));
        assert!(!ModuleInstance::root().holds(&m));
        let to = ModuleInstance::parse("module.z").unwrap();
        assert_eq!(
            call.moved_to(&m, &to).to_string(),
            "module.z[\"k\"].module.b"
        );
    }

    #[test]
    fn compares_with_text_as_its_text_would() {
        use std::cmp::Ordering::*;
        let a = InstanceAddr::parse("module.m[\"k\"].t.n[2]").unwrap();
        for (text, order) in [
            ("module.m[\"k\"].t.n[2]", Equal),
            ("module.m[\"k\"].t.n[2]x", Less),
            ("module.m[\"k\"].t.n[10]", Greater),
            ("module.m[\"k\"].t.n", Greater),
            ("module.m[\"k\"]", Greater),
            ("module.m[\"j\"].t.n[3]", Greater),
            ("t.n", Less),
            ("", Greater),
            ("module.m[\"k\"].t.n[2é", Less),
        ] {
            assert_eq!(a.cmp_text(text), order, "{text}");
            assert_eq!(a.cmp_text(text), a.to_string().as_str().cmp(text), "{text}");
        }
    }

    #[test]
    fn a_recorded_address_agrees_with_its_parts() {
        let m = ModuleInstance::parse("module.m").unwrap();
        let key = Some(InstanceKey::Index(1));
        let ok = InstanceAddr::from_recorded(
            "module.m.t.n[1]",
            Some(&m),
            ResourceMode::Managed,
            "t",
            "n",
            &key,
        );
        assert_eq!(ok.unwrap(), InstanceAddr::parse("module.m.t.n[1]").unwrap());
        // The module is left out for the root, and by files written before modules.
        let root = InstanceAddr::from_recorded("t.n", None, ResourceMode::Managed, "t", "n", &None);
        assert_eq!(root.unwrap(), InstanceAddr::parse("t.n").unwrap());
        let err = InstanceAddr::from_recorded("t.n", None, ResourceMode::Data, "t", "n", &None)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "resource `t.n`: its mode `data` disagrees with the address"
        );
    }

    #[test]
    fn a_target_names_an_instance_a_resource_or_a_module() {
        let a = |t: &str| InstanceAddr::parse(t).unwrap();
        let t = |t: &str| Target::parse(t).unwrap();
        assert!(t("t.n").matches(&a("t.n")));
        assert!(t("t.n").matches(&a("t.n[0]")));
        assert!(!t("t.n").matches(&a("t.m")));
        assert!(!t("t.n").matches(&a("data.t.n")));
        assert!(!t("t.n").matches(&a("module.m.t.n")));
        assert!(t("t.n[0]").matches(&a("t.n[0]")));
        assert!(!t("t.n[0]").matches(&a("t.n[1]")));
        assert!(!t("t.n[0]").matches(&a("t.n")));
        assert!(t("module.m").matches(&a("module.m[\"x\"].module.k.t.n[0]")));
        assert!(t("module.m[\"x\"]").matches(&a("module.m[\"x\"].t.n")));
        assert!(!t("module.m[\"x\"]").matches(&a("module.m[\"y\"].t.n")));
        assert!(!t("module.m").matches(&a("t.n")));
        assert!(t("t.n[0]").selects(&a("t.n").resource));
        assert!(!t("t.n[0]").selects(&a("t.m").resource));
        assert!(t("module.m").selects(&a("module.m.t.n").resource));
        for bad in ["", "t", "module.", "t.n[", "module.m.t"] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }
}
