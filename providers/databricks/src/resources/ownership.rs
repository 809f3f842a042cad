//! The ownership tag on the objects that take tags (jobs, pipelines, Lakeflow Connect
//! gateways and ingestion pipelines): `brickform = "<lineage>/<environment>/<address>"`.
//! Added on every create and update, stripped on every read (it is brickform's bookkeeping,
//! not the user's tags), it lets brickform find an object again without its id: after a
//! lost create response, after `state rm`, after a lost state (the engine's `adopt` module
//! says what counts as whose).
//!
//! Job and pipeline tags are forwarded to clusters as cluster tags, which take only letters,
//! digits, spaces and `+-=._:/@`. Anything else in an address (the `["key"]` of a for_each
//! instance) is written `:XX` (hex, per UTF-8 byte), and `:` itself too, so the encoding stays
//! one-to-one and plain addresses read as they are. Environment names are letters, digits,
//! `-` and `_` (no `.`, no `/`), and every address holds a `.`: a tag written before the
//! environment was part of it (`<lineage>/<address>`) still reads, with no environment.
//!
//! A kind whose objects are found this way implements [`Tagged`] (how its objects are listed
//! by name and read in full) and uses the functions here for the rest: the tag on the wire,
//! the natural key, [`find_by_key`] and [`find_existing`].

use crate::client::Client;
use async_trait::async_trait;
use brickform_core::provider::{Existing, OpContext, OwnerTag, ProviderResult, Remote};
use brickform_core::value::{Object, Value};
use serde_json::{Map, Value as Json};
use std::sync::Arc;

/// The tag's key.
pub const OWNER_TAG: &str = "brickform";

/// The tag's value for the object `ctx` names.
pub fn value(ctx: &OpContext) -> String {
    let mut out = format!("{}/{}/", ctx.lineage, ctx.environment);
    for c in ctx.address.chars() {
        if c.is_ascii_alphanumeric() || " +-=._/@".contains(c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!(":{b:02X}"));
            }
        }
    }
    out
}

/// Reads a tag value back; `None` when it is not one brickform wrote.
pub fn parse(value: &str) -> Option<OwnerTag> {
    let (lineage, rest) = value.split_once('/')?;
    let (environment, address) = match rest.split_once('/') {
        Some((env, address))
            if !env.is_empty()
                && env
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            (Some(env.to_string()), address)
        }
        _ => (None, rest),
    };
    let address = decode(address)?;
    (!lineage.is_empty() && address.contains('.')).then(|| OwnerTag {
        lineage: lineage.to_string(),
        environment,
        address,
    })
}

/// Adds the ownership tag to the `tags` map of a request body, making the map if needed.
pub fn tag_body(body: &mut Map<String, Json>, ctx: &OpContext) {
    let tags = body
        .entry("tags")
        .or_insert_with(|| Json::Object(Map::new()));
    if !tags.is_object() {
        *tags = Json::Object(Map::new());
    }
    if let Some(tags) = tags.as_object_mut() {
        tags.insert(OWNER_TAG.into(), Json::String(value(ctx)));
    }
}

/// Removes the ownership tag from the attributes read back: it is brickform's bookkeeping,
/// not the user's tags, so it is never drift; `tags` holding nothing else is unset.
pub fn strip(attrs: &mut Object) {
    if let Some(Value::Object(tags)) = attrs.get_mut("tags") {
        Arc::make_mut(tags).shift_remove(OWNER_TAG);
        if tags.is_empty() {
            attrs.insert("tags".into(), Value::Null);
        }
    }
}

/// A configuration's `tags` set the ownership tag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tags: the key {:?} is reserved for brickform's ownership tag",
    OWNER_TAG
)]
pub struct ReservedTag;

// The engine reports a kind's prepare errors by their text, against the resource block.
impl From<ReservedTag> for brickform_core::provider::PrepareError {
    fn from(e: ReservedTag) -> Self {
        Self::Invalid(e.to_string())
    }
}

/// A configuration that sets the ownership tag itself is refused: the value would be
/// overwritten, then stripped on read — endless drift.
pub fn check_not_reserved(config: &Object) -> Result<(), ReservedTag> {
    if config
        .get("tags")
        .and_then(Value::as_object)
        .is_some_and(|t| t.contains_key(OWNER_TAG))
    {
        return Err(ReservedTag);
    }
    Ok(())
}

/// Separates the name from the ownership tag in a natural key (a character no name or tag
/// contains).
const KEY_SEP: char = '\u{1f}';

/// The natural key of an object found by tag: its name narrows the list call, the tag
/// decides.
pub fn key(name: &str, ctx: &OpContext) -> String {
    format!("{name}{KEY_SEP}{}", value(ctx))
}

/// The name and the tag value of a natural key made by [`key`].
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    key.split_once(KEY_SEP)
}

/// The ownership tag an object read from the service carries, as written; `tags` is where
/// the object holds its tags (`/settings/tags` for a job).
pub fn tag_of<'a>(obj: &'a Json, tags: &str) -> Option<&'a str> {
    obj.pointer(tags)?.get(OWNER_TAG)?.as_str()
}

/// A kind whose objects are found by name and ownership tag: names are not unique, and
/// the ids are the service's.
#[async_trait]
pub trait Tagged: Send + Sync {
    /// Where a full read of an object holds its tags (a JSON pointer).
    const TAGS: &'static str;
    /// Whether what [`Tagged::listed`] returns carries the tags too (a listed job does, a
    /// pipeline's status does not), so objects of other owners need not be read in full.
    const LISTED_WITH_TAGS: bool;

    /// The objects named `name`, as the list call answers.
    async fn listed(&self, client: &Client, name: &str) -> ProviderResult<Vec<Json>>;
    /// The same, for a plan's lookups of the objects it is about to create: a kind may
    /// answer them from one listing shared by the plan's lookups (a plan of 200 new jobs
    /// asks 200 times; see [`SharedListing`]). Never for what must see the service as it is after
    /// a write (finding what a create whose answer was lost made): that is [`Tagged::listed`].
    async fn listed_for_plan(&self, client: &Client, name: &str) -> ProviderResult<Vec<Json>> {
        self.listed(client, name).await
    }
    /// A listed object read in full; `None` when it is gone.
    async fn full(&self, client: &Client, listed: &Json) -> ProviderResult<Option<Json>>;
    /// A full read as the kind's attributes, read for no prior configuration.
    fn remote(&self, full: &Json) -> Option<Remote>;
    /// How messages name a full read: `job 123 "nightly"`.
    fn what(&self, full: &Json) -> String;
}

/// A listing of every object of a kind, shared by one plan's lookups (see
/// [`Tagged::listed_for_plan`]): a plan of 200 new objects looks each up, and the whole
/// plan then costs one listing instead of one list call each. The listing answers as of
/// one moment of the plan, as reads made one after another would; the next plan lists
/// again. A listing that failed is not kept. A kind with more objects than its listing may
/// take pages is asked by name from then on.
#[derive(Default)]
pub struct SharedListing {
    /// The listing and the plan it was made for.
    round: tokio::sync::Mutex<Option<(u64, std::sync::Arc<ListingRound>)>>,
    too_many: std::sync::atomic::AtomicBool,
}

/// One listing: every object, `None` when there were too many to list.
type ListingRound = tokio::sync::OnceCell<ProviderResult<Option<Vec<Json>>>>;

/// The list call of a [`SharedListing`]: every object of a kind, page by page.
pub struct ListCall {
    pub path: &'static str,
    /// The key of the objects in each page (`jobs`, `statuses`).
    pub items_key: &'static str,
    pub page: crate::client::PageSize,
}

/// The pages a shared listing may take (300 objects at 100 a page): past that, lookups by
/// name are cheaper.
const SHARED_LISTING_PAGES: usize = 3;

impl SharedListing {
    /// This plan's listing of `call`, made now if none is under way: the head start a kind
    /// gives its lookups (see `ResourceKind::lookups_ahead`). What it finds waits for them;
    /// a failed one is not kept, and the first lookup lists again.
    pub fn ahead(
        self: &std::sync::Arc<Self>,
        plan: u64,
        client: Client,
        call: &'static ListCall,
    ) -> brickform_core::provider::Ahead {
        let this = self.clone();
        Box::pin(async move {
            // Too many to list: the lookups ask by name, each for itself.
            let by_name = || async { Ok(Vec::new()) };
            let _ = this.find_or(plan, &client, call, |_| false, by_name).await;
        })
    }

    /// The objects `wanted` accepts, from the listing of `call` under way or a new one; when
    /// the kind has more objects than a listing takes, from `by_name` (the lookup by name
    /// each caller would otherwise make).
    pub async fn find_or<Fut>(
        &self,
        plan: u64,
        client: &Client,
        call: &ListCall,
        wanted: impl Fn(&Json) -> bool,
        by_name: impl FnOnce() -> Fut,
    ) -> ProviderResult<Vec<Json>>
    where
        Fut: std::future::Future<Output = ProviderResult<Vec<Json>>>,
    {
        let listed = self
            .find(
                plan,
                || async {
                    client
                        .list_pages(call.path, call.items_key, call.page, SHARED_LISTING_PAGES)
                        .await
                        .map_err(super::err)
                },
                wanted,
            )
            .await?;
        match listed {
            Some(found) => Ok(found),
            None => by_name().await,
        }
    }

    /// The listed objects `wanted` accepts, from the listing under way or a new one made
    /// with `list_all`; `None` when the kind has too many objects to list (`list_all`
    /// answered `None`, now or before): then the caller asks by name.
    async fn find<F, Fut>(
        &self,
        plan: u64,
        list_all: F,
        wanted: impl Fn(&Json) -> bool,
    ) -> ProviderResult<Option<Vec<Json>>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = ProviderResult<Option<Vec<Json>>>>,
    {
        use std::sync::atomic::Ordering;
        if self.too_many.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let round = {
            let mut current = self.round.lock().await;
            match current.as_ref() {
                Some((p, r)) if *p == plan => r.clone(),
                _ => {
                    let fresh = std::sync::Arc::new(ListingRound::default());
                    *current = Some((plan, fresh.clone()));
                    fresh
                }
            }
        };
        let listed = round
            .get_or_init(|| async {
                let all = list_all().await;
                if all.is_err() {
                    // Not kept: the next lookup asks again.
                    let mut current = self.round.lock().await;
                    if current
                        .as_ref()
                        .is_some_and(|(_, r)| std::sync::Arc::ptr_eq(r, &round))
                    {
                        *current = None;
                    }
                }
                all
            })
            .await
            .clone()?;
        match listed {
            Some(all) => Ok(Some(all.into_iter().filter(|o| wanted(o)).collect())),
            None => {
                self.too_many.store(true, Ordering::Relaxed);
                Ok(None)
            }
        }
    }
}

/// Who created an object, as the service says.
fn creator(full: &Json) -> Option<String> {
    full.get("creator_user_name")
        .and_then(Json::as_str)
        .map(str::to_string)
}

/// How messages name an object: `what` and who created it, `job 123 "nightly" (created by
/// a@b.c)`.
pub fn described(what: String, obj: &Json) -> String {
    match creator(obj) {
        Some(c) => format!("{what} (created by {c})"),
        None => what,
    }
}

/// The first object named `name` carrying the tag value `tag` (see [`split_key`]).
pub async fn find_by_key<K: Tagged>(
    kind: &K,
    client: &Client,
    name: &str,
    tag: &str,
) -> ProviderResult<Option<Remote>> {
    for listed in kind.listed(client, name).await? {
        if K::LISTED_WITH_TAGS && tag_of(&listed, K::TAGS) != Some(tag) {
            continue;
        }
        let Some(full) = kind.full(client, &listed).await? else {
            continue;
        };
        if tag_of(&full, K::TAGS) == Some(tag) {
            return Ok(kind.remote(&full));
        }
    }
    Ok(None)
}

/// Every object named `name`, with the ownership tag it carries and its creator, for the
/// engine to tell this state's from others'. `exclusive`: an object of that name is in the
/// way of a create (see [`Existing::exclusive`]).
pub async fn find_existing<K: Tagged>(
    kind: &K,
    client: &Client,
    name: &str,
    exclusive: bool,
) -> ProviderResult<Vec<Existing>> {
    let mut out = Vec::new();
    for listed in kind.listed_for_plan(client, name).await? {
        let Some(full) = kind.full(client, &listed).await? else {
            continue;
        };
        let Some(remote) = kind.remote(&full) else {
            continue;
        };
        out.push(existing(kind, &full, remote, exclusive));
    }
    Ok(out)
}

/// An object read in full, as `remote`, with the ownership tag it carries and its creator.
pub fn existing<K: Tagged>(kind: &K, full: &Json, remote: Remote, exclusive: bool) -> Existing {
    Existing {
        what: described(kind.what(full), full),
        tag: tag_of(full, K::TAGS).and_then(parse),
        owner: creator(full),
        exclusive,
        remote,
    }
}

fn decode(s: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b':' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ctx(address: &str) -> OpContext {
        OpContext {
            address: address.into(),
            lineage: "L".into(),
            environment: "dev".into(),
            base_dir: std::path::PathBuf::new(),
            create_token: None,
            output: None,
            planned: None,
        }
    }

    #[test]
    fn encoding_is_tag_safe_and_one_to_one() {
        let c = ctx("databricks_pipeline.p[\"a:b/c é\"]");
        let v = value(&c);
        assert_eq!(v, "L/dev/databricks_pipeline.p:5B:22a:3Ab/c :C3:A9:22:5D");
        assert!(
            v.chars()
                .all(|c| c.is_ascii_alphanumeric() || " +-=._:/@".contains(c)),
            "{v}"
        );
        let back = parse(&v).unwrap();
        assert_eq!(back.lineage, "L");
        assert_eq!(back.environment.as_deref(), Some("dev"));
        assert_eq!(back.address, c.address);
        assert_eq!(
            value(&ctx("databricks_job.j[0]")),
            "L/dev/databricks_job.j:5B0:5D"
        );
    }

    #[test]
    fn tags_without_an_environment_still_read() {
        let old = parse("L/databricks_pipeline.p:5B:22a/b:22:5D").unwrap();
        assert_eq!(old.environment, None);
        assert_eq!(old.address, "databricks_pipeline.p[\"a/b\"]");
        assert_eq!(
            parse("L/databricks_job.j").unwrap().address,
            "databricks_job.j"
        );
        for junk in [
            "",
            "x",
            "L/",
            "L/dev/",
            "/dev/a.b",
            "L/dev/a.b:Z",
            "L/dev/a.b:4",
        ] {
            assert_eq!(parse(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn the_tag_is_added_on_the_wire_and_stripped_on_read() {
        let c = ctx("databricks_job.j");
        let mut body = Map::new();
        tag_body(&mut body, &c);
        let body = Json::Object(body);
        assert_eq!(tag_of(&body, "/tags"), Some(value(&c).as_str()));
        assert_eq!(
            parse(tag_of(&body, "/tags").unwrap()).unwrap().address,
            c.address
        );

        let mut attrs = Object::default();
        attrs.insert("tags".into(), Value::from_json(&body["tags"]));
        assert!(check_not_reserved(&attrs).is_err());
        strip(&mut attrs);
        assert_eq!(attrs["tags"], Value::Null);
        assert!(check_not_reserved(&attrs).is_ok());

        let k = key("nightly", &c);
        assert_eq!(split_key(&k), Some(("nightly", value(&c).as_str())));
        assert_eq!(split_key("no separator"), None);
    }
}
