//! Damaged or planted files in the index directory (finding R15 in docs/findings.md): an index file
//! that is a directory, a link to `/dev/zero` or a FIFO is no index, never a hang, an endless read
//! or a text index that answers "no results"; the next build replaces it with a regular file.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use loupe_core::config::DEFAULT_EXCLUDE;
use loupe_index::{Index, IndexOptions};
use loupe_vfs::{Exclusions, Root};

use crate::index_lifecycle::{candidates, write};

fn open(dir: &Path, index_dir: &Path) -> Index {
    let exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect();
    let root = Root::open(dir, Exclusions::new(&exclude, &[]).unwrap()).unwrap();
    Index::open(root, IndexOptions { index_dir: index_dir.to_path_buf(), max_file_bytes: 1 << 20, threads: 2 })
}

/// A workspace indexed once (so the index directory holds `tables.bin` and `text.bin`).
fn indexed_workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/lib.rs", "pub fn alpha_one() {}\n");
    write(dir.path(), "src/util.py", "def gamma_two():\n    return 2\n");
    let index_dir = tempfile::tempdir().unwrap();
    let index = open(dir.path(), index_dir.path());
    index.refresh(&|_, _| {});
    assert_eq!(candidates(&index, "gamma_two"), ["src/util.py"]);
    drop(index);
    (dir, index_dir)
}

fn replace_with_dir(path: &Path) {
    std::fs::remove_file(path).unwrap();
    std::fs::create_dir(path).unwrap();
    std::fs::write(path.join("inside"), "x").unwrap();
}

fn replace_with_link(path: &Path, target: &str) {
    std::fs::remove_file(path).unwrap();
    std::os::unix::fs::symlink(target, path).unwrap();
}

fn replace_with_fifo(path: &Path) {
    std::fs::remove_file(path).unwrap();
    let made = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

/// Opens the index, loads, refreshes and searches on a thread, failing (instead of hanging
/// the test run) when that takes more than 20 s.
fn reopen_and_search(dir: &Path, index_dir: &Path) -> (bool, Vec<String>, Vec<String>) {
    let (dir, index_dir) = (dir.to_path_buf(), index_dir.to_path_buf());
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let index = open(&dir, &index_dir);
        let loaded = index.load_snapshot();
        index.refresh(&|_, _| {});
        let _ = send.send((loaded, candidates(&index, "gamma_two"), candidates(&index, "alpha_one")));
    });
    receive.recv_timeout(Duration::from_secs(20)).expect("opening the index hung")
}

fn assert_regular(path: &Path) {
    let metadata = std::fs::symlink_metadata(path).unwrap();
    assert!(metadata.is_file(), "{} is still not a regular file", path.display());
}

#[test]
fn r15_text_index_replaced_by_a_directory_is_rebuilt_not_empty() {
    let (dir, index_dir) = indexed_workspace();
    let text = index_dir.path().join("text.bin");
    replace_with_dir(&text);
    let (loaded, gamma, alpha) = reopen_and_search(dir.path(), index_dir.path());
    assert!(!loaded, "a snapshot without its text index is not served");
    assert_eq!(gamma, ["src/util.py"], "text search answered from an unusable index");
    assert_eq!(alpha, ["src/lib.rs"]);
    assert_regular(&text);
    // And the rebuilt file serves the next start.
    let (loaded, gamma, _) = reopen_and_search(dir.path(), index_dir.path());
    assert!(loaded);
    assert_eq!(gamma, ["src/util.py"]);
}

#[test]
fn r15_text_index_linked_to_dev_zero_is_not_read() {
    let (dir, index_dir) = indexed_workspace();
    let text = index_dir.path().join("text.bin");
    replace_with_link(&text, "/dev/zero");
    let (loaded, gamma, _) = reopen_and_search(dir.path(), index_dir.path());
    assert!(!loaded);
    assert_eq!(gamma, ["src/util.py"]);
    assert_regular(&text);
}

#[test]
fn r15_tables_linked_to_a_device_or_a_fifo_are_not_read() {
    for plant in ["/dev/zero", "fifo", "dir"] {
        let (dir, index_dir) = indexed_workspace();
        let tables = index_dir.path().join("tables.bin");
        match plant {
            "fifo" => replace_with_fifo(&tables),
            "dir" => replace_with_dir(&tables),
            device => replace_with_link(&tables, device),
        }
        let (loaded, gamma, _) = reopen_and_search(dir.path(), index_dir.path());
        assert!(!loaded, "{plant}");
        assert_eq!(gamma, ["src/util.py"], "{plant}");
        assert_regular(&tables);
    }
}

#[test]
fn r15_writer_lock_planted_as_a_fifo_does_not_block() {
    let (dir, index_dir) = indexed_workspace();
    replace_with_fifo(&index_dir.path().join("writer.lock"));
    let (send, receive) = mpsc::channel();
    let (root, index_path) = (dir.path().to_path_buf(), index_dir.path().to_path_buf());
    std::thread::spawn(move || {
        let _ = send.send(open(&root, &index_path).is_writer());
    });
    assert!(receive.recv_timeout(Duration::from_secs(20)).expect("opening the index hung"));
    assert_regular(&index_dir.path().join("writer.lock"));
}

/// The index reads `text.bin`'s posting lists and `tables.bin`'s symbol rows on demand, from
/// the files it opened. Each file truncated, or rewritten in place, under a live index: no
/// panic, no text search that misses a match (every file is a candidate), the index says
/// `building` (so callers scan) and the next refresh rebuilds it.
#[test]
fn r15_index_files_truncated_or_rewritten_under_a_live_index_scan_then_rebuild() {
    use std::os::unix::fs::FileExt;
    for (name, how) in
        [("text.bin", "truncate"), ("tables.bin", "truncate"), ("text.bin", "rewrite"), ("tables.bin", "rewrite")]
    {
        let (dir, index_dir) = indexed_workspace();
        let index = open(dir.path(), index_dir.path());
        assert!(index.load_snapshot(), "{name}: the snapshot loads");
        assert_eq!(index.state(), loupe_index::IndexState::Ready);
        let path = index_dir.path().join(name);
        let len = std::fs::metadata(&path).unwrap().len();
        std::thread::sleep(Duration::from_millis(20));
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        match how {
            "truncate" => file.set_len(len / 2).unwrap(),
            _ => file.write_all_at(&vec![0x5A; len as usize / 2], len / 4).unwrap(),
        }
        drop(file);
        let found = candidates(&index, "gamma_two");
        assert!(found.contains(&"src/util.py".to_owned()), "{name} {how}: a match is never missed: {found:?}");
        let _ = index.symbols_named("alpha_one");
        let _ = index.symbols_containing("alpha", 10);
        assert_eq!(index.state(), loupe_index::IndexState::Building, "{name} {how}: the index says it cannot answer");
        let stats = index.refresh(&|_, _| {});
        assert!(stats.full_rebuild, "{name} {how}: {stats:?}");
        assert_eq!(index.state(), loupe_index::IndexState::Ready);
        assert_eq!(candidates(&index, "gamma_two"), ["src/util.py"]);
        assert_eq!(index.symbols_named("alpha_one").len(), 1, "{name} {how}");
        // Reopened, the rebuilt files load and answer.
        drop(index);
        let index = open(dir.path(), index_dir.path());
        assert!(index.load_snapshot());
        assert_eq!(index.symbols_named("alpha_one").len(), 1, "{name} {how}");
    }
}

/// A writer replaces its files by a rename; another process reading the same index keeps
/// answering from the files it opened, whole, never seeing them as damaged.
#[test]
fn index_files_replaced_by_a_rename_keep_a_reader_answering() {
    let (dir, index_dir) = indexed_workspace();
    let writer = open(dir.path(), index_dir.path());
    assert!(writer.is_writer());
    let reader = open(dir.path(), index_dir.path());
    assert!(!reader.is_writer() && reader.load_snapshot());
    write(dir.path(), "src/more.rs", "pub fn delta_three() {}\n");
    writer.refresh(&|_, _| {});
    assert_eq!(writer.symbols_named("delta_three").len(), 1);
    assert_eq!(reader.state(), loupe_index::IndexState::Ready);
    assert_eq!(reader.symbols_named("alpha_one").len(), 1);
    assert_eq!(candidates(&reader, "gamma_two"), ["src/util.py"]);
}
