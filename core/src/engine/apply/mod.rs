//! Applying a plan: a parallel walk of the instance graph (docs/architecture.md, Apply and
//! destroy).
//!
//! The walk is `dag::Dag::walk`: a node starts when everything it depends on has finished,
//! with at most `parallelism` calls to the service in flight (`calls`). It carries out what the plan says: its configuration is
//! made again as the plan made it, with the real values of its dependencies filling in what
//! the plan showed as unknown, and a known value that came out otherwise fails the node
//! before anything is sent (see `configure`). A failure skips the node's
//! dependents; independent branches finish. Every mutating call is bracketed by write-ahead
//! log records, so a crash at any point loses nothing; when the log cannot be written (the
//! lock was lost), nothing more can be, and the walk stops.
//!
//! How the parts fit. [`Engine::apply`] (here) only orchestrates:
//! - `seed`: the renames `moved` blocks ask for come first (the plan compared with the new
//!   addresses already), then the world is seeded as the plan left it, with the locals;
//! - `graph`: the graph of instances that do something, a replacement as two nodes (its
//!   delete and its create) so a parent replaced with its children can be deleted after
//!   them and created before them;
//! - `walk`: runs the graph, each node as a task that reports its progress
//!   (`ApplyEvent`s) and runs `run_node`; what each node came to is settled into the
//!   `ApplyReport` by `report` before anything depending on it starts;
//! - `finish`: the log's last records written, the calls still unresolved counted, the
//!   outputs and checks evaluated on the final world.
//!
//! `run_node` (here) dispatches a node to its step, one module per action: `create`,
//! `update`, `delete`, `replace` (delete-first and create-first, one half per node),
//! `import`, `forget`, `deposed` (the delete of an object a create-first replacement put
//! aside), `read` (a data source) and `refresh_sensitive` (an unchanged instance holding
//! sensitive values, evaluated again so references get them). The steps that change
//! something share one helper, `logged`: the intent in the write-ahead log, the call, the
//! lookup after an answer that was lost, the result in state and in the world. What a step
//! sends is made by `evaluate` (through `configure`, which the plan uses too); why a node
//! failed is classified by `error`. Each step's tests, in its module, run it alone against
//! `testkit`: a service whose calls can be refused or lose their answer, and a real
//! write-ahead log.

mod calls;
mod create;
mod delete;
mod deposed;
mod error;
mod evaluate;
mod finish;
mod forget;
mod graph;
pub(crate) use graph::cycles as order_cycles;
mod import;
mod logged;
mod read;
mod refresh_sensitive;
mod replace;
mod report;
mod seed;
mod update;
mod walk;

#[cfg(test)]
mod testkit;

pub use report::{ApplyEvent, ApplyReport, Failure};

use super::world::World;
use super::{Engine, Planned};
use crate::dag::Stop;
use crate::plan::{Action, Mode, ResourceChange};
use crate::provider::{OpContext, ResourceKind};
use crate::value::Object;
use brickform_state::{Journal, StateDocument};
use error::{EngineFailure, NodeError};
use evaluate::Work;
use std::sync::{Arc, RwLock};
use tokio_util::sync::CancellationToken;

pub struct ApplyOptions {
    pub parallelism: usize,
    pub cancel: CancellationToken,
    pub on_event: Arc<dyn Fn(ApplyEvent) + Send + Sync>,
}

/// What the nodes of one walk share.
struct Shared {
    /// What references see; dependencies overwrite their entries as they finish. Read by
    /// every node's evaluation at once (a read lock), written by a result.
    world: RwLock<World>,
    doc: tokio::sync::Mutex<StateDocument>,
    /// Redacts state entries as `doc` does, without holding it.
    redactor: brickform_state::Redactor,
    journal: Journal,
    /// Where each managed instance lived when apply started, for containers' checks (empty
    /// when the plan has none).
    locations: super::containers::Locations,
    /// The call slots: at most `parallelism` requests to the service at once (see `calls`).
    calls: Arc<tokio::sync::Semaphore>,
}

fn reading<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|p| p.into_inner())
}

fn writing<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|p| p.into_inner())
}

impl Engine<'_> {
    /// Applies `planned`, recording every change in `doc` through `journal`. The plan is
    /// shared with the nodes carrying it out, which read their changes from it in place.
    pub async fn apply(
        &self,
        planned: Arc<Planned>,
        mut doc: StateDocument,
        journal: Journal,
        opts: ApplyOptions,
    ) -> (StateDocument, ApplyReport) {
        let plan = &planned.plan;
        let mut report = ApplyReport::default();
        let lineage = doc.lineage().to_string();
        seed::rename_moved(&mut doc, plan, &mut report);
        seed::record_dependencies(&mut doc, plan);
        let mut world = self.seeded_world(&planned);
        let locals = self.locals();
        self.evaluate_locals(&mut world, &locals.order);
        // Only a container's delete that checks what it holds reads them (see `delete`):
        // a plan without one does not convert every state entry to find them.
        let checks_contents = plan.changes.iter().any(|c| {
            c.contents
                .as_ref()
                .is_some_and(|contents| contents.unmanaged.is_some())
        });
        let locations = if checks_contents {
            super::containers::managed_locations(self.registry, &doc)
        } else {
            super::containers::Locations::new()
        };
        let shared = Arc::new(Shared {
            world: RwLock::new(world),
            redactor: doc.redactor(),
            doc: tokio::sync::Mutex::new(doc),
            journal,
            locations,
            calls: Arc::new(tokio::sync::Semaphore::new(opts.parallelism.max(1))),
        });
        let graph = graph::build(plan);
        let walk = walk::Walk {
            engine: self,
            planned: &planned,
            graph: &graph,
            shared: &shared,
            lineage: &lineage,
            opts: &opts,
            locals: &locals,
        };
        let stopped = walk.run(&mut report).await;
        report.interrupted = stopped == Some(Stop::Cancelled);
        self.finish(shared, plan, report).await
    }
}

/// One managed instance's step: the change it carries out, the kind that carries it out,
/// and where it records what it did.
struct Step<'a> {
    work: &'a Work,
    change: &'a ResourceChange,
    ctx: &'a OpContext,
    shared: &'a Shared,
    kind: &'a dyn ResourceKind,
}

impl Step<'_> {
    /// The object as the plan read it: the prior a delete or a read is given.
    fn prior(&self) -> Object {
        self.change
            .before
            .as_ref()
            .map(|b| b.0.clone())
            .unwrap_or_default()
    }

    /// The id of the object the change acts on.
    fn id(&self) -> Result<String, NodeError> {
        Ok(self.change.id.clone().ok_or(EngineFailure::NoId)?)
    }
}

/// Carries out one node: its step, by the instance's mode and the plan's action. The id of
/// the object it leaves, when there is one to show.
async fn run_node(
    work: Work,
    change: &ResourceChange,
    ctx: &OpContext,
    shared: &Shared,
) -> Result<Option<String>, NodeError> {
    if change.mode() == Mode::Data {
        return read::run(&work, change, shared).await;
    }
    let kind = work
        .kind
        .clone()
        .ok_or_else(|| EngineFailure::UnknownType {
            what: "resource",
            type_name: change.type_name().to_string(),
        })?;
    let step = Step {
        work: &work,
        change,
        ctx,
        shared,
        kind: kind.as_ref(),
    };
    let importing = change.importing.is_some();
    match change.action {
        Action::Create => create::run(&step).await,
        Action::Delete if change.deposed => deposed::run(&step).await,
        Action::Delete => delete::run(&step).await,
        Action::DeleteThenCreate => replace::delete_first(&step).await,
        Action::CreateThenDelete => replace::create_first(&step).await,
        Action::NoOp | Action::Update | Action::Read if importing => import::run(&step).await,
        Action::NoOp => refresh_sensitive::run(&step).await,
        Action::Update | Action::Read => update::run(&step).await,
        Action::Forget => forget::run(&step).await,
    }
}

#[cfg(test)]
mod tests {
    use super::error::NodeError;
    use super::graph::Part;
    use super::run_node;
    use super::testkit::*;
    use crate::plan::{Action, ResourceChange, SerObject};

    /// Runs the node of `change` as the walk does.
    async fn run(
        kit: &Kit,
        shared: &super::Shared,
        change: ResourceChange,
        part: Part,
    ) -> Result<Option<String>, NodeError> {
        let (work, change, ctx) = kit.node(change, part).into_parts();
        run_node(work, &change, &ctx, shared).await
    }

    #[tokio::test]
    async fn each_action_goes_to_its_step() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let old = kit.existing(&shared, "a", "old").await;
        // Nothing is called for an unchanged instance.
        let mut unchanged = kit.change_of("a", Action::NoOp, &old);
        let planned = object(&[("name", "a"), ("comment", "first"), ("id", "id-1")]);
        unchanged.after = Some(SerObject(planned));
        run(&kit, &shared, unchanged, Part::Whole).await.unwrap();
        assert!(kit.svc.calls().is_empty());
        let update = kit.change_of("a", Action::Update, &old);
        run(&kit, &shared, update, Part::Whole).await.unwrap();
        let mut imported = kit.change_of("a", Action::NoOp, &old);
        imported.importing = Some(old.clone());
        imported.after = Some(SerObject(object(&[("name", "a"), ("comment", "first")])));
        run(&kit, &shared, imported, Part::Whole).await.unwrap();
        run(&kit, &shared, kit.data_change(), Part::Whole)
            .await
            .unwrap();
        let replace = kit.change_of("a", Action::CreateThenDelete, &old);
        run(&kit, &shared, replace.clone(), Part::Create)
            .await
            .unwrap();
        run(&kit, &shared, replace, Part::Delete).await.unwrap();
        let forget = kit.change_of("a", Action::Forget, "id-2");
        run(&kit, &shared, forget, Part::Whole).await.unwrap();
        assert_eq!(
            kit.log(&shared).await,
            [
                "intent update id-1",
                "updated id-1",
                "intent import id-1",
                "imported id-1",
                "intent create id-1 key=a",
                "created id-2",
                "intent delete id-1",
                "deleted",
                "intent forget id-2",
                "forgotten"
            ]
        );
        assert!(world_value(&shared, "me", true).is_some());
        assert_eq!(state_id(&shared, "test_thing.a").await, None);
    }

    #[tokio::test]
    async fn a_type_no_provider_has_fails_before_anything_is_logged() {
        let kit = Kit::new();
        let shared = kit.shared().await;
        let node = kit.node(kit.change("a", Action::Create), Part::Whole);
        let (mut work, change, ctx) = node.into_parts();
        work.kind = None;
        let failed = failure(run_node(work, &change, &ctx, &shared).await);
        assert_eq!(failed.message, "unknown resource type test_thing");
        assert!(kit.svc.calls().is_empty());
        assert!(kit.log(&shared).await.is_empty());
    }
}
