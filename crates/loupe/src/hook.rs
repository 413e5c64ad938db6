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
//! - A grep for a definition (`def name`, `class Name`, …) with [`BODY_CONTEXT`] lines of context
//!   or more, as `Grep` or as `rg`, `grep -r`, `git grep` in `Bash` → that definition read by
//!   name (an exact name needs no search first).
//!
//! Everything else is left alone, other greps and globs included: their answers are already as
//! short as loupe's (a grep for `def name` prints one line, a glob for a file name one path, a
//! default-mode grep the paths alone), and a grep of an identifier's uses costs about what
//! loupe's grouped lines do on the text face and less than the structured face.
//! `bench/adoption/` replays 277 built-in calls on Flask and counts both (`bench/results/adoption.md`).
//! Also left alone: non-code files and directories, small files, ranged reads, piped or chained
//! shell commands. It never loads the index and fails open: whatever it cannot read or decide,
//! it answers with nothing and exit code 0, so the call goes on as Claude Code meant it.

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
    /// What the built-in call would cost, when the hook knows: the bytes of the file a whole-file
    /// read would send.
    pub(crate) built_in_bytes: Option<u64>,
    /// One line: what the loupe call gives.
    pub(crate) gives: &'static str,
}

impl Route {
    pub(crate) fn call(&self) -> String {
        format!("{TOOL_PREFIX}{} {}", self.tool, crate::install::ordered_json(&self.arguments))
    }

    fn message(&self) -> String {
        let cost =
            self.built_in_bytes.map_or(String::new(), |bytes| format!(" (the whole file is ~{} tokens)", bytes / 4));
        format!("loupe answers this with fewer tokens: {}: {}{cost}.", self.call(), self.gives)
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
        "Grep" => grep_route(&Grep::from_tool(input)?, cwd),
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
        built_in_bytes: Some(size),
        gives: "the file's definitions with their lines; then read a symbol by name, or only the lines you need",
    })
}

/// A shell command that is one whole-file read (`cat FILE`, `cat -n FILE`, `bat`, `less`) or one
/// recursive grep (`rg`, `grep -r`, `git grep`), possibly after `cd DIR &&`. Anything else
/// chained, piped (`cat FILE | head` is a partial read) or redirected is left alone.
fn bash_route(command: &str, cwd: &Path) -> Option<Route> {
    let (cwd, command) = match command.split_once("&&") {
        Some((cd, rest)) => match shlex::split(cd)?.as_slice() {
            [cd, dir] if cd == "cd" => (absolute(cwd, dir), rest),
            _ => return None,
        },
        None => (cwd.to_path_buf(), command),
    };
    if command.contains(['&', ';', '|', '>', '<', '`', '$', '\n']) {
        return None;
    }
    let words = shlex::split(command)?;
    match words.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["cat" | "bat" | "less", file] | ["cat", "-n", file] => read_route(&absolute(&cwd, file), &root_of(&cwd)),
        ["rg", rest @ ..] => grep_route(&Grep::from_shell(rest, false)?, &cwd),
        ["grep", rest @ ..] => grep_route(&Grep::from_shell(rest, true)?, &cwd),
        ["git", "grep", rest @ ..] => grep_route(&Grep::from_shell(rest, false)?, &cwd),
        _ => None,
    }
}

/// A grep, from `Grep`'s arguments or a shell grep's words: what the hook needs to map it.
#[derive(Debug, Default)]
struct Grep {
    pattern: String,
    /// It shows lines (`Grep`'s content mode; a shell grep without `-l` or `-c`).
    lines: bool,
    /// The one directory or file searched, as given (relative to the working directory).
    path: Option<String>,
    /// Globs of the files searched (`glob`, `--include`, `-g`), and a ripgrep type (`py`, `rust`).
    globs: Vec<String>,
    file_type: Option<String>,
    /// Lines of context asked for around each match (`-A`, `-B`, `-C`: the most of them).
    context: u64,
}

impl Grep {
    /// Claude Code's `Grep`. A multiline pattern, a page (`head_limit`, `offset`) or an argument
    /// it does not know is left alone.
    fn from_tool(input: &Value) -> Option<Grep> {
        let mut grep = Grep { pattern: input["pattern"].as_str()?.to_owned(), ..Grep::default() };
        for (key, value) in input.as_object()? {
            match key.as_str() {
                "output_mode" => grep.lines = value.as_str()? == "content",
                "path" => grep.path = Some(value.as_str()?.to_owned()),
                "glob" => grep.globs.push(value.as_str()?.to_owned()),
                "type" => grep.file_type = Some(value.as_str()?.to_owned()),
                "-A" | "-B" | "-C" | "context" => grep.context = grep.context.max(value.as_u64()?),
                "pattern" | "-n" | "-i" => {}
                "multiline" if value == &Value::Bool(false) => {}
                _ => return None,
            }
        }
        Some(grep)
    }

    /// `rg`, `grep -r` (`recursive`: a grep of one file or of stdin is not a lookup of the tree)
    /// or `git grep`: `[FLAGS] PATTERN [PATH]`. A flag it does not know is left alone.
    fn from_shell(words: &[&str], recursive: bool) -> Option<Grep> {
        let mut grep = Grep { lines: true, ..Grep::default() };
        let mut found_recursive = !recursive;
        let mut positional = Vec::new();
        let mut words = words.iter().copied();
        while let Some(word) = words.next() {
            let (flag, inline) = match word.split_once('=') {
                Some((flag, value)) if word.starts_with("--") => (flag, Some(value)),
                _ => (word, None),
            };
            let mut value = || inline.or_else(|| words.next());
            match flag {
                "-A" | "-B" | "-C" | "--after-context" | "--before-context" | "--context" => {
                    grep.context = grep.context.max(value()?.parse().ok()?);
                }
                "-t" | "--type" => grep.file_type = Some(value()?.to_owned()),
                "-g" | "--glob" | "--include" => grep.globs.push(value()?.to_owned()),
                "--line-number" | "--no-heading" | "--with-filename" | "--ignore-case" | "--word-regexp" => {}
                "-e" | "--regexp" => positional.push(value()?),
                _ if flag.starts_with("--") => return None,
                _ if flag.starts_with('-') && flag.len() > 1 => {
                    // A cluster of short flags (`-rnw`, `-A5`); `-l` and `-c` show no lines.
                    let mut flags = flag[1..].chars();
                    while let Some(short) = flags.next() {
                        match short {
                            'r' | 'R' => found_recursive = true,
                            'n' | 'H' | 'w' | 'i' | 'I' | 'S' | 'N' => {}
                            'l' | 'c' => grep.lines = false,
                            'A' | 'B' | 'C' => {
                                let rest: String = flags.by_ref().collect();
                                let lines = if rest.is_empty() { value()?.to_owned() } else { rest };
                                grep.context = grep.context.max(lines.parse().ok()?);
                            }
                            _ => return None,
                        }
                    }
                }
                _ => positional.push(word),
            }
        }
        match positional.as_slice() {
            [pattern] => grep.pattern = (*pattern).to_owned(),
            [pattern, path] => (grep.pattern, grep.path) = ((*pattern).to_owned(), Some((*path).to_owned())),
            _ => return None,
        }
        found_recursive.then_some(grep)
    }
}

/// A grep for a definition with this many lines of context or more wants its body: the
/// symbol's read shows it whole, in fewer tokens than a grep's `path-line-` prefixes (replayed
/// on Flask, `bench/adoption/`: 20, 40 and 15 lines save 60–80%; 6 lines, a signature's worth,
/// cost more than the grep).
const BODY_CONTEXT: u64 = 10;

/// A definition's pattern: `def name`, `class Name\b`, `^def name\(`, `class\s+Name`, and the
/// same with `fn`, `func`, `function`, `struct`, `trait`, `interface`, `enum`, `type`.
fn definition(pattern: &str) -> Option<&str> {
    const KEYWORDS: &[&str] =
        &["def", "class", "fn", "func", "function", "struct", "trait", "interface", "enum", "type"];
    let rest = pattern.strip_prefix('^').unwrap_or(pattern);
    let (keyword, rest) = rest.split_once(' ').or_else(|| rest.split_once("\\s+"))?;
    if !KEYWORDS.contains(&keyword) {
        return None;
    }
    let name = ["\\b", "\\(", "("].iter().find_map(|end| rest.strip_suffix(end)).unwrap_or(rest);
    let mut chars = name.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(name)
}

/// ripgrep's names of the code types the hook knows.
const CODE_TYPES: &[&str] =
    &["py", "rust", "js", "ts", "go", "java", "c", "cpp", "ruby", "php", "cs", "kotlin", "swift", "scala", "lua"];

/// A grep of the tree for a definition, with lines of context enough to be after its body: the
/// definition read by name. Any other grep is left alone. Measured on Flask (`bench/adoption/`),
/// greps print less than any search answer can: a definition grep one line a definition, a
/// default-mode grep the paths alone, and a grep of an identifier's uses costs about what the
/// search's grouped lines do on the text face and less than its structured face (replayed with
/// every identifier grep routed: 91 of 155 lookups, 51 of them costing more). A grep of one file,
/// or of prose (a glob, type or directory that is not code) is not a lookup of the code.
fn grep_route(grep: &Grep, cwd: &Path) -> Option<Route> {
    let name = definition(&grep.pattern).filter(|_| grep.lines && grep.context >= BODY_CONTEXT)?;
    if let Some(path) = &grep.path {
        let dir = absolute(cwd, path);
        // The root is the project; a directory under it is a lookup only when it holds code.
        let rel = relative(&dir, &root_of(cwd))?;
        if !dir.is_dir() || (!rel.is_empty() && !mostly_code(&dir)) {
            return None;
        }
    }
    let code_glob = |glob: &String| is_code(&glob.replace(['*', '{', '}'], "x"));
    if !grep.globs.iter().all(code_glob) || grep.file_type.as_deref().is_some_and(|kind| !CODE_TYPES.contains(&kind)) {
        return None;
    }
    Some(Route {
        tool: "read",
        arguments: json!({"mode": "symbol", "target": name}),
        built_in_bytes: None,
        gives: "the whole definition, by name",
    })
}

/// A directory the hook treats as code: more of its files (its own and its subdirectories') are
/// source files than not. `docs/` and `requirements/` are not; `src/` and `tests/` are. Looks at
/// most 256 entries, two levels deep.
fn mostly_code(dir: &Path) -> bool {
    let (mut code, mut other, mut budget) = (0usize, 0usize, 256usize);
    let mut dirs = vec![(dir.to_path_buf(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten().take(budget) {
            budget -= 1;
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && depth < 1 && !name.starts_with('.') => {
                    dirs.push((entry.path(), depth + 1))
                }
                Ok(kind) if kind.is_file() => *(if is_code(&name) { &mut code } else { &mut other }) += 1,
                _ => {}
            }
        }
    }
    code > other
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
    fn a_definition_grep_with_its_body_is_read_by_name_and_other_greps_are_left_alone() {
        let repo = repo();
        let root = repo.path();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/index.rst"), "x").unwrap();
        std::fs::write(root.join("docs/api.rst"), "x").unwrap();
        let want = Some(r#"mcp__loupe__read {"mode":"symbol","target":"url_for"}"#.to_owned());
        for input in [
            json!({"pattern": "def url_for", "output_mode": "content", "-n": true, "-A": 20}),
            json!({"pattern": "^def url_for\\(", "output_mode": "content", "-C": 10, "path": "src", "type": "py"}),
            json!({"pattern": "def url_for", "output_mode": "content", "-A": 30, "glob": "**/*.py"}),
        ] {
            assert_eq!(routed("Grep", input.clone(), root), want, "{input}");
        }
        assert_eq!(
            routed("Grep", json!({"pattern": "class\\s+Flask\\b", "output_mode": "content", "-A": 40}), root),
            Some(r#"mcp__loupe__read {"mode":"symbol","target":"Flask"}"#.to_owned())
        );
        for (tool, input) in [
            ("Grep", json!({"pattern": "def url_for"})),
            ("Grep", json!({"pattern": "def url_for", "output_mode": "content", "-n": true})),
            // A signature's worth of context: the grep is cheaper.
            ("Grep", json!({"pattern": "def url_for", "output_mode": "content", "-A": 6})),
            // Files mode ignores context lines.
            ("Grep", json!({"pattern": "def url_for", "-A": 20})),
            ("Grep", json!({"pattern": "url_for", "output_mode": "content", "-n": true, "-A": 20})),
            ("Grep", json!({"pattern": "def \\w+_handler", "output_mode": "content", "-A": 20})),
            ("Grep", json!({"pattern": "def url_for", "output_mode": "content", "-A": 20, "path": "docs"})),
            ("Grep", json!({"pattern": "def url_for", "output_mode": "content", "-A": 20, "path": "src/pkg/app.py"})),
            ("Grep", json!({"pattern": "def url_for", "output_mode": "content", "-A": 20, "glob": "*.rst"})),
            ("Grep", json!({"pattern": "def url_for", "output_mode": "content", "-A": 20, "type": "md"})),
            ("Grep", json!({"pattern": "def url_for", "output_mode": "content", "-A": 20, "head_limit": 5})),
            ("Grep", json!({"pattern": "def url_for", "output_mode": "content", "-A": 20, "multiline": true})),
            ("Glob", json!({"pattern": "**/app.py"})),
            ("Edit", json!({"file_path": "src/pkg/app.py"})),
        ] {
            assert_eq!(routed(tool, input.clone(), root), None, "{tool} {input}");
        }
    }

    #[test]
    fn a_shell_definition_grep_with_its_body_is_read_by_name() {
        let repo = repo();
        let root = repo.path();
        let bash = |command: &str| routed("Bash", json!({"command": command}), root);
        let want = Some(r#"mcp__loupe__read {"mode":"symbol","target":"url_for"}"#.to_owned());
        for command in [
            "rg -A 20 'def url_for'",
            "rg -n -C15 'def url_for' src",
            "rg --after-context=30 -t py 'def url_for'",
            "grep -rn -A 20 'def url_for' src/pkg",
            "grep -rnA20 'def url_for' .",
            "git grep -n -A 25 'def url_for'",
            "cd src && rg -A 20 'def url_for'",
        ] {
            assert_eq!(bash(command), want, "{command}");
        }
        for command in [
            "rg -n 'def url_for'",
            "rg -l -A 20 'def url_for'",
            "rg -A 20 'def url_for' | head",
            "grep -n -A 20 'def url_for' src/pkg/app.py",
            "grep -rn -A 20 'def url_for' docs",
            "rg -A 20 --foo 'def url_for'",
            "rg -A 20 -t md 'def url_for'",
            "rg -A many 'def url_for'",
            "rg -A 20 url_for",
            "cd src; rg -A 20 'def url_for'",
        ] {
            assert_eq!(bash(command), None, "{command}");
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
            "grep -rn -A 20 'def url_for' src/pkg/app.py",
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
            json!({"cwd": cwd, "tool_name": "Grep", "tool_input": {"pattern": "def url_for", "-A": "twenty"}}),
            json!({"cwd": cwd, "tool_name": "Read"}),
            json!({"cwd": cwd, "tool_name": "Read", "tool_input": {"file_path": 7}}),
            json!({"cwd": cwd, "tool_name": 7, "tool_input": {"file_path": app}}),
            json!([1, 2]),
        ] {
            assert_eq!(answer(&event, HookMode::Redirect), None, "{event}");
        }
    }
}
