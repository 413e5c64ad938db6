//! The one integration-test binary of `loupe-mcp`: every file beside this one is a module of it.

mod http_abuse;
