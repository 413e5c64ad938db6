//! Containment of every read and write (findings R1, R3, R4, R7 and R18 in docs/findings.md, and
//! loupe's config files): attacks reproduced through the public API the engine uses
//! (`Root::resolve`, `Root::read`, `Root::read_indexed`, `Journal::apply`/`undo`), races made
//! deterministic with the root's test hook, which swaps the tree between a check and its use.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use loupe_core::config::DEFAULT_EXCLUDE;
use loupe_core::{ContentHash, RepoPath};
use loupe_vfs::testing::symlink;
use loupe_vfs::{ApplyError, Exclusions, FileChange, Journal, Plan, RacePoint, Root, VfsError};

fn root_at(dir: &Path) -> Root {
    let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
    Root::open(dir, Exclusions::new(&exclude, &[]).unwrap()).unwrap()
}

/// `ERROR_SHARING_VIOLATION`: Windows refuses to move a directory that a handle holds open.
const SHARING_VIOLATION: i32 = 32;

/// A repository with `.git/hooks`, `sub/a.txt`, and a directory outside it.
struct Tree {
    repo: tempfile::TempDir,
    outside: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let tree = Tree {
            repo: tempfile::tempdir().unwrap(),
            outside: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        };
        fs::create_dir_all(tree.repo.path().join(".git/hooks")).unwrap();
        fs::write(tree.repo.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::create_dir_all(tree.repo.path().join("sub")).unwrap();
        fs::write(tree.repo.path().join("sub/a.txt"), "inside\n").unwrap();
        fs::write(tree.outside.path().join("a.txt"), "OUTSIDE\n").unwrap();
        tree
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.repo.path().join(relative)
    }

    fn journal(&self, root: Root) -> Journal {
        Journal::open(root, self.state.path().join("journal")).unwrap().0
    }

    /// Every file under the outside directory, with its bytes: what must never change.
    fn outside_files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        let mut pending = vec![self.outside.path().to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in fs::read_dir(dir).unwrap() {
                let entry = entry.unwrap();
                if entry.file_type().unwrap().is_dir() {
                    pending.push(entry.path());
                } else {
                    files.push((entry.path(), fs::read(entry.path()).unwrap()));
                }
            }
        }
        files.sort();
        files
    }

    /// Moves `sub` aside (inside the root) and puts a symlink to the outside in its place.
    /// Windows refuses to move a directory loupe holds open (a sharing violation): then nothing
    /// is swapped, which is the point of holding it.
    fn swap_sub_for_link_outside(&self, relative_link: bool) {
        match fs::rename(self.path("sub"), self.path("sub.aside")) {
            Ok(()) => {}
            Err(error) if cfg!(windows) && error.raw_os_error() == Some(SHARING_VIOLATION) => return,
            Err(error) => panic!("{error}"),
        }
        if relative_link {
            let target = Path::new("..").join(self.outside.path().file_name().unwrap());
            // `../<outside>` only reaches it when both temp dirs share a parent; the link
            // escapes the root either way.
            symlink(target, self.path("sub")).unwrap();
        } else {
            symlink(self.outside.path(), self.path("sub")).unwrap();
        }
    }
}

fn path(text: &str) -> RepoPath {
    RepoPath::normalize(text).unwrap()
}

fn create(text: &str, bytes: &[u8]) -> FileChange {
    FileChange { path: path(text), expected: None, new_bytes: Some(bytes.to_vec()) }
}

fn modify(text: &str, old: &[u8], new: &[u8]) -> FileChange {
    FileChange { path: path(text), expected: Some(ContentHash::of(old)), new_bytes: Some(new.to_vec()) }
}

fn plan(changes: Vec<FileChange>, create_dirs: bool) -> Plan {
    Plan { changes, create_dirs }
}

/// Runs `action` once, the first time the root reaches `point` for `target`.
fn once_at(root: &mut Root, point: RacePoint, target: &str, action: impl Fn() + Send + Sync + 'static) {
    let fired = AtomicBool::new(false);
    let target = path(target);
    root.set_race_hook(move |reached, path| {
        if reached == point && *path == target && !fired.swap(true, Ordering::SeqCst) {
            action();
        }
    });
}

fn apply_error(result: Result<loupe_vfs::Applied, ApplyError>) -> VfsError {
    match result {
        Err(ApplyError::Vfs(error)) => error,
        other => panic!("expected a refused write, got {other:?}"),
    }
}

/// With `gitlink -> .git`, creating `gitlink/hooks/pre-commit` once wrote into `.git/hooks`.
#[test]
fn r1_create_through_symlink_to_git_is_refused() {
    let tree = Tree::new();
    symlink(".git", tree.path("gitlink")).unwrap();
    symlink(tree.path(".git"), tree.path("abs-gitlink")).unwrap();
    symlink(".git/hooks", tree.path("hooklink")).unwrap();
    let root = root_at(tree.repo.path());
    for target in
        ["gitlink/hooks/pre-commit", "abs-gitlink/hooks/pre-commit", "gitlink/commondir", "hooklink/post-merge"]
    {
        assert!(matches!(root.resolve(target), Err(VfsError::Excluded { .. })), "{target}");
        let journal = tree.journal(root.clone());
        let error = apply_error(journal.apply(plan(vec![create(target, b"#!/bin/sh\nid\n")], false)));
        assert!(matches!(error, VfsError::Excluded { ref pattern, .. } if pattern == ".git/"), "{target}: {error}");
    }
    assert!(!tree.path(".git/hooks/pre-commit").exists());
    assert!(!tree.path(".git/hooks/post-merge").exists());
    assert!(!tree.path(".git/commondir").exists());
}

/// The same with `create_missing_dirs`: no directory is created inside `.git/` through a link.
#[test]
fn r1_create_missing_dirs_through_symlink_to_git_is_refused() {
    let tree = Tree::new();
    symlink(".git", tree.path("gitlink")).unwrap();
    let journal = tree.journal(root_at(tree.repo.path()));
    let error = apply_error(journal.apply(plan(vec![create("gitlink/evil/deep/config", b"x")], true)));
    assert!(matches!(error, VfsError::Excluded { .. }), "{error}");
    assert!(!tree.path(".git/evil").exists());
}

/// The same at the handle: `dir` is a plain directory when checked, then becomes a link to `.git`
/// before the write. The directory opened for the write is checked by its real path.
#[test]
fn r1_r3_a_directory_swapped_for_a_link_to_git_is_refused() {
    let tree = Tree::new();
    fs::create_dir(tree.path("hooks")).unwrap();
    let mut root = root_at(tree.repo.path());
    let repo = tree.repo.path().to_path_buf();
    once_at(&mut root, RacePoint::Checked, "hooks/pre-commit", move || {
        fs::remove_dir(repo.join("hooks")).unwrap();
        symlink(".git/hooks", repo.join("hooks")).unwrap();
    });
    let journal = tree.journal(root);
    let error = apply_error(journal.apply(plan(vec![create("hooks/pre-commit", b"#!/bin/sh\n")], false)));
    assert!(matches!(error, VfsError::Excluded { .. }), "{error}");
    assert!(!tree.path(".git/hooks/pre-commit").exists());
}

/// The directory becomes a link to the outside after the checks and before the open:
/// the write is refused and nothing outside changes (absolute and relative links).
#[test]
fn r3_write_after_swap_before_open_is_refused() {
    for relative_link in [false, true] {
        let tree = Arc::new(Tree::new());
        let before = tree.outside_files();
        let mut root = root_at(tree.repo.path());
        let swapper = Arc::clone(&tree);
        once_at(&mut root, RacePoint::Checked, "sub/a.txt", move || swapper.swap_sub_for_link_outside(relative_link));
        let journal = tree.journal(root);
        let error = apply_error(journal.apply(plan(vec![modify("sub/a.txt", b"inside\n", b"written\n")], false)));
        assert!(matches!(error, VfsError::OutsideRoot { .. }), "{error}");
        assert_eq!(tree.outside_files(), before, "relative link: {relative_link}");
        assert_eq!(fs::read(tree.path("sub.aside/a.txt")).unwrap(), b"inside\n");
    }
}

/// The directory becomes a link to the outside after it was opened and checked: the
/// write goes through the handle into the directory that was checked (now `sub.aside`).
#[test]
fn r3_write_after_swap_after_open_lands_inside_the_root() {
    let tree = Arc::new(Tree::new());
    let before = tree.outside_files();
    let mut root = root_at(tree.repo.path());
    let swapper = Arc::clone(&tree);
    once_at(&mut root, RacePoint::Opened, "sub/a.txt", move || swapper.swap_sub_for_link_outside(false));
    let journal = tree.journal(root);
    journal.apply(plan(vec![modify("sub/a.txt", b"inside\n", b"written\n")], false)).unwrap();
    assert_eq!(tree.outside_files(), before);
    // Where the checked directory is now: moved aside, or (Windows) left where it was.
    let checked = if tree.path("sub.aside").exists() { tree.path("sub.aside") } else { tree.path("sub") };
    assert_eq!(fs::read(checked.join("a.txt")).unwrap(), b"written\n");
    let leftovers: Vec<_> = fs::read_dir(checked).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
}

/// The same swap, for creates with missing directories and for deletes.
#[test]
fn r3_create_and_delete_after_swap_never_touch_the_outside() {
    // A create whose directory is made first, then swapped before the file is placed.
    let tree = Arc::new(Tree::new());
    let before = tree.outside_files();
    let mut root = root_at(tree.repo.path());
    let swapper = Arc::clone(&tree);
    once_at(&mut root, RacePoint::Checked, "sub/new.txt", move || swapper.swap_sub_for_link_outside(false));
    let error = apply_error(tree.journal(root).apply(plan(vec![create("sub/new.txt", b"new\n")], true)));
    assert!(matches!(error, VfsError::OutsideRoot { .. }), "{error}");
    assert_eq!(tree.outside_files(), before);

    // A delete swapped after the open: the checked file (now under `sub.aside`) goes.
    let tree = Arc::new(Tree::new());
    let before = tree.outside_files();
    let mut root = root_at(tree.repo.path());
    let swapper = Arc::clone(&tree);
    once_at(&mut root, RacePoint::Opened, "sub/a.txt", move || swapper.swap_sub_for_link_outside(false));
    let change = FileChange { path: path("sub/a.txt"), expected: Some(ContentHash::of(b"inside\n")), new_bytes: None };
    tree.journal(root).apply(plan(vec![change], false)).unwrap();
    assert_eq!(tree.outside_files(), before);
    assert!(!tree.path("sub.aside/a.txt").exists());
}

/// An undo after the directory was replaced by a link to the outside (holding the bytes
/// the undo expects) is refused, not written through the link.
#[test]
fn r3_undo_never_writes_through_a_link_swapped_in() {
    let tree = Tree::new();
    let journal = tree.journal(root_at(tree.repo.path()));
    journal.apply(plan(vec![modify("sub/a.txt", b"inside\n", b"written\n")], false)).unwrap();
    fs::write(tree.outside.path().join("a.txt"), "written\n").unwrap();
    tree.swap_sub_for_link_outside(false);
    let error = apply_error(journal.undo(None, true));
    assert!(matches!(error, VfsError::OutsideRoot { .. }), "{error}");
    assert_eq!(fs::read(tree.outside.path().join("a.txt")).unwrap(), b"written\n");
}

/// The same for reads: a swap after `resolve` never yields the outside file's bytes.
#[test]
fn r3_read_after_swap_never_returns_outside_bytes() {
    for point in [RacePoint::Checked, RacePoint::Opened] {
        let tree = Arc::new(Tree::new());
        let mut root = root_at(tree.repo.path());
        let swapper = Arc::clone(&tree);
        once_at(&mut root, point, "sub/a.txt", move || swapper.swap_sub_for_link_outside(false));
        let resolved = root.resolve("sub/a.txt").unwrap();
        match root.read(&resolved, 1 << 20) {
            Ok(file) => assert_eq!(file.bytes, b"inside\n", "{point:?}"),
            Err(error) => assert!(matches!(error, VfsError::OutsideRoot { .. }), "{point:?}: {error}"),
        }
    }
}

/// Symlinks that stay inside the root keep working, relative and absolute, for reads and
/// for writes into the directory they name.
#[test]
fn symlinks_inside_the_root_still_read_and_write() {
    let tree = Tree::new();
    symlink("sub", tree.path("rel")).unwrap();
    symlink(tree.path("sub"), tree.path("abs")).unwrap();
    symlink("sub/a.txt", tree.path("file-link")).unwrap();
    symlink("../sub/a.txt", tree.path("sub/up-link")).unwrap();
    symlink(tree.path("abs/a.txt"), tree.path("abs-file-link")).unwrap();
    let root = root_at(tree.repo.path());
    for target in ["rel/a.txt", "abs/a.txt", "file-link", "sub/up-link", "abs-file-link", "rel/../rel/a.txt"] {
        let resolved = root.resolve(target).unwrap();
        assert_eq!(root.read(&resolved, 1024).unwrap().bytes, b"inside\n", "{target}");
    }
    let journal = tree.journal(root);
    journal.apply(plan(vec![create("rel/r.txt", b"r\n"), create("abs/x/a.txt", b"a\n")], true)).unwrap();
    assert_eq!(fs::read(tree.path("sub/r.txt")).unwrap(), b"r\n");
    assert_eq!(fs::read(tree.path("sub/x/a.txt")).unwrap(), b"a\n");
}

/// Runs `body` on another thread and fails if it takes longer than five seconds (a FIFO
/// opened blocking would hang forever).
#[cfg(unix)]
fn within_five_seconds<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(body());
    });
    receiver.recv_timeout(std::time::Duration::from_secs(5)).expect("took over 5 s: a special file was opened blocking")
}

/// A FIFO at `at`, by the system's own `mkfifo` (rustix has no `mknodat` on macOS).
#[cfg(unix)]
fn mkfifo(at: &Path) {
    let status = std::process::Command::new("mkfifo").arg(at).status().unwrap();
    assert!(status.success(), "mkfifo {}", at.display());
}

/// A FIFO hung every read forever (and, read under the journal's lock, every edit). Unix only:
/// Windows has no FIFO in a directory (its named pipes live in their own namespace).
#[test]
#[cfg(unix)]
fn r4_reading_a_fifo_is_refused_promptly() {
    let tree = Tree::new();
    mkfifo(&tree.path("pipe.txt"));
    symlink("pipe.txt", tree.path("pipe-link.txt")).unwrap();
    mkfifo(&tree.path(".gitignore"));
    let root = root_at(tree.repo.path());
    let state = tree.state.path().join("journal");
    let errors = within_five_seconds(move || {
        let mut errors = Vec::new();
        for target in ["pipe.txt", "pipe-link.txt"] {
            let resolved = root.resolve(target).unwrap();
            errors.push(root.read(&resolved, 1024).unwrap_err());
            errors.push(root.read_indexed(&path(target), 1024).unwrap_err());
        }
        assert!(!root.is_ignored(&path("sub/a.txt"), false));
        // A FIFO where a directory is needed is never opened blocking either: not to list the
        // names beside a missing file ...
        let (dir, names) = root.sibling_names(&path("pipe.txt/new.txt"));
        assert_eq!(dir, RepoPath::root(), "listed the FIFO's parent instead");
        assert!(names.contains(&"pipe.txt".to_owned()), "{names:?}");
        let journal = Journal::open(root, state).unwrap().0;
        errors.push(apply_error(journal.apply(plan(vec![modify("pipe.txt", b"", b"x")], false))));
        errors.push(apply_error(journal.apply(plan(vec![create("pipe.txt", b"x")], false))));
        // ... nor beneath it, a FIFO where a directory is needed.
        let error = apply_error(journal.apply(plan(vec![create("pipe.txt/new.txt", b"x")], false)));
        assert!(error.to_string().contains("pipe.txt"), "{error}");
        errors
    });
    for error in errors {
        assert!(matches!(error, VfsError::NotRegular { kind: "FIFO", .. }), "{error}");
        assert!(error.to_string().contains("is a FIFO, not a regular file"), "{error}");
    }
}

/// A socket, and a character device where the test may create one (`mknod zero.txt
/// c 1 5` needs CAP_MKNOD), are refused the same way, without reading.
#[test]
#[cfg(unix)]
fn r7_sockets_and_devices_are_refused() {
    let tree = Tree::new();
    let _listener = std::os::unix::net::UnixListener::bind(tree.path("sock.txt")).unwrap();
    #[cfg(target_os = "linux")]
    let device = rustix::fs::mknodat(
        rustix::fs::CWD,
        tree.path("zero.txt"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 5),
    )
    .is_ok();
    #[cfg(not(target_os = "linux"))]
    let device = false;
    let root = root_at(tree.repo.path());
    let result = within_five_seconds(move || {
        let socket = root.read(&root.resolve("sock.txt").unwrap(), 1024).unwrap_err();
        let device = device.then(|| root.read(&root.resolve("zero.txt").unwrap(), 1 << 30).unwrap_err());
        (socket, device)
    });
    assert!(matches!(result.0, VfsError::NotRegular { kind: "socket", .. }), "{}", result.0);
    if let Some(error) = result.1 {
        assert!(matches!(error, VfsError::NotRegular { kind: "character device", .. }), "{error}");
    }
}

/// §3.1: loupe's own config files are readable but never written through `edit`, also not
/// through a link to their directory.
#[test]
fn loupes_config_files_are_not_writable() {
    let tree = Tree::new();
    fs::write(tree.path("loupe.toml"), "exclude = []\n").unwrap();
    fs::create_dir(tree.path(".loupe")).unwrap();
    symlink(".loupe", tree.path("dotloupe")).unwrap();
    let root = root_at(tree.repo.path());
    assert_eq!(root.read(&root.resolve("loupe.toml").unwrap(), 1024).unwrap().bytes, b"exclude = []\n");
    let journal = tree.journal(root);
    let cases = [
        modify("loupe.toml", b"exclude = []\n", b"allow = [\".env\"]\n"),
        create(".loupe/config.toml", b"read_only = false\n"),
        create("dotloupe/config.toml", b"read_only = false\n"),
    ];
    for change in cases {
        let target = change.path.clone();
        let error = apply_error(journal.apply(plan(vec![change], false)));
        assert!(matches!(error, VfsError::ConfigFile { .. }), "{target}: {error}");
    }
    assert_eq!(fs::read(tree.path("loupe.toml")).unwrap(), b"exclude = []\n");
    assert!(!tree.path(".loupe/config.toml").exists());
}

/// A NUL byte is an invalid path, not an IO error; IO errors name root-relative paths.
#[test]
fn r18_nul_bytes_are_invalid_and_messages_are_root_relative() {
    let tree = Tree::new();
    let root = root_at(tree.repo.path());
    let uri = format!("file://{}/a%00b", root.canonical().display());
    for input in ["a\0b", "sub/\0", &uri] {
        assert!(matches!(root.resolve(input), Err(VfsError::InvalidPath { .. })), "{input:?}");
    }
    let long = "x".repeat(300);
    let absolute = root.canonical().display().to_string();
    match root.resolve(&format!("sub/{long}")) {
        Err(error) => {
            assert!(matches!(error, VfsError::Io { .. }), "{error}");
            assert!(!error.to_string().contains(&absolute), "{error}");
        }
        // Windows calls a name over its limit missing, not too long.
        Ok(resolved) => assert!(cfg!(windows) && resolved.real.is_none(), "{resolved:?}"),
    }
    let error = apply_error(tree.journal(root).apply(plan(vec![create(&format!("sub/{long}"), b"x")], false)));
    assert!(!error.to_string().contains(&absolute), "{error}");
}
