//! Finding R17 (docs/findings.md) through the real binary: a read-only start writes nothing into
//! the repository, not even to roll back an edit a crash interrupted; the next writable start does.

use std::path::Path;

use crate::common::loupe;

fn contents(root: &Path) -> Vec<(&'static str, Option<Vec<u8>>)> {
    ["a.txt", "b.txt"].into_iter().map(|path| (path, std::fs::read(root.join(path)).ok())).collect()
}

const TWO_FILES: &str = r#"{"edits": [
    {"path": "a.txt", "old_string": "one", "new_string": "ONE"},
    {"path": "b.txt", "old_string": "two", "new_string": "TWO"}
]}"#;

#[test]
fn r17_a_read_only_start_leaves_an_interrupted_edit_for_the_next_writable_start() {
    let dir = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "two\n").unwrap();
    let before = contents(dir.path());
    let env = [("LOUPE_TEST_HOOKS", "1"), ("LOUPE_TEST_ABORT_AFTER_WRITES", "1")];
    let output = loupe(dir.path(), index.path(), &["edit"], Some(TWO_FILES), &env);
    assert!(!output.status.success(), "the hook must abort the process");
    let crashed = contents(dir.path());
    assert_ne!(crashed, before, "the first file was renamed into place before the crash");

    let output = loupe(dir.path(), index.path(), &["history", "--read-only"], None, &[]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(contents(dir.path()), crashed, "a read-only start wrote into the repository");
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(log.contains("tx-1"), "the read-only start names the transaction it left: {log}");

    let output = loupe(dir.path(), index.path(), &["history"], None, &[]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(contents(dir.path()), before, "the writable start rolled it back");
}
