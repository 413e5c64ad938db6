//! `read` at the engine boundary as data: each case is a name and the arguments of one call;
//! its snapshot holds both faces of the response. A change in what the model sees shows up
//! as a snapshot diff to review.

use crate::common;

use serde_json::json;

/// (snapshot name, arguments). Add a case here and run `cargo insta review`.
fn cases() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("file_whole_small", json!({"mode": "file", "target": "src/main.rs"})),
        ("file_offset_limit", json!({"mode": "file", "target": "big.txt", "offset": 10, "limit": 5})),
        ("file_max_lines", json!({"mode": "file", "target": "big.txt", "max_lines": 3})),
        ("file_max_tokens", json!({"mode": "file", "target": "big.txt", "max_tokens": 120})),
        ("file_max_bytes", json!({"mode": "file", "target": "big.txt", "offset": 998, "max_bytes": 130})),
        ("file_limit_above_ceiling", json!({"mode": "file", "target": "src/main.rs", "limit": 5000})),
        ("file_preview_none", json!({"mode": "file", "target": "big.txt", "preview_mode": "none"})),
        ("file_metadata_minimal", json!({"mode": "file", "target": "big.txt", "limit": 2, "metadata": "minimal"})),
        ("file_path_alias", json!({"mode": "file", "file_path": "./src/main.rs", "offset": "6", "limit": "3"})),
        ("file_offset_past_end", json!({"mode": "file", "target": "src/main.rs", "offset": 99})),
        ("snippet_range", json!({"mode": "snippet", "target": "src/main.rs", "start_line": 6, "end_line": 8})),
        (
            "snippet_context",
            json!({"mode": "snippet", "target": "src/main.rs", "start_line": 7, "end_line": 7, "context_lines": 2}),
        ),
        ("snippet_line_range", json!({"mode": "snippet", "target": "src/main.rs", "line_range": "10-13"})),
        ("snippet_past_end", json!({"mode": "snippet", "target": "src/main.rs", "start_line": 100, "end_line": 120})),
        (
            "snippet_end_before_start",
            json!({"mode": "snippet", "target": "src/main.rs", "start_line": 9, "end_line": 3}),
        ),
        ("snippet_missing_start", json!({"mode": "snippet", "target": "src/main.rs"})),
        (
            "snippet_over_ceiling",
            json!({"mode": "snippet", "target": "big.txt", "start_line": 1, "end_line": 900, "max_lines": 2}),
        ),
        ("text_crlf", json!({"mode": "file", "target": "crlf.txt"})),
        ("text_lone_cr", json!({"mode": "file", "target": "cr.txt"})),
        ("text_latin1", json!({"mode": "file", "target": "latin1.txt"})),
        ("text_bom", json!({"mode": "file", "target": "bom.txt"})),
        ("text_utf16", json!({"mode": "file", "target": "utf16.txt"})),
        ("text_empty", json!({"mode": "file", "target": "empty.txt"})),
        ("text_no_final_newline", json!({"mode": "file", "target": "nofinal.txt"})),
        ("text_long_line", json!({"mode": "file", "target": "long_line.txt", "max_preview_chars": 200})),
        ("text_gitignored", json!({"mode": "file", "target": "ignored.log"})),
        ("error_binary", json!({"mode": "file", "target": "image.bin"})),
        ("error_env_excluded", json!({"mode": "file", "target": ".env"})),
        ("env_example_allowed", json!({"mode": "file", "target": ".env.example"})),
        ("error_git_dir_excluded", json!({"mode": "file", "target": ".git/config"})),
        ("error_ssh_key_excluded", json!({"mode": "file", "target": "keys/id_rsa"})),
        ("error_dotdot_outside", json!({"mode": "file", "target": "../etc/passwd"})),
        ("error_absolute_outside", json!({"mode": "file", "target": "/etc/passwd"})),
        ("error_symlink_outside", json!({"mode": "file", "target": "link-out.txt"})),
        (
            "error_not_found_suggests",
            json!({"mode": "snippet", "target": "src/mian.rs", "start_line": 1, "end_line": 3}),
        ),
        ("error_directory", json!({"mode": "file", "target": "dir"})),
        ("error_mode_missing", json!({"target": "src/main.rs"})),
        ("error_mode_unknown", json!({"mode": "full", "target": "src/main.rs"})),
        ("error_target_missing", json!({"mode": "file"})),
        ("error_snippet_param_in_file", json!({"mode": "file", "target": "src/main.rs", "start_line": 3})),
        (
            "error_against_in_snippet",
            json!({"mode": "snippet", "target": "src/main.rs", "start_line": 1, "against": "HEAD"}),
        ),
        ("error_path_with_target_in_file", json!({"mode": "file", "target": "src/main.rs", "path": "src"})),
        ("error_depth_in_symbol", json!({"mode": "symbol", "target": "greet", "depth": 2})),
        ("error_unknown_parameter", json!({"mode": "file", "target": "src/main.rs", "colour": "red", "bogus": 1})),
        ("error_wrong_type", json!({"mode": "file", "target": "src/main.rs", "limit": "many"})),
        ("error_negative_offset", json!({"mode": "file", "target": "src/main.rs", "offset": -3})),
        // The index of these cases is never built: the name is found by a scan of the files.
        ("symbol_before_the_index_is_built", json!({"mode": "symbol", "target": "greet"})),
        ("error_outline_not_available", json!({"mode": "outline", "target": "src/main.rs", "depth": 1})),
        (
            "error_diff_commit_baseline",
            json!({"mode": "diff_preview", "target": "src/main.rs", "against": "commit:abc123"}),
        ),
        ("error_max_tokens_too_small", json!({"mode": "file", "target": "src/main.rs", "max_tokens": 10})),
        ("error_bad_cursor", json!({"mode": "file", "target": "src/main.rs", "cursor": "garbage"})),
        ("error_cursor_with_offset", json!({"mode": "file", "target": "src/main.rs", "cursor": "x", "offset": 2})),
        ("error_arguments_not_object", json!(["mode", "file"])),
        (
            "session_fields_accepted",
            json!({"mode": "snippet", "target": "src/main.rs", "start_line": 1, "end_line": 1, "session_id": "s1", "candidate_id": "c1", "bundle_id": "b1", "fresh": true}),
        ),
    ]
}

#[test]
fn read_cases() {
    let fixture = common::fixture();
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/read");
    settings.bind(|| {
        for (name, arguments) in cases() {
            insta::assert_snapshot!(name, fixture.render("read", arguments));
        }
    });
}

/// Following `next_calls` from the first page to the last returns every line exactly once,
/// whatever the budget.
#[test]
fn paging_by_cursor_returns_the_whole_file_exactly_once() {
    let fixture = common::fixture();
    let expected = std::fs::read_to_string(fixture.path().join("big.txt")).unwrap();
    for budget in [json!({"max_lines": 7}), json!({"max_tokens": 300}), json!({"max_bytes": 1000}), json!({})] {
        let mut arguments = json!({"mode": "file", "target": "big.txt"});
        for (key, value) in budget.as_object().unwrap() {
            arguments[key] = value.clone();
        }
        let mut collected = String::new();
        let mut pages = 0;
        // Each budget pages in a session of its own: a second pass in one session would get
        // the lines it already has as references (§9.6).
        let session = loupe_engine::CallContext::new(format!("paging {budget}"));
        loop {
            let response = fixture.engine.call_in(&session, "read", arguments.clone());
            assert!(response.ok, "{}", response.face);
            collected.push_str(response.content.as_deref().unwrap());
            pages += 1;
            let next = response.meta["next_calls"].as_array().unwrap().clone();
            if next.is_empty() {
                assert_eq!(response.meta["truncated"], json!(false));
                break;
            }
            assert_eq!(response.meta["truncated"], json!(true));
            arguments = next[0]["arguments"].clone();
            assert!(pages < 1000, "paging does not advance");
        }
        assert_eq!(collected, expected, "budget {budget}");
        assert!(pages > 1);
    }
}

/// The text face never exceeds `max_tokens`, measured with the same tokenizer.
#[test]
fn token_estimate_is_exact_and_within_max_tokens() {
    let fixture = common::fixture();
    for max_tokens in [64, 110, 111, 130, 333, 1000, 5000] {
        for target in
            ["big.txt", "long_line.txt", "src/main.rs", "crlf.txt", "cr.txt", "latin1.txt", "utf16.txt", "empty.txt"]
        {
            let response =
                fixture.engine.call("read", json!({"mode": "file", "target": target, "max_tokens": max_tokens}));
            if response.error_code() == Some("TOKEN_LIMIT_EXCEEDED") {
                let needed = response.structured_at(loupe_engine::MetadataLevel::Full)["error"]["needed_tokens"]
                    .as_u64()
                    .unwrap();
                assert!(needed as usize > max_tokens, "{}", response.face);
                continue;
            }
            assert!(response.ok, "{}", response.face);
            let counted = loupe_core::tokens::count(&response.face);
            assert_eq!(response.meta["token_estimate"], json!(counted));
            assert!(counted <= max_tokens, "{target} at {max_tokens}: {counted} tokens\n{}", response.face);
        }
    }
}

/// A cursor issued before the file changed is refused with CONFLICT, and the call it offers
/// instead works as it is.
#[test]
fn cursor_on_a_changed_file_is_a_conflict_with_a_working_retry() {
    let fixture = common::fixture();
    let first = fixture.engine.call(
        "read",
        json!({"mode": "snippet", "target": "big.txt", "start_line": 10, "end_line": 40, "max_lines": 5}),
    );
    let next = first.meta["next_calls"][0]["arguments"].clone();
    std::fs::write(fixture.path().join("big.txt"), "changed\n".repeat(50)).unwrap();
    let refused = fixture.engine.call("read", next);
    assert_eq!(refused.error_code(), Some("CONFLICT"));
    let error = refused.structured_at(loupe_engine::MetadataLevel::Full)["error"].clone();
    let issued = first.meta["file_hash"].as_str().unwrap();
    assert_eq!(error["expected_hash_prefix"], json!(issued[..8]));
    assert!(!error["actual_hash"].as_str().unwrap().starts_with(&issued[..8]), "{error}");
    let retry = fixture.engine.call("read", error["next_calls"][0]["arguments"].clone());
    assert!(retry.ok, "{}", retry.face);
    assert_eq!(retry.location.as_ref().unwrap().line, Some(15));
    assert!(retry.face.contains("15 changed"), "{}", retry.face);
}

/// Every `next_calls` entry of every error case is itself a valid call (it may fail for a
/// reason of its own, but never for its arguments' shape).
#[test]
fn error_next_calls_replay_without_argument_errors() {
    let fixture = common::fixture();
    for (name, arguments) in cases() {
        let response = fixture.engine.call("read", arguments);
        for call in response.meta["next_calls"].as_array().unwrap() {
            let replay = fixture.engine.call("read", call["arguments"].clone());
            assert!(replay.ok, "{name}: replaying {call} gave\n{}", replay.face);
        }
    }
}

/// Seed 004's clients spell every parameter in camelCase (`filePath`, `lineRange`, `maxResults`,
/// `dryRun`, `createMissingDirectories`, `ignoreMistakes`): the same parameters, answered the
/// same; the snake_case name and its camelCase spelling together are refused as one parameter.
#[test]
fn camel_case_names_are_the_same_parameters() {
    let fixture = common::fixture();
    let snake =
        fixture.engine.call("read", json!({"mode": "snippet", "file_path": "src/main.rs", "line_range": "6-7"}));
    let camel = fixture.engine.call_in(
        &loupe_engine::CallContext::new("camel"),
        "read",
        json!({"mode": "snippet", "filePath": "src/main.rs", "lineRange": "6-7"}),
    );
    assert!(camel.ok, "{}", camel.face);
    assert_eq!(camel.face, snake.face);
    let search = fixture.engine.call("search", json!({"query": "greet", "type": "text", "maxResults": 1}));
    assert!(search.face.starts_with("hits 1–1 of ") || search.face.starts_with("1 hit\n"), "{}", search.face);
    let edit = fixture.engine.call(
        "edit",
        json!({"dryRun": true, "createMissingDirectories": true, "ignoreMistakes": true,
               "edits": [{"filePath": "new/dir/file.txt", "operation": "create", "content": "x\n"}]}),
    );
    assert!(edit.ok && edit.face.contains("dry run"), "{}", edit.face);
    let both = fixture
        .engine
        .call("read", json!({"mode": "file", "target": "src/main.rs", "maxTokens": 50, "max_tokens": 60}));
    assert_eq!(both.error_code(), Some("INVALID_ARGS"), "{}", both.face);
    let unknown = fixture.engine.call("read", json!({"mode": "file", "target": "src/main.rs", "maxColour": 1}));
    assert!(unknown.face.contains("`maxColour`"), "{}", unknown.face);
}
