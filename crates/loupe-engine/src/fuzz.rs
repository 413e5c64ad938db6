//! Fuzz harnesses (stable Rust, proptest) for what an injected agent controls completely: every
//! tool's arguments, as parsed into typed requests, and the cursors it hands back.
//!
//! Properties: parsing never panics; a refusal is `INVALID_ARGS` (or `PATH_OUTSIDE_ROOT` for a
//! search path), its face stays small whatever was sent, and it never echoes a long argument.
//! `LOUPE_FUZZ_CASES` sets the number of cases (default 256, what CI runs); each harness prints
//! how many executions it made, for `bench/results/fuzz.md`:
//! `LOUPE_FUZZ_CASES=1000000 cargo test --release -p loupe-engine --locked --lib fuzz -- --nocapture`.

use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value};

use crate::dispatch::ToolCall;
use crate::params;
use crate::read::cursor::ReadCursor;

fn cases() -> u32 {
    std::env::var("LOUPE_FUZZ_CASES").ok().and_then(|value| value.parse().ok()).unwrap_or(256)
}

/// Any JSON value, nested a little, with strings that are sometimes long.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|number| serde_json::Number::from_f64(number).map_or(Value::Null, Value::Number)),
        ".{0,40}".prop_map(Value::from),
        (0usize..3, 0usize..20_000).prop_map(|(kind, length)| Value::from(match kind {
            0 => "a".repeat(length),
            1 => "é\u{0}../".repeat(length / 6),
            _ => "10-".repeat(length / 3),
        })),
        Just(Value::from("src/main.rs")),
        Just(Value::from("../../etc/passwd")),
        Just(Value::from("1-999999999999999999999")),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((".{0,12}", inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// The names a tool's arguments may use: its table's names and aliases, and a few strangers.
fn names(spec: &'static params::ToolSpec) -> Vec<String> {
    let mut names: Vec<String> = spec
        .params
        .iter()
        .flat_map(|param| std::iter::once(param.name).chain(param.aliases.iter().copied()))
        .map(str::to_owned)
        .collect();
    names.extend(["colour", "", "__proto__", "mode ", "MODE"].map(str::to_owned));
    names
}

/// One call's arguments: mostly an object of known names with values that often fit their
/// type, sometimes any JSON at all.
fn arguments(spec: &'static params::ToolSpec) -> impl Strategy<Value = Value> {
    let names = names(spec);
    let value = prop_oneof![
        3 => json_value(),
        2 => prop::sample::select(
            spec.params
                .iter()
                .filter_map(|param| match param.ty {
                    params::ParamType::Choice(choices) => Some(choices.to_vec()),
                    _ => None,
                })
                .flatten()
                .collect::<Vec<_>>()
        )
        .prop_map(Value::from),
        1 => (0u64..2000).prop_map(Value::from),
    ];
    prop_oneof![
        8 => prop::collection::vec((prop::sample::select(names), value), 0..10)
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>())),
        1 => json_value(),
    ]
}

/// A refusal is an argument error, its message and hint quote what was sent bounded, and its
/// whole face (which may carry a ready-to-run call with the caller's bounded arguments) stays
/// far below what a client accepts.
fn check_refusal(tool: &str, arguments: &Value, rejected: &crate::args::Rejected) {
    let code = rejected.error.code.as_str();
    assert!(matches!(code, "INVALID_ARGS" | "PATH_OUTSIDE_ROOT"), "{tool} {arguments}: refused with {code}");
    let words = rejected.error.message.len() + rejected.error.hint.len();
    assert!(
        words < 2000,
        "{tool}: a {words}-byte message and hint for {} bytes of arguments",
        arguments.to_string().len()
    );
    let face = crate::response::error_face(&rejected.error);
    assert!(face.len() < 64 << 10, "{tool}: a {}-byte refusal", face.len());
}

fn runner() -> TestRunner {
    TestRunner::new(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })
}

/// Every tool's arguments: parsed or refused as data, never a panic.
#[test]
fn fuzz_tool_arguments() {
    let strategy = (0..params::TOOLS.len()).prop_flat_map(|index| (Just(index), arguments(params::TOOLS[index])));
    let runs = AtomicU64::new(0);
    let outcome = runner().run(&strategy, |(index, arguments)| {
        runs.fetch_add(1, Ordering::Relaxed);
        let tool = params::TOOLS[index].name;
        if let Err(rejected) = ToolCall::parse(tool, arguments.clone()) {
            check_refusal(tool, &arguments, &rejected);
        }
        Ok(())
    });
    eprintln!("fuzz_tool_arguments: {} executions", runs.load(Ordering::Relaxed));
    outcome.unwrap();
}

/// Cursors come back from the model: any text, and real cursors with damage, decode to a
/// cursor or to nothing, never a panic.
#[test]
fn fuzz_cursor_decoding() {
    let strategy = (".{0,80}", any::<(usize, u8)>(), any::<usize>(), any::<usize>());
    let runs = AtomicU64::new(0);
    let path = loupe_core::RepoPath::normalize("src/main.rs").unwrap();
    let outcome = runner().run(&strategy, |(text, (at, flip), line, end)| {
        runs.fetch_add(1, Ordering::Relaxed);
        let _ = ReadCursor::decode(&text);
        let mut damaged = ReadCursor::new(&loupe_core::ContentHash::of(b"x"), &path, line, end).encode().into_bytes();
        if !damaged.is_empty() {
            let at = at % damaged.len();
            damaged[at] ^= flip;
        }
        if let Some(decoded) = ReadCursor::decode(&String::from_utf8_lossy(&damaged)) {
            let _ = decoded.is_for(&path);
        }
        Ok(())
    });
    eprintln!("fuzz_cursor_decoding: {} executions", runs.load(Ordering::Relaxed));
    outcome.unwrap();
}
