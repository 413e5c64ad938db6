//! Git metadata is input from the repository (hardening H1): a planted `.git` file, `.git`
//! link or `objects/info/alternates` naming another repository must not make `diff_preview` or
//! `manage status` read it, while the layouts git itself makes (a linked worktree, a
//! submodule) keep working. On real repositories made with the `git` command.

use std::fs;
use std::path::Path;

use loupe_core::ErrorCode;
use loupe_engine::Engine;
use serde_json::json;

use crate::common::{git, tool_config, write};

/// A repository elsewhere on the machine whose contents and branch must never show.
fn other_repository() -> tempfile::TempDir {
    let other = tempfile::tempdir().unwrap();
    git(other.path(), &["init", "-q", "-b", "private-branch"]);
    write(other.path(), "private.txt", "OTHER-REPOSITORY-CONTENT\n");
    git(other.path(), &["add", "."]);
    git(other.path(), &["commit", "-q", "-m", "private"]);
    other
}

fn engine_on(root: &Path) -> (tempfile::TempDir, Engine) {
    let index = tempfile::tempdir().unwrap();
    let engine = Engine::new(tool_config(root, index.path())).unwrap();
    (index, engine)
}

/// `diff_preview .` is refused as git-unavailable with the reason, and `manage status` says
/// git is unavailable; neither shows a byte, path or branch of the other repository.
fn assert_not_followed(root: &Path, reason: &str) {
    let (_index, engine) = engine_on(root);
    let response = engine.call("read", json!({"mode": "diff_preview", "target": "."}));
    let error = response.error.as_ref().unwrap_or_else(|| panic!("followed the link: {}", response.face));
    assert_eq!(error.code, ErrorCode::GitUnavailable, "{}", response.face);
    assert!(response.face.contains(reason), "{}", response.face);
    let status = engine.call("manage", json!({"command": "status"}));
    assert!(status.face.contains("git unavailable: "), "{}", status.face);
    for response in [&response, &status] {
        for leak in ["OTHER-REPOSITORY-CONTENT", "private.txt", "private-branch"] {
            assert!(!response.face.contains(leak), "{leak} in {}", response.face);
        }
    }
}

#[test]
fn h1_a_planted_git_file_naming_another_repository_is_not_followed() {
    let other = other_repository();
    for gitdir in [other.path().join(".git").display().to_string(), "../../../../../../../../..".to_owned()] {
        let root = tempfile::tempdir().unwrap();
        write(root.path(), "src/lib.rs", "fn main() {}\n");
        // The relative form climbs to `/` and back down to the other repository.
        let gitdir =
            if gitdir.starts_with('.') { format!("{gitdir}{}", other.path().join(".git").display()) } else { gitdir };
        write(root.path(), ".git", &format!("gitdir: {gitdir}\n"));
        assert_not_followed(root.path(), "`.git` is a file naming");
    }
}

#[test]
fn h1_a_git_symlink_to_another_repository_is_not_followed() {
    let other = other_repository();
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "src/lib.rs", "fn main() {}\n");
    loupe_vfs::testing::symlink(other.path().join(".git"), root.path().join(".git")).unwrap();
    assert_not_followed(root.path(), "symbolic link that leaves the work tree");
}

#[test]
fn h1_alternates_naming_another_object_store_are_not_followed() {
    let other = other_repository();
    let root = tempfile::tempdir().unwrap();
    git(root.path(), &["init", "-q"]);
    write(root.path(), "src/lib.rs", "fn main() {}\n");
    git(root.path(), &["add", "."]);
    git(root.path(), &["commit", "-q", "-m", "base"]);
    let alternates = root.path().join(".git/objects/info/alternates");
    fs::write(&alternates, format!("{}\n", other.path().join(".git/objects").display())).unwrap();
    assert_not_followed(root.path(), "`objects/info/alternates` names an object store outside");
    // A link inside the git directory that leaves it is the same way out.
    fs::remove_file(&alternates).unwrap();
    let packs = root.path().join(".git/objects/pack");
    fs::remove_dir_all(&packs).unwrap();
    loupe_vfs::testing::symlink(other.path().join(".git/objects/pack"), &packs).unwrap();
    assert_not_followed(root.path(), "is a link that leaves the repository");
}

/// What `git worktree add` and `git submodule add` make is followed: the link points back.
#[test]
fn h1_a_linked_worktree_and_a_submodule_are_still_read() {
    let main = tempfile::tempdir().unwrap();
    git(main.path(), &["init", "-q"]);
    write(main.path(), "tracked.txt", "one\n");
    git(main.path(), &["add", "."]);
    git(main.path(), &["commit", "-q", "-m", "base"]);
    let holder = tempfile::tempdir().unwrap();
    let worktree = holder.path().join("wt");
    git(main.path(), &["worktree", "add", "-q", "-b", "feature", worktree.to_str().unwrap()]);
    write(&worktree, "tracked.txt", "one\ntwo in the worktree\n");

    let sub = other_repository();
    git(
        main.path(),
        &["-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.path().to_str().unwrap(), "sub"],
    );
    let submodule = main.path().join("sub");
    write(&submodule, "private.txt", "OTHER-REPOSITORY-CONTENT\nchanged in the submodule\n");

    for (root, expected) in
        [(worktree.as_path(), "+two in the worktree"), (submodule.as_path(), "+changed in the submodule")]
    {
        let (_index, engine) = engine_on(root);
        let response = engine.call("read", json!({"mode": "diff_preview", "target": "."}));
        assert!(response.ok, "{}", response.face);
        assert!(response.face.contains(expected), "{}", response.face);
        let status = engine.call("manage", json!({"command": "status"}));
        assert!(status.face.contains("1 changed"), "{}", status.face);
    }
    // A worktree whose `gitdir` does not point back at it is a planted link like any other.
    let copy = tempfile::tempdir().unwrap();
    fs::copy(worktree.join(".git"), copy.path().join(".git")).unwrap();
    assert_not_followed(copy.path(), "`.git` is a file naming");
}

/// H5b: blobs of `HEAD` and the index were read whole, so a committed 1.5 GB dataset deleted
/// or changed in the worktree took `diff_preview .` past a 3 GiB memory cap. A blob's size is
/// read from its header first; one over `max_file_bytes` is named with its size, never read,
/// and a file over the limit on disk is compared by git's index stat, never read whole.
#[test]
fn h5b_a_blob_over_the_read_limit_is_named_not_read() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    git(dir, &["init", "-q"]);
    let big = "0123456789\n".repeat(1_000);
    for name in ["deleted.dat", "changed.dat", "same.dat", "shrunk.dat"] {
        write(dir, name, &big);
    }
    write(dir, "small.txt", "one\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "datasets"]);
    fs::remove_file(dir.join("deleted.dat")).unwrap();
    write(dir, "changed.dat", &big.replace('5', "x"));
    write(dir, "shrunk.dat", "now small\n");
    write(dir, "small.txt", "two\n");
    let index = tempfile::tempdir().unwrap();
    let mut config = tool_config(dir, index.path());
    config.max_file_bytes = 4_000;
    let engine = Engine::new(config).unwrap();

    let response = engine.call("read", json!({"mode": "diff_preview", "target": "."}));
    assert!(response.ok, "{}", response.face);
    let face = &response.face;
    assert!(face.contains("(large file: 11.0 kB in HEAD, over max_file_bytes; not diffed)"), "{face}");
    assert!(face.contains("(large file: 11.0 kB on disk, over max_file_bytes; not diffed)"), "{face}");
    assert!(face.contains("+two"), "{face}");
    assert!(face.contains("deleted.dat") && face.contains("changed.dat") && face.contains("shrunk.dat"), "{face}");
    // Unchanged since the index saw it (size and mtime): not listed, and not read.
    assert!(!face.contains("same.dat"), "{face}");
    assert!(!face.contains("0123456789"), "no byte of a large blob is shown: {face}");

    let one = engine.call("read", json!({"mode": "diff_preview", "target": "shrunk.dat"}));
    assert!(one.ok, "{}", one.face);
    assert!(one.face.contains("(large file: 11.0 kB in HEAD, over max_file_bytes; not diffed)"), "{}", one.face);
}
