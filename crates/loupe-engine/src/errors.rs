//! One vocabulary for what `loupe-vfs` refuses, whichever tool met it: each `VfsError` becomes
//! one `ToolError` with a fixed code, words that fit the access (a read never answers "cannot
//! write"), and a hint that names the next step. Texts name paths relative to the root and
//! never the machine's absolute paths; a caller's argument is quoted bounded.

use loupe_core::text::escape_name;
use loupe_core::{ErrorCode, ToolError};
use loupe_vfs::VfsError;
use serde_json::Value;

/// What the caller was doing when the file system said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

impl Access {
    fn verb(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// The most of a caller's argument an error quotes.
const QUOTE_CHARS: usize = 200;

/// A caller's text for an error message: whole when short, else its start and how much was left out.
/// Characters that could forge a line are escaped (`text::escape_name`).
pub(crate) fn quoted(text: &str) -> String {
    let text = match text.char_indices().nth(QUOTE_CHARS) {
        None => text,
        Some((end, _)) => return format!("{}…[{} more bytes]", escape_name(&text[..end]), text.len() - end),
    };
    escape_name(text).into_owned()
}

/// A path for a message: `loupe-vfs` names repository paths relative to the root; an absolute
/// one (the journal's, in the index directory) is shown by its last component only.
fn shown(path: &std::path::Path) -> String {
    if !path.is_absolute() && !path.has_root() {
        return quoted(&path.display().to_string());
    }
    let name = path.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    format!("…/{name}")
}

/// The tool error for a refusal of `loupe-vfs`.
pub(crate) fn vfs_error(error: VfsError, access: Access) -> ToolError {
    let verb = access.verb();
    match error {
        VfsError::OutsideRoot { requested } => ToolError::new(
            ErrorCode::PathOutsideRoot,
            format!("`{}` is outside the workspace root; nothing outside it is read or written", quoted(&requested)),
            "paths are relative to the workspace root (an absolute path must lie inside it)",
        ),
        VfsError::Excluded { path, pattern } => {
            // No rule lifts `.git/` (§3.1); a secret can be allowed by the user, never by the repository.
            let hint = if path.components().any(|component| component.eq_ignore_ascii_case(".git")) {
                "nothing under .git/ is read or written; read mode='diff_preview' shows what git knows"
            } else {
                "if it is safe, allow it in the user config (`allow`), LOUPE_ALLOW or --allow"
            };
            ToolError::new(
                ErrorCode::PathExcluded,
                format!(
                    "`{path}` is excluded by the pattern `{pattern}` (secrets and .git/ are never read or written)"
                ),
                hint,
            )
            .with_detail("pattern", Value::from(pattern))
        }
        VfsError::NotFound { path } => {
            let hint = match access {
                Access::Read => "find it by name: search with type='file'",
                Access::Write => "create it with operation='create'",
            };
            ToolError::new(ErrorCode::FileNotFound, format!("`{path}` does not exist"), hint)
        }
        VfsError::IsDirectory { path } => {
            ToolError::invalid_args(format!("`{path}` is a directory, not a file"), "name a file inside it")
        }
        VfsError::TooLarge { path, size, limit } => ToolError::new(
            ErrorCode::FileTooLarge,
            format!("`{path}` is {size} bytes, over the {limit}-byte limit"),
            format!("raise `max_file_bytes` (user config, LOUPE_MAX_FILE_BYTES or --max-file-bytes) to {verb} it"),
        )
        .with_detail("size", Value::from(size)),
        VfsError::NotRegular { path, kind } => ToolError::invalid_args(
            format!("`{path}` is a {kind}, not a regular file; loupe reads and writes regular files only"),
            "name a regular file: FIFOs, sockets and devices are never opened",
        ),
        VfsError::Pattern { pattern, reason } => ToolError::invalid_args(
            format!("invalid pattern `{}`: {reason}", quoted(&pattern)),
            "fix the pattern in `exclude` or `allow` (configuration)",
        ),
        VfsError::InvalidPath { reason } => ToolError::invalid_args(
            format!("invalid path: {reason}"),
            "pass a path without NUL bytes or control characters",
        ),
        VfsError::ConfigFile { path } => ToolError::new(
            ErrorCode::PathExcluded,
            format!("`{path}` is loupe's own configuration; edit never writes it"),
            "change it outside loupe; it is read when the server starts",
        ),
        VfsError::MissingDirectory { path } => ToolError::invalid_args(
            format!("directory `{path}` does not exist"),
            "pass \"create_missing_dirs\": true to create it",
        ),
        VfsError::Symlink { path, target } => ToolError::invalid_args(
            format!("`{path}` is a symlink; loupe never writes through a symlink"),
            match target {
                Some(target) => format!("edit its target `{target}` instead"),
                None => "edit the file it points to instead".into(),
            },
        ),
        VfsError::NotADirectory { path } => ToolError::invalid_args(
            format!("`{path}` is a file, so nothing can be created under it"),
            "pick another path",
        ),
        VfsError::Io { path, source } => ToolError::new(
            ErrorCode::IoError,
            format!("cannot {verb} `{}`: {source}", shown(&path)),
            "check the file's permissions and the disk, then retry",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_arguments_are_quoted_bounded() {
        assert_eq!(quoted("short"), "short");
        let long = "é".repeat(10_000);
        let shown = quoted(&long);
        assert!(shown.chars().count() < QUOTE_CHARS + 40, "{shown}");
        assert!(shown.ends_with("…[19600 more bytes]"), "{shown}");
    }

    #[test]
    fn a_read_never_says_write() {
        let io = || VfsError::Io { path: "src/a.rs".into(), source: std::io::Error::other("denied") };
        assert!(vfs_error(io(), Access::Read).message.starts_with("cannot read `src/a.rs`"));
        assert!(vfs_error(io(), Access::Write).message.starts_with("cannot write `src/a.rs`"));
        let journal =
            VfsError::Io { path: "/home/me/.cache/loupe/x/journal".into(), source: std::io::Error::other("gone") };
        assert!(!vfs_error(journal, Access::Write).message.contains("/home/me"));
    }
}
