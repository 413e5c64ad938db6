//! Rust: crates from `Cargo.toml` files, module paths from the directory structure, and
//! `use` / `mod` / `extern crate` resolved to the file of the longest module prefix.
//!
//! A crate's roots are `src/lib.rs` (or `[lib] path`), `src/main.rs`, `src/bin/*.rs`,
//! `src/bin/*/main.rs`, `tests|examples|benches/*.rs` and `*/main.rs` below them, `build.rs`
//! and every `path` of a `[[bin]]`, `[[test]]`, `[[example]]` or `[[bench]]` table. A file's
//! module path is its path below the nearest directory holding its crate's roots
//! (`src/a/b.rs` and `src/a/b/mod.rs` are both `crate::a::b`). A `lib.rs` outside any package
//! is a crate named after its directory (`rust/kernel/lib.rs` is `kernel`, `x/src/lib.rs` is
//! `x`: Linux builds its Rust without Cargo), nameable only in a workspace without any
//! package manifest (elsewhere such files are test fixtures); any other `.rs` file outside a
//! package is a crate root of its own (rustc compiles such files standalone).
//!
//! Must not follow `#[path]` attributes or `cfg`s, which need the source: a module declared
//! that way resolves only when the directory convention happens to agree.

use loupe_syntax::{Import, ImportKind};
use rustc_hash::{FxHashMap, FxHashSet};

use super::Found;
use super::files::{FileId, Files, ancestors, file_name, join, join_normalized, nearness, parent};

/// The workspace's crates and their roots.
pub(crate) struct RustLayout {
    crates: Vec<Crate>,
    /// Directory of a package `Cargo.toml` → its crate.
    crate_by_dir: FxHashMap<Box<str>, usize>,
    /// The library name (`[lib] name`, else the package name with `-` → `_`) → crates.
    by_name: FxHashMap<Box<str>, Vec<usize>>,
    /// The name of a `lib.rs` outside any package → crates; empty when the workspace has a
    /// package manifest.
    unpackaged_by_name: FxHashMap<Box<str>, Vec<usize>>,
    roots: FxHashSet<FileId>,
    /// Directory → the crate roots in it: the library first, then `main.rs`, then by path.
    root_dirs: FxHashMap<Box<str>, Vec<FileId>>,
}

struct Crate {
    dir: Box<str>,
    lib: Option<FileId>,
    /// Described by a `Cargo.toml` (else a `lib.rs` outside any package).
    has_manifest: bool,
}

/// Where a file sits in its crate's module tree.
struct ModuleContext<'a> {
    /// The directory module paths start from (`src` for `src/lib.rs`).
    root_dir: &'a str,
    /// The crate root whose module tree the file is taken to be in.
    root_file: Option<FileId>,
    /// The file's module path below the root (`["a", "b"]` for `src/a/b.rs`).
    segments: Vec<&'a str>,
    /// The file belongs to no package the workspace describes (or to no root of its
    /// package), so it is taken as a crate root of its own.
    standalone: bool,
}

impl RustLayout {
    pub(crate) fn new(files: &Files, read: &dyn Fn(FileId) -> Option<String>) -> RustLayout {
        let mut crates = Vec::new();
        let mut crate_by_dir: FxHashMap<Box<str>, usize> = FxHashMap::default();
        let mut by_name: FxHashMap<Box<str>, Vec<usize>> = FxHashMap::default();
        let mut roots: FxHashSet<FileId> = FxHashSet::default();
        let mut libs: FxHashSet<FileId> = FxHashSet::default();
        for &id in files.named("Cargo.toml") {
            let Some(manifest) = read(id).as_deref().map(Manifest::parse) else { continue };
            if !manifest.is_package {
                continue;
            }
            let dir = parent(files.path(id).as_str());
            let lib_path = manifest.lib_path.as_deref().unwrap_or("src/lib.rs");
            let lib = join_normalized(dir, lib_path).and_then(|path| files.id(&path));
            for path in &manifest.target_paths {
                if let Some(target) = join_normalized(dir, path).and_then(|path| files.id(&path)) {
                    roots.insert(target);
                }
            }
            if let Some(build) = join_normalized(dir, manifest.build.as_deref().unwrap_or("build.rs")) {
                roots.extend(files.id(&build));
            }
            if let Some(lib) = lib {
                roots.insert(lib);
                libs.insert(lib);
                if let Some(name) = manifest.lib_name.or(manifest.package_name) {
                    by_name.entry(name.replace('-', "_").into()).or_default().push(crates.len());
                }
            }
            crate_by_dir.insert(dir.into(), crates.len());
            crates.push(Crate { dir: dir.into(), lib, has_manifest: true });
        }
        let mut unpackaged_by_name: FxHashMap<Box<str>, Vec<usize>> = FxHashMap::default();
        let manifest_count = crates.len();
        let packaged = |path: &str, crate_by_dir: &FxHashMap<Box<str>, usize>| {
            ancestors(parent(path)).any(|dir| crate_by_dir.get(dir).is_some_and(|&index| index < manifest_count))
        };
        let mut unpackaged = Vec::new();
        for &lib in files.named("lib.rs") {
            let path = files.path(lib).as_str();
            if packaged(path, &crate_by_dir) {
                continue;
            }
            let lib_dir = parent(path);
            let dir = if file_name(lib_dir) == "src" { parent(lib_dir) } else { lib_dir };
            if crate_by_dir.contains_key(dir) {
                continue;
            }
            roots.insert(lib);
            libs.insert(lib);
            let index = crates.len() + unpackaged.len();
            if !dir.is_empty() {
                unpackaged_by_name.entry(file_name(dir).replace('-', "_").into()).or_default().push(index);
            }
            crate_by_dir.insert(dir.into(), index);
            unpackaged.push(Crate { dir: dir.into(), lib: Some(lib), has_manifest: false });
        }
        if !crates.is_empty() {
            unpackaged_by_name.clear();
        }
        crates.extend(unpackaged);
        let mut layout =
            RustLayout { crates, crate_by_dir, by_name, unpackaged_by_name, roots, root_dirs: FxHashMap::default() };
        layout.discover_roots(files);
        let mut root_dirs: FxHashMap<Box<str>, Vec<FileId>> = FxHashMap::default();
        for &root in &layout.roots {
            root_dirs.entry(parent(files.path(root).as_str()).into()).or_default().push(root);
        }
        for list in root_dirs.values_mut() {
            list.sort_unstable_by_key(|&id| (!libs.contains(&id), file_name(files.path(id).as_str()) != "main.rs", id));
        }
        layout.root_dirs = root_dirs;
        layout
    }

    /// Adds the roots Cargo finds by convention: `src/main.rs`, `src/bin/*.rs`,
    /// `src/bin/*/main.rs`, `tests|examples|benches/*.rs` and their `*/main.rs` (and a `main.rs`
    /// beside a `lib.rs` that has no manifest).
    fn discover_roots(&mut self, files: &Files) {
        for (id, path) in files.all() {
            if !path.ends_with(".rs") {
                continue;
            }
            let Some(crate_dir) = self.crate_dir_of(path) else { continue };
            let below = if crate_dir.is_empty() { path } else { &path[crate_dir.len() + 1..] };
            let parts: Vec<&str> = below.split('/').collect();
            let has_manifest = self.crates[self.crate_by_dir[crate_dir]].has_manifest;
            // Next to a `lib.rs` without a manifest, `main.rs` is a binary compiled on its own.
            let is_root = (!has_manifest && below == "main.rs")
                || matches!(
                    parts.as_slice(),
                    ["src", "main.rs"]
                        | ["src", "bin", _]
                        | ["src", "bin", _, "main.rs"]
                        | ["tests" | "examples" | "benches", _]
                        | ["tests" | "examples" | "benches", _, "main.rs"]
                );
            if is_root {
                self.roots.insert(id);
            }
        }
    }

    pub(crate) fn crate_count(&self) -> usize {
        self.crates.len()
    }

    /// The nearest crate directory above `path`: a package's `Cargo.toml`, or a `lib.rs`
    /// without one.
    fn crate_dir_of<'a>(&self, path: &'a str) -> Option<&'a str> {
        ancestors(parent(path)).find(|dir| self.crate_by_dir.contains_key(*dir))
    }

    pub(crate) fn resolve(&self, files: &Files, from: &str, import: &Import, found: &mut Found) {
        let context = self.context(files, from);
        if import.kind == ImportKind::Mod {
            match self.declared_module(files, from, &context, &import.module) {
                Some(id) => found.file(id),
                None => found.external(import.module.clone()),
            }
            return;
        }
        let module: Vec<&str> = if import.module.is_empty() { Vec::new() } else { import.module.split("::").collect() };
        let mut resolve_one = |path: &[&str]| {
            if path.is_empty() {
                return;
            }
            self.resolve_path(files, from, &context, path, import.relative_level, found);
        };
        if import.names.is_empty() {
            resolve_one(&module);
        }
        let mut path = module.clone();
        for name in &import.names {
            path.truncate(module.len());
            if name != "self" && name != "*" {
                path.push(name);
            }
            resolve_one(&path);
        }
    }

    /// Where `from` sits in its crate's module tree.
    fn context<'a>(&self, files: &Files, from: &'a str) -> ModuleContext<'a> {
        let from_id = files.id(from);
        let standalone =
            ModuleContext { root_dir: parent(from), root_file: from_id, segments: Vec::new(), standalone: true };
        let Some(crate_dir) = self.crate_dir_of(from) else { return standalone };
        if from_id.is_some_and(|id| self.roots.contains(&id)) {
            return ModuleContext { standalone: false, ..standalone };
        }
        let from_dir = parent(from);
        let root_dir = ancestors(from_dir)
            .take_while(|dir| dir.len() >= crate_dir.len())
            .find(|dir| self.root_dirs.contains_key(*dir));
        let Some(root_dir) = root_dir else { return standalone };
        let below = if root_dir.is_empty() { from } else { &from[root_dir.len() + 1..] };
        let mut segments: Vec<&str> = below.split('/').collect();
        let last = segments.pop().unwrap_or("");
        let stem = last.strip_suffix(".rs").unwrap_or(last);
        if stem != "mod" {
            segments.push(stem);
        }
        ModuleContext { root_dir, root_file: self.root_dirs[root_dir].first().copied(), segments, standalone: false }
    }

    /// The file of `mod path;` declared in `from`: `x.rs` or `x/mod.rs` in the declaring
    /// module's directory (the file's own directory for crate roots and `mod.rs`, else a
    /// directory named after the file).
    fn declared_module(&self, files: &Files, from: &str, context: &ModuleContext<'_>, module: &str) -> Option<FileId> {
        let relative = module.replace("::", "/");
        let from_dir = parent(from);
        let own_dir = join(from_dir, file_name(from).strip_suffix(".rs").unwrap_or(""));
        let is_mod_rs = context.segments.is_empty() || file_name(from) == "mod.rs";
        let primary = if is_mod_rs { from_dir } else { own_dir.as_str() };
        let in_dir = |dir: &str| {
            let base = join(dir, &relative);
            files.id(&format!("{base}.rs")).or_else(|| files.id(&format!("{base}/mod.rs")))
        };
        if let Some(id) = in_dir(primary) {
            return Some(id);
        }
        // A standalone file may be a module of a crate whose manifest the workspace lacks.
        if context.standalone && file_name(from) != "mod.rs" { in_dir(&own_dir) } else { None }
    }

    /// Resolves one `use` path (`crate::a::B`, `super::x`, `serde::Serialize`).
    fn resolve_path(
        &self,
        files: &Files,
        from: &str,
        context: &ModuleContext<'_>,
        path: &[&str],
        inline_depth: usize,
        found: &mut Found,
    ) {
        let from_id = files.id(from);
        let (first, rest) = (path[0], &path[1..]);
        let target = match first {
            "crate" | "$crate" => self.longest_module(files, context, &[], rest),
            "self" if inline_depth > 0 => from_id,
            "self" => self.longest_module(files, context, &context.segments, rest),
            "super" => {
                let supers = path.iter().take_while(|segment| **segment == "super").count();
                // `super` first leaves the inline `mod m { }` blocks the `use` sits in.
                if inline_depth > supers {
                    from_id
                } else {
                    let file_pops = (supers - inline_depth).min(context.segments.len());
                    let base = &context.segments[..context.segments.len() - file_pops];
                    self.longest_module(files, context, base, &path[supers..])
                }
            }
            "" => return self.extern_crate(files, from, rest, found),
            // `use Ordering::*`, `use Kind::Variant`: an item already in scope here.
            name if name.starts_with(|c: char| c.is_ascii_uppercase()) => from_id,
            name => {
                let mut child: Vec<&str> = context.segments.clone();
                child.push(name);
                if inline_depth == 0 && self.module_file(files, context, &child).is_some() {
                    self.longest_module(files, context, &context.segments, path)
                } else if self.module_file(files, context, &[name]).is_some() {
                    self.longest_module(files, context, &[], path)
                } else {
                    return self.extern_crate(files, from, path, found);
                }
            }
        };
        match target {
            Some(id) => found.file(id),
            None => found.external(first),
        }
    }

    /// `name::rest` where `name` is a crate: a workspace crate's library, else external.
    fn extern_crate(&self, files: &Files, from: &str, path: &[&str], found: &mut Found) {
        let Some((&name, rest)) = path.split_first() else { return };
        let from_dir = parent(from);
        let candidates = self.by_name.get(name).or_else(|| self.unpackaged_by_name.get(name));
        let library = candidates.and_then(|candidates| {
            let best = candidates.iter().min_by_key(|&&index| {
                let dir = &*self.crates[index].dir;
                (nearness(from_dir, dir), dir)
            })?;
            self.crates[*best].lib
        });
        let Some(lib) = library else {
            found.external(name);
            return;
        };
        let context = ModuleContext {
            root_dir: parent(files.path(lib).as_str()),
            root_file: Some(lib),
            segments: Vec::new(),
            standalone: false,
        };
        match self.longest_module(files, &context, &[], rest) {
            Some(id) => found.file(id),
            None => found.file(lib),
        }
    }

    /// The file of the longest prefix of `base ++ rest` that is a module; the last segments
    /// may be items (`crate::config::Config` is the file of `crate::config`).
    fn longest_module(
        &self,
        files: &Files,
        context: &ModuleContext<'_>,
        base: &[&str],
        rest: &[&str],
    ) -> Option<FileId> {
        let mut full: Vec<&str> = Vec::with_capacity(base.len() + rest.len());
        full.extend_from_slice(base);
        full.extend_from_slice(rest);
        (0..=full.len()).rev().find_map(|length| self.module_file(files, context, &full[..length]))
    }

    /// The file of the module `segments` below the context's root: `a/b.rs` or `a/b/mod.rs`;
    /// the crate root for no segments.
    fn module_file(&self, files: &Files, context: &ModuleContext<'_>, segments: &[&str]) -> Option<FileId> {
        if segments.is_empty() {
            return context.root_file;
        }
        let mut path = String::with_capacity(context.root_dir.len() + 32);
        path.push_str(context.root_dir);
        for segment in segments {
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(segment);
        }
        let stem = path.len();
        path.push_str(".rs");
        if let Some(id) = files.id(&path) {
            return Some(id);
        }
        path.truncate(stem);
        path.push_str("/mod.rs");
        files.id(&path)
    }
}

/// What resolution needs from a `Cargo.toml`, read line by line.
#[derive(Debug, Default, PartialEq)]
struct Manifest {
    is_package: bool,
    package_name: Option<String>,
    lib_name: Option<String>,
    lib_path: Option<String>,
    build: Option<String>,
    /// The `path` of every `[[bin]]`, `[[test]]`, `[[example]]` and `[[bench]]`.
    target_paths: Vec<String>,
}

impl Manifest {
    fn parse(text: &str) -> Manifest {
        let mut manifest = Manifest::default();
        let mut table = "";
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('#') {
                continue;
            }
            if line.starts_with('[') {
                table = line.trim_start_matches('[').split(']').next().unwrap_or("").trim();
                manifest.is_package |= table == "package";
                continue;
            }
            let Some((key, value)) = line.split_once('=') else { continue };
            let Some(value) = toml_string(value.trim()) else { continue };
            match (table, key.trim()) {
                ("package", "name") => manifest.package_name = Some(value),
                ("package", "build") => manifest.build = Some(value),
                ("lib", "name") => manifest.lib_name = Some(value),
                ("lib", "path") => manifest.lib_path = Some(value),
                ("bin" | "test" | "example" | "bench", "path") => manifest.target_paths.push(value),
                _ => {}
            }
        }
        manifest
    }
}

/// A basic or literal TOML string at the start of `value`.
fn toml_string(value: &str) -> Option<String> {
    let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = &value[1..];
    let end = inner.find(quote)?;
    Some(inner[..end].to_owned())
}

#[cfg(test)]
mod tests {
    use super::Manifest;
    use crate::resolve::tests::{check, import, layout};
    use loupe_syntax::{Import, ImportKind, Lang};

    fn use_(module: &str, names: &[&str]) -> Import {
        import(ImportKind::Use, module, names)
    }

    fn mod_(name: &str) -> Import {
        import(ImportKind::Mod, name, &[])
    }

    const FILES: &[&str] = &[
        "crates/core/src/lib.rs",
        "crates/core/src/config.rs",
        "crates/core/src/path/mod.rs",
        "crates/core/src/path/normalize.rs",
        "crates/core/src/path/normalize/windows.rs",
        "crates/core/src/main.rs",
        "crates/core/src/bin/tool.rs",
        "crates/core/src/bin/tool/helper.rs",
        "crates/core/src/bin/big/main.rs",
        "crates/core/src/bin/big/part.rs",
        "crates/core/tests/it.rs",
        "crates/core/tests/common/mod.rs",
        "crates/core/build.rs",
        "crates/app/src/main.rs",
        "crates/app/src/cli.rs",
        "crates/odd/lib.rs",
        "crates/odd/inner.rs",
        "crates/odd/tools/gen.rs",
        "ui/standalone.rs",
        "ui/aux_mod.rs",
        "ui/helpers.rs",
        "ui/helpers/child.rs",
        "fixtures/serde/src/lib.rs",
        "fixtures/serde/src/main.rs",
        "fixtures/serde/src/de.rs",
    ];
    const CONFIGS: &[(&str, &str)] = &[
        ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
        ("crates/core/Cargo.toml", "[package]\nname = \"my-core\" # the core\nversion = \"0.1.0\"\n"),
        ("crates/app/Cargo.toml", "[package]\nname = 'app'\n\n[dependencies]\nmy-core = { path = \"../core\" }\n"),
        (
            "crates/odd/Cargo.toml",
            "[package]\nname = \"odd\"\n[lib]\nname = \"oddity\"\npath = \"lib.rs\"\n[[bin]]\nname = \"gen\"\npath = \"tools/gen.rs\"\n",
        ),
    ];

    #[test]
    fn mod_declarations_follow_the_directory_rules() {
        let layout = layout(FILES, CONFIGS);
        check(&layout, "crates/core/src/lib.rs", Lang::Rust, &mod_("config"), &["crates/core/src/config.rs"]);
        check(&layout, "crates/core/src/lib.rs", Lang::Rust, &mod_("path"), &["crates/core/src/path/mod.rs"]);
        check(
            &layout,
            "crates/core/src/path/mod.rs",
            Lang::Rust,
            &mod_("normalize"),
            &["crates/core/src/path/normalize.rs"],
        );
        // A non-mod.rs file's children live in the directory named after it.
        check(
            &layout,
            "crates/core/src/path/normalize.rs",
            Lang::Rust,
            &mod_("windows"),
            &["crates/core/src/path/normalize/windows.rs"],
        );
        check(&layout, "crates/core/src/bin/tool.rs", Lang::Rust, &mod_("helper"), &["ext:helper"]);
        check(
            &layout,
            "crates/core/src/bin/big/main.rs",
            Lang::Rust,
            &mod_("part"),
            &["crates/core/src/bin/big/part.rs"],
        );
        check(&layout, "crates/core/tests/it.rs", Lang::Rust, &mod_("common"), &["crates/core/tests/common/mod.rs"]);
        check(&layout, "crates/odd/lib.rs", Lang::Rust, &mod_("inner"), &["crates/odd/inner.rs"]);
        check(&layout, "crates/core/src/lib.rs", Lang::Rust, &mod_("missing"), &["ext:missing"]);
    }

    #[test]
    fn mod_inside_an_inline_module_is_below_it() {
        let layout = layout(FILES, CONFIGS);
        let mut nested = mod_("normalize::windows");
        nested.relative_level = 1;
        check(
            &layout,
            "crates/core/src/path/mod.rs",
            Lang::Rust,
            &nested,
            &["crates/core/src/path/normalize/windows.rs"],
        );
    }

    #[test]
    fn crate_self_and_super_paths_take_the_longest_module() {
        let layout = layout(FILES, CONFIGS);
        let from = "crates/core/src/path/normalize.rs";
        check(&layout, from, Lang::Rust, &use_("crate::config", &["Config"]), &["crates/core/src/config.rs"]);
        check(&layout, from, Lang::Rust, &use_("crate", &["Thing"]), &["crates/core/src/lib.rs"]);
        check(&layout, from, Lang::Rust, &use_("super", &["*"]), &["crates/core/src/path/mod.rs"]);
        check(&layout, from, Lang::Rust, &use_("super::super::config", &["self"]), &["crates/core/src/config.rs"]);
        check(
            &layout,
            from,
            Lang::Rust,
            &use_("self::windows", &["fix"]),
            &["crates/core/src/path/normalize/windows.rs"],
        );
        check(
            &layout,
            from,
            Lang::Rust,
            &use_("crate::path::normalize::windows", &["a", "b"]),
            &["crates/core/src/path/normalize/windows.rs"],
        );
    }

    #[test]
    fn groups_resolve_each_name() {
        let layout = layout(FILES, CONFIGS);
        let from = "crates/core/src/main.rs";
        check(
            &layout,
            from,
            Lang::Rust,
            &use_("crate", &["config", "path"]),
            &["crates/core/src/config.rs", "crates/core/src/path/mod.rs"],
        );
        check(
            &layout,
            from,
            Lang::Rust,
            &use_("crate::path", &["normalize", "Missing"]),
            &["crates/core/src/path/mod.rs", "crates/core/src/path/normalize.rs"],
        );
    }

    #[test]
    fn inline_modules_shift_self_and_super() {
        let layout = layout(FILES, CONFIGS);
        let from = "crates/core/src/config.rs";
        let mut in_tests = use_("super", &["*"]);
        in_tests.relative_level = 1;
        check(&layout, from, Lang::Rust, &in_tests, &["crates/core/src/config.rs"]);
        let mut deeper = use_("super::super::path", &["x"]);
        deeper.relative_level = 1;
        check(&layout, from, Lang::Rust, &deeper, &["crates/core/src/path/mod.rs"]);
        let mut self_in_inline = use_("self::helpers", &["x"]);
        self_in_inline.relative_level = 2;
        check(&layout, from, Lang::Rust, &self_in_inline, &["crates/core/src/config.rs"]);
    }

    #[test]
    fn workspace_crates_by_name_and_externals() {
        let layout = layout(FILES, CONFIGS);
        let from = "crates/app/src/cli.rs";
        check(
            &layout,
            from,
            Lang::Rust,
            &use_("my_core::path::normalize", &["run"]),
            &["crates/core/src/path/normalize.rs"],
        );
        check(&layout, from, Lang::Rust, &use_("my_core", &["Thing"]), &["crates/core/src/lib.rs"]);
        check(&layout, from, Lang::Rust, &use_("oddity::inner", &["*"]), &["crates/odd/inner.rs"]);
        check(&layout, from, Lang::Rust, &use_("::my_core::config", &["C"]), &["crates/core/src/config.rs"]);
        check(&layout, from, Lang::Rust, &use_("std::collections", &["HashMap"]), &["ext:std"]);
        check(&layout, from, Lang::Rust, &use_("serde", &[]), &["ext:serde"]);
        check(&layout, from, Lang::Rust, &use_("::serde::de", &["Error"]), &["ext:serde"]);
        check(
            &layout,
            "crates/core/tests/it.rs",
            Lang::Rust,
            &use_("my_core", &["Thing"]),
            &["crates/core/src/lib.rs"],
        );
        // `extern crate` is a `use` of the crate name.
        check(&layout, "crates/app/src/main.rs", Lang::Rust, &use_("my_core", &[]), &["crates/core/src/lib.rs"]);
    }

    #[test]
    fn edition_2018_paths_to_local_modules() {
        let layout = layout(FILES, CONFIGS);
        // From the crate root, `use config::X` is the local module.
        check(
            &layout,
            "crates/core/src/lib.rs",
            Lang::Rust,
            &use_("config", &["Config"]),
            &["crates/core/src/config.rs"],
        );
        // From a submodule, a child module first, then a crate-level module.
        check(
            &layout,
            "crates/core/src/path/mod.rs",
            Lang::Rust,
            &use_("normalize", &["x"]),
            &["crates/core/src/path/normalize.rs"],
        );
        check(
            &layout,
            "crates/core/src/path/mod.rs",
            Lang::Rust,
            &use_("config", &["x"]),
            &["crates/core/src/config.rs"],
        );
        check(&layout, "crates/app/src/main.rs", Lang::Rust, &use_("cli", &["Args"]), &["crates/app/src/cli.rs"]);
        // An item already in scope.
        check(
            &layout,
            "crates/core/src/config.rs",
            Lang::Rust,
            &use_("Ordering", &["*"]),
            &["crates/core/src/config.rs"],
        );
    }

    #[test]
    fn binaries_have_their_own_module_trees() {
        let layout = layout(FILES, CONFIGS);
        check(
            &layout,
            "crates/core/src/bin/big/part.rs",
            Lang::Rust,
            &use_("crate", &["X"]),
            &["crates/core/src/bin/big/main.rs"],
        );
        check(&layout, "crates/odd/tools/gen.rs", Lang::Rust, &use_("crate", &["X"]), &["crates/odd/tools/gen.rs"]);
        check(&layout, "crates/core/build.rs", Lang::Rust, &use_("crate", &["X"]), &["crates/core/build.rs"]);
    }

    #[test]
    fn standalone_files_are_their_own_roots() {
        let layout = layout(FILES, CONFIGS);
        check(&layout, "ui/standalone.rs", Lang::Rust, &mod_("aux_mod"), &["ui/aux_mod.rs"]);
        check(&layout, "ui/standalone.rs", Lang::Rust, &use_("crate", &["X"]), &["ui/standalone.rs"]);
        check(&layout, "ui/standalone.rs", Lang::Rust, &use_("aux_mod", &["X"]), &["ui/aux_mod.rs"]);
        // A standalone file may really be a submodule whose crate the workspace does not hold.
        check(&layout, "ui/helpers.rs", Lang::Rust, &mod_("child"), &["ui/helpers/child.rs"]);
        // But inside a crate the directory rules are strict.
        check(&layout, "crates/core/src/config.rs", Lang::Rust, &mod_("path"), &["ext:path"]);
    }

    #[test]
    fn lib_rs_outside_packages_is_a_crate() {
        let files = &[
            "rust/kernel/lib.rs",
            "rust/kernel/sync/mod.rs",
            "rust/kernel/sync/arc.rs",
            "rust/macros/lib.rs",
            "drivers/net/phy/ax88796b_rust.rs",
            "samples/demo/src/lib.rs",
            "samples/demo/src/main.rs",
            "samples/demo/src/de.rs",
            "samples/demo/src/nested/lib.rs",
        ];
        let layout = layout(files, &[]);
        let driver = "drivers/net/phy/ax88796b_rust.rs";
        check(&layout, driver, Lang::Rust, &use_("kernel::sync::arc", &["Arc"]), &["rust/kernel/sync/arc.rs"]);
        check(&layout, driver, Lang::Rust, &use_("kernel::prelude", &["*"]), &["rust/kernel/lib.rs"]);
        check(&layout, driver, Lang::Rust, &use_("core::mem", &[]), &["ext:core"]);
        check(
            &layout,
            "rust/kernel/sync/arc.rs",
            Lang::Rust,
            &use_("crate::sync", &["Lock"]),
            &["rust/kernel/sync/mod.rs"],
        );
        check(&layout, "rust/kernel/lib.rs", Lang::Rust, &mod_("sync"), &["rust/kernel/sync/mod.rs"]);
        check(&layout, "rust/kernel/lib.rs", Lang::Rust, &use_("macros", &["module"]), &["rust/macros/lib.rs"]);
        check(&layout, driver, Lang::Rust, &use_("demo", &["Thing"]), &["samples/demo/src/lib.rs"]);
        check(&layout, "samples/demo/src/main.rs", Lang::Rust, &mod_("de"), &["samples/demo/src/de.rs"]);
        check(&layout, "samples/demo/src/de.rs", Lang::Rust, &use_("crate", &["X"]), &["samples/demo/src/lib.rs"]);
    }

    #[test]
    fn lib_rs_outside_packages_is_not_named_in_a_cargo_workspace() {
        let layout = layout(FILES, CONFIGS);
        // `fixtures/serde/src/lib.rs` has no manifest: a fixture, not the `serde` crate.
        check(&layout, "crates/app/src/cli.rs", Lang::Rust, &use_("serde", &["Serialize"]), &["ext:serde"]);
        check(&layout, "ui/standalone.rs", Lang::Rust, &use_("serde", &["Serialize"]), &["ext:serde"]);
        // Its module tree still works.
        check(&layout, "fixtures/serde/src/main.rs", Lang::Rust, &mod_("de"), &["fixtures/serde/src/de.rs"]);
        check(&layout, "fixtures/serde/src/de.rs", Lang::Rust, &use_("crate", &["X"]), &["fixtures/serde/src/lib.rs"]);
    }

    #[test]
    fn manifests_are_read_line_by_line() {
        let manifest = Manifest::parse(
            "# c\n[package]\nname = \"a-b\"\nbuild = \"gen.rs\"\n[lib]\npath = 'src/x.rs'\n[[bin]]\npath = \"b.rs\"\n[[test]]\npath = \"t.rs\"\n[dependencies]\nname = \"not-this\"\n",
        );
        assert!(manifest.is_package);
        assert_eq!(manifest.package_name.as_deref(), Some("a-b"));
        assert_eq!(manifest.build.as_deref(), Some("gen.rs"));
        assert_eq!(manifest.lib_path.as_deref(), Some("src/x.rs"));
        assert_eq!(manifest.target_paths, ["b.rs", "t.rs"]);
        assert!(!Manifest::parse("[workspace]\nmembers = []\n").is_package);
    }
}
