//! The one integration-test binary of `loupe-mcp`: every file beside this one is a module of it.

// Tests write their fixtures (clippy.toml forbids writes in production code).
#![allow(clippy::disallowed_methods)]

mod http_abuse;
