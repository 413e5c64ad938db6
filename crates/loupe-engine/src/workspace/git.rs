//! The git repository around the root, as every tool and `manage status` open it.

use loupe_core::RepoPath;
use loupe_git::{GitError, Repository};

use crate::workspace::Workspace;

/// The repository around the root, with the root's exclusions (§3.1) applied to its
/// baselines: `HEAD` and the git index hold whatever was ever committed or staged, secrets
/// included, and what the worktree walk leaves out must not come back from them as "deleted"
/// or "added". A path that does not normalise is hidden too.
pub(crate) fn open_repository(workspace: &Workspace) -> Result<Repository, GitError> {
    let exclusions = workspace.root().exclusions().clone();
    let repository = Repository::discover(workspace.root().canonical())?;
    Ok(repository.hiding(Box::new(move |path| {
        RepoPath::normalize(path).is_none_or(|path| exclusions.matching_pattern(&path).is_some())
    })))
}
