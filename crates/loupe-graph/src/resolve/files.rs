//! The workspace's file list as hash maps, and the lexical path helpers every language's
//! rules share.
//!
//! Owns lookups by path, by directory, by file name and by the path under an `include`
//! directory. Must not know any language's import rules.

use loupe_core::RepoPath;
use rustc_hash::{FxHashMap, FxHashSet};

/// An index into `Files::paths`.
pub(crate) type FileId = u32;

/// Every workspace file, indexed once so that resolution is a few hash lookups.
pub(crate) struct Files {
    paths: Vec<RepoPath>,
    ids: FxHashMap<Box<str>, FileId>,
    /// Directory → the files directly in it, in path order.
    by_dir: FxHashMap<Box<str>, Vec<FileId>>,
    /// Every directory that holds a file at any depth, the root (`""`) included.
    dirs: FxHashSet<Box<str>>,
    /// File name → the files with that name, in path order.
    by_name: FxHashMap<Box<str>, Vec<FileId>>,
    /// Directory name → the directories with that name (any order).
    dirs_by_name: FxHashMap<Box<str>, Vec<Box<str>>>,
}

impl Files {
    /// Indexes `files` (duplicates are dropped; order does not matter).
    pub(crate) fn new(files: &[RepoPath]) -> Files {
        let mut paths: Vec<RepoPath> = files.iter().filter(|path| !path.is_root()).cloned().collect();
        paths.sort_unstable();
        paths.dedup();
        let mut ids = FxHashMap::with_capacity_and_hasher(paths.len(), Default::default());
        let mut by_dir: FxHashMap<Box<str>, Vec<FileId>> = FxHashMap::default();
        let mut dirs: FxHashSet<Box<str>> = FxHashSet::default();
        let mut by_name: FxHashMap<Box<str>, Vec<FileId>> = FxHashMap::default();
        let mut dirs_by_name: FxHashMap<Box<str>, Vec<Box<str>>> = FxHashMap::default();
        dirs.insert("".into());
        for (index, path) in paths.iter().enumerate() {
            let id = index as FileId;
            let text = path.as_str();
            ids.insert(text.into(), id);
            let dir = parent(text);
            match by_dir.get_mut(dir) {
                Some(list) => list.push(id),
                None => {
                    by_dir.insert(dir.into(), vec![id]);
                    for ancestor in ancestors(dir) {
                        if !dirs.insert(ancestor.into()) {
                            break;
                        }
                        dirs_by_name.entry(file_name(ancestor).into()).or_default().push(ancestor.into());
                    }
                }
            }
            by_name.entry(file_name(text).into()).or_default().push(id);
        }
        Files { paths, ids, by_dir, dirs, by_name, dirs_by_name }
    }

    /// The file at `path`, if the workspace has it.
    pub(crate) fn id(&self, path: &str) -> Option<FileId> {
        self.ids.get(path).copied()
    }

    pub(crate) fn path(&self, id: FileId) -> &RepoPath {
        &self.paths[id as usize]
    }

    /// Every file, in path order.
    pub(crate) fn all(&self) -> impl Iterator<Item = (FileId, &str)> {
        self.paths.iter().enumerate().map(|(index, path)| (index as FileId, path.as_str()))
    }

    /// The files directly in `dir`, in path order.
    pub(crate) fn in_dir(&self, dir: &str) -> &[FileId] {
        self.by_dir.get(dir).map_or(&[], Vec::as_slice)
    }

    /// Whether `dir` is a directory holding at least one file (at any depth).
    pub(crate) fn is_dir(&self, dir: &str) -> bool {
        self.dirs.contains(dir)
    }

    /// The directories whose path is `suffix` or ends with `/suffix` (any order).
    pub(crate) fn dirs_with_suffix<'a>(&'a self, suffix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let name = file_name(suffix);
        self.dirs_by_name
            .get(name)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|dir| &**dir)
            .filter(move |dir| has_path_suffix(dir, suffix))
    }

    /// The files named `name`, in path order.
    pub(crate) fn named(&self, name: &str) -> &[FileId] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// The files whose path is `suffix` or ends with `/suffix`, in path order.
    pub(crate) fn with_suffix<'a>(&'a self, suffix: &'a str) -> impl Iterator<Item = FileId> + 'a {
        self.named(file_name(suffix)).iter().copied().filter(move |&id| has_path_suffix(self.path(id).as_str(), suffix))
    }

    pub(crate) fn len(&self) -> usize {
        self.paths.len()
    }
}

/// The directory of a root-relative path (`""` for a top-level file).
pub(crate) fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |index| &path[..index])
}

/// The last component of a path.
pub(crate) fn file_name(path: &str) -> &str {
    path.rfind('/').map_or(path, |index| &path[index + 1..])
}

/// `dir/rest`, or `rest` when `dir` is the root.
pub(crate) fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        return rest.to_owned();
    }
    if rest.is_empty() {
        return dir.to_owned();
    }
    let mut joined = String::with_capacity(dir.len() + 1 + rest.len());
    joined.push_str(dir);
    joined.push('/');
    joined.push_str(rest);
    joined
}

/// `dir/relative` with `.`, `..` and empty components folded; `None` when `..` climbs above
/// the root.
pub(crate) fn join_normalized(dir: &str, relative: &str) -> Option<String> {
    let simple = !relative.is_empty()
        && !relative.starts_with('/')
        && !relative.ends_with('/')
        && !relative.contains("//")
        && relative.split('/').all(|part| part != "." && part != "..");
    if simple {
        return Some(join(dir, relative));
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|part| !part.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// `dir`, its parent, …, up to and including the root `""`.
pub(crate) fn ancestors(dir: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(dir);
    std::iter::from_fn(move || {
        let current = next?;
        next = if current.is_empty() { None } else { Some(parent(current)) };
        Some(current)
    })
}

/// The number of components of a directory (`""` has none).
pub(crate) fn depth(dir: &str) -> usize {
    if dir.is_empty() { 0 } else { dir.bytes().filter(|&byte| byte == b'/').count() + 1 }
}

/// Whether `dir` is `path` or one of its ancestors.
pub(crate) fn is_within(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/'))
}

/// The number of leading components `a` and `b` share.
pub(crate) fn common_depth(a: &str, b: &str) -> usize {
    a.split('/').zip(b.split('/')).take_while(|(left, right)| left == right && !left.is_empty()).count()
}

/// Whether `path` is `suffix` or ends with `/suffix`.
pub(crate) fn has_path_suffix(path: &str, suffix: &str) -> bool {
    path == suffix
        || (path.len() > suffix.len()
            && path.ends_with(suffix)
            && path.as_bytes()[path.len() - suffix.len() - 1] == b'/')
}

/// How near `dir` (a directory somewhere in the workspace) is to `from_dir` (the importing
/// file's directory); smaller is nearer. Directories on `from_dir`'s ancestor chain come first,
/// the deepest first; the others by how far up their common ancestor is.
pub(crate) fn nearness(from_dir: &str, dir: &str) -> (bool, usize) {
    let from_depth = depth(from_dir);
    if is_within(from_dir, dir) {
        (false, from_depth - depth(dir))
    } else {
        (true, from_depth - common_depth(from_dir, dir).min(from_depth))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> Files {
        let paths: Vec<RepoPath> = paths.iter().map(|path| RepoPath::normalize(path).unwrap()).collect();
        Files::new(&paths)
    }

    #[test]
    fn indexes_by_path_directory_and_name() {
        let files = files(&["b/x.rs", "a/x.rs", "a/y.rs", "a/x.rs", "top.rs"]);
        assert_eq!(files.len(), 4);
        let a_x = files.id("a/x.rs").unwrap();
        assert_eq!(files.path(a_x).as_str(), "a/x.rs");
        assert_eq!(files.in_dir("a").len(), 2);
        assert_eq!(files.in_dir("").len(), 1);
        assert!(files.is_dir("a") && files.is_dir("") && !files.is_dir("c"));
        let mut dirs: Vec<&str> = files.dirs_with_suffix("a").collect();
        dirs.sort_unstable();
        assert_eq!(dirs, ["a"]);
        assert_eq!(files.named("x.rs").len(), 2);
        let suffix: Vec<&str> = files.with_suffix("b/x.rs").map(|id| files.path(id).as_str()).collect();
        assert_eq!(suffix, ["b/x.rs"]);
    }

    #[test]
    fn nested_directories_are_all_known() {
        let files = files(&["a/b/c/d.h"]);
        for dir in ["", "a", "a/b", "a/b/c"] {
            assert!(files.is_dir(dir), "{dir}");
        }
    }

    #[test]
    fn path_helpers() {
        assert_eq!(parent("a/b/c.rs"), "a/b");
        assert_eq!(parent("c.rs"), "");
        assert_eq!(join("", "x"), "x");
        assert_eq!(join("a", "x"), "a/x");
        assert_eq!(join_normalized("a/b", "../c/./d.h").as_deref(), Some("a/c/d.h"));
        assert_eq!(join_normalized("a", "../../x"), None);
        assert_eq!(join_normalized("", "./x").as_deref(), Some("x"));
        assert_eq!(ancestors("a/b").collect::<Vec<_>>(), ["a/b", "a", ""]);
        assert_eq!(ancestors("").collect::<Vec<_>>(), [""]);
        assert_eq!(depth(""), 0);
        assert_eq!(depth("a/b"), 2);
        assert!(is_within("a/b", "a") && is_within("a/b", "") && !is_within("ab/c", "a"));
        assert_eq!(common_depth("a/b/c", "a/b/d"), 2);
        assert_eq!(common_depth("", "a"), 0);
        assert!(has_path_suffix("x/a/b.h", "a/b.h") && has_path_suffix("a/b.h", "a/b.h"));
        assert!(!has_path_suffix("xa/b.h", "a/b.h"));
    }

    #[test]
    fn ancestors_are_nearer_than_cousins() {
        let from = "arch/x86/kernel";
        assert!(nearness(from, "arch/x86") < nearness(from, ""));
        assert!(nearness(from, "") < nearness(from, "arch/x86/kernel/sub"));
        assert!(nearness(from, "arch/x86/mm") < nearness(from, "drivers"));
    }
}
