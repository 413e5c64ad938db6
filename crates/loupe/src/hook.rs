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
