//! The git repository around the root, as every tool and `manage status` open it, and how
//! the tools name its commits and say why a revision does not resolve.

use loupe_core::{ErrorCode, NextCall, RepoPath, ToolError};
use loupe_git::{GitError, Repository, RevisionError};
use serde_json::{Map, Value, json};

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

/// How an answer names a commit: `main (1a2b3c4)`, or the id alone when the name is one.
pub(crate) fn named(name: &str, short: &str) -> String {
    let is_id = name.len() >= 4 && name.chars().all(|c| c.is_ascii_hexdigit());
    if is_id && (short.starts_with(name) || name.starts_with(short)) {
        short.to_owned()
    } else {
        format!("{name} ({short})")
    }
}

/// A revision that does not resolve: `INVALID_ARGS` naming the nearest branch and tag names,
/// with the same call at each (`key` is the argument of the `tool` call that named it: read's
/// `against` or `revision`, analyze's `target`);
/// a three-dot range without a merge base says whether the clone is shallow, and offers the
/// two-dot range.
pub(crate) fn unresolved(
    repository: &Repository,
    (tool, original, key): (&str, &Map<String, Value>, &str),
    spec: &str,
    error: RevisionError,
) -> ToolError {
    let again = |value: String| {
        let mut arguments = original.clone();
        arguments.remove("cursor");
        arguments.insert(key.to_owned(), Value::from(value));
        NextCall { tool: tool.into(), arguments }
    };
    match error {
        RevisionError::Unknown { name, message } => {
            let names = repository.ref_names();
            let nearest = crate::suggest::closest(&name, &names, 3);
            let listed = if nearest.is_empty() {
                "no branch or tag is near it".to_owned()
            } else {
                format!("nearest names: {}", nearest.join(", "))
            };
            let forms = match key {
                "against" => {
                    "`against` takes HEAD, INDEX, WORKTREE, a branch, tag or commit id, `HEAD~N`, `REV^`, `@{upstream}`, `A..B` or `A...B`"
                }
                "revision" => {
                    "`revision` takes one commit: a branch, tag or commit id, `HEAD~N`, `REV^` or `@{upstream}`"
                }
                _ => "a range is `A..B` (two commits) or `A...B` / `A...` (from their merge base)",
            };
            let mut error = ToolError::invalid_args(
                format!("`{key}`: `{}` does not name a commit here ({message})", crate::errors::quoted(&name)),
                format!("{listed}; {forms}"),
            )
            .with_detail("nearest", json!(nearest));
            for near in &nearest {
                error = error.with_next_call(again(if name.is_empty() {
                    (*near).to_owned()
                } else {
                    spec.replacen(&name, near, 1)
                }));
            }
            if nearest.is_empty() {
                error = error.with_next_call(again("HEAD".into()));
            }
            error
        }
        RevisionError::NoMergeBase { left, right, shallow } => {
            let hint = if shallow {
                "fetch the history they share (`git fetch --deepen=100`, or `--unshallow`), or compare the two commits with `A..B`"
            } else {
                "compare the two commits themselves with `A..B`"
            };
            let message = RevisionError::NoMergeBase { left: left.clone(), right: right.clone(), shallow }.to_string();
            ToolError::invalid_args(message, hint).with_next_call(again(format!("{left}..{right}")))
        }
        RevisionError::Git(error) => git_error(error),
    }
}
