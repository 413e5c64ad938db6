//! `loupe hook claude-code`: Claude Code's `PreToolUse` hook, steering built-in lookups toward
//! the loupe call that answers the same question in fewer tokens.
//!
//! Claude Code sends the pending tool call as JSON on stdin; the hook answers on stdout with
//! `hookSpecificOutput`: in `suggest` mode the call runs and the loupe call comes as
//! `additionalContext`; in `redirect` mode the call is denied with the loupe call as the reason.
//! It routes only what it can map with certainty, from the call alone and the file sizes:
//!
//! - `Grep` (or `rg`, `grep -r`, `git grep` in `Bash`) of an identifier, or of a definition
//!   (`def name`, `class Name`, `fn name`, …), over a directory of code → `search`.
//! - `Glob` (or `find -name`) for one file name → `search` of type `file`.
//! - A whole-file `Read` (or `cat`) of a source file over [`LARGE_FILE_BYTES`] → `search` for
//!   the file, whose answer offers the outline read (the read gate wants that ref, §9.7).
//!
//! Everything else is left alone: non-code files, small files, ranged reads, regexes, piped or
//! chained shell commands. It never loads the index and fails open: whatever it cannot read or
//! decide, it answers with nothing and exit code 0, so the call goes on as Claude Code meant it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::install::HookMode;

/// A whole-file read of a source file this big (bytes) is routed: about 4,000 tokens, past
/// which an outline and a ranged read are cheaper than the file.
pub(crate) const LARGE_FILE_BYTES: u64 = 16 * 1024;

/// The prefix Claude Code gives the tools of the server `loupe` installs.
const TOOL_PREFIX: &str = "mcp__loupe__";

/// A routed call: the loupe call that serves the same need, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Route {
    pub(crate) tool: &'static str,
    pub(crate) arguments: Value,
    /// What the built-in call would cost, when it is known without running it (bytes of the
    /// file a whole-file read would send).
    pub(crate) built_in_bytes: Option<u64>,
    /// One line: what the loupe call gives.
    pub(crate) gives: &'static str,
}

impl Route {
    pub(crate) fn call(&self) -> String {
        format!("{TOOL_PREFIX}{} {}", self.tool, crate::install::ordered_json(&self.arguments))
    }

    fn message(&self) -> String {
        let saving = match self.built_in_bytes {
            Some(bytes) => format!(" (the whole file is ~{} tokens)", bytes / 4),
            None => String::new(),
        };
        format!("loupe answers this with fewer tokens: {}: {}{saving}.", self.call(), self.gives)
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
    let root = root_of(cwd);
    match tool {
        "Grep" => {
            if input["multiline"].as_bool() == Some(true) {
                return None;
            }
            let scope = input["path"].as_str().map_or_else(|| cwd.to_path_buf(), |p| absolute(cwd, p));
            grep_route(input["pattern"].as_str()?, &scope, input["glob"].as_str(), input["type"].as_str(), &root)
        }
        "Glob" => glob_route(input["pattern"].as_str()?),
        "Read" => {
            if !input["offset"].is_null() || !input["limit"].is_null() {
                return None;
            }
            read_route(&absolute(cwd, input["file_path"].as_str()?), &root)
        }
        "Bash" => bash_route(input["command"].as_str()?, cwd, &root),
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

/// An identifier: what a symbol search can answer.
fn identifier(text: &str) -> Option<&str> {
    let first = text.chars().next()?;
    let ok = (first.is_alphabetic() || first == '_')
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
        && text.chars().any(char::is_alphabetic)
        && text.len() >= 3;
    ok.then_some(text)
}

/// The definition keywords a definition grep starts with.
const DEFINERS: &[&str] =
    &["def", "class", "fn", "func", "function", "struct", "enum", "trait", "interface", "type", "impl", "module"];

/// A grep pattern's name and whether it asks for the definition: `name`, `\bname\b`,
/// `def name`, `class\s+Name`, `fn name\(`, `^def name`. Any other regex is left to grep.
fn grep_pattern(pattern: &str) -> Option<(&str, bool)> {
    let mut text = pattern.trim();
    text = text.strip_prefix('^').unwrap_or(text).trim_start();
    for suffix in ["\\(", "(", "\\b", ":", "\\s*\\(", "\\s*\\{", " {", "\\s*:"] {
        text = text.strip_suffix(suffix).unwrap_or(text);
    }
    text = text.strip_prefix("\\b").unwrap_or(text);
    if let Some(name) = identifier(text) {
        return Some((name, false));
    }
    for definer in DEFINERS {
        let Some(rest) = text.strip_prefix(definer) else { continue };
        let rest = ["\\s+", "\\s*", " +", " "].iter().find_map(|gap| rest.strip_prefix(gap)).map(str::trim_start)?;
        let rest = rest.strip_prefix("\\b").unwrap_or(rest);
        return identifier(rest).map(|name| (name, true));
    }
    None
}

fn grep_route(pattern: &str, scope: &Path, glob: Option<&str>, kind: Option<&str>, root: &Path) -> Option<Route> {
    let (name, definition) = grep_pattern(pattern)?;
    let mut arguments = json!({"query": name});
    if definition {
        arguments["type"] = json!("symbol");
    }
    if scope.is_file() {
        return None; // one file: grep is already narrow
    }
    match relative(scope, root)? {
        rel if rel.is_empty() => {}
        rel => arguments["path"] = json!(rel),
    }
    if let Some(glob) = glob {
        // A glob naming files that are not code (`*.md`, `*.json`): not loupe's to answer.
        let last = glob.rsplit('/').next().unwrap_or(glob);
        if !is_code(&last.replace(['*', '?', '{', '}'], "x")) {
            return None;
        }
        arguments["glob"] = json!([glob]);
    }
    if let Some(kind) = kind {
        if !is_code(&format!("x.{kind}")) {
            return None;
        }
        arguments["file_types"] = json!([kind]);
    }
    Some(Route {
        tool: "search",
        arguments,
        built_in_bytes: None,
        gives: if definition {
            "the definition first, ranked, each hit with a ready-to-run read"
        } else {
            "definitions first, then uses, paged, each hit with a ready-to-run read"
        },
    })
}

/// A glob for one file by name (`**/views.py`, `src/**/app.py`): a file search. Globs for many
/// files (`**/*.py`) are left alone.
fn glob_route(pattern: &str) -> Option<Route> {
    let name = pattern.rsplit('/').next()?;
    if name.is_empty() || name.contains(['*', '?', '[', '{']) || !is_code(name) {
        return None;
    }
    Some(Route {
        tool: "search",
        arguments: json!({"query": name, "type": "file"}),
        built_in_bytes: None,
        gives: "the matching files, ranked, each with a ready-to-run read",
    })
}

/// A whole-file read of a large source file inside the root: find it, then read the outline
/// the search offers.
fn read_route(path: &Path, root: &Path) -> Option<Route> {
    let rel = relative(path, root)?;
    if rel.is_empty() || !is_code(&rel) {
        return None;
    }
    let size = std::fs::metadata(path).ok().filter(std::fs::Metadata::is_file)?.len();
    (size > LARGE_FILE_BYTES).then(|| Route {
        tool: "search",
        arguments: json!({"query": rel, "type": "file"}),
        built_in_bytes: Some(size),
        gives: "its hit's read is the file's outline (signatures with line numbers); then read only the lines you need",
    })
}

/// A shell command that is one lookup: `rg`, `grep -r`, `git grep`, `cat FILE`, `find -name`.
/// Chains and pipes into anything but `head`/`tail`/`wc -l` are left alone.
fn bash_route(command: &str, cwd: &Path, root: &Path) -> Option<Route> {
    if command.contains(['&', ';', '>', '<', '`', '$', '\n']) {
        return None;
    }
    let mut stages = command.split('|');
    let words = shlex::split(stages.next()?)?;
    for stage in stages {
        let rest = shlex::split(stage)?;
        if !matches!(rest.first().map(String::as_str), Some("head" | "tail")) {
            return None;
        }
    }
    let (program, args) = words.split_first()?;
    match program.as_str() {
        "rg" | "grep" | "egrep" => shell_grep(program == "rg", args, cwd, root),
        "git" if args.first().map(String::as_str) == Some("grep") => shell_grep(true, &args[1..], cwd, root),
        "cat" | "bat" | "less" if args.len() == 1 => read_route(&absolute(cwd, &args[0]), root),
        "find" => {
            let at = args.iter().position(|arg| arg == "-name" || arg == "-iname")?;
            glob_route(args.get(at + 1)?)
        }
        _ => None,
    }
}

/// A shell grep: flags that only shape the output pass; any that change what matches
/// (`-v`, `-P`, `-f`, `-w` on `rg`…) leave it alone. `grep` must be recursive.
fn shell_grep(recursive: bool, args: &[String], cwd: &Path, root: &Path) -> Option<Route> {
    let mut recursive = recursive;
    let mut positional = Vec::new();
    let mut glob = None;
    let mut kind = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-r" | "-R" | "--recursive" => recursive = true,
            "-n" | "--line-number" | "-H" | "-i" | "-I" | "--no-heading" | "-S" | "--smart-case" | "-w" | "-F" => {}
            "-g" | "--glob" | "--include" => glob = Some(iter.next()?.clone()),
            "-t" | "--type" => kind = Some(iter.next()?.clone()),
            "-e" => positional.insert(0, iter.next()?.clone()),
            flag if flag.starts_with("--include=") => glob = Some(flag["--include=".len()..].to_owned()),
            flag if flag.starts_with('-') && flag.len() > 1 && !flag.starts_with("--") => {
                // Bundled short flags: only output-shaping ones.
                if !flag[1..].chars().all(|c| "rRnHiIwF".contains(c)) {
                    return None;
                }
                recursive |= flag.contains(['r', 'R']);
            }
            flag if flag.starts_with('-') => return None,
            _ => positional.push(arg.clone()),
        }
    }
    if !recursive {
        return None;
    }
    let (pattern, paths) = positional.split_first()?;
    let scope = match paths {
        [] => cwd.to_path_buf(),
        [one] => absolute(cwd, one),
        _ => return None,
    };
    grep_route(pattern, &scope, glob.as_deref(), kind.as_deref(), root)
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
    fn greps_for_names_and_definitions_become_searches() {
        let repo = repo();
        let root = repo.path();
        let cases = [
            (json!({"pattern": "url_for"}), r#"mcp__loupe__search {"query":"url_for"}"#),
            (json!({"pattern": "\\burl_for\\b"}), r#"mcp__loupe__search {"query":"url_for"}"#),
            (json!({"pattern": "def url_for"}), r#"mcp__loupe__search {"query":"url_for","type":"symbol"}"#),
            (json!({"pattern": "^class\\s+Flask\\b"}), r#"mcp__loupe__search {"query":"Flask","type":"symbol"}"#),
            (json!({"pattern": "fn parse\\("}), r#"mcp__loupe__search {"query":"parse","type":"symbol"}"#),
            (
                json!({"pattern": "Blueprint", "path": "src", "type": "py"}),
                r#"mcp__loupe__search {"query":"Blueprint","path":"src","file_types":["py"]}"#,
            ),
            (
                json!({"pattern": "Blueprint", "glob": "**/*.py"}),
                r#"mcp__loupe__search {"query":"Blueprint","glob":["**/*.py"]}"#,
            ),
        ];
        for (input, want) in cases {
            assert_eq!(routed("Grep", input.clone(), root).as_deref(), Some(want), "{input}");
        }
        // From a subdirectory, the grep's scope is that directory.
        assert_eq!(
            routed("Grep", json!({"pattern": "url_for"}), &root.join("src")).as_deref(),
            Some(r#"mcp__loupe__search {"query":"url_for","path":"src"}"#)
        );
        for input in [
            json!({"pattern": "url_for\\(.*external"}),              // a real regex
            json!({"pattern": "TODO|FIXME"}),                        // alternation
            json!({"pattern": "id"}),                                // too short to be a symbol
            json!({"pattern": "url_for", "glob": "*.md"}),           // not code
            json!({"pattern": "url_for", "type": "yaml"}),           // not code
            json!({"pattern": "url_for", "path": "src/pkg/app.py"}), // one file
            json!({"pattern": "url_for", "path": "/elsewhere"}),     // outside the root
            json!({"pattern": "url_for", "multiline": true}),
        ] {
            assert_eq!(routed("Grep", input.clone(), root), None, "{input}");
        }
    }

    #[test]
    fn only_whole_reads_of_large_source_files_are_routed() {
        let repo = repo();
        let root = repo.path();
        let app = root.join("src/pkg/app.py").display().to_string();
        assert_eq!(
            routed("Read", json!({"file_path": app}), root).as_deref(),
            Some(r#"mcp__loupe__search {"query":"src/pkg/app.py","type":"file"}"#)
        );
        let small = root.join("src/pkg/small.py").display().to_string();
        let notes = root.join("NOTES.md").display().to_string();
        for input in [
            json!({"file_path": app, "offset": 10, "limit": 40}),
            json!({"file_path": app, "limit": 40}),
            json!({"file_path": small}),
            json!({"file_path": notes}),
            json!({"file_path": root.join("src/pkg/missing.py").display().to_string()}),
            json!({"file_path": "/etc/hostname"}),
        ] {
            assert_eq!(routed("Read", input.clone(), root), None, "{input}");
        }
    }

    #[test]
    fn globs_for_one_file_become_file_searches() {
        let root = repo();
        let want = r#"mcp__loupe__search {"query":"views.py","type":"file"}"#;
        assert_eq!(routed("Glob", json!({"pattern": "**/views.py"}), root.path()).as_deref(), Some(want));
        for pattern in ["**/*.py", "src/**/*", "**/README.md", "**/views.{py,pyi}"] {
            assert_eq!(routed("Glob", json!({"pattern": pattern}), root.path()), None, "{pattern}");
        }
    }

    #[test]
    fn shell_lookups_are_routed_and_anything_more_is_not() {
        let repo = repo();
        let root = repo.path();
        let bash = |command: &str| routed("Bash", json!({"command": command}), root);
        let search = |query: &str| Some(format!("mcp__loupe__search {{\"query\":\"{query}\"}}"));
        assert_eq!(bash("rg url_for"), search("url_for"));
        assert_eq!(bash("rg -n url_for | head -20"), search("url_for"));
        assert_eq!(bash("grep -rn url_for ."), search("url_for"));
        assert_eq!(bash("git grep -n url_for"), search("url_for"));
        assert_eq!(
            bash("grep -rn 'def url_for' src --include=*.py"),
            Some(r#"mcp__loupe__search {"query":"url_for","type":"symbol","path":"src","glob":["*.py"]}"#.to_owned())
        );
        assert_eq!(
            bash("cat src/pkg/app.py"),
            Some(r#"mcp__loupe__search {"query":"src/pkg/app.py","type":"file"}"#.to_owned())
        );
        assert_eq!(
            bash("find . -name app.py"),
            Some(r#"mcp__loupe__search {"query":"app.py","type":"file"}"#.to_owned())
        );
        for command in [
            "grep url_for src/pkg/app.py", // not recursive: one file
            "rg url_for | sort",           // piped into more than a cut
            "rg url_for && echo done",
            "rg -v url_for", // changes what matches
            "rg url_for > out.txt",
            "cat src/pkg/small.py",
            "cat NOTES.md",
            "ls src",
            "rg \"$NAME\"",
            "rg 'unterminated",
        ] {
            assert_eq!(bash(command), None, "{command}");
        }
    }

    #[test]
    fn the_answer_speaks_claude_codes_protocol_and_fails_open() {
        let repo = repo();
        let cwd = repo.path().display().to_string();
        let event = json!({
            "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Grep",
            "tool_input": {"pattern": "def url_for"},
        });
        let suggest = answer(&event, HookMode::Suggest).unwrap();
        let output = &suggest["hookSpecificOutput"];
        assert_eq!(output["hookEventName"], "PreToolUse");
        assert!(output.get("permissionDecision").is_none());
        assert!(output["additionalContext"].as_str().unwrap().contains(r#"mcp__loupe__search {"query":"url_for""#));
        let redirect = answer(&event, HookMode::Redirect).unwrap();
        assert_eq!(redirect["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(
            redirect["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("mcp__loupe__search")
        );
        let read = json!({
            "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Read",
            "tool_input": {"file_path": repo.path().join("src/pkg/app.py").display().to_string()},
        });
        let reason =
            answer(&read, HookMode::Redirect).unwrap()["hookSpecificOutput"]["permissionDecisionReason"].clone();
        assert!(reason.as_str().unwrap().contains("the whole file is ~5500 tokens"), "{reason}");
        for event in [
            json!({"hook_event_name": "PostToolUse", "cwd": cwd, "tool_name": "Grep", "tool_input": {"pattern": "url_for"}}),
            json!({"cwd": cwd, "tool_name": "Edit", "tool_input": {"file_path": "a.py"}}),
            json!({"cwd": cwd, "tool_name": "Grep"}),
            json!({"cwd": cwd, "tool_name": "Grep", "tool_input": {"pattern": 7}}),
            json!([1, 2]),
        ] {
            assert_eq!(answer(&event, HookMode::Redirect), None, "{event}");
        }
    }
}
