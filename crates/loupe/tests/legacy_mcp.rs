//! End to end: the legacy names (§12) through the real `loupe serve` over stdio, driven by
//! rmcp's client: hidden but callable by default (with the old result fields), refused with
//! `LEGACY_TOOL_DISABLED` and the replacement call under `LOUPE_DISABLE_LEGACY=1`, and listed,
//! marked deprecated, with `--legacy-tools listed`.

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");
const FIVE: [&str; 5] = ["read", "search", "analyze", "edit", "manage"];

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let body: String = (1..=40).map(|n| format!("fn f{n}() -> u32 {{ {n} }}\n")).collect();
    std::fs::write(dir.path().join("src/lib.rs"), body).unwrap();
    dir
}

/// `loupe serve` on `root` with its index in a directory of the test's own, `args` and `env`
/// added: the gate and the budgets at their defaults.
async fn serve(
    root: &std::path::Path,
    index_dir: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(LOUPE);
    command.arg("serve").arg("--root").arg(root).arg("--index-dir").arg(index_dir).args(args);
    command.env_remove("LOUPE_DISABLE_LEGACY").env_remove("LOUPE_LEGACY_TOOLS").stderr(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap()
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, arguments: Value) -> CallToolResult {
    let arguments = arguments.as_object().unwrap().clone();
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)).await.unwrap()
}

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|block| block.as_text()).map(|text| text.text.clone()).collect()
}

async fn tool_names(client: &RunningService<RoleClient, ()>) -> Vec<String> {
    client.list_tools(None).await.unwrap().tools.iter().map(|tool| tool.name.to_string()).collect()
}

/// By default the old names are not listed, yet answer: a `read_code` fragment (a
/// precision window, which the gate lets through) with `content`, `metadata` and `truncated`,
/// a `search_project` with its `results` and `inferredType`, each marked deprecated; a
/// whole-file `read_file` meets the gate like `read` does.
#[tokio::test]
async fn hidden_legacy_names_are_callable_and_marked_deprecated() {
    let dir = workspace();
    let index_dir = tempfile::tempdir().unwrap();
    let client = serve(dir.path(), index_dir.path(), &[], &[]).await;
    assert_eq!(tool_names(&client).await, FIVE);

    let result =
        call(&client, "read_code", json!({"filePath": "src/lib.rs", "view": "fragment", "lineRange": "3-4"})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let text = text_of(&result);
    assert!(text.contains("3 fn f3() -> u32 { 3 }\n4 fn f4() -> u32 { 4 }\n"), "{text}");
    assert!(
        text.contains("── deprecated [LEGACY_TOOL_DEPRECATED]: `read_code` is a legacy name; call read (mode=snippet)")
    );
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["content"], json!("fn f3() -> u32 { 3 }\nfn f4() -> u32 { 4 }\n"));
    assert_eq!(structured["metadata"], json!({"lines": 40, "language": "rust", "path": "src/lib.rs"}));
    assert_eq!(structured["truncated"], json!(false));
    assert_eq!(structured["reason_codes"], json!(["LEGACY_TOOL_DEPRECATED"]));

    let gated = call(&client, "read_file", json!({"path": "src/lib.rs"})).await;
    assert_eq!(gated.is_error, Some(true));
    let gated = gated.structured_content.unwrap();
    assert_eq!(gated["error"]["code"], json!("SEARCH_FIRST_REQUIRED"), "{gated}");
    assert_eq!(gated["reason_codes"], json!(["SEARCH_FIRST_REQUIRED", "LEGACY_TOOL_DEPRECATED"]));

    let found = call(&client, "search_project", json!({"query": "f7", "maxResults": 3})).await;
    assert_eq!(found.is_error, Some(false), "{}", text_of(&found));
    let found = found.structured_content.unwrap();
    assert_eq!(found["inferredType"], json!("symbol"), "{found}");
    assert_eq!(found["results"][0]["path"], json!("src/lib.rs"), "{found}");
    assert_eq!(found["results"][0]["line"], json!(7), "{found}");

    let metrics = call(&client, "manage", json!({"command": "metrics"})).await;
    assert!(
        text_of(&metrics).contains("legacy names (hidden, deprecated): read_code 1 · read_file 1 · search_project 1")
    );

    // A name that is neither a tool nor a legacy name is still a protocol error.
    let error = client.call_tool(CallToolRequestParams::new("read_everything")).await.unwrap_err();
    assert!(error.to_string().contains("unknown tool"), "{error}");
    client.cancel().await.unwrap();
}

/// `LOUPE_DISABLE_LEGACY=1`: a legacy call is a tool error `LEGACY_TOOL_DISABLED` whose
/// `next_calls` holds the same call in the new names, which the server then serves.
#[tokio::test]
async fn disabled_legacy_names_answer_with_the_replacement_call() {
    let dir = workspace();
    let index_dir = tempfile::tempdir().unwrap();
    let client = serve(dir.path(), index_dir.path(), &[], &[("LOUPE_DISABLE_LEGACY", "1")]).await;
    assert_eq!(tool_names(&client).await, FIVE);

    let refused = call(&client, "get_snippet", json!({"path": "src/lib.rs", "start_line": 5, "end_line": 6})).await;
    assert_eq!(refused.is_error, Some(true));
    let text = text_of(&refused);
    assert!(text.starts_with("error LEGACY_TOOL_DISABLED: `get_snippet` is a legacy name"), "{text}");
    let structured = refused.structured_content.unwrap();
    assert_eq!(structured["error"]["code"], json!("LEGACY_TOOL_DISABLED"));
    let replacement = &structured["next_calls"][0];
    assert_eq!(
        replacement,
        &json!({"tool": "read", "arguments": {"mode": "snippet", "target": "src/lib.rs", "start_line": 5, "end_line": 6}})
    );

    let replayed = call(&client, "read", replacement["arguments"].clone()).await;
    assert_eq!(replayed.is_error, Some(false), "{}", text_of(&replayed));
    assert!(text_of(&replayed).contains("5 fn f5() -> u32 { 5 }\n"));
    client.cancel().await.unwrap();
}

/// `--legacy-tools listed`: `tools/list` holds the five tools, then every legacy name marked
/// deprecated, and a listed name is called like a hidden one.
#[tokio::test]
async fn listed_legacy_names_are_in_tools_list_marked_deprecated() {
    let dir = workspace();
    let index_dir = tempfile::tempdir().unwrap();
    let client = serve(dir.path(), index_dir.path(), &["--legacy-tools", "listed"], &[]).await;
    let tools = client.list_tools(None).await.unwrap().tools;
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    let legacy: Vec<&str> = loupe_engine::legacy::LEGACY_TOOLS.iter().map(|legacy| legacy.name).collect();
    assert_eq!(names[..5], FIVE);
    assert_eq!(names[5..], legacy[..]);
    for tool in &tools[5..] {
        assert!(tool.description.as_deref().unwrap().starts_with("Deprecated: use `"), "{tool:?}");
        assert_eq!(tool.meta.as_ref().unwrap().0["deprecated"], json!(true), "{tool:?}");
    }

    let result = call(&client, "read_file", json!({"path": "src/lib.rs", "offset": 2, "limit": 2})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let text = text_of(&result);
    assert!(text.contains("2 fn f2() -> u32 { 2 }\n3 fn f3() -> u32 { 3 }\n"), "{text}");
    assert!(text.contains("[LEGACY_TOOL_DEPRECATED]"), "{text}");
    client.cancel().await.unwrap();
}
