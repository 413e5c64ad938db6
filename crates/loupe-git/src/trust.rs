//! Which git directory a workspace may read, decided before gix opens anything.
//!
//! Git metadata is input from the repository like any file. A tree can hold a `.git` file
//! (`gitdir: /elsewhere/.git`), a `.git` symbolic link, a `commondir` file or an
//! `objects/info/alternates` list naming another repository's object store, and gix follows
//! each of them: a planted link would print another repository's files and branch. So the
//! `.git` entry nearest the root is found here, and each link is followed only where git's own
//! layouts put one:
//!
//! - a `.git` directory at the work tree's top, everything it holds inside the work tree;
//! - a `.git` file naming a git directory inside the work tree (`--separate-git-dir` below it);
//! - a linked worktree: the file names `<common>/worktrees/<name>`, whose `gitdir` file points
//!   back at this `.git` file and whose `commondir` is `<common>`;
//! - a submodule: the file names `<super>/.git/modules/<name>` (nested: `…/modules/a/modules/b`)
//!   of a superproject `<super>` that holds this work tree, whose `core.worktree` names it.
//!
//! Whatever the layout, the object store's `alternates` (followed transitively) and the
//! entries git reads (`HEAD`, `config`, `index`, `packed-refs`, `refs`, `objects` and each of
//! its subdirectories and packs) must resolve inside the trusted directories: the work tree, and
//! the private and common git directories of a worktree or submodule. Anything else is refused
//! with the reason, and the repository is treated as unavailable.

use std::path::{Path, PathBuf};

/// How deep `alternates` of `alternates` are followed (git's own limit is 5).
const MAX_ALTERNATE_DEPTH: usize = 5;
/// The largest metadata file read here (`.git` file, `gitdir`, `commondir`, `alternates`,
/// `config`): a git directory's own files are a few kilobytes.
const MAX_METADATA_BYTES: u64 = 1 << 20;

/// A git directory found for a work tree, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trusted {
    /// The work tree's top (canonical): the directory holding the `.git` entry.
    pub(crate) worktree: PathBuf,
    /// The git directory to open (canonical): `<top>/.git`, or where a `.git` file points.
    pub(crate) git_dir: PathBuf,
}

/// Why a repository's git metadata was not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// No `.git` at or above the root.
    Nothing,
    Trusted(Trusted),
    /// A `.git` was found but a link it holds leaves the trusted directories.
    Refused(String),
}

/// Finds the `.git` entry nearest `canonical_root` (at it or above) and decides whether its
/// git directory may be read.
pub(crate) fn find(canonical_root: &Path) -> Found {
    for top in canonical_root.ancestors() {
        let dot_git = top.join(".git");
        let Ok(metadata) = std::fs::symlink_metadata(&dot_git) else { continue };
        return match check(top, &dot_git, &metadata) {
            Ok(trusted) => Found::Trusted(trusted),
            Err(reason) => Found::Refused(reason),
        };
    }
    Found::Nothing
}

fn check(top: &Path, dot_git: &Path, metadata: &std::fs::Metadata) -> Result<Trusted, String> {
    let worktree = top.to_path_buf();
    let mut trusted_dirs = vec![worktree.clone()];
    // A symbolic link is followed only to something inside the work tree; then what it names
    // is checked as a `.git` file or directory would be.
    let real = dunce::canonicalize(dot_git).ok().filter(|real| real.starts_with(&worktree));
    let Some(real) = real else {
        return Err("`.git` is a symbolic link that leaves the work tree".to_owned());
    };
    let is_file = if metadata.is_symlink() { real.is_file() } else { metadata.is_file() };
    let git_dir = if is_file {
        let (written, target) = gitdir_of_file(&real)?;
        let refused = || {
            format!(
                "`.git` is a file naming `{written}`, which is neither a git directory inside the work tree nor a \
                 linked worktree or submodule whose git directory points back here"
            )
        };
        let git_dir = dunce::canonicalize(&target).map_err(|_| refused())?;
        if !git_dir.starts_with(&worktree) {
            if is_linked_worktree(&git_dir, &real) {
                let common = git_dir.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
                trusted_dirs.push(common);
            } else if !is_submodule(&git_dir, &worktree) {
                return Err(refused());
            }
            trusted_dirs.push(git_dir.clone());
        }
        git_dir
    } else {
        real
    };
    let inside = |path: &Path| trusted_dirs.iter().any(|dir| path.starts_with(dir));
    // The common directory (a worktree's `commondir`) holds the objects and refs.
    let common = match read_small(&git_dir.join("commondir")) {
        Some(text) => {
            let common = dunce::canonicalize(git_dir.join(text.trim_end_matches(['\n', '\r'])));
            match common {
                Ok(common) if inside(&common) => common,
                _ => return Err("the git directory's `commondir` names a directory outside the repository".to_owned()),
            }
        }
        None => git_dir.clone(),
    };
    for dir in [&git_dir, &common] {
        for entry in ["HEAD", "config", "index", "packed-refs", "refs", "objects", "commondir"] {
            entry_inside(&dir.join(entry), &inside)?;
        }
    }
    let objects = common.join("objects");
    for dir in [objects.clone(), objects.join("pack"), objects.join("info")] {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for entry in entries.flatten() {
                entry_inside(&entry.path(), &inside)?;
            }
        }
    }
    alternates_inside(&objects, &inside, 0)?;
    Ok(Trusted { worktree, git_dir })
}

/// The path a `.git` file names (`gitdir: <path>`, relative to the file's directory), as
/// written and as joined.
fn gitdir_of_file(dot_git: &Path) -> Result<(String, PathBuf), String> {
    let text = read_small(dot_git).ok_or_else(|| "`.git` is a file that cannot be read".to_owned())?;
    let target = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("gitdir:"))
        .map(str::trim)
        .filter(|target| !target.is_empty())
        .ok_or_else(|| "`.git` is a file without a `gitdir:` line".to_owned())?;
    // What the answer quotes of the tree's own text is bounded.
    let written: String = target.chars().take(200).collect();
    Ok((written, dot_git.parent().unwrap_or(Path::new("/")).join(target)))
}

/// `git_dir` is `<common>/worktrees/<name>`, its `commondir` is `<common>` and its `gitdir`
/// file names this `.git` file: the layout `git worktree add` makes, checked both ways.
fn is_linked_worktree(git_dir: &Path, dot_git: &Path) -> bool {
    let Some(worktrees) = git_dir.parent() else { return false };
    let Some(common) = worktrees.parent() else { return false };
    if worktrees.file_name().is_none_or(|name| name != "worktrees") {
        return false;
    }
    let names = |file: &str, expected: &Path| {
        read_small(&git_dir.join(file)).is_some_and(|text| {
            dunce::canonicalize(git_dir.join(text.trim_end_matches(['\n', '\r']))).is_ok_and(|real| real == expected)
        })
    };
    names("commondir", common) && names("gitdir", dot_git)
}

/// `git_dir` is `<super>/.git/modules/<name>` of a superproject that holds `worktree`, and its
/// `core.worktree` names `worktree`: the layout `git submodule` makes.
fn is_submodule(git_dir: &Path, worktree: &Path) -> bool {
    let components: Vec<_> = git_dir.components().collect();
    let superproject =
        components.windows(2).position(|pair| pair[0].as_os_str() == ".git" && pair[1].as_os_str() == "modules");
    let Some(position) = superproject else { return false };
    let superproject: PathBuf = components[..position].iter().collect();
    if !worktree.starts_with(&superproject) {
        return false;
    }
    let Some(config) = read_small(&git_dir.join("config")) else { return false };
    let named = config.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        key.trim().eq_ignore_ascii_case("worktree").then(|| value.trim().trim_matches('"').to_owned())
    });
    named.is_some_and(|named| dunce::canonicalize(git_dir.join(named)).is_ok_and(|real| real == worktree))
}

/// A path git reads, if it exists, resolves inside the trusted directories.
fn entry_inside(path: &Path, inside: &dyn Fn(&Path) -> bool) -> Result<(), String> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    match dunce::canonicalize(path) {
        Ok(real) if inside(&real) => Ok(()),
        Ok(_) => Err(format!(
            "the git directory's `{}` is a link that leaves the repository",
            path.file_name().unwrap_or_default().to_string_lossy()
        )),
        // A dangling link reads nothing; gix reports what is missing.
        Err(_) => Ok(()),
    }
}

/// Every object store `objects/info/alternates` names, transitively, is inside.
fn alternates_inside(objects: &Path, inside: &dyn Fn(&Path) -> bool, depth: usize) -> Result<(), String> {
    let Some(text) = read_small(&objects.join("info/alternates")) else { return Ok(()) };
    if depth >= MAX_ALTERNATE_DEPTH {
        return Err("`objects/info/alternates` nests deeper than git follows".to_owned());
    }
    for line in text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')) {
        let Ok(store) = dunce::canonicalize(objects.join(line)) else { continue };
        if !inside(&store) {
            return Err(format!(
                "`objects/info/alternates` names an object store outside the repository (`{line}`); `git repack -a \
                 -d` and removing that file makes the repository self-contained"
            ));
        }
        alternates_inside(&store, inside, depth + 1)?;
    }
    Ok(())
}

/// A small regular file's text, `None` when it is missing, a symbolic link or anything but a
/// regular file, too large or not UTF-8: git writes these files itself, never as links.
fn read_small(path: &Path) -> Option<String> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_METADATA_BYTES {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}
