//! Go: an import path under a `go.mod` module path names the package directory below that
//! `go.mod`; the package is every non-test `.go` file directly in it. Nested modules: the
//! longest module path wins. A module's `vendor/` directory serves imports of other modules.
//!
//! Must not read `go.mod` beyond its `module` line.

use loupe_syntax::Import;
use rustc_hash::{FxHashMap, FxHashSet};

use super::Found;
use super::files::{FileId, Files, ancestors, depth, file_name, join, parent};

/// The workspace's Go modules: module path → the directory of its `go.mod`.
pub(crate) struct GoLayout {
    modules: FxHashMap<Box<str>, Box<str>>,
    /// The directories holding a `go.mod` (to find the importer's module and its `vendor/`).
    module_dirs: FxHashSet<Box<str>>,
}

impl GoLayout {
    pub(crate) fn new(files: &Files, read: &dyn Fn(FileId) -> Option<String>) -> GoLayout {
        let mut modules: FxHashMap<Box<str>, Box<str>> = FxHashMap::default();
        let mut module_dirs = FxHashSet::default();
        for &id in files.named("go.mod") {
            let dir = parent(files.path(id).as_str());
            module_dirs.insert(dir.into());
            let Some(text) = read(id) else { continue };
            let Some(path) = module_path(&text) else { continue };
            // Two go.mod files with one module path (a copy under testdata): the shallowest wins.
            let existing = modules.get(path).map(|existing| depth(existing));
            if existing.is_none_or(|existing| existing > depth(dir)) {
                modules.insert(path.into(), dir.into());
            }
        }
        GoLayout { modules, module_dirs }
    }

    pub(crate) fn module_count(&self) -> usize {
        self.modules.len()
    }

    pub(crate) fn resolve(&self, files: &Files, from: &str, import: &Import, found: &mut Found) {
        let path = import.module.as_str();
        if let Some(dir) = self.package_dir(files, from, path) {
            let mut any = false;
            for &id in files.in_dir(&dir) {
                let name = file_name(files.path(id).as_str());
                if name.ends_with(".go") && !name.ends_with("_test.go") {
                    found.file(id);
                    any = true;
                }
            }
            if any {
                return;
            }
        }
        found.external(path);
    }

    /// The directory an import path names, if some module of the workspace holds it.
    fn package_dir(&self, files: &Files, from: &str, path: &str) -> Option<String> {
        let mut prefix = path;
        loop {
            if let Some(dir) = self.modules.get(prefix) {
                let rest = path[prefix.len()..].trim_start_matches('/');
                return Some(join(dir, rest));
            }
            match prefix.rfind('/') {
                Some(cut) => prefix = &prefix[..cut],
                None => break,
            }
        }
        // `vendor/` of the importer's module (the nearest go.mod above it).
        let module_dir = ancestors(parent(from)).find(|dir| self.module_dirs.contains(*dir))?;
        let vendored = join(&join(module_dir, "vendor"), path);
        files.is_dir(&vendored).then_some(vendored)
    }
}

/// The module path of a `go.mod` text: its `module` directive.
fn module_path(text: &str) -> Option<&str> {
    text.lines().find_map(|line| {
        let line = line.split("//").next().unwrap_or("").trim();
        let rest = line.strip_prefix("module")?;
        if !rest.starts_with([' ', '\t']) {
            return None;
        }
        let path = rest.trim().trim_matches(['"', '`']);
        (!path.is_empty()).then_some(path)
    })
}

#[cfg(test)]
mod tests {
    use super::module_path;
    use crate::resolve::tests::{check, import, layout};
    use loupe_syntax::{ImportKind, Lang};

    const FILES: &[&str] = &[
        "cmd/server/main.go",
        "internal/store/store.go",
        "internal/store/cache.go",
        "internal/store/store_test.go",
        "internal/store/README.md",
        "internal/store/sub/x.go",
        "tools/gen/gen.go",
        "vendor/github.com/pkg/errors/errors.go",
    ];
    const CONFIGS: &[(&str, &str)] = &[
        ("go.mod", "// the main module\nmodule github.com/acme/app\n\ngo 1.22\n"),
        ("tools/go.mod", "module \"github.com/acme/app/tools\"\n"),
    ];

    fn go(module: &str) -> loupe_syntax::Import {
        import(ImportKind::Import, module, &[])
    }

    #[test]
    fn module_paths_name_package_directories() {
        let layout = layout(FILES, CONFIGS);
        check(
            &layout,
            "cmd/server/main.go",
            Lang::Go,
            &go("github.com/acme/app/internal/store"),
            &["internal/store/cache.go", "internal/store/store.go"],
        );
        check(
            &layout,
            "cmd/server/main.go",
            Lang::Go,
            &go("github.com/acme/app/internal/store/sub"),
            &["internal/store/sub/x.go"],
        );
    }

    #[test]
    fn nested_modules_take_the_longest_module_path() {
        let layout = layout(FILES, CONFIGS);
        check(&layout, "cmd/server/main.go", Lang::Go, &go("github.com/acme/app/tools/gen"), &["tools/gen/gen.go"]);
    }

    #[test]
    fn standard_library_missing_packages_and_vendor() {
        let layout = layout(FILES, CONFIGS);
        check(&layout, "cmd/server/main.go", Lang::Go, &go("fmt"), &["ext:fmt"]);
        check(
            &layout,
            "cmd/server/main.go",
            Lang::Go,
            &go("github.com/acme/app/nothing"),
            &["ext:github.com/acme/app/nothing"],
        );
        check(
            &layout,
            "cmd/server/main.go",
            Lang::Go,
            &go("github.com/pkg/errors"),
            &["vendor/github.com/pkg/errors/errors.go"],
        );
        check(&layout, "cmd/server/main.go", Lang::Go, &go("github.com/other/lib"), &["ext:github.com/other/lib"]);
    }

    #[test]
    fn a_copied_go_mod_does_not_shadow_the_real_module() {
        let configs = &[("go.mod", "module example.com/m\n"), ("a/testdata/go.mod", "module example.com/m\n")];
        let layout = layout(&["pkg/p.go", "a/testdata/pkg/p.go"], configs);
        check(&layout, "main.go", Lang::Go, &go("example.com/m/pkg"), &["pkg/p.go"]);
    }

    #[test]
    fn go_mod_module_line() {
        assert_eq!(module_path("module example.com/x // comment\n"), Some("example.com/x"));
        assert_eq!(module_path("go 1.21\nmodule\texample.com/y\n"), Some("example.com/y"));
        assert_eq!(module_path("modulex y\n"), None);
    }
}
