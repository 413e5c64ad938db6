//! The index directory is the user's private state (hardening H7b): it holds the edit journal
//! (old and new bytes of every edited file), the analytics and the index, so it is made private
//! (0700) and must be the user's own; a directory planted at `journal/lock` does not disable
//! edits. Unix only: the modes and owners it checks are Unix's (on Windows the index directory
//! sits in the user's profile, private by its ACL).
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;

use loupe_engine::Engine;
use serde_json::json;

use crate::common::{tool_config, write};

fn edit_secret_file(engine: &Engine) {
    let applied = engine
        .call("edit", json!({"edits": [{"path": "private.txt", "old_string": "token-1", "new_string": "token-2"}]}));
    assert!(applied.ok, "{}", applied.face);
}

#[test]
fn h7b_the_index_directory_is_private_to_the_user() {
    let (root, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(root.path(), "private.txt", "token-1\n");
    fs::set_permissions(root.path().join("private.txt"), fs::Permissions::from_mode(0o600)).unwrap();
    let index_dir = cache.path().join("index");
    fs::create_dir(&index_dir).unwrap();
    fs::set_permissions(&index_dir, fs::Permissions::from_mode(0o755)).unwrap();
    let engine = Engine::new(tool_config(root.path(), &index_dir)).unwrap();
    edit_secret_file(&engine);
    // The journal now holds both versions of the 0600 file; no other user can enter its parent.
    let mode = fs::metadata(&index_dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "index directory mode {mode:o}");
    assert!(index_dir.join("journal").exists());
}

#[test]
fn h7b_an_index_directory_that_is_a_link_or_another_users_is_refused() {
    let (root, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(root.path(), "a.txt", "a\n");
    let real = cache.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = cache.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let Err(error) = Engine::new(tool_config(root.path(), &link)) else {
        panic!("a linked index directory is refused")
    };
    assert!(
        matches!(&error, loupe_engine::OpenError::IndexDir(loupe_index::IndexError::Directory { dir, .. }) if *dir == link),
        "{error:?}"
    );
    assert!(error.to_string().contains("symbolic link"), "{error}");
    // Owned by another user (only a privileged test run can make one).
    let theirs = cache.path().join("theirs");
    fs::create_dir(&theirs).unwrap();
    if std::process::Command::new("chown").arg("12345").arg(&theirs).status().is_ok_and(|status| status.success()) {
        let Err(error) = Engine::new(tool_config(root.path(), &theirs)) else {
            panic!("another user's directory is refused")
        };
        assert!(matches!(error, loupe_engine::OpenError::IndexDir(_)), "{error:?}");
        assert!(error.to_string().contains("owned by another user"), "{error}");
    }
}

#[test]
fn h7b_a_directory_planted_at_the_journal_lock_does_not_disable_edits() {
    let (root, index) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(root.path(), "private.txt", "token-1\n");
    fs::create_dir_all(index.path().join("journal/lock/inside")).unwrap();
    let engine = Engine::new(tool_config(root.path(), index.path())).unwrap();
    edit_secret_file(&engine);
    assert!(fs::symlink_metadata(index.path().join("journal/lock")).unwrap().is_file());
    assert_eq!(fs::read_to_string(root.path().join("private.txt")).unwrap(), "token-2\n");
}
