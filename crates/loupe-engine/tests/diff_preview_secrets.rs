//! `read` mode `diff_preview` never shows an excluded file (§3.1; finding R2 in docs/findings.md):
//! a secret that was committed or staged is in the `HEAD` tree or the git index, and a directory
//! preview used to list it as "deleted" (its whole content as removed lines), since the worktree
//! walk skips it. On a real repository made with the `git` command.

use std::fs;

use loupe_core::Config;
use loupe_engine::Engine;
use serde_json::{Value, json};

use crate::common::{git, write};

/// Committed secrets (some then changed or deleted on disk), secrets only staged, and one
/// ordinary change so the preview has something to show.
const COMMITTED: &[&str] =
    &[".env", "certs/server.pem", "keys/id_rsa", "credentials.json", ".npmrc", "app/.env.production", "gone.key"];
const STAGED_ONLY: &[&str] = &["staged/.env", "staged/deploy.pem", "staged/credentials-prod.json"];

fn secret(path: &str) -> String {
    format!("SECRET-{path}-hunter2\n")
}

fn repo() -> (tempfile::TempDir, tempfile::TempDir, Engine) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    git(dir, &["init", "-q"]);
    write(dir, "src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    for path in COMMITTED {
        write(dir, path, &secret(path));
    }
    git(dir, &["add", "-f", "."]);
    git(dir, &["commit", "-q", "-m", "base, secrets included"]);
    write(dir, "src/lib.rs", "pub fn one() -> u32 {\n    11\n}\n");
    write(dir, ".env", &format!("{}CHANGED-hunter2\n", secret(".env")));
    fs::remove_file(dir.join("gone.key")).unwrap();
    for path in STAGED_ONLY {
        write(dir, path, &secret(path));
        git(dir, &["add", "-f", path]);
    }
    let index = tempfile::tempdir().unwrap();
    let engine = Engine::new(Config {
        root: Some(dir.to_path_buf()),
        index_dir: Some(index.path().to_path_buf()),
        ..Config::default()
    })
    .unwrap();
    (root, index, engine)
}

fn diff(target: &str, against: &str) -> Value {
    json!({"mode": "diff_preview", "target": target, "against": against, "max_tokens": 20000})
}

#[test]
fn r2_directory_diff_preview_does_not_list_tracked_secrets() {
    let (_root, _index, engine) = repo();
    for (target, against) in
        [(".", "HEAD"), (".", "INDEX"), ("certs", "HEAD"), ("keys", "INDEX"), ("staged", "INDEX"), ("app", "HEAD")]
    {
        let response = engine.call("read", diff(target, against));
        assert!(response.ok, "{target} vs {against}: {}", response.face);
        let everything = format!("{}\n{}", response.face, response.structured_at(loupe_engine::MetadataLevel::Full));
        assert!(!everything.contains("hunter2"), "{target} vs {against} shows a secret:\n{everything}");
        let files = response.meta["files"].as_array().unwrap();
        for listed in files {
            let path = listed["path"].as_str().unwrap();
            assert!(
                !COMMITTED.contains(&path) && !STAGED_ONLY.contains(&path),
                "{target} vs {against} lists {path}: {}",
                response.face
            );
        }
    }
    // What is not excluded still shows.
    let response = engine.call("read", diff(".", "HEAD"));
    assert!(response.face.contains("src/lib.rs") && response.face.contains("+    11"), "{}", response.face);
    let paths: Vec<&str> =
        response.meta["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["src/lib.rs"], "{}", response.face);
    // H8: the excluded files are not compared, and the answer says how many (HEAD holds the
    // seven committed secrets; the index also the three staged ones).
    assert!(response.face.contains("(7 tracked file(s) under the exclusions not compared)"), "{}", response.face);
    let staged = engine.call("read", diff(".", "INDEX"));
    assert!(staged.face.contains("(10 tracked file(s) under the exclusions not compared)"), "{}", staged.face);
}

#[test]
fn r2_single_file_diff_preview_of_an_excluded_path_is_path_excluded() {
    let (_root, _index, engine) = repo();
    // On disk and changed, deleted from disk but in HEAD, only in the git index.
    for (target, against) in [
        (".env", "HEAD"),
        (".env", "INDEX"),
        ("gone.key", "HEAD"),
        ("staged/deploy.pem", "INDEX"),
        ("certs/server.pem", "HEAD"),
    ] {
        let response = engine.call("read", diff(target, against));
        assert_eq!(response.error_code(), Some("PATH_EXCLUDED"), "{target} vs {against}: {}", response.face);
        assert!(!response.face.contains("hunter2"), "{}", response.face);
    }
    let proposed = json!({"mode": "diff_preview", "target": ".env", "against": "HEAD", "content": "x\n"});
    let response = engine.call("read", proposed);
    assert_eq!(response.error_code(), Some("PATH_EXCLUDED"), "{}", response.face);
}

/// `manage status` counts what `diff_preview` shows: a changed or deleted secret is not a
/// changed file there either.
#[test]
fn r2_manage_status_does_not_count_hidden_secrets() {
    let (_root, _index, engine) = repo();
    let status = engine.call("manage", json!({"command": "status"}));
    assert!(status.ok, "{}", status.face);
    let git_line = status.face.lines().find(|line| line.starts_with("git ")).unwrap();
    assert!(git_line.contains("· 1 changed"), "only src/lib.rs changed: {}", status.face);
}
