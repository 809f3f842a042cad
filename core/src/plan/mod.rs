//! Plans: the model, the three-way diff that builds one, and the renderers.

pub mod diff;
pub mod model;
pub mod render_json;
pub mod render_markdown;
pub mod render_text;
pub mod saved;

pub use model::*;
