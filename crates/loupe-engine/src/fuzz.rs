//! Fuzz harnesses (stable Rust, proptest) for what an injected agent controls completely: every
//! tool's arguments, as parsed into typed requests, the cursors it hands back, and the edits it
//! asks for, planned and applied through the real engine.
//!
//! Properties of parsing: it never panics; a refusal is `INVALID_ARGS` (or `PATH_OUTSIDE_ROOT`
//! for a search path), its face stays small whatever was sent, and it never echoes a long
//! argument. Properties of `edit` (`fuzz_edit_planner_and_applier`, on a fixture with every
//! line-ending style, a BOM, Latin-1, links inside and to outside the root, `.git/` and a
//! secret): no panic and no `INTERNAL`; a refused call or a dry run leaves the tree
//! byte-identical; nothing outside the root changes; an applied call changes exactly the files
//! it lists, and undo (and redo, then undo) of its transaction gives back the exact trees.
//! `LOUPE_FUZZ_CASES` sets the number of cases (default 256, what CI runs); each harness prints
//! how many executions it made, for `bench/results/fuzz.md`:
//! `LOUPE_FUZZ_CASES=1000000 cargo test --release -p loupe-engine --locked --lib fuzz -- --nocapture`
//! (`LOUPE_FUZZ_SAMPLES=1` also prints sample refusals of the edit harness by code).

use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value, json};

use crate::dispatch::ToolCall;
use crate::params;
use crate::read::cursor::ReadCursor;

fn cases() -> u32 {
    std::env::var("LOUPE_FUZZ_CASES").ok().and_then(|value| value.parse().ok()).unwrap_or(256)
}

/// Any JSON value, nested a little, with strings that are sometimes long.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|number| serde_json::Number::from_f64(number).map_or(Value::Null, Value::Number)),
        ".{0,40}".prop_map(Value::from),
        (0usize..3, 0usize..20_000).prop_map(|(kind, length)| Value::from(match kind {
            0 => "a".repeat(length),
            1 => "é\u{0}../".repeat(length / 6),
            _ => "10-".repeat(length / 3),
        })),
        Just(Value::from("src/main.rs")),
        Just(Value::from("../../etc/passwd")),
        Just(Value::from("1-999999999999999999999")),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((".{0,12}", inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// The names a tool's arguments may use: its table's names and aliases, and a few strangers.
fn names(spec: &'static params::ToolSpec) -> Vec<String> {
    let mut names: Vec<String> = spec
        .params
        .iter()
        .flat_map(|param| std::iter::once(param.name).chain(param.aliases.iter().copied()))
        .map(str::to_owned)
        .collect();
    names.extend(["colour", "", "__proto__", "mode ", "MODE"].map(str::to_owned));
    names
}

/// One call's arguments: mostly an object of known names with values that often fit their
/// type, sometimes any JSON at all.
fn arguments(spec: &'static params::ToolSpec) -> impl Strategy<Value = Value> {
    let names = names(spec);
    let value = prop_oneof![
        3 => json_value(),
        2 => prop::sample::select(
            spec.params
                .iter()
                .filter_map(|param| match param.ty {
                    params::ParamType::Choice(choices) => Some(choices.to_vec()),
                    _ => None,
                })
                .flatten()
                .collect::<Vec<_>>()
        )
        .prop_map(Value::from),
        1 => (0u64..2000).prop_map(Value::from),
    ];
    prop_oneof![
        8 => prop::collection::vec((prop::sample::select(names), value), 0..10)
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>())),
        1 => json_value(),
    ]
}

/// A refusal is an argument error, its message and hint quote what was sent bounded, and its
/// whole face (which may carry a ready-to-run call with the caller's bounded arguments) stays
/// far below what a client accepts.
fn check_refusal(tool: &str, arguments: &Value, rejected: &crate::args::Rejected) {
    let code = rejected.error.code.as_str();
    assert!(matches!(code, "INVALID_ARGS" | "PATH_OUTSIDE_ROOT"), "{tool} {arguments}: refused with {code}");
    let words = rejected.error.message.len() + rejected.error.hint.len();
    assert!(
        words < 2000,
        "{tool}: a {words}-byte message and hint for {} bytes of arguments",
        arguments.to_string().len()
    );
    let face = crate::response::error_face(&rejected.error);
    assert!(face.len() < 64 << 10, "{tool}: a {}-byte refusal", face.len());
}

fn runner() -> TestRunner {
    TestRunner::new(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })
}

/// Every tool's arguments: parsed or refused as data, never a panic.
#[test]
fn fuzz_tool_arguments() {
    let strategy = (0..params::TOOLS.len()).prop_flat_map(|index| (Just(index), arguments(params::TOOLS[index])));
    let runs = AtomicU64::new(0);
    let outcome = runner().run(&strategy, |(index, arguments)| {
        runs.fetch_add(1, Ordering::Relaxed);
        let tool = params::TOOLS[index].name;
        if let Err(rejected) = ToolCall::parse(tool, arguments.clone()) {
            check_refusal(tool, &arguments, &rejected);
        }
        Ok(())
    });
    eprintln!("fuzz_tool_arguments: {} executions", runs.load(Ordering::Relaxed));
    outcome.unwrap();
}

/// Cursors come back from the model: any text, and real cursors with damage, decode to a
/// cursor or to nothing, never a panic.
#[test]
fn fuzz_cursor_decoding() {
    let strategy = (".{0,80}", any::<(usize, u8)>(), any::<usize>(), any::<usize>());
    let runs = AtomicU64::new(0);
    let path = loupe_core::RepoPath::normalize("src/main.rs").unwrap();
    let outcome = runner().run(&strategy, |(text, (at, flip), line, end)| {
        runs.fetch_add(1, Ordering::Relaxed);
        let _ = ReadCursor::decode(&text);
        let mut damaged = ReadCursor::new(&loupe_core::ContentHash::of(b"x"), &path, line, end).encode().into_bytes();
        if !damaged.is_empty() {
            let at = at % damaged.len();
            damaged[at] ^= flip;
        }
        if let Some(decoded) = ReadCursor::decode(&String::from_utf8_lossy(&damaged)) {
            let _ = decoded.is_for(&path);
        }
        Ok(())
    });
    eprintln!("fuzz_cursor_decoding: {} executions", runs.load(Ordering::Relaxed));
    outcome.unwrap();
}

/// The filters of oversized files kept beside the index (`oversized.bin`): any bytes, and a
/// real file's body damaged, cut or grown and sealed with a matching hash (so the damage meets
/// the structure's own checks), read back as filters or as nothing, never a panic or an
/// allocation the bytes do not hold.
#[test]
fn fuzz_oversized_filters_decoding() {
    use crate::workspace::oversized::for_fuzz::{decode_raw, decode_sealed, sample_body};
    let sample = sample_body();
    assert_eq!(decode_sealed(&sample), Some(2), "the sample itself reads back");
    let strategy = (prop::collection::vec(any::<u8>(), 0..96), any::<(usize, u8)>(), any::<usize>(), any::<u32>());
    let runs = AtomicU64::new(0);
    let outcome = runner().run(&strategy, |(noise, (at, flip), cut, word)| {
        runs.fetch_add(1, Ordering::Relaxed);
        let _ = decode_raw(&noise);
        let _ = decode_sealed(&noise);
        let mut damaged = sample.clone();
        let at = at % damaged.len();
        damaged[at] ^= flip;
        // A length field's worth of bytes overwritten too, where lengths live.
        let end = (at + 4).min(damaged.len());
        damaged[at..end].copy_from_slice(&word.to_le_bytes()[..end - at]);
        let _ = decode_sealed(&damaged);
        damaged.truncate(cut % (damaged.len() + 1));
        damaged.extend_from_slice(&noise);
        let _ = decode_sealed(&damaged);
        Ok(())
    });
    eprintln!("fuzz_oversized_filters_decoding: {} executions", runs.load(Ordering::Relaxed));
    outcome.unwrap();
}

// ---------------------------------------------------------------------------------------------
// The edit planner and applier, through the real engine.

/// The fixture's files: every line-ending style, a BOM, Latin-1, no final newline, empty,
/// binary, code that parses, an executable, a secret and `.git/`.
const EDIT_FILES: &[(&str, &[u8], u32)] = &[
    ("lf.txt", b"alpha\nbeta\ngamma\n\n  delta epsilon\n", 0o644),
    ("crlf.txt", b"one\r\ntwo\r\nthree\r\n", 0o644),
    ("nofinal.txt", b"first\nsecond", 0o644),
    ("bom.txt", b"\xef\xbb\xbfbom line\nsecond\n", 0o644),
    ("latin1.txt", b"caf\xe9\ncr\xe8me br\xfbl\xe9e\n", 0o644),
    ("mixed.txt", b"a\r\nb\nc\rd", 0o644),
    ("empty.txt", b"", 0o644),
    ("bin.dat", b"\x00\x01\x02binary\xff\xfe", 0o644),
    ("run.sh", b"#!/bin/sh\necho hi\n", 0o755),
    ("src/lib.rs", b"pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n", 0o644),
    ("sub/deep/mod.py", b"def f(x):\n    return x\n", 0o600),
    (".env", b"SECRET=1\n", 0o644),
    (".git/config", b"[core]\n", 0o644),
];

/// Where the fixture's symlinks point: `@` stands for the outside directory.
const EDIT_LINKS: &[(&str, &str)] = &[
    ("link-in.txt", "lf.txt"),
    ("link-dir", "sub"),
    ("link-git", ".git"),
    ("dangling", "nowhere.txt"),
    ("link-out.txt", "@/secret.txt"),
    ("link-out-dir", "@"),
];

/// One entry of a tree: a file's bytes and permission bits, a link's target, or a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File(Vec<u8>, u32),
    Link(std::path::PathBuf),
    Dir,
}

type Tree = std::collections::BTreeMap<std::path::PathBuf, Node>;

/// A file's permission bits (Unix), or whether it is read-only (Windows).
fn mode_of(metadata: &std::fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        u32::from(metadata.permissions().readonly())
    }
}

/// Everything under `dir` except `skip`, links not followed.
fn snapshot(dir: &std::path::Path, skip: &std::path::Path) -> Tree {
    let mut tree = Tree::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path == skip {
                continue;
            }
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            let node = if metadata.file_type().is_symlink() {
                Node::Link(std::fs::read_link(&path).unwrap())
            } else if metadata.is_dir() {
                stack.push(path.clone());
                Node::Dir
            } else {
                Node::File(std::fs::read(&path).unwrap(), mode_of(&metadata))
            };
            tree.insert(path.strip_prefix(dir).unwrap().to_path_buf(), node);
        }
    }
    tree
}

/// What differs between two trees, briefly, for a failure message.
fn tree_diff(before: &Tree, after: &Tree) -> String {
    let mut lines = Vec::new();
    for (path, node) in before {
        match after.get(path) {
            None => lines.push(format!("removed {}", path.display())),
            Some(other) if other != node => lines.push(format!("changed {}", path.display())),
            Some(_) => {}
        }
    }
    for path in after.keys().filter(|path| !before.contains_key(*path)) {
        lines.push(format!("added {}", path.display()));
    }
    lines.join("; ")
}

/// A temporary directory holding the root, a sibling "outside" directory and the index
/// directory (journal included), on tmpfs when there is one: edits fsync, and the harness
/// makes a million of them.
struct EditFixture {
    base: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
    index: std::path::PathBuf,
    pristine: Tree,
    engine: crate::Engine,
}

impl EditFixture {
    fn new() -> EditFixture {
        let shm = std::path::Path::new("/dev/shm");
        let base = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
        let root = base.path().join("root");
        let outside = base.path().join("outside");
        let index = base.path().join("index");
        for dir in [&root, &outside, &index] {
            std::fs::create_dir(dir).unwrap();
        }
        Self::populate(&root, &outside);
        let pristine = snapshot(base.path(), &index);
        let config = loupe_core::Config {
            root: Some(root.clone()),
            index_dir: Some(index.clone()),
            analytics: false,
            ..loupe_core::Config::default()
        };
        let engine = crate::Engine::new(config).unwrap();
        EditFixture { base, root, outside, index, pristine, engine }
    }

    fn populate(root: &std::path::Path, outside: &std::path::Path) {
        for (path, bytes, mode) in EDIT_FILES {
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, bytes).unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&full, std::fs::Permissions::from_mode(*mode)).unwrap();
            }
            #[cfg(not(unix))]
            let _ = mode;
        }
        std::fs::create_dir_all(outside.join("dir")).unwrap();
        std::fs::write(outside.join("secret.txt"), b"outside\n").unwrap();
        for (link, target) in EDIT_LINKS {
            let target = match target.strip_prefix('@') {
                Some(rest) => format!("{}{rest}", outside.display()),
                None => (*target).to_owned(),
            };
            loupe_vfs::testing::symlink(target, root.join(link)).unwrap();
        }
    }

    fn tree(&self) -> Tree {
        snapshot(self.base.path(), &self.index)
    }

    /// Puts the pristine tree back in place (inside the same root directory, which the engine
    /// holds open), after a case that failed left it changed.
    fn restore(&self) {
        for dir in [&self.root, &self.outside] {
            for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
                let path = entry.path();
                if entry.file_type().unwrap().is_dir() {
                    std::fs::remove_dir_all(&path).unwrap();
                } else {
                    std::fs::remove_file(&path).unwrap();
                }
            }
        }
        Self::populate(&self.root, &self.outside);
        assert_eq!(self.tree(), self.pristine);
    }

    /// The paths an injected agent might name: every fixture file and link, new files, paths
    /// through each link, `.git/`, secrets and loupe's own config, escapes by `..`, absolute
    /// paths and `file://`, odd spellings, NUL, over-long names.
    fn paths(&self) -> Vec<String> {
        let outside_name = self.outside.file_name().unwrap().to_string_lossy();
        let root = self.root.display();
        let mut paths: Vec<String> = EDIT_FILES.iter().map(|(path, _, _)| (*path).to_owned()).collect();
        paths.extend(EDIT_LINKS.iter().map(|(link, _)| (*link).to_owned()));
        paths.extend(
            [
                "new.txt",
                "sub/new.txt",
                "newdir/a/b.txt",
                "new.rs",
                "link-dir/deep/mod.py",
                "link-dir/new.txt",
                "link-out-dir/secret.txt",
                "link-out-dir/new.txt",
                "link-out-dir/dir/new.txt",
                "link-git/config",
                "link-git/hooks/pre-commit",
                ".git/hooks/pre-commit",
                ".env.local",
                "keys/id_rsa",
                "loupe.toml",
                ".loupe/config.toml",
                "./lf.txt",
                "sub/../lf.txt",
                "sub//deep/mod.py",
                "lf.txt/",
                "lf.txt/x",
                "lf.txt\0",
                "",
                ".",
                "/",
                "..",
                "sub",
                "~/x",
                "é/ü.txt",
                "LF.TXT",
                "-rf",
                "\\..\\x",
                "%2e%2e/x",
                "nowhere.txt",
                ".loupe-1234.tmp",
            ]
            .map(str::to_owned),
        );
        paths.extend([
            format!("../{outside_name}/secret.txt"),
            format!("../{outside_name}/new.txt"),
            format!("sub/../../{outside_name}/new.txt"),
            "../escape.txt".to_owned(),
            format!("{}/secret.txt", self.outside.display()),
            format!("{}/new.txt", self.outside.display()),
            format!("{root}/lf.txt"),
            format!("{root}/sub/new.txt"),
            format!("file://{root}/crlf.txt"),
            format!("{root}/../{outside_name}/secret.txt"),
            "n".repeat(300),
            "d/".repeat(2100),
        ]);
        paths
    }
}

/// Text an agent might send: empty, line endings alone, NUL, BOM, multi-byte characters,
/// broken code, lines of the fixture, and now and then something long.
fn edit_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "", "x", "\n", "\r\n", "\r", "line\n", "a\nb\r\nc", "\0", "é€😀\n", "\u{feff}", "fn broken( {",
            "alpha", "beta\n", "two", "second", "caf", "  delta", "delta  epsilon", "a + b", "return x",
            "one\r\ntwo", "\n\n\n", "SECRET=2\n", "[core]\n",
        ])
        .prop_map(str::to_owned),
        3 => ".{0,24}",
        1 => (1usize..200_000, prop::sample::select(vec!["z", "ab\n", "\r\n", "é"])).prop_map(|(n, unit)| unit.repeat(n / unit.len())),
    ]
}

/// A JSON integer, usually small, sometimes at the edges.
fn edit_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => (0u64..5).prop_map(Value::from),
        1 => prop::sample::select(vec![
            Value::from(u64::MAX),
            Value::from(i64::MAX),
            Value::from(1u64 << 53),
            Value::from(-1),
            Value::from(1.5),
            Value::from("3"),
        ]),
    ]
}

/// One edit object, as the schema allows it (and sometimes with a stray field).
fn edit_item(paths: Vec<String>) -> impl Strategy<Value = Value> {
    let operation = prop::sample::select(vec!["replace", "replace_lines", "insert", "create", "delete", "infer"]);
    let hash = prop_oneof![
        6 => Just(None),
        3 => Just(Some("right")),
        1 => Just(Some("wrong")),
        1 => Just(Some("malformed")),
    ];
    let editable: Vec<String> = [
        "lf.txt",
        "crlf.txt",
        "nofinal.txt",
        "bom.txt",
        "latin1.txt",
        "mixed.txt",
        "empty.txt",
        "run.sh",
        "src/lib.rs",
        "sub/deep/mod.py",
        "new.txt",
        "sub/new.txt",
        "newdir/a/b.txt",
    ]
    .map(str::to_owned)
    .to_vec();
    let path = prop_oneof![3 => prop::sample::select(editable), 1 => prop::sample::select(paths)];
    (
        path,
        operation,
        (edit_text(), edit_text(), edit_text()),
        (edit_number(), edit_number()),
        (any::<u16>(), hash, any::<u8>()),
    )
        .prop_map(|(path, operation, (old, new, expected_text), (first, second), (flags, hash, line_pick))| {
            let mut item = Map::new();
            item.insert("path".into(), Value::from(path));
            if operation != "infer" || flags & 1 == 0 {
                item.insert("operation".into(), Value::from(if operation == "infer" { "replace" } else { operation }));
            }
            match operation {
                "replace" | "infer" => {
                    // `old_string` is filled in from the file's text when `line_pick` says so.
                    item.insert("old_string".into(), Value::from(old));
                    item.insert("new_string".into(), Value::from(new));
                    if flags & 2 != 0 {
                        item.insert("replace_all".into(), Value::Bool(true));
                    } else if flags & 4 != 0 {
                        item.insert("expected_count".into(), first);
                    }
                }
                "replace_lines" => {
                    let start = first.as_u64().map_or(first.clone(), |start| Value::from(start.max(1)));
                    let end = match (start.as_u64(), second.as_u64()) {
                        (Some(start), Some(span)) if flags & 8 == 0 => Value::from(start.saturating_add(span % 3)),
                        _ => second,
                    };
                    item.insert("start_line".into(), start);
                    item.insert("end_line".into(), end);
                    item.insert("new_string".into(), Value::from(new));
                }
                "insert" => {
                    item.insert("line".into(), first);
                    item.insert("new_string".into(), Value::from(new));
                }
                "create" => {
                    item.insert("content".into(), Value::from(new));
                    if flags & 2 != 0 {
                        item.insert("overwrite".into(), Value::Bool(flags & 16 == 0));
                    }
                }
                _ => {}
            }
            if matches!(operation, "replace_lines" | "insert") && flags & 32 != 0 {
                item.insert("expected_text".into(), Value::from(expected_text));
            }
            if let Some(hash) = hash {
                item.insert("expected_hash".into(), Value::from(format!("<{hash}>")));
            }
            if flags & 0x3c0 == 0x3c0 {
                item.insert("colour".into(), Value::from("red"));
            }
            item.insert("<line_pick>".into(), Value::from(line_pick));
            Value::Object(item)
        })
}

/// Fills in what depends on the file's current bytes: `old_string` and `expected_text` copied
/// from its lines (exactly, or with the whitespace changed, for `fuzzy`), and the `file_hash`
/// precondition right, wrong or malformed. Removes the harness's own fields.
fn concretise(item: &mut Value, root: &std::path::Path) {
    let Value::Object(map) = item else { return };
    let pick = map.remove("<line_pick>").and_then(|pick| pick.as_u64()).unwrap_or(0) as usize;
    let path = map.get("path").and_then(Value::as_str).unwrap_or_default().to_owned();
    let bytes = if path.is_empty() || path.contains('\0') || path.len() > 4000 {
        None
    } else {
        std::fs::read(root.join(path.trim_start_matches("./"))).ok()
    };
    let text = bytes.as_deref().map(|bytes| String::from_utf8_lossy(bytes).into_owned()).unwrap_or_default();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    if !lines.is_empty() && !pick.is_multiple_of(4) {
        let line = lines[pick % lines.len()];
        let chosen = match pick % 4 {
            1 => line.to_owned(),
            2 => line.trim().to_owned(),
            _ => format!("  {}", line.trim().replace(' ', "   ")),
        };
        if map.contains_key("old_string") && !chosen.is_empty() {
            map.insert("old_string".into(), Value::from(chosen.clone()));
        }
        if map.contains_key("expected_text") {
            map.insert("expected_text".into(), Value::from(chosen));
        }
    }
    if let Some(Value::String(hash)) = map.get_mut("expected_hash") {
        *hash = match hash.as_str() {
            "<right>" => bytes.as_deref().map_or_else(
                || loupe_core::ContentHash::of(b"absent").to_string(),
                |bytes| loupe_core::ContentHash::of(bytes).to_string(),
            ),
            "<wrong>" => loupe_core::ContentHash::of(b"something else").to_string(),
            _ => "0123456789abcdeg".to_owned(),
        };
    }
}

/// One case: an `edit` call of 1–4 edits with its options, and what to do after it applies.
fn edit_call(paths: Vec<String>) -> impl Strategy<Value = (Value, u8)> {
    (
        prop_oneof![8 => prop::collection::vec(edit_item(paths.clone()), 1..2), 1 => prop::collection::vec(edit_item(paths), 2..5)],
        any::<u8>(),
        prop_oneof![
            12 => prop::sample::select(vec![None, Some("warn"), Some("block"), Some("off")]),
            1 => Just(Some("maybe")),
        ],
        any::<u8>(),
    )
        .prop_map(|(edits, flags, check_syntax, after)| {
            let mut arguments = json!({"edits": edits});
            if flags & 3 == 0 {
                arguments["dry_run"] = Value::Bool(true);
            } else if flags & 3 == 1 {
                arguments["dry_run"] = Value::Bool(false);
            }
            if flags & 4 != 0 {
                arguments["create_missing_dirs"] = Value::Bool(true);
            }
            if flags & 8 != 0 {
                arguments["fuzzy"] = Value::Bool(true);
            }
            if let Some(check) = check_syntax {
                arguments["check_syntax"] = Value::from(check);
            }
            (arguments, after)
        })
}

/// Counts of what the edit harness did, for `bench/results/fuzz.md`.
#[derive(Debug, Default)]
struct EditCounts {
    executions: AtomicU64,
    refused: AtomicU64,
    dry_runs: AtomicU64,
    applied: AtomicU64,
    unchanged: AtomicU64,
    undone: AtomicU64,
    redone: AtomicU64,
    manage_probes: AtomicU64,
    codes: std::sync::Mutex<std::collections::BTreeMap<String, u64>>,
    samples: std::sync::Mutex<std::collections::BTreeMap<String, Vec<String>>>,
}

fn count(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Whether an edit reply's error is one the edit tool may give: a typed refusal, never
/// `INTERNAL`.
fn check_edit_refusal(response: &crate::Response, arguments: &Value) {
    let code = response.error_code().unwrap_or("none");
    assert_ne!(code, "INTERNAL", "{arguments}\n{}", response.face);
    assert!(response.face.len() < 256 << 10, "a {}-byte refusal for {arguments}", response.face.len());
}

/// Random `edit` calls through the engine on a fixture with every kind of file and link:
/// the planner and the applier never panic; a refused call or a dry run leaves the root and
/// everything around it byte-identical; nothing outside the root is ever created or changed;
/// an applied call changes exactly the files its reply lists (to the hashes it gives), and
/// `manage undo` of its transaction restores the tree byte-identically (a redo then gives the
/// applied tree again, and a second undo the original).
#[test]
fn fuzz_edit_planner_and_applier() {
    let fixture = EditFixture::new();
    let counts = EditCounts::default();
    let strategy = (edit_call(fixture.paths()), prop::option::weighted(0.02, ".{0,16}"));
    let started = std::time::Instant::now();
    let outcome = runner().run(&strategy, |((mut arguments, after), probe)| {
        count(&counts.executions);
        let before = fixture.tree();
        if before != fixture.pristine {
            // A failing case (while shrinking) may have left its change.
            fixture.restore();
        }
        let before = &fixture.pristine;
        if let Some(probe) = probe {
            // Undo and redo of ids an agent made up: refused, nothing written.
            count(&counts.manage_probes);
            for command in ["undo", "redo"] {
                let response = fixture.engine.call(
                    "manage",
                    json!({"command": command, "transaction_id": probe, "force": probe.len() % 2 == 0}),
                );
                assert_ne!(response.error_code(), Some("INTERNAL"), "{}", response.face);
            }
            let tree = fixture.tree();
            assert!(&tree == before, "undo/redo of `{probe}` changed the tree: {}", tree_diff(before, &tree));
        }
        for item in arguments["edits"].as_array_mut().unwrap() {
            concretise(item, &fixture.root);
        }
        let dry_run = arguments["dry_run"] == Value::Bool(true);
        let response = fixture.engine.call("edit", arguments.clone());
        let after_edit = fixture.tree();
        let outside_changed = |tree: &Tree| {
            let inside = std::path::Path::new("root");
            before
                .iter()
                .filter(|(path, _)| !path.starts_with(inside))
                .ne(tree.iter().filter(|(path, _)| !path.starts_with(inside)))
        };
        assert!(
            !outside_changed(&after_edit),
            "outside the root changed: {}\n{arguments}",
            tree_diff(before, &after_edit)
        );
        if !response.ok {
            count(&counts.refused);
            check_edit_refusal(&response, &arguments);
            let code = response.error_code().unwrap_or("none").to_owned();
            *counts.codes.lock().unwrap().entry(code.clone()).or_default() += 1;
            if std::env::var_os("LOUPE_FUZZ_SAMPLES").is_some() {
                let mut samples = counts.samples.lock().unwrap();
                let list = samples.entry(code).or_default();
                if list.len() < 8 {
                    list.push(format!(
                        "{arguments} => {}",
                        response.face.lines().take(3).collect::<Vec<_>>().join(" | ")
                    ));
                }
            }
            assert!(
                &after_edit == before,
                "a refused edit changed the tree: {}\n{arguments}\n{}",
                tree_diff(before, &after_edit),
                response.face
            );
            return Ok(());
        }
        if dry_run {
            count(&counts.dry_runs);
            assert!(
                &after_edit == before,
                "a dry run changed the tree: {}\n{arguments}",
                tree_diff(before, &after_edit)
            );
            return Ok(());
        }
        let Some(id) = response.meta.get("transaction_id").and_then(Value::as_str).map(str::to_owned) else {
            count(&counts.unchanged);
            assert!(
                &after_edit == before,
                "an edit with no transaction changed the tree: {}\n{arguments}",
                tree_diff(before, &after_edit)
            );
            return Ok(());
        };
        count(&counts.applied);
        // The reply names every file that changed, with the bytes now on disk.
        let listed: Vec<(String, Option<String>)> = response.meta["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|file| (file["path"].as_str().unwrap().to_owned(), file["new_hash"].as_str().map(str::to_owned)))
            .collect();
        for (path, new_hash) in &listed {
            let now = std::fs::read(fixture.root.join(path))
                .ok()
                .map(|bytes| loupe_core::ContentHash::of(&bytes).to_string());
            assert_eq!(&now, new_hash, "{path} after {arguments}");
        }
        // Listed by the path asked for, which may pass through a symlinked directory inside
        // the root: compare where each really is.
        let canonical = fixture.root.canonicalize().unwrap();
        let real = |path: &str| {
            let asked = fixture.root.join(path);
            let parent = asked.parent().and_then(|parent| parent.canonicalize().ok());
            parent.map(|parent| parent.join(asked.file_name().unwrap_or_default()))
        };
        let listed_real: Vec<std::path::PathBuf> = listed.iter().filter_map(|(path, _)| real(path)).collect();
        let changed = after_edit
            .iter()
            .filter(|(path, node)| before.get(*path) != Some(*node) && !matches!(node, Node::Dir))
            .map(|(path, _)| path)
            .chain(before.keys().filter(|path| !after_edit.contains_key(*path)));
        for path in changed {
            let Ok(relative) = path.strip_prefix("root") else { continue };
            assert!(
                listed_real.contains(&canonical.join(relative)),
                "{} changed but is not listed\n{arguments}\n{}",
                relative.display(),
                response.face
            );
        }
        let undo = fixture.engine.call("manage", json!({"command": "undo", "transaction_id": id}));
        assert!(undo.ok, "undo of {arguments}: {}", undo.face);
        count(&counts.undone);
        let undone = fixture.tree();
        assert!(&undone == before, "undo did not restore the tree: {}\n{arguments}", tree_diff(before, &undone));
        if after % 4 == 0 {
            let redo = fixture.engine.call("manage", json!({"command": "redo", "transaction_id": id}));
            assert!(redo.ok, "redo of {arguments}: {}", redo.face);
            count(&counts.redone);
            let redone = fixture.tree();
            assert!(
                redone == after_edit,
                "redo did not give the edited tree again: {}\n{arguments}",
                tree_diff(&after_edit, &redone)
            );
            let undo = fixture.engine.call("manage", json!({"command": "undo", "transaction_id": id}));
            assert!(undo.ok, "second undo of {arguments}: {}", undo.face);
            count(&counts.undone);
            let undone = fixture.tree();
            assert!(
                &undone == before,
                "the second undo did not restore the tree: {}\n{arguments}",
                tree_diff(before, &undone)
            );
        }
        Ok(())
    });
    eprintln!(
        "fuzz_edit_planner_and_applier: {} executions in {:.1} s: {} refused, {} dry runs, {} applied ({} undone, {} redone), {} changed nothing, {} undo/redo probes",
        counts.executions.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        counts.refused.load(Ordering::Relaxed),
        counts.dry_runs.load(Ordering::Relaxed),
        counts.applied.load(Ordering::Relaxed),
        counts.undone.load(Ordering::Relaxed),
        counts.redone.load(Ordering::Relaxed),
        counts.unchanged.load(Ordering::Relaxed),
        counts.manage_probes.load(Ordering::Relaxed),
    );
    eprintln!("  refusals by code: {:?}", counts.codes.lock().unwrap());
    for (code, samples) in counts.samples.lock().unwrap().iter() {
        for sample in samples {
            eprintln!("  {code}: {}", sample.chars().take(400).collect::<String>());
        }
    }
    outcome.unwrap();
}
