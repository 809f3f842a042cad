//! A generic dependency graph and its parallel walk.
//!
//! The graph holds nodes of any type and labelled edges: an edge `a → b` says `a` must finish
//! before `b` starts, and its label says why (a reference, `depends_on`, a container and what
//! it holds, the order of a replacement's halves), so a cycle can be reported as
//! `a → b (reference) → a (depends_on)`.
//!
//! [`Dag::walk`] runs every node once its dependencies have finished, at most `parallelism`
//! at once, and settles each node exactly once:
//! - a node whose work fails or panics fails, and everything that depends on it, directly or
//!   not, is skipped with that node named as the cause; independent nodes go on;
//! - cancelling the token stops the walk: running nodes finish, nothing new starts, and the
//!   nodes not started are reported as such;
//! - an error that says it is fatal ([`NodeError::is_fatal`]: the lock was lost, the
//!   write-ahead log cannot be written) stops the walk the same way, and the outcome names
//!   the node whose error it was.
//!
//! Among the nodes ready to start, the one added first starts first, so a walk with the same
//! graph and the same results starts nodes in the same order.

use petgraph::Direction;
use petgraph::algo::{astar, tarjan_scc};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::{EdgeRef, NodeFiltered};
use std::collections::{BTreeSet, HashSet};
use std::future::Future;
use tokio_util::sync::CancellationToken;

/// A node of a [`Dag`]: its position in the order nodes were added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(usize);

impl NodeId {
    /// The node's position in the order nodes were added, from 0.
    pub fn index(self) -> usize {
        self.0
    }
}

/// A directed graph whose edges say why they exist.
///
/// Besides its nodes the graph may hold joins ([`Dag::add_edges_between`]): a point with no
/// work of its own that every node of one set leads to and that leads to every node of
/// another, so that "all of these before any of those" costs an edge per node rather than
/// one per pair. Joins are never handed out: the nodes, their dependencies, the order and
/// the cycles are told in nodes, a join's edges read as edges from each node before it to
/// each node after it.
#[derive(Debug, Clone)]
pub struct Dag<N, L> {
    /// The nodes and the joins; a graph node's weight is the node it is, `None` for a join.
    graph: DiGraph<Option<NodeId>, L>,
    /// Each node's value, by [`NodeId::index`].
    values: Vec<N>,
    /// Where each node is in `graph`, by [`NodeId::index`].
    at: Vec<NodeIndex>,
    /// The edges added, `(from, to)`: petgraph finds an edge by scanning `from`'s edges,
    /// which made adding the references to one much-referenced node (a local every block
    /// reads) quadratic.
    edges: HashSet<(NodeIndex, NodeIndex), foldhash::fast::RandomState>,
}

impl<N, L> Default for Dag<N, L> {
    fn default() -> Self {
        Dag {
            graph: DiGraph::new(),
            values: Vec::new(),
            at: Vec::new(),
            edges: HashSet::default(),
        }
    }
}

impl<N, L> std::ops::Index<NodeId> for Dag<N, L> {
    type Output = N;
    fn index(&self, id: NodeId) -> &N {
        &self.values[id.0]
    }
}

impl<N, L> Dag<N, L> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_node(&mut self, node: N) -> NodeId {
        let id = NodeId(self.values.len());
        self.at.push(self.graph.add_node(Some(id)));
        self.values.push(node);
        id
    }

    fn ix(&self, id: NodeId) -> NodeIndex {
        self.at[id.0]
    }

    /// `from` finishes before `to` starts, because of `label`. A second edge between the same
    /// two nodes keeps the first one's label: one reason is enough to order them.
    pub fn add_edge(&mut self, from: NodeId, to: NodeId, label: L) {
        let (a, b) = (self.ix(from), self.ix(to));
        if self.edges.insert((a, b)) {
            self.graph.add_edge(a, b, label);
        }
    }

    /// Every node of `from` finishes before any node of `to` starts, because of `label`: the
    /// order of an edge from each to each. Many to many, it is held as a join (an edge from
    /// each node of `from` to it, one from it to each node of `to`): a block of 200
    /// instances that depends on a block of 100 needs 300 edges, not 20,000.
    pub fn add_edges_between(&mut self, from: &[NodeId], to: &[NodeId], label: L)
    where
        L: Clone,
    {
        let (from, to) = (distinct(from), distinct(to));
        if from.len().saturating_mul(to.len()) <= from.len() + to.len() {
            for &a in &from {
                for &b in &to {
                    self.add_edge(a, b, label.clone());
                }
            }
            return;
        }
        let join = self.graph.add_node(None);
        for a in from {
            self.graph.add_edge(self.ix(a), join, label.clone());
        }
        for b in to {
            self.graph.add_edge(join, self.ix(b), label.clone());
        }
    }

    /// How many edges the graph holds, a join's included.
    #[cfg(test)]
    pub(crate) fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Every node, in the order they were added.
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.values.len()).map(NodeId)
    }

    /// The nodes that wait for `id`, in node order.
    pub fn dependents(&self, id: NodeId) -> Vec<NodeId> {
        self.neighbors(id, Direction::Outgoing)
    }

    /// The nodes `id` waits for, in node order.
    pub fn dependencies(&self, id: NodeId) -> Vec<NodeId> {
        self.neighbors(id, Direction::Incoming)
    }

    /// The nodes next to `id` in direction `dir`, through the joins on the way.
    fn neighbors(&self, id: NodeId, dir: Direction) -> Vec<NodeId> {
        let mut v = Vec::new();
        for n in self.graph.neighbors_directed(self.ix(id), dir) {
            match self.graph[n] {
                Some(m) => v.push(m),
                None => v.extend(
                    self.graph
                        .neighbors_directed(n, dir)
                        .filter_map(|k| self.graph[k]),
                ),
            }
        }
        v.sort();
        v.dedup();
        v
    }

    /// Every node, dependencies before what depends on them; `None` when there is a cycle
    /// (see [`Dag::cycles`]).
    pub fn order(&self) -> Option<Vec<NodeId>> {
        petgraph::algo::toposort(&self.graph, None)
            .ok()
            .map(|v| v.into_iter().filter_map(|n| self.graph[n]).collect())
    }

    /// The label of the edge `from → to` (or of the join between them), if there is one.
    pub fn label(&self, from: NodeId, to: NodeId) -> Option<&L> {
        let (a, b) = (self.ix(from), self.ix(to));
        let edge = self.graph.find_edge(a, b).or_else(|| {
            self.graph
                .edges_directed(a, Direction::Outgoing)
                .find(|e| {
                    self.graph[e.target()].is_none() && self.graph.contains_edge(e.target(), b)
                })
                .map(|e| e.id())
        });
        edge.map(|e| &self.graph[e])
    }

    /// One cycle per group of nodes that wait for each other, each from its first node (in
    /// node order) along a shortest way back to it; empty when the graph has none.
    pub fn cycles(&self) -> Vec<Cycle<L>>
    where
        L: Clone,
    {
        let mut out = Vec::new();
        for scc in tarjan_scc(&self.graph) {
            // A join is never first: it stands between nodes.
            let Some((start, _)) = scc
                .iter()
                .filter_map(|&n| self.graph[n].map(|id| (n, id)))
                .min_by_key(|&(_, id)| id)
            else {
                continue;
            };
            if scc.len() == 1 && !self.graph.contains_edge(start, start) {
                continue;
            }
            let members: HashSet<NodeIndex> = scc.iter().copied().collect();
            let inside = NodeFiltered::from_fn(&self.graph, |n: NodeIndex| members.contains(&n));
            // The shortest way back to `start` goes through one of its successors; a step
            // into a join costs nothing, so a way through one is as long as its edges.
            let mut successors: Vec<NodeIndex> = self
                .graph
                .neighbors_directed(start, Direction::Outgoing)
                .filter(|n| members.contains(n))
                .collect();
            successors.sort();
            successors.dedup();
            let cost = |e: petgraph::graph::EdgeReference<'_, L>| {
                usize::from(self.graph[e.target()].is_some())
            };
            let best = successors
                .into_iter()
                .filter_map(|s| {
                    let (c, path) = astar(&inside, s, |n| n == start, cost, |_| 0)?;
                    Some((c + usize::from(self.graph[s].is_some()), path))
                })
                .min_by_key(|(c, _)| *c);
            let Some((_, back)) = best else {
                continue;
            };
            // `back` runs from the successor to `start`; the cycle is start, successor, …
            // Each node is named with the label of the edge that leaves it.
            let mut nodes = vec![start];
            nodes.extend(back);
            let steps = nodes
                .windows(2)
                .filter_map(|w| {
                    let id = self.graph[w[0]]?;
                    let e = self.graph.find_edge(w[0], w[1])?;
                    Some((id, self.graph[e].clone()))
                })
                .collect();
            out.push(Cycle { steps });
        }
        out.sort_by_key(|c| c.steps.first().map(|s| s.0));
        out
    }

    /// Runs every node: `start` gives the work of a node once all it depends on has
    /// finished, and `settled` hears each node's outcome as it is known, before any node
    /// that depends on it starts (so it may record what those nodes will read). Returns every
    /// node's outcome and why the walk stopped early, if it did.
    ///
    /// Nodes on a cycle never become ready; they end as not started (check [`Dag::cycles`]
    /// first). Must run inside a Tokio runtime: each node's work is a task of its own.
    pub async fn walk<T, E, S, Fut, H>(
        &self,
        opts: &WalkOptions,
        mut start: S,
        settled: H,
    ) -> Walk<T, E>
    where
        T: Send + 'static,
        E: NodeError + Send + 'static,
        S: FnMut(NodeId) -> Fut,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        H: FnMut(NodeId, &Outcome<T, E>),
    {
        self.run(
            opts,
            |id| {
                // Dropping the walk (the apply it runs is dropped) stops its tasks too.
                let task = tokio_util::task::AbortOnDropHandle::new(tokio::spawn(start(id)));
                async move {
                    task.await.map_err(|e| {
                        if e.is_panic() {
                            panic_message(e.into_panic())
                        } else {
                            // Only the walk aborts its tasks, and it does not; say so if it ever does.
                            Unfinished("its task was cancelled".to_string())
                        }
                    })
                }
            },
            settled,
        )
        .await
    }

    /// [`Dag::walk`] with every node's work a future of the calling task rather than a task of
    /// its own, so the work may borrow (the configuration, the registry) and need not be
    /// `Send`. Nodes still overlap wherever they wait (on the network); what they compute runs
    /// one at a time. A panic is caught and reported as its node's outcome.
    pub async fn walk_local<T, E, S, Fut, H>(
        &self,
        opts: &WalkOptions,
        mut start: S,
        settled: H,
    ) -> Walk<T, E>
    where
        E: NodeError,
        S: FnMut(NodeId) -> Fut,
        Fut: Future<Output = Result<T, E>>,
        H: FnMut(NodeId, &Outcome<T, E>),
    {
        use futures_util::FutureExt as _;
        self.run(
            opts,
            |id| {
                std::panic::AssertUnwindSafe(start(id))
                    .catch_unwind()
                    .map(|r| r.map_err(panic_message))
            },
            settled,
        )
        .await
    }

    /// The walk itself: `start` gives a node's work, whose output is its result, or the
    /// message of the panic that ended it.
    async fn run<T, E, S, Fut, H>(
        &self,
        opts: &WalkOptions,
        mut start: S,
        mut settled: H,
    ) -> Walk<T, E>
    where
        E: NodeError,
        S: FnMut(NodeId) -> Fut,
        Fut: Future<Output = Result<Result<T, E>, Unfinished>>,
        H: FnMut(NodeId, &Outcome<T, E>),
    {
        use futures_util::StreamExt as _;
        let mut outcomes: Vec<Option<Outcome<T, E>>> =
            (0..self.values.len()).map(|_| None).collect();
        // What each node and join still waits for, by its index in `graph`.
        let mut waiting: Vec<usize> = self
            .graph
            .node_indices()
            .map(|i| {
                self.graph
                    .neighbors_directed(i, Direction::Incoming)
                    .count()
            })
            .collect();
        let mut ready: BTreeSet<NodeId> = BTreeSet::new();
        // A join between nothing and its nodes holds nothing up.
        let open: Vec<NodeIndex> = self
            .graph
            .node_indices()
            .filter(|&i| self.graph[i].is_none() && waiting[i.index()] == 0)
            .collect();
        for i in open {
            self.finished(i, &mut waiting, &mut ready);
        }
        ready.extend(self.nodes().filter(|id| waiting[self.ix(*id).index()] == 0));
        let mut running = futures_util::stream::FuturesUnordered::new();
        let mut stopped: Option<Stop> = None;
        let parallelism = opts.parallelism.max(1);

        let mut settle = |id: NodeId, outcome: Outcome<T, E>, outcomes: &mut Vec<_>| {
            settled(id, &outcome);
            outcomes[id.0] = Some(outcome);
        };

        loop {
            if stopped.is_none() && opts.cancel.is_cancelled() {
                stopped = Some(Stop::Cancelled);
            }
            if stopped.is_none() {
                while running.len() < parallelism {
                    let Some(id) = ready.pop_first() else {
                        break;
                    };
                    let work = start(id);
                    running.push(async move { (id, work.await) });
                }
            }
            let Some((id, result)) = running.next().await else {
                break;
            };
            let outcome = match result {
                Ok(Ok(value)) => Outcome::Done(value),
                Ok(Err(e)) => Outcome::Failed(e),
                Err(Unfinished(message)) => Outcome::Panicked(message),
            };
            let ok = matches!(outcome, Outcome::Done(_));
            if let Outcome::Failed(e) = &outcome
                && e.is_fatal()
                && stopped.is_none()
            {
                stopped = Some(Stop::Fatal(id));
            }
            settle(id, outcome, &mut outcomes);
            if ok {
                self.finished(self.ix(id), &mut waiting, &mut ready);
                continue;
            }
            // Everything downstream of a failure is skipped, naming the failure; nearer
            // nodes first, each level in node order.
            let mut level = self.dependents(id);
            while !level.is_empty() {
                let mut next = BTreeSet::new();
                for d in level {
                    if outcomes[d.0].is_some() {
                        continue;
                    }
                    ready.remove(&d);
                    settle(d, Outcome::Skipped { cause: id }, &mut outcomes);
                    next.extend(self.dependents(d));
                }
                level = next.into_iter().collect();
            }
        }

        let outcomes = outcomes
            .into_iter()
            .enumerate()
            .map(|(i, o)| match o {
                Some(o) => o,
                None => {
                    let o = Outcome::NotStarted { stop: stopped };
                    settled(NodeId(i), &o);
                    o
                }
            })
            .collect();
        Walk { outcomes, stopped }
    }

    /// What waits for `i` (a node that finished, or a join all of whose nodes did) waits for
    /// one thing less: a node waiting for nothing more is ready, a join is passed through.
    fn finished(&self, i: NodeIndex, waiting: &mut [usize], ready: &mut BTreeSet<NodeId>) {
        let mut through = vec![i];
        while let Some(n) = through.pop() {
            for d in self.graph.neighbors_directed(n, Direction::Outgoing) {
                let left = &mut waiting[d.index()];
                *left = left.saturating_sub(1);
                if *left == 0 {
                    match self.graph[d] {
                        Some(id) => {
                            ready.insert(id);
                        }
                        None => through.push(d),
                    }
                }
            }
        }
    }
}

/// A cycle: each node with the label of the edge that leads from it to the next; the last
/// edge leads back to the first node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle<L> {
    pub steps: Vec<(NodeId, L)>,
}

impl<L: std::fmt::Display> Cycle<L> {
    /// The cycle as `a → b (label of a → b) → a (label of b → a)`, naming nodes with `name`.
    pub fn render(&self, name: impl Fn(NodeId) -> String) -> String {
        let Some((first, _)) = self.steps.first() else {
            return String::new();
        };
        let mut text = name(*first);
        for (i, (_, label)) in self.steps.iter().enumerate() {
            let to = self.steps.get(i + 1).map_or(*first, |s| s.0);
            text.push_str(&format!(" → {} ({label})", name(to)));
        }
        text
    }
}

/// How a walk runs.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// How many nodes may run at once (0 counts as 1).
    pub parallelism: usize,
    /// Cancelled: nodes not started yet are not started.
    pub cancel: CancellationToken,
}

/// An error of a node's work: whether it stops the whole walk, not just what depends on it.
pub trait NodeError {
    /// True when going on would do harm: the walk starts nothing more.
    fn is_fatal(&self) -> bool;
}

/// What became of a node.
#[derive(Debug)]
pub enum Outcome<T, E> {
    Done(T),
    Failed(E),
    /// Its work panicked, with the panic's message.
    Panicked(String),
    /// Not run because `cause`, something it depends on (directly or not), failed or
    /// panicked.
    Skipped {
        cause: NodeId,
    },
    /// Not started: the walk stopped first (`stop` says why), or the node is on a cycle
    /// (`stop` is `None`).
    NotStarted {
        stop: Option<Stop>,
    },
}

impl<T, E> Outcome<T, E> {
    pub fn is_done(&self) -> bool {
        matches!(self, Outcome::Done(_))
    }
}

/// Why a walk stopped before running every node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The token was cancelled.
    Cancelled,
    /// This node's error was fatal.
    Fatal(NodeId),
}

/// The outcome of a walk.
#[derive(Debug)]
pub struct Walk<T, E> {
    /// Each node's outcome, by [`NodeId::index`].
    pub outcomes: Vec<Outcome<T, E>>,
    pub stopped: Option<Stop>,
}

impl<T, E> std::ops::Index<NodeId> for Walk<T, E> {
    type Output = Outcome<T, E>;
    fn index(&self, id: NodeId) -> &Outcome<T, E> {
        &self.outcomes[id.0]
    }
}

/// `ids` in node order, each once.
fn distinct(ids: &[NodeId]) -> Vec<NodeId> {
    let mut v = ids.to_vec();
    v.sort();
    v.dedup();
    v
}

/// Why a node's work did not finish, as its outcome reports it: the message of the panic
/// that ended it, or that its task was cancelled.
struct Unfinished(String);

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> Unfinished {
    Unfinished(match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(s) => (*s).to_string(),
            Err(_) => "a panic without a message".to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    #[derive(Debug, PartialEq)]
    struct Oops {
        fatal: bool,
    }
    impl NodeError for Oops {
        fn is_fatal(&self) -> bool {
            self.fatal
        }
    }

    /// What a test node does.
    #[derive(Clone, Copy)]
    enum Act {
        Pass,
        Fail,
        Fatal,
        Panic,
        Cancel,
    }

    /// A graph of named nodes: `(name, act, sleep ms)`; edges `(from, to)` by name.
    fn dag(nodes: &[(&'static str, Act, u64)], edges: &[(&str, &str)]) -> Dag<Node, &'static str> {
        let mut d = Dag::new();
        let mut ids = HashMap::new();
        for &(name, act, ms) in nodes {
            ids.insert(name, d.add_node(Node { name, act, ms }));
        }
        for (a, b) in edges {
            d.add_edge(ids[a], ids[b], "depends_on");
        }
        d
    }

    #[derive(Clone, Copy)]
    struct Node {
        name: &'static str,
        act: Act,
        ms: u64,
    }

    #[derive(Default)]
    struct Trace {
        started: Mutex<Vec<&'static str>>,
        finished: Mutex<Vec<&'static str>>,
        settled: Mutex<Vec<String>>,
        now: AtomicUsize,
        most: AtomicUsize,
    }

    /// Runs a test in both walks: a task per node ([`Dag::walk`]) and one task for all
    /// ([`Dag::walk_local`]).
    macro_rules! both_walks {
        ($name:ident, $local:ident, $body:block) => {
            mod $name {
                use super::*;
                #[tokio::test(start_paused = true)]
                async fn spawned() {
                    let $local = false;
                    $body
                }
                #[tokio::test(start_paused = true)]
                async fn local() {
                    let $local = true;
                    $body
                }
            }
        };
    }

    async fn run(
        d: &Dag<Node, &'static str>,
        parallelism: usize,
        cancel: CancellationToken,
        local: bool,
    ) -> (Walk<&'static str, Oops>, Arc<Trace>) {
        let trace = Arc::new(Trace::default());
        let opts = WalkOptions {
            parallelism,
            cancel: cancel.clone(),
        };
        let t = trace.clone();
        let start = |id: NodeId| {
            let node = d[id];
            let t = t.clone();
            let cancel = cancel.clone();
            async move {
                t.started.lock().unwrap().push(node.name);
                let now = t.now.fetch_add(1, Ordering::SeqCst) + 1;
                t.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(node.ms)).await;
                t.now.fetch_sub(1, Ordering::SeqCst);
                t.finished.lock().unwrap().push(node.name);
                match node.act {
                    Act::Pass => Ok(node.name),
                    Act::Fail => Err(Oops { fatal: false }),
                    Act::Fatal => Err(Oops { fatal: true }),
                    Act::Panic => panic!("{} broke", node.name),
                    Act::Cancel => {
                        cancel.cancel();
                        Ok(node.name)
                    }
                }
            }
        };
        let settled = |id: NodeId, o: &Outcome<&'static str, Oops>| {
            let what = match o {
                Outcome::Done(_) => "done".to_string(),
                Outcome::Failed(_) => "failed".to_string(),
                Outcome::Panicked(m) => format!("panicked: {m}"),
                Outcome::Skipped { cause } => format!("skipped: {}", d[*cause].name),
                Outcome::NotStarted { .. } => "not started".to_string(),
            };
            trace
                .settled
                .lock()
                .unwrap()
                .push(format!("{} {what}", d[id].name));
        };
        let walk = if local {
            d.walk_local(&opts, start, settled).await
        } else {
            d.walk(&opts, start, settled).await
        };
        (walk, trace)
    }

    fn settled(t: &Trace) -> Vec<String> {
        t.settled.lock().unwrap().clone()
    }

    use Act::*;

    both_walks!(a_diamond_runs_each_node_after_its_dependencies, local, {
        let d = dag(
            &[
                ("a", Pass, 5),
                ("b", Pass, 20),
                ("c", Pass, 5),
                ("d", Pass, 0),
            ],
            &[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")],
        );
        let (walk, t) = run(&d, 4, CancellationToken::new(), local).await;
        assert!(walk.stopped.is_none());
        assert!(walk.outcomes.iter().all(Outcome::is_done));
        assert_eq!(*t.started.lock().unwrap(), vec!["a", "b", "c", "d"]);
        // d starts only when both b and c have finished; b and c ran side by side.
        assert_eq!(*t.finished.lock().unwrap(), vec!["a", "c", "b", "d"]);
        assert_eq!(t.most.load(Ordering::SeqCst), 2);
    });

    both_walks!(
        a_failure_skips_its_dependents_transitively_and_independents_run,
        local,
        {
            let d = dag(
                &[
                    ("a", Fail, 0),
                    ("b", Pass, 0),
                    ("c", Pass, 0),
                    ("x", Pass, 10),
                    ("y", Pass, 0),
                ],
                &[("a", "b"), ("b", "c"), ("x", "y")],
            );
            let (walk, t) = run(&d, 4, CancellationToken::new(), local).await;
            assert!(walk.stopped.is_none(), "a failure is not fatal");
            assert!(matches!(
                walk.outcomes[0],
                Outcome::Failed(Oops { fatal: false })
            ));
            let a = NodeId(0);
            assert!(matches!(walk.outcomes[1], Outcome::Skipped { cause } if cause == a));
            assert!(matches!(walk.outcomes[2], Outcome::Skipped { cause } if cause == a));
            assert!(walk.outcomes[3].is_done() && walk.outcomes[4].is_done());
            assert_eq!(
                settled(&t),
                vec![
                    "a failed",
                    "b skipped: a",
                    "c skipped: a",
                    "x done",
                    "y done"
                ]
            );
            assert!(!t.started.lock().unwrap().contains(&"b"));
        }
    );

    both_walks!(
        cancelling_starts_nothing_more_and_reports_what_did_not_start,
        local,
        {
            let d = dag(
                &[
                    ("a", Pass, 0),
                    ("stop", Cancel, 10),
                    ("b", Pass, 0),
                    ("c", Pass, 0),
                    ("d", Pass, 0),
                ],
                &[("stop", "b"), ("b", "c")],
            );
            // Two at a time: a and stop start; a finishes first and d takes its slot only if
            // the walk was not cancelled yet: it was not, so d runs.
            let (walk, t) = run(&d, 2, CancellationToken::new(), local).await;
            assert_eq!(walk.stopped, Some(Stop::Cancelled));
            assert!(walk.outcomes[0].is_done() && walk.outcomes[1].is_done());
            let cancelled = |o: &Outcome<_, _>| {
                matches!(
                    o,
                    Outcome::NotStarted {
                        stop: Some(Stop::Cancelled)
                    }
                )
            };
            assert!(cancelled(&walk.outcomes[2]) && cancelled(&walk.outcomes[3]));
            assert!(walk.outcomes[4].is_done());
            assert_eq!(*t.started.lock().unwrap(), vec!["a", "stop", "d"]);
            assert_eq!(
                settled(&t),
                vec![
                    "a done",
                    "d done",
                    "stop done",
                    "b not started",
                    "c not started"
                ]
            );
        }
    );

    both_walks!(a_walk_cancelled_before_it_starts_runs_nothing, local, {
        let d = dag(&[("a", Pass, 0), ("b", Pass, 0)], &[("a", "b")]);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let (walk, t) = run(&d, 2, cancel, local).await;
        assert_eq!(walk.stopped, Some(Stop::Cancelled));
        assert!(t.started.lock().unwrap().is_empty());
        assert_eq!(settled(&t), vec!["a not started", "b not started"]);
    });

    both_walks!(
        a_panic_is_its_nodes_failure_and_skips_its_dependents,
        local,
        {
            let d = dag(
                &[("a", Panic, 0), ("b", Pass, 0), ("c", Pass, 5)],
                &[("a", "b")],
            );
            let (walk, t) = run(&d, 2, CancellationToken::new(), local).await;
            assert!(walk.stopped.is_none());
            assert!(
                matches!(&walk.outcomes[0], Outcome::Panicked(m) if m == "a broke"),
                "{:?}",
                walk.outcomes[0]
            );
            assert!(matches!(walk.outcomes[1], Outcome::Skipped { cause } if cause == NodeId(0)));
            assert!(walk.outcomes[2].is_done());
            assert_eq!(
                settled(&t),
                vec!["a panicked: a broke", "b skipped: a", "c done"]
            );
        }
    );

    both_walks!(
        a_fatal_error_lets_running_nodes_finish_and_starts_nothing_more,
        local,
        {
            let d = dag(
                &[
                    ("slow", Pass, 40),
                    ("lock", Fatal, 5),
                    ("after_slow", Pass, 0),
                    ("other", Pass, 0),
                ],
                &[("slow", "after_slow")],
            );
            let (walk, t) = run(&d, 2, CancellationToken::new(), local).await;
            assert_eq!(walk.stopped, Some(Stop::Fatal(NodeId(1))));
            assert!(walk.outcomes[0].is_done(), "the running node finished");
            assert!(matches!(
                walk.outcomes[1],
                Outcome::Failed(Oops { fatal: true })
            ));
            let stopped = |o: &Outcome<_, _>| matches!(o, Outcome::NotStarted { stop: Some(Stop::Fatal(n)) } if *n == NodeId(1));
            assert!(stopped(&walk.outcomes[2]) && stopped(&walk.outcomes[3]));
            assert_eq!(*t.started.lock().unwrap(), vec!["slow", "lock"]);
            assert_eq!(
                settled(&t),
                vec![
                    "lock failed",
                    "slow done",
                    "after_slow not started",
                    "other not started"
                ]
            );
        }
    );

    both_walks!(ready_nodes_start_in_node_order, local, {
        // One at a time: whatever became ready, the node added first goes first, so e
        // (ready once a finishes) goes before c and d, which were ready from the start.
        let d = dag(
            &[
                ("a", Pass, 0),
                ("e", Pass, 0),
                ("c", Pass, 0),
                ("d", Pass, 0),
                ("b", Pass, 0),
            ],
            &[("a", "e"), ("d", "b")],
        );
        for _ in 0..5 {
            let (_, t) = run(&d, 1, CancellationToken::new(), local).await;
            assert_eq!(*t.started.lock().unwrap(), vec!["a", "e", "c", "d", "b"]);
        }
    });

    both_walks!(no_more_than_parallelism_nodes_run_at_once, local, {
        let names: Vec<&'static str> = (0..24)
            .map(|i| &*Box::leak(format!("n{i}").into_boxed_str()))
            .collect();
        let nodes: Vec<_> = names.iter().map(|n| (*n, Pass, 3)).collect();
        // Two layers: every even node waits for the one before it.
        let edges: Vec<_> = (0..12).map(|i| (names[2 * i], names[2 * i + 1])).collect();
        let d = dag(&nodes, &edges);
        for bound in [1, 3, 5] {
            let (walk, t) = run(&d, bound, CancellationToken::new(), local).await;
            assert!(walk.outcomes.iter().all(Outcome::is_done));
            assert_eq!(t.most.load(Ordering::SeqCst), bound, "bound {bound}");
        }
    });

    #[test]
    fn a_cycle_is_named_with_its_labels() {
        let mut d: Dag<&str, &str> = Dag::new();
        let a = d.add_node("a");
        let b = d.add_node("b");
        let c = d.add_node("c");
        let x = d.add_node("x");
        let y = d.add_node("y");
        d.add_edge(a, b, "reference");
        d.add_edge(b, c, "depends_on");
        d.add_edge(c, a, "container");
        // A longer way round is not the one named.
        d.add_edge(b, x, "replacement order");
        d.add_edge(x, y, "reference");
        d.add_edge(y, a, "reference");
        let cycles = d.cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(
            cycles[0].render(|n| d[n].to_string()),
            "a → b (reference) → c (depends_on) → a (container)"
        );
        assert_eq!(d.label(c, a), Some(&"container"));
        let mut acyclic: Dag<&str, &str> = Dag::new();
        let p = acyclic.add_node("p");
        let q = acyclic.add_node("q");
        acyclic.add_edge(p, q, "reference");
        assert!(acyclic.cycles().is_empty());
        let mut own: Dag<&str, &str> = Dag::new();
        let s = own.add_node("s");
        own.add_edge(s, s, "reference");
        assert_eq!(
            own.cycles()[0].render(|n| own[n].to_string()),
            "s → s (reference)"
        );
    }

    /// `a1..a3` all before `b1..b3` (one call of `add_edges_between`), and `x` free.
    fn joined(a2: Act) -> (Dag<Node, &'static str>, [NodeId; 7]) {
        let mut d = Dag::new();
        let mut node = |name, act, ms| d.add_node(Node { name, act, ms });
        let ids = [
            node("a1", Pass, 10),
            node("a2", a2, 30),
            node("a3", Pass, 0),
            node("b1", Pass, 0),
            node("b2", Pass, 0),
            node("b3", Pass, 0),
            node("x", Pass, 5),
        ];
        d.add_edges_between(&ids[..3], &ids[3..6], "made after");
        (d, ids)
    }

    both_walks!(
        a_join_starts_what_follows_when_the_last_before_it_finishes,
        local,
        {
            let (d, ids) = joined(Pass);
            // One join: an edge for each node, not one for each pair.
            assert_eq!(d.edge_count(), 6);
            assert_eq!(d.len(), 7);
            assert_eq!(d.dependencies(ids[4]), ids[..3].to_vec());
            assert_eq!(d.dependents(ids[0]), ids[3..6].to_vec());
            assert_eq!(d.label(ids[1], ids[5]), Some(&"made after"));
            assert_eq!(d.label(ids[3], ids[4]), None);
            let order = d.order().unwrap();
            assert_eq!(order.len(), 7, "the join is not a node: {order:?}");
            let at = |id| order.iter().position(|&n| n == id).unwrap();
            assert!(
                ids[..3]
                    .iter()
                    .all(|&a| ids[3..6].iter().all(|&b| at(a) < at(b)))
            );
            let (walk, t) = run(&d, 8, CancellationToken::new(), local).await;
            assert!(walk.outcomes.iter().all(Outcome::is_done));
            assert_eq!(walk.outcomes.len(), 7);
            assert_eq!(
                *t.finished.lock().unwrap(),
                vec!["a3", "x", "a1", "a2", "b1", "b2", "b3"]
            );
            assert_eq!(
                *t.started.lock().unwrap(),
                vec!["a1", "a2", "a3", "x", "b1", "b2", "b3"]
            );
        }
    );

    both_walks!(a_failure_before_a_join_skips_everything_after_it, local, {
        let (d, _) = joined(Fail);
        let (walk, t) = run(&d, 8, CancellationToken::new(), local).await;
        assert!(walk.stopped.is_none());
        assert_eq!(
            settled(&t),
            vec![
                "a3 done",
                "x done",
                "a1 done",
                "a2 failed",
                "b1 skipped: a2",
                "b2 skipped: a2",
                "b3 skipped: a2"
            ]
        );
        assert!(!t.started.lock().unwrap().iter().any(|n| n.starts_with('b')));
    });

    #[test]
    fn a_cycle_through_a_join_is_named_in_nodes_and_few_pairs_need_no_join() {
        let (mut d, ids) = joined(Pass);
        d.add_edge(ids[5], ids[1], "reference");
        let cycles = d.cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(
            cycles[0].render(|n| d[n].name.to_string()),
            "a2 → b3 (made after) → a2 (reference)"
        );
        // One before two: two edges, no join (which would take three).
        let mut small: Dag<&str, &str> = Dag::new();
        let a = small.add_node("a");
        let b = small.add_node("b");
        let c = small.add_node("c");
        small.add_edges_between(&[a, a], &[b, c], "reference");
        assert_eq!(small.edge_count(), 2);
        assert_eq!(small.dependents(a), vec![b, c]);
    }

    both_walks!(nodes_on_a_cycle_are_not_started_and_the_walk_ends, local, {
        let d = dag(
            &[("a", Pass, 0), ("b", Pass, 0), ("free", Pass, 0)],
            &[("a", "b"), ("b", "a")],
        );
        let (walk, t) = run(&d, 2, CancellationToken::new(), local).await;
        assert!(matches!(
            walk.outcomes[0],
            Outcome::NotStarted { stop: None }
        ));
        assert!(matches!(
            walk.outcomes[1],
            Outcome::NotStarted { stop: None }
        ));
        assert!(walk.outcomes[2].is_done());
        assert_eq!(*t.started.lock().unwrap(), vec!["free"]);
    });

    #[tokio::test(start_paused = true)]
    async fn the_local_walk_lets_nodes_borrow_and_overlap_where_they_wait() {
        let d = dag(
            &[("a", Pass, 0), ("b", Pass, 0), ("c", Pass, 0)],
            &[("a", "c"), ("b", "c")],
        );
        // Borrowed, not 'static: what the plan's nodes do with the configuration.
        let log = Mutex::new(Vec::new());
        let opts = WalkOptions {
            parallelism: 3,
            cancel: CancellationToken::new(),
        };
        let begun = tokio::time::Instant::now();
        let walk = d
            .walk_local(
                &opts,
                |id| {
                    let (log, name) = (&log, d[id].name);
                    async move {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        log.lock().unwrap().push(name);
                        Ok::<_, Oops>(())
                    }
                },
                |_, _| {},
            )
            .await;
        assert!(walk.outcomes.iter().all(Outcome::is_done));
        assert_eq!(*log.lock().unwrap(), vec!["a", "b", "c"]);
        // a and b waited at the same time: two waits, not three.
        assert_eq!(begun.elapsed(), Duration::from_millis(20));
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_a_walk_stops_its_tasks() {
        let d = dag(&[("slow", Pass, 0)], &[]);
        let finished = Arc::new(AtomicUsize::new(0));
        let opts = WalkOptions {
            parallelism: 1,
            cancel: CancellationToken::new(),
        };
        let f = finished.clone();
        let walk = d.walk(
            &opts,
            move |_| {
                let f = f.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    f.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, Oops>(())
                }
            },
            |_, _| {},
        );
        // The walk is dropped mid-way, as a killed apply is.
        let _ = tokio::time::timeout(Duration::from_millis(10), walk).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            finished.load(Ordering::SeqCst),
            0,
            "the task ran on after the walk was dropped"
        );
    }
}
