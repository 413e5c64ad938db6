//! Progress and cancellation at the engine boundary (§11): the calls that can take long
//! (`manage reindex`, `analyze`, a directory `diff_preview`) report through the call's `Work`
//! handle (the value only grows, `total` only when known and never below the value) and, once
//! the handle is cancelled, stop in the same loop and answer with what they have, marked as cut.

use std::sync::{Arc, Mutex, OnceLock};

use loupe_engine::{CallContext, Engine, Progress, Response, Work};
use serde_json::{Value, json};

use crate::common::{git, indexed_engine, write};

/// A handle that records every report, and cancels itself at the first one when `cancel_at_first`.
fn recording(cancel_at_first: bool) -> (Arc<Work>, Arc<Mutex<Vec<Progress>>>) {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let handle: Arc<OnceLock<Arc<Work>>> = Arc::new(OnceLock::new());
    let seen = Arc::clone(&reports);
    let itself = Arc::clone(&handle);
    let work = Arc::new(Work::with_progress(move |progress| {
        seen.lock().unwrap().push(progress.clone());
        if cancel_at_first && let Some(work) = itself.get() {
            work.cancel();
        }
    }));
    handle.set(Arc::clone(&work)).unwrap();
    (work, reports)
}

fn call(engine: &Engine, work: &Work, tool: &str, arguments: Value) -> Response {
    engine.call_with(&CallContext::new("progress".to_owned()), tool, arguments, work)
}

/// What MCP asks of a run of progress notifications.
fn assert_well_formed(reports: &[Progress]) {
    assert!(!reports.is_empty(), "no progress was reported");
    for pair in reports.windows(2) {
        assert!(pair[1].done > pair[0].done, "progress went back or stood still: {reports:?}");
    }
    for report in reports {
        if let Some(total) = report.total {
            assert!(total > 0 && total >= report.done, "a total that is not a total: {report:?}");
        }
        assert!(!report.message.is_empty());
    }
}

fn full(response: &Response) -> Value {
    response.structured_at(loupe_engine::MetadataLevel::Full)
}

/// 60 Python files that each define a function and call `target`.
fn callers_workspace(dir: &std::path::Path) {
    write(dir, "lib.py", "def target():\n    return 1\n");
    for n in 0..60 {
        write(
            dir,
            &format!("m{n:02}.py"),
            &format!("from lib import target\n\ndef caller_{n}():\n    return target()\n"),
        );
    }
}

#[test]
fn reindex_reports_every_file_it_walks_and_a_cancel_keeps_the_previous_tables() {
    let dir = tempfile::tempdir().unwrap();
    callers_workspace(dir.path());
    let index_dir = tempfile::tempdir().unwrap();
    let engine = indexed_engine(dir.path(), index_dir.path());
    let rewrite = |name: &str| {
        for n in 0..60 {
            write(dir.path(), &format!("m{n:02}.py"), &format!("def {name}_{n}():\n    return {n}\n\n"));
        }
    };
    // Every file changed: a rebuild, reported file by file up to the last.
    rewrite("fresh");
    let (work, reports) = recording(false);
    let answer = call(&engine, &work, "manage", json!({"command": "reindex"}));
    assert!(answer.ok && answer.face.contains("full rebuild"), "{}", answer.face);
    let reports = reports.lock().unwrap();
    assert_well_formed(&reports);
    let last = reports.last().unwrap();
    assert_eq!((last.done, last.total), (61, Some(61)), "{reports:?}");
    assert_eq!(last.message, "indexing 61 of 61 files");

    // Cancelled at its first report: the rebuild stops there, and the index keeps what it had.
    rewrite("later");
    let (work, reports) = recording(true);
    let answer = call(&engine, &work, "manage", json!({"command": "reindex"}));
    assert_eq!(reports.lock().unwrap().len(), 1, "nothing is reported after the cancel");
    assert!(answer.face.contains("── cancelled: the rebuild stopped"), "{}", answer.face);
    assert_eq!(full(&answer)["meta"]["truncated"], json!(true));
    assert_eq!(full(&answer)["meta"]["cancelled"], json!(true));
    assert_eq!(full(&answer)["next_calls"], json!([{"tool": "manage", "arguments": {"command": "reindex"}}]));
    let search = engine.call("search", json!({"query": "fresh_7", "type": "symbol"}));
    assert!(search.face.contains("m07.py"), "the previous tables answer: {}", search.face);
    // The next call, not cancelled, does the rest.
    let answer = call(&engine, &Work::default(), "manage", json!({"command": "reindex"}));
    assert!(!answer.face.contains("cancelled"), "{}", answer.face);
    let search = engine.call("search", json!({"query": "later_7", "type": "symbol"}));
    assert!(search.face.contains("m07.py"), "{}", search.face);
}

#[test]
fn analyze_reports_the_files_it_reads_and_a_cancelled_walk_answers_what_it_found() {
    let dir = tempfile::tempdir().unwrap();
    callers_workspace(dir.path());
    let index_dir = tempfile::tempdir().unwrap();
    let arguments =
        json!({"mode": "calls", "target": "target", "max_depth": 1, "max_nodes": 500, "direction": "upstream"});

    let engine = indexed_engine(dir.path(), index_dir.path());
    let (work, reports) = recording(false);
    let answer = call(&engine, &work, "analyze", arguments.clone());
    let reports = reports.lock().unwrap();
    assert_well_formed(&reports);
    // The graphs are built first (no total: nothing is counted yet), then files are read.
    assert_eq!((reports[0].done, reports[0].total), (0, None), "{reports:?}");
    assert!(reports[0].message.starts_with("analyze: building the import and type graphs"), "{reports:?}");
    assert!(reports.iter().all(|report| report.total.is_none()), "a walk's total is not known: {reports:?}");
    let callers = full(&answer)["nodes"].as_array().unwrap().len();
    assert_eq!(callers, 61, "the target and its 60 callers: {}", answer.face);
    assert_ne!(full(&answer)["meta"]["cancelled"], json!(true));

    // A fresh engine (nothing parsed yet), cancelled at its first report.
    let index_dir = tempfile::tempdir().unwrap();
    let engine = indexed_engine(dir.path(), index_dir.path());
    let (work, reports) = recording(true);
    let answer = call(&engine, &work, "analyze", arguments.clone());
    assert_eq!(reports.lock().unwrap().len(), 1, "nothing is reported after the cancel");
    assert!(answer.ok, "{}", answer.face);
    assert!(answer.face.contains("── cancelled: the walk stopped early"), "{}", answer.face);
    let structured = full(&answer);
    assert!(structured["nodes"].as_array().unwrap().len() < callers, "the walk did not stop: {}", answer.face);
    assert_eq!(structured["meta"]["truncated"], json!(true));
    assert_eq!(structured["meta"]["cancelled"], json!(true));
    assert_eq!(structured["next_calls"], json!([{"tool": "analyze", "arguments": arguments}]));
}

#[test]
fn a_directory_diff_preview_reports_each_file_and_a_cancel_answers_the_changes_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    for n in 0..40 {
        write(root, &format!("src/f{n:02}.txt"), &format!("line {n}\n"));
    }
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "base"]);
    for n in (0..40).step_by(2) {
        write(root, &format!("src/f{n:02}.txt"), &format!("line {n} changed\n"));
    }
    let index_dir = tempfile::tempdir().unwrap();
    let engine = indexed_engine(root, index_dir.path());
    let arguments = json!({"mode": "diff_preview", "target": "src"});

    let (work, reports) = recording(false);
    let answer = call(&engine, &work, "read", arguments.clone());
    assert!(answer.face.contains("20 file(s) changed"), "{}", answer.face);
    let reports = reports.lock().unwrap();
    assert_well_formed(&reports);
    // 40 files compared, then the 20 changed ones diffed: the last step says so.
    let last = reports.last().unwrap();
    assert_eq!((last.done, last.total, last.message.as_str()), (60, Some(60), "diff_preview: diffing file 20 of 20"));

    let (work, reports) = recording(true);
    let answer = call(&engine, &work, "read", arguments.clone());
    assert_eq!(reports.lock().unwrap().len(), 1, "nothing is reported after the cancel");
    assert!(answer.ok, "{}", answer.face);
    insta::assert_snapshot!(answer.face, @r#"
    diff_preview · src · WORKTREE vs HEAD · cancelled after comparing 1 of 40 files · 1 changed so far
    M  src/f00.txt
    ── cancelled: the list above is partial and shows no diffs [DIFF_TRUNCATED]
    → next: read {"mode":"diff_preview","target":"src"}
    "#);
    let structured = full(&answer);
    assert_eq!(structured["meta"]["truncated"], json!(true));
    assert_eq!(structured["next_calls"], json!([{"tool": "read", "arguments": arguments}]));
}

#[test]
fn a_text_search_reports_the_files_it_verifies() {
    let dir = tempfile::tempdir().unwrap();
    callers_workspace(dir.path());
    let index_dir = tempfile::tempdir().unwrap();
    let engine = indexed_engine(dir.path(), index_dir.path());
    let (work, reports) = recording(false);
    let answer = call(&engine, &work, "search", json!({"query": "caller_[0-9]+", "type": "regex"}));
    assert!(answer.ok, "{}", answer.face);
    let reports = reports.lock().unwrap();
    assert_well_formed(&reports);
    let last = reports.last().unwrap();
    assert_eq!((last.done, last.total, last.message.as_str()), (60, Some(60), "search: 60 of 60 files verified"));
}

/// H7: every call has a time budget (`max_call_secs`), checked in the loops that check a cancel:
/// past it, `analyze`, a directory `diff_preview` and a text search answer with what they have,
/// cut, and say which budget stopped them. (A spent budget stands in for a slow tree here; the
/// figures on real slow cases are in `bench/results/hardening.md`.)
#[test]
fn h7_a_call_past_its_time_budget_answers_what_it_has_cut() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    callers_workspace(root);
    git(root, &["init", "-q"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "base"]);
    for n in 0..6 {
        write(root, &format!("m{n:02}.py"), "changed = 1\n");
    }
    let index_dir = tempfile::tempdir().unwrap();
    let engine = indexed_engine(root, index_dir.path());
    let spent = || {
        let work = Work::default();
        work.start_budget(std::time::Duration::ZERO);
        work
    };

    let arguments = json!({"mode": "calls", "target": "target", "max_depth": 1, "direction": "upstream"});
    let answer = call(&engine, &spent(), "analyze", arguments.clone());
    assert!(answer.ok, "{}", answer.face);
    assert!(
        answer.face.contains("── stopped at the call's time budget (0 s, `max_call_secs`): the walk stopped early"),
        "{}",
        answer.face
    );
    let structured = full(&answer);
    assert_eq!(
        (structured["meta"]["truncated"].clone(), structured["meta"]["time_budget_secs"].clone()),
        (json!(true), json!(0))
    );
    assert_eq!(structured["next_calls"], json!([{"tool": "analyze", "arguments": arguments}]));

    let answer = call(&engine, &spent(), "read", json!({"mode": "diff_preview", "target": "."}));
    assert!(answer.ok, "{}", answer.face);
    assert!(
        answer.face.contains("· stopped at the call's time budget (0 s, `max_call_secs`) after comparing 0 of"),
        "{}",
        answer.face
    );
    assert_eq!(full(&answer)["meta"]["truncated"], json!(true));

    // A text search stops verifying: what it found is a lower bound.
    let answer = call(&engine, &spent(), "search", json!({"query": "target", "type": "text"}));
    assert!(answer.ok, "{}", answer.face);
    assert!(
        answer.face.starts_with("search \"target\" · text · no results in the files searched\n")
            && answer
                .face
                .contains("(stopped at the call's time budget (0 s, `max_call_secs`): not every file was searched"),
        "{}",
        answer.face
    );
    assert!(!answer.reason_codes().contains(&"NO_MATCH".to_owned()), "{:?}", answer.reason_codes());
    assert_eq!(full(&answer)["meta"]["truncated"], json!(true));

    // The configured budget is what a call gets when its caller set none.
    assert_eq!(engine.config().max_call_secs, 30);
}
