//! Import resolution: which workspace files (or which external module) one import names.
//!
//! `Layout::new` indexes the workspace's file list once and reads the few configuration files
//! the rules need (`Cargo.toml`, `pyproject.toml` locations, `tsconfig.json`/`jsconfig.json`,
//! `package.json`, `go.mod`); `Layout::resolve` then answers each import with a few hash
//! lookups. The rules per language live in the submodules: `rust`, `python`, `script`
//! (TypeScript and JavaScript), `go`, `java` (also Kotlin), `c` (C and C++) and `ruby`.
//!
//! Resolution is syntactic: it follows each language's module rules over the file list and
//! never reads source files. This module must do no IO: every text it sees comes through the
//! caller's `read` closure.

mod c;
mod files;
mod go;
mod java;
mod python;
mod ruby;
mod rust;
mod script;

use loupe_core::RepoPath;
use loupe_syntax::{Import, Lang};
use rustc_hash::FxHashSet;

use files::{FileId, Files};

/// What the resolver knows about a workspace: its files and the few config files.
pub struct Layout {
    files: Files,
    rust: rust::RustLayout,
    python: python::PythonLayout,
    script: script::ScriptLayout,
    go: go::GoLayout,
    c: c::CLayout,
    /// The config files `new` read: a change to one of them changes the layout.
    read: FxHashSet<RepoPath>,
}

/// One thing an import refers to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resolved {
    /// A workspace file.
    File(RepoPath),
    /// A module outside the workspace, named as a person would say it: `serde`, `os.path`,
    /// `react`, `@scope/pkg`, `fmt`, `java.util.List`, `stdio.h`.
    External(String),
}

impl Layout {
    /// `files`: every file of the workspace (any order). `read`: the text of a workspace file
    /// (called only for config files: every `Cargo.toml`, `package.json`, `go.mod`,
    /// `tsconfig.json` / `jsconfig.json` and the configs their `extends` names, each at most
    /// once); None when unreadable. Python's roots come from where `pyproject.toml`,
    /// `setup.py` and `setup.cfg` are, not from their text.
    pub fn new(files: &[RepoPath], read: &dyn Fn(&RepoPath) -> Option<String>) -> Layout {
        let files = Files::new(files);
        let read_paths = std::cell::RefCell::new(FxHashSet::default());
        let read_id = |id: FileId| {
            read_paths.borrow_mut().insert(files.path(id).clone());
            read(files.path(id))
        };
        let (rust, script, go) = (
            rust::RustLayout::new(&files, &read_id),
            script::ScriptLayout::new(&files, &read_id),
            go::GoLayout::new(&files, &read_id),
        );
        Layout {
            rust,
            python: python::PythonLayout::new(&files),
            script,
            go,
            c: c::CLayout::new(&files),
            files,
            read: read_paths.into_inner(),
        }
    }

    /// Whether the layout was built from `path`'s text (a `Cargo.toml`, `package.json`,
    /// `go.mod`, `tsconfig.json`…): when that file changes, the layout must be built again.
    pub fn depends_on(&self, path: &RepoPath) -> bool {
        self.read.contains(path)
    }

    /// The workspace files (or external modules) one import of `from` refers to, sorted and
    /// without duplicates. Never empty: an import that names no workspace file is one
    /// `External(name)`.
    pub fn resolve(&self, from: &RepoPath, lang: Lang, import: &Import) -> Vec<Resolved> {
        let mut found = Found::default();
        let from = from.as_str();
        match lang {
            Lang::Rust => self.rust.resolve(&self.files, from, import, &mut found),
            Lang::Python => self.python.resolve(&self.files, from, import, &mut found),
            Lang::TypeScript | Lang::Tsx | Lang::JavaScript => {
                self.script.resolve(&self.files, from, import, &mut found)
            }
            Lang::Go => self.go.resolve(&self.files, from, import, &mut found),
            Lang::Java => java::resolve(&self.files, from, import, java::JAVA, &mut found),
            Lang::Kotlin => java::resolve(&self.files, from, import, java::KOTLIN, &mut found),
            Lang::C | Lang::Cpp => self.c.resolve(&self.files, from, import, &mut found),
            Lang::Ruby => ruby::resolve(&self.files, from, import, &mut found),
            Lang::CSharp | Lang::Php => {}
        }
        found.finish(&self.files, import)
    }

    /// The number of workspace files the layout indexed.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }
}

impl std::fmt::Debug for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layout")
            .field("files", &self.files.len())
            .field("rust_crates", &self.rust.crate_count())
            .field("python_roots", &self.python.root_count())
            .field("script_packages", &self.script.package_count())
            .field("go_modules", &self.go.module_count())
            .finish_non_exhaustive()
    }
}

/// What the rules found for one import: files by id, external names, in any order.
#[derive(Default)]
pub(crate) struct Found {
    files: Vec<FileId>,
    external: Vec<String>,
}

impl Found {
    pub(crate) fn file(&mut self, id: FileId) {
        self.files.push(id);
    }

    pub(crate) fn external(&mut self, name: impl Into<String>) {
        self.external.push(name.into());
    }

    fn is_empty(&self) -> bool {
        self.files.is_empty() && self.external.is_empty()
    }

    /// Sorted, without duplicates; a bare `External` of the written module when the rules
    /// found nothing.
    fn finish(mut self, files: &Files, import: &Import) -> Vec<Resolved> {
        if self.is_empty() {
            self.external.push(fallback_name(import));
        }
        self.files.sort_unstable();
        self.files.dedup();
        self.external.sort_unstable();
        self.external.dedup();
        let mut resolved: Vec<Resolved> = Vec::with_capacity(self.files.len() + self.external.len());
        resolved.extend(self.files.into_iter().map(|id| Resolved::File(files.path(id).clone())));
        resolved.extend(self.external.into_iter().map(Resolved::External));
        resolved
    }
}

/// The external name of an import no rule understood: its module, else its first name.
fn fallback_name(import: &Import) -> String {
    if !import.module.is_empty() {
        return import.module.clone();
    }
    import.names.first().cloned().unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod tests {
    //! Helpers for the rules' tests: in-memory layouts and a compact expectation format.

    use super::*;
    use loupe_syntax::ImportKind;

    /// A layout over `files`, whose config files read as `configs` (path, text).
    pub(crate) fn layout(files: &[&str], configs: &[(&str, &str)]) -> Layout {
        let mut paths: Vec<RepoPath> = files.iter().map(|path| RepoPath::normalize(path).unwrap()).collect();
        paths.extend(configs.iter().map(|(path, _)| RepoPath::normalize(path).unwrap()));
        let read = |path: &RepoPath| {
            configs.iter().find(|(name, _)| *name == path.as_str()).map(|(_, text)| (*text).to_owned())
        };
        Layout::new(&paths, &read)
    }

    /// An import of `module` with `names`, nothing else set.
    pub(crate) fn import(kind: ImportKind, module: &str, names: &[&str]) -> Import {
        Import {
            kind,
            module: module.to_owned(),
            names: names.iter().map(|name| (*name).to_owned()).collect(),
            alias: None,
            line: 1,
            relative_level: 0,
            is_system: false,
        }
    }

    /// Asserts what `import` of `from` resolves to: paths, and `ext:name` for externals.
    #[track_caller]
    pub(crate) fn check(layout: &Layout, from: &str, lang: Lang, import: &Import, expected: &[&str]) {
        let from = RepoPath::normalize(from).unwrap();
        let actual: Vec<String> = layout
            .resolve(&from, lang, import)
            .into_iter()
            .map(|resolved| match resolved {
                Resolved::File(path) => path.as_str().to_owned(),
                Resolved::External(name) => format!("ext:{name}"),
            })
            .collect();
        assert_eq!(actual, expected, "{import:?} from {from}");
    }

    #[test]
    fn a_layout_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<Layout>();
        shared::<Resolved>();
    }

    #[test]
    fn unsupported_languages_are_external_by_module() {
        let layout = layout(&["Foo/Bar.php", "Svc.cs"], &[]);
        check(&layout, "a.php", Lang::Php, &import(ImportKind::Import, "Foo", &["Bar"]), &["ext:Foo"]);
        check(&layout, "a.cs", Lang::CSharp, &import(ImportKind::Import, "System.IO", &[]), &["ext:System.IO"]);
        check(&layout, "a.cs", Lang::CSharp, &import(ImportKind::Import, "", &["X"]), &["ext:X"]);
    }

    #[test]
    fn results_are_sorted_and_deduplicated() {
        let layout = layout(&["pkg/__init__.py", "pkg/b.py", "pkg/a.py"], &[]);
        let from = import(ImportKind::From, "pkg", &["b", "a", "b", "Missing"]);
        check(&layout, "main.py", Lang::Python, &from, &["pkg/__init__.py", "pkg/a.py", "pkg/b.py"]);
    }
}
