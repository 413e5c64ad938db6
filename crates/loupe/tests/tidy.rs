//! Tidy: the invariants ARCHITECTURE.md writes down that a reader of the sources can check,
//! checked by reading the sources. Each failure names the offending file and what to do.
//!
//! - Only `loupe-vfs` writes into the repository: no file-system write call in any other
//!   crate's `src/`, except the files named in `WRITES_OUTSIDE_THE_REPOSITORY`.
//! - Only `loupe-mcp` and the `loupe` binary depend on rmcp and schemars.
//! - Every `.rs` file under `crates/*/src` and `bench/src` opens with a `//!` comment.
//! - No test is ignored anywhere under `crates/` and `bench/`.

use std::fs;
use std::path::{Path, PathBuf};

/// Files outside `loupe-vfs` allowed to write, each only into the index directory (outside the
/// repository, §2), never into the repository.
const WRITES_OUTSIDE_THE_REPOSITORY: &[(&str, &str)] = &[
    ("crates/loupe-index/src/store.rs", "the index's snapshot files and its writer lock"),
    ("crates/loupe-index/src/symbols.rs", "a cold build's two unnamed spill files, freed when the build ends"),
    ("crates/loupe-index/src/trigram/format.rs", "the text index file, written to a temporary file and renamed"),
    ("crates/loupe-engine/src/session/analytics.rs", "the analytics writer's `analytics.jsonl` (§9.2)"),
    (
        "crates/loupe-index/src/cache.rs",
        "`loupe cache --prune`: whole index directories of the cache, under their writer lock",
    ),
    (
        "crates/loupe/src/install.rs",
        "`loupe install`/`uninstall`, run by the user: MCP clients' config files (in the home directory, or \
         with `--scope project` the project's own `.mcp.json`, `.vscode/mcp.json`, … and `--agents-md`), never code",
    ),
];

/// Calls that create, change or remove files or directories.
const WRITE_CALLS: &[&str] = &[
    "fs::write(",
    "File::create(",
    "File::create_new(",
    "fs::rename(",
    "fs::remove_file(",
    "fs::remove_dir(",
    "fs::remove_dir_all(",
    "fs::copy(",
    "fs::hard_link(",
    "fs::set_permissions(",
    "create_dir(",
    "create_dir_all(",
    "DirBuilder",
    "tempfile_in(",
    "NamedTempFile",
];

/// `OpenOptions` calls that make a handle able to write.
const WRITING_OPTIONS: &[&str] =
    &[".write(true)", ".append(true)", ".create(true)", ".create_new(true)", ".truncate(true)"];

/// The crates allowed to depend on the MCP SDK and its schema derive.
const MCP_CRATES: &[&str] = &["loupe-mcp", "loupe"];
const MCP_DEPENDENCIES: &[&str] = &["rmcp", "schemars"];

#[test]
fn only_loupe_vfs_writes_into_the_repository() {
    let workspace = workspace();
    for (allowed, why) in WRITES_OUTSIDE_THE_REPOSITORY {
        assert!(
            workspace.join(allowed).is_file(),
            "{allowed} ({why}) is allowed to write but no longer exists: update the list"
        );
    }
    let mut offences = Vec::new();
    let files = rust_files(&workspace.join("crates"));
    let test_only = test_only_modules(&files);
    for file in files {
        let relative = relative(&workspace, &file);
        if !is_library_source(&relative)
            || test_only.contains(&file)
            || relative.starts_with("crates/loupe-vfs/src/")
            || WRITES_OUTSIDE_THE_REPOSITORY.iter().any(|(allowed, _)| *allowed == relative)
        {
            continue;
        }
        let text = read(&file);
        for (number, line) in production_lines(&text) {
            let code = line.split("//").next().unwrap_or_default();
            for call in WRITE_CALLS {
                if contains_call(code, call) {
                    offences.push(format!("{relative}:{number}: `{call}`"));
                }
            }
            if let Some(start) = code.find("OpenOptions") {
                let statement = statement_from(&text, &line[start..], number);
                if let Some(option) = WRITING_OPTIONS.iter().find(|option| statement.contains(*option)) {
                    offences.push(format!("{relative}:{number}: `OpenOptions` with `{option}`"));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "only loupe-vfs may write files (its journal is the one write path into the repository), \
         but these lines write outside it:\n  {}\nWrite through `loupe_vfs::Journal`, or, for a file \
         that lives in the index directory, add the file to WRITES_OUTSIDE_THE_REPOSITORY in \
         crates/loupe/tests/tidy.rs with the reason.",
        offences.join("\n  ")
    );
}

#[test]
fn only_the_mcp_crate_and_the_binary_depend_on_rmcp() {
    let workspace = workspace();
    let mut manifests: Vec<PathBuf> = fs::read_dir(workspace.join("crates"))
        .expect("crates/ is readable")
        .map(|entry| entry.expect("a crates/ entry").path().join("Cargo.toml"))
        .filter(|manifest| manifest.is_file())
        .collect();
    manifests.push(workspace.join("bench/Cargo.toml"));
    manifests.sort();
    assert!(manifests.len() >= 9, "expected every crate's Cargo.toml, found {manifests:?}");

    let mut offences = Vec::new();
    for manifest in &manifests {
        let relative = relative(&workspace, manifest);
        let parsed: toml::Table =
            read(manifest).parse().unwrap_or_else(|error| panic!("{relative} is not valid TOML: {error}"));
        let name = parsed["package"]["name"].as_str().unwrap_or_else(|| panic!("{relative} has no package.name"));
        if MCP_CRATES.contains(&name) {
            continue;
        }
        for (table, dependency) in dependencies(&parsed) {
            if MCP_DEPENDENCIES.contains(&dependency.as_str()) {
                offences.push(format!("{relative}: `{dependency}` in [{table}]"));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "only {MCP_CRATES:?} may depend on {MCP_DEPENDENCIES:?} (the engine knows nothing of MCP), but:\n  {}\n\
         Keep protocol types in loupe-mcp and hand the engine plain data.",
        offences.join("\n  ")
    );
}

#[test]
fn every_source_file_opens_with_a_module_comment() {
    let workspace = workspace();
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in rust_files(&workspace.join("crates")).into_iter().chain(rust_files(&workspace.join("bench/src"))) {
        let relative = relative(&workspace, &file);
        if !(is_library_source(&relative) || relative.starts_with("bench/src/")) {
            continue;
        }
        checked += 1;
        if !read(&file).starts_with("//!") {
            missing.push(relative);
        }
    }
    assert!(checked > 50, "expected the workspace's sources, found {checked} files");
    assert!(
        missing.is_empty(),
        "every source file opens with a `//!` comment saying what it owns and what it must not do; \
         these do not:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn no_test_is_ignored() {
    let workspace = workspace();
    // Spelled in two halves so that this file does not find itself.
    let needle = ["#[", "ignore"].concat();
    let mut offences = Vec::new();
    for file in rust_files(&workspace.join("crates")).into_iter().chain(rust_files(&workspace.join("bench"))) {
        let relative = relative(&workspace, &file);
        for (index, line) in read(&file).lines().enumerate() {
            if line.replace(' ', "").contains(&needle) {
                offences.push(format!("{relative}:{}", index + 1));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "no test is ignored in loupe: a test that cannot run is fixed or deleted. Found:\n  {}",
        offences.join("\n  ")
    );
}

/// The workspace root: this crate lives in `crates/loupe`.
fn workspace() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or_else(|error| panic!("the workspace root {} is readable: {error}", root.display()))
}

/// The files of modules declared `#[cfg(test)] mod name;`: test code, compiled only for tests.
fn test_only_modules(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut test_only = Vec::new();
    for file in files {
        let text = read(file);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            let Some(name) = pair[1].strip_prefix("mod ").and_then(|rest| rest.strip_suffix(';')) else { continue };
            if pair[0] != "#[cfg(test)]" {
                continue;
            }
            // `lib.rs`, `main.rs` and `mod.rs` hold their children beside them; `a.rs` in `a/`.
            let stem = file.file_stem().and_then(|stem| stem.to_str()).unwrap_or_default();
            let dir = file.parent().unwrap_or(Path::new("."));
            let dir = if matches!(stem, "lib" | "main" | "mod") { dir.to_path_buf() } else { dir.join(stem) };
            test_only.push(dir.join(format!("{name}.rs")));
            test_only.push(dir.join(name).join("mod.rs"));
        }
    }
    test_only
}

/// Every `.rs` file under `dir`, in path order, skipping build output and downloaded corpora.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = fs::read_dir(&dir).unwrap_or_else(|error| panic!("{} is readable: {error}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
            if path.is_dir() {
                if !(name.starts_with('.') || name == "target" || name == "corpora") {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `crates/<crate>/src/…`: a crate's own code, as opposed to its tests, benches, examples,
/// build script and fixtures.
fn is_library_source(relative: &str) -> bool {
    let mut parts = relative.split('/');
    parts.next() == Some("crates") && parts.next().is_some() && parts.next() == Some("src")
}

fn relative(workspace: &Path, path: &Path) -> String {
    path.strip_prefix(workspace).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|error| panic!("{} is readable: {error}", path.display()))
}

/// The lines of a source file with their 1-based numbers, leaving out `#[cfg(test)] mod … { … }`
/// blocks (rustfmt puts a top-level module's closing brace alone in column 0).
fn production_lines(text: &str) -> Vec<(usize, &str)> {
    let mut kept = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines.peek().is_some_and(|(_, next)| next.starts_with("mod ") && next.ends_with('{'))
        {
            for (_, inner) in lines.by_ref() {
                if inner == "}" {
                    break;
                }
            }
            continue;
        }
        kept.push((index + 1, line));
    }
    kept
}

/// Whether `code` calls `call` as a path of its own (`fs::write(` but not `my_fs::write(`,
/// `File::create(` but not `AtomicFile::create(`).
fn contains_call(code: &str, call: &str) -> bool {
    code.match_indices(call).any(|(start, _)| {
        !code[..start].chars().next_back().is_some_and(|before| before.is_alphanumeric() || before == '_')
    })
}

/// The statement that starts at `from` on line `number`: up to the next `;` (a builder chain
/// spans several lines).
fn statement_from(text: &str, from: &str, number: usize) -> String {
    let rest: Vec<&str> = text.lines().skip(number).collect();
    let joined = format!("{from}\n{}", rest.join("\n"));
    joined.split(';').next().unwrap_or_default().to_string()
}

/// Every dependency a manifest declares, with the table it is in: `[dependencies]`,
/// `[dev-dependencies]`, `[build-dependencies]` and their `[target.….*]` forms, by the name the
/// package has on crates.io (a `package = "…"` rename is followed).
fn dependencies(manifest: &toml::Table) -> Vec<(String, String)> {
    const KINDS: &[&str] = &["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<(String, &toml::Table)> = KINDS
        .iter()
        .filter_map(|kind| manifest.get(*kind).and_then(toml::Value::as_table).map(|table| (kind.to_string(), table)))
        .collect();
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        for (target, inner) in targets {
            for kind in KINDS {
                if let Some(table) = inner.get(*kind).and_then(toml::Value::as_table) {
                    tables.push((format!("target.{target}.{kind}"), table));
                }
            }
        }
    }
    let mut found = Vec::new();
    for (table_name, table) in tables {
        for (key, value) in table {
            let package = value.get("package").and_then(toml::Value::as_str).unwrap_or(key);
            found.push((table_name.clone(), package.to_string()));
        }
    }
    found
}
