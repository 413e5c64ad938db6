//! `read` mode `diff_preview` at the engine boundary, on a real git repository made with the
//! `git` command (the engine itself reads it in-process): one snapshot per case.

use std::fs;
use std::path::Path;

use loupe_core::Config;
use loupe_engine::Engine;
use serde_json::{Value, json};

use crate::common::{git, write};

struct Repo {
    root: tempfile::TempDir,
    _index: tempfile::TempDir,
    engine: Engine,
}

fn engine_at(root: &Path, index: &Path) -> Engine {
    Engine::new(Config { root: Some(root.to_path_buf()), index_dir: Some(index.to_path_buf()), ..Config::default() })
        .unwrap()
}

/// HEAD has five files; the worktree modifies, stages, deletes, renames and adds.
fn repo() -> Repo {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    git(dir, &["init", "-q"]);
    write(dir, "src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n\npub fn two() -> u32 {\n    2\n}\n");
    write(dir, "src/staged.rs", "fn staged() {}\n");
    write(dir, "crlf.txt", "a\r\nb\r\nc\r\n");
    write(dir, "gone.txt", "this file is deleted\n");
    write(dir, "old_name.txt", "moved\ncontent\nstays\nthe same\n");
    let big: String = (1..=400).map(|n| format!("line {n}\n")).collect();
    write(dir, "big.txt", &big);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "base"]);

    write(dir, "src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n\npub fn two() -> u32 {\n    22\n}\n");
    write(dir, "src/staged.rs", "fn staged() { /* in the index */ }\n");
    git(dir, &["add", "src/staged.rs"]);
    write(dir, "src/staged.rs", "fn staged() { /* in the index, then the worktree */ }\n");
    write(dir, "crlf.txt", "a\r\nB\r\nc\r\n");
    fs::remove_file(dir.join("gone.txt")).unwrap();
    git(dir, &["mv", "old_name.txt", "new_name.txt"]);
    write(dir, "src/new.rs", "fn brand_new() {}\n");
    write(dir, "big.txt", &big.replace("line ", "LINE "));
    let index = tempfile::tempdir().unwrap();
    let engine = engine_at(dir, index.path());
    Repo { root, _index: index, engine }
}

fn render(engine: &Engine, root: &Path, arguments: Value) -> String {
    let response = engine.call("read", arguments);
    let mut structured = crate::common::envelope(&response);
    if let Some(meta) = structured.get_mut("meta").and_then(Value::as_object_mut) {
        meta.remove("branch");
    }
    // A face that names the temporary root costs a machine-dependent number of tokens.
    if response.face.contains(&root.canonicalize().unwrap().display().to_string()) {
        structured["meta"]["token_estimate"] = Value::from("<depends on the root path>");
    }
    let text = format!(
        "{}----- structuredContent -----\n{}\n",
        response.face,
        serde_json::to_string_pretty(&structured).unwrap()
    );
    let canonical = root.canonicalize().unwrap();
    text.replace(&canonical.display().to_string(), "<ROOT>").replace(&root.display().to_string(), "<ROOT>")
}

fn diff(target: &str, extra: Value) -> Value {
    let mut arguments = json!({"mode": "diff_preview", "target": target});
    for (key, value) in extra.as_object().unwrap() {
        arguments[key] = value.clone();
    }
    arguments
}

#[test]
fn diff_preview_cases() {
    let repo = repo();
    let cases = [
        ("file_vs_head", diff("src/lib.rs", json!({}))),
        ("file_vs_index", diff("src/staged.rs", json!({"against": "INDEX"}))),
        ("file_staged_vs_head", diff("src/staged.rs", json!({"against": "HEAD"}))),
        ("crlf_file", diff("crlf.txt", json!({"context_lines": 0}))),
        ("new_untracked_file", diff("src/new.rs", json!({}))),
        ("deleted_file", diff("gone.txt", json!({}))),
        (
            "content_vs_worktree",
            diff("src/lib.rs", json!({"against": "WORKTREE", "content": "pub fn one() -> u32 {\n    1\n}\n"})),
        ),
        ("content_vs_head", diff("src/new.rs", json!({"content": "fn proposed() {}\n"}))),
        ("content_vs_index", diff("src/staged.rs", json!({"against": "INDEX", "content": "fn staged() {}\n"}))),
        ("directory_root", diff(".", json!({"max_tokens": 700}))),
        ("directory_sub", diff("src", json!({}))),
        ("directory_vs_index", diff("src", json!({"against": "INDEX"}))),
        ("big_diff_cut", diff("big.txt", json!({"max_tokens": 300}))),
        ("error_commit_baseline", diff("src/lib.rs", json!({"against": "commit:abc123"}))),
        ("error_worktree_without_content", diff("src/lib.rs", json!({"against": "WORKTREE"}))),
        ("error_missing_everywhere", diff("nowhere.rs", json!({}))),
        ("error_outside_root", diff("../x.rs", json!({}))),
    ];
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/diff_preview");
    settings.bind(|| {
        for (name, arguments) in cases {
            insta::assert_snapshot!(name, render(&repo.engine, repo.root.path(), arguments));
        }
    });
}

#[test]
fn outside_a_repository_is_git_unavailable() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "a.txt", "a\n");
    let index = tempfile::tempdir().unwrap();
    let engine = engine_at(root.path(), index.path());
    let response = engine.call("read", diff("a.txt", json!({})));
    assert_eq!(response.error_code(), Some("GIT_UNAVAILABLE"), "{}", response.face);
    // The refusal offers what works without git, ready to run: the file itself, or a
    // directory's outline (issued to the session, so the gate lets it through).
    let next = &response.error.as_ref().unwrap().next_calls;
    assert_eq!(next[0].render(), r#"read {"mode":"file","target":"a.txt"}"#);
    let replayed = engine.call(&next[0].tool, serde_json::Value::Object(next[0].arguments.clone()));
    assert!(replayed.ok && replayed.face.contains("1 a"), "{}", replayed.face);
    let response = engine.call("read", diff(".", json!({})));
    assert_eq!(response.error.as_ref().unwrap().next_calls[0].render(), r#"read {"mode":"outline","target":"."}"#);
}

#[test]
fn a_preview_of_an_edit_matches_the_edit_itself() {
    let repo = repo();
    let proposed = "pub fn one() -> u32 {\n    1\n}\n\npub fn two() -> u32 {\n    222\n}\n";
    let preview = repo.engine.call("read", diff("src/lib.rs", json!({"against": "WORKTREE", "content": proposed})));
    let edit = repo.engine.call(
        "edit",
        json!({"dry_run": true, "edits": [{"path": "src/lib.rs", "operation": "create", "overwrite": true, "content": proposed}]}),
    );
    let preview_diff = preview.content.unwrap();
    let edit_diff = edit.meta["files"][0]["diff"].as_str().unwrap().to_owned();
    // Same hunks; only the labels differ.
    let body = |text: &str| text.lines().skip(2).map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(body(&preview_diff), body(&edit_diff));
}

/// Following `next_calls` of a cut diff returns every line of the diff exactly once.
#[test]
fn a_cut_diff_continues_to_its_end() {
    let repo = repo();
    let whole = repo.engine.call("read", diff("big.txt", json!({}))).content.unwrap();
    let mut arguments = diff("big.txt", json!({"max_tokens": 400}));
    let mut collected = String::new();
    for _ in 0..100 {
        let response = repo.engine.call("read", arguments.clone());
        assert!(response.ok, "{}", response.face);
        let body: String = response
            .face
            .split_inclusive('\n')
            .skip(1)
            .filter(|line| !line.starts_with("(diff lines") && !line.starts_with("──") && !line.starts_with("→"))
            .collect();
        collected.push_str(&body);
        let next = response.meta["next_calls"].as_array().cloned().unwrap_or_default();
        let Some(call) = next.first() else { break };
        arguments = call["arguments"].clone();
    }
    assert_eq!(collected, whole);
}

/// `manage status` names the branch and counts what `git status` would: changed tracked files
/// (staged, modified, deleted; a rename is a deletion and an addition) and untracked ones,
/// leaving ignored files and unchanged ones out.
#[test]
fn status_reports_the_branch_and_the_dirty_count() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    git(dir, &["init", "-q"]);
    write(dir, "kept.txt", "unchanged\n");
    write(dir, "edited.txt", "before\n");
    write(dir, "staged.txt", "before\n");
    write(dir, "removed.txt", "bye\n");
    write(dir, ".gitignore", "*.log\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "base"]);
    write(dir, "edited.txt", "after\n");
    write(dir, "staged.txt", "after\n");
    git(dir, &["add", "staged.txt"]);
    fs::remove_file(dir.join("removed.txt")).unwrap();
    write(dir, "fresh.txt", "new\n");
    write(dir, "noise.log", "ignored\n");
    let index = tempfile::tempdir().unwrap();
    let engine = engine_at(dir, index.path());
    let status = engine.call("manage", json!({"command": "status"}));
    assert!(status.face.contains("git main · 3 changed · 1 untracked"), "{}", status.face);
    assert_eq!(
        status.meta["status"]["git"],
        json!({"branch": "main", "changed": 3, "untracked": 1}),
        "{}",
        status.face
    );
    engine.refresh_index(&|_, _| {});
    let status = engine.call("manage", json!({"command": "status"}));
    assert_eq!(
        status.meta["status"]["git"],
        json!({"branch": "main", "changed": 3, "untracked": 1}),
        "{}",
        status.face
    );
}

/// main: base (tagged v1) ─ main moves on (adds `main_only.rs`); feature forks at base and
/// changes `src/lib.rs`; the worktree of feature adds `wip.rs`, uncommitted.
fn branches() -> Repo {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    git(dir, &["init", "-q"]);
    write(dir, "src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    write(dir, "shared.txt", "shared\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "base"]);
    git(dir, &["tag", "-a", "v1", "-m", "v1"]);
    git(dir, &["checkout", "-q", "-b", "feature"]);
    write(dir, "src/lib.rs", "pub fn one() -> u32 {\n    11\n}\n");
    git(dir, &["commit", "-q", "-am", "feature"]);
    git(dir, &["checkout", "-q", "main"]);
    write(dir, "main_only.rs", "fn later_on_main() {}\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "main moves on"]);
    git(dir, &["checkout", "-q", "feature"]);
    write(dir, "wip.rs", "fn not_committed() {}\n");
    let index = tempfile::tempdir().unwrap();
    let engine = engine_at(dir, index.path());
    Repo { root, _index: index, engine }
}

/// §5: `against` takes a revision. Against `main` (its tip) the branch seems to delete what
/// main did since; against `main...` (the merge base) only the branch's own changes show, with
/// the merge base and both tips named; `main...feature` leaves the worktree out; a tag and
/// `HEAD~1` work on a file; a name that does not resolve names the nearest ones, whose calls
/// work; proposed content against a range of two commits is refused.
#[test]
fn a_revision_is_a_baseline_and_three_dots_start_at_the_fork() {
    let repo = branches();
    let call = |target: &str, extra: Value| repo.engine.call("read", diff(target, extra));

    let tip = call(".", json!({"against": "main"}));
    assert!(tip.ok, "{}", tip.face);
    assert!(tip.face.contains("WORKTREE vs main ("), "{}", tip.face);
    assert!(tip.face.contains("D  main_only.rs"), "two dots see main's later work as deleted: {}", tip.face);

    let fork = call(".", json!({"against": "main..."}));
    assert!(fork.ok, "{}", fork.face);
    let header = fork.face.lines().next().unwrap();
    assert!(
        header.contains("WORKTREE vs merge base ") && header.contains(" of main (") && header.contains(" and HEAD ("),
        "{header}"
    );
    assert!(!fork.face.contains("main_only.rs"), "three dots never show main's own later change: {}", fork.face);
    assert!(fork.face.contains("src/lib.rs") && fork.face.contains("+    11"), "{}", fork.face);
    assert!(fork.face.contains("wip.rs"), "the worktree's new file: {}", fork.face);

    let committed = call(".", json!({"against": "main...feature"}));
    assert!(committed.ok, "{}", committed.face);
    assert!(committed.face.contains("feature (") && committed.face.contains("vs merge base"), "{}", committed.face);
    assert!(!committed.face.contains("wip.rs") && !committed.face.contains("main_only.rs"), "{}", committed.face);
    assert!(committed.face.contains("+    11"), "{}", committed.face);

    for against in ["v1", "HEAD~1", "main..."] {
        let file = call("src/lib.rs", json!({"against": against}));
        assert!(
            file.ok && file.face.contains("-    1\n") && file.face.contains("+    11\n"),
            "{against}: {}",
            file.face
        );
    }
    let two = call("src/lib.rs", json!({"against": "v1..feature"}));
    assert!(two.ok && two.face.contains("feature (") && two.face.contains("+    11\n"), "{}", two.face);
    let proposed = call("src/lib.rs", json!({"against": "v1..feature", "content": "x\n"}));
    assert_eq!(proposed.error_code(), Some("INVALID_ARGS"), "{}", proposed.face);

    let typo = call(".", json!({"against": "mian..."}));
    assert_eq!(typo.error_code(), Some("INVALID_ARGS"), "{}", typo.face);
    assert!(typo.face.contains("nearest names: main"), "{}", typo.face);
    let retry = typo.meta["next_calls"][0]["arguments"].clone();
    assert_eq!(retry["against"], "main...", "{retry}");
    assert_eq!(repo.engine.call("read", retry).face, fork.face);
}

/// §5 `revision`: a file, a snippet, a symbol and an outline read as a commit holds them, the
/// header naming it; a file only the commit has is read too; a name that does not resolve
/// names the nearest, whose call works; a range or a directory outline is refused.
#[test]
fn a_read_at_a_revision_is_the_commits_file() {
    let repo = branches();
    let read = |arguments: Value| repo.engine.call("read", arguments);

    let now = read(json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 1, "end_line": 3}));
    assert!(now.face.contains("2     11\n"), "{}", now.face);
    let then =
        read(json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 1, "end_line": 3, "revision": "v1"}));
    assert!(then.ok, "{}", then.face);
    assert!(then.face.starts_with("src/lib.rs · at v1 ("), "{}", then.face);
    assert!(then.face.contains("2     1\n") && !then.face.contains("11"), "{}", then.face);

    // main's `src/lib.rs` is v1's blob: the session already has its lines (§9.6), unless fresh.
    let same = read(json!({"mode": "symbol", "target": "one", "revision": "main"}));
    assert!(same.face.contains("── lines 1–3 unchanged since read #2"), "{}", same.face);
    let symbol = read(json!({"mode": "symbol", "target": "one", "revision": "main", "fresh": true}));
    assert!(symbol.ok && symbol.face.contains("at main (") && symbol.face.contains("2     1\n"), "{}", symbol.face);
    let outline = read(json!({"mode": "outline", "target": "src/lib.rs", "revision": "HEAD~1"}));
    assert!(
        outline.ok && outline.face.contains("· at HEAD~1 (") && outline.face.contains("fn one"),
        "{}",
        outline.face
    );

    // On main only: not on disk here, read at main.
    let elsewhere =
        read(json!({"mode": "snippet", "target": "main_only.rs", "start_line": 1, "end_line": 1, "revision": "main"}));
    assert!(elsewhere.ok && elsewhere.face.contains("later_on_main"), "{}", elsewhere.face);
    let missing =
        read(json!({"mode": "snippet", "target": "main_only.rs", "start_line": 1, "end_line": 1, "revision": "v1"}));
    assert_eq!(missing.error_code(), Some("FILE_NOT_FOUND"), "{}", missing.face);

    let typo =
        read(json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 1, "end_line": 3, "revision": "mian"}));
    assert_eq!(typo.error_code(), Some("INVALID_ARGS"), "{}", typo.face);
    let retry = typo.meta["next_calls"][0]["arguments"].clone();
    assert_eq!(retry["revision"], "main", "{retry}");
    assert!(read(retry).ok);
    for refused in [
        json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 1, "end_line": 3, "revision": "v1..main"}),
        json!({"mode": "outline", "target": "src", "revision": "v1"}),
        json!({"mode": "diff_preview", "target": "src", "revision": "v1"}),
    ] {
        assert_eq!(read(refused.clone()).error_code(), Some("INVALID_ARGS"), "{refused}");
    }
}

/// A Python package at its fork point, a feature branch that changes it in every way a review
/// names (and rewrites a data file, so the diffs are too long to inline), and a `main` that
/// moves on after the fork. HEAD is the feature branch, worktree clean.
fn review_repo() -> Repo {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let core = "def helper(a):\n    return a + 1\n\n\nclass Service:\n    def run(self):\n        return helper(1)\n\n    def stop(self):\n        return 0\n\n\ndef old_api():\n    return 'old'\n\n\ndef to_move(items):\n    total = sum(item.size for item in items)\n    return total\n\n\ndef _private():\n    return 1\n";
    write(dir, "pkg/__init__.py", "");
    write(dir, "pkg/core.py", core);
    write(dir, "pkg/other.py", "def other():\n    return 2\n");
    write(
        dir,
        "pkg/use.py",
        "from pkg.core import helper, old_api\n\n\ndef both():\n    return helper(2) + len(old_api())\n",
    );
    let table: String = (1..=120).map(|n| format!("row {n}\n")).collect();
    write(dir, "data/table.txt", &table);
    write(
        dir,
        "tests/test_core.py",
        "from pkg.core import Service, helper\n\n\ndef test_run():\n    assert Service().run() == helper(1)\n",
    );
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "fork point"]);
    git(dir, &["checkout", "-q", "-b", "feature"]);
    let feature = core
        .replace("def helper(a):\n    return a + 1", "def helper(a, b=0):\n    return a + b + 1")
        .replace("        return helper(1)", "        return helper(1, 2)")
        .replace("def old_api():\n    return 'old'\n\n\n", "")
        .replace("def to_move(items):\n    total = sum(item.size for item in items)\n    return total\n\n\n", "")
        .replace("    return 1\n", "    return 10\n\n\ndef added_fn():\n    return 3\n");
    write(dir, "pkg/core.py", &feature);
    write(dir, "data/table.txt", &table.replace("row", "ROW"));
    write(
        dir,
        "pkg/other.py",
        "def other():\n    return 2\n\n\ndef to_move(items):\n    total = sum(item.size for item in items)\n    return total\n",
    );
    git(dir, &["commit", "-q", "-am", "feature"]);
    git(dir, &["checkout", "-q", "main"]);
    write(
        dir,
        "pkg/core.py",
        &core
            .replace("        return 0", "        return -1")
            .replace("def _private", "def main_only():\n    return 5\n\n\ndef _private"),
    );
    git(dir, &["commit", "-q", "-am", "main moves on"]);
    git(dir, &["checkout", "-q", "feature"]);
    let index = tempfile::tempdir().unwrap();
    let engine = crate::common::indexed_engine(dir, index.path());
    Repo { root, _index: index, engine }
}

/// §5, the review: a directory diff names each file's changed symbols from both sides' syntax
/// (signature, body, removed, added, moved across files), the uses left in the tree of those a
/// caller can break on, riskiest first, and the test files that name them; main's own later
/// changes never show (three dots). Each symbol's diff is one call away: its own lines only,
/// numbered as in its file, found by `path` + name or by name alone.
#[test]
fn a_review_names_changed_symbols_with_their_uses_riskiest_first() {
    let repo = review_repo();
    let call = |extra: Value| repo.engine.call("read", extra);
    for against in ["main...", "main...feature"] {
        let review = call(json!({"mode": "diff_preview", "target": ".", "against": against, "metadata": "full"}));
        assert!(review.ok, "{}", review.face);
        let face = &review.face;
        assert!(!face.contains("stop") && !face.contains("main_only"), "{against}: main's later work shows: {face}");
        assert!(!face.contains("@@"), "{against}: hunks are not inlined in a review this size: {face}");
        let lines: Vec<&str> = face.lines().collect();
        let at = |needle: &str| {
            lines
                .iter()
                .position(|line| line.contains(needle))
                .unwrap_or_else(|| panic!("{against}: no `{needle}` in {face}"))
        };
        // The riskiest file first, its breaking changes with their uses before its bodies.
        assert!(at("M  pkg/core.py") < at("M  pkg/other.py"), "{face}");
        let helper = lines[at("signature helper")];
        assert!(helper.contains("pkg/use.py:1,5") && helper.contains("tests/test_core.py:1,5"), "{helper}");
        let old_api = lines[at("removed old_api")];
        assert!(old_api.contains(" · 2 use(s): pkg/use.py:1,5"), "{old_api}");
        assert!(at("removed old_api") < at("body: Service.run"), "{face}");
        assert!(lines[at("body: Service.run")].contains("_private"), "{face}");
        assert!(lines[at("added: added_fn")].starts_with("   "), "{face}");
        assert!(lines[at("moved from pkg/core.py: to_move")].starts_with("   "), "a move across files: {face}");
        assert!(lines[at("tests naming changed symbols:")].contains("tests/test_core.py (2)"), "{face}");
        // `meta.files` (full) carries the same, with each use's confidence.
        let core = review.meta["files"].as_array().unwrap().iter().find(|file| file["path"] == "pkg/core.py").unwrap();
        let symbols = core["symbols"].as_array().unwrap();
        assert_eq!(symbols[0]["change"], "signature", "{core}");
        assert_eq!(symbols[0]["name"], "helper", "{core}");
        assert!(
            symbols[0]["uses"].as_array().unwrap().iter().any(|site| site[0] == "pkg/use.py" && site[2] == "exact"),
            "{core}"
        );
        // The riskiest symbol's diff is the first next call, and it works.
        let first = review.meta["next_calls"][0]["arguments"].clone();
        assert_eq!(
            first,
            json!({"mode": "diff_preview", "against": against, "path": "pkg/core.py", "target": "helper"})
        );
        let diff = call(first);
        assert!(diff.ok, "{}", diff.face);
        assert!(
            diff.face.starts_with("diff_preview · pkg/core.py · helper · ")
                && diff.face.contains(" · signature changed · +2 -2"),
            "{}",
            diff.face
        );
        assert!(diff.face.contains("@@ -1,2 +1,2 @@") && !diff.face.contains("class Service"), "{}", diff.face);
    }
    // A symbol further down the file: its hunk is numbered in the file's lines; by name alone.
    let run = call(json!({"mode": "diff_preview", "target": "Service.run", "against": "main..."}));
    assert!(run.ok, "{}", run.face);
    assert!(run.face.contains("· body changed ·") && run.face.contains("@@ -6,2 +6,2 @@"), "{}", run.face);
    // A class's own lines: its changed method is its own diff.
    let class = call(json!({"mode": "diff_preview", "path": "pkg/core.py", "target": "Service", "against": "main..."}));
    assert!(class.face.contains(" · only its members changed · +0 -0"), "{}", class.face);
    assert!(
        !class.face.contains("helper(1, 2)") && class.face.contains("1 hunk(s) inside its members not shown"),
        "{}",
        class.face
    );
    let removed =
        call(json!({"mode": "diff_preview", "path": "pkg/core.py", "target": "old_api", "against": "main..."}));
    assert!(removed.face.contains("· removed · +0 -2") && removed.face.contains("-def old_api():"), "{}", removed.face);
    let missing =
        call(json!({"mode": "diff_preview", "path": "pkg/core.py", "target": "nothing_here", "against": "main..."}));
    assert_eq!(missing.error_code(), Some("SYMBOL_NOT_FOUND"), "{}", missing.face);
    assert_eq!(
        missing.meta["next_calls"][0]["arguments"],
        json!({"mode": "diff_preview", "target": "pkg/core.py", "against": "main..."})
    );
    // A file's own diff names its changed symbols above the hunks.
    let file = call(json!({"mode": "diff_preview", "target": "pkg/core.py", "against": "main..."}));
    assert!(file.face.lines().nth(1).unwrap().starts_with("   signature: helper"), "{}", file.face);
}

/// §8.1: `analyze impact` of a revision range starts from the symbols the range changed, the
/// riskiest first, each with its users now, then their importers; main's own later changes are
/// not in it; a range is a target of impact only.
#[test]
fn the_impact_of_a_range_starts_from_what_it_changed() {
    let repo = review_repo();
    let impact = repo
        .engine
        .call("analyze", json!({"mode": "impact", "target": "main...", "target_type": "range", "metadata": "full"}));
    assert!(impact.ok, "{}", impact.face);
    let face = &impact.face;
    let lines: Vec<&str> = face.lines().collect();
    assert!(
        lines[1].starts_with("range main... (WORKTREE vs merge base ") && lines[1].ends_with("3 file(s) changed"),
        "{face}"
    );
    let at = |needle: &str| {
        lines.iter().position(|line| line.contains(needle)).unwrap_or_else(|| panic!("no `{needle}` in {face}"))
    };
    assert!(at("function helper  pkg/core.py:1") < at("function old_api  pkg/core.py:13"), "{face}");
    assert!(lines[at("function helper  pkg/core.py:1") + 1].contains("pkg/"), "helper's users follow it: {face}");
    assert!(face.contains("both  pkg/use.py:5"), "{face}");
    assert!(!face.contains("stop") && !face.contains("main_only") && !face.contains("added_fn"), "{face}");
    assert_eq!(impact.meta["resolved_target"]["type"], "range", "{:?}", impact.meta);
    // Auto takes text with `..` that is no path as a range; other modes refuse one.
    let auto = repo.engine.call("analyze", json!({"mode": "impact", "target": "main...", "metadata": "full"}));
    assert_eq!(auto.face, impact.face);
    let calls = repo.engine.call("analyze", json!({"mode": "calls", "target": "main...", "target_type": "range"}));
    assert_eq!(calls.error_code(), Some("INVALID_ARGS"), "{}", calls.face);
    let typo = repo.engine.call("analyze", json!({"mode": "impact", "target": "mian...", "target_type": "range"}));
    assert_eq!(typo.error_code(), Some("INVALID_ARGS"), "{}", typo.face);
    assert_eq!(typo.meta["next_calls"][0]["arguments"]["target"], "main...", "{}", typo.face);
}

/// §5: a file whose executable bit changed says so on its list line, alone or with its
/// content, between two commits and (on Unix) against the working tree.
#[test]
fn a_mode_change_is_named() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    git(dir, &["init", "-q", "-b", "main"]);
    write(dir, "run.sh", "echo one\n");
    write(dir, "tool.sh", "echo tool\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "base"]);
    git(dir, &["update-index", "--chmod=+x", "run.sh"]);
    git(dir, &["commit", "-q", "-m", "run.sh executable"]);
    let index = tempfile::tempdir().unwrap();
    let engine = engine_at(dir, index.path());
    let range = engine.call("read", diff(".", json!({"against": "HEAD~1..HEAD", "metadata": "full"})));
    assert!(range.face.contains("run.sh  +0 -0 mode 100644 → 100755"), "{}", range.face);
    assert!(!range.face.contains("tool.sh"), "{}", range.face);
    assert_eq!(range.meta["files"][0]["mode"], "mode 100644 → 100755");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // `--chmod` changed the commit only: on disk run.sh is still 0644, as git status says.
        let before = engine.call("read", diff(".", json!({})));
        assert!(before.face.contains("run.sh  +0 -0 mode 100755 → 100644"), "{}", before.face);
        fs::set_permissions(dir.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        write(dir, "tool.sh", "echo tool, changed\n");
        fs::set_permissions(dir.join("tool.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        let worktree = engine.call("read", diff(".", json!({})));
        assert!(worktree.face.contains("tool.sh  +1 -1 mode 100644 → 100755"), "{}", worktree.face);
        assert!(!worktree.face.contains("run.sh"), "an executable file still executable: {}", worktree.face);
    }
}

/// §5: a directory the working tree no longer has (a package deleted) is still a directory of
/// the baseline: its review lists the files and symbols it removed.
#[test]
fn a_deleted_directory_is_reviewed_as_one() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    git(dir, &["init", "-q", "-b", "main"]);
    write(dir, "pkg/a.py", "def alpha():\n    return 1\n");
    write(dir, "pkg/b.py", "def beta():\n    return 2\n");
    write(dir, "keep.py", "def keep():\n    return 0\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "base"]);
    fs::remove_dir_all(dir.join("pkg")).unwrap();
    let index = tempfile::tempdir().unwrap();
    let engine = engine_at(dir, index.path());
    let review = engine.call("read", diff("pkg", json!({})));
    assert!(review.ok, "{}", review.face);
    assert!(review.face.starts_with("diff_preview · pkg · WORKTREE vs HEAD · 2 file(s) changed"), "{}", review.face);
    assert!(review.face.contains("D  pkg/a.py") && review.face.contains("removed: alpha"), "{}", review.face);
    assert!(!review.face.contains("keep.py"), "{}", review.face);
    let missing = engine.call("read", diff("nothing/here", json!({})));
    assert_eq!(missing.error_code(), Some("FILE_NOT_FOUND"), "{}", missing.face);
}
