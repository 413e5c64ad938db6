//! `analyze` against hand-labelled truth: one fixture project per language under
//! `tests/fixtures/analyze/<lang>/` with the true dependencies, calls, references and type
//! relations in `truth.json` (see the README there). Precision is measured on the edges loupe
//! calls `exact` or `scoped`, recall on every edge it reports.
//!
//! The table is printed (`cargo test -p loupe-engine --test analyze_accuracy -- --nocapture`);
//! the assertions hold every section of every language to precision 0.95 and recall 0.9.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use loupe_engine::Engine;
use serde_json::{Value, json};

fn fixture_dir(lang: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/analyze").join(lang)
}

/// Edges an analyze call reported: (source, target, relation, confidence, line).
fn edges(engine: &Engine, arguments: Value) -> Vec<(String, String, String, String, Option<u64>)> {
    let response = engine.call("analyze", arguments.clone());
    assert!(response.ok, "{arguments} failed: {}", response.face);
    response.meta["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| {
            (
                edge["source"].as_str().unwrap().to_owned(),
                edge["target"].as_str().unwrap().to_owned(),
                edge["relation"].as_str().unwrap().to_owned(),
                edge["confidence"].as_str().unwrap_or("exact").to_owned(),
                edge["line"].as_u64(),
            )
        })
        .collect()
}

#[derive(Debug, Default, Clone, Copy)]
struct Score {
    precision: f64,
    recall: f64,
    confident: usize,
    truth: usize,
}

/// `predicted`: (edge, confident?). Precision over confident edges, recall over all.
fn score(truth: &BTreeSet<String>, predicted: &[(String, bool)]) -> Score {
    let confident: BTreeSet<&String> = predicted.iter().filter(|(_, sure)| *sure).map(|(edge, _)| edge).collect();
    let all: BTreeSet<&String> = predicted.iter().map(|(edge, _)| edge).collect();
    let right = confident.iter().filter(|edge| truth.contains(edge.as_str())).count();
    let found = truth.iter().filter(|edge| all.contains(edge)).count();
    Score {
        precision: if confident.is_empty() { 1.0 } else { right as f64 / confident.len() as f64 },
        recall: if truth.is_empty() { 1.0 } else { found as f64 / truth.len() as f64 },
        confident: confident.len(),
        truth: truth.len(),
    }
}

fn misses(truth: &BTreeSet<String>, predicted: &[(String, bool)]) -> (Vec<String>, Vec<String>) {
    let all: BTreeSet<&String> = predicted.iter().map(|(edge, _)| edge).collect();
    let missed = truth.iter().filter(|edge| !all.contains(edge)).cloned().collect();
    let mut wrong: Vec<String> =
        predicted.iter().filter(|(edge, sure)| *sure && !truth.contains(edge)).map(|(edge, _)| edge.clone()).collect();
    wrong.sort();
    wrong.dedup();
    (missed, wrong)
}

/// The source files the truth names.
fn project_files(truth: &Value) -> BTreeSet<String> {
    let mut files: BTreeSet<String> = BTreeSet::new();
    for section in ["calls", "dependencies", "references", "types"] {
        for entry in truth[section].as_array().unwrap() {
            for key in ["caller", "callee", "from", "path", "symbol", "subtype", "supertype"] {
                if let Some(text) = entry[key].as_str()
                    && !text.starts_with("external:")
                {
                    files.insert(text.split('#').next().unwrap().to_owned());
                }
            }
        }
    }
    files
}

/// Every definition of `files`, as (path, qualified name, kind).
fn definitions(root: &Path, files: &BTreeSet<String>) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for file in files {
        let Some(lang) = loupe_syntax::Lang::from_path(file) else { continue };
        let Ok(text) = std::fs::read_to_string(root.join(file)) else { continue };
        for definition in loupe_syntax::parse(lang, &text).definitions {
            let qualified = match &definition.container {
                Some(container) => format!("{container}{}{}", lang.separator(), definition.name),
                None => definition.name.clone(),
            };
            found.push((file.clone(), qualified, definition.kind.as_str().to_owned()));
        }
    }
    found
}

struct Report {
    lang: &'static str,
    dependencies: Score,
    calls: Score,
    references: Score,
    types: Score,
    details: Vec<String>,
}

fn evaluate(lang: &'static str) -> Report {
    let root = fixture_dir(lang);
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(root.join("truth.json")).unwrap()).unwrap();
    let index_dir = tempfile::tempdir().unwrap();
    let engine = common::indexed_engine(&root, index_dir.path());
    let files = project_files(&truth);
    let definitions = definitions(&root, &files);
    let mut details = Vec::new();

    // Dependencies: every source file, downstream, depth 1.
    let dependency_truth: BTreeSet<String> = truth["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| format!("{} -> {}", entry["from"].as_str().unwrap(), entry["to"].as_str().unwrap()))
        .collect();
    let mut predicted = Vec::new();
    for file in &files {
        let arguments = json!({"mode": "dependencies", "target": file, "direction": "downstream", "max_nodes": 500});
        for (source, target, _, _, _) in edges(&engine, arguments) {
            predicted.push((format!("{source} -> {target}"), true));
        }
    }
    let dependencies = score(&dependency_truth, &predicted);
    let (missed, wrong) = misses(&dependency_truth, &predicted);
    details.push(format!("{lang} dependencies missed {missed:?} wrong {wrong:?}"));

    // Calls: every callable, both directions, depth 1.
    let call_truth: BTreeSet<String> = truth["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| format!("{} -> {}", entry["caller"].as_str().unwrap(), entry["callee"].as_str().unwrap()))
        .collect();
    let mut predicted = Vec::new();
    for (file, qualified, kind) in &definitions {
        if !matches!(kind.as_str(), "function" | "method" | "constructor") {
            continue;
        }
        let arguments = json!({"mode": "calls", "target": qualified, "path": file, "max_depth": 1, "max_nodes": 500});
        for (source, target, _, confidence, _) in edges(&engine, arguments) {
            predicted.push((format!("{source} -> {target}"), confidence != "name_only"));
        }
    }
    let calls = score(&call_truth, &predicted);
    let (missed, wrong) = misses(&call_truth, &predicted);
    details.push(format!("{lang} calls missed {missed:?} wrong {wrong:?}"));

    // References: each target's uses as (path, line).
    let reference_truth: BTreeSet<String> = truth["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            format!(
                "{} @ {}:{}",
                entry["symbol"].as_str().unwrap(),
                entry["path"].as_str().unwrap(),
                entry["line"].as_u64().unwrap()
            )
        })
        .collect();
    let mut predicted = Vec::new();
    for target in truth["reference_targets"].as_array().unwrap() {
        let target = target.as_str().unwrap();
        let (file, qualified) = target.split_once('#').unwrap();
        let arguments = json!({"mode": "references", "target": qualified, "path": file, "max_nodes": 500});
        for (source, _, _, confidence, line) in edges(&engine, arguments) {
            let path = source.split('#').next().unwrap();
            predicted.push((format!("{target} @ {path}:{}", line.unwrap()), confidence != "name_only"));
        }
    }
    let references = score(&reference_truth, &predicted);
    let (missed, wrong) = misses(&reference_truth, &predicted);
    details.push(format!("{lang} references missed {missed:?} wrong {wrong:?}"));

    // Types: every type of the project, both directions, depth 1.
    let type_truth: BTreeSet<String> = truth["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            format!(
                "{} -{}-> {}",
                entry["subtype"].as_str().unwrap(),
                entry["relation"].as_str().unwrap(),
                entry["supertype"].as_str().unwrap()
            )
        })
        .collect();
    let mut predicted = Vec::new();
    for (file, qualified, kind) in &definitions {
        if !matches!(kind.as_str(), "class" | "struct" | "interface" | "trait" | "enum") {
            continue;
        }
        let arguments = json!({"mode": "types", "target": qualified, "path": file, "max_depth": 1, "max_nodes": 500});
        let response = engine.call("analyze", arguments);
        if !response.ok {
            continue;
        }
        for edge in response.meta["edges"].as_array().unwrap() {
            let confidence = edge["confidence"].as_str().unwrap_or("exact");
            let line = format!(
                "{} -{}-> {}",
                edge["source"].as_str().unwrap(),
                edge["relation"].as_str().unwrap(),
                edge["target"].as_str().unwrap()
            );
            predicted.push((line, confidence != "name_only"));
        }
    }
    let types = score(&type_truth, &predicted);
    let (missed, wrong) = misses(&type_truth, &predicted);
    details.push(format!("{lang} types missed {missed:?} wrong {wrong:?}"));

    Report { lang, dependencies, calls, references, types, details }
}

const LANGS: &[&str] = &["rust", "python", "typescript", "go", "java", "c"];

#[test]
fn analyze_meets_its_floors_on_every_labelled_project() {
    let mut failures = Vec::new();
    println!("| lang | deps P / R | calls P / R | refs P / R | types P / R |");
    println!("| --- | --- | --- | --- | --- |");
    for lang in LANGS {
        let report = evaluate(lang);
        let cell = |score: Score| {
            format!("{:.2} / {:.2} ({} conf, {} true)", score.precision, score.recall, score.confident, score.truth)
        };
        println!(
            "| {} | {} | {} | {} | {} |",
            report.lang,
            cell(report.dependencies),
            cell(report.calls),
            cell(report.references),
            cell(report.types)
        );
        for detail in &report.details {
            eprintln!("{detail}");
        }
        let (precision_floor, recall_floor) = floors(lang);
        for (section, score) in [
            ("dependencies", report.dependencies),
            ("calls", report.calls),
            ("references", report.references),
            ("types", report.types),
        ] {
            if score.precision < precision_floor || score.recall < recall_floor {
                failures.push(format!(
                    "{lang} {section}: precision {:.2} (floor {precision_floor}), recall {:.2} (floor {recall_floor})",
                    score.precision, score.recall
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// (precision of exact/scoped edges, recall), per section: the targets of the issue.
fn floors(_lang: &str) -> (f64, f64) {
    (0.95, 0.9)
}
