//! `loupe install`, `loupe uninstall` and `loupe hook` end to end through the binary, with a
//! home directory of the test's own: what is shown, what is written, and that a second run and
//! an uninstall leave the files as the user had them. (The real Claude Code and Codex CLIs judge
//! the written files in `scripts/check-install.sh`.)

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");

fn loupe(cwd: &Path, home: &Path, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(LOUPE)
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("USERPROFILE", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("APPDATA", home.join("AppData"))
        .env_remove("CODEX_HOME")
        .env_remove("LOUPE_ROOT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(output: &Output) -> String {
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn install_shows_writes_repeats_nothing_and_uninstalls_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let claude = "{\n  \"numStartups\": 4,\n  \"mcpServers\": {\"db\": {\"command\": \"pg\"}}\n}\n";
    let codex = "# mine\nmodel = \"o3\"\n";
    std::fs::write(home.join(".claude.json"), claude).unwrap();
    std::fs::write(home.join(".codex/config.toml"), codex).unwrap();
    let install = ["install", "claude-code", "codex", "--command", "/opt/bin/loupe"];

    let dry = text(&loupe(&project, &home, &[&install[..], &["--dry-run"]].concat(), ""));
    assert!(dry.contains("claude-code: edit ~/.claude.json") && dry.contains("+    \"loupe\": {"), "{dry}");
    assert!(dry.contains("codex: edit ~/.codex/config.toml") && dry.contains("+[mcp_servers.loupe]"), "{dry}");
    assert!(dry.ends_with("dry run: nothing written\n"), "{dry}");
    assert_eq!(std::fs::read_to_string(home.join(".claude.json")).unwrap(), claude);

    let written = text(&loupe(&project, &home, &install, ""));
    assert!(written.contains("written") && written.contains("claude mcp list"), "{written}");
    let servers: Value = serde_json::from_str(&std::fs::read_to_string(home.join(".claude.json")).unwrap()).unwrap();
    assert_eq!(servers["mcpServers"]["db"], json!({"command": "pg"}));
    assert_eq!(
        servers["mcpServers"]["loupe"],
        json!({"type": "stdio", "command": "/opt/bin/loupe", "args": ["serve"]})
    );
    let table: toml::Table = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap().parse().unwrap();
    assert_eq!(table["mcp_servers"]["loupe"]["args"], toml::Value::Array(vec!["serve".into()]));

    let again = text(&loupe(&project, &home, &install, ""));
    assert!(again.ends_with("nothing to change\n"), "{again}");

    text(&loupe(&project, &home, &["uninstall", "claude-code", "codex"], ""));
    assert_eq!(std::fs::read_to_string(home.join(".claude.json")).unwrap(), claude);
    assert_eq!(std::fs::read_to_string(home.join(".codex/config.toml")).unwrap(), codex);
}

#[test]
fn install_without_names_sets_up_the_clients_it_finds_and_refuses_unknown_ones() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let out = text(&loupe(&project, &home, &["install", "--scope", "project", "--dry-run"], ""));
    // Gemini's directory is there; Claude Code or Codex may be on this machine's PATH too.
    assert!(out.contains("gemini: create "), "{out}");
    assert!(!out.contains("windsurf") && !out.contains("zed:"), "{out}");

    let unknown = loupe(&project, &home, &["install", "emacs"], "");
    assert!(!unknown.status.success());
    let error = String::from_utf8_lossy(&unknown.stderr);
    assert!(error.contains("unknown client `emacs`") && error.contains("claude-code"), "{error}");
}

#[test]
fn the_hook_answers_a_pre_tool_use_event_and_stays_silent_on_anything_else() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/big.py"), "def f():\n    return 1\n".repeat(600)).unwrap();
    let event = json!({
        "session_id": "s", "transcript_path": "/dev/null", "cwd": dir.path(),
        "hook_event_name": "PreToolUse", "tool_name": "Read",
        "tool_input": {"file_path": dir.path().join("src/big.py")},
    });
    let out = text(&loupe(dir.path(), dir.path(), &["hook", "claude-code", "--mode", "redirect"], &event.to_string()));
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains(r#"mcp__loupe__read {"mode":"outline","target":"src/big.py"}"#), "{reason}");
    // A grep is left alone: its answer is as short as loupe's (bench/results/adoption.md).
    let grep = json!({"cwd": dir.path(), "hook_event_name": "PreToolUse", "tool_name": "Grep",
                      "tool_input": {"pattern": "def f"}});
    let output = loupe(dir.path(), dir.path(), &["hook", "claude-code"], &grep.to_string());
    assert!(output.status.success() && output.stdout.is_empty(), "{output:?}");
    for input in ["", "not json", "{\"tool_name\": \"Write\"}"] {
        let output = loupe(dir.path(), dir.path(), &["hook", "claude-code"], input);
        assert!(output.status.success() && output.stdout.is_empty(), "{input}: {output:?}");
    }
}
