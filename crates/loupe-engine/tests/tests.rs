//! The one integration-test binary of `loupe-engine`: every file beside this one is a module of it,
//! so the crate is linked once and its tests run in one process (ripgrep's `tests/tests.rs`).
//! A module's insta snapshots are named after its path in this binary (`tests__<module>__…`)
//! unless it names its own snapshot directory.

// Tests write their fixtures (clippy.toml forbids writes in production code).
#![allow(clippy::disallowed_methods)]

mod analyze_accuracy;
mod analyze_cases;
mod ceilings;
mod common;
mod contract_edges;
mod diff_preview_cases;
mod diff_preview_secrets;
mod edit_cases;
mod edit_roundtrip;
mod git_links;
mod hostile_arguments;
mod hostile_names;
mod index_dir_hardening;
mod legacy_cases;
mod progress_cases;
mod read_cases;
mod repository_config;
mod search_cases;
mod session_cases;
mod structured_faces;
mod symbol_edit_cases;
