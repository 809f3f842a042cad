//! `--target` and `--replace`: addresses given on the command line.

use crate::addrs::{ConfigNode, InstanceAddr, ResourceAddr, Target};
use crate::dag::NodeId;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::engine::{Engine, InstanceSpec, PlanRequest};
use crate::graph::ConfigGraph;
use crate::plan::{Plan, PlanMode, ResourceChange};
use brickform_state::StateDocument;
use std::collections::HashSet;

/// The nodes of the configuration graph a targeted plan walks, as Terraform narrows its
/// graph: the targeted resources, everything they read (directly or through variables,
/// locals, module outputs and data sources), and the values (variables, locals, outputs)
/// that read nothing else. Nothing outside is evaluated, looked up or refreshed, so a data
/// source that can only be read once a target exists does not stop the targeted apply that
/// makes it. `None` when the plan is not narrowed: no targets, or a destroy, which narrows
/// to the targets' dependents afterwards ([`Engine::apply_targets`]) and reads nothing.
pub(super) fn walked_nodes(
    graph: &ConfigGraph,
    order: &[NodeId],
    req: &PlanRequest,
) -> Option<HashSet<NodeId>> {
    if req.targets.is_empty() || req.mode == PlanMode::Destroy {
        return None;
    }
    let targets = parsed_targets(req);
    let dag = graph.dag();
    let mut keep: HashSet<NodeId> = HashSet::new();
    let mut stack: Vec<NodeId> = order
        .iter()
        .copied()
        .filter(|&n| match &dag[n] {
            ConfigNode::Resource(r) => targets.iter().any(|t| t.selects(r)),
            _ => false,
        })
        .collect();
    while let Some(n) = stack.pop() {
        if keep.insert(n) {
            stack.extend(dag.dependencies(n));
        }
    }
    // Values whose inputs are all walked: an output of the targets, a constant local.
    // Dependencies come first in `order`, so one pass settles chains of values.
    for &n in order {
        if !matches!(dag[n], ConfigNode::Resource(_))
            && dag.dependencies(n).iter().all(|d| keep.contains(d))
        {
            keep.insert(n);
        }
    }
    Some(keep)
}

/// The resource blocks a narrowed plan leaves out ([`walked_nodes`]), by address: what the
/// state holds for them stays as it is rather than counting as removed from the
/// configuration.
pub(super) fn left_out(graph: &ConfigGraph, walked: &HashSet<NodeId>) -> HashSet<ResourceAddr> {
    graph
        .dag()
        .nodes()
        .filter(|n| !walked.contains(n))
        .filter_map(|n| match &graph.dag()[n] {
            ConfigNode::Resource(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

impl Engine<'_> {
    /// Narrows a plan to `--target` addresses. Applying a target needs what it depends on, so
    /// a normal plan keeps the targets and their dependencies; destroying a target takes what
    /// depends on it with it (it could not stay behind without it), and never what the target
    /// itself depends on.
    pub(super) fn apply_targets(
        &self,
        graph: &ConfigGraph,
        plan: &mut Plan,
        specs: &mut Vec<InstanceSpec>,
        req: &PlanRequest,
        state: &StateDocument,
        diags: &mut Diagnostics,
    ) {
        let targets = parsed_targets(req);
        for (text, t) in req.targets.iter().zip(&targets) {
            // A declared block with no instances (`count = 0`, an empty `for_each`) is a
            // target with nothing to do, not a typo: as in Terraform, the plan is empty.
            let declared =
                matches!(&t.0, Some(Target::Resource(r)) if self.config.resources.contains_key(r));
            if !declared && !plan.changes.iter().any(|c| t.matches(&c.addr)) {
                diags.push(unknown_address_error("--target", text, plan, &self.config));
            }
        }
        // What each instance depends on: the configuration's references, and for instances
        // being deleted also what the state recorded when they were applied.
        let depends_on = |c: &ResourceChange| -> Vec<InstanceAddr> {
            let mut d = c.dependencies.clone();
            if let Some(r) = state.get(&c.addr) {
                d.extend(r.dependencies.iter().cloned());
            }
            d
        };
        let destroying = req.mode == PlanMode::Destroy;
        // Destroying follows the configuration's blocks too, as Terraform's graph does: a
        // block with no instances (`count = 0`) still joins what reads it to what it reads.
        let block_dependencies: Vec<(ResourceAddr, Vec<ResourceAddr>)> = if destroying {
            graph
                .dag()
                .nodes()
                .filter_map(|n| match &graph.dag()[n] {
                    node @ ConfigNode::Resource(r) => {
                        Some((r.clone(), graph.resource_dependencies(node)))
                    }
                    _ => None,
                })
                .collect()
        } else {
            Vec::new()
        };
        // What is kept: instances, and blocks walked through (a block as its instance
        // without a key, whose address it shares).
        let mut keep: HashSet<InstanceAddr> = HashSet::new();
        let mut stack: Vec<InstanceAddr> = plan
            .changes
            .iter()
            .filter(|c| targets.iter().any(|t| t.matches(&c.addr)))
            .map(|c| c.addr.clone())
            .collect();
        while let Some(a) = stack.pop() {
            if !keep.insert(a.clone()) {
                continue;
            }
            if destroying {
                // Dependents: instances that name `a` (or its resource) among their dependencies.
                // A block's address (kept below) is its own resource.
                let a_base = &a.resource;
                for c in &plan.changes {
                    if depends_on(c)
                        .iter()
                        .any(|d| *d == a || d.whole() == Some(a_base))
                    {
                        stack.push(c.addr.clone());
                    }
                }
                // The block's address is kept only to be walked through: no change has it
                // unless the block has instances, which are reached the same way.
                for (block, deps) in &block_dependencies {
                    if deps.iter().any(|d| d == a_base) {
                        stack.push(block.instance(None));
                    }
                }
            } else if let Some(c) = plan.changes.iter().find(|c| c.addr == a) {
                // What applying the target needs: what its configuration reads. Not what
                // the state says it read once: an object the configuration no longer
                // declares is deleted after its dependents stop reading it, so it is their
                // dependent now, and a targeted apply of them must leave it alone. A delete
                // needs nothing applied first.
                if c.action == crate::plan::Action::Delete {
                    continue;
                }
                for d in &c.dependencies {
                    for c2 in &plan.changes {
                        if c2.addr == *d || d.whole() == Some(c2.resource()) {
                            stack.push(c2.addr.clone());
                        }
                    }
                }
            }
        }
        let mut i = 0;
        while i < plan.changes.len() {
            if keep.contains(&plan.changes[i].addr) {
                i += 1;
            } else {
                plan.changes.remove(i);
                specs.remove(i);
            }
        }
    }
}

/// The `--target` addresses, read once. One that is not an address names nothing, which
/// [`unknown_address_error`] reports with its text.
fn parsed_targets(req: &PlanRequest) -> Vec<TargetText> {
    req.targets
        .iter()
        .map(|t| TargetText(Target::parse(t).ok()))
        .collect()
}

/// A `--target` as read: `None` for a text that is not an address.
struct TargetText(Option<Target>);

impl TargetText {
    fn matches(&self, addr: &crate::addrs::InstanceAddr) -> bool {
        self.0.as_ref().is_some_and(|t| t.matches(addr))
    }

    fn selects(&self, resource: &ResourceAddr) -> bool {
        self.0.as_ref().is_some_and(|t| t.selects(resource))
    }
}

/// An address given on the command line that names no instance of the plan, with the closest
/// one it may have meant.
pub(super) fn unknown_address_error(
    flag: &str,
    address: &str,
    plan: &Plan,
    config: &crate::lang::load::Config,
) -> Diagnostic {
    // The configuration's blocks too: a targeted plan holds only what it walked.
    // Each instance, and its resource block.
    let mut known: Vec<String> = plan
        .changes
        .iter()
        .flat_map(|c| [c.address(), c.resource_address()])
        .chain(config.resources.keys().map(ToString::to_string))
        .collect();
    known.sort();
    known.dedup();
    Diagnostic::error(format!("{flag} {address} matches no resource"))
        .detail(format!(
            "Neither the configuration nor the state has an instance at {address}, so the plan would silently do nothing for it."
        ))
        .hint(
            crate::diagnostics::did_you_mean(address, known.iter().map(String::as_str)).unwrap_or_else(
                || match known.len() {
                    0 => "the plan has no resources".to_string(),
                    n if n <= 10 => format!("the plan's addresses: {}", known.join(", ")),
                    n => format!("the plan's addresses (first 10 of {n}): {}", known[..10].join(", ")),
                },
            ),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::load::load_sources;
    use std::path::Path;

    /// The node ids `--target targets` walks in `src`, sorted.
    fn walked(src: &str, targets: &[&str], mode: PlanMode) -> Option<Vec<String>> {
        let (c, d) = load_sources(
            Path::new("."),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
        );
        assert!(!d.has_errors(), "{d:?}");
        let (g, _) = crate::graph::build(&c);
        let req = PlanRequest {
            mode,
            targets: targets.iter().map(|t| t.to_string()).collect(),
            ..Default::default()
        };
        let mut out: Vec<String> = walked_nodes(&g, &g.order()?, &req)?
            .into_iter()
            .map(|n| g.dag()[n].to_string())
            .collect();
        out.sort();
        Some(out)
    }

    const SRC: &str = r#"
variable "env" { default = "dev" }
variable "other" { default = "x" }
locals { cat = "c_${var.env}" }
resource "t" "catalog" { name = local.cat }
resource "t" "schema" { catalog = t.catalog.name }
data "t" "tables" { schema = t.schema.name }
resource "t" "flow" {
  for_each = toset(data.t.tables.names)
  name     = each.key
}
resource "t" "unrelated" { name = var.other }
output "catalog" { value = t.catalog.name }
output "flows" { value = t.flow }
output "constant" { value = "c" }
"#;

    #[test]
    fn a_target_walks_what_it_reads_and_the_values_of_what_is_walked() {
        assert_eq!(
            walked(SRC, &["t.schema"], PlanMode::Normal).unwrap(),
            [
                "local.cat",
                "output.catalog",
                "output.constant",
                "t.catalog",
                "t.schema",
                "var.env",
                "var.other",
            ]
        );
        // An instance address targets its block; the data source comes with the flows.
        let flows = walked(SRC, &[r#"t.flow["a"]"#], PlanMode::Normal).unwrap();
        assert!(flows.contains(&"data.t.tables".to_string()), "{flows:?}");
        assert!(flows.contains(&"output.flows".to_string()), "{flows:?}");
        assert!(!flows.contains(&"t.unrelated".to_string()), "{flows:?}");
    }

    #[test]
    fn a_plan_without_targets_or_a_destroy_walks_everything() {
        assert_eq!(walked(SRC, &[], PlanMode::Normal), None);
        assert_eq!(walked(SRC, &["t.schema"], PlanMode::Destroy), None);
        assert!(walked(SRC, &["t.schema"], PlanMode::RefreshOnly).is_some());
    }
}
