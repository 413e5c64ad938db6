//! The command line end to end: `loupe read` prints the face the model would see (or the
//! envelope with `--json`), configuration layers in the order of §2, and failures exit non-zero
//! with a message on stderr and nothing on stdout.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const LOUPE: &str = env!("CARGO_BIN_EXE_loupe");

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let body: String = (1..=20).map(|n| format!("let v{n} = {n};\n")).collect();
    std::fs::write(dir.path().join("src/lib.rs"), body).unwrap();
    dir
}

fn loupe(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(LOUPE);
    command
        .args(args)
        .current_dir(root)
        .env_remove("LOUPE_ROOT")
        .env_remove("LOUPE_MAX_SINGLE_READ_LINES")
        .env_remove("LOUPE_GATE_MODE")
        .env("XDG_CACHE_HOME", std::env::temp_dir().join("loupe-test-cache"));
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

/// A user config directory holding `loupe/config.toml` with `text`, for `XDG_CONFIG_HOME`
/// (a repository's own `loupe.toml` may set only `exclude` and `allow`).
fn user_config(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("loupe")).unwrap();
    std::fs::write(dir.path().join("loupe/config.toml"), text).unwrap();
    dir
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn read_prints_the_text_face() {
    let dir = workspace();
    let output =
        loupe(dir.path(), &["read", "--mode", "snippet", "src/lib.rs", "--start-line", "2", "--end-line", "3"], &[]);
    assert!(output.status.success());
    let face = stdout(&output);
    let lines: Vec<&str> = face.lines().collect();
    assert!(lines[0].starts_with("src/lib.rs · lines 2–3 of 20 · hash "), "{face}");
    assert_eq!(&lines[1..], ["2 let v2 = 2;", "3 let v3 = 3;"]);
}

#[test]
fn read_json_prints_the_envelope() {
    let dir = workspace();
    let output = loupe(dir.path(), &["read", "src/lib.rs", "--line-range", "5-5", "--json", "--metadata", "full"], &[]);
    assert!(output.status.success());
    let envelope: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(envelope["ok"], Value::Bool(true));
    assert_eq!(envelope["mode"], "snippet");
    assert_eq!(envelope["content"], "let v5 = 5;\n");
    assert!(envelope["text"].as_str().unwrap().ends_with("5 let v5 = 5;\n"), "{envelope}");
    assert_eq!(envelope["meta"]["total_lines"], 20);
}

#[test]
fn a_tool_error_exits_1_with_the_error_face() {
    let dir = workspace();
    let output = loupe(dir.path(), &["read", "src/lbi.rs"], &[]);
    assert_eq!(output.status.code(), Some(1));
    let face = stdout(&output);
    assert!(face.starts_with("error FILE_NOT_FOUND: `src/lbi.rs` does not exist"), "{face}");
    // The next step as a command the shell runs, not an MCP call.
    assert!(face.contains("→ next: loupe read --mode file src/lib.rs"), "{face}");
}

#[test]
fn configuration_layers_file_then_env_then_flags() {
    let dir = workspace();
    let user = user_config("max_single_read_lines = 5\n");
    let xdg = ("XDG_CONFIG_HOME", user.path().to_str().unwrap());
    let last_line = |output: &Output| {
        let face = stdout(output);
        let shown: Vec<&str> = face
            .lines()
            .filter(|line| line.split_once(' ').is_some_and(|(number, _)| number.parse::<usize>().is_ok()))
            .collect();
        shown.len()
    };
    assert_eq!(last_line(&loupe(dir.path(), &["read", "src/lib.rs"], &[xdg])), 5);
    // The repository's own file may not set a ceiling: ignored, with a warning on stderr.
    std::fs::write(dir.path().join("loupe.toml"), "max_single_read_lines = 4\n").unwrap();
    let repository = loupe(dir.path(), &["read", "src/lib.rs"], &[xdg]);
    assert_eq!(last_line(&repository), 5);
    let stderr = String::from_utf8_lossy(&repository.stderr);
    assert!(stderr.contains("`max_single_read_lines` is ignored in a repository's own config"), "{stderr}");
    let env = [xdg, ("LOUPE_MAX_SINGLE_READ_LINES", "3")];
    assert_eq!(last_line(&loupe(dir.path(), &["read", "src/lib.rs"], &env)), 3);
    let flagged = loupe(dir.path(), &["read", "src/lib.rs", "--max-single-read-lines", "2"], &env);
    assert_eq!(last_line(&flagged), 2);
    assert!(stdout(&flagged).contains("── cut after line 2 of 20 by max_single_read_lines=2"), "{}", stdout(&flagged));

    // --root beats LOUPE_ROOT beats the current directory.
    let other = tempfile::tempdir().unwrap();
    let by_env =
        loupe(other.path(), &["read", "src/lib.rs", "--limit", "1"], &[("LOUPE_ROOT", dir.path().to_str().unwrap())]);
    assert!(by_env.status.success(), "{}", stdout(&by_env));
    let by_flag = loupe(
        other.path(),
        &["read", "src/lib.rs", "--limit", "1", "--root", dir.path().to_str().unwrap()],
        &[("LOUPE_ROOT", other.path().to_str().unwrap())],
    );
    assert!(by_flag.status.success(), "{}", stdout(&by_flag));
}

#[test]
fn bad_configuration_exits_2_naming_its_source() {
    let dir = workspace();
    let user = user_config("gate_mode = \"sometimes\"\n");
    let xdg = [("XDG_CONFIG_HOME", user.path().to_str().unwrap())];
    for args in [&["read", "src/lib.rs"][..], &["serve"][..]] {
        let output = loupe(dir.path(), args, &xdg);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "stdout must stay clean: {}", stdout(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("config.toml") && stderr.contains("enforce|warn|off"), "{stderr}");
    }
    // A repository's own file never stops loupe: what it cannot set is ignored with a warning.
    std::fs::write(dir.path().join("loupe.toml"), "exclude = 3\ngate_mode = \"sometimes\"\n").unwrap();
    let output = loupe(dir.path(), &["read", "src/lib.rs"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let missing_root = loupe(dir.path(), &["serve", "--root", "/definitely/not/here"], &[]);
    assert_eq!(missing_root.status.code(), Some(2));
    assert!(missing_root.stdout.is_empty());
}

/// A one-shot command has no session history: the CLI's gate is off unless the user sets
/// `gate_mode` (flag, environment or the user's config file), which the CLI then honours.
#[test]
fn the_cli_gate_is_off_unless_set() {
    let dir = workspace();
    let whole = loupe(dir.path(), &["read", "src/lib.rs"], &[]);
    assert!(whole.status.success(), "{}", stdout(&whole));
    assert!(stdout(&whole).contains("20 let v20 = 20;"), "{}", stdout(&whole));
    let flagged = loupe(dir.path(), &["read", "src/lib.rs", "--gate-mode", "enforce"], &[]);
    assert_eq!(flagged.status.code(), Some(1));
    assert!(stdout(&flagged).starts_with("error SEARCH_FIRST_REQUIRED"), "{}", stdout(&flagged));
    let env = loupe(dir.path(), &["read", "src/lib.rs"], &[("LOUPE_GATE_MODE", "enforce")]);
    assert_eq!(env.status.code(), Some(1));
    let user = user_config("gate_mode = \"enforce\"\n");
    let xdg = [("XDG_CONFIG_HOME", user.path().to_str().unwrap())];
    let filed = loupe(dir.path(), &["read", "src/lib.rs", "--start-line", "1", "--end-line", "5"], &xdg);
    assert!(filed.status.success(), "a precision read passes the gate: {}", stdout(&filed));
    let refused = loupe(dir.path(), &["read", "src/lib.rs"], &xdg);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
}

#[test]
fn manage_guidance_prints_the_reason_codes() {
    let dir = workspace();
    let output = loupe(dir.path(), &["manage", "guidance"], &[]);
    assert!(output.status.success());
    let face = stdout(&output);
    assert!(face.contains("SEARCH_FIRST_REQUIRED (block)") && face.contains("DUPLICATE_READ_ELIDED (info)"), "{face}");
    let reindex = loupe(dir.path(), &["manage", "reindex"], &[]);
    assert_eq!(reindex.status.code(), Some(0), "{}", stdout(&reindex));
    assert!(stdout(&reindex).starts_with("reindex · "), "{}", stdout(&reindex));
    let undo = loupe(dir.path(), &["manage", "undo"], &[]);
    assert_eq!(undo.status.code(), Some(1));
    assert!(stdout(&undo).contains("nothing to undo"), "{}", stdout(&undo));
}

#[test]
fn analyze_prints_the_call_tree() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/lib.rs"),
        "mod config;\n\npub fn run() {\n    config::parse_config(\"a\");\n}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("src/config.rs"), "pub fn parse_config(path: &str) -> usize {\n    path.len()\n}\n")
        .unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"demo\"\n").unwrap();
    let output = loupe(dir.path(), &["analyze", "--mode", "calls", "--direction", "upstream", "parse_config"], &[]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let face = stdout(&output);
    assert!(
        face.starts_with("analyze calls · upstream, depth ≤ 1\nfunction parse_config  src/config.rs:1\n"),
        "{face}"
    );
    assert!(face.contains("← run  src/lib.rs:4"), "{face}");
}

/// `loupe doctor` from a subdirectory of a repository: the root it would serve and why, the
/// index directory, where configuration comes from, and the set-up lines; from `/`, how to name
/// a root (exit 1).
#[test]
fn doctor_says_what_would_be_served_and_how_to_plug_it_in() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join("loupe.toml"), "max_range_lines = 150\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap();
    let output = loupe(&dir.path().join("src"), &["doctor"], &[("HOME", home), ("LOUPE_LOG", "warn")]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    let root = dir.path().canonicalize().unwrap();
    assert!(text.contains(&format!("root {} (chosen by the repository around", root.display())), "{text}");
    assert!(text.contains("index dir ") && text.contains("tokenizer o200k_base"), "{text}");
    assert!(text.contains(&format!("repository file {}", root.join("loupe.toml").display())), "{text}");
    assert!(text.contains("variables LOUPE_LOG"), "{text}");
    // What a server would run under: the gate on, the index not built yet, a watcher.
    assert!(text.contains("policy: gate enforce") && text.contains("index not built yet"), "{text}");
    assert!(text.contains("watcher on in a server"), "{text}");
    // Each client, and the command that sets it up.
    assert!(text.contains("clients:\n  Claude Code ") && text.contains("  Zed "), "{text}");
    assert!(text.contains("loupe install [CLIENT…]"), "{text}");
    let nowhere = loupe(Path::new("/"), &["doctor"], &[("HOME", home)]);
    assert_eq!(nowhere.status.code(), Some(1));
    assert!(stdout(&nowhere).contains("--root") && stdout(&nowhere).contains("loupe install"), "{}", stdout(&nowhere));
}

/// The configuration flags are one global set: listed once in `loupe --help` under their own
/// heading, each with a description, accepted before or after the command, and left out of each
/// command's help, which points to them.
#[test]
fn configuration_flags_are_global_and_described_once() {
    let dir = workspace();
    let help = stdout(&loupe(dir.path(), &["--help"], &[]));
    let heading = help.find("Configuration (any command").expect(&help);
    let flags: Vec<&str> = help[heading..].lines().filter(|line| line.trim_start().starts_with("--")).collect();
    assert!(flags.len() >= 15 && flags.iter().any(|flag| flag.contains("--max-single-read-lines")), "{help}");
    // Every flag has a line of description under it.
    let lines: Vec<&str> = help[heading..].lines().collect();
    for (index, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("--") {
            let description = lines.get(index + 1).map(|next| next.trim()).unwrap_or_default();
            assert!(!description.is_empty() && !description.starts_with("--"), "{line} has no description");
        }
    }
    // One flag per key of the table, with its choices; a serve-only key on `serve`.
    let serve_help = stdout(&loupe(dir.path(), &["serve", "--help"], &[]));
    for key in loupe_core::config::KEYS {
        let flag = format!("--{} ", key.flag.long(key.name));
        let shown = if key.flag == loupe_core::config::Flag::ServeOnly { &serve_help } else { &help };
        assert!(shown.contains(&flag) || shown.contains(&format!("--{}\n", key.flag.long(key.name))), "{flag}");
        if let loupe_core::config::Kind::Choice(choices) = key.kind {
            assert!(shown.contains(&format!("[possible values: {}]", choices.join(", "))), "{flag}: {shown}");
        }
    }
    let search_help = stdout(&loupe(dir.path(), &["search", "--help"], &[]));
    assert!(
        !search_help.contains("--max-single-read-lines") && search_help.contains("`loupe --help`"),
        "{search_help}"
    );
    // Before or after the command, the same flag.
    for args in [
        &["--max-single-read-lines", "2", "read", "src/lib.rs"][..],
        &["read", "src/lib.rs", "--max-single-read-lines", "2"][..],
    ] {
        let output = loupe(dir.path(), args, &[]);
        assert!(stdout(&output).contains("── cut after line 2 of 20"), "{args:?}: {}", stdout(&output));
    }
}

/// `loupe completions SHELL` prints a completion script that knows the commands and flags.
#[test]
fn completions_are_printed_for_each_shell() {
    let dir = workspace();
    for shell in ["bash", "zsh", "fish"] {
        let output = loupe(dir.path(), &["completions", shell], &[]);
        assert!(output.status.success(), "{shell}: {}", String::from_utf8_lossy(&output.stderr));
        let script = stdout(&output);
        assert!(script.contains("doctor") && script.contains("max-single-read-lines"), "{shell}: {script}");
    }
    let unknown = loupe(dir.path(), &["completions", "cmd.exe"], &[]);
    assert_eq!(unknown.status.code(), Some(2));
}

/// `loupe index` in a pipe prints its summary and no progress bar (no carriage returns, no
/// terminal escapes on stderr).
#[test]
fn index_in_a_pipe_draws_no_progress_bar() {
    let dir = workspace();
    let index = tempfile::tempdir().unwrap();
    let output = loupe(dir.path(), &["index", "--index-dir", index.path().to_str().unwrap()], &[]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout(&output).starts_with("indexed 1 files"), "{}", stdout(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains('\r') && !stderr.contains('\u{1b}'), "{stderr:?}");
}

/// `loupe cache` lists every root's index with its size; the index of a deleted root is said
/// gone and prunable, with the command that prunes it; `--prune` removes it and only it.
#[test]
fn the_cache_command_lists_indexes_and_prunes_those_of_gone_roots() {
    let cache = tempfile::tempdir().unwrap();
    let cache_env = cache.path().to_str().unwrap();
    let kept = workspace();
    let gone = workspace();
    for root in [&kept, &gone] {
        let output =
            loupe(root.path(), &["index", "--root", root.path().to_str().unwrap()], &[("XDG_CACHE_HOME", cache_env)]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    let gone_path = gone.path().canonicalize().unwrap();
    drop(gone);
    let listed = stdout(&loupe(kept.path(), &["cache"], &[("XDG_CACHE_HOME", cache_env)]));
    assert!(listed.contains(" · 2 indexes · "), "{listed}");
    assert!(listed.contains(&format!("{} (gone) · used today · prunable", gone_path.display())), "{listed}");
    assert!(listed.contains(&format!("{} · used today\n", kept.path().canonicalize().unwrap().display())), "{listed}");
    assert!(listed.ends_with("1 prunable (root gone) → next: loupe cache --prune\n"), "{listed}");

    let pruned = stdout(&loupe(kept.path(), &["cache", "--prune"], &[("XDG_CACHE_HOME", cache_env)]));
    assert!(pruned.contains("(gone) · used today · removed") && pruned.contains("removed 1 · freed "), "{pruned}");
    let after = stdout(&loupe(kept.path(), &["cache"], &[("XDG_CACHE_HOME", cache_env)]));
    assert!(after.contains(" · 1 index · ") && !after.contains("gone"), "{after}");
}

/// A command's next steps are commands: a search's `read {"candidate_id": …}` (an id that means
/// nothing to the next process) is printed as the read it stands for.
#[test]
fn next_steps_are_loupe_commands_with_the_ref_resolved() {
    let dir = workspace();
    std::fs::write(dir.path().join("src/greet.rs"), "pub fn greet() -> u8 {\n    7\n}\n").unwrap();
    let face = stdout(&loupe(dir.path(), &["search", "--type", "symbol", "greet"], &[]));
    let next = face.lines().find(|line| line.starts_with("→ next: ")).unwrap_or_else(|| panic!("{face}"));
    assert!(next.starts_with("→ next: loupe read "), "{face}");
    assert!(!next.contains("candidate") && !next.contains('{'), "{face}");
    // And the command it names runs.
    let words: Vec<&str> = next["→ next: loupe ".len()..].split(' ').collect();
    let output = loupe(dir.path(), &words, &[]);
    assert!(output.status.success() && stdout(&output).contains("1 pub fn greet() -> u8 {"), "{output:?}");
}

/// `loupe completions zsh | head -1`: the closed pipe ends the output, not in a panic.
#[test]
fn completions_into_a_closed_pipe_exit_cleanly() {
    use std::process::Stdio;
    let mut child =
        Command::new(LOUPE).args(["completions", "zsh"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"), "{output:?}");
}

/// `loupe review main...`: what the branch did since it forked, as changed symbols with the
/// uses left of the risky ones; two revisions compare the first with the second.
#[test]
fn review_names_the_changed_symbols_of_a_branch() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(root)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(root.join("lib.py"), "def area(w):\n    return w * w\n").unwrap();
    std::fs::write(root.join("use.py"), "from lib import area\n\nprint(area(2))\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    git(&["checkout", "-q", "-b", "feature"]);
    std::fs::write(root.join("lib.py"), "def area(w, h):\n    return w * h\n").unwrap();
    git(&["commit", "-q", "-am", "two sides"]);
    let output = loupe(root, &["review", "main..."], &[]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let face = stdout(&output);
    assert!(face.contains("vs merge base") && face.contains("M  lib.py"), "{face}");
    assert!(face.contains("   signature area · 2 use(s): use.py:1,3"), "{face}");
    let two = stdout(&loupe(root, &["review", "main", "feature"], &[]));
    assert!(two.contains("feature (") && two.contains("signature area"), "{two}");
}
