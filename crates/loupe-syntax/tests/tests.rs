//! The one integration-test binary of `loupe-syntax`: every file beside this one is a module of it,
//! so the crate is linked once and its tests run in one process (ripgrep's `tests/tests.rs`).
//! A module's insta snapshots are named after its path in this binary (`tests__<module>__…`)
//! unless it names its own snapshot directory.

// Tests write their fixtures (clippy.toml forbids writes in production code).
#![allow(clippy::disallowed_methods)]

mod cases;
mod fixtures;
mod flow;
mod flow_cases;
