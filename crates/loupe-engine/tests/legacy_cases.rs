//! The legacy names (§12) at the engine boundary, as data: each alias called with its seed's
//! argument names and snapshotted (both faces), each checked for parity with the call it stands
//! for, and the `disabled` mode, the gate, the budgets and the per-name counts checked exactly.

use crate::common;

use loupe_core::config::{GateMode, LegacyTools};
use loupe_engine::{CallContext, MetadataLevel, Response};
use serde_json::{Value, json};

/// The common fixture (gate off, so each alias is seen doing its work), committed to git (for
/// `dry_run_diff`), with its index built.
fn fixture_with(configure: impl FnOnce(&mut loupe_core::Config)) -> common::Fixture {
    let fixture = common::fixture_with(configure);
    common::git(fixture.path(), &["init", "-q"]);
    common::git(fixture.path(), &["add", "dir", "src"]);
    common::git(fixture.path(), &["commit", "-q", "-m", "fixture"]);
    fixture.engine.refresh_index(&|_, _| {});
    fixture
}

/// (legacy name, its arguments in the seed's names, the call it stands for). The parity test
/// runs every row; the snapshot test shows each.
fn aliases() -> Vec<(&'static str, Value, &'static str, Value)> {
    vec![
        ("read_file", json!({"path": "src/main.rs"}), "read", json!({"mode": "file", "target": "src/main.rs"})),
        (
            "read_file",
            json!({"path": "big.txt", "offset": 10, "limit": 3}),
            "read",
            json!({"mode": "file", "target": "big.txt", "offset": 10, "limit": 3}),
        ),
        (
            "read_symbol",
            json!({"name": "greet", "path": "src/main.rs"}),
            "read",
            json!({"mode": "symbol", "target": "greet", "path": "src/main.rs"}),
        ),
        (
            "get_snippet",
            json!({"path": "src/main.rs", "start_line": 6, "end_line": 8}),
            "read",
            json!({"mode": "snippet", "target": "src/main.rs", "start_line": 6, "end_line": 8}),
        ),
        (
            "dry_run_diff",
            json!({"path": "dir/a.rs", "content": "fn a() { 1 }\n", "against": "WORKTREE"}),
            "read",
            json!({"mode": "diff_preview", "target": "dir/a.rs", "content": "fn a() { 1 }\n", "against": "WORKTREE"}),
        ),
        (
            "read_code",
            json!({"filePath": "src/main.rs", "view": "full"}),
            "read",
            json!({"mode": "file", "target": "src/main.rs"}),
        ),
        (
            "read_code",
            json!({"filePath": "src/main.rs", "view": "skeleton"}),
            "read",
            json!({"mode": "outline", "target": "src/main.rs"}),
        ),
        (
            "read_code",
            json!({"filePath": "src/main.rs", "view": "fragment", "lineRange": "10-12"}),
            "read",
            json!({"mode": "snippet", "target": "src/main.rs", "line_range": "10-12"}),
        ),
        (
            "search_project",
            json!({"query": "greet", "maxResults": 2}),
            "search",
            json!({"query": "greet", "max_results": 2}),
        ),
        (
            "analyze_relationship",
            json!({"target": "greet", "targetType": "symbol", "mode": "calls", "maxDepth": 2}),
            "analyze",
            json!({"target": "greet", "target_type": "symbol", "mode": "calls", "max_depth": 2}),
        ),
        (
            "edit_code",
            json!({"edits": [
                {"filePath": "dir/a.rs", "operation": "replace", "targetString": "fn a() {}", "replacementString": "fn a() { 1 }"},
                {"filePath": "new/c.rs", "operation": "create", "replacementString": "fn c() {}\n"},
            ], "dryRun": true, "createMissingDirectories": true}),
            "edit",
            json!({"edits": [
                {"path": "dir/a.rs", "operation": "replace", "old_string": "fn a() {}", "new_string": "fn a() { 1 }"},
                {"path": "new/c.rs", "operation": "create", "content": "fn c() {}\n"},
            ], "dry_run": true, "create_missing_dirs": true}),
        ),
        (
            "edit_code",
            json!({"edits": [{"filePath": "dir/b.rs", "operation": "replace", "targetString": "fn  b()  {}", "replacementString": "fn b() { 2 }"}], "dryRun": true, "ignoreMistakes": true}),
            "edit",
            json!({"edits": [{"path": "dir/b.rs", "operation": "replace", "old_string": "fn  b()  {}", "new_string": "fn b() { 2 }"}], "dry_run": true, "fuzzy": true}),
        ),
        ("manage_project", json!({"command": "history"}), "manage", json!({"command": "history"})),
    ]
}

/// Failures a legacy name answers in its own terms (its implied mode, its `view`), and the
/// refusals of the tool it stands for, which keep their codes.
fn refusals() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("read_code_unknown_view", "read_code", json!({"filePath": "src/main.rs", "view": "whole"})),
        ("read_file_other_mode", "read_file", json!({"path": "src/main.rs", "mode": "outline"})),
        ("read_symbol_name_and_id", "read_symbol", json!({"name": "greet", "symbol_id": "s_1"})),
        ("read_code_unknown_parameter", "read_code", json!({"filePath": "src/main.rs", "colour": "red"})),
        ("read_file_missing", "read_file", json!({"path": "src/mian.rs"})),
        (
            "edit_code_no_match_changes_nothing",
            "edit_code",
            json!({"edits": [
                {"filePath": "dir/a.rs", "operation": "replace", "targetString": "fn a() {}", "replacementString": "fn a() { 1 }"},
                {"filePath": "dir/b.rs", "operation": "replace", "targetString": "no such text", "replacementString": "x"},
            ]}),
        ),
    ]
}

fn snapshot_name(index: usize, name: &str) -> String {
    format!("{index:02}_{name}")
}

#[test]
fn legacy_cases() {
    let fixture = fixture_with(|_| {});
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/legacy");
    settings.bind(|| {
        for (index, (name, arguments, _, _)) in aliases().into_iter().enumerate() {
            insta::assert_snapshot!(snapshot_name(index, name), compact_and_text(&fixture, name, arguments));
        }
        for (name, tool, arguments) in refusals() {
            insta::assert_snapshot!(name, compact_and_text(&fixture, tool, arguments));
        }
    });
    let untouched = std::fs::read_to_string(fixture.path().join("dir/a.rs")).unwrap();
    assert_eq!(untouched, "fn a() {}\n", "dry runs and a failed edit write nothing");
}

/// A refusal in the old name's own terms offers the call that works (in the new names, without
/// the offending argument); replayed, it is served.
#[test]
fn legacy_refusals_offer_a_call_that_works() {
    let fixture = fixture_with(|_| {});
    for (name, tool, arguments) in refusals() {
        let refused = fixture.engine.call(tool, arguments);
        assert!(!refused.ok, "{name}");
        let error = refused.structured_at(MetadataLevel::Full)["error"].clone();
        assert!(!error["hint"].as_str().unwrap().is_empty(), "{name}");
        for call in error["next_calls"].as_array().unwrap() {
            let replayed = fixture.engine.call(call["tool"].as_str().unwrap(), call["arguments"].clone());
            assert!(replayed.ok, "{name}: replaying {call} gave\n{}", replayed.face);
        }
        if refused.error_code() == Some("INVALID_ARGS") && name != "read_code_unknown_parameter" {
            assert!(!error["next_calls"].as_array().unwrap().is_empty(), "{name}: {error}");
        }
    }
}

/// The text face and the structured face an old client gets (the default level), in a
/// session of its own.
fn compact_and_text(fixture: &common::Fixture, tool: &str, arguments: Value) -> String {
    let context = CallContext::new(format!("legacy {tool} {arguments}"));
    let response = fixture.engine.call_in(&context, tool, arguments);
    let structured = serde_json::to_string_pretty(&response.structured()).unwrap();
    fixture.redact(&format!("{}----- structuredContent -----\n{structured}\n", response.face))
}

/// Each alias answers as the call it stands for: the same face but for the one `deprecated`
/// line, the same reason codes plus `LEGACY_TOOL_DEPRECATED`, the same structured fields (an
/// old result's fields added beside them), the same envelope `meta` plus `legacy`.
#[test]
fn every_alias_answers_as_the_call_it_stands_for() {
    let fixture = fixture_with(|_| {});
    for (index, (name, arguments, tool, canonical)) in aliases().into_iter().enumerate() {
        let label = format!("{name} {arguments}");
        let legacy = fixture.engine.call_in(&CallContext::new(format!("old {index}")), name, arguments);
        let new = fixture.engine.call_in(&CallContext::new(format!("new {index}")), tool, canonical);
        assert!(new.ok, "{label}: the call it stands for fails:\n{}", new.face);
        assert_eq!(legacy.ok, new.ok, "{label}");
        assert_eq!(legacy.tool, new.tool, "{label}");
        assert_eq!(legacy.mode, new.mode, "{label}");

        let note = format!("── deprecated [LEGACY_TOOL_DEPRECATED]: `{name}` is a legacy name; call {tool}");
        let (kept, notes): (Vec<&str>, Vec<&str>) = legacy.face.lines().partition(|line| !line.starts_with(&note));
        assert_eq!(notes.len(), 1, "{label}: one deprecated line\n{}", legacy.face);
        assert_eq!(kept, new.face.lines().collect::<Vec<_>>(), "{label}");
        assert_eq!(legacy.meta["token_estimate"], json!(loupe_core::tokens::count(&legacy.face)), "{label}");

        // The §9.9 enum ends with it; the tools' own codes (FUZZY_MATCH…) come after the enum's.
        let mut expected_codes = new.reason_codes().to_vec();
        let rank = |code: &str| crate::common::REASON_ORDER.iter().position(|known| *known == code);
        let legacy_rank = rank("LEGACY_TOOL_DEPRECATED");
        let at = expected_codes.iter().position(|code| rank(code) > legacy_rank).unwrap_or(expected_codes.len());
        expected_codes.insert(at, "LEGACY_TOOL_DEPRECATED".to_owned());
        assert_eq!(legacy.reason_codes(), expected_codes, "{label}");
        assert_eq!(legacy.meta["reason_codes"], json!(expected_codes), "{label}");
        if let Some(stabilization) = legacy.meta.get("stabilization") {
            assert_eq!(stabilization["reason_codes"], json!(expected_codes), "{label}");
        }
        assert_eq!(legacy.meta["legacy"], json!({"tool": name, "replacement": tool}), "{label}");

        // The envelope: what the tool said, unchanged.
        for (key, value) in &new.meta {
            if !["token_estimate", "reason_codes", "stabilization"].contains(&key.as_str()) {
                assert_eq!(legacy.meta.get(key), Some(value), "{label}: meta.{key}");
            }
        }
        // The structured face: loupe's fields as for the new name, where the old result does
        // not reuse the name with its own shape.
        let old = legacy.structured_at(MetadataLevel::Standard);
        let standard = new.structured_at(MetadataLevel::Standard);
        let reshaped: &[&str] = match name {
            "search_project" => &["results"],
            "analyze_relationship" => &["nodes", "edges", "resolved_target"],
            _ => &[],
        };
        for (key, value) in standard.as_object().unwrap() {
            match key.as_str() {
                "text" => assert!(old["text"].as_str().unwrap().contains(&note), "{label}: {old}"),
                "reason_codes" => assert_eq!(old[key], json!(expected_codes), "{label}"),
                key if reshaped.contains(&key) => {}
                key => assert_eq!(&old[key], value, "{label}: structured {key}"),
            }
        }
        check_old_result(name, &legacy, &old, &label);
    }
}

/// The fields the intent-tools design (docs/findings.md) describes for each old tool's result, with
/// the values an old client reads.
fn check_old_result(name: &str, legacy: &Response, old: &Value, label: &str) {
    match name {
        "read_code" => {
            assert_eq!(old["truncated"], json!(false), "{label}");
            assert_eq!(old["metadata"]["path"], json!("src/main.rs"), "{label}");
            assert_eq!(old["metadata"]["language"], json!("rust"), "{label}");
            assert_eq!(old["metadata"]["lines"], json!(13), "{label}");
            let content = old["content"].as_str().unwrap();
            match legacy.mode.as_deref() {
                Some("file") => assert_eq!(content, common::MAIN_RS, "{label}"),
                Some("snippet") => {
                    assert!(content.starts_with("fn main() {\n") && common::MAIN_RS.contains(content), "{label}")
                }
                _ => assert!(content.contains("fn greet(name: &str) -> String"), "{label}"),
            }
        }
        "search_project" => {
            assert_eq!(old["inferredType"], json!("symbol"), "{label}");
            let results = old["results"].as_array().unwrap();
            assert!(!results.is_empty(), "{label}");
            let first = &results[0];
            assert_eq!(
                (&first["type"], &first["path"], &first["line"]),
                (&json!("symbol"), &json!("src/main.rs"), &json!(5))
            );
            assert!(first["score"].as_f64().unwrap() > 0.0 && first["context"].is_string(), "{label}: {first}");
            assert!(!first["candidate_id"].as_str().unwrap().is_empty(), "{label}: {first}");
        }
        "analyze_relationship" => {
            assert_eq!(old["resolvedTarget"]["name"], json!("greet"), "{label}: {old}");
            assert_eq!(old["resolvedTarget"]["path"], json!("src/main.rs"), "{label}");
            let nodes = old["nodes"].as_array().unwrap();
            assert!(nodes.iter().all(|node| node["id"].is_string() && node["type"].is_string()), "{label}: {old}");
            let edges = old["edges"].as_array().unwrap();
            assert!(!edges.is_empty(), "{label}: main calls greet");
            assert!(edges.iter().all(|edge| edge["source"].is_string() && edge["relation"].is_string()), "{label}");
        }
        "edit_code" => {
            assert_eq!(old["success"], json!(true), "{label}");
            let results = old["results"].as_array().unwrap();
            assert!(!results.is_empty(), "{label}");
            for result in results {
                assert_eq!(result["applied"], json!(false), "{label}: a dry run applies nothing");
                assert!(result["filePath"].is_string() && result["diff"].as_str().unwrap().contains("@@"), "{label}");
            }
            assert!(old.get("transactionId").is_none(), "{label}: a dry run has no transaction");
        }
        "manage_project" => {
            // The face as `manage` answered it; the deprecated line is in `text`.
            let output = old["output"].as_str().unwrap();
            assert!(output.starts_with("history · 0 of 0") && !output.contains("deprecated"), "{label}: {output}");
            assert!(old["data"]["transactions"].is_array(), "{label}: {old}");
        }
        _ => {
            for key in ["content", "metadata", "success", "output", "inferredType"] {
                assert!(old.get(key).is_none(), "{label}: the read wrappers answer as `read`; no `{key}`");
            }
        }
    }
}

/// H7b: a `read_code` answer carries its payload once in the structured face: the old
/// `content` field has it, so the compact `text` leaves it out (the deprecated note and the
/// reads' own lines stay), and the face stays within §3.3's bound of the text face.
#[test]
fn h7b_a_legacy_read_code_carries_its_payload_once() {
    let fixture = fixture_with(|_| {});
    for view in ["full", "skeleton"] {
        let answer = fixture.engine.call("read_code", json!({"filePath": "src/main.rs", "view": view}));
        assert!(answer.ok, "{view}: {}", answer.face);
        let structured = answer.structured_at(MetadataLevel::Standard);
        let content = structured["content"].as_str().unwrap();
        let text = structured["text"].as_str().unwrap();
        assert!(content.contains("fn greet(name: &str) -> String"), "{view}: {content}");
        assert!(!text.contains("fn greet"), "{view}: the payload is in `content` only: {text}");
        assert!(text.contains("── deprecated [LEGACY_TOOL_DEPRECATED]"), "{view}: {text}");
        assert!(answer.face.contains("fn greet") && answer.face.contains("deprecated"), "{}", answer.face);
        assert_eq!(structured.to_string().matches("fn greet(name: &str) -> String").count(), 1, "{view}: {structured}");
        // The full envelope keeps the whole face as `text`.
        let full = answer.structured_at(MetadataLevel::Full);
        assert!(full["text"].as_str().unwrap().contains("fn greet"), "{view}");
    }
    // A long read stays within §3.3's bound of its text face (the old fields cost a few dozen
    // tokens of their own); it cost twice the face when `text` carried the payload too.
    let answer = fixture.engine.call("read_code", json!({"filePath": "big.txt"}));
    let serialized = loupe_core::tokens::count(&answer.structured_at(MetadataLevel::Standard).to_string());
    assert!(answer.token_estimate > 500, "{}", answer.token_estimate);
    assert!(
        serialized * 10 <= answer.token_estimate * 13 + 800,
        "structured {serialized}, text {}",
        answer.token_estimate
    );
}

/// An applied `edit_code` carries its `transactionId`, and `manage_project` undoes it.
#[test]
fn an_applied_edit_code_can_be_undone_by_its_transaction_id() {
    let fixture = fixture_with(|_| {});
    let applied = fixture.engine.call(
        "edit_code",
        json!({"edits": [{"filePath": "dir/a.rs", "operation": "replace", "targetString": "{}", "replacementString": "{ 1 }"}]}),
    );
    assert!(applied.ok, "{}", applied.face);
    let old = applied.structured();
    assert_eq!(old["success"], json!(true));
    assert_eq!(old["results"][0]["applied"], json!(true), "{old}");
    let id = old["transactionId"].as_str().unwrap();
    assert_eq!(old["transaction_id"], json!(id));
    assert_eq!(std::fs::read_to_string(fixture.path().join("dir/a.rs")).unwrap(), "fn a() { 1 }\n");
    let undone = fixture.engine.call("manage_project", json!({"command": "undo", "transaction_id": id}));
    assert!(undone.ok, "{}", undone.face);
    assert_eq!(std::fs::read_to_string(fixture.path().join("dir/a.rs")).unwrap(), "fn a() {}\n");
}

/// `legacy_tools = "disabled"` (`LOUPE_DISABLE_LEGACY=1`): every alias fails with
/// `LEGACY_TOOL_DISABLED`, runs nothing, and its `next_calls` holds the call it stands for,
/// which works as it is.
#[test]
fn disabled_aliases_fail_with_their_replacement_call() {
    let fixture = fixture_with(|config| config.legacy_tools = LegacyTools::Disabled);
    for (name, arguments, tool, canonical) in aliases() {
        let label = format!("{name} {arguments}");
        let refused = fixture.engine.call(name, arguments);
        assert!(!refused.ok, "{label}");
        assert_eq!(refused.error_code(), Some("LEGACY_TOOL_DISABLED"), "{label}");
        assert_eq!(refused.tool, tool, "{label}");
        assert!(refused.reason_codes().contains(&"LEGACY_TOOL_DEPRECATED".to_owned()), "{label}");
        let error = refused.structured_at(MetadataLevel::Full)["error"].clone();
        assert!(!error["hint"].as_str().unwrap().is_empty(), "{label}");
        assert_eq!(error["next_calls"], json!([{"tool": tool, "arguments": canonical}]), "{label}");
        assert!(refused.face.contains(&format!("→ next: {tool} ")), "{label}: {}", refused.face);
        let replayed = fixture.engine.call(tool, canonical);
        assert!(replayed.ok, "{label}: the replacement fails:\n{}", replayed.face);
    }
    assert_eq!(std::fs::read_to_string(fixture.path().join("dir/a.rs")).unwrap(), "fn a() {}\n");
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/legacy");
    settings.bind(|| {
        let refused = fixture.render("read_code", json!({"filePath": "src/main.rs", "view": "skeleton"}));
        insta::assert_snapshot!("disabled_read_code", refused);
    });
}

/// Legacy names pass through the same gate and budgets as the new names (§9): a whole-file
/// read by an old name needs a search first, a precision window does not, and the refusal's
/// next calls lead to a served read.
#[test]
fn legacy_reads_meet_the_same_gate_and_budgets() {
    let fixture = fixture_with(|config| {
        config.gate_mode = GateMode::Enforce;
        config.max_reads_per_session = 3;
    });
    let context = CallContext::new("legacy gate");
    let call = |tool: &str, arguments: Value| fixture.engine.call_in(&context, tool, arguments);

    let refused = call("read_file", json!({"path": "src/main.rs"}));
    assert_eq!(refused.error_code(), Some("SEARCH_FIRST_REQUIRED"), "{}", refused.face);
    assert_eq!(refused.reason_codes(), ["SEARCH_FIRST_REQUIRED", "LEGACY_TOOL_DEPRECATED"]);
    let skeleton = call("read_code", json!({"filePath": "src/main.rs", "view": "skeleton"}));
    assert!(skeleton.ok, "an outline is not a whole-file read: it passes without a ref\n{}", skeleton.face);
    let window = call("get_snippet", json!({"path": "src/main.rs", "start_line": 1, "end_line": 3}));
    assert!(window.ok, "a precision window passes without a ref:\n{}", window.face);

    // Follow the refusal: its search returns the file, whose path is then a ref.
    let search = refused.meta["next_calls"][0].clone();
    assert_eq!(search["tool"], json!("search"));
    let found = call("search_project", search["arguments"].clone());
    assert!(found.ok, "{}", found.face);
    let served = call("read_file", json!({"path": "src/main.rs"}));
    assert!(served.ok, "{}", served.face);

    // The session budget counts the old names' reads with the new ones'.
    let mut last = served;
    for line in 4..8 {
        last = call("get_snippet", json!({"path": "big.txt", "start_line": line, "end_line": line}));
        if !last.ok {
            break;
        }
    }
    assert_eq!(last.error_code(), Some("BUDGET_EXCEEDED"), "{}", last.face);
    assert!(last.reason_codes().contains(&"LEGACY_TOOL_DEPRECATED".to_owned()), "{:?}", last.reason_codes());
}

/// The caller's `max_tokens` holds for an old name too: the deprecated line is left out of the
/// text (not out of the reason codes) rather than take the face over it.
#[test]
fn the_deprecated_line_never_takes_a_read_over_max_tokens() {
    let fixture = fixture_with(|_| {});
    for max_tokens in [150, 151, 170, 200, 400] {
        let response = fixture.engine.call("read_file", json!({"path": "big.txt", "max_tokens": max_tokens}));
        assert!(response.ok, "{}", response.face);
        let tokens = loupe_core::tokens::count(&response.face);
        assert_eq!(response.meta["token_estimate"], json!(tokens));
        assert!(tokens <= max_tokens, "{max_tokens}: {tokens}\n{}", response.face);
        assert!(response.reason_codes().contains(&"LEGACY_TOOL_DEPRECATED".to_owned()));
    }
}

/// `manage metrics` counts the calls per legacy name (refused ones too), and says nothing of
/// them until one is made.
#[test]
fn manage_metrics_counts_calls_per_legacy_name() {
    let fixture = fixture_with(|_| {});
    let before = fixture.engine.call("manage", json!({"command": "metrics", "metadata": "full"}));
    assert!(!before.face.contains("legacy names"), "{}", before.face);
    assert_eq!(before.meta["metrics"]["legacy_tools"], json!({"mode": "hidden", "calls": {}}));
    for (name, arguments) in [
        ("read_code", json!({"filePath": "src/main.rs"})),
        ("read_code", json!({"filePath": "src/main.rs", "view": "nonsense"})),
        ("get_snippet", json!({"path": "src/main.rs", "start_line": 1, "end_line": 1})),
        ("manage_project", json!({"command": "status"})),
    ] {
        let _ = fixture.engine.call(name, arguments);
    }
    let after = fixture.engine.call("manage_project", json!({"command": "metrics"}));
    let calls = json!({"get_snippet": 1, "manage_project": 2, "read_code": 2});
    assert_eq!(after.meta["metrics"]["legacy_tools"], json!({"mode": "hidden", "calls": calls}));
    assert_eq!(after.structured()["data"]["metrics"]["legacy_tools"]["calls"], calls);
    assert!(
        after.face.contains("legacy names (hidden, deprecated): get_snippet 1 · manage_project 2 · read_code 2"),
        "{}",
        after.face
    );
}

/// The camelCase names are the old names' own: on the five tools the seeds' `view` is still an
/// unknown parameter, and their schemas stay snake_case (`schema_parser_and_cli_agree`).
#[test]
fn the_old_names_arguments_do_not_widen_the_five_tools() {
    let fixture = fixture_with(|_| {});
    let refused = fixture.engine.call("read", json!({"mode": "file", "filePath": "src/main.rs", "view": "full"}));
    assert_eq!(refused.error_code(), Some("INVALID_ARGS"), "{}", refused.face);
    assert!(refused.face.contains("`view`"), "{}", refused.face);
    for spec in loupe_engine::params::TOOLS {
        for param in spec.params {
            assert!(!param.name.bytes().any(|byte| byte.is_ascii_uppercase()), "{}.{}", spec.name, param.name);
        }
    }
}
