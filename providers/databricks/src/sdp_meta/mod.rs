//! sdp-meta flows: the flow and onboarding schemas, rendering the onboarding file set exactly as
//! released sdp-meta parses it, the static checks (the V-rules), and importing existing
//! onboarding files as configuration. See docs/sdp-meta-flows.md. Which attribute is which
//! key of the onboarding file is said once, in [`fields`]: rendering and importing both walk
//! its tables.

pub mod checks;
pub mod fields;
pub mod import;
pub mod render;
pub mod schema;
