//! The contract's edges, each checked where it was measured to fail: a cut
//! `diff_preview` or outline says it was degraded, names its limits and continues by cursor;
//! every emitted reason code is registered; the session's warnings carry codes; a symbol read
//! takes a candidate id; reads name their language; a gate refusal's expected target is data;
//! and `auto` searches a question's terms.

use loupe_core::config::GateMode;
use loupe_engine::{CallContext, Engine, MetadataLevel, Response};
use serde_json::{Value, json};

use crate::common::write;

fn codes(response: &Response) -> Vec<&str> {
    response.reason_codes().iter().map(String::as_str).collect()
}

fn first_next_arguments(response: &Response) -> Value {
    response.meta["next_calls"][0]["arguments"].clone()
}

/// Edge 1: a diff_preview of proposed content cut by the server's ceiling is degraded, says
/// `PREVIEW_DEGRADED`, names its limits, and continues by an opaque cursor without the content.
#[test]
fn a_diff_preview_cut_by_a_ceiling_is_degraded_and_continues_by_cursor() {
    let (_root, _index, engine) = crate::common::git_repo_engine(|config| config.max_preview_chars = 2_000);
    let proposed: String = (1..=400).map(|number| format!("proposed line {number}\n")).collect();
    let first = engine.call(
        "read",
        json!({"mode": "diff_preview", "target": "base.txt", "against": "WORKTREE", "content": proposed}),
    );
    assert!(first.ok, "{}", first.face);
    assert_eq!(first.meta["truncated"], true);
    assert_eq!(first.meta["preview_degraded"], true, "{}", first.face);
    assert!(codes(&first).contains(&"PREVIEW_DEGRADED"), "{:?}", codes(&first));
    assert!(codes(&first).contains(&"DIFF_TRUNCATED"));
    assert_eq!(first.meta["applied_limits"]["max_preview_chars"], 2_000, "{}", first.meta["applied_limits"]);
    assert_eq!(first.meta["truncated_by"], "max_preview_chars");
    assert!(first.face.contains("by max_preview_chars=2000 [PREVIEW_DEGRADED, DIFF_TRUNCATED]"), "{}", first.face);
    let cursor = first.meta["next_cursor"].as_str().expect("a cut diff carries next_cursor").to_owned();
    let next = first_next_arguments(&first);
    assert_eq!(next["cursor"], cursor.as_str());
    assert!(next.get("content").is_none() && next.get("offset").is_none(), "{next}");
    let structured = first.structured();
    assert_eq!(structured["next_cursor"], cursor.as_str());

    // Paging by cursor reaches the end of the diff, each page without the content.
    let mut arguments = next;
    let mut pages = 1;
    loop {
        let page = engine.call("read", arguments.clone());
        assert!(page.ok, "{}", page.face);
        pages += 1;
        assert!(pages < 50, "the diff does not advance");
        if page.meta["next_cursor"].is_null() {
            assert!(page.content.as_deref().unwrap().ends_with("+proposed line 400\n"));
            break;
        }
        arguments = first_next_arguments(&page);
        assert!(arguments.get("content").is_none());
    }

    // The caller's own cap cuts without degrading: only DIFF_TRUNCATED, and it is named.
    let own = engine.call(
        "read",
        json!({"mode": "diff_preview", "target": "base.txt", "against": "WORKTREE", "content": proposed, "max_preview_chars": 500}),
    );
    assert_eq!(own.meta["preview_degraded"], false);
    assert_eq!(codes(&own), ["DIFF_TRUNCATED"]);
    assert_eq!(own.meta["applied_limits"]["max_preview_chars"], 500);

    // Asking above a ceiling is clamped and says so.
    let above = engine.call("read", json!({"mode": "diff_preview", "target": "base.txt", "max_tokens": 1_000_000}));
    assert!(codes(&above).contains(&"BUDGET_SOFT_LIMIT"), "{}", above.face);
    assert_eq!(above.meta["preview_degraded"], true);
    assert!(above.face.contains("[BUDGET_SOFT_LIMIT]"), "{}", above.face);
}

/// Edge 1: a directory diff cut by the response ceiling is degraded and names its limits too.
/// (Its diffs are not inlined: the list of 400 files is what the ceiling cuts.)
#[test]
fn a_directory_diff_cut_by_the_ceiling_is_degraded() {
    let (root, _index, engine) = crate::common::git_repo_engine(|config| config.max_response_tokens = 1_500);
    for number in 0..400 {
        let body: String = (0..3).map(|line| format!("file {number} line {line}\n")).collect();
        write(root.path(), &format!("f{number:03}.txt"), &body);
    }
    let response = engine.call("read", json!({"mode": "diff_preview", "target": "."}));
    assert!(response.ok, "{}", response.face);
    assert_eq!(response.meta["truncated"], true);
    assert_eq!(response.meta["preview_degraded"], true, "{}", response.face);
    assert!(codes(&response).contains(&"PREVIEW_DEGRADED"));
    assert!(response.meta["applied_limits"]["max_response_tokens"].is_number());
}

fn indexed_source(lines: usize) -> (tempfile::TempDir, tempfile::TempDir, Engine) {
    let root = tempfile::tempdir().unwrap();
    let mut source = String::new();
    for number in 0..lines {
        source.push_str(&format!("/// Function number {number}.\npub fn function_{number:03}(value: u32) -> u32 {{\n    value + {number}\n}}\n\n"));
    }
    write(root.path(), "src/many.rs", &source);
    write(root.path(), "src/other.rs", &source.replace("function_", "other_"));
    let index = tempfile::tempdir().unwrap();
    let engine = crate::common::indexed_engine(root.path(), index.path());
    (root, index, engine)
}

/// Edge 1: a file outline cut by its budget names its limit and continues by cursor; the pages
/// show every definition exactly once.
#[test]
fn a_cut_outline_continues_by_cursor_through_every_definition() {
    let (_root, _index, engine) = indexed_source(200);
    let first = engine.call("read", json!({"mode": "outline", "target": "src/many.rs", "max_tokens": 400}));
    assert!(first.ok, "{}", first.face);
    assert_eq!(first.meta["truncated"], true);
    assert_eq!(first.meta["applied_limits"]["max_tokens"], 400, "{:?}", first.meta);
    assert!(first.meta["next_cursor"].is_string(), "{}", first.face);
    let mut seen: Vec<String> = Vec::new();
    let mut response = first;
    for page in 0.. {
        assert!(page < 100, "the outline does not advance");
        assert!(response.token_estimate <= 400, "{}", response.face);
        seen.extend(
            response.face.lines().filter_map(|line| line.split("pub fn ").nth(1)).map(|rest| rest[..12].to_owned()),
        );
        if response.meta["next_cursor"].is_null() {
            break;
        }
        let next = first_next_arguments(&response);
        assert_eq!(next["cursor"], response.meta["next_cursor"]);
        response = engine.call("read", next);
        assert!(response.ok, "{}", response.face);
    }
    let expected: Vec<String> = (0..200).map(|number| format!("function_{number:03}")).collect();
    assert_eq!(seen, expected);

    // A cursor is refused on another target and on a read of lines.
    let cursor =
        engine.call("read", json!({"mode": "outline", "target": "src/many.rs", "max_tokens": 400})).meta["next_cursor"]
            .as_str()
            .unwrap()
            .to_owned();
    let other = engine.call("read", json!({"mode": "outline", "target": "src/other.rs", "cursor": cursor}));
    assert_eq!(other.error_code(), Some("INVALID_ARGS"));
    assert!(!other.meta["next_calls"].as_array().unwrap().is_empty());
    let lines = engine.call("read", json!({"mode": "file", "target": "src/many.rs", "cursor": cursor}));
    assert_eq!(lines.error_code(), Some("INVALID_ARGS"));
}

/// A names outline lists a type's methods by name on the type's line; a nested type with
/// members of its own keeps its line; `signatures=true` gives every definition its line; a
/// method named there opens by `read mode=symbol`; and a cut names outline pages through every
/// class exactly once, its methods with it.
#[test]
fn a_names_outline_puts_methods_on_their_types_line() {
    let root = tempfile::tempdir().unwrap();
    let mut source = String::from(
        "class Store:\n    class Meta:\n        def ordering(self):\n            return 1\n\n    def get(self, key):\n        return key\n\n    def pop(self, key):\n        return key\n\n\ndef helper():\n    return Store()\n",
    );
    for number in 0..60 {
        source.push_str(&format!(
            "\n\nclass Model{number:02}:\n    def save_{number:02}(self):\n        return {number}\n\n    def load_{number:02}(self):\n        return {number}\n"
        ));
    }
    write(root.path(), "app/models.py", &source);
    let index = tempfile::tempdir().unwrap();
    let engine = crate::common::indexed_engine(root.path(), index.path());

    let names = engine.call("read", json!({"mode": "outline", "target": "app/models.py", "depth": 3}));
    assert!(names.ok, "{}", names.face);
    assert!(names.face.contains("· names (signatures=true adds lines)"), "{}", names.face);
    let lines: Vec<&str> = names.face.lines().collect();
    assert!(lines.contains(&"1-10 class Store: get, pop"), "{}", names.face);
    assert!(lines.contains(&"2-4   class Meta: ordering"), "{}", names.face);
    assert!(lines.contains(&"13 def helper"), "{}", names.face);
    assert!(lines.contains(&"17-22 class Model00: save_00, load_00"), "{}", names.face);
    assert!(!names.face.contains("def get"), "{}", names.face);

    let detailed = engine.call("read", json!({"mode": "outline", "target": "app/models.py", "signatures": true}));
    assert!(detailed.ok, "{}", detailed.face);
    assert!(detailed.face.lines().any(|line| line == "6   def get(self, key):"), "{}", detailed.face);

    let method = engine.call("read", json!({"mode": "symbol", "target": "Store.pop"}));
    assert!(method.ok && method.face.contains("9     def pop(self, key):"), "{}", method.face);

    // Paged: every class once, each with both of its methods on its line.
    let mut response = engine.call("read", json!({"mode": "outline", "target": "app/models.py", "max_tokens": 200}));
    let mut seen: Vec<String> = Vec::new();
    for page in 0.. {
        assert!(page < 50, "the outline does not advance");
        assert!(response.ok && response.token_estimate <= 200, "{}", response.face);
        for line in response.face.lines().filter(|line| line.contains("class Model")) {
            let number = &line[line.find("Model").unwrap() + 5..][..2];
            assert!(line.ends_with(&format!(": save_{number}, load_{number}")), "{line}");
            seen.push(number.to_owned());
        }
        if response.meta["next_cursor"].is_null() {
            break;
        }
        response = engine.call("read", first_next_arguments(&response));
    }
    assert_eq!(seen, (0..60).map(|number| format!("{number:02}")).collect::<Vec<_>>());
}

/// Edge 1: a directory outline cut by its default budget continues by cursor over its files.
#[test]
fn a_cut_directory_outline_continues_by_cursor() {
    let (_root, _index, engine) = indexed_source(200);
    // With signatures (a directory's default is names, which fit).
    let mut response = engine.call("read", json!({"mode": "outline", "target": "src", "signatures": true}));
    assert!(response.ok, "{}", response.face);
    assert_eq!(response.meta["truncated"], true, "{}", response.face);
    assert_eq!(response.meta["applied_limits"]["directory_outline_tokens"], 4_000, "{:?}", response.meta);
    let mut definitions = 0;
    for page in 0.. {
        assert!(page < 20, "the outline does not advance");
        definitions += response.face.lines().filter(|line| line.contains("pub fn ")).count();
        if response.meta["next_cursor"].is_null() {
            break;
        }
        response = engine.call("read", first_next_arguments(&response));
        assert!(response.ok, "{}", response.face);
    }
    assert_eq!(definitions, 400, "every definition of both files, once");
}

/// Edge 2: the codes an edit and a cut diff emit are registered (and printed by guidance).
#[test]
fn every_emitted_reason_code_is_in_the_registry() {
    let (root, _index, engine) = crate::common::git_repo_engine(|config| config.max_preview_chars = 1_000);
    write(root.path(), "code.py", "def f():\n        return 1\n");
    let fuzzy = engine.call(
        "edit",
        json!({"edits": [{"path": "code.py", "operation": "replace", "old_string": "def f():\n    return 1", "new_string": "def f():\n    return (2"}], "fuzzy": true}),
    );
    assert!(fuzzy.ok, "{}", fuzzy.face);
    let mut emitted: Vec<String> = fuzzy.reason_codes().to_vec();
    assert!(emitted.iter().any(|code| code == "FUZZY_MATCH"), "{emitted:?}");
    assert!(emitted.iter().any(|code| code == "SYNTAX_ERRORS_INTRODUCED"), "{emitted:?}");
    let proposed: String = (1..=200).map(|number| format!("line {number}\n")).collect();
    let cut = engine.call(
        "read",
        json!({"mode": "diff_preview", "target": "base.txt", "against": "WORKTREE", "content": proposed}),
    );
    emitted.extend(cut.reason_codes().iter().cloned());
    assert!(emitted.iter().any(|code| code == "DIFF_TRUNCATED"));
    let guidance = engine.call("manage", json!({"command": "guidance", "metadata": "full"}));
    let registry = &guidance.meta["guidance"]["reason_registry"];
    let registered: Vec<&str> = ["core", "extensions"]
        .iter()
        .flat_map(|part| registry[part].as_array().unwrap())
        .map(|entry| entry["code"].as_str().unwrap())
        .collect();
    for code in &emitted {
        assert!(registered.contains(&code.as_str()), "{code} is emitted but not registered");
        assert!(guidance.face.contains(&format!("  {code} (")), "guidance does not print {code}");
    }
}

fn warnings(response: &Response) -> Vec<Value> {
    response.meta["stabilization"]["warnings"].as_array().cloned().unwrap_or_default()
}

/// Edge 3: the warning at 80% of a session limit carries a registered reason code.
#[test]
fn the_budget_warning_at_eighty_percent_carries_a_reason_code() {
    let fixture = crate::common::session_fixture(|config| {
        config.gate_mode = GateMode::Off;
        config.max_reads_per_session = 5;
    });
    let context = CallContext::new("budget");
    let read = || {
        fixture.engine.call_in(
            &context,
            "read",
            json!({"mode": "snippet", "target": "big.txt", "start_line": 1, "end_line": 2, "fresh": true}),
        )
    };
    for _ in 0..3 {
        let response = read();
        assert!(!codes(&response).contains(&"BUDGET_NEAR_LIMIT"), "{}", response.face);
    }
    let fourth = read();
    assert!(codes(&fourth).contains(&"BUDGET_NEAR_LIMIT"), "{:?}\n{}", codes(&fourth), fourth.face);
    assert_eq!(fourth.meta["stabilization"]["suggested_next_action"], "search");
    assert_eq!(warnings(&fourth)[0]["code"], "BUDGET_NEAR_LIMIT");
    assert!(fourth.face.contains("── session [BUDGET_NEAR_LIMIT]: read allowance at 80%"), "{}", fourth.face);
    assert!(fourth.structured()["reason_codes"].as_array().unwrap().contains(&json!("BUDGET_NEAR_LIMIT")));
}

/// Edge 4: a read outside the last searches' top results gets the seeds' `LOW_RELEVANCE`.
#[test]
fn a_read_outside_the_top_results_is_low_relevance() {
    let fixture = crate::common::session_fixture(|config| config.gate_mode = GateMode::Off);
    let context = CallContext::new("relevance");
    let search = fixture.engine.call_in(&context, "search", json!({"query": "greet"}));
    assert!(search.ok);
    let read = fixture.engine.call_in(
        &context,
        "read",
        json!({"mode": "snippet", "target": "dir/a.rs", "start_line": 1, "end_line": 1}),
    );
    assert!(read.ok, "{}", read.face);
    assert!(codes(&read).contains(&"LOW_RELEVANCE"), "{:?}", codes(&read));
    assert!(codes(&read).contains(&"LOW_RELEVANCE_OUTSIDE_TOPK"));
    let warning = &warnings(&read)[0];
    assert_eq!(warning["code"], "LOW_RELEVANCE");
    assert!(warning["message"].as_str().unwrap().starts_with("this target seems unrelated"), "{warning}");
    assert!(read.face.contains("LOW_RELEVANCE]: this target seems unrelated"), "{}", read.face);
}

/// Edge 5: `read {mode: symbol, target: <candidate id>}` reads the symbol the hit names (the gate
/// enforced: the id is the ref), and a text hit's id reads the definition around its line.
#[test]
fn a_symbol_read_takes_a_candidate_id_as_its_target() {
    let fixture = crate::common::session_fixture(|_| {});
    let context = CallContext::new("by-id");
    let search = fixture.engine.call_in(&context, "search", json!({"query": "greet", "type": "symbol"}));
    let id = search.meta["results"][0]["candidate_id"].as_str().unwrap().to_owned();
    let read = fixture.engine.call_in(&context, "read", json!({"mode": "symbol", "target": id}));
    assert!(read.ok, "{}", read.face);
    assert_eq!(read.meta["resolved_symbol"]["name"], "greet");
    assert_eq!(read.meta["resolved_symbol"]["path"], "src/main.rs");
    assert!(read.face.contains("fn greet(name: &str) -> String {"), "{}", read.face);

    let text = fixture.engine.call_in(&context, "search", json!({"query": "hello, ", "type": "text"}));
    let id = text.meta["results"][0]["candidate_id"].as_str().unwrap().to_owned();
    let read = fixture.engine.call_in(&context, "read", json!({"mode": "symbol", "target": id, "body": false}));
    assert!(read.ok, "{}", read.face);
    assert_eq!(read.meta["resolved_symbol"]["name"], "greet", "the definition around the text hit");

    // The id as the ref alone, with the mode named, reads the same symbol.
    let by_ref = fixture.engine.call_in(&context, "read", json!({"mode": "symbol", "candidate_id": id}));
    assert!(by_ref.ok, "{}", by_ref.face);
    assert_eq!(by_ref.meta["resolved_symbol"]["name"], "greet");

    // An id the session never issued stays a name: read by that name, which nothing defines.
    let unknown = fixture.engine.call_in(&context, "read", json!({"mode": "symbol", "target": "qqqqqqq"}));
    assert_eq!(unknown.error_code(), Some("SYMBOL_NOT_FOUND"), "{}", unknown.face);
}

/// Edge 6: file, snippet and symbol reads name their language in the full envelope (§4: the
/// compact face carries only what a program acts on, and the path says it to the model).
#[test]
fn reads_name_their_language() {
    let fixture = crate::common::fixture();
    fixture.engine.refresh_index(&|_, _| {});
    for arguments in [
        json!({"mode": "file", "target": "src/main.rs"}),
        json!({"mode": "snippet", "target": "src/main.rs", "start_line": 1, "end_line": 3}),
        json!({"mode": "symbol", "target": "greet"}),
    ] {
        let response = fixture.engine.call("read", arguments.clone());
        assert!(response.ok, "{}", response.face);
        assert!(response.structured().get("language").is_none(), "{arguments}");
        assert_eq!(response.structured_at(MetadataLevel::Full)["meta"]["language"], "rust", "{arguments}");
    }
    let text = fixture.engine.call("read", json!({"mode": "file", "target": "big.txt", "limit": 2}));
    let full = text.structured_at(MetadataLevel::Full);
    assert!(full["meta"].get("language").is_none(), "a file loupe does not parse names none");
}

/// Edge 7: a ref for another target says which, as data a program acts on.
#[test]
fn a_gate_refusal_names_the_expected_target_as_data() {
    let fixture = crate::common::session_fixture(|_| {});
    let context = CallContext::new("gate");
    let search = fixture.engine.call_in(&context, "search", json!({"query": "greet", "type": "symbol"}));
    let id = search.meta["results"][0]["candidate_id"].as_str().unwrap().to_owned();
    let refused =
        fixture.engine.call_in(&context, "read", json!({"mode": "file", "target": "dir/a.rs", "candidate_id": id}));
    assert_eq!(refused.error_code(), Some("CANDIDATE_REF_REQUIRED"));
    let gate_context = &refused.structured_at(MetadataLevel::Full)["error"]["gate_context"];
    assert_eq!(gate_context["expected_target"], json!({"path": "src/main.rs", "symbol": "greet", "line": 5}));
    assert_eq!(gate_context["provided_target"], "dir/a.rs");
}

/// Edge 8: `auto` searches a question's significant terms, ranks files by how many they hold,
/// and says so, instead of answering NO_MATCH for the question as one literal.
#[test]
fn auto_searches_the_terms_of_a_question() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "src/config.rs",
        "/// Parses the configuration text.\npub fn parse(text: &str) -> Config {\n    Config::default()\n}\n",
    );
    write(root.path(), "src/server.rs", "// Starts the server with its config.\npub fn start() {}\n");
    write(root.path(), "src/parser.rs", "// A parser of arguments.\npub fn parse_arguments() {}\n");
    write(root.path(), "README.md", "Nothing about it here.\n");
    let index = tempfile::tempdir().unwrap();
    let engine = crate::common::indexed_engine(root.path(), index.path());
    let response = engine.call("search", json!({"query": "how are configs parsed?"}));
    assert!(response.ok, "{}", response.face);
    assert!(!codes(&response).contains(&"NO_MATCH"), "{}", response.face);
    assert_eq!(response.meta["inferred_type"], "terms");
    assert_eq!(response.meta["terms"], json!(["configs", "parsed"]));
    assert!(response.face.lines().next().unwrap().contains("searched the terms configs, parsed"), "{}", response.face);
    let paths: Vec<&str> =
        response.meta["results"].as_array().unwrap().iter().map(|hit| hit["path"].as_str().unwrap()).collect();
    assert_eq!(paths[0], "src/config.rs", "the file holding both terms ranks first: {paths:?}");
    assert!(paths.contains(&"src/server.rs") && paths.contains(&"src/parser.rs"), "{paths:?}");
    let last_config = paths.iter().rposition(|path| *path == "src/config.rs").unwrap();
    let first_other = paths.iter().position(|path| *path != "src/config.rs").unwrap();
    assert!(last_config < first_other, "{paths:?}");

    // An identifier or an explicit type is still searched as it is.
    let literal = engine.call("search", json!({"query": "how are configs parsed?", "type": "text"}));
    assert!(codes(&literal).contains(&"NO_MATCH"));
    assert_eq!(engine.call("search", json!({"query": "parse_arguments"})).meta["inferred_type"], "symbol");
    // With `whole_word`, a text option, an identifier is every line the word is on.
    let words = engine.call("search", json!({"query": "parse_arguments", "whole_word": true}));
    assert_eq!(words.meta["inferred_type"], "text", "{}", words.face);
    let text = engine.call("search", json!({"query": "parse_arguments", "type": "text", "whole_word": true}));
    assert!(text.structured()["results"].as_array().is_some_and(|rows| !rows.is_empty()), "{}", text.face);
    assert_eq!(words.structured()["results"], text.structured()["results"], "{}", words.face);
}

/// H9: a directory outline cut before its first file said "the cursor continues" with no cursor.
#[test]
fn h9_a_directory_outline_names_a_cursor_only_when_it_has_one() {
    let fixture = crate::common::fixture();
    let (mut empty_cut, mut continued) = (false, false);
    for max_tokens in [30, 60, 90, 120, 200, 400] {
        let response = fixture.engine.call("read", json!({"mode": "outline", "target": ".", "max_tokens": max_tokens}));
        let has_cursor = response.structured()["next_cursor"].is_string();
        assert_eq!(
            response.face.contains("the cursor continues"),
            has_cursor,
            "max_tokens={max_tokens}: {}",
            response.face
        );
        empty_cut |= response.face.contains("── cut after 0 of");
        continued |= has_cursor;
    }
    assert!(empty_cut && continued, "both kinds of cut were seen: {empty_cut} {continued}");
}

/// H9: `diff_preview` and `outline` accepted `max_lines` and `max_bytes`, ignored them, and
/// copied them into their next calls. Only the modes that honour them accept them.
#[test]
fn h9_caps_a_mode_does_not_honour_are_refused() {
    let fixture = crate::common::fixture();
    for (mode, target) in [("outline", "src/main.rs"), ("diff_preview", "src/main.rs")] {
        for cap in ["max_lines", "max_bytes"] {
            let response = fixture.engine.call("read", json!({"mode": mode, "target": target, cap: 5}));
            assert_eq!(response.error_code(), Some("INVALID_ARGS"), "{mode} {cap}: {}", response.face);
            assert!(response.face.contains(&format!("{cap} is only valid for mode='file'")), "{}", response.face);
        }
    }
    let honoured = fixture.engine.call("read", json!({"mode": "file", "target": "big.txt", "max_lines": 5}));
    assert!(honoured.ok && honoured.face.contains("max_lines=5"), "{}", honoured.face);
}
