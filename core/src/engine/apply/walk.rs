//! The parallel walk of the graph: each node runs as a task that reports its progress and
//! carries out its step (`run_node`); what it came to is settled into the report before
//! anything that depends on it starts.

use super::error::NodeError;
use super::evaluate::Work;
use super::graph::{Graph, shown_action};
use super::report::{ApplyEvent, ApplyReport, Settled};
use super::seed::Locals;
use super::{ApplyOptions, Shared, run_node, writing};
use crate::dag::{NodeId, Outcome, Stop, WalkOptions};
use crate::engine::{Engine, Planned};
use crate::plan::{Action, ResourceChange};
use crate::provider::OpContext;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a long-running operation reports that it is still going.
const STILL_RUNNING_EVERY: Duration = Duration::from_secs(10);

/// One apply's walk: what its nodes start from, and where what they came to goes.
pub(super) struct Walk<'a, 'e> {
    pub engine: &'a Engine<'e>,
    pub planned: &'a Arc<Planned>,
    pub graph: &'a Graph,
    pub shared: &'a Arc<Shared>,
    /// The state's lineage, which objects are tagged with.
    pub lineage: &'a str,
    pub opts: &'a ApplyOptions,
    pub locals: &'a Locals,
}

impl Walk<'_, '_> {
    /// Walks the graph, settling every node in `report`; why the walk stopped early.
    pub(super) async fn run(&self, report: &mut ApplyReport) -> Option<Stop> {
        let walk_opts = WalkOptions {
            // The calls are bounded by the call slots; the nodes, so that a node's local
            // work does not keep a slot idle (see `calls`).
            parallelism: self.opts.parallelism.max(1) * super::calls::NODES_PER_CALL_SLOT,
            cancel: self.opts.cancel.clone(),
        };
        let start = |n: NodeId| self.start(n);
        let settled =
            |n: NodeId, outcome: &Outcome<(), NodeError>| self.settled(n, outcome, report);
        self.graph.walk(&walk_opts, start, settled).await.stopped
    }

    /// The task of node `n`.
    fn start(&self, n: NodeId) -> impl Future<Output = Result<(), NodeError>> + Send + 'static {
        let (index, part) = self.graph[n];
        // The node reads its change from the shared plan: a change holds the instance's
        // whole planned object, which a copy per node would make again on this task, the
        // one that starts every node.
        let change = &self.planned.plan.changes[index];
        let ctx = self.context(change);
        let work = self
            .engine
            .prepare(change, &self.planned.specs[index], part);
        let progress = Progress {
            on_event: self.opts.on_event.clone(),
            // Re-reading an unchanged instance's sensitive values is not progress to show.
            quiet: change.action == Action::NoOp && change.importing.is_none(),
            shown: shown_action(change.action, part),
        };
        let node = Node {
            work,
            planned: self.planned.clone(),
            index,
            ctx,
            shared: self.shared.clone(),
        };
        node.run(progress)
    }

    /// What the provider is told about the call, and where what it prints goes.
    fn context(&self, change: &ResourceChange) -> OpContext {
        let mut ctx = self.engine.op_context(&change.address(), self.lineage);
        // A delete is given the plan's `before` as its prior already.
        if change.action == Action::Update {
            ctx.planned = change.before.as_ref().map(|b| Arc::new(b.0.clone()));
        }
        let (printer, address) = (self.opts.on_event.clone(), change.address());
        ctx.output = Some(crate::provider::OutputSink(Arc::new(move |line: &str| {
            printer(ApplyEvent::Output {
                address: address.clone(),
                line: line.to_string(),
            })
        })));
        ctx
    }

    /// What node `n` came to, in the report, before anything that depends on it starts.
    fn settled(&self, n: NodeId, outcome: &Outcome<(), NodeError>, report: &mut ApplyReport) {
        let (index, part) = self.graph[n];
        let changes = &self.planned.plan.changes;
        let cause = match outcome {
            Outcome::Skipped { cause } => Some(changes[self.graph[*cause].0].address()),
            _ => None,
        };
        let node = Settled {
            change: &changes[index],
            part,
            outcome,
            cause: cause.as_deref(),
        };
        // Locals may read what just finished.
        if report.settle(node, &*self.opts.on_event) && self.locals.read_resources {
            self.engine
                .evaluate_locals(&mut writing(&self.shared.world), &self.locals.order);
        }
    }
}

/// Where a node's progress goes, under the action it shows.
struct Progress {
    on_event: Arc<dyn Fn(ApplyEvent) + Send + Sync>,
    /// Only a failure is shown.
    quiet: bool,
    shown: Action,
}

impl Progress {
    fn send(&self, e: ApplyEvent) {
        if !self.quiet || matches!(e, ApplyEvent::Failed { .. }) {
            (self.on_event)(e)
        }
    }
}

/// One node's task, owning what it runs with.
struct Node {
    work: Work,
    /// The plan, whose change `index` the node carries out.
    planned: Arc<Planned>,
    index: usize,
    ctx: OpContext,
    shared: Arc<Shared>,
}

impl Node {
    /// Runs the node's step, reporting it started, is still running (long waits: an object
    /// the service builds for minutes), and finished or failed.
    async fn run(self, progress: Progress) -> Result<(), NodeError> {
        let Node {
            work,
            planned,
            index,
            ctx,
            shared,
        } = self;
        let change = &planned.plan.changes[index];
        let (address, shown) = (change.address(), progress.shown);
        let started = Instant::now();
        progress.send(ApplyEvent::Started {
            address: address.clone(),
            action: shown,
            id: change.id.clone(),
        });
        let node = run_node(work, change, &ctx, &shared);
        tokio::pin!(node);
        let mut ticker = tokio::time::interval_at(
            tokio::time::Instant::now() + STILL_RUNNING_EVERY,
            STILL_RUNNING_EVERY,
        );
        let result = loop {
            tokio::select! {
                r = &mut node => break r,
                _ = ticker.tick() => progress.send(ApplyEvent::StillRunning {
                    address: address.clone(),
                    action: shown,
                    elapsed: started.elapsed(),
                }),
            }
        };
        match &result {
            Ok(id) => progress.send(ApplyEvent::Finished {
                address,
                action: shown,
                id: id.clone(),
                elapsed: started.elapsed(),
            }),
            Err(e) => progress.send(ApplyEvent::Failed {
                address,
                action: shown,
                error: e.failure(),
            }),
        }
        result.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_quiet_node_shows_only_its_failure() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let progress = Progress {
            on_event: Arc::new(move |e| sink.lock().unwrap().push(format!("{e:?}"))),
            quiet: true,
            shown: Action::NoOp,
        };
        let address = "test_thing.a".to_string();
        progress.send(ApplyEvent::Started {
            address: address.clone(),
            action: Action::NoOp,
            id: None,
        });
        progress.send(ApplyEvent::Failed {
            address,
            action: Action::NoOp,
            error: "broken".into(),
        });
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert!(seen[0].starts_with("Failed"), "{seen:?}");
    }
}
