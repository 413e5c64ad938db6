//! Arguments an injected agent might send to exhaust the server (findings R5 and R11 in
//! docs/findings.md): every free-text parameter is bounded by the parameter table before anything
//! plans with it, and a refusal never echoes what it refused.

use serde_json::json;

use crate::common::fixture;

/// A multi-megabyte query is refused by its length, at once, without echoing it.
#[test]
fn r5_a_huge_query_is_refused_before_planning() {
    let fixture = fixture();
    for kind in ["text", "regex", "auto", "symbol", "file"] {
        let answer = fixture.engine.call("search", json!({"query": "a".repeat(5_000_000), "type": kind}));
        assert_eq!(answer.error_code(), Some("INVALID_ARGS"), "{kind}: {}", answer.face);
        assert!(answer.face.contains("the limit is 1000"), "{kind}: {}", answer.face);
        assert!(answer.face.len() < 400, "{kind}: the refusal echoes the query ({} bytes)", answer.face.len());
    }
}

/// A long literal within the bound is searched as a literal, never refused as a regex.
#[test]
fn r11_a_long_literal_within_the_bound_is_searched_as_text() {
    let fixture = fixture();
    let literal = format!("{}(", "x".repeat(998));
    let answer = fixture.engine.call("search", json!({"query": literal, "type": "text"}));
    assert!(answer.ok, "{}", answer.face);
    assert!(!answer.face.contains("regex"), "{}", answer.face);
}

/// Every string of every tool has a bound, lists have a bound on their items, and edits
/// on their count.
#[test]
fn r5_every_free_text_argument_is_bounded() {
    let fixture = fixture();
    let long = "p".repeat(5000);
    let calls = [
        ("read", json!({"mode": "file", "target": long})),
        ("read", json!({"mode": "symbol", "target": long})),
        ("search", json!({"query": "greet", "glob": [long]})),
        ("search", json!({"query": "greet", "exclude": vec!["*.rs"; 1001]})),
        ("analyze", json!({"mode": "calls", "target": long})),
        ("manage", json!({"command": "undo", "transaction_id": long})),
        ("edit", json!({"edits": [{"path": long, "operation": "delete"}]})),
        (
            "edit",
            json!({"edits": [{"path": "src/main.rs", "operation": "replace", "old_string": "a".repeat(9 << 20), "new_string": "b"}]}),
        ),
        ("edit", json!({"edits": vec![json!({"path": "src/main.rs", "operation": "delete"}); 1001]})),
    ];
    for (tool, arguments) in calls {
        let answer = fixture.engine.call(tool, arguments);
        assert_eq!(answer.error_code(), Some("INVALID_ARGS"), "{tool}: {}", answer.face);
        assert!(answer.face.contains("the limit is"), "{tool}: {}", answer.face);
        assert!(answer.face.len() < 1000, "{tool}: the refusal echoes its argument ({} bytes)", answer.face.len());
    }
}

/// Found by `fuzz_tool_arguments` (finding R8 in docs/findings.md): a value of the wrong type was
/// echoed whole in the error.
#[test]
fn r8_a_wrong_typed_or_unknown_value_is_not_echoed() {
    let fixture = fixture();
    let big = json!({"": "a".repeat(100_000)});
    for (tool, arguments) in [
        ("read", json!({"mode": big, "target": "src/main.rs"})),
        ("read", json!({"mode": "snippet", "target": "src/main.rs", "line_range": "x".repeat(4000)})),
        ("search", json!({"query": "greet", "max_results": big})),
        ("analyze", json!({"mode": "calls", "target": "greet", "direction": "d".repeat(4000)})),
    ] {
        let answer = fixture.engine.call(tool, arguments);
        assert_eq!(answer.error_code(), Some("INVALID_ARGS"), "{tool}: {}", answer.face);
        assert!(answer.face.len() < 1000, "{tool}: a {}-byte refusal", answer.face.len());
    }
}

/// Finding R10 (docs/findings.md): a file over `max_index_file_bytes` is not in the index, but a
/// text search still finds what it holds (it is scanned), before and after the index is built; a
/// file over the read limit too is named as not searched, never silently missed.
#[test]
fn r10_files_over_the_index_limit_are_searched_or_named() {
    let fixture = crate::common::fixture_with(|config| config.max_index_file_bytes = 200);
    let query = json!({"query": "lazy dog 5", "type": "text", "path": "big.txt"});
    let before = fixture.engine.call("search", query.clone());
    assert!(before.ok && before.face.contains("\nbig.txt\n"), "while building: {}", before.face);
    fixture.engine.refresh_index(&|_, _| {});
    let after = fixture.engine.call("search", query.clone());
    assert!(after.ok && after.face.contains("\nbig.txt\n"), "once built: {}", after.face);
    assert!(after.meta.get("not_searched").is_none(), "{}", after.face);
    // A scan of a file without a filter has the background learner summarise it (a trigram
    // filter keyed by size and mtime): a query it rules out skips the file, and a file changed
    // since is scanned again, so what the change added is found at once.
    let absent = json!({"query": "needle_added_later", "type": "text", "metadata": "full"});
    let none = fixture.engine.call("search", absent.clone());
    assert_eq!(none.meta["total"], json!(0), "{}", none.face);
    let learned = || {
        let metrics = fixture.engine.call("manage", json!({"command": "metrics", "metadata": "full"}));
        metrics.meta["metrics"]["caches"]["oversized_filter_files"].as_u64() >= Some(1)
    };
    wait_until("the learner summarised big.txt", learned);
    let big = fixture.root.path().join("big.txt");
    let mut text = std::fs::read_to_string(&big).unwrap();
    text.push_str("needle_added_later\n");
    std::fs::write(&big, text).unwrap();
    let found = fixture.engine.call("search", absent);
    assert_eq!(found.meta["total"], json!(1), "{}", found.face);

    // The learner writes its filters beside the index once its pass is over.
    let kept = fixture.index_dir.path().join("oversized.bin");
    wait_until("the learner kept its filters", || kept.is_file());

    let fixture = crate::common::fixture_with(|config| {
        config.max_index_file_bytes = 200;
        config.max_file_bytes = 1000;
    });
    fixture.engine.refresh_index(&|_, _| {});
    let answer = fixture.engine.call("search", json!({"query": "lazy dog", "type": "text"}));
    assert!(answer.ok, "{}", answer.face);
    assert!(answer.face.contains("over the 1000-byte read limit were not searched"), "{}", answer.face);
    assert!(answer.meta["not_searched"].as_u64().unwrap() >= 1, "{}", answer.face);
}

/// Across servers: the filters one server made are kept beside the index, and the next
/// server on the same index starts from them instead of summarising the files again (on Linux
/// that is seconds of CPU while the first searches scan 424 MB). A damaged kept file is
/// ignored and the files are summarised again.
#[test]
fn r10_summaries_of_oversized_files_outlive_the_server() {
    let configure = |config: &mut loupe_core::Config| config.max_index_file_bytes = 200;
    let first = crate::common::fixture_with(configure);
    first.engine.refresh_index(&|_, _| {});
    let caches = |engine: &loupe_engine::Engine| {
        engine.call("manage", json!({"command": "metrics", "metadata": "full"})).meta["metrics"]["caches"].clone()
    };
    // A search meets the unsummarised files and starts the learner; wait until it is done.
    let settle = |engine: &loupe_engine::Engine| {
        let search = engine.call("search", json!({"query": "lazy dog", "type": "text"}));
        assert!(search.ok, "{}", search.face);
        wait_until("the learner settled", || {
            let now = caches(engine);
            now["oversized_filter_pending"] == json!(0) && now["oversized_filter_files"].as_u64() >= Some(1)
        });
        caches(engine)
    };
    let made = settle(&first.engine);
    assert!(made["oversized_filters_learned"].as_u64() >= Some(1), "{made}");
    // Written once the learner's pass is over (a moment after its filters answer).
    let kept = first.index_dir.path().join("oversized.bin");
    wait_until("the learner kept its filters", || kept.is_file());

    // Another server on the same root and index, its index built.
    let next_server = || {
        let mut config = crate::common::tool_config(first.root.path(), first.index_dir.path());
        configure(&mut config);
        let engine = loupe_engine::Engine::new(config).unwrap();
        engine.refresh_index(&|_, _| {});
        engine
    };
    let second = next_server();
    // Its first search reads them back itself (not a learner thread, later): when it answers,
    // every file has its filter, and none was summarised.
    let first_search = second.call("search", json!({"query": "needle_nowhere", "type": "text"}));
    assert!(first_search.ok, "{}", first_search.face);
    let at_once = caches(&second);
    assert!(at_once["oversized_filter_files"].as_u64() >= Some(1), "{at_once}");
    assert_eq!(at_once["oversized_filter_pending"], json!(0), "{at_once}");
    let loaded = settle(&second);
    assert_eq!(loaded["oversized_filters_learned"], json!(0), "read back, not summarised again: {loaded}");
    assert_eq!(loaded["oversized_filter_files"], made["oversized_filter_files"], "{loaded}");
    // Filters read back answer as the ones made: a query the file cannot hold finds nothing,
    // one it holds is found.
    let absent = second.call("search", json!({"query": "needle_nowhere", "type": "text", "metadata": "full"}));
    assert_eq!(absent.meta["total"], json!(0), "{}", absent.face);
    let present = second.call("search", json!({"query": "lazy dog 5", "type": "text", "path": "big.txt"}));
    assert!(present.ok && present.face.contains("\nbig.txt\n"), "{}", present.face);

    // Damaged: ignored, and the files summarised again.
    let mut bytes = std::fs::read(&kept).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&kept, bytes).unwrap();
    let third = next_server();
    let again = settle(&third);
    assert!(again["oversized_filters_learned"].as_u64() >= Some(1), "{again}");
}

/// On a loaded index: a server that starts on a persisted index answers from it before
/// its own walk, and it knows the large files from the snapshot. Before, the list came only
/// from this process's walk: until it ended, searches missed what the large files hold and
/// `oversized_filter_pending` said 0 (a benchmark took that server for settled).
#[test]
fn r10_a_loaded_index_searches_its_large_files_before_its_first_walk() {
    let configure = |config: &mut loupe_core::Config| config.max_index_file_bytes = 200;
    let first = crate::common::fixture_with(configure);
    first.engine.refresh_index(&|_, _| {});
    let mut config = crate::common::tool_config(first.root.path(), first.index_dir.path());
    configure(&mut config);
    let engine = loupe_engine::Engine::new(config).unwrap();
    assert!(engine.index().unwrap().load_snapshot(), "the snapshot loads");
    let pending = engine.call("manage", json!({"command": "metrics", "metadata": "full"})).meta["metrics"]["caches"]
        ["oversized_filter_pending"]
        .clone();
    assert!(pending.as_u64() >= Some(1), "nothing summarised yet: {pending}");
    let answer = engine.call("search", json!({"query": "lazy dog 5", "type": "text", "metadata": "full"}));
    assert!(answer.ok && answer.face.contains("\nbig.txt\n"), "{}", answer.face);
    assert_eq!(answer.meta["index_state"], json!("ready"), "{}", answer.face);
}

/// By chunks: once a large file is summarised, a search reads only the chunks of it that
/// can hold a match, and answers exactly as the direct scan of the whole file did (the same
/// hits, line numbers, previews and ids; the ids hold the whole file's hash).
#[test]
fn r10_a_summarised_large_file_is_read_in_chunks_with_the_same_answers() {
    let fixture = crate::common::fixture_with(|config| config.max_index_file_bytes = 200);
    let text: String = (1..=12_000)
        .map(|n| format!("#define REG_{n}_MASK 0x{n:x} // {}\n", if n % 4000 == 7 { "needle_rare" } else { "filler" }))
        .collect();
    assert!(text.len() > 5 * 65_536, "several chunks");
    std::fs::create_dir_all(fixture.root.path().join("gen")).unwrap();
    std::fs::write(fixture.root.path().join("gen/regs.h"), &text).unwrap();
    let queries = [
        json!({"query": "needle_rare", "type": "text"}),
        json!({"query": "REG_11999_MASK", "type": "text"}),
        json!({"query": "reg_5000_mask", "type": "text"}),
        json!({"query": "REG_1[0-9]*7_MASK 0x", "type": "regex", "max_results": 50}),
        json!({"query": "needle_nowhere", "type": "text"}),
    ];
    let answers = |engine: &loupe_engine::Engine| -> Vec<serde_json::Value> {
        queries
            .iter()
            .map(|query| {
                let mut query = query.clone();
                query["path"] = json!("gen/regs.h");
                query["metadata"] = json!("full");
                let answer = engine.call("search", query.clone());
                assert!(answer.ok, "{query}: {}", answer.face);
                json!({"total": answer.meta["total"], "hits": answer.meta["results"]})
            })
            .collect()
    };
    // Before the index is built: every oversized file is scanned whole.
    let whole = answers(&fixture.engine);
    assert_eq!(whole[0]["total"], json!(3), "{}", whole[0]);
    assert_eq!(whole[0]["hits"][0]["line"], json!(7), "{}", whole[0]);
    assert!(whole[3]["total"].as_u64() > Some(20), "{}", whole[3]);
    fixture.engine.refresh_index(&|_, _| {});
    let caches = || {
        fixture.engine.call("manage", json!({"command": "metrics", "metadata": "full"})).meta["metrics"]["caches"]
            .clone()
    };
    assert!(fixture.engine.call("search", json!({"query": "start the learner", "type": "text"})).ok);
    wait_until("the learner settled", || caches()["oversized_filter_pending"] == json!(0));
    let before = caches()["oversized_spans_read"].as_u64().unwrap();
    let in_chunks = answers(&fixture.engine);
    assert_eq!(in_chunks, whole);
    let read = caches()["oversized_spans_read"].as_u64().unwrap() - before;
    // needle_rare: its 3 chunks; the two names: 1 each; the regex: a chunk or more; none for
    // the absent word.
    assert!((6..=12).contains(&read), "{read} spans read");
}

/// Polls `done` every 20 ms until it holds, failing the test after 20 s.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// H7: an unknown parameter or tool name of 1 MB was echoed in a 4.2 MB refusal (16.8 MB for
/// 4 MB). Names are quoted bounded, and a refusal lists a few of many.
#[test]
fn h7_an_unknown_name_is_never_echoed_whole() {
    let fixture = fixture();
    let huge = "x".repeat(1 << 20);
    let mut arguments = json!({"mode": "file", "target": "src/main.rs"});
    arguments[huge.as_str()] = json!(1);
    for n in 0..10_000 {
        arguments[format!("extra_{n}")] = json!(n);
    }
    let refused = fixture.engine.call("read", arguments);
    assert_eq!(refused.error_code(), Some("INVALID_ARGS"));
    let structured = serde_json::to_string(&refused.structured_at(loupe_engine::MetadataLevel::Full)).unwrap();
    assert!(refused.face.len() < 8_000 && structured.len() < 16_000, "{} / {}", refused.face.len(), structured.len());
    assert!(refused.face.contains("more"), "{}", refused.face);
    let unknown_tool = fixture.engine.call(&huge, json!({}));
    assert_eq!(unknown_tool.error_code(), Some("INVALID_ARGS"));
    assert!(unknown_tool.face.len() < 4_000, "{}", unknown_tool.face.len());
}
