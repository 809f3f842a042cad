//! `count` and `for_each`: the instances a resource block stands for.

use crate::diagnostics::Diagnostics;
use crate::engine::world::World;
use crate::lang::load::Resource;
use crate::lang::repetition::{Expansion, Instances, expansion};

/// The instances a resource expands to, with their `each.value`; `None` when they cannot be
/// known (reported, but when `offline`: without the service, what data sources read is not
/// known yet, and a `for_each` over it is valid — the plan knows it).
pub(super) fn expand(
    r: &Resource,
    world: &World,
    base_dir: &std::path::Path,
    offline: bool,
    diags: &mut Diagnostics,
) -> Option<Instances> {
    match expansion(
        r.count.as_ref(),
        r.for_each.as_ref(),
        &world.at(&r.module),
        base_dir,
        diags,
    ) {
        Expansion::Instances(i) => Some(i),
        Expansion::Unknown(d) => {
            if !offline {
                diags.push(d);
            }
            None
        }
        Expansion::Invalid => None,
    }
}
