//! Edits end to end through the real binary: over stdio MCP with rmcp's client, and on the
//! command line (`loupe edit` from a file and from stdin, `loupe undo`, `loupe history`),
//! including a process killed between two renames and recovered by the next start.

use std::path::Path;
use std::process::{Output, Stdio};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::common::loupe;

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");

fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "pub fn one() -> u32 {\n    1\n}\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "first\r\nsecond\r\n").unwrap();
    std::fs::write(dir.path().join("third.txt"), "3\n").unwrap();
    (dir, tempfile::tempdir().unwrap())
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn contents(root: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    ["src/lib.rs", "notes.txt", "third.txt", "new.txt"]
        .iter()
        .map(|path| ((*path).to_owned(), std::fs::read(root.join(path)).ok()))
        .collect()
}

const THREE_FILES: &str = r#"{"edits": [
    {"path": "src/lib.rs", "old_string": "1\n", "new_string": "2\n"},
    {"path": "notes.txt", "operation": "insert", "line": 0, "new_string": "zeroth"},
    {"path": "new.txt", "operation": "create", "content": "fresh\n"}
]}"#;

#[test]
fn cli_edit_from_stdin_and_file_then_undo_and_history() {
    let (dir, index) = workspace();
    let before = contents(dir.path());
    let output = loupe(dir.path(), index.path(), &["edit"], Some(THREE_FILES), &[]);
    assert!(output.status.success(), "{}{}", stdout(&output), String::from_utf8_lossy(&output.stderr));
    let face = stdout(&output);
    assert!(face.starts_with("edit · applied tx-1 · 3 file(s)"), "{face}");
    assert_eq!(std::fs::read(dir.path().join("notes.txt")).unwrap(), b"zeroth\r\nfirst\r\nsecond\r\n");

    let file = dir.path().join("edit.json");
    std::fs::write(&file, r#"[{"path": "third.txt", "operation": "delete"}]"#).unwrap();
    let output = loupe(dir.path(), index.path(), &["edit", file.to_str().unwrap(), "--json"], None, &[]);
    let envelope: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(envelope["transaction_id"], "tx-2");
    assert!(!dir.path().join("third.txt").exists());
    std::fs::remove_file(&file).unwrap();

    let history = stdout(&loupe(dir.path(), index.path(), &["history"], None, &[]));
    assert!(history.contains("tx-2") && history.contains("third.txt (deleted)"), "{history}");
    for _ in 0..2 {
        let output = loupe(dir.path(), index.path(), &["undo"], None, &[]);
        assert!(output.status.success(), "{}", stdout(&output));
    }
    assert_eq!(contents(dir.path()), before);
    let output = loupe(dir.path(), index.path(), &["undo"], None, &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).starts_with("error INVALID_ARGS: nothing to undo"), "{}", stdout(&output));
}

/// A process aborted after the first of three renames leaves a half-applied call; the next
/// start rolls it back, byte for byte.
#[test]
fn a_crash_between_two_renames_is_rolled_back_on_restart() {
    let (dir, index) = workspace();
    let before = contents(dir.path());
    let env = [("LOUPE_TEST_HOOKS", "1"), ("LOUPE_TEST_ABORT_AFTER_WRITES", "1")];
    let output = loupe(dir.path(), index.path(), &["edit"], Some(THREE_FILES), &env);
    assert!(!output.status.success(), "the hook must abort the process");
    assert_ne!(contents(dir.path()), before, "the first file was renamed into place before the crash");

    let history = loupe(dir.path(), index.path(), &["history"], None, &[]);
    assert!(stdout(&history).starts_with("history · 0 of 0"), "{}", stdout(&history));
    assert_eq!(contents(dir.path()), before);

    // The journal still works after recovery.
    let output = loupe(dir.path(), index.path(), &["edit"], Some(THREE_FILES), &[]);
    assert!(stdout(&output).starts_with("edit · applied"), "{}", stdout(&output));
}

#[tokio::test]
async fn rmcp_client_edits_reads_the_new_text_and_undoes() {
    let (dir, index) = workspace();
    let mut command = tokio::process::Command::new(LOUPE);
    command.arg("serve").arg("--root").arg(dir.path()).arg("--index-dir").arg(index.path()).stderr(Stdio::null());
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let call = |name: &'static str, arguments: Value| {
        CallToolRequestParams::new(name).with_arguments(arguments.as_object().unwrap().clone())
    };

    let read = client
        .call_tool(call("read", json!({"mode": "file", "target": "src/lib.rs", "offset": 1, "limit": 100})))
        .await
        .unwrap();
    let hash = read.structured_content.as_ref().unwrap()["file_hash"].as_str().unwrap().to_owned();
    let edit = client
        .call_tool(call(
            "edit",
            json!({"edits": [{"path": "src/lib.rs", "operation": "replace_lines", "start_line": 2, "end_line": 2,
                              "new_string": "    41", "expected_text": "    1", "expected_hash": hash}],
                   "metadata": "full"}),
        ))
        .await
        .unwrap();
    assert_eq!(edit.is_error, Some(false));
    let envelope = edit.structured_content.unwrap();
    assert_eq!(envelope["meta"]["files"][0]["syntax"], "ok");
    let read = client
        .call_tool(call(
            "read",
            json!({"mode": "snippet", "target": "src/lib.rs", "start_line": 2, "metadata": "full"}),
        ))
        .await
        .unwrap();
    assert_eq!(read.structured_content.unwrap()["content"], "    41\n");

    // The same guarded edit again: the hash is stale now.
    let stale = client
        .call_tool(call(
            "edit",
            json!({"edits": [{"path": "src/lib.rs", "old_string": "41", "new_string": "42", "expected_hash": hash}]}),
        ))
        .await
        .unwrap();
    assert_eq!(stale.is_error, Some(true));
    assert_eq!(stale.structured_content.unwrap()["error"]["code"], "CONFLICT");

    let undo = client.call_tool(call("manage", json!({"command": "undo"}))).await.unwrap();
    assert_eq!(undo.is_error, Some(false));
    assert_eq!(std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap(), "pub fn one() -> u32 {\n    1\n}\n");
    client.cancel().await.unwrap();
}

/// Symbol edits over stdio MCP with rmcp's client: a rename across two files, a body replaced
/// and a method added in one call, a delete refused while the symbol is used, and one undo per
/// transaction restoring every byte.
#[tokio::test]
async fn rmcp_client_renames_and_edits_by_symbol_and_undoes_each() {
    let dir = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    let files = [
        ("src/lib.rs", "pub mod shapes;\n\npub fn area_of(square: &shapes::Square) -> u32 {\n    square.area()\n}\n"),
        (
            "src/shapes.rs",
            "pub struct Square {\n    pub side: u32,\n}\n\nimpl Square {\n    pub fn area(&self) -> u32 {\n        self.side * self.side\n    }\n}\n",
        ),
    ];
    for (path, text) in files {
        std::fs::create_dir_all(dir.path().join(path).parent().unwrap()).unwrap();
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    let mut command = tokio::process::Command::new(LOUPE);
    command.arg("serve").arg("--root").arg(dir.path()).arg("--index-dir").arg(index.path()).stderr(Stdio::null());
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let call = |name: &'static str, arguments: Value| {
        CallToolRequestParams::new(name).with_arguments(arguments.as_object().unwrap().clone())
    };
    let text = |result: &rmcp::model::CallToolResult| {
        result.content[0].as_text().map(|text| text.text.clone()).unwrap_or_default()
    };

    let rename = client
        .call_tool(call(
            "edit",
            json!({"edits": [{"operation": "rename_symbol", "symbol": "Square::area", "new_name": "surface"}]}),
        ))
        .await
        .unwrap();
    assert_eq!(rename.is_error, Some(false), "{}", text(&rename));
    assert!(
        text(&rename).contains("renamed area → surface at 2 exact sites in src/: lib.rs:4 · shapes.rs:6"),
        "{}",
        text(&rename)
    );
    let structured = rename.structured_content.unwrap();
    assert_eq!(structured["transaction_id"], "tx-1");
    assert!(std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap().contains("square.surface()"));

    let both = client
        .call_tool(call(
            "edit",
            json!({"edits": [
                {"operation": "replace_symbol", "symbol": "Square::surface", "new_body": "self.side.pow(2)"},
                {"operation": "insert_after_symbol", "symbol": "Square::surface", "new_string": "pub fn perimeter(&self) -> u32 {\n    4 * self.side\n}"}
            ]}),
        ))
        .await
        .unwrap();
    assert_eq!(both.is_error, Some(false), "{}", text(&both));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/shapes.rs")).unwrap(),
        "pub struct Square {\n    pub side: u32,\n}\n\nimpl Square {\n    pub fn surface(&self) -> u32 {\n        self.side.pow(2)\n    }\n\n    pub fn perimeter(&self) -> u32 {\n        4 * self.side\n    }\n}\n"
    );

    let refused = client
        .call_tool(call("edit", json!({"edits": [{"operation": "delete_symbol", "symbol": "Square::surface"}]})))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(refused.structured_content.unwrap()["error"]["code"], "SYMBOL_IN_USE");

    for id in ["tx-2", "tx-1"] {
        let undo = client.call_tool(call("manage", json!({"command": "undo", "transaction_id": id}))).await.unwrap();
        assert_eq!(undo.is_error, Some(false), "{}", text(&undo));
    }
    for (path, original) in files {
        assert_eq!(std::fs::read_to_string(dir.path().join(path)).unwrap(), original, "{path}");
    }
    client.cancel().await.unwrap();
}
