//! Repository-relative paths and the lexical half of path handling (§3.1).
//!
//! `RepoPath` is always relative to the workspace root, `/`-separated, with no `.`, `..` or
//! empty components. Turning a caller's string into one is lexical here; resolving symlinks
//! and checking containment on the canonical path is `loupe-vfs`'s job.

use serde::{Deserialize, Serialize};

/// A normalised root-relative path. The empty path is the root itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RepoPath(String);

impl RepoPath {
    pub fn root() -> RepoPath {
        RepoPath(String::new())
    }

    /// Normalises a relative, `/`-separated path. `None` when `..` climbs above the root, or
    /// when the path holds a control character: a `RepoPath` never does, so a file named with
    /// a line break, a carriage return or an escape sequence can never start a line of a face
    /// (the walk, the watcher and git listings all come through here and leave such names
    /// out; a caller's path with one is `InvalidPath` in `loupe-vfs`).
    pub fn normalize(relative: &str) -> Option<RepoPath> {
        if relative.chars().any(char::is_control) {
            return None;
        }
        let mut parts: Vec<&str> = Vec::new();
        for part in relative.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop()?;
                }
                other => parts.push(other),
            }
        }
        Some(RepoPath(parts.join("/")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or("")
    }

    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').filter(|part| !part.is_empty())
    }

    /// The parent directory; the root's parent is the root.
    pub fn parent(&self) -> RepoPath {
        match self.0.rfind('/') {
            Some(index) => RepoPath(self.0[..index].to_owned()),
            None => RepoPath::root(),
        }
    }

    /// `name` must be one component without a control character, as `normalize` makes them.
    pub fn join(&self, name: &str) -> RepoPath {
        if self.0.is_empty() { RepoPath(name.to_owned()) } else { RepoPath(format!("{}/{name}", self.0)) }
    }

    /// The display form: `.` for the root.
    pub fn display(&self) -> &str {
        if self.0.is_empty() { "." } else { &self.0 }
    }
}

impl std::fmt::Display for RepoPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.display())
    }
}

/// What a caller's path string turned out to be, before touching the file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserPath {
    /// Relative to the root, `/`-separated, not yet normalised.
    Relative(String),
    /// An absolute path (`/`-separated; a Windows drive path keeps its `C:` prefix).
    Absolute(String),
}

/// Parses the accepted spellings of §3.1: relative, `./x`, absolute, `file://` URIs (with
/// percent-escapes) and Windows separators.
pub fn parse_user_path(input: &str) -> UserPath {
    let trimmed = input.trim();
    let without_scheme = match strip_prefix_ignore_case(trimmed, "file://") {
        Some(rest) => {
            // `file://host/path`: only an empty host or `localhost` names this machine.
            let rest = strip_prefix_ignore_case(rest, "localhost").unwrap_or(rest);
            percent_decode(rest)
        }
        None => trimmed.to_owned(),
    };
    let slashed = without_scheme.replace('\\', "/");
    let bytes = slashed.as_bytes();
    let is_drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    // `file:///C:/x` arrives as `/C:/x`.
    let is_uri_drive = bytes.len() >= 3 && bytes[0] == b'/' && bytes[1].is_ascii_alphabetic() && bytes[2] == b':';
    if is_uri_drive {
        UserPath::Absolute(slashed[1..].to_owned())
    } else if slashed.starts_with('/') || is_drive {
        UserPath::Absolute(slashed)
    } else {
        UserPath::Relative(slashed)
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && index + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex_value(bytes[index + 1]), hex_value(bytes[index + 2]))
        {
            out.push(high * 16 + low);
            index += 3;
            continue;
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_removes_dots_and_refuses_escapes() {
        assert_eq!(RepoPath::normalize("./src//lib.rs").unwrap().as_str(), "src/lib.rs");
        assert_eq!(RepoPath::normalize("src/../README.md").unwrap().as_str(), "README.md");
        assert_eq!(RepoPath::normalize("..").map(|p| p.0), None);
        assert_eq!(RepoPath::normalize("a/../../b").map(|p| p.0), None);
        assert!(RepoPath::normalize(".").unwrap().is_root());
    }

    #[test]
    fn user_path_spellings() {
        assert_eq!(parse_user_path("./src/a.rs"), UserPath::Relative("./src/a.rs".into()));
        assert_eq!(parse_user_path("src\\a.rs"), UserPath::Relative("src/a.rs".into()));
        assert_eq!(parse_user_path("/repo/a.rs"), UserPath::Absolute("/repo/a.rs".into()));
        assert_eq!(parse_user_path("file:///repo/my%20dir/a.rs"), UserPath::Absolute("/repo/my dir/a.rs".into()));
        assert_eq!(parse_user_path("FILE://localhost/repo/a.rs"), UserPath::Absolute("/repo/a.rs".into()));
        assert_eq!(parse_user_path("C:\\repo\\a.rs"), UserPath::Absolute("C:/repo/a.rs".into()));
        assert_eq!(parse_user_path("file:///C:/repo/a.rs"), UserPath::Absolute("C:/repo/a.rs".into()));
    }

    #[test]
    fn parent_and_join() {
        let path = RepoPath::normalize("a/b/c.rs").unwrap();
        assert_eq!(path.parent().as_str(), "a/b");
        assert_eq!(path.file_name(), "c.rs");
        assert_eq!(RepoPath::root().join("x").as_str(), "x");
        assert_eq!(RepoPath::root().display(), ".");
    }
}

/// §9.1: the first 12 hex digits of SHA-1 over the canonical root (`/` separators, no
/// trailing slash). Names the index directory and prefixes session keys.
pub fn workspace_hash(canonical_root: &std::path::Path) -> String {
    let text = canonical_root.to_string_lossy().replace('\\', "/");
    let trimmed = if text.len() > 1 { text.trim_end_matches('/') } else { &text };
    sha1_smol::Sha1::from(trimmed.as_bytes()).digest().to_string()[..12].to_owned()
}

#[cfg(test)]
mod workspace_hash_tests {
    use super::workspace_hash;

    #[test]
    fn is_twelve_hex_of_sha1_without_trailing_slash() {
        // Computed independently with `printf /repo | sha1sum`.
        let hash = workspace_hash(std::path::Path::new("/repo"));
        assert_eq!(hash, "83630750896a");
        assert_eq!(hash, workspace_hash(std::path::Path::new("/repo/")));
    }
}
