//! What the tools share under them: the caches kept for one workspace root.

pub(crate) mod git;
pub(crate) mod oversized;
pub(crate) mod proposals;
pub(crate) mod relations;
pub(crate) mod symbols;
