//! `data_flow` on the cases listed in `tests/flow_fixtures/cases.txt` (`file line name`, a
//! description), each snapshotted; every flow fixture parsed cleanly; truncated fixtures
//! analysed without a panic.
//!
//! A snapshot is the answer's JSON laid out for review: the function, span and parameters on
//! one line, then one line per event with its kind as serialised and the source line it
//! points at.
//!
//! Owns the fixture-driven checks of `data_flow`; must not hold hand-written expectations
//! (those live in `flow_cases.rs`).

use std::path::{Path, PathBuf};

use loupe_syntax::{DataFlow, Lang, Span, data_flow, error_count};

struct Case {
    file: String,
    line: usize,
    name: String,
    about: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/flow_fixtures")
}

fn cases() -> Vec<Case> {
    let listing = std::fs::read_to_string(root().join("cases.txt")).unwrap();
    listing
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let mut parts = line.split_whitespace();
            let file = parts.next().unwrap().to_owned();
            let line_number = parts.next().unwrap().parse().unwrap_or_else(|_| panic!("bad line in {line}"));
            let name = parts.next().unwrap().to_owned();
            let about = parts.collect::<Vec<_>>().join(" ");
            Case { file, line: line_number, name, about }
        })
        .collect()
}

fn lang_of(file: &str) -> Lang {
    Lang::from_path(file).unwrap_or_else(|| panic!("no language for {file}"))
}

fn read(file: &str) -> String {
    std::fs::read_to_string(root().join(file)).unwrap_or_else(|error| panic!("{file}: {error}"))
}

fn snapshot_name(case: &Case) -> String {
    let file = case.file.replace(['/', '.'], "_");
    format!("{file}__L{}_{}", case.line, case.name)
}

/// The answer as JSON, one event per line next to the source line it points at.
fn render(flow: Option<&DataFlow>, text: &str) -> String {
    let Some(flow) = flow else { return "null".to_owned() };
    #[derive(serde::Serialize)]
    struct Head<'a> {
        function: &'a Option<String>,
        span: &'a Span,
        parameters: &'a [String],
    }
    let head = Head { function: &flow.function, span: &flow.span, parameters: &flow.parameters };
    let mut out = format!("{}\n", serde_json::to_string(&head).unwrap());
    let lines: Vec<&str> = text.lines().collect();
    for event in &flow.events {
        let kind = serde_json::to_string(&event.kind).unwrap();
        let source = lines.get(event.line - 1).map_or("", |line| line.trim());
        out.push_str(&format!("{:>3}:{:<3} {kind:<40} | {source}\n", event.line, event.column));
    }
    out
}

/// Invariants every answer keeps: events in source order, inside the function, each one an
/// occurrence of the name.
fn check_invariants(flow: &DataFlow, text: &str, name: &str, context: &str) {
    let lines: Vec<&str> = text.lines().collect();
    let positions: Vec<(usize, usize)> = flow.events.iter().map(|event| (event.line, event.column)).collect();
    let mut sorted = positions.clone();
    sorted.sort();
    assert_eq!(positions, sorted, "{context}: events out of order");
    assert!(flow.span.start_line <= flow.span.end_line, "{context}: span {:?}", flow.span);
    for event in &flow.events {
        assert!(
            flow.span.start_line <= event.line && event.line <= flow.span.end_line,
            "{context}: event {event:?} outside {:?}",
            flow.span
        );
        let Some(line) = lines.get(event.line - 1) else { continue };
        let at = line.get(event.column - 1..).unwrap_or("");
        assert!(at.starts_with(name), "{context}: event {event:?} is not `{name}`: {line:?}");
    }
}

#[test]
fn every_language_with_flow_rules_has_cases() {
    let cases = cases();
    for lang in [
        Lang::Rust,
        Lang::Python,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::JavaScript,
        Lang::Go,
        Lang::Java,
        Lang::C,
        Lang::Cpp,
        Lang::CSharp,
    ] {
        assert!(cases.iter().any(|case| lang_of(&case.file) == lang), "no data flow case for {}", lang.name());
    }
}

#[test]
fn flow_fixtures_parse_cleanly() {
    let mut files: Vec<String> = cases().into_iter().map(|case| case.file).collect();
    files.dedup();
    for file in files {
        assert_eq!(error_count(lang_of(&file), &read(&file)), 0, "{file} has syntax errors");
    }
}

#[test]
fn flow_cases_snapshot() {
    for case in cases() {
        let text = read(&case.file);
        let flow = data_flow(lang_of(&case.file), &text, case.line, &case.name);
        let context = format!("{}:{} {}", case.file, case.line, case.name);
        if let Some(flow) = &flow {
            check_invariants(flow, &text, &case.name, &context);
        }
        insta::with_settings!({ description => format!("{context}: {}", case.about), omit_expression => true }, {
            insta::assert_snapshot!(snapshot_name(&case), render(flow.as_ref(), &text));
        });
    }
}

#[test]
fn truncated_fixtures_never_panic() {
    for case in cases() {
        let text = read(&case.file);
        let lang = lang_of(&case.file);
        let mut end = 0;
        while end < text.len() {
            if text.is_char_boundary(end) {
                let prefix = &text[..end];
                if let Some(flow) = data_flow(lang, prefix, case.line, &case.name) {
                    check_invariants(&flow, prefix, &case.name, &format!("{} cut at {end}", case.file));
                }
            }
            end += 41;
        }
    }
}
