//! Change tracking for the workspace state, and the journal records built from it.
//!
//! Every collection of the state is a [`Tracked`] map: it remembers which keys were written
//! or removed since the last persist. A mutation then costs one journal line holding just
//! those entries, instead of a rewrite of the whole workspace file.

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Display};
use std::marker::PhantomData;
use std::ops::Deref;
use std::str::FromStr;

/// A `BTreeMap` that records the keys changed through it. Reads go through `Deref`; every
/// way to change it marks what it touches.
#[derive(Debug, Clone)]
pub struct Tracked<K: Ord, V> {
    map: BTreeMap<K, V>,
    changed: BTreeSet<K>,
}

impl<K: Ord, V> Default for Tracked<K, V> {
    fn default() -> Self {
        Tracked {
            map: BTreeMap::new(),
            changed: BTreeSet::new(),
        }
    }
}

impl<K: Ord, V> Deref for Tracked<K, V> {
    type Target = BTreeMap<K, V>;
    fn deref(&self) -> &BTreeMap<K, V> {
        &self.map
    }
}

impl<K: Ord + Clone, V> Tracked<K, V> {
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        self.changed.insert(k.clone());
        self.map.insert(k, v)
    }

    pub fn remove<Q>(&mut self, k: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let (key, v) = self.map.remove_entry(k)?;
        self.changed.insert(key);
        Some(v)
    }

    pub fn get_mut<Q>(&mut self, k: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let (key, _) = self.map.get_key_value(k)?;
        self.changed.insert(key.clone());
        self.map.get_mut(k)
    }
}

impl<K: Ord + Serialize, V: Serialize> Serialize for Tracked<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.map.serialize(s)
    }
}

/// Keys are read from their text with `FromStr`, as the journal's are: the state flattens
/// each domain's tables into the workspace file, and serde hands a flattened map's keys
/// over as strings, which an integer key's own `Deserialize` refuses.
impl<'de, K: Ord + FromStr, V: Deserialize<'de>> Deserialize<'de> for Tracked<K, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Tracked {
            map: d.deserialize_map(MapVisitor(PhantomData))?,
            changed: BTreeSet::new(),
        })
    }
}

struct MapVisitor<K, V>(PhantomData<(K, V)>);

impl<'de, K: Ord + FromStr, V: Deserialize<'de>> Visitor<'de> for MapVisitor<K, V> {
    type Value = BTreeMap<K, V>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Self::Value, A::Error> {
        let mut map = BTreeMap::new();
        while let Some(k) = entries.next_key_seed(KeySeed(PhantomData))? {
            map.insert(k, entries.next_value()?);
        }
        Ok(map)
    }
}

/// One key of a [`Tracked`] map, read from its text.
struct KeySeed<K>(PhantomData<K>);

impl<'de, K: FromStr> DeserializeSeed<'de> for KeySeed<K> {
    type Value = K;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<K, D::Error> {
        d.deserialize_str(self)
    }
}

impl<K: FromStr> Visitor<'_> for KeySeed<K> {
    type Value = K;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map key")
    }

    fn visit_str<E: de::Error>(self, k: &str) -> Result<K, E> {
        K::from_str(k).map_err(|_| E::custom(format!("bad key {k:?}")))
    }
}

/// What the journal needs of a collection, whatever its key and value types.
pub trait Journaled {
    fn has_changes(&self) -> bool;
    /// The changed entries: key → value, or `null` for a removed key.
    fn changes(&self) -> serde_json::Result<Map<String, Value>>;
    fn clear_changes(&mut self);
    /// Replays [`Journaled::changes`] output; the replayed entries are not marked.
    fn apply(&mut self, changes: Map<String, Value>) -> Result<(), ReplayError>;
}

impl<K, V> Journaled for Tracked<K, V>
where
    K: Ord + Clone + Display + FromStr,
    V: Serialize + DeserializeOwned,
{
    fn has_changes(&self) -> bool {
        !self.changed.is_empty()
    }

    fn changes(&self) -> serde_json::Result<Map<String, Value>> {
        let mut out = Map::new();
        for k in &self.changed {
            let v = match self.map.get(k) {
                Some(v) => serde_json::to_value(v)?,
                None => Value::Null,
            };
            out.insert(k.to_string(), v);
        }
        Ok(out)
    }

    fn clear_changes(&mut self) {
        self.changed.clear();
    }

    fn apply(&mut self, changes: Map<String, Value>) -> Result<(), ReplayError> {
        for (k, v) in changes {
            let Ok(key) = K::from_str(&k) else {
                return Err(ReplayError::BadKey { key: k });
            };
            if v.is_null() {
                self.map.remove(&key);
            } else {
                let v = serde_json::from_value(v)
                    .map_err(|source| ReplayError::BadValue { key: k, source })?;
                self.map.insert(key, v);
            }
        }
        Ok(())
    }
}

/// Why a journal record cannot be replayed into the state: it does not fit the collections
/// this emulator has.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The record names a collection the state does not have.
    #[error("unknown collection {name:?}")]
    UnknownCollection { name: String },
    /// A key that does not parse as the collection's key type.
    #[error("bad key {key:?}")]
    BadKey { key: String },
    /// A value that does not read as the collection's value type.
    #[error("{key}: {source}")]
    BadValue {
        key: String,
        source: serde_json::Error,
    },
}

/// A domain's journaled tables for [`crate::store::Domain::journaled`], each with its field
/// name, which is also the name it is persisted under: `journaled!(self, catalogs, schemas)`.
macro_rules! journaled {
    ($tables:ident $(, $field:ident)+ $(,)?) => {
        [$((
            stringify!($field),
            &mut $tables.$field as &mut dyn $crate::journal::Journaled,
        )),+]
        .into_iter()
    };
}
pub(crate) use journaled;

/// One journal line: the changes of one persisted mutation. `seq` counts records over the
/// workspace's life; the snapshot notes the last one it contains.
#[derive(Debug, Serialize, Deserialize)]
pub struct Record {
    pub seq: u64,
    pub next_id: i64,
    pub active_runs: BTreeSet<i64>,
    /// Collection name → its changed entries.
    pub changes: BTreeMap<String, Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_is_tracked_and_replays_to_the_same_map() {
        let mut t: Tracked<i64, String> = Tracked::default();
        t.insert(1, "a".into());
        t.insert(2, "b".into());
        t.insert(3, "c".into());
        t.clear_changes();
        assert!(!t.has_changes());
        if let Some(v) = t.get_mut(&2) {
            v.push('!');
        }
        t.remove(&3);
        assert!(t.get_mut(&9).is_none());
        let ch = t.changes().unwrap();
        assert_eq!(
            Value::Object(ch.clone()),
            serde_json::json!({"2": "b!", "3": null})
        );
        let mut replay: Tracked<i64, String> =
            serde_json::from_value(serde_json::json!({"1": "a", "2": "b", "3": "c"})).unwrap();
        replay.apply(ch).unwrap();
        assert_eq!(*replay, *t);
        assert!(!replay.has_changes());
    }
}
