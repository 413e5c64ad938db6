//! Reads at a revision (§5 `revision`): the file, snippet, symbol or outline as a commit holds
//! it, from git's object database (`loupe-git`), never written. The path is resolved and
//! checked like any read's (containment, exclusions) before its blob is looked up, and the
//! repository hides excluded paths at every revision too. A revision that does not resolve,
//! here or as a `diff_preview` baseline, is answered by `unresolved`.

use loupe_core::{ErrorCode, NextCall, RepoPath, ToolError};
use loupe_git::{Baseline, Blob, Repository};
use serde_json::{Map, Value, json};

use crate::workspace::Workspace;
use crate::workspace::git::{git_error, named, unresolved};

/// A commit a read is made at: the repository, the commit, and how the answer names it
/// (`main (1a2b3c4)`).
pub(crate) struct AtRevision {
    repository: Repository,
    commit: loupe_git::ObjectId,
    /// The revision as the caller named it.
    spec: String,
    pub(crate) label: String,
}

impl AtRevision {
    /// The commit `spec` names, for a read whose arguments are `original` (its `revision`).
    pub(crate) fn open(workspace: &Workspace, spec: &str, original: &Map<String, Value>) -> Result<Self, ToolError> {
        let repository = crate::workspace::git::open_repository(workspace).map_err(|error| {
            // Without git there is no revision: the same read of the file on disk.
            let mut arguments = original.clone();
            arguments.remove("revision");
            git_error(error).with_next_call(NextCall { tool: "read".into(), arguments })
        })?;
        let commit = repository
            .commit(spec)
            .map_err(|error| unresolved(&repository, ("read", original, "revision"), spec, error))?;
        let label = named(spec, &repository.short(commit));
        Ok(AtRevision { repository, commit, spec: spec.to_owned(), label })
    }

    /// The bytes of `path` at this commit: `FILE_NOT_FOUND` when the commit does not hold it
    /// (or it is excluded), `FILE_TOO_LARGE` over `limit`.
    pub(crate) fn bytes(&self, path: &RepoPath, limit: u64) -> Result<Vec<u8>, ToolError> {
        match self.repository.blob(Baseline::Commit(self.commit), path.as_str(), limit).map_err(git_error)? {
            Some(Blob::Bytes(bytes)) => Ok(bytes),
            Some(Blob::Large { size }) => Err(ToolError::new(
                ErrorCode::FileTooLarge,
                format!("`{path}` at {} is {size} bytes, over max_file_bytes ({limit})", self.label),
                "read a window of it on disk, or raise max_file_bytes",
            )
            .with_next_call(NextCall::new(
                "read",
                json!({"mode": "snippet", "target": path.as_str(), "start_line": 1, "end_line": 100}),
            ))),
            None => Err(ToolError::new(
                ErrorCode::FileNotFound,
                format!("`{path}` is not in {}", self.label),
                "see what the revision changed: read mode='diff_preview' with `against` set to it",
            )
            .with_next_call(NextCall::new(
                "read",
                json!({"mode": "diff_preview", "target": ".", "against": self.spec}),
            ))),
        }
    }
}

/// The definition a symbol read names, as the commit holds it. The file is the one `path`
/// names, or else where the index finds the symbol now; the definition is the one in that
/// file's blob with the same name (and container, and kind when the index named one), with its
/// span at the revision.
pub(crate) fn symbol_at(
    workspace: &Workspace,
    spec: &str,
    target: &str,
    path: Option<&str>,
    original: &Map<String, Value>,
) -> Result<crate::workspace::symbols::ResolvedSymbol, ToolError> {
    let (container, name) = crate::workspace::symbols::split_target(target);
    let (file, kind, container) =
        match (crate::workspace::symbols::resolve(workspace, "read", target, path, original), path) {
            (Ok(now), _) => (now.path, Some(now.kind), now.container),
            // Gone from the tree since, or renamed: the file the caller names, at the revision.
            (Err(_), Some(path)) => {
                let resolved = workspace
                    .root()
                    .resolve(path)
                    .map_err(|error| crate::errors::vfs_error(error, crate::errors::Access::Read))?;
                (resolved.path, None, container.map(str::to_owned))
            }
            (Err(error), None) => return Err(error),
        };
    let at = AtRevision::open(workspace, spec, original)?;
    let bytes = at.bytes(&file, workspace.config().max_file_bytes)?;
    let text = loupe_core::text::decode(&bytes).map(|decoded| decoded.text).unwrap_or_default();
    let found = loupe_index::Lang::from_path(file.as_str()).and_then(|lang| {
        loupe_syntax::parse_with(lang, &text, loupe_syntax::Extract::Definitions).definitions.into_iter().find(
            |definition| {
                definition.name == name
                    && (container.is_none() || definition.container == container)
                    && kind.is_none_or(|kind| definition.kind == kind)
            },
        )
    });
    let Some(definition) = found else {
        return Err(ToolError::new(
            ErrorCode::SymbolNotFound,
            format!("`{target}` is not in `{file}` at {}", at.label),
            "see how the file changed since: read mode='diff_preview' against the revision",
        )
        .with_next_call(NextCall::new(
            "read",
            json!({"mode": "diff_preview", "target": file.as_str(), "against": spec}),
        )));
    };
    Ok(crate::workspace::symbols::ResolvedSymbol::of(file, definition, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::named;

    #[test]
    fn a_commit_named_by_its_id_is_not_named_twice() {
        assert_eq!(named("main", "1a2b3c4"), "main (1a2b3c4)");
        assert_eq!(named("1a2b", "1a2b3c4"), "1a2b3c4");
        assert_eq!(named("1a2b3c4d5e6f", "1a2b3c4"), "1a2b3c4");
        assert_eq!(named("beef", "1a2b3c4"), "beef (1a2b3c4)", "a branch named like hex that is another commit");
        assert_eq!(named("HEAD~1", "1a2b3c4"), "HEAD~1 (1a2b3c4)");
    }
}
