//! `loupe hook claude-code`: Claude Code's `PreToolUse` hook, steering built-in lookups toward
//! the loupe call that answers the same question in fewer tokens.
//!
//! Claude Code sends the pending tool call as JSON on stdin; the hook answers on stdout with
//! `hookSpecificOutput`: in `suggest` mode the call runs and the loupe call comes as
//! `additionalContext`; in `redirect` mode the call is denied with the loupe call as the reason.
//! It routes only what it can map with certainty, from the call alone and the file's size:
//!
//! - A whole-file `Read` (or `cat FILE`, `cat -n FILE` in `Bash`) of a source file of
//!   [`LARGE_FILE_BYTES`] or more → its `outline` (names by kind with their lines; an outline
//!   needs no search first, §9.7).
//!
//! Everything else is left alone, greps and globs included: their answers are already as short
//! as loupe's (a grep for `def name` prints one line, a glob for a file name one path, against a
//! search answer's ranked hits, signatures and next call), and `auto` answers an identifier with
//! its definitions, not its uses. `bench/adoption/` replays 277 built-in calls on Flask: routed
//! to `search`, 127 of 131 greps, globs and `find`s cost more tokens than the built-in answer
//! or lost what it showed (`bench/results/adoption.md`). Also left alone: non-code files, small
//! files, ranged reads, piped or chained shell commands. It never loads the index and fails
//! open: whatever it cannot read or decide, it answers with nothing and exit code 0, so the call
//! goes on as Claude Code meant it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::install::HookMode;

/// A whole-file read of a source file this big (bytes) is routed: about 2,000 tokens, past which
/// the outline (and then a ranged read of the lines wanted) is the cheaper way in. Measured on
/// Flask (`bench/results/adoption.md`): the search and the outline cost 5–25% of the whole read
/// for files of 9–60 KiB.
pub(crate) const LARGE_FILE_BYTES: u64 = 8 * 1024;

/// The prefix Claude Code gives the tools of the server `loupe` installs.
const TOOL_PREFIX: &str = "mcp__loupe__";

/// A routed call: the loupe call that serves the same need, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Route {
    pub(crate) tool: &'static str,
    pub(crate) arguments: Value,
    /// What the built-in call would cost: the bytes of the file a whole-file read would send.
    pub(crate) built_in_bytes: u64,
    /// One line: what the loupe call gives.
    pub(crate) gives: &'static str,
}

impl Route {
    pub(crate) fn call(&self) -> String {
        format!("{TOOL_PREFIX}{} {}", self.tool, crate::install::ordered_json(&self.arguments))
    }

    fn message(&self) -> String {
        format!(
            "loupe answers this with fewer tokens: {}: {} (the whole file is ~{} tokens).",
            self.call(),
            self.gives,
            self.built_in_bytes / 4
        )
    }
}

/// Runs the hook: reads the event from stdin, writes the answer to stdout. Never fails: a
/// broken input or a call it cannot map gets no answer.
pub(crate) fn run(mode: HookMode) {
    use std::io::{Read, Write};
    let mut input = String::new();
    if std::io::stdin().take(1 << 20).read_to_string(&mut input).is_err() {
        return;
    }
    let Ok(event) = serde_json::from_str::<Value>(&input) else { return };
    if let Some(answer) = answer(&event, mode) {
        let _ = writeln!(std::io::stdout(), "{answer}");
    }
}

/// The hook's answer to one `PreToolUse` event, or `None` to leave the call alone.
pub(crate) fn answer(event: &Value, mode: HookMode) -> Option<Value> {
    if event["hook_event_name"].as_str().is_some_and(|name| name != "PreToolUse") {
        return None;
    }
    let cwd = event["cwd"].as_str().map(PathBuf::from).or_else(|| std::env::current_dir().ok())?;
    let route = route(event["tool_name"].as_str()?, &event["tool_input"], &cwd)?;
    let output = match mode {
        HookMode::Suggest => json!({"hookEventName": "PreToolUse", "additionalContext": route.message()}),
        HookMode::Redirect => json!({
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": route.message(),
        }),
    };
    Some(json!({"hookSpecificOutput": output}))
}

/// The loupe call for a built-in tool call, if there is one that surely serves it.
pub(crate) fn route(tool: &str, input: &Value, cwd: &Path) -> Option<Route> {
    match tool {
        "Read" => {
            if !input["offset"].is_null() || !input["limit"].is_null() {
                return None;
            }
            read_route(&absolute(cwd, input["file_path"].as_str()?), &root_of(cwd))
        }
        "Bash" => bash_route(input["command"].as_str()?, cwd),
        _ => None,
    }
}

/// The repository around `cwd`, as loupe chooses it (§2): the nearest ancestor holding `.git`
/// or `loupe.toml`, else `cwd`.
fn root_of(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists() || dir.join("loupe.toml").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) }
}

/// `path` as loupe names it: relative to the root with `/`, or `None` outside the root.
fn relative(path: &Path, root: &Path) -> Option<String> {
    let rest = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rest.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
    (!parts.iter().any(|part| part == "..")).then(|| parts.join("/"))
}

fn is_code(path: &str) -> bool {
    loupe_syntax::Lang::from_path(path).is_some()
}

/// A whole-file read of a large source file inside the root: its outline.
fn read_route(path: &Path, root: &Path) -> Option<Route> {
    let rel = relative(path, root)?;
    if rel.is_empty() || !is_code(&rel) {
        return None;
    }
    let size = std::fs::metadata(path).ok().filter(std::fs::Metadata::is_file)?.len();
    (size >= LARGE_FILE_BYTES).then(|| Route {
        tool: "read",
        arguments: json!({"mode": "outline", "target": rel}),
        built_in_bytes: size,
        gives: "the file's definitions with their lines; then read a symbol by name, or only the lines you need",
    })
}

/// A shell command that is one whole-file read: `cat FILE`, `cat -n FILE` (or `bat`, `less`).
/// Anything chained, piped (`cat FILE | head` is a partial read) or redirected is left alone.
fn bash_route(command: &str, cwd: &Path) -> Option<Route> {
    if command.contains(['&', ';', '|', '>', '<', '`', '$', '\n']) {
        return None;
    }
    let words = shlex::split(command)?;
    match words.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["cat" | "bat" | "less", file] | ["cat", "-n", file] => read_route(&absolute(cwd, file), &root_of(cwd)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository with a large and a small source file and a large text file.
    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src/pkg")).unwrap();
        let large = "def f():\n    return 1\n".repeat(1_000);
        std::fs::write(root.join("src/pkg/app.py"), &large).unwrap();
        std::fs::write(root.join("src/pkg/small.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("NOTES.md"), &large).unwrap();
        dir
    }

    fn routed(tool: &str, input: Value, cwd: &Path) -> Option<String> {
        route(tool, &input, cwd).map(|route| route.call())
    }

    #[test]
    fn only_whole_reads_of_large_source_files_are_routed() {
        let repo = repo();
        let root = repo.path();
        let app = root.join("src/pkg/app.py").display().to_string();
        let want = Some(r#"mcp__loupe__read {"mode":"outline","target":"src/pkg/app.py"}"#.to_owned());
        assert_eq!(routed("Read", json!({"file_path": app}), root), want);
        // From a subdirectory, a relative path, named from the root.
        assert_eq!(routed("Read", json!({"file_path": "pkg/app.py"}), &root.join("src")), want);
        let small = root.join("src/pkg/small.py").display().to_string();
        let notes = root.join("NOTES.md").display().to_string();
        for input in [
            json!({"file_path": app, "offset": 10, "limit": 40}),
            json!({"file_path": app, "limit": 40}),
            json!({"file_path": small}),
            json!({"file_path": notes}),
            json!({"file_path": root.join("src/pkg").display().to_string()}),
            json!({"file_path": root.join("src/pkg/missing.py").display().to_string()}),
            json!({"file_path": "/etc/hostname"}),
            json!({"file_path": 7}),
        ] {
            assert_eq!(routed("Read", input.clone(), root), None, "{input}");
        }
    }

    #[test]
    fn the_threshold_is_inclusive() {
        let repo = repo();
        let root = repo.path();
        let size = usize::try_from(LARGE_FILE_BYTES).unwrap();
        std::fs::write(root.join("src/pkg/edge.py"), "#".repeat(size)).unwrap();
        std::fs::write(root.join("src/pkg/under.py"), "#".repeat(size - 1)).unwrap();
        assert!(routed("Read", json!({"file_path": "src/pkg/edge.py"}), root).is_some());
        assert_eq!(routed("Read", json!({"file_path": "src/pkg/under.py"}), root), None);
    }

    #[test]
    fn greps_and_globs_are_left_alone() {
        // Their answers are already short: a search answer costs more (bench/adoption).
        let repo = repo();
        let root = repo.path();
        for (tool, input) in [
            ("Grep", json!({"pattern": "def url_for"})),
            ("Grep", json!({"pattern": "url_for", "output_mode": "content", "-n": true})),
            ("Grep", json!({"pattern": "class\\s+Flask\\b", "path": "src", "type": "py"})),
            ("Glob", json!({"pattern": "**/app.py"})),
            ("Glob", json!({"pattern": "**/*.py"})),
            ("Edit", json!({"file_path": "src/pkg/app.py"})),
        ] {
            assert_eq!(routed(tool, input.clone(), root), None, "{tool} {input}");
        }
    }

    #[test]
    fn a_shell_whole_read_is_routed_and_anything_more_is_not() {
        let repo = repo();
        let root = repo.path();
        let bash = |command: &str| routed("Bash", json!({"command": command}), root);
        let want = Some(r#"mcp__loupe__read {"mode":"outline","target":"src/pkg/app.py"}"#.to_owned());
        assert_eq!(bash("cat src/pkg/app.py"), want);
        assert_eq!(bash("cat -n src/pkg/app.py"), want);
        assert_eq!(bash("less 'src/pkg/app.py'"), want);
        for command in [
            "cat src/pkg/app.py | head -50", // a partial read
            "cat src/pkg/app.py && echo done",
            "cat src/pkg/app.py > copy.py",
            "cat src/pkg/app.py src/pkg/small.py",
            "cat -A src/pkg/app.py",
            "cat src/pkg/small.py",
            "cat NOTES.md",
            "cat \"$FILE\"",
            "cat 'unterminated",
            "rg url_for",
            "grep -rn 'def url_for' src",
            "find . -name app.py",
            "head -2000 src/pkg/app.py",
            "ls src",
        ] {
            assert_eq!(bash(command), None, "{command}");
        }
    }

    #[test]
    fn the_answer_speaks_claude_codes_protocol_and_fails_open() {
        let repo = repo();
        let cwd = repo.path().display().to_string();
        let app = repo.path().join("src/pkg/app.py").display().to_string();
        let event = json!({
            "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Read",
            "tool_input": {"file_path": app},
        });
        let suggest = answer(&event, HookMode::Suggest).unwrap();
        let output = &suggest["hookSpecificOutput"];
        assert_eq!(output["hookEventName"], "PreToolUse");
        assert!(output.get("permissionDecision").is_none());
        let context = output["additionalContext"].as_str().unwrap();
        assert!(context.contains(r#"mcp__loupe__read {"mode":"outline","target":"src/pkg/app.py"}"#), "{context}");
        assert!(context.contains("the whole file is ~5500 tokens"), "{context}");
        let redirect = answer(&event, HookMode::Redirect).unwrap();
        assert_eq!(redirect["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(
            redirect["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("mcp__loupe__read")
        );
        for event in [
            json!({"hook_event_name": "PostToolUse", "cwd": cwd, "tool_name": "Read", "tool_input": {"file_path": app}}),
            json!({"cwd": cwd, "tool_name": "Grep", "tool_input": {"pattern": "def url_for"}}),
            json!({"cwd": cwd, "tool_name": "Read"}),
            json!({"cwd": cwd, "tool_name": "Read", "tool_input": {"file_path": 7}}),
            json!({"cwd": cwd, "tool_name": 7, "tool_input": {"file_path": app}}),
            json!([1, 2]),
        ] {
            assert_eq!(answer(&event, HookMode::Redirect), None, "{event}");
        }
    }
}
