//! `edit` and `manage` at the engine boundary as data: each case is a fixture, the arguments
//! of one call, and a snapshot of both faces plus the bytes of every file afterwards.

use std::fs;
use std::path::Path;

use loupe_core::{Config, ContentHash};
use loupe_engine::Engine;
use serde_json::{Value, json};

struct Workspace {
    root: tempfile::TempDir,
    state: tempfile::TempDir,
    engine: Engine,
}

const LIB_RS: &str =
    "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n";

const FILES: &[(&str, &[u8])] = &[
    ("src/lib.rs", LIB_RS.as_bytes()),
    ("crlf.txt", b"first\r\nsecond\r\nthird\r\n"),
    ("cr.txt", b"one\rtwo\rthree"),
    ("nofinal.txt", b"alpha\nbeta"),
    ("latin1.txt", b"caf\xe9 cr\xe8me\n"),
    ("utf16.txt", b"\xff\xfeh\x00i\x00\n\x00"),
    ("image.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
    ("dup.txt", b"x = 1\ny = 2\nx = 1\n"),
    ("py/app.py", b"def main():\n    if True:\n        print('hi')\n    return 0\n"),
];

fn workspace_with(configure: impl FnOnce(&mut Config)) -> Workspace {
    let root = tempfile::tempdir().unwrap();
    for (path, bytes) in FILES {
        let full = root.path().join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, bytes).unwrap();
    }
    let state = tempfile::tempdir().unwrap();
    let engine = engine_at(root.path(), state.path(), configure);
    Workspace { root, state, engine }
}

fn engine_at(root: &Path, state: &Path, configure: impl FnOnce(&mut Config)) -> Engine {
    let mut config =
        Config { root: Some(root.to_path_buf()), index_dir: Some(state.to_path_buf()), ..Config::default() };
    configure(&mut config);
    Engine::new(config).unwrap()
}

fn workspace() -> Workspace {
    workspace_with(|_| {})
}

impl Workspace {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        fs::read(self.root.path().join(path)).ok()
    }

    fn hash(&self, path: &str) -> String {
        ContentHash::of(&self.read(path).unwrap()).to_string()
    }

    /// Both faces of one call and every file that differs from the fixture afterwards.
    fn render(&self, tool: &str, arguments: Value) -> String {
        let response = self.engine.call(tool, arguments);
        let mut structured = crate::common::envelope(&response);
        // A face that names the temporary root costs a machine-dependent number of tokens.
        if response.face.contains(&self.root.path().canonicalize().unwrap().display().to_string()) {
            structured["meta"]["token_estimate"] = Value::from("<depends on the root path>");
        }
        let structured = serde_json::to_string_pretty(&structured).unwrap();
        let mut text =
            format!("{}----- structuredContent -----\n{structured}\n----- files after -----\n", response.face);
        let mut paths: Vec<String> = FILES.iter().map(|(path, _)| (*path).to_owned()).collect();
        for extra in ["new.txt", "deep/dir/new.rs"] {
            paths.push(extra.to_owned());
        }
        for path in paths {
            let before = FILES.iter().find(|(name, _)| *name == path).map(|(_, bytes)| bytes.to_vec());
            let after = self.read(&path);
            if before != after {
                let shown =
                    after.map_or("(absent)".to_owned(), |bytes| format!("{:?}", String::from_utf8_lossy(&bytes)));
                text.push_str(&format!("{path}: {shown}\n"));
            }
        }
        let canonical = self.root.path().canonicalize().unwrap();
        text.replace(&canonical.display().to_string(), "<ROOT>")
            .replace(&self.root.path().display().to_string(), "<ROOT>")
    }
}

fn edit(edits: Value) -> Value {
    json!({ "edits": edits })
}

fn cases() -> Vec<(&'static str, Value)> {
    vec![
        (
            "replace_unique",
            edit(
                json!([{"path": "src/lib.rs", "operation": "replace", "old_string": "a + b", "new_string": "a.wrapping_add(b)"}]),
            ),
        ),
        (
            "replace_ambiguous",
            edit(json!([{"path": "dup.txt", "operation": "replace", "old_string": "x = 1", "new_string": "x = 9"}])),
        ),
        (
            "replace_all",
            edit(
                json!([{"path": "dup.txt", "operation": "replace", "old_string": "x = 1", "new_string": "x = 9", "replace_all": true}]),
            ),
        ),
        (
            "replace_expected_count_wrong",
            edit(json!([{"path": "dup.txt", "old_string": "x = 1", "new_string": "x = 9", "expected_count": 3}])),
        ),
        (
            "replace_no_match_closest",
            edit(json!([{"path": "src/lib.rs", "old_string": "pub fn ad(a: i32, b: i64)", "new_string": "x"}])),
        ),
        (
            // §3.2: a read's `N ` prefixes copied into old_string are named, not guessed at.
            "replace_with_line_numbers_named",
            edit(
                json!([{"path": "py/app.py", "old_string": "2     if True:\n3         print('hi')", "new_string": "x"}]),
            ),
        ),
        (
            // §3.2: the prefix's space taken for indentation is named too.
            "replace_with_the_prefix_space_named",
            edit(
                json!([{"path": "py/app.py", "old_string": "     if True:\n         print('hi')", "new_string": "x"}]),
            ),
        ),
        (
            "replace_fuzzy_indentation",
            json!({"fuzzy": true, "edits": [{"path": "py/app.py", "old_string": "if True:\n    print('hi')", "new_string": "if False:\n    print('bye')"}]}),
        ),
        (
            "replace_fuzzy_not_unique",
            json!({"fuzzy": true, "edits": [{"path": "dup.txt", "old_string": "x  =   1", "new_string": "x = 9"}]}),
        ),
        (
            "replace_fuzzy_not_used_without_flag",
            edit(json!([{"path": "py/app.py", "old_string": "if True:\n    print('hi')", "new_string": "x"}])),
        ),
        (
            "replace_crlf_keeps_crlf",
            edit(json!([{"path": "crlf.txt", "old_string": "first\nsecond", "new_string": "1st\n2nd\nextra"}])),
        ),
        ("replace_lone_cr_keeps_cr", edit(json!([{"path": "cr.txt", "old_string": "two", "new_string": "2\n2b"}]))),
        (
            "replace_lines",
            edit(
                json!([{"path": "src/lib.rs", "operation": "replace_lines", "start_line": 5, "end_line": 7, "new_string": "pub fn sub(a: i32, b: i32) -> i32 { a - b }"}]),
            ),
        ),
        (
            "replace_lines_delete",
            edit(
                json!([{"path": "src/lib.rs", "operation": "replace_lines", "start_line": 4, "end_line": 7, "new_string": ""}]),
            ),
        ),
        (
            "replace_lines_expected_text_ok",
            edit(
                json!([{"path": "nofinal.txt", "operation": "replace_lines", "start_line": 2, "end_line": 2, "new_string": "BETA", "expected_text": "beta"}]),
            ),
        ),
        (
            "replace_lines_expected_text_conflict",
            edit(
                json!([{"path": "src/lib.rs", "operation": "replace_lines", "start_line": 2, "end_line": 2, "new_string": "x", "expected_text": "    a - b"}]),
            ),
        ),
        (
            "replace_lines_past_end",
            edit(
                json!([{"path": "src/lib.rs", "operation": "replace_lines", "start_line": 7, "end_line": 9, "new_string": "x"}]),
            ),
        ),
        (
            "insert_top",
            edit(json!([{"path": "src/lib.rs", "operation": "insert", "line": 0, "new_string": "//! Arithmetic."}])),
        ),
        (
            "insert_after_last_without_final_newline",
            edit(json!([{"path": "nofinal.txt", "operation": "insert", "line": 2, "new_string": "gamma"}])),
        ),
        ("create_new_file", edit(json!([{"path": "new.txt", "operation": "create", "content": "hello\n"}]))),
        ("create_existing_conflict", edit(json!([{"path": "src/lib.rs", "operation": "create", "content": "x"}]))),
        (
            "create_missing_dir_refused",
            edit(json!([{"path": "deep/dir/new.rs", "operation": "create", "content": "fn x() {}\n"}])),
        ),
        (
            "create_missing_dirs",
            json!({"create_missing_dirs": true, "edits": [{"path": "deep/dir/new.rs", "operation": "create", "content": "fn x() {}\n"}]}),
        ),
        ("delete_file", edit(json!([{"path": "dup.txt", "operation": "delete"}]))),
        (
            "expected_hash_conflict",
            edit(
                json!([{"path": "src/lib.rs", "old_string": "a + b", "new_string": "b + a", "expected_hash": "0000000000000000"}]),
            ),
        ),
        (
            "dry_run_writes_nothing",
            json!({"dry_run": true, "edits": [{"path": "src/lib.rs", "old_string": "a - b", "new_string": "b - a"}, {"path": "new.txt", "operation": "create", "content": "x\n"}]}),
        ),
        ("syntax_warn", edit(json!([{"path": "src/lib.rs", "old_string": "a + b\n}", "new_string": "a + b\n"}]))),
        (
            "syntax_block",
            json!({"check_syntax": "block", "edits": [{"path": "src/lib.rs", "old_string": "a + b\n}", "new_string": "a + b\n"}]}),
        ),
        ("latin1_round_trip", edit(json!([{"path": "latin1.txt", "old_string": "crème", "new_string": "brûlée"}]))),
        ("latin1_unencodable", edit(json!([{"path": "latin1.txt", "old_string": "café", "new_string": "咖啡"}]))),
        ("utf16_refused", edit(json!([{"path": "utf16.txt", "old_string": "hi", "new_string": "ho"}]))),
        ("binary_refused", edit(json!([{"path": "image.bin", "old_string": "PNG", "new_string": "GIF"}]))),
        (
            "every_failing_edit_listed",
            edit(json!([
                {"path": "src/lib.rs", "old_string": "a + b", "new_string": "a * b"},
                {"path": "dup.txt", "old_string": "x = 1", "new_string": "x = 2"},
                {"path": "crlf.txt", "old_string": "nowhere", "new_string": "x"}
            ])),
        ),
        ("outside_root_refused", edit(json!([{"path": "../escape.txt", "operation": "create", "content": "x"}]))),
        ("git_dir_refused", edit(json!([{"path": ".git/config", "operation": "create", "content": "x"}]))),
        (
            "unknown_edit_field",
            edit(json!([{"path": "src/lib.rs", "old_string": "a", "new_string": "b", "colour": "red"}])),
        ),
        ("edits_missing", json!({"dry_run": true})),
        (
            "operation_param_of_other_operation",
            edit(
                json!([{"path": "src/lib.rs", "operation": "insert", "line": 1, "new_string": "x", "old_string": "y"}]),
            ),
        ),
    ]
}

#[test]
fn edit_cases() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/edit");
    settings.bind(|| {
        for (name, arguments) in cases() {
            let workspace = workspace();
            insta::assert_snapshot!(name, workspace.render("edit", arguments));
        }
    });
}

#[test]
fn manage_cases() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/edit");
    settings.bind(|| {
        let workspace = workspace();
        insta::assert_snapshot!("manage_undo_empty", workspace.render("manage", json!({"command": "undo"})));
        assert!(workspace.engine.call("edit", edit(json!([{"path": "src/lib.rs", "old_string": "a + b", "new_string": "a * b"}]))).ok);
        let second = json!([{"path": "new.txt", "operation": "create", "content": "n\n"}, {"path": "dup.txt", "operation": "delete"}]);
        assert!(workspace.engine.call("edit", edit(second)).ok);
        let history = workspace.render("manage", json!({"command": "history"}));
        let history = regex_free_times(&history);
        insta::assert_snapshot!("manage_history", history);
        insta::assert_snapshot!("manage_undo", workspace.render("manage", json!({"command": "undo"})));
        insta::assert_snapshot!("manage_redo", workspace.render("manage", json!({"command": "redo", "transaction_id": "tx-2"})));
        fs::write(workspace.root.path().join("new.txt"), "changed by someone\n").unwrap();
        insta::assert_snapshot!("manage_undo_conflict", workspace.render("manage", json!({"command": "undo"})));
        insta::assert_snapshot!("manage_unknown_command", workspace.render("manage", json!({"command": "explode"})));
    });
}

/// History lines carry wall-clock times; the snapshot keeps their shape only.
fn regex_free_times(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut line = line.to_owned();
        if let Some(at) = line.find(" · 20") {
            line.replace_range(at + 3..at + 3 + 20, "<time>");
        }
        if let Some(at) = line.find("\"time\": ") {
            let end = line[at..].find(',').map_or(line.len(), |end| at + end);
            line.replace_range(at + 8..end, "0");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn a_multi_file_call_whose_last_edit_fails_leaves_every_file_byte_identical() {
    let workspace = workspace();
    let response = workspace.engine.call(
        "edit",
        edit(json!([
            {"path": "src/lib.rs", "old_string": "a + b", "new_string": "a * b"},
            {"path": "crlf.txt", "old_string": "second", "new_string": "2nd"},
            {"path": "new.txt", "operation": "create", "content": "x"},
            {"path": "dup.txt", "old_string": "no such text", "new_string": "y"}
        ])),
    );
    assert_eq!(response.error_code(), Some("NO_MATCH"), "{}", response.face);
    for (path, bytes) in FILES {
        assert_eq!(workspace.read(path).as_deref(), Some(*bytes), "{path}");
    }
    assert_eq!(workspace.read("new.txt"), None);
}

#[test]
fn a_read_hash_guards_an_edit_and_the_index_sees_the_new_text() {
    let workspace = workspace();
    workspace.engine.refresh_index(&|_, _| {});
    let read =
        workspace.engine.call("read", json!({"mode": "file", "target": "src/lib.rs", "offset": 1, "limit": 100}));
    let hash = read.meta["file_hash"].as_str().unwrap().to_owned();
    let response = workspace.engine.call(
        "edit",
        edit(json!([{"path": "src/lib.rs", "old_string": "pub fn sub", "new_string": "pub fn subtract", "expected_hash": hash}])),
    );
    assert!(response.ok, "{}", response.face);
    let found = workspace.engine.call("search", json!({"query": "subtract", "type": "text"}));
    assert!(found.face.contains("src/lib.rs"), "{}", found.face);
    let stale = workspace.engine.call(
        "edit",
        edit(json!([{"path": "src/lib.rs", "old_string": "a + b", "new_string": "b + a", "expected_hash": hash}])),
    );
    assert_eq!(stale.error_code(), Some("CONFLICT"));
    let error = stale.structured_at(loupe_engine::MetadataLevel::Full)["error"].clone();
    assert_eq!(error["expected_hash"], json!(hash));
    assert_eq!(error["actual_hash"], json!(workspace.hash("src/lib.rs")));
    assert!(error["region"]["current_text"].as_str().unwrap().contains("subtract"));
    assert_eq!(error["next_calls"][0]["tool"], "read");
    // The ready-to-run read works as given.
    let call = &error["next_calls"][0];
    assert!(workspace.engine.call("read", call["arguments"].clone()).ok);
}

#[test]
fn latin1_files_round_trip_byte_for_byte() {
    let workspace = workspace();
    let response = workspace
        .engine
        .call("edit", edit(json!([{"path": "latin1.txt", "old_string": "crème", "new_string": "brûlée"}])));
    assert!(response.ok, "{}", response.face);
    assert_eq!(workspace.read("latin1.txt").unwrap(), b"caf\xe9 br\xfbl\xe9e\n");
    assert!(workspace.engine.call("manage", json!({"command": "undo"})).ok);
    assert_eq!(workspace.read("latin1.txt").unwrap(), b"caf\xe9 cr\xe8me\n");
}

#[test]
fn read_only_refuses_edit_undo_and_redo() {
    let workspace = workspace_with(|config| config.read_only = true);
    let response =
        workspace.engine.call("edit", edit(json!([{"path": "new.txt", "operation": "create", "content": "x"}])));
    assert_eq!(response.error_code(), Some("READ_ONLY"));
    assert_eq!(workspace.read("new.txt"), None);
    // A dry run writes nothing, so a read-only server still previews it.
    let preview = workspace
        .engine
        .call("edit", json!({"dry_run": true, "edits": [{"path": "new.txt", "operation": "create", "content": "x"}]}));
    assert!(preview.ok, "{}", preview.face);
    assert_eq!(workspace.read("new.txt"), None);
    assert_eq!(workspace.engine.call("manage", json!({"command": "undo"})).error_code(), Some("READ_ONLY"));
    assert_eq!(workspace.engine.call("manage", json!({"command": "redo"})).error_code(), Some("READ_ONLY"));
}

#[test]
fn symlinks_are_never_written() {
    let workspace = workspace();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("victim.txt"), "safe\n").unwrap();
    loupe_vfs::testing::symlink(outside.path().join("victim.txt"), workspace.root.path().join("out.txt")).unwrap();
    loupe_vfs::testing::symlink(workspace.root.path().join("dup.txt"), workspace.root.path().join("in.txt")).unwrap();
    loupe_vfs::testing::symlink(outside.path(), workspace.root.path().join("outdir")).unwrap();
    for (path, code) in
        [("out.txt", "PATH_OUTSIDE_ROOT"), ("in.txt", "INVALID_ARGS"), ("outdir/x.txt", "PATH_OUTSIDE_ROOT")]
    {
        for arguments in [
            edit(json!([{"path": path, "operation": "create", "content": "pwned", "overwrite": true}])),
            edit(json!([{"path": path, "operation": "delete"}])),
        ] {
            let response = workspace.engine.call("edit", arguments);
            assert_eq!(response.error_code(), Some(code), "{path}: {}", response.face);
        }
    }
    assert_eq!(fs::read(outside.path().join("victim.txt")).unwrap(), b"safe\n");
    assert!(!outside.path().join("x.txt").exists());
    assert_eq!(workspace.read("dup.txt").as_deref(), Some(&b"x = 1\ny = 2\nx = 1\n"[..]));
}

#[test]
fn undo_and_redo_chain_across_a_restart() {
    let workspace = workspace();
    let steps = [
        edit(json!([{"path": "src/lib.rs", "old_string": "a + b", "new_string": "a * b"}])),
        edit(json!([{"path": "new.txt", "operation": "create", "content": "one\n"}])),
        edit(
            json!([{"path": "dup.txt", "operation": "delete"}, {"path": "new.txt", "old_string": "one", "new_string": "two"}]),
        ),
    ];
    let mut snapshots = vec![snapshot(&workspace)];
    for step in steps {
        assert!(workspace.engine.call("edit", step).ok);
        snapshots.push(snapshot(&workspace));
    }
    // A new engine on the same index directory: the journal survived.
    let engine = engine_at(workspace.root.path(), workspace.state.path(), |_| {});
    for expected in snapshots.iter().rev().skip(1) {
        let response = engine.call("manage", json!({"command": "undo"}));
        assert!(response.ok, "{}", response.face);
        assert_eq!(&snapshot(&workspace), expected);
    }
    let engine = engine_at(workspace.root.path(), workspace.state.path(), |_| {});
    for expected in snapshots.iter().skip(1) {
        let response = engine.call("manage", json!({"command": "redo"}));
        assert!(response.ok, "{}", response.face);
        assert_eq!(&snapshot(&workspace), expected);
    }
    assert_eq!(engine.call("manage", json!({"command": "redo"})).error_code(), Some("INVALID_ARGS"));
}

fn snapshot(workspace: &Workspace) -> Vec<(String, Option<Vec<u8>>)> {
    ["src/lib.rs", "new.txt", "dup.txt"].iter().map(|path| ((*path).to_owned(), workspace.read(path))).collect()
}

#[test]
fn concurrent_edits_from_two_clients_never_interleave() {
    let workspace = workspace();
    // Two engines on one root and one index dir stand for two server processes; each also
    // runs two threads, as two clients of one server would.
    let second = engine_at(workspace.root.path(), workspace.state.path(), |_| {});
    let engines = [&workspace.engine, &second];
    std::thread::scope(|scope| {
        for (client, engine) in engines.iter().enumerate() {
            for thread in 0..2 {
                scope.spawn(move || {
                    for n in 0..5 {
                        let line = format!("client {client} thread {thread} edit {n}");
                        loop {
                            let response = engine.call(
                                "edit",
                                edit(json!([
                                    {"path": "dup.txt", "operation": "insert", "line": 0, "new_string": line},
                                    {"path": "crlf.txt", "operation": "insert", "line": 0, "new_string": line}
                                ])),
                            );
                            if response.ok {
                                break;
                            }
                            // Another process won the race between our read and our apply.
                            assert_eq!(response.error_code(), Some("CONFLICT"), "{}", response.face);
                        }
                    }
                });
            }
        }
    });
    let dup = String::from_utf8(workspace.read("dup.txt").unwrap()).unwrap();
    let crlf = String::from_utf8(workspace.read("crlf.txt").unwrap()).unwrap();
    assert_eq!(dup.lines().count(), 20 + 3);
    assert!(dup.ends_with("x = 1\ny = 2\nx = 1\n"));
    // Both files got the same lines in the same order: whole calls, never interleaved.
    let dup_order: Vec<&str> = dup.lines().take(20).collect();
    let crlf_order: Vec<&str> = crlf.lines().take(20).collect();
    assert_eq!(dup_order, crlf_order);
}

/// `manage reindex`: a change made outside loupe (no watcher here) is found once the file is
/// re-read (`path`), and a whole-root reindex picks up a new file and a removed one.
#[test]
fn reindex_reads_what_changed_outside_loupe() {
    let workspace = workspace();
    workspace.engine.refresh_index(&|_, _| {});
    let search = |query: &str| workspace.engine.call("search", json!({"query": query, "type": "text"}));
    fs::write(workspace.root.path().join("src/lib.rs"), "pub fn zebra_crossing() {}\n").unwrap();
    assert!(search("zebra_crossing").face.contains("no results"), "the index has not seen the change yet");
    let one = workspace.engine.call("manage", json!({"command": "reindex", "path": "src/lib.rs"}));
    assert_eq!(one.face, "reindex · src/lib.rs re-read\n");
    assert!(search("zebra_crossing").face.contains("src/lib.rs\n1 "), "{}", search("zebra_crossing").face);

    fs::write(workspace.root.path().join("fresh.txt"), "okapi\n").unwrap();
    let all = workspace.engine.call("manage", json!({"command": "reindex"}));
    assert!(all.ok && all.face.contains("files walked") && all.face.contains("1 re-read"), "{}", all.face);
    assert!(search("okapi").face.contains("fresh.txt\n1 "), "{}", search("okapi").face);
    let outside = workspace.engine.call("manage", json!({"command": "reindex", "path": "../elsewhere"}));
    assert_eq!(outside.error_code(), Some("PATH_OUTSIDE_ROOT"), "{}", outside.face);
}
