//! The git repository around the root, as every tool and `manage status` open it.

use loupe_core::{ErrorCode, RepoPath, ToolError};
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

/// Why git could not answer, as the tools say it: `GIT_UNAVAILABLE` with what to do instead.
pub(crate) fn git_error(error: GitError) -> ToolError {
    match error {
        GitError::NotARepository { .. } => ToolError::new(
            ErrorCode::GitUnavailable,
            format!("{error}: a git baseline or revision needs one"),
            "run loupe on a git work tree, or compare files with read mode='file'",
        ),
        GitError::Read { .. } => ToolError::new(
            ErrorCode::GitUnavailable,
            error.to_string(),
            "check the repository with `git status`; a corrupt or unsupported repository cannot be diffed",
        ),
        GitError::Untrusted { .. } => ToolError::new(
            ErrorCode::GitUnavailable,
            error.to_string(),
            "git metadata is input from the repository: loupe reads no other repository through it; compare files \
             with read mode='file'",
        ),
    }
}
