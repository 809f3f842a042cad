//! sdp-meta flows: the flow and onboarding schemas, rendering the onboarding file set exactly as
//! released sdp-meta parses it, the static checks (the V-rules), and importing existing
//! onboarding files as configuration. See docs/sdp-meta-flows.md.

pub mod checks;
pub mod import;
pub mod render;
pub mod schema;
