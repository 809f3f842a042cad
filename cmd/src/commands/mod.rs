//! One module per command: its arguments and `exec`, over the shared steps of
//! [`crate::context`].

pub mod adopt;
pub mod apply;
pub mod auth;
pub mod completion;
pub mod console;
pub mod convert;
pub mod destroy;
pub mod env;
pub mod flows;
pub mod fmt;
pub mod force_unlock;
pub mod graph;
pub mod import;
pub mod init;
pub mod local;
pub mod lsp;
pub mod output;
pub mod plan;
pub mod promote;
pub mod run;
pub mod schema;
pub mod show;
pub mod state;
pub mod validate;
