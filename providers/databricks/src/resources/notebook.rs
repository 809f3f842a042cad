//! `databricks_notebook`: a notebook in the workspace, from a local source file or inline
//! content.

use super::content::{ContentKind, Store, base_schema, workspace_object_schema};
use crate::Shared;
use brickform_core::provider::{AttrType, Attribute};
use std::sync::Arc;

pub fn kind(shared: Arc<Shared>) -> ContentKind {
    ContentKind {
        type_name: "databricks_notebook",
        store: Store::Notebook,
        schema: workspace_object_schema(
            base_schema("A notebook in the workspace, imported as source code or a Jupyter notebook; or a folder of notebooks from a Databricks archive.").attr(
                Attribute::optional_computed("language", AttrType::String)
                    .one_of(&["PYTHON", "SQL", "SCALA", "R"])
                    .describe(
                        "Told from the extension of the path, else of the source file, when unset.",
                    ),
            )
            .attr(
                Attribute::optional("format", AttrType::String)
                    .one_of(&["SOURCE", "JUPYTER", "DBC"])
                    .server_default("SOURCE")
                    .describe("How the content is written: source code, a Jupyter notebook (.ipynb, told from the extension of the path or the source file when unset), or a Databricks archive (.dbc, told from the source file: a folder of notebooks made at path, and replaced whole when the archive changes)."),
            ),
        ),
        shared,
    }
}
