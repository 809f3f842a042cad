//! Listings of Unity Catalog securables under a parent: the schemas of a catalog, the
//! tables, views or volumes of a schema, as the Terraform provider's `databricks_schemas`,
//! `databricks_tables`, `databricks_views` and `databricks_volumes` give them (`ids`, the full names), with
//! their short `names` beside them for `for_each`, and an optional `name_regex` that keeps
//! only the names it matches. Every page of the list call is read.

use crate::Shared;
use crate::client::PageSize;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, Normalize, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

/// What one listing lists.
pub struct Listing {
    pub type_name: &'static str,
    pub description: &'static str,
    /// The path segment under `/api/2.1/unity-catalog`; its answers' key is it in snake case.
    pub collection: &'static str,
    /// The parent attributes, as the list call's query parameters take them.
    pub parents: &'static [&'static str],
    pub page: Option<PageSize>,
    /// Which entries are kept, by their `table_type` (views are not tables).
    pub table_types: TableTypes,
}

/// The `table_type`s a listing keeps.
#[derive(Debug, Clone, Copy)]
pub enum TableTypes {
    /// Every entry (securables that have no `table_type`).
    All,
    /// All but these.
    Except(&'static [&'static str]),
    /// Only these.
    Only(&'static [&'static str]),
}

/// The `table_type` of views: the Terraform provider's `databricks_tables` leaves out, and
/// its `databricks_views` keeps, the entries whose `table_type` is `VIEW`
/// (catalog/data_tables.go, catalog/data_views.go).
pub const VIEWS: &[&str] = &["VIEW"];

impl TableTypes {
    fn keeps(self, table_type: &str) -> bool {
        match self {
            TableTypes::All => true,
            TableTypes::Except(out) => !out.contains(&table_type),
            TableTypes::Only(kept) => kept.contains(&table_type),
        }
    }
}

pub struct UcListing {
    listing: Listing,
    schema: Schema,
    shared: Arc<Shared>,
}

impl UcListing {
    pub fn new(shared: Arc<Shared>, listing: Listing) -> Self {
        let mut schema = Schema::new().describe(listing.description);
        for p in listing.parents {
            schema = schema
                .attr(Attribute::required(p, AttrType::String).normalize(Normalize::LowerCase));
        }
        schema = schema
            .attr(Attribute::optional("name_regex", AttrType::String).describe(
                "Keep only the names this regular expression matches (anywhere in the name; anchor it with ^…$ for the whole name).",
            ))
            .attr(
                Attribute::computed("ids", AttrType::Set(Box::new(AttrType::String)))
                    .describe("The full names, sorted."),
            )
            .attr(
                Attribute::computed("names", AttrType::List(Box::new(AttrType::String)))
                    .describe("The names without their parents, in the order of ids."),
            );
        UcListing {
            listing,
            schema,
            shared,
        }
    }
}

#[async_trait]
impl DataSource for UcListing {
    fn type_name(&self) -> &'static str {
        self.listing.type_name
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let filter = match config.get("name_regex").and_then(Value::as_str) {
            Some(r) => Some(regex::Regex::new(r).map_err(|e| {
                ProviderError::invalid(format!("{}: name_regex: {e}", self.listing.type_name))
            })?),
            None => None,
        };
        let query: Vec<(&str, String)> = self
            .listing
            .parents
            .iter()
            .map(|p| {
                (
                    *p,
                    config
                        .get(*p)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                )
            })
            .collect();
        let client = self.shared.client()?;
        let listed = client
            .list_all(
                &format!("/api/2.1/unity-catalog/{}", self.listing.collection),
                &query,
                &crate::resources::uc::items_key(self.listing.collection),
                self.listing.page,
            )
            .await
            .map_err(crate::resources::err)?;
        let mut found: Vec<(String, String)> = listed
            .iter()
            .filter(|e| {
                let t = e.get("table_type").and_then(Json::as_str).unwrap_or("");
                self.listing.table_types.keeps(t)
            })
            .filter_map(|e| {
                let name = e.get("name")?.as_str()?.to_string();
                let full = e
                    .get("full_name")
                    .and_then(Json::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| {
                        let mut parts: Vec<&str> = query.iter().map(|(_, v)| v.as_str()).collect();
                        parts.push(&name);
                        parts.join(".")
                    });
                Some((full, name))
            })
            .filter(|(_, name)| filter.as_ref().is_none_or(|r| r.is_match(name)))
            .collect();
        found.sort();
        let mut out = config.clone();
        out.insert(
            "ids".into(),
            Value::List(found.iter().map(|(f, _)| Value::from(f.as_str())).collect()),
        );
        out.insert(
            "names".into(),
            Value::List(found.iter().map(|(_, n)| Value::from(n.as_str())).collect()),
        );
        Ok(out)
    }
}
