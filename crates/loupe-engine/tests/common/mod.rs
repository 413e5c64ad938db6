//! The fixture workspace the engine tests run against, built fresh in a temporary directory
//! so that CRLF, Latin-1, binary files, secrets and symlinks are exactly what the test says.

#![allow(dead_code, unreachable_pub)]

use std::fs;
use std::path::Path;
use std::process::Command;

use loupe_core::Config;
use loupe_core::config::GateMode;
use loupe_engine::{CallContext, Engine, MetadataLevel, Response};
use serde_json::Value;

pub struct Fixture {
    pub root: tempfile::TempDir,
    pub outside: tempfile::TempDir,
    pub index_dir: tempfile::TempDir,
    pub engine: Engine,
    /// Calls made through `render`, each on a connection of its own.
    pub renders: std::sync::atomic::AtomicUsize,
}

pub const MAIN_RS: &str = "//! A tiny program used by loupe's tests.\n\nuse std::env;\n\n/// Greets whoever is named on the command line.\nfn greet(name: &str) -> String {\n    format!(\"hello, {name}\")\n}\n\nfn main() {\n    let name = env::args().nth(1).unwrap_or_else(|| \"world\".to_string());\n    println!(\"{}\", greet(&name));\n}\n";

pub fn big_line(number: usize) -> String {
    format!("line {number}: the quick brown fox jumps over the lazy dog {}\n", number * 7 % 13)
}

pub fn fixture_with(configure: impl FnOnce(&mut Config)) -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let dir = root.path();
    let write = |path: &str, bytes: &[u8]| {
        let full = dir.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, bytes).unwrap();
    };
    write("src/main.rs", MAIN_RS.as_bytes());
    write("big.txt", (1..=1000).map(big_line).collect::<String>().as_bytes());
    write("crlf.txt", b"first\r\nsecond\r\nthird\r\n");
    write("cr.txt", b"one\rtwo\rthree");
    write("latin1.txt", b"caf\xe9 cr\xe8me\n");
    write("bom.txt", b"\xef\xbb\xbfwith bom\n");
    write("utf16.txt", b"\xff\xfeh\x00i\x00\n\x00");
    write("empty.txt", b"");
    write("nofinal.txt", b"alpha\nbeta");
    write("long_line.txt", format!("{}\nshort\n", "x".repeat(50_000)).as_bytes());
    write("image.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR");
    write(".env", b"SECRET=1\n");
    write(".env.example", b"SECRET=\n");
    write(".git/config", b"[core]\n");
    write("keys/id_rsa", b"-----BEGIN-----\n");
    write(".gitignore", b"ignored.log\n");
    write("ignored.log", b"noise\n");
    write("dir/a.rs", b"fn a() {}\n");
    write("dir/b.rs", b"fn b() {}\n");
    fs::write(outside.path().join("secret.txt"), "outside\n").unwrap();
    // wine makes no symbolic links (scripts/test-windows.sh skips the one case that reads it);
    // everywhere else a failure to make it fails the test.
    match loupe_vfs::testing::symlink(outside.path().join("secret.txt"), dir.join("link-out.txt")) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::Unsupported => {}
        Err(error) => panic!("{error}"),
    }
    let index_dir = tempfile::tempdir().unwrap();
    // These tests are about the tools themselves: the session layer (§9) is tested in
    // session_cases.rs, with its defaults.
    let mut config = tool_config(dir, index_dir.path());
    configure(&mut config);
    let engine = Engine::new(config).unwrap();
    Fixture { root, outside, index_dir, engine, renders: Default::default() }
}

/// An engine on an existing directory, gate off, its index built: for tests that bring their
/// own workspace.
pub fn indexed_engine(root: &Path, index_dir: &Path) -> Engine {
    let engine = Engine::new(tool_config(root, index_dir)).unwrap();
    engine.refresh_index(&|_, _| {});
    engine
}

/// The configuration tests of the tools start from: `root` and `index_dir`, the gate off and
/// the session budgets out of reach (the session layer has its own tests), no analytics.
pub fn tool_config(root: &Path, index_dir: &Path) -> Config {
    Config {
        root: Some(root.to_path_buf()),
        index_dir: Some(index_dir.to_path_buf()),
        gate_mode: GateMode::Off,
        max_reads_per_session: 1_000_000,
        max_total_read_lines: 1_000_000_000,
        analytics: false,
        ..Config::default()
    }
}

pub fn fixture() -> Fixture {
    fixture_with(|_| {})
}

impl Fixture {
    pub fn path(&self) -> &Path {
        self.root.path()
    }

    /// Both faces of one call, with machine-specific paths replaced, for a snapshot. Each
    /// call runs in a session of its own, so a case's answer does not depend on the others.
    pub fn render(&self, tool: &str, arguments: Value) -> String {
        let number = self.renders.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let context = CallContext::new(format!("render-{number}"));
        let response = self.engine.call_in(&context, tool, arguments);
        let mut structured = envelope(&response);
        // A face that names the temporary root costs a machine-dependent number of tokens.
        if self.redact(&response.face) != response.face {
            structured["meta"]["token_estimate"] = Value::from("<depends on the root path>");
        }
        let structured = serde_json::to_string_pretty(&structured).unwrap();
        let text = format!("{}----- structuredContent -----\n{structured}\n", response.face);
        self.redact(&text)
    }

    pub fn redact(&self, text: &str) -> String {
        let canonical = self.root.path().canonicalize().unwrap();
        let outside = self.outside.path().canonicalize().unwrap();
        text.replace(&canonical.display().to_string(), "<ROOT>")
            .replace(&self.root.path().display().to_string(), "<ROOT>")
            .replace(&outside.display().to_string(), "<OUTSIDE>")
            .replace(&self.outside.path().display().to_string(), "<OUTSIDE>")
    }
}

/// The whole envelope (`metadata: "full"`) for a snapshot under the face: its `text` is the face
/// itself, so it is checked equal and left out rather than shown twice.
pub fn envelope(response: &Response) -> Value {
    let mut structured = response.structured_at(MetadataLevel::Full);
    assert_eq!(structured["text"], Value::from(response.face.as_str()));
    structured.as_object_mut().unwrap().remove("text");
    structured
}

/// Runs `git` in `dir` with a fixed identity and no line-ending conversion, for fixtures.
pub fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=loupe", "-c", "user.email=loupe@example.invalid", "-c", "init.defaultBranch=main"])
        .args(["-c", "core.autocrlf=false"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// Writes a fixture file, making its directories.
pub fn write(dir: &Path, path: &str, text: &str) {
    let full = dir.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(full, text).unwrap();
}

/// A git repository with one committed file, and an engine on it (gate off) with `configure`.
pub fn git_repo_engine(configure: impl FnOnce(&mut Config)) -> (tempfile::TempDir, tempfile::TempDir, Engine) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    git(dir, &["init", "-q"]);
    write(dir, "base.txt", "base\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "base"]);
    let index = tempfile::tempdir().unwrap();
    let mut config = tool_config(dir, index.path());
    configure(&mut config);
    let engine = Engine::new(config).unwrap();
    (root, index, engine)
}

/// The common fixture with the session layer at its defaults (the tool tests turn it off), then
/// `configure`; the index is built so that symbol search works.
pub fn session_fixture(configure: impl FnOnce(&mut Config)) -> Fixture {
    let fixture = fixture_with(|config| {
        let defaults = Config::default();
        config.gate_mode = defaults.gate_mode;
        config.max_reads_per_session = defaults.max_reads_per_session;
        config.max_total_read_lines = defaults.max_total_read_lines;
        configure(config);
    });
    fixture.engine.refresh_index(&|_, _| {});
    fixture
}

/// Every reason code in the fixed order answers list them in (§9.9: the core enum, then the
/// extensions).
pub const REASON_ORDER: &[&str] = &[
    "SEARCH_FIRST_REQUIRED",
    "SEARCH_REF_REQUIRED",
    "CANDIDATE_REF_REQUIRED",
    "BUDGET_SOFT_LIMIT",
    "BUDGET_HARD_LIMIT",
    "LOW_RELEVANCE_OUTSIDE_TOPK",
    "PREVIEW_DEGRADED",
    "SESSION_ID_REQUIRED",
    "NO_MATCH",
    "DUPLICATE_READ_ELIDED",
    "LEGACY_TOOL_DEPRECATED",
    "LOW_RELEVANCE",
    "BUDGET_NEAR_LIMIT",
    "DIFF_TRUNCATED",
    "FUZZY_MATCH",
    "SYNTAX_ERRORS_INTRODUCED",
];
