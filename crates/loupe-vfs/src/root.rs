//! The workspace root: resolving a caller's path to a file inside it, and reading it.
//!
//! Containment is decided on canonical paths by components. A path is first normalised
//! lexically (refusing `..` above the root), then the file system resolves symlinks and the
//! result must still lie under the canonical root. Exclusions are checked on both the path
//! as asked and the path it resolves to (for a file that does not exist yet, the real path of
//! its nearest existing directory), so a symlink cannot smuggle in `.env` or `.git/`.
//!
//! `resolve` answers by path, to explain; every read is then opened again beneath the root by
//! directory handle (`beneath.rs`) and checked on the descriptor, so what is read is what was
//! checked, even if the tree changes in between.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::GitignoreBuilder;
use loupe_core::RepoPath;
use loupe_core::path::{UserPath, parse_user_path};

use cap_std::fs::Dir;

use crate::beneath::{Missing, RaceHook, Want, open_root};
use crate::{Exclusions, VfsError};

/// The files whose rules decide `meta.ignored`, in each directory from the root down.
/// `.gitignore` counts only inside a git repository (as for git and ripgrep).
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".loupeignore"];

/// An ignore file larger than this is not read (git's own rules are a few kilobytes).
const MAX_IGNORE_FILE_BYTES: u64 = 1 << 20;
/// Why a path with a control character names no file loupe serves (`RepoPath` never holds one).
const CONTROL_CHARACTER: &str =
    "a path cannot contain a control character (a line break, a tab, an escape): loupe serves no file named with one";

#[derive(Debug, Clone)]
pub struct Root {
    canonical: PathBuf,
    given: PathBuf,
    exclusions: Exclusions,
    /// The root or one of its ancestors holds `.git`.
    in_git_repository: bool,
    /// The root directory, held open: every file is opened beneath it.
    pub(crate) directory: Arc<Dir>,
    pub(crate) race_hook: RaceHook,
}

/// A caller's path, resolved: where it is inside the root, and whether it exists.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The root-relative path as asked (lexically normalised).
    pub path: RepoPath,
    /// The canonical file-system path when the file exists.
    pub real: Option<PathBuf>,
}

/// A file's raw bytes as read, with its size.
#[derive(Debug, Clone)]
pub struct FileBytes {
    pub path: RepoPath,
    pub bytes: Vec<u8>,
    /// Executable by its owner (Unix; always false where files carry no such bit).
    pub executable: bool,
}

impl Root {
    /// Opens a root directory; it must exist and be a directory.
    pub fn open(given: &Path, exclusions: Exclusions) -> Result<Root, VfsError> {
        let canonical =
            crate::canonical_path(given).map_err(|source| VfsError::Io { path: given.to_path_buf(), source })?;
        if !canonical.is_dir() {
            return Err(VfsError::Io {
                path: given.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "the workspace root is not a directory"),
            });
        }
        let in_git_repository = canonical.ancestors().any(|dir| dir.join(".git").exists());
        let directory = open_root(&canonical).map_err(|source| VfsError::Io { path: given.to_path_buf(), source })?;
        Ok(Root {
            canonical,
            given: given.to_path_buf(),
            exclusions,
            in_git_repository,
            directory: Arc::new(directory),
            race_hook: RaceHook::default(),
        })
    }

    pub fn canonical(&self) -> &Path {
        &self.canonical
    }

    pub(crate) fn given(&self) -> &Path {
        &self.given
    }

    pub fn exclusions(&self) -> &Exclusions {
        &self.exclusions
    }

    /// Maps a caller's path string to a path inside the root. Refuses escapes and exclusions;
    /// a path that does not exist resolves with `real: None`.
    pub fn resolve(&self, input: &str) -> Result<Resolved, VfsError> {
        let outside = || VfsError::OutsideRoot { requested: input.to_owned() };
        let parsed = parse_user_path(input);
        // Checked on the parsed path: a `file://` URI may spell a NUL or a control character as
        // `%00` or `%0A`.
        let text = match &parsed {
            UserPath::Relative(text) | UserPath::Absolute(text) => text,
        };
        if input.contains('\0') || text.contains('\0') {
            return Err(VfsError::InvalidPath { reason: "a path cannot contain a NUL byte" });
        }
        if input.chars().chain(text.chars()).any(char::is_control) {
            return Err(VfsError::InvalidPath { reason: CONTROL_CHARACTER });
        }
        let path = match parsed {
            UserPath::Relative(relative) => RepoPath::normalize(&relative).ok_or_else(outside)?,
            UserPath::Absolute(absolute) => self.relative_of_absolute(&absolute).ok_or_else(outside)?,
        };
        self.check_excluded(&path)?;
        let joined = self.canonical.join(path.as_str());
        match crate::canonical_path(&joined) {
            Ok(real) => {
                let real_relative = self.relative_of_canonical(&real).ok_or_else(outside)?;
                self.check_excluded(&real_relative)?;
                Ok(Resolved { path, real: Some(real) })
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                // The nearest existing ancestor must itself be inside the root, or a dangling
                // name under an escaping symlink would be reported as merely missing; and the
                // file it would become must not be excluded (`gitlink/hooks/x` with
                // `gitlink -> .git` is `.git/hooks/x`).
                let mut ancestor = joined.parent();
                while let Some(dir) = ancestor {
                    if let Ok(real_dir) = crate::canonical_path(dir) {
                        let real_dir = self.relative_of_canonical(&real_dir).ok_or_else(outside)?;
                        let rest = joined.strip_prefix(dir).map(crate::slash_joined);
                        if let Some(real_file) =
                            rest.ok().and_then(|rest| RepoPath::normalize(&format!("{}/{rest}", real_dir.as_str())))
                        {
                            self.check_excluded(&real_file)?;
                        }
                        break;
                    }
                    ancestor = dir.parent();
                }
                Ok(Resolved { path, real: None })
            }
            Err(source) => Err(VfsError::Io { path: PathBuf::from(path.display()), source }),
        }
    }

    /// Reads a resolved file whole, refusing directories, anything but a regular file, and
    /// files over `max_bytes`. The file is opened again beneath the root by handle, so a
    /// change to the tree since `resolve` cannot make it read something else.
    pub fn read(&self, resolved: &Resolved, max_bytes: u64) -> Result<FileBytes, VfsError> {
        if resolved.real.is_none() {
            return Err(VfsError::NotFound { path: resolved.path.clone() });
        }
        let (bytes, executable) = self.read_regular_with_mode(&resolved.path, max_bytes)?;
        Ok(FileBytes { path: resolved.path.clone(), bytes, executable })
    }

    /// True when `.gitignore`, `.ignore` or `.loupeignore` rules from the root down to the
    /// file's directory ignore it. Deeper files override shallower ones, as in git.
    pub fn is_ignored(&self, path: &RepoPath, is_dir: bool) -> bool {
        let absolute = self.canonical.join(path.as_str());
        let mut verdict = false;
        let mut components: Vec<&str> = path.components().collect();
        components.pop();
        let mut dirs = vec![RepoPath::root()];
        for component in components {
            let next = dirs[dirs.len() - 1].join(component);
            dirs.push(next);
        }
        for dir in dirs {
            for name in IGNORE_FILES {
                if *name == ".gitignore" && !self.in_git_repository {
                    continue;
                }
                // Read like any other file: beneath the root, regular files only.
                let Ok(bytes) = self.read_regular(&dir.join(name), MAX_IGNORE_FILE_BYTES) else { continue };
                let Some(rules) = ignore_rules(&self.canonical.join(dir.as_str()), &bytes) else { continue };
                let matched = rules.matched_path_or_any_parents(&absolute, is_dir);
                if matched.is_ignore() {
                    verdict = true;
                } else if matched.is_whitelist() {
                    verdict = false;
                }
            }
        }
        verdict
    }

    /// The names in the directory of `path` (or its nearest existing ancestor), for
    /// "did you mean" suggestions. Excluded names are left out. Bounded to 2000 entries.
    pub fn sibling_names(&self, path: &RepoPath) -> (RepoPath, Vec<String>) {
        let mut dir = path.parent();
        loop {
            let listed = self
                .open_beneath(&dir, Want::Directory, Missing::Refuse)
                .ok()
                .filter(|opened| self.check_excluded(&opened.real).is_ok())
                .and_then(|opened| Dir::from_std_file(opened.file).entries().ok());
            if let Some(entries) = listed {
                let mut names: Vec<String> = entries
                    .filter_map(Result::ok)
                    .filter_map(|entry| entry.file_name().into_string().ok())
                    .filter(|name| name != "." && name != ".." && !name.chars().any(char::is_control))
                    .filter(|name| self.exclusions.matching_pattern(&dir.join(name)).is_none())
                    .take(2000)
                    .collect();
                names.sort();
                return (dir, names);
            }
            if dir.is_root() {
                return (dir, Vec::new());
            }
            dir = dir.parent();
        }
    }

    pub(crate) fn check_excluded(&self, path: &RepoPath) -> Result<(), VfsError> {
        match self.exclusions.matching_pattern(path) {
            Some(pattern) => Err(VfsError::Excluded { path: path.clone(), pattern: pattern.to_owned() }),
            None => Ok(()),
        }
    }

    fn relative_of_absolute(&self, absolute: &str) -> Option<RepoPath> {
        let absolute_path = Path::new(absolute);
        for base in [&self.given, &self.canonical] {
            if base.is_absolute()
                && let Ok(rest) = absolute_path.strip_prefix(base)
            {
                return RepoPath::normalize(&crate::slash_joined(rest));
            }
        }
        // An absolute path through a symlinked alias of the root (e.g. /tmp vs /private/tmp).
        let real = crate::canonical_path(absolute_path).ok()?;
        self.relative_of_canonical(&real)
    }

    pub(crate) fn relative_of_canonical(&self, real: &Path) -> Option<RepoPath> {
        let rest = real.strip_prefix(&self.canonical).ok()?;
        RepoPath::normalize(&crate::slash_joined(rest))
    }

    /// Reads the regular file at `path` as [`Root::open_regular_beneath`] opens it, into
    /// `bytes` (replacing what it held). `None` sends the caller to the resolving path, which
    /// decides and explains.
    pub(crate) fn read_beneath(
        &self,
        path: &RepoPath,
        max_bytes: u64,
        bytes: &mut Vec<u8>,
    ) -> Option<std::fs::Metadata> {
        let (file, metadata) = self.open_regular_beneath(path)?;
        if metadata.len() > max_bytes {
            return None;
        }
        crate::beneath::read_sized_into(&file, metadata.len(), max_bytes, bytes).ok()?;
        (bytes.len() as u64 <= max_bytes).then_some(metadata)
    }

    /// `path` opened beneath the root as a regular file that is not excluded (by the path
    /// asked nor by its real path), with its metadata. `None` (an excluded or odd path, not a
    /// regular file, any error) sends the caller to the resolving path.
    pub(crate) fn open_regular_beneath(&self, path: &RepoPath) -> Option<(std::fs::File, std::fs::Metadata)> {
        if path.is_root() || self.check_excluded(path).is_err() {
            return None;
        }
        #[cfg(target_os = "linux")]
        if let Some(found) = self.open_plain(path) {
            return Some(found);
        }
        let opened = self.open_beneath(path, Want::File, Missing::Refuse).ok()?;
        self.check_excluded(&opened.real).ok()?;
        let metadata = opened.file.metadata().ok()?;
        metadata.is_file().then_some((opened.file, metadata))
    }

    /// The fast path of a search reading thousands of files: one `openat2` that refuses to
    /// leave the root or to follow any symlink, so the path opened is the path asked for and
    /// its real path needs no reading back. `None` (a symlink on the way, an old kernel, any
    /// error) sends the caller to [`Root::open_beneath`].
    #[cfg(target_os = "linux")]
    fn open_plain(&self, path: &RepoPath) -> Option<(std::fs::File, std::fs::Metadata)> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | Want::File.unix_flags();
        let descriptor = rustix::fs::openat2(self.handle(), path.as_str(), flags, Mode::empty(), resolve).ok()?;
        let file = std::fs::File::from(descriptor);
        let metadata = file.metadata().ok()?;
        metadata.is_file().then_some((file, metadata))
    }
}

/// The rules of one ignore file, as `GitignoreBuilder::add` would read them (a BOM on the
/// first line is dropped); `None` when the file is not UTF-8 or a rule is invalid, as before.
fn ignore_rules(dir: &Path, bytes: &[u8]) -> Option<ignore::gitignore::Gitignore> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut builder = GitignoreBuilder::new(dir);
    for (index, line) in text.lines().enumerate() {
        let line = if index == 0 { line.trim_start_matches('\u{feff}') } else { line };
        builder.add_line(None, line).ok()?;
    }
    builder.build().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use loupe_core::config::DEFAULT_EXCLUDE;
    use std::fs;

    fn root_at(dir: &Path) -> Root {
        let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
        Root::open(dir, Exclusions::new(&exclude, &[]).unwrap()).unwrap()
    }

    fn fixture() -> (tempfile::TempDir, tempfile::TempDir) {
        let repo = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir_all(repo.path().join("src/deep")).unwrap();
        fs::write(repo.path().join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        fs::write(repo.path().join(".env"), "SECRET=1\n").unwrap();
        fs::create_dir(repo.path().join(".git")).unwrap();
        fs::write(repo.path().join(".gitignore"), "target/\n*.log\n!keep.log\n").unwrap();
        fs::write(repo.path().join("src/.gitignore"), "gen.rs\n").unwrap();
        fs::write(outside.path().join("secret.txt"), "outside\n").unwrap();
        use crate::testing::symlink;
        symlink(outside.path(), repo.path().join("escape")).unwrap();
        symlink(outside.path().join("secret.txt"), repo.path().join("src/link.txt")).unwrap();
        symlink(repo.path().join(".env"), repo.path().join("env-link")).unwrap();
        symlink(repo.path().join("src/lib.rs"), repo.path().join("lib-link.rs")).unwrap();
        (repo, outside)
    }

    fn resolved_path(root: &Root, input: &str) -> Result<String, String> {
        root.resolve(input).map(|r| r.path.as_str().to_owned()).map_err(|e| e.to_string())
    }

    #[test]
    fn accepted_spellings_resolve_to_the_same_file() {
        let (repo, _outside) = fixture();
        let root = root_at(repo.path());
        let absolute = format!("{}/src/lib.rs", repo.path().display());
        let uri = format!("file://{}/src/lib.rs", root.canonical().display());
        for input in ["src/lib.rs", "./src/lib.rs", "src\\lib.rs", "src/deep/../lib.rs", &absolute, &uri] {
            assert_eq!(resolved_path(&root, input).as_deref(), Ok("src/lib.rs"), "{input}");
        }
    }

    #[test]
    fn escapes_are_refused() {
        let (repo, outside) = fixture();
        let root = root_at(repo.path());
        let outside_file = format!("{}/secret.txt", outside.path().display());
        for input in
            ["../x", "src/../../x", &outside_file, "escape/secret.txt", "src/link.txt", "escape/missing.txt", "C:\\x"]
        {
            let error = root.resolve(input).unwrap_err();
            assert!(matches!(error, VfsError::OutsideRoot { .. }), "{input}: {error}");
        }
    }

    #[test]
    fn exclusions_apply_to_the_symlink_target_too() {
        let (repo, _outside) = fixture();
        let root = root_at(repo.path());
        assert!(matches!(root.resolve(".env"), Err(VfsError::Excluded { .. })));
        assert!(matches!(root.resolve("env-link"), Err(VfsError::Excluded { .. })));
        assert!(matches!(root.resolve(".git/config"), Err(VfsError::Excluded { .. })));
        let inside_link = root.resolve("lib-link.rs").unwrap();
        assert_eq!(root.read(&inside_link, 1024).unwrap().bytes, b"pub fn a() {}\n");
    }

    #[test]
    fn read_refuses_directories_missing_and_large_files() {
        let (repo, _outside) = fixture();
        let root = root_at(repo.path());
        assert!(matches!(root.read(&root.resolve("src").unwrap(), 1024), Err(VfsError::IsDirectory { .. })));
        assert!(matches!(root.read(&root.resolve("nope.rs").unwrap(), 1024), Err(VfsError::NotFound { .. })));
        assert!(matches!(root.read(&root.resolve("src/lib.rs").unwrap(), 4), Err(VfsError::TooLarge { size: 14, .. })));
    }

    #[test]
    fn ignore_rules_nest_and_negate() {
        let (repo, _outside) = fixture();
        let root = root_at(repo.path());
        let ignored = |p: &str| root.is_ignored(&RepoPath::normalize(p).unwrap(), false);
        assert!(ignored("target/debug/x.rs"));
        assert!(ignored("a.log"));
        assert!(!ignored("keep.log"));
        assert!(ignored("src/gen.rs"));
        assert!(!ignored("gen.rs"));
        assert!(!ignored("src/lib.rs"));
    }

    #[test]
    fn sibling_names_skip_excluded_entries() {
        let (repo, _outside) = fixture();
        let root = root_at(repo.path());
        let (dir, names) = root.sibling_names(&RepoPath::normalize("missing/file.rs").unwrap());
        assert!(dir.is_root());
        assert!(names.contains(&"src".to_owned()));
        assert!(!names.contains(&".env".to_owned()));
    }
}
