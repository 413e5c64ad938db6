//! Property: any sequence of applied edits, undone one by one, gives back the original bytes
//! of every file (line endings, missing final newline and deleted/created files included).

use std::fs;

use loupe_core::Config;
use loupe_engine::Engine;
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
enum Step {
    ReplaceLines { start: usize, span: usize, new: String },
    Insert { line: usize, new: String },
    ReplaceAll { line: usize, new: String },
    CreateOrDelete,
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!["a", "b c", "  indented", "", "ünï", "x\ny"]), 0..4)
        .prop_map(|parts| parts.join("\n"))
}

fn original() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(prop::sample::select(vec!["alpha", "beta", "", "  gamma", "delta δ"]), 0..8),
        prop::sample::select(vec!["\n", "\r\n", "\r"]),
        any::<bool>(),
    )
        .prop_map(|(lines, ending, final_newline)| {
            let mut text = lines.join(ending);
            if final_newline && !lines.is_empty() {
                text.push_str(ending);
            }
            text.into_bytes()
        })
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..10usize, 0..3usize, text()).prop_map(|(start, span, new)| Step::ReplaceLines { start, span, new }),
        (0..10usize, text()).prop_map(|(line, new)| Step::Insert { line, new }),
        (0..10usize, text()).prop_map(|(line, new)| Step::ReplaceAll { line, new }),
        Just(Step::CreateOrDelete),
    ]
}

fn arguments(step: &Step, current: &str, other_exists: bool) -> Option<Value> {
    let lines: Vec<&str> = current.split_inclusive(['\n', '\r']).collect();
    let total = lines.len();
    let edit = match step {
        Step::ReplaceLines { start, span, new } => {
            if total == 0 {
                return None;
            }
            let first = start % total + 1;
            let last = (first + span).min(total);
            json!({"path": "file.txt", "operation": "replace_lines", "start_line": first, "end_line": last, "new_string": new})
        }
        Step::Insert { line, new } => {
            json!({"path": "file.txt", "operation": "insert", "line": line % (total + 1), "new_string": new})
        }
        Step::ReplaceAll { line, new } => {
            let old = lines.get(line % total.max(1))?.trim_end_matches(['\n', '\r']);
            if old.is_empty() {
                return None;
            }
            json!({"path": "file.txt", "old_string": old, "new_string": new, "replace_all": true})
        }
        Step::CreateOrDelete if other_exists => json!({"path": "other.txt", "operation": "delete"}),
        Step::CreateOrDelete => json!({"path": "other.txt", "operation": "create", "content": "other\n"}),
    };
    Some(json!({"edits": [edit]}))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn undoing_every_applied_edit_restores_the_original_bytes(
        original in original(),
        steps in prop::collection::vec(step(), 1..6),
    ) {
        let root = tempfile::tempdir().unwrap();
        let index = tempfile::tempdir().unwrap();
        fs::write(root.path().join("file.txt"), &original).unwrap();
        fs::write(root.path().join("other.txt"), b"other\r\n").unwrap();
        let engine = Engine::new(Config {
            root: Some(root.path().to_path_buf()),
            index_dir: Some(index.path().to_path_buf()),
            ..Config::default()
        })
        .unwrap();
        let mut applied = 0;
        for step in &steps {
            let current = fs::read_to_string(root.path().join("file.txt")).unwrap();
            let other_exists = root.path().join("other.txt").exists();
            let Some(arguments) = arguments(step, &current, other_exists) else { continue };
            let response = engine.call("edit", arguments);
            if response.ok && response.meta["transaction_id"].is_string() {
                applied += 1;
            }
        }
        for _ in 0..applied {
            let response = engine.call("manage", json!({"command": "undo"}));
            prop_assert!(response.ok, "{}", response.face);
        }
        prop_assert_eq!(fs::read(root.path().join("file.txt")).unwrap(), original);
        prop_assert_eq!(fs::read(root.path().join("other.txt")).unwrap(), b"other\r\n".to_vec());
    }
}
