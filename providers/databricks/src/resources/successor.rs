//! What a kind declares to be carried over from a legacy kind of the Terraform provider
//! (`brickform convert`): the type lives with the kinds, which declare it, and the converter
//! reads it.

/// A legacy kind the Terraform provider superseded with another that manages the same
/// objects through a newer API, carried over as that kind: its arguments and blocks
/// renamed, a reference to an attribute of another object rewritten to the attribute the
/// newer kind takes, and what has no counterpart left out with the reason.
pub struct Successor {
    pub from_kind: &'static str,
    pub to_kind: &'static str,
    /// Arguments and blocks renamed, at any depth.
    pub renames: &'static [Rename],
    /// `(old argument, new argument, kind referred to, its old attribute, its new one)`:
    /// carried over only as a reference to that kind (`databricks_sql_endpoint.w.data_source_id`
    /// is `databricks_sql_endpoint.w.id`); any other value is left out.
    pub resolved: &'static [(
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    )],
    /// `(old argument, new argument, prefix, kind, its old attribute, its new one)`: an
    /// old argument written as the template `"PREFIX${KIND.NAME.OLD}"` is the new argument
    /// `KIND.NAME.NEW` (`"folders/${databricks_directory.d.object_id}"` is
    /// `databricks_directory.d.path`); any other value is as `left_out` says.
    pub templated: &'static [(
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    )],
    /// `(argument, why)`: top-level arguments with no counterpart.
    pub left_out: &'static [(&'static str, &'static str)],
    /// `(parent block, argument or block, why)`: nested ones with no counterpart; the parent
    /// by the successor's names (`parameter.date_range_value`).
    pub left_out_within: &'static [(&'static str, &'static str, &'static str)],
}

/// How a renamed argument's value changes form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reshape {
    /// As it was.
    Same,
    /// One value that the successor takes as a list of one: `x` is `[x]`.
    InList,
    /// A list the successor takes as one text, a line each: `x` is `join("\n", x)`.
    Lines,
}

/// One argument or block renamed: where it lies (the parent block's path by the
/// successor's names, `""` at the top), its old and new names, how its value changes form,
/// and, for a block, the arguments the successor's block adds (their values as HCL), for
/// what the old block's name said (`datetime` is a `date_value` of minute precision).
#[derive(Debug, Clone, Copy)]
pub struct Rename {
    pub parent: &'static str,
    pub old: &'static str,
    pub new: &'static str,
    pub reshape: Reshape,
    pub adds: &'static [(&'static str, &'static str)],
}

impl Rename {
    pub const fn to(parent: &'static str, old: &'static str, new: &'static str) -> Rename {
        Rename {
            parent,
            old,
            new,
            reshape: Reshape::Same,
            adds: &[],
        }
    }

    pub const fn reshaped(self, reshape: Reshape) -> Rename {
        Rename { reshape, ..self }
    }

    pub const fn adding(self, adds: &'static [(&'static str, &'static str)]) -> Rename {
        Rename { adds, ..self }
    }
}
