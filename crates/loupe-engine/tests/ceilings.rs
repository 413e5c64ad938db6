//! Every face and every field of every answer stays within the response ceiling (finding R8 in
//! docs/findings.md). Each case lowers the ceiling in its `Config` instead of building huge trees,
//! then checks both faces of the answer and that the continuation it offers reaches everything that
//! was cut.

use loupe_core::tokens;
use loupe_engine::{MetadataLevel, Response};
use serde_json::{Value, json};

use crate::common::write;

/// The tokens of the text face and of `JSON.stringify(structuredContent)` at a level.
fn sizes(response: &Response, level: MetadataLevel) -> (usize, usize) {
    let structured = serde_json::to_string(&response.structured_at(level)).unwrap();
    (tokens::count(&response.face), tokens::count(&structured))
}

/// Both faces within `ceiling`: the default structured face is the text plus what a program
/// acts on; the whole envelope (`metadata: "full"`) adds the payload's bytes and `meta` once more.
fn assert_bounded(what: &str, response: &Response, ceiling: usize) {
    let (face, standard) = sizes(response, MetadataLevel::Standard);
    let (_, full) = sizes(response, MetadataLevel::Full);
    eprintln!("{what}: face {face} tokens, structuredContent {standard} tokens (full: {full})");
    assert!(face <= ceiling, "{what}: the face is {face} tokens, over {ceiling}");
    assert!(standard <= ceiling * 13 / 10 + 600, "{what}: structuredContent is {standard} tokens");
    assert!(full <= ceiling * 3 + 600, "{what}: the full structuredContent is {full} tokens");
}

fn next_arguments(response: &Response) -> Option<Value> {
    response.meta["next_calls"].as_array()?.first().map(|call| call["arguments"].clone())
}

#[test]
fn r8_directory_diff_preview_is_bounded() {
    let ceiling = 2_000;
    let (root, _index, engine) = crate::common::git_repo_engine(|config| config.max_response_tokens = ceiling);
    for number in 0..3_000 {
        write(root.path(), &format!("d{}/f{number:04}.txt", number % 3), "x\n");
    }
    let mut arguments = json!({"mode": "diff_preview", "target": "."});
    let mut listed: Vec<String> = Vec::new();
    for page in 0.. {
        assert!(page < 100, "the listing does not advance");
        let response = engine.call("read", arguments.clone());
        assert!(response.ok, "{}", response.face);
        assert_bounded(&format!("diff_preview . page {page}"), &response, ceiling);
        for file in response.meta["files"].as_array().unwrap() {
            listed.push(file["path"].as_str().unwrap().to_owned());
        }
        // A cut list continues by its cursor (the last page offers diffs, not more of the list).
        let Some(cursor) = response.meta["next_cursor"].as_str() else { break };
        let next = next_arguments(&response).unwrap();
        assert_eq!(next["cursor"], cursor, "the first next call continues the list");
        if page == 0 {
            assert!(response.face.contains("more file(s) not listed"), "{}", response.face);
            assert!(response.face.contains("narrower targets: d0 (") || response.face.contains("d1 ("));
            assert_eq!(response.meta["files_total"], 3_000);
            assert!(response.meta["next_cursor"].is_string());
        }
        arguments = next;
    }
    let mut expected: Vec<String> = (0..3_000).map(|number| format!("d{}/f{number:04}.txt", number % 3)).collect();
    expected.sort();
    assert_eq!(listed, expected, "every changed file is listed exactly once across the pages");

    // A cursor of a list that changed since is CONFLICT with a fresh call, never a wrong page.
    let first = engine.call("read", json!({"mode": "diff_preview", "target": "."}));
    let cursor = first.meta["next_cursor"].as_str().unwrap().to_owned();
    write(root.path(), "d0/a-new-file.txt", "x\n");
    let stale = engine.call("read", json!({"mode": "diff_preview", "target": ".", "cursor": cursor}));
    assert_eq!(stale.error_code(), Some("CONFLICT"), "{}", stale.face);
    assert_eq!(next_arguments(&stale).unwrap(), json!({"mode": "diff_preview", "target": "."}));
}

#[test]
fn r8_cut_diff_preview_continues_without_content() {
    let (root, _index, engine) = crate::common::git_repo_engine(|_| {});
    let proposed: String = (1..=2_000).map(|number| format!("proposed line {number}\n")).collect();
    let start = json!({"mode": "diff_preview", "target": "base.txt", "against": "WORKTREE", "content": proposed, "max_tokens": 600});
    let first = engine.call("read", start.clone());
    assert!(first.ok, "{}", first.face);
    assert_bounded("cut diff_preview with content", &first, 600);
    let mut arguments = next_arguments(&first).expect("a cut diff offers its continuation");
    let next_size = serde_json::to_string(&arguments).unwrap().len();
    eprintln!("continuation call: {next_size} bytes (the content is {} bytes)", proposed.len());
    assert!(arguments.get("content").is_none(), "the continuation repeats the content: {arguments}");
    assert!(next_size < 300, "{arguments}");

    // Following the cursors yields the whole diff exactly once.
    let mut collected = first.content.clone().unwrap();
    let mut cursors = vec![arguments["cursor"].as_str().unwrap().to_owned()];
    for page in 0.. {
        assert!(page < 200, "the diff does not advance");
        let response = engine.call("read", arguments.clone());
        assert!(response.ok, "{}", response.face);
        assert_bounded("continued diff_preview", &response, 600);
        collected.push_str(response.content.as_deref().unwrap());
        let Some(next) = next_arguments(&response) else { break };
        assert!(next.get("content").is_none());
        cursors.push(next["cursor"].as_str().unwrap().to_owned());
        arguments = next;
    }
    let body = |text: &str| text.lines().filter(|line| line.starts_with('+')).count();
    assert_eq!(body(&collected), 2_000 + 1, "every added line (and the +++ label) once");

    // `offset` paging with `content` keeps working.
    let mut with_offset = start.clone();
    with_offset["offset"] = json!(50);
    let paged = engine.call("read", with_offset);
    assert!(paged.ok && paged.face.contains("(diff lines 50–"), "{}", paged.face);

    // The file changed under the cursor: CONFLICT, and the fresh call still carries no content.
    write(root.path(), "base.txt", "base, edited\n");
    let stale = engine.call("read", json!({"mode": "diff_preview", "target": "base.txt", "against": "WORKTREE", "max_tokens": 600, "cursor": cursors[1]}));
    assert_eq!(stale.error_code(), Some("CONFLICT"), "{}", stale.face);
    let fresh = next_arguments(&stale).unwrap();
    assert!(fresh.get("content").is_none(), "{fresh}");
    let restarted = engine.call("read", fresh);
    assert!(restarted.ok, "{}", restarted.face);
    assert!(restarted.content.unwrap().starts_with("--- a/base.txt"));

    // Once the server no longer holds the proposal, the cursor asks for it again with `offset`.
    for other in 0..10 {
        let content: String = (1..=2_000).map(|number| format!("other {other} line {number}\n")).collect();
        let response = engine.call(
            "read",
            json!({"mode": "diff_preview", "target": "base.txt", "against": "WORKTREE", "content": content, "max_tokens": 600}),
        );
        assert!(response.meta["truncated"] == true);
    }
    let evicted = engine.call("read", json!({"mode": "diff_preview", "target": "base.txt", "against": "WORKTREE", "max_tokens": 600, "cursor": cursors[1]}));
    assert_eq!(evicted.error_code(), Some("CONFLICT"), "{}", evicted.face);
    assert!(evicted.face.contains("\"offset\": "), "{}", evicted.face);
}

#[test]
fn r8_a_long_line_is_bounded_in_every_field() {
    let (root, _index, engine) = crate::common::git_repo_engine(|_| {});
    let line = "y".repeat(2_000_000);
    write(root.path(), "one-line.txt", &format!("{line}\n"));
    let read = engine.call("read", json!({"mode": "file", "target": "one-line.txt"}));
    assert!(read.ok, "{}", read.face);
    assert_bounded("read of a 2 MB line", &read, 20_000);
    let text = read.content.clone().unwrap();
    assert!(text.len() < 12_000, "content holds {} bytes of the line", text.len());
    assert!(line.starts_with(&text) && read.face.contains(&text), "text is what the face shows");
    assert!(read.face.contains("line cut:"), "{}", read.face);

    // The same line as a proposed text: the diff page shows its start and advances.
    let preview = engine.call(
        "read",
        json!({"mode": "diff_preview", "target": "one-line.txt", "against": "WORKTREE", "content": format!("z{line}\n")}),
    );
    assert!(preview.ok, "{}", preview.face);
    assert_bounded("diff_preview of a 2 MB line", &preview, 20_000);
    assert!(preview.content.as_deref().unwrap().len() < 12_000);
    // Its pages advance past the long lines, each page bounded and each cut line marked.
    let mut arguments = next_arguments(&preview).expect("the cut diff continues");
    let mut cut_lines = 0;
    for page in 0.. {
        assert!(page < 10, "the diff does not advance");
        let response = engine.call("read", arguments.clone());
        assert!(response.ok, "{}", response.face);
        assert_bounded("its next page", &response, 20_000);
        assert!(response.content.as_deref().unwrap().len() < 12_000);
        cut_lines += response.face.matches("…[line cut: ").count();
        let Some(next) = next_arguments(&response) else { break };
        arguments = next;
    }
    assert_eq!(cut_lines, 2, "the removed and the added line, each cut once");
}

#[test]
fn r8_edit_reply_is_bounded() {
    let ceiling = 1_500;
    let (root, _index, engine) = crate::common::git_repo_engine(|config| config.max_response_tokens = ceiling);
    let big = |tag: &str| (1..=2_000).map(|number| format!("{tag} line {number}\n")).collect::<String>();
    let edits: Vec<Value> = (0..3)
        .map(|file| json!({"path": format!("big{file}.txt"), "operation": "create", "content": big(&format!("f{file}"))}))
        .collect();
    let dry = engine.call("edit", json!({"dry_run": true, "edits": edits}));
    assert!(dry.ok, "{}", dry.face);
    assert_bounded("edit dry run of 3 × 2,000 lines", &dry, ceiling);
    let files = dry.meta["files"].as_array().unwrap();
    assert!(files.iter().any(|file| file["diff_truncated"] == true));
    assert!(dry.face.contains("[DIFF_TRUNCATED]"), "{}", dry.face);
    // The rest of a cut dry-run diff: a diff_preview by cursor, not the proposal again.
    let rest = dry.meta["next_calls"].as_array().unwrap()[0].clone();
    assert_eq!(rest["tool"], "read");
    assert!(rest["arguments"].get("content").is_none(), "{rest}");
    let shown = files[0]["diff"].as_str().unwrap().lines().count();
    let continued = engine.call("read", rest["arguments"].clone());
    assert!(continued.ok, "{}", continued.face);
    assert!(continued.face.contains(&format!("(diff lines {}–", shown + 1)), "{}", continued.face);
    assert!(continued.content.unwrap().starts_with(&format!("+f0 line {}\n", shown - 2)));

    // Many files: the reply lists what fits, counts the rest and names where to see them.
    let edits: Vec<Value> = (0..400)
        .map(|file| json!({"path": format!("many/file-number-{file:04}.txt"), "operation": "create", "content": "x\n"}))
        .collect();
    let applied = engine.call("edit", json!({"edits": edits, "create_missing_dirs": true}));
    assert!(applied.ok, "{}", applied.face);
    assert_bounded("edit applying 400 files", &applied, ceiling);
    assert_eq!(applied.meta["files_total"], 400);
    assert!(applied.face.contains("more file(s) not listed"), "{}", applied.face);
    assert!(applied.face.contains(r#"manage {"command":"history"}"#), "{}", applied.face);
    assert!(root.path().join("many/file-number-0399.txt").exists());
}

#[test]
fn r8_errors_quote_a_long_argument_bounded() {
    let (root, _index, engine) = crate::common::git_repo_engine(|_| {});
    write(root.path(), "a.txt", "alpha\nbeta\n");
    let long = "q".repeat(200_000);
    let cases = [
        ("read", json!({"mode": "snippet", "target": "a.txt", "line_range": long})),
        ("read", json!({"mode": "file", "target": long})),
        ("read", json!({"mode": "diff_preview", "target": "a.txt", "against": long})),
        ("read", json!({"mode": "diff_preview", "target": "a.txt", "cursor": long})),
        ("edit", json!({"edits": [{"path": "a.txt", "operation": "replace", "old_string": long, "new_string": "x"}]})),
        (
            "edit",
            json!({"edits": [{"path": "a.txt", "operation": "replace", "old_string": "a", "new_string": "x", "expected_hash": long}]}),
        ),
        ("edit", json!({"edits": [{"path": long, "operation": "create", "content": "x"}]})),
    ];
    for (tool, arguments) in cases {
        let response = engine.call(tool, arguments.clone());
        assert!(!response.ok, "{}", response.face);
        let what = format!("{tool} error {}", response.error_code().unwrap());
        assert_bounded(&what, &response, 1_000);
    }
    // A line of 200k characters named among the closest lines of a NO_MATCH.
    write(root.path(), "wide.txt", &format!("{long}\n"));
    let response = engine.call(
        "edit",
        json!({"edits": [{"path": "wide.txt", "operation": "replace", "old_string": "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqz", "new_string": "x"}]}),
    );
    assert_eq!(response.error_code(), Some("NO_MATCH"), "{}", response.face);
    assert_bounded("NO_MATCH beside a 200k line", &response, 1_000);
}

/// Outlines and symbol reads, audited like the other reads: a file of thousands of definitions,
/// a directory holding a file over the index's size limit, a function of thousands of lines and
/// a signature of thousands of parameters each answer within the ceiling on both faces, with a
/// continuation; and the oversized file is outlined, not silently left out.
#[test]
fn r8_outlines_and_symbol_reads_are_bounded() {
    let ceiling = 2_000;
    let (root, _index, engine) = crate::common::git_repo_engine(|config| {
        config.max_response_tokens = ceiling;
        config.max_index_file_bytes = 20_000;
    });
    let many: String = (0..3_000).map(|n| format!("def function_number_{n}(value):\n    return {n}\n\n")).collect();
    write(root.path(), "pkg/many.py", &many);
    let giant: String =
        format!("def giant():\n{}", (0..5_000).map(|n| format!("    x{n} = {n}\n")).collect::<String>());
    write(root.path(), "pkg/giant.py", &giant);
    let parameters: Vec<String> = (0..4_000).map(|n| format!("a{n}")).collect();
    write(root.path(), "pkg/wide.py", &format!("def wide({}):\n    pass\n", parameters.join(", ")));
    write(root.path(), "pkg/small.py", "def small():\n    return 1\n");
    engine.refresh_index(&|_, _| {});

    let outline = engine.call("read", json!({"mode": "outline", "target": "pkg/many.py"}));
    assert!(outline.ok && outline.face.contains("more definitions cut"), "{}", outline.face);
    assert_bounded("outline of 3,000 definitions", &outline, ceiling);
    assert!(next_arguments(&outline).is_some(), "{}", outline.face);

    let directory = engine.call("read", json!({"mode": "outline", "target": "pkg"}));
    assert!(directory.ok, "{}", directory.face);
    assert_bounded("outline of a directory", &directory, ceiling);
    // many.py is over the index's limit (20,000 bytes) and outlined all the same.
    assert!(
        directory.face.contains("== pkg/giant.py") || directory.face.contains("== pkg/many.py"),
        "{}",
        directory.face
    );
    assert!(directory.face.contains("4 source files"), "{}", directory.face);

    let symbol = engine.call("read", json!({"mode": "symbol", "target": "giant", "path": "pkg/giant.py"}));
    assert!(symbol.ok, "{}", symbol.face);
    assert_bounded("symbol of 5,000 lines", &symbol, ceiling);
    assert!(next_arguments(&symbol).is_some_and(|next| next["cursor"].is_string()), "{}", symbol.face);

    let wide = engine.call("read", json!({"mode": "symbol", "target": "wide", "path": "pkg/wide.py"}));
    assert!(wide.ok, "{}", wide.face);
    assert_bounded("symbol with a 30,000-character signature", &wide, ceiling);
    let wide_outline = engine.call("read", json!({"mode": "outline", "target": "pkg/wide.py"}));
    assert_bounded("outline of that signature", &wide_outline, ceiling);
}
