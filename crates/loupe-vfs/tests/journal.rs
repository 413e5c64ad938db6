//! The journaled write path: atomic plans, preconditions, rollback, crash recovery, undo/redo.

use std::fs;
use std::path::Path;

use loupe_core::config::DEFAULT_EXCLUDE;
use loupe_core::{ContentHash, RepoPath};
use loupe_vfs::journal::Hooks;
use loupe_vfs::{ApplyError, Exclusions, FileChange, Journal, Plan, Root, VfsError};

fn root_at(dir: &Path) -> Root {
    let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
    Root::open(dir, Exclusions::new(&exclude, &[]).unwrap()).unwrap()
}

struct Fixture {
    repo: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Fixture {
    fn new(files: &[(&str, &[u8])]) -> Fixture {
        let repo = tempfile::tempdir().unwrap();
        for (path, bytes) in files {
            let full = repo.path().join(path);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, bytes).unwrap();
        }
        Fixture { repo, state: tempfile::tempdir().unwrap() }
    }

    fn journal(&self) -> Journal {
        Journal::open(root_at(self.repo.path()), self.state.path().join("journal")).unwrap().0
    }

    fn read(&self, path: &str) -> Option<Vec<u8>> {
        fs::read(self.repo.path().join(path)).ok()
    }
}

pub(crate) fn change(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> FileChange {
    FileChange {
        path: RepoPath::normalize(path).unwrap(),
        expected: old.map(ContentHash::of),
        new_bytes: new.map(<[u8]>::to_vec),
    }
}

/// Gives `path` the Unix permission bits `mode` (nothing on Windows, which keeps only a
/// read-only bit).
fn set_mode(path: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
}

/// `path` has the permission bits `mode` (on Windows: is writable, as a 0o6xx mode says).
fn assert_mode(path: &Path, mode: u32) {
    let permissions = fs::metadata(path).unwrap().permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(permissions.mode() & 0o777, mode);
    }
    #[cfg(not(unix))]
    assert_eq!(permissions.readonly(), mode & 0o222 == 0);
}

pub(crate) fn plan(changes: Vec<FileChange>) -> Plan {
    Plan { changes, create_dirs: false }
}

#[test]
fn a_plan_applies_whole_and_undo_redo_restore_exact_bytes() {
    let fixture = Fixture::new(&[("a.txt", b"one\r\ntwo\r\n"), ("gone.txt", b"bye")]);
    let script = fixture.repo.path().join("a.txt");
    set_mode(&script, 0o755);
    let journal = fixture.journal();
    let applied = journal
        .apply(plan(vec![
            change("a.txt", Some(b"one\r\ntwo\r\n"), Some(b"one\r\n2\r\n")),
            change("new.txt", None, Some(b"fresh\n")),
            change("gone.txt", Some(b"bye"), None),
        ]))
        .unwrap();
    assert_eq!(applied.transaction_id, "tx-1");
    assert_eq!(fixture.read("a.txt").unwrap(), b"one\r\n2\r\n");
    assert_mode(&script, 0o755);
    assert_eq!(fixture.read("new.txt").unwrap(), b"fresh\n");
    assert_eq!(fixture.read("gone.txt"), None);

    journal.undo(None, false).unwrap();
    assert_eq!(fixture.read("a.txt").unwrap(), b"one\r\ntwo\r\n");
    assert_eq!(fixture.read("new.txt"), None);
    assert_eq!(fixture.read("gone.txt").unwrap(), b"bye");
    assert_mode(&script, 0o755);
    assert!(matches!(journal.undo(None, false), Err(ApplyError::NothingToDo { .. })));

    // Across a restart.
    drop(journal);
    let journal = fixture.journal();
    journal.redo(None, false).unwrap();
    assert_eq!(fixture.read("a.txt").unwrap(), b"one\r\n2\r\n");
    assert_eq!(fixture.read("gone.txt"), None);
    let history = journal.history(10);
    assert_eq!(history.len(), 1);
    assert!(!history[0].undone);
}

#[test]
fn every_stale_file_is_reported_and_nothing_changes() {
    let fixture = Fixture::new(&[("a.txt", b"a"), ("b.txt", b"b")]);
    let journal = fixture.journal();
    let error = journal
        .apply(plan(vec![
            change("a.txt", Some(b"not a"), Some(b"x")),
            change("b.txt", Some(b"b"), Some(b"y")),
            change("a-new.txt", Some(b"?"), Some(b"z")),
        ]))
        .unwrap_err();
    let ApplyError::Stale(stale) = error else { panic!("{error}") };
    assert_eq!(stale.iter().map(|s| s.path.as_str()).collect::<Vec<_>>(), ["a.txt", "a-new.txt"]);
    assert_eq!(fixture.read("b.txt").unwrap(), b"b");
    assert!(journal.history(10).is_empty());
}

#[test]
fn a_failure_midway_rolls_back_every_written_file() {
    let fixture = Fixture::new(&[("a.txt", b"a"), ("b.txt", b"b"), ("c.txt", b"c")]);
    let mut journal = fixture.journal();
    journal.set_hooks(Hooks { fail_after_writes: Some(2), ..Hooks::default() });
    let error = journal
        .apply(plan(vec![
            change("a.txt", Some(b"a"), Some(b"A")),
            change("new.txt", None, Some(b"N")),
            change("c.txt", Some(b"c"), Some(b"C")),
        ]))
        .unwrap_err();
    assert!(matches!(error, ApplyError::Vfs(VfsError::Io { .. })), "{error}");
    assert_eq!(fixture.read("a.txt").unwrap(), b"a");
    assert_eq!(fixture.read("new.txt"), None);
    assert_eq!(fixture.read("c.txt").unwrap(), b"c");
    assert!(journal.history(10).is_empty());
}

#[test]
fn undo_of_a_file_changed_since_is_a_conflict_unless_forced() {
    let fixture = Fixture::new(&[("a.txt", b"a")]);
    let journal = fixture.journal();
    journal.apply(plan(vec![change("a.txt", Some(b"a"), Some(b"b"))])).unwrap();
    fs::write(fixture.repo.path().join("a.txt"), b"someone else").unwrap();
    let Err(ApplyError::Stale(stale)) = journal.undo(None, false) else { panic!() };
    assert_eq!(stale[0].actual, Some(ContentHash::of(b"someone else")));
    assert_eq!(fixture.read("a.txt").unwrap(), b"someone else");
    journal.undo(None, true).unwrap();
    assert_eq!(fixture.read("a.txt").unwrap(), b"a");
}

#[test]
fn symlinks_and_escapes_are_never_written() {
    let fixture = Fixture::new(&[("a.txt", b"a")]);
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("victim.txt"), b"safe").unwrap();
    use loupe_vfs::testing::symlink;
    symlink(outside.path().join("victim.txt"), fixture.repo.path().join("out-link")).unwrap();
    symlink(fixture.repo.path().join("a.txt"), fixture.repo.path().join("in-link")).unwrap();
    symlink(outside.path(), fixture.repo.path().join("out-dir")).unwrap();
    let journal = fixture.journal();
    for (path, expected) in
        [("out-link", Some(&b"safe"[..])), ("in-link", Some(b"a")), ("out-dir/new.txt", None), (".git/config", None)]
    {
        let change = FileChange {
            path: RepoPath::normalize(path).unwrap(),
            expected: expected.map(ContentHash::of),
            new_bytes: Some(b"pwned".to_vec()),
        };
        let result = journal.apply(Plan { changes: vec![change], create_dirs: true });
        assert!(matches!(result, Err(ApplyError::Vfs(_))), "{path}: {result:?}");
    }
    assert_eq!(fs::read(outside.path().join("victim.txt")).unwrap(), b"safe");
    assert!(!outside.path().join("new.txt").exists());
    assert_eq!(fixture.read("a.txt").unwrap(), b"a");
}

#[test]
fn missing_directories_are_created_only_when_asked() {
    let fixture = Fixture::new(&[]);
    let journal = fixture.journal();
    let result = journal.apply(plan(vec![change("deep/er/new.rs", None, Some(b"x"))]));
    assert!(matches!(result, Err(ApplyError::Vfs(VfsError::MissingDirectory { .. }))), "{result:?}");
    journal.apply(Plan { changes: vec![change("deep/er/new.rs", None, Some(b"x"))], create_dirs: true }).unwrap();
    assert_eq!(fixture.read("deep/er/new.rs").unwrap(), b"x");
}

/// E1 (found by the engine's edit fuzz harness): undoing an edit that created directories
/// (`create_missing_dirs`) left them behind, empty. Undo removes the ones it created while
/// they are empty; redo makes them again.
#[test]
fn e1_undo_removes_the_directories_an_edit_created() {
    let fixture = Fixture::new(&[("deep/kept.txt", b"k")]);
    let journal = fixture.journal();
    let changes = vec![change("deep/er/est/new.rs", None, Some(b"x")), change("other/new.rs", None, Some(b"y"))];
    let applied = journal.apply(Plan { changes, create_dirs: true }).unwrap();
    journal.undo(Some(&applied.transaction_id), false).unwrap();
    assert!(!fixture.repo.path().join("deep/er").exists());
    assert!(!fixture.repo.path().join("other").exists());
    assert_eq!(fixture.read("deep/kept.txt").unwrap(), b"k");
    journal.redo(None, false).unwrap();
    assert_eq!(fixture.read("deep/er/est/new.rs").unwrap(), b"x");
    // A directory that holds something else by the time of the undo stays.
    fs::write(fixture.repo.path().join("other/mine.txt"), b"m").unwrap();
    journal.undo(None, false).unwrap();
    assert!(!fixture.repo.path().join("deep/er").exists());
    assert_eq!(fixture.read("other/mine.txt").unwrap(), b"m");
    assert_eq!(fixture.read("other/new.rs"), None);
    // Across a restart: the record still names them.
    let journal = fixture.journal();
    journal.redo(None, false).unwrap();
    journal.undo(None, false).unwrap();
    assert!(!fixture.repo.path().join("deep/er").exists());
}

/// E1, a failed edit: a plan that fails midway also removes the directories it created.
#[test]
fn e1_a_failed_edit_removes_the_directories_it_created() {
    let fixture = Fixture::new(&[("a.txt", b"a")]);
    let mut journal = fixture.journal();
    journal.set_hooks(Hooks { fail_after_writes: Some(1), ..Hooks::default() });
    let changes = vec![change("made/here/new.rs", None, Some(b"x")), change("a.txt", Some(b"a"), Some(b"b"))];
    let result = journal.apply(Plan { changes, create_dirs: true });
    assert!(result.is_err(), "{result:?}");
    assert!(!fixture.repo.path().join("made").exists());
    assert_eq!(fixture.read("a.txt").unwrap(), b"a");
}

#[test]
fn the_journal_keeps_the_last_hundred_transactions() {
    let fixture = Fixture::new(&[("n.txt", b"0")]);
    let journal = fixture.journal();
    for n in 0..105u32 {
        let old = n.to_string();
        let new = (n + 1).to_string();
        journal.apply(plan(vec![change("n.txt", Some(old.as_bytes()), Some(new.as_bytes()))])).unwrap();
    }
    let history = journal.history(1000);
    assert_eq!(history.len(), 100);
    assert_eq!(history[0].id, "tx-105");
    assert_eq!(history[99].id, "tx-6");
}

#[test]
fn a_failed_undo_leaves_the_transaction_applied_and_undoable() {
    let fixture = Fixture::new(&[("a.txt", b"a"), ("b.txt", b"b")]);
    let mut journal = fixture.journal();
    let _ = journal
        .apply(plan(vec![change("a.txt", Some(b"a"), Some(b"A")), change("b.txt", Some(b"b"), Some(b"B"))]))
        .unwrap();
    journal.set_hooks(Hooks { fail_after_writes: Some(1), ..Hooks::default() });
    assert!(matches!(journal.undo(None, false), Err(ApplyError::Vfs(_))));
    assert_eq!(fixture.read("a.txt").unwrap(), b"A");
    assert_eq!(fixture.read("b.txt").unwrap(), b"B");
    assert!(!journal.history(1)[0].undone);
    journal.set_hooks(Hooks::default());
    let _ = journal.undo(None, false).unwrap();
    assert_eq!(fixture.read("a.txt").unwrap(), b"a");
    assert_eq!(fixture.read("b.txt").unwrap(), b"b");
    assert!(journal.history(1)[0].undone);
}
