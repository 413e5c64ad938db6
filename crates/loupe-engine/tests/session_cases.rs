//! The session layer (§9) at the engine boundary: scripted sequences of calls in one session,
//! each recorded as a transcript snapshot (the face the model reads, then the decisions of
//! `meta.stabilization`), plus exact checks: metrics after a fixed sequence, deterministic
//! ids, refs refused across sessions, reason-code order, replayable refusals, strict ids.

use crate::common;

use loupe_core::config::{GateMode, RelevanceMode};
use loupe_engine::{CallContext, Engine, Response};
use serde_json::{Value, json};

/// One session's transcript: every call with its face and its stabilization decisions.
struct Transcript<'a> {
    fixture: &'a common::Fixture,
    context: CallContext,
    text: String,
}

impl<'a> Transcript<'a> {
    fn new(fixture: &'a common::Fixture) -> Transcript<'a> {
        Transcript { fixture, context: CallContext::new("transcript"), text: String::new() }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Response {
        let response = self.fixture.engine.call_in(&self.context, tool, arguments.clone());
        self.text.push_str(&format!(">>> {tool} {arguments}\n{}", response.face));
        let meta = &response.meta;
        let stabilization = meta.get("stabilization").unwrap_or(&Value::Null);
        let mut decisions = json!({
            "budget_state": stabilization["budget_state"],
            "suggested_next_action": stabilization["suggested_next_action"],
            "reason_codes": stabilization["reason_codes"],
        });
        for key in ["warnings", "alternatives", "context_bundle_id", "bundle_items"] {
            match &stabilization[key] {
                Value::Null => {}
                Value::Array(items) if items.is_empty() => {}
                value => decisions[key] = value.clone(),
            }
        }
        if let Some(elided) = meta.get("elided") {
            decisions["elided"] = elided.clone();
        }
        if let Some(context) = response.structured_at(loupe_engine::MetadataLevel::Full)["error"].get("gate_context") {
            decisions["gate_context"] = context.clone();
        }
        self.text.push_str(&format!("··· {decisions}\n\n"));
        response
    }

    /// A call whose answer only the transcript needs.
    fn step(&mut self, tool: &str, arguments: Value) {
        let _ = self.call(tool, arguments);
    }

    fn snapshot(&self, name: &str) {
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.set_snapshot_path("snapshots/session");
        // Session keys hold the temporary root's workspace hash.
        let hash = loupe_core::path::workspace_hash(self.fixture.engine.root_path());
        let text = self.fixture.redact(&self.text).replace(&hash, "<WORKSPACE_HASH>");
        // The index's size on disk depends on what the session's calls logged.
        let on_disk = regex::Regex::new(r"· [0-9.]+ [kMG]B on disk").unwrap();
        let text = on_disk.replace_all(&text, "· <SIZE> on disk");
        settings.bind(|| insta::assert_snapshot!(name, text));
    }
}

fn first_candidate(response: &Response, path: &str) -> String {
    response.meta["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|hit| hit["path"] == path)
        .map(|hit| hit["candidate_id"].as_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("no hit in {path}:\n{}", response.face))
}

/// §9.7: blocked without a ref, a precision read up to 200 lines allowed, refs from a search
/// open the gate, a ref for another target is CANDIDATE_REF_REQUIRED.
#[test]
fn gate_blocks_without_a_ref_and_allows_precision_reads() {
    let fixture = common::session_fixture(|_| {});
    let mut t = Transcript::new(&fixture);
    let refused = t.call("read", json!({"mode": "file", "target": "src/main.rs"}));
    assert_eq!(refused.error_code(), Some("SEARCH_FIRST_REQUIRED"));
    let outline = t.call("read", json!({"mode": "outline", "target": "src/main.rs"}));
    assert!(outline.ok, "an outline is not a whole-file read: {}", outline.face);
    let by_name = t.call("read", json!({"mode": "symbol", "target": "greet"}));
    assert!(by_name.ok, "an exact name is not an aimless read: {}", by_name.face);
    let precise = t.call("read", json!({"mode": "snippet", "target": "big.txt", "start_line": 1, "end_line": 200}));
    assert!(precise.ok, "a 200-line window passes");
    let wide = t.call("read", json!({"mode": "snippet", "target": "big.txt", "start_line": 300, "end_line": 500}));
    assert_eq!(wide.error_code(), Some("SEARCH_FIRST_REQUIRED"), "201 lines do not");
    t.step("read", json!({"mode": "file", "target": "big.txt", "offset": 600, "limit": 150}));
    let search = t.call("search", json!({"query": "greet"}));
    let returned = t.call("read", json!({"mode": "file", "target": "src/main.rs"}));
    assert!(returned.ok, "a file the search returned reads by its path: {}", returned.face);
    let no_ref = t.call("read", json!({"mode": "file", "target": "big.txt"}));
    assert_eq!(no_ref.error_code(), Some("SEARCH_REF_REQUIRED"), "{}", no_ref.face);
    let candidate = first_candidate(&search, "src/main.rs");
    let with_ref = t.call("read", json!({"mode": "file", "target": "src/main.rs", "candidate_id": candidate}));
    assert!(with_ref.ok, "{}", with_ref.face);
    let mismatch = t.call("read", json!({"mode": "file", "target": "dir/a.rs", "candidate_id": candidate}));
    assert_eq!(mismatch.error_code(), Some("CANDIDATE_REF_REQUIRED"));
    let copied = search.meta["next_calls"][0]["arguments"].clone();
    assert!(t.call("read", copied).ok, "a copied next_calls entry passes");
    let bundle = search.meta["bundle_id"].clone();
    assert!(t.call("read", json!({"mode": "outline", "target": "src/main.rs", "bundle_id": bundle})).ok);
    let bundle_mismatch = t.call("read", json!({"mode": "outline", "target": "dir", "bundle_id": bundle}));
    assert_eq!(bundle_mismatch.error_code(), Some("CANDIDATE_REF_REQUIRED"));
    t.step("read", json!({"mode": "diff_preview", "target": "src/main.rs"}));
    t.snapshot("gate_enforce");
}

/// §9.7: `warn` lets the read through with the same reason code and one footer line; `off`
/// says nothing.
#[test]
fn gate_warn_and_off() {
    let fixture = common::session_fixture(|config| config.gate_mode = GateMode::Warn);
    let mut t = Transcript::new(&fixture);
    let warned = t.call("read", json!({"mode": "file", "target": "dir/a.rs"}));
    assert!(warned.ok);
    assert_eq!(warned.meta["reason_codes"], json!(["SEARCH_FIRST_REQUIRED"]));
    assert!(warned.face.contains("── session [SEARCH_FIRST_REQUIRED]: search first"), "{}", warned.face);
    t.snapshot("gate_warn");

    let fixture = common::session_fixture(|config| config.gate_mode = GateMode::Off);
    let silent = fixture.engine.call("read", json!({"mode": "file", "target": "dir/a.rs"}));
    assert!(silent.ok);
    assert_eq!(silent.meta["reason_codes"], json!([]));
    assert!(!silent.face.contains("── session"), "{}", silent.face);
}

/// §9.7: every refusal's next_calls pass when replayed as they are, in the same session.
#[test]
fn replaying_the_next_calls_of_every_refusal_succeeds() {
    let fixture = common::session_fixture(|_| {});
    let engine = &fixture.engine;
    let refusals = [
        json!({"mode": "file", "target": "big.txt"}),
        json!({"mode": "snippet", "target": "big.txt", "start_line": 100, "end_line": 400}),
        json!({"mode": "file", "target": "big.txt", "offset": 10, "limit": 250}),
    ];
    for (round, search_first) in [false, true].into_iter().enumerate() {
        for (index, arguments) in refusals.iter().enumerate() {
            let context = CallContext::new(format!("replay-{round}-{index}"));
            if search_first {
                assert!(engine.call_in(&context, "search", json!({"query": "greet"})).ok);
            }
            let refused = engine.call_in(&context, "read", arguments.clone());
            assert!(!refused.ok, "{arguments} should be refused:\n{}", refused.face);
            let calls = refused.meta["next_calls"].as_array().unwrap().clone();
            assert!(!calls.is_empty(), "{arguments}: a refusal without next_calls");
            for call in calls {
                let replay = engine.call_in(&context, call["tool"].as_str().unwrap(), call["arguments"].clone());
                assert!(replay.ok, "{arguments}: replaying {call} gave\n{}", replay.face);
            }
        }
    }
    // The fixes `read` itself offers (a suggested path) replay under the gate too.
    let context = CallContext::new("replay-read-errors");
    let missing =
        engine.call_in(&context, "read", json!({"mode": "snippet", "target": "src/mian.rs", "start_line": 1}));
    assert_eq!(missing.error_code(), Some("FILE_NOT_FOUND"));
    let unavailable = engine.call_in(&context, "read", json!({"mode": "diff_preview", "target": "src/main.rs"}));
    for response in [missing, unavailable] {
        for call in response.meta["next_calls"].as_array().unwrap() {
            let replay = engine.call_in(&context, "read", call["arguments"].clone());
            assert!(replay.ok, "replaying {call} gave\n{}", replay.face);
        }
    }
    // A ref for another target: the calls it offers pass too.
    let context = CallContext::new("replay-mismatch");
    let search = engine.call_in(&context, "search", json!({"query": "greet"}));
    let candidate = first_candidate(&search, "src/main.rs");
    let refused =
        engine.call_in(&context, "read", json!({"mode": "file", "target": "dir/a.rs", "candidate_id": candidate}));
    assert_eq!(refused.error_code(), Some("CANDIDATE_REF_REQUIRED"));
    for call in refused.meta["next_calls"].as_array().unwrap() {
        let replay = engine.call_in(&context, call["tool"].as_str().unwrap(), call["arguments"].clone());
        assert!(replay.ok, "replaying {call} gave\n{}", replay.face);
    }
}

/// §9.4: per-read ceilings clamp (soft), session limits refuse (hard) with a search to run,
/// and a warning comes at 80%.
#[test]
fn budget_soft_and_hard_limits() {
    let fixture = common::session_fixture(|config| {
        config.gate_mode = GateMode::Off;
        config.max_reads_per_session = 5;
        config.max_total_read_lines = 2500;
    });
    let mut t = Transcript::new(&fixture);
    let soft = t.call("read", json!({"mode": "file", "target": "src/main.rs", "limit": 5000}));
    assert_eq!(soft.meta["stabilization"]["budget_state"], json!("SOFT_LIMIT"));
    assert!(soft.meta["reason_codes"].as_array().unwrap().contains(&json!("BUDGET_SOFT_LIMIT")));
    for line in [1, 2, 3] {
        assert!(t.call("read", json!({"mode": "snippet", "target": "big.txt", "start_line": line})).ok);
    }
    let last = t.call("read", json!({"mode": "snippet", "target": "dir/b.rs", "start_line": 1}));
    assert_eq!(last.meta["stabilization"]["budget_state"], json!("HARD_LIMIT"));
    let hard = t.call("read", json!({"mode": "snippet", "target": "dir/b.rs", "start_line": 1}));
    assert_eq!(hard.error_code(), Some("BUDGET_EXCEEDED"));
    assert_eq!(hard.meta["reason_codes"], json!(["BUDGET_HARD_LIMIT"]));
    assert_eq!(hard.meta["next_calls"][0]["tool"], json!("search"));
    assert!(t.call("search", json!({"query": "greet"})).ok, "search is never budget-blocked");
    assert!(t.call("manage", json!({"command": "status"})).ok, "manage is never budget-blocked");
    t.snapshot("budget_reads");

    let fixture = common::session_fixture(|config| {
        config.gate_mode = GateMode::Off;
        config.max_total_read_lines = 100;
    });
    let mut t = Transcript::new(&fixture);
    t.step("read", json!({"mode": "snippet", "target": "big.txt", "start_line": 1, "end_line": 70}));
    t.step("read", json!({"mode": "snippet", "target": "big.txt", "start_line": 71, "end_line": 140}));
    let refused = t.call("read", json!({"mode": "snippet", "target": "big.txt", "start_line": 141, "end_line": 150}));
    assert_eq!(refused.error_code(), Some("BUDGET_EXCEEDED"));
    t.snapshot("budget_lines");
}

/// §9.5: a read inside the last searches' top 10 is a hit; outside, a soft warning with up to
/// 3 alternatives; excluded trees are not judged; `block` refuses.
#[test]
fn relevance_hit_and_miss() {
    let fixture = common::session_fixture(|config| config.gate_mode = GateMode::Off);
    std::fs::create_dir_all(fixture.path().join("node_modules/pkg")).unwrap();
    std::fs::write(fixture.path().join("node_modules/pkg/index.js"), "module.exports = 1;\n").unwrap();
    let mut t = Transcript::new(&fixture);
    t.step("read", json!({"mode": "snippet", "target": "dir/a.rs", "start_line": 1}));
    t.step("search", json!({"query": "greet"}));
    let hit = t.call("read", json!({"mode": "snippet", "target": "./src//main.rs", "start_line": 6}));
    assert!(hit.meta["stabilization"].get("alternatives").is_none(), "normalised paths match");
    let miss = t.call("read", json!({"mode": "snippet", "target": "dir/b.rs", "start_line": 1}));
    assert_eq!(miss.meta["stabilization"]["alternatives"][0]["path"], json!("src/main.rs"));
    assert!(miss.face.contains("LOW_RELEVANCE_OUTSIDE_TOPK"), "{}", miss.face);
    let vendor = t.call("read", json!({"mode": "snippet", "target": "node_modules/pkg/index.js", "start_line": 1}));
    assert!(!vendor.meta["reason_codes"].as_array().unwrap().contains(&json!("LOW_RELEVANCE_OUTSIDE_TOPK")));
    t.snapshot("relevance_warn");

    let fixture = common::session_fixture(|config| {
        config.gate_mode = GateMode::Off;
        config.relevance = RelevanceMode::Block;
    });
    let mut t = Transcript::new(&fixture);
    t.step("search", json!({"query": "greet"}));
    let blocked = t.call("read", json!({"mode": "snippet", "target": "dir/b.rs", "start_line": 1}));
    assert_eq!(blocked.error_code(), Some("CANDIDATE_REF_REQUIRED"));
    for call in blocked.meta["next_calls"].as_array().unwrap() {
        let replay = t.call(call["tool"].as_str().unwrap(), call["arguments"].clone());
        assert!(replay.ok, "{}", replay.face);
    }
    t.snapshot("relevance_block");
}

/// §9.6: unchanged lines are not sent twice, overlaps send only the new part, `fresh` and a
/// changed file send everything; the output is the same bytes on every run.
#[test]
fn aggregation_is_deduplicated_and_stable() {
    let run = || {
        let fixture = common::session_fixture(|config| config.gate_mode = GateMode::Off);
        let mut t = Transcript::new(&fixture);
        let window = |first: usize, last: usize| json!({"mode": "snippet", "target": "big.txt", "start_line": first, "end_line": last});
        let first = t.call("read", window(10, 20));
        let again = t.call("read", window(10, 20));
        assert!(again.face.contains("── lines 10–20 unchanged since read #1"), "{}", again.face);
        assert_eq!(again.content.as_deref(), Some(""));
        let overlap = t.call("read", window(15, 25));
        assert_eq!(overlap.location.as_ref().unwrap().line, Some(15));
        assert!(overlap.face.contains("21 line 21"), "{}", overlap.face);
        assert!(!overlap.face.contains("20 line 20"), "{}", overlap.face);
        let fresh = t.call(
            "read",
            json!({"mode": "snippet", "target": "big.txt", "start_line": 10, "end_line": 20, "fresh": true}),
        );
        assert_eq!(fresh.content, first.content);
        t.step("read", window(5, 30));
        std::fs::write(fixture.path().join("big.txt"), (1..=50).map(common::big_line).collect::<String>() + "tail\n")
            .unwrap();
        let changed = t.call("read", window(10, 20));
        assert!(!changed.face.contains("unchanged"), "a changed file is sent anew:\n{}", changed.face);
        let metrics = t.call("manage", json!({"command": "metrics"}));
        let saved = metrics.meta["metrics"]["session"]["metrics"]["tokens_saved_estimate"].as_u64().unwrap();
        assert!(saved > 0);
        fixture.redact(&t.text)
    };
    // The manage line names the session key, which holds the temporary root's hash.
    let stable = |text: String| -> String {
        text.lines().filter(|line| !line.starts_with("session ws:")).map(|line| format!("{line}\n")).collect()
    };
    let once = stable(run());
    assert_eq!(once, stable(run()), "aggregation output is deterministic");
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/session");
    settings.bind(|| insta::assert_snapshot!("aggregation", once));
}

/// §9.3: after a fixed sequence, every metric is exact.
#[test]
fn metrics_are_exact_after_a_fixed_sequence() {
    let fixture = common::session_fixture(|_| {});
    let engine = &fixture.engine;
    let context = CallContext::new("metrics");
    let calls = [
        ("read", json!({"mode": "snippet", "target": "big.txt", "start_line": 1, "end_line": 10})),
        ("read", json!({"mode": "file", "target": "src/main.rs"})), // refused: not counted
        ("search", json!({"query": "greet"})),
        ("read", json!({"mode": "snippet", "target": "big.txt", "start_line": 6, "end_line": 15})),
        ("read", json!({"mode": "file", "target": "big.txt", "offset": 1, "limit": 400})), // 201+ lines: refused
        ("read", json!({"mode": "file", "target": "big.txt", "offset": 991, "limit": 10, "max_preview_chars": 100})),
        ("search", json!({"query": "nothing_matches_this_xyz"})),
    ];
    let mut responses = Vec::new();
    for (tool, arguments) in calls {
        responses.push(engine.call_in(&context, tool, arguments));
    }
    let oks: Vec<bool> = responses.iter().map(|response| response.ok).collect();
    assert_eq!(oks, [true, false, true, true, false, true, true]);
    let last_read = &responses[5];
    let metrics = responses[6].meta["stabilization"]["metrics_snapshot"].clone();
    let tokens: u64 = [0, 3, 5].iter().map(|i| responses[*i].meta["token_estimate"].as_u64().unwrap()).sum();
    let chars: u64 = [0, 3, 5].iter().map(|i| responses[*i].face.chars().count() as u64).sum();
    let lines_last = last_read.location.as_ref().unwrap().end_line.unwrap() - 990;
    assert_eq!(last_read.meta["preview_degraded"], json!(false), "a caller cap is not a degradation");
    assert_eq!(
        metrics,
        json!({
            "reads_count": 3,
            "reads_lines_total": 10 + 5 + lines_last,
            "reads_chars_total": chars,
            "reads_tokens_total": tokens,
            "search_count": 2,
            "read_after_search_ratio": 0.667,
            "avg_read_span": ((10 + 10 + lines_last) as f64 / 3.0 * 1000.0).round() / 1000.0,
            "max_read_span": 10,
            "preview_degraded_count": 0,
            "tokens_saved_estimate": responses[3].meta["stabilization"]["metrics_snapshot"]["tokens_saved_estimate"],
        })
    );
    assert!(metrics["tokens_saved_estimate"].as_u64().unwrap() > 0, "lines 6–10 were not sent twice");
}

/// §6, §9.7: the same search gives the same candidate and bundle ids in any engine.
#[test]
fn candidate_and_bundle_ids_are_deterministic() {
    let ids = |engine: &Engine, context: &str| {
        let response = engine.call_in(&CallContext::new(context), "search", json!({"query": "greet"}));
        let candidates: Vec<Value> =
            response.meta["results"].as_array().unwrap().iter().map(|hit| hit["candidate_id"].clone()).collect();
        (candidates, response.meta["bundle_id"].clone())
    };
    let one = common::session_fixture(|_| {});
    let two = common::session_fixture(|_| {});
    let first = ids(&one.engine, "a");
    assert!(!first.0.is_empty());
    assert_eq!(first, ids(&one.engine, "b"));
    assert_eq!(first, ids(&two.engine, "c"), "ids do not depend on the root's location");
}

/// §9.1, §9.7: refs are per session: another session_id, or another connection, is refused.
#[test]
fn ids_from_one_session_are_refused_in_another() {
    let fixture = common::session_fixture(|_| {});
    let engine = &fixture.engine;
    let connection = CallContext::new("one");
    let search = engine.call_in(&connection, "search", json!({"query": "greet", "session_id": "a"}));
    let candidate = first_candidate(&search, "src/main.rs");
    let read = |context: &CallContext, session: Option<&str>| {
        let mut arguments = json!({"mode": "file", "target": "src/main.rs", "candidate_id": candidate});
        if let Some(session) = session {
            arguments["session_id"] = json!(session);
        }
        engine.call_in(context, "read", arguments)
    };
    assert!(read(&connection, Some("a")).ok);
    assert!(read(&CallContext::new("two"), Some("a")).ok, "a session_id names the session across connections");
    let other = read(&connection, Some("b"));
    assert_eq!(other.error_code(), Some("SEARCH_FIRST_REQUIRED"));
    assert!(other.face.contains("was not issued to this session"), "{}", other.face);
    assert_eq!(read(&connection, None).error_code(), Some("SEARCH_FIRST_REQUIRED"), "the connection's own session");
    let _ = engine.call_in(&connection, "search", json!({"query": "main"}));
    assert_eq!(read(&connection, None).error_code(), Some("SEARCH_REF_REQUIRED"));

    // Refs are valid for the session's last 20 searches.
    for index in 0..19 {
        let _ = engine.call_in(&connection, "search", json!({"query": format!("nothing_{index}"), "session_id": "a"}));
    }
    assert!(read(&connection, Some("a")).ok, "the search that issued it is the 20th most recent");
    let _ = engine.call_in(&connection, "search", json!({"query": "nothing_more", "session_id": "a"}));
    let expired = read(&connection, Some("a"));
    assert_eq!(expired.error_code(), Some("SEARCH_REF_REQUIRED"), "{}", expired.face);
    assert!(expired.face.contains("older than its last 20 searches"), "{}", expired.face);
}

/// §9.9: reason codes come in the enum's fixed order and the same run gives the same codes.
#[test]
fn reason_codes_are_deterministic_and_ordered() {
    let run = || {
        let fixture = common::session_fixture(|config| {
            config.gate_mode = GateMode::Warn;
            config.max_preview_chars = 400;
        });
        let context = CallContext::new("codes");
        let calls = [
            ("read", json!({"mode": "file", "target": "big.txt", "limit": 5000})),
            ("search", json!({"query": "no_such_thing_anywhere"})),
            ("search", json!({"query": "greet"})),
            ("read", json!({"mode": "file", "target": "big.txt", "limit": 5000, "max_preview_chars": 90000})),
            ("read", json!({"mode": "snippet", "target": "big.txt", "start_line": 1, "end_line": 2})),
        ];
        calls
            .iter()
            .map(|(tool, arguments)| {
                let response = fixture.engine.call_in(&context, tool, arguments.clone());
                assert_eq!(response.meta["reason_codes"], response.meta["stabilization"]["reason_codes"]);
                response.meta["reason_codes"].clone()
            })
            .collect::<Vec<Value>>()
    };
    let codes = run();
    assert_eq!(codes, run());
    for list in &codes {
        let positions: Vec<usize> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|code| common::REASON_ORDER.iter().position(|known| *known == code.as_str().unwrap()).unwrap())
            .collect();
        assert!(positions.windows(2).all(|pair| pair[0] < pair[1]), "{list}");
    }
    assert_eq!(
        codes,
        [
            json!(["SEARCH_FIRST_REQUIRED", "BUDGET_SOFT_LIMIT", "PREVIEW_DEGRADED"]),
            json!(["NO_MATCH"]),
            json!([]),
            json!([
                "SEARCH_REF_REQUIRED",
                "BUDGET_SOFT_LIMIT",
                "LOW_RELEVANCE_OUTSIDE_TOPK",
                "PREVIEW_DEGRADED",
                "DUPLICATE_READ_ELIDED",
                "LOW_RELEVANCE"
            ]),
            json!(["LOW_RELEVANCE_OUTSIDE_TOPK", "DUPLICATE_READ_ELIDED", "LOW_RELEVANCE"]),
        ]
    );
}

/// §9.1: with `strict_session_id`, calls without one are refused with a call that passes.
#[test]
fn strict_session_ids() {
    let fixture = common::session_fixture(|config| config.strict_session_id = true);
    let mut t = Transcript::new(&fixture);
    for (tool, arguments) in [
        ("search", json!({"query": "greet"})),
        ("read", json!({"mode": "snippet", "target": "src/main.rs", "start_line": 6, "end_line": 8})),
        ("read", json!({"mode": "file", "target": "src/main.rs"})),
    ] {
        let refused = t.call(tool, arguments.clone());
        assert_eq!(refused.error_code(), Some("SESSION_ID_REQUIRED"));
        assert_eq!(refused.meta["reason_codes"], json!(["SESSION_ID_REQUIRED"]));
        for call in refused.meta["next_calls"].as_array().unwrap() {
            assert_eq!(call["arguments"]["session_id"], json!("main"));
            let replay = t.call(call["tool"].as_str().unwrap(), call["arguments"].clone());
            assert!(replay.ok, "{}", replay.face);
        }
    }
    let unknown = t.call("read", json!({"mode": "file", "target": "src/main.rs", "colour": "red"}));
    assert_eq!(unknown.error_code(), Some("INVALID_ARGS"), "argument errors come first");
    t.snapshot("strict_session_id");
}

/// §8.3: `manage` reports the session and the registry; later commands are not faked.
#[test]
fn manage_status_metrics_guidance() {
    let fixture = common::session_fixture(|_| {});
    let engine = &fixture.engine;
    let _ = engine.call("search", json!({"query": "greet"}));
    let status = engine.call("manage", json!({"command": "status"}));
    assert!(status.ok, "{}", status.face);
    assert_eq!(status.meta["status"]["session"]["metrics"]["search_count"], json!(1));
    assert_eq!(status.meta["status"]["policy"]["gate_mode"], json!("enforce"));
    let metrics = engine.call("manage", json!({"command": "metrics"}));
    assert_eq!(metrics.meta["metrics"]["analytics"]["drop_count_by_type"], json!({}));
    let guidance = engine.call("manage", json!({"command": "guidance"}));
    assert!(guidance.face.contains("SEARCH_FIRST_REQUIRED (block)"), "{}", guidance.face);
    assert_eq!(guidance.meta["guidance"]["reason_registry"]["core"].as_array().unwrap().len(), 7);
    let reindex = engine.call("manage", json!({"command": "reindex"}));
    assert!(reindex.ok && reindex.face.starts_with("reindex · "), "{}", reindex.face);
    // The journal's commands answer for real, and are never gated or budgeted.
    assert!(engine.call("manage", json!({"command": "history"})).ok);
    assert!(engine.call("manage", json!({"command": "undo"})).face.contains("nothing to undo"));
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/session");
    settings.bind(|| insta::assert_snapshot!("manage_guidance", guidance.face));
}

/// §9.2: a full analytics queue drops the newest events and counts them by type, the same
/// way on every run; the calls themselves are never slowed or refused.
#[test]
fn analytics_overflow_drop_counts_are_deterministic() {
    let run = || {
        let mut fixture = common::session_fixture(|config| config.analytics = true);
        fixture.engine.park_analytics_for_tests(3);
        let engine = &fixture.engine;
        let calls = [
            ("search", json!({"query": "greet"})),
            ("read", json!({"mode": "snippet", "target": "src/main.rs", "start_line": 1})),
            ("read", json!({"mode": "file", "target": "src/main.rs"})),
            ("read", json!({"mode": "snippet", "target": "src/main.rs", "start_line": 2})),
            ("search", json!({"query": "main"})),
            ("read", json!({"mode": "snippet", "target": "src/main.rs", "start_line": 3})),
            ("read", json!({"mode": "file", "target": "dir/a.rs"})),
        ];
        for (tool, arguments) in calls {
            let _ = engine.call(tool, arguments);
        }
        let metrics = engine.call("manage", json!({"command": "metrics"}));
        metrics.meta["metrics"]["analytics"].clone()
    };
    let counters = run();
    assert_eq!(counters["enqueued"], json!(3));
    assert_eq!(counters["drop_count_by_type"], json!({"read": 2, "refusal": 1, "search": 1}));
    assert_eq!(counters, run());
}

/// §9.4: the budget steers, it never ends a session. A scripted session of 500 reads across 60
/// searches, at the default limits and gate, reads in bursts (some longer than the allowance).
/// Every refusal is followed the way an agent would: its `next_calls` in order, and the next
/// calls of any refusal on the way. Each chain ends in a served read, and the session is still
/// served at the end.
#[test]
fn a_long_session_never_dead_ends() {
    let fixture = common::session_fixture(|_| {});
    let context = CallContext::new("long");
    let call = |tool: &str, arguments: Value| fixture.engine.call_in(&context, tool, arguments);
    let queries = ["greet", "main", "line", "fox", "alpha", "fn", "quick", "dog"];
    let (mut reads, mut served, mut budget_refusals, mut searches) = (0, 0, 0, 0);
    while reads < 500 {
        let query = queries[searches % queries.len()];
        let search = call("search", json!({"query": query, "type": "text"}));
        searches += 1;
        assert!(search.ok, "{}", search.face);
        let offered: Vec<Value> = search.meta["next_calls"].as_array().cloned().unwrap_or_default();
        // A burst: the offered reads, then windows of big.txt; every tenth burst runs long.
        let burst = if searches % 10 == 0 { 35 } else { 5 };
        for index in 0..burst {
            if reads >= 500 {
                break;
            }
            let arguments = match offered.get(index) {
                Some(call) => call["arguments"].clone(),
                None => {
                    json!({"mode": "snippet", "target": "big.txt", "start_line": 1 + (reads * 7) % 900, "end_line": 10 + (reads * 7) % 900})
                }
            };
            reads += 1;
            let answer = call("read", arguments);
            if answer.ok {
                served += 1;
                continue;
            }
            if answer.error_code() == Some("BUDGET_EXCEEDED") {
                budget_refusals += 1;
            }
            assert!(
                follow(&call, &answer, 0),
                "a refusal's next calls did not lead to a served read:\n{}",
                answer.face
            );
            served += 1;
        }
    }
    assert!(searches >= 60, "only {searches} searches");
    assert!(budget_refusals > 0, "the script never reached the allowance, so it tested nothing");
    assert_eq!(served, 500);
    let status = call("manage", json!({"command": "status"}));
    assert!(status.face.contains("left until a search"), "{}", status.face);
    assert!(call("read", json!({"mode": "snippet", "target": "big.txt", "start_line": 1, "end_line": 2})).ok);
}

/// Replays a refusal's next calls in order, following refusals on the way; true once a read
/// is served.
fn follow(call: &dyn Fn(&str, Value) -> Response, refusal: &Response, depth: usize) -> bool {
    assert!(depth < 4, "refusals chain too deep:\n{}", refusal.face);
    for next in refusal.error.as_ref().map(|error| error.next_calls.clone()).unwrap_or_default() {
        let answer = call(&next.tool, Value::Object(next.arguments.clone()));
        match (next.tool.as_str(), answer.ok) {
            ("read", true) => return true,
            (_, true) => continue,
            (_, false) => return follow(call, &answer, depth + 1),
        }
    }
    false
}

/// §9.6: only lines sent recently are elided (within `dedup_window_tokens` of reads); older
/// lines are sent again, so a model whose client compacted its context is never pointed at lines
/// it no longer holds. The same scripted re-reading session under several windows: the
/// tokens it saves grow with the window, and a line older than the window is always resent.
#[test]
fn de_duplication_elides_only_what_was_sent_recently() {
    let mut saved_by_window = Vec::new();
    for window in [1, 300, 3_000, 1_000_000] {
        let fixture = common::session_fixture(|config| {
            config.gate_mode = GateMode::Off;
            config.dedup_window_tokens = window;
        });
        let context = CallContext::new("window");
        let call = |arguments: Value| fixture.engine.call_in(&context, "read", arguments);
        let snippet =
            |start: usize| json!({"mode": "snippet", "target": "big.txt", "start_line": start, "end_line": start + 9});
        let first = call(snippet(1));
        assert!(first.face.contains("1 line 1:"), "{}", first.face);
        // Other reads in between: about 150 tokens each.
        for start in (100..1000).step_by(100) {
            assert!(call(snippet(start)).ok);
        }
        let again = call(snippet(1));
        let elided = again.face.contains("── lines 1–10 unchanged since read #1 (fresh: true resends)");
        assert_eq!(elided, window >= 3_000, "window {window}: {}", again.face);
        assert_eq!(again.face.contains("1 line 1:"), !elided, "{}", again.face);
        // Right away, the lines just sent are recent under any window but the smallest.
        let third = call(snippet(1));
        assert_eq!(third.face.contains("unchanged since read #"), window > 1, "window {window}: {}", third.face);
        let status = fixture.engine.call_in(&context, "manage", json!({"command": "metrics"}));
        let saved = status.meta["metrics"]["session"]["metrics"]["tokens_saved_estimate"].as_u64().unwrap();
        saved_by_window.push((window, saved));
    }
    eprintln!("tokens saved by window: {saved_by_window:?}");
    assert!(saved_by_window.windows(2).all(|pair| pair[0].1 <= pair[1].1), "{saved_by_window:?}");
    assert!(saved_by_window[0].1 < saved_by_window[3].1);
}

/// H6: a cursor passed the search → read gate whatever its origin, so a session that never
/// searched read 300 lines of any file with a hand-made or borrowed `cursor`. A cursor now
/// passes only in the session it was issued to, for its target.
#[test]
fn h6_a_cursor_passes_the_gate_only_in_the_session_it_was_issued_to() {
    let fixture = common::session_fixture(|_| {});
    let issued_to = CallContext::new("reader");
    let found = fixture.engine.call_in(&issued_to, "search", json!({"query": "line 500", "type": "text"}));
    let candidate = first_candidate(&found, "big.txt");
    let cut = fixture.engine.call_in(
        &issued_to,
        "read",
        json!({"mode": "file", "target": "big.txt", "candidate_id": candidate}),
    );
    assert!(cut.ok, "{}", cut.face);
    let cursor = cut.structured()["next_cursor"].as_str().expect("a cut read of big.txt has a cursor").to_owned();
    let continued = json!({"mode": "file", "target": "big.txt", "cursor": cursor});

    let stranger = CallContext::new("stranger");
    let borrowed = fixture.engine.call_in(&stranger, "read", continued.clone());
    assert_eq!(borrowed.error_code(), Some("SEARCH_FIRST_REQUIRED"), "{}", borrowed.face);
    let numbered = |line: &str| {
        line.split_once(' ').is_some_and(|(number, text)| number.parse::<usize>().is_ok() && text.starts_with("line"))
    };
    assert!(!borrowed.face.lines().any(numbered), "{}", borrowed.face);
    let elsewhere = json!({"mode": "file", "target": "src/main.rs", "cursor": cursor});
    let moved = fixture.engine.call_in(&issued_to, "read", elsewhere);
    assert!(!moved.ok, "a cursor issued for big.txt read src/main.rs: {}", moved.face);

    let own = fixture.engine.call_in(&issued_to, "read", continued);
    assert!(own.ok, "{}", own.face);
}

/// §9.7: every next call any tool issues passes the gate as it is, the gate's own recovery
/// search names the whole path, and a file that is not there is the read's to answer.
#[test]
fn next_calls_of_every_tool_pass_the_gate_and_a_missing_file_is_not_gated() {
    let fixture = common::session_fixture(|_| {});
    let engine = &fixture.engine;
    let root = engine.root_path().to_path_buf();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::write(root.join("pkg/__init__.py"), "").unwrap();
    std::fs::write(root.join("pkg/a.py"), "from pkg.b import helper\n\ndef run():\n    return helper()\n").unwrap();
    std::fs::write(root.join("pkg/b.py"), "def helper():\n    return 1\n").unwrap();
    engine.refresh_index(&|_, _| {});
    // analyze's next calls (an outline read among them) pass without a search.
    let analyzed = engine.call("analyze", json!({"mode": "dependencies", "target": "pkg/a.py"}));
    assert!(analyzed.ok, "{}", analyzed.face);
    let reads: Vec<Value> = analyzed.meta["next_calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|call| call["tool"] == "read")
        .map(|call| call["arguments"].clone())
        .collect();
    assert!(!reads.is_empty(), "{}", analyzed.face);
    for arguments in reads {
        let read = engine.call("read", arguments.clone());
        assert!(read.ok, "{arguments}: {}", read.face);
    }
    // A refusal's search names the file by its whole path: its one hit is that file.
    let refused = engine.call("read", json!({"mode": "file", "target": "dir/a.rs", "session_id": "other"}));
    assert_eq!(refused.error_code(), Some("SEARCH_FIRST_REQUIRED"), "{}", refused.face);
    let search = refused.meta["next_calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|call| call["tool"] == "search")
        .unwrap()["arguments"]
        .clone();
    assert_eq!(search["query"], json!("dir/a.rs"));
    // A file that is not there: FILE_NOT_FOUND, not a gate refusal offering to read it.
    let missing = engine.call("read", json!({"mode": "file", "target": "src/mian.rs", "session_id": "third"}));
    assert_eq!(missing.error_code(), Some("FILE_NOT_FOUND"), "{}", missing.face);
}
