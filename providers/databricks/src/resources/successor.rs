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
    /// `(parent block, old name, new name)`; the parent is `""` at the top level.
    pub renames: &'static [(&'static str, &'static str, &'static str)],
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
}
