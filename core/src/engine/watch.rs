//! What an evaluation made ahead of time read from the world, to be checked against the
//! world as it is once the evaluation's turn comes: the plan evaluates a block while what
//! it refers to is still being read from the service, against the values state holds, and
//! keeps the result only if every value it read is the same in the world by then (see
//! `planner::speculate`).

use crate::addrs::ModuleInstance;
use crate::engine::world::World;
use crate::value::{PathStep, Value};
use std::sync::Mutex;

/// The reads of one evaluation, in the order made.
#[derive(Debug, Default)]
pub struct Watch {
    reads: Mutex<Vec<Read>>,
}

#[derive(Debug)]
enum Read {
    /// The value under a root at some steps (`None`: no such root).
    Value {
        module: ModuleInstance,
        root: String,
        steps: Vec<PathStep>,
        found: Option<Value>,
    },
    /// Whether reading some names under a root reveals a sensitive value.
    Sensitive {
        module: ModuleInstance,
        root: String,
        names: Vec<String>,
        answer: bool,
    },
}

impl Watch {
    fn push(&self, read: Read) {
        self.reads
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(read);
    }

    pub(crate) fn value(
        &self,
        module: &ModuleInstance,
        root: &str,
        steps: &[PathStep],
        found: Option<&Value>,
    ) {
        self.push(Read::Value {
            module: module.clone(),
            root: root.to_string(),
            steps: steps.to_vec(),
            found: found.cloned(),
        });
    }

    pub(crate) fn sensitive(
        &self,
        module: &ModuleInstance,
        root: &str,
        names: &[&str],
        answer: bool,
    ) {
        self.push(Read::Sensitive {
            module: module.clone(),
            root: root.to_string(),
            names: names.iter().map(|n| n.to_string()).collect(),
            answer,
        });
    }

    /// Whether `world` answers every read as it was answered: then an evaluation against
    /// `world` comes out as the watched one did.
    pub fn holds_in(&self, world: &World) -> bool {
        let reads = self
            .reads
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        reads.iter().all(|r| match r {
            Read::Value {
                module,
                root,
                steps,
                found,
            } => world.value_at(module, root, steps) == found.as_ref(),
            Read::Sensitive {
                module,
                root,
                names,
                answer,
            } => {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                world.sensitive_at(module, root, &names) == *answer
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::eval::Evaluator;
    use crate::plan::Mode;

    fn world() -> World {
        World::bare()
    }

    fn holder(id: &str) -> World {
        let mut w = world();
        let root = ModuleInstance::root();
        w.declare_resource(&root, Mode::Managed, "t", "a", Value::List(Vec::new()));
        let o = crate::value::Object::from_iter([("id".to_string(), Value::from(id))]);
        w.set_instance(
            &root,
            Mode::Managed,
            "t",
            "a",
            Some(&crate::plan::InstanceKey::Index(0)),
            Value::object(o),
        );
        w
    }

    /// Evaluates `src` against a watched copy of `w`: the value, and the watch.
    fn watched(w: &World, src: &str) -> (Value, std::sync::Arc<Watch>) {
        let mut w = w.clone();
        let watch = w.watched();
        let expr = src.parse::<hcl_edit::expr::Expression>().unwrap();
        let at = w.at(&ModuleInstance::root());
        let v = Evaluator::new(&at, std::path::Path::new("."))
            .eval(&expr)
            .unwrap();
        (v, watch)
    }

    #[test]
    fn a_read_holds_while_the_value_read_is_the_same() {
        let (v, watch) = watched(&holder("1"), "t.a[0].id");
        assert_eq!(v, Value::from("1"));
        assert!(watch.holds_in(&holder("1")));
        assert!(!watch.holds_in(&holder("2")));
        // Another attribute of the same object is not what was read.
        let mut other = holder("1");
        other.set_instance(
            &ModuleInstance::root(),
            Mode::Managed,
            "t",
            "b",
            None,
            Value::from("x"),
        );
        assert!(watch.holds_in(&other));
    }

    #[test]
    fn a_root_missing_when_read_is_read_again() {
        let (v, watch) = watched(&world(), r#"try(t.a[0].id, "none")"#);
        assert_eq!(v, Value::from("none"));
        assert!(watch.holds_in(&world()));
        assert!(!watch.holds_in(&holder("1")));
    }

    #[test]
    fn a_read_that_became_sensitive_does_not_hold() {
        let (_, watch) = watched(&holder("1"), "t.a[0].id");
        let mut sensitive = holder("1");
        sensitive.mark_sensitive(&ModuleInstance::root(), "t", "a", "id");
        assert!(!watch.holds_in(&sensitive));
    }
}
