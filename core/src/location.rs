//! Where an object lies, as the engine compares places: a namespace a provider names and
//! the steps down to the object. Containment is decided on whole steps, so a step holding a
//! `/` or a `.` (a storage url's host, a dotted name) is never split and never misread as
//! two; the engine needs no knowledge of how a provider spells its paths.

use std::fmt;

/// Where an object lies: a namespace (one family of places that can hold one another, as
/// a provider names it) and the steps from the namespace's root down to the object,
/// outermost first. A location contains those that extend its steps in the same namespace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    namespace: &'static str,
    steps: Vec<String>,
}

impl Location {
    /// The place `steps` down from the root of `namespace`.
    pub fn new<S: Into<String>>(
        namespace: &'static str,
        steps: impl IntoIterator<Item = S>,
    ) -> Location {
        Location {
            namespace,
            steps: steps.into_iter().map(Into::into).collect(),
        }
    }

    pub fn namespace(&self) -> &'static str {
        self.namespace
    }

    /// The steps from the namespace's root, outermost first.
    pub fn steps(&self) -> &[String] {
        &self.steps
    }

    /// How many steps down from the namespace's root it lies: of two locations one
    /// contains, the outer one is the shallower.
    pub fn depth(&self) -> usize {
        self.steps.len()
    }

    /// Whether `other` lies inside this location, at any depth; a location is not inside
    /// itself.
    pub fn contains(&self, other: &Location) -> bool {
        self.namespace == other.namespace
            && other.steps.len() > self.steps.len()
            && other.steps.starts_with(&self.steps)
    }

    /// Whether this location lies inside `container`, at any depth.
    pub fn is_within(&self, container: &Location) -> bool {
        container.contains(self)
    }

    /// The locations above this one, outermost first: the namespace's root, then one for
    /// each step but the last. Objects placed at them are the containers of one placed here.
    pub fn ancestors(&self) -> impl Iterator<Item = Location> + '_ {
        (0..self.steps.len()).map(|n| Location {
            namespace: self.namespace,
            steps: self.steps[..n].to_vec(),
        })
    }
}

/// The namespace, then each step after a `/`: `store/folder/data.csv`. Only a fallback for
/// kinds that show their locations no other way (see `ResourceKind::show_location`); a
/// step's own `/` is written as it is, so the text is for reading, not for parsing back.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.namespace)?;
        for step in &self.steps {
            write!(f, "/{step}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(steps: &[&str]) -> Location {
        Location::new("store", steps.iter().copied())
    }

    #[test]
    fn a_location_contains_what_extends_its_steps() {
        assert!(at(&["c"]).contains(&at(&["c", "s"])));
        assert!(at(&["c"]).contains(&at(&["c", "s", "v", "a.csv"])));
        assert!(at(&["c", "s"]).is_within(&at(&["c"])));
        assert!(at(&[]).contains(&at(&["c"])));
        // Not itself, not a sibling whose name starts the same, not the other way round.
        assert!(!at(&["c"]).contains(&at(&["c"])));
        assert!(!at(&["c"]).contains(&at(&["cat"])));
        assert!(!at(&["c", "s"]).contains(&at(&["c"])));
        // Another namespace with the same steps is another place.
        assert!(!Location::new("other", ["c"]).contains(&at(&["c", "s"])));
    }

    #[test]
    fn a_step_holding_a_separator_is_one_step() {
        let bucket = at(&["s3://bucket"]);
        assert!(bucket.contains(&at(&["s3://bucket", "landing"])));
        // One step `s3://bucket/landing` is not inside `s3://bucket`, nor under `s3:`.
        assert!(!bucket.contains(&at(&["s3://bucket/landing"])));
        assert!(!at(&["s3:"]).contains(&at(&["s3://bucket", "landing"])));
        // A dotted step is one name, not a path of three.
        assert!(!at(&["c"]).contains(&at(&["c.s.v"])));
        assert!(!at(&["c.s"]).contains(&at(&["c.s.v"])));
        assert_eq!(at(&["c.s.v"]).ancestors().count(), 1);
    }

    #[test]
    fn ancestors_run_from_the_root_down() {
        let file = at(&["c", "s", "a.csv"]);
        let above: Vec<Location> = file.ancestors().collect();
        assert_eq!(above, [at(&[]), at(&["c"]), at(&["c", "s"])]);
        assert!(above.iter().all(|a| a.contains(&file)));
        assert_eq!(at(&[]).ancestors().count(), 0);
        assert_eq!(
            at(&["s3://bucket", "x"]).ancestors().last(),
            Some(at(&["s3://bucket"]))
        );
    }

    #[test]
    fn the_text_is_the_namespace_and_the_steps() {
        assert_eq!(at(&["c", "s", "a.csv"]).to_string(), "store/c/s/a.csv");
        assert_eq!(Location::new("", ["a", "seen"]).to_string(), "/a/seen");
        assert_eq!(at(&[]).to_string(), "store");
    }
}
