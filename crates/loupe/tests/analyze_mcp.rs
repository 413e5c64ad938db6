//! `analyze` end to end: the real binary over stdio, driven by rmcp's client.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");

fn arguments(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[tokio::test]
async fn analyze_answers_over_stdio_once_the_index_is_ready() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/__init__.py"), "").unwrap();
    std::fs::write(dir.path().join("pkg/base.py"), "class Shape:\n    def area(self):\n        return 0\n").unwrap();
    std::fs::write(
        dir.path().join("pkg/square.py"),
        "from .base import Shape\n\n\nclass Square(Shape):\n    def area(self):\n        return super().area() + 1\n",
    )
    .unwrap();
    let mut command = tokio::process::Command::new(LOUPE);
    command
        .arg("serve")
        .arg("--root")
        .arg(dir.path())
        .env("XDG_CACHE_HOME", std::env::temp_dir().join("loupe-test-cache"))
        .stderr(Stdio::null());
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();

    // The first build runs in the background: ask until the index says ready.
    let started = Instant::now();
    let structured = loop {
        let result = client
            .call_tool(
                CallToolRequestParams::new("analyze")
                    .with_arguments(arguments(json!({"mode": "types", "target": "Shape", "metadata": "full"}))),
            )
            .await
            .unwrap();
        let structured = result.structured_content.unwrap();
        if structured["meta"]["index_state"] == json!("ready") && structured["ok"] == json!(true) {
            break structured;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "index never ready: {structured}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(structured["tool"], "analyze");
    assert_eq!(structured["meta"]["edges"][0]["source"], "pkg/square.py#Square");
    assert_eq!(structured["meta"]["edges"][0]["relation"], "extends");

    let result = client
        .call_tool(
            CallToolRequestParams::new("analyze")
                .with_arguments(arguments(json!({"mode": "calls", "target": "Shape.area", "direction": "upstream"}))),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let text: String = result.content.iter().filter_map(|block| block.as_text()).map(|t| t.text.clone()).collect();
    assert!(text.contains("← Square.area  pkg/square.py:6"), "{text}");

    let result = client
        .call_tool(CallToolRequestParams::new("analyze").with_arguments(arguments(json!({"target": "Shape"}))))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(result.structured_content.unwrap()["error"]["code"], "INVALID_ARGS");
    client.cancel().await.unwrap();
}
