//! Python: absolute imports searched under the source roots (the workspace root, `src/`,
//! `lib/`, each directory holding `pyproject.toml`/`setup.py`/`setup.cfg` and its `src/`),
//! the root nearest the importer first; then, as a last resort, the importer's ancestor
//! directories that are not packages (a script's directory is on `sys.path`: Django's
//! `tests/runtests.py` makes its test apps top-level). Relative imports start from the
//! importer's package. A module is `m.py`, `m.pyi`, `m/__init__.py` or `m/__init__.pyi`.
//!
//! An import that names no workspace file is `External` of its module as written (`os.path`;
//! relative ones keep their dots: `..missing`). Must not consult `sys.path` tricks or
//! namespace-package metadata beyond the directory structure.

use loupe_syntax::{Import, ImportKind};
use rustc_hash::FxHashMap;

use super::Found;
use super::files::{FileId, Files, ancestors, join, nearness, parent};

/// The files a module path may be, in preference order (after the module path itself).
const MODULE_FILES: [&str; 4] = [".py", ".pyi", "/__init__.py", "/__init__.pyi"];
/// The files that make a directory a source root.
const ROOT_MARKERS: [&str; 3] = ["pyproject.toml", "setup.py", "setup.cfg"];

/// The source roots and, per top-level module name, the roots that hold it.
pub(crate) struct PythonLayout {
    roots: Vec<Box<str>>,
    top_level: FxHashMap<Box<str>, Vec<usize>>,
}

impl PythonLayout {
    pub(crate) fn new(files: &Files) -> PythonLayout {
        let mut roots: Vec<Box<str>> = vec!["".into()];
        let add = |dir: &str, roots: &mut Vec<Box<str>>| {
            if files.is_dir(dir) && !roots.iter().any(|root| &**root == dir) {
                roots.push(dir.into());
            }
        };
        add("src", &mut roots);
        add("lib", &mut roots);
        for marker in ROOT_MARKERS {
            for &id in files.named(marker) {
                let dir = parent(files.path(id).as_str());
                add(dir, &mut roots);
                add(&join(dir, "src"), &mut roots);
            }
        }
        let root_index: FxHashMap<&str, usize> =
            roots.iter().enumerate().map(|(index, root)| (&**root, index)).collect();
        let mut top_level: FxHashMap<Box<str>, Vec<usize>> = FxHashMap::default();
        for (_, path) in files.all() {
            if !(path.ends_with(".py") || path.ends_with(".pyi")) {
                continue;
            }
            for dir in ancestors(parent(path)) {
                let Some(&root) = root_index.get(dir) else { continue };
                let below = if dir.is_empty() { path } else { &path[dir.len() + 1..] };
                let name = match below.split_once('/') {
                    Some((package, _)) => package,
                    None => below.trim_end_matches(".pyi").trim_end_matches(".py"),
                };
                let holders = top_level.entry(name.into()).or_default();
                if !holders.contains(&root) {
                    holders.push(root);
                }
            }
        }
        PythonLayout { roots, top_level }
    }

    pub(crate) fn root_count(&self) -> usize {
        self.roots.len()
    }

    pub(crate) fn resolve(&self, files: &Files, from: &str, import: &Import, found: &mut Found) {
        let module_path = import.module.replace('.', "/");
        let names: &[String] = if import.kind == ImportKind::From { &import.names } else { &[] };
        let from_dir = parent(from);
        if import.relative_level > 0 {
            let package = ancestors(from_dir).nth(import.relative_level - 1);
            if let Some(package) = package
                && add_module(files, &join(package, &module_path), names, found)
            {
                return;
            }
            let dots = ".".repeat(import.relative_level);
            if import.module.is_empty() {
                names.iter().for_each(|name| found.external(format!("{dots}{name}")));
            } else {
                found.external(format!("{dots}{}", import.module));
            }
            return;
        }
        let first = import.module.split('.').next().unwrap_or("");
        if let Some(holders) = self.top_level.get(first) {
            let mut holders: Vec<&str> = holders.iter().map(|&index| &*self.roots[index]).collect();
            holders.sort_unstable_by_key(|root| (nearness(from_dir, root), *root));
            for root in holders {
                if add_module(files, &join(root, &module_path), names, found) {
                    return;
                }
            }
            // The first segment exists under a root but the rest does not (generated code,
            // a C extension): the longest module prefix that exists.
            if let Some(id) = longest_prefix(files, &self.roots, &self.top_level[first], &module_path) {
                found.file(id);
                return;
            }
        }
        for dir in ancestors(from_dir) {
            let is_package = module_file(files, dir).is_some();
            if is_package || self.roots.iter().any(|root| &**root == dir) {
                continue;
            }
            if add_module(files, &join(dir, &module_path), names, found) {
                return;
            }
        }
        found.external(import.module.clone());
    }
}

/// Adds the module at `module` (a path without extension) or, for `from module import names`,
/// each name that is a submodule and the module itself for the others. False when nothing
/// was found.
fn add_module(files: &Files, module: &str, names: &[String], found: &mut Found) -> bool {
    let module_id = module_file(files, module);
    if names.is_empty() {
        module_id.inspect(|&id| found.file(id));
        return module_id.is_some();
    }
    let mut any = false;
    for name in names {
        let submodule = if name == "*" { None } else { module_file(files, &join(module, name)) };
        if let Some(id) = submodule.or(module_id) {
            found.file(id);
            any = true;
        }
    }
    any
}

/// The file of the module at `path` (without extension).
fn module_file(files: &Files, path: &str) -> Option<FileId> {
    if path.is_empty() {
        return MODULE_FILES[2..].iter().find_map(|name| files.id(&name[1..]));
    }
    let mut candidate = String::with_capacity(path.len() + 13);
    MODULE_FILES.iter().find_map(|suffix| {
        candidate.clear();
        candidate.push_str(path);
        candidate.push_str(suffix);
        files.id(&candidate)
    })
}

/// The deepest existing module on `module_path` (at least its first segment) under the first
/// root of `holders` that has one.
fn longest_prefix(files: &Files, roots: &[Box<str>], holders: &[usize], module_path: &str) -> Option<FileId> {
    let mut prefix = module_path;
    while let Some(cut) = prefix.rfind('/') {
        prefix = &prefix[..cut];
        let found = holders.iter().find_map(|&root| module_file(files, &join(&roots[root], prefix)));
        if found.is_some() {
            return found;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::resolve::tests::{check, import, layout};
    use loupe_syntax::{Import, ImportKind, Lang};

    fn absolute(module: &str) -> Import {
        import(ImportKind::Import, module, &[])
    }

    fn from(module: &str, names: &[&str]) -> Import {
        import(ImportKind::From, module, names)
    }

    fn relative(level: usize, module: &str, names: &[&str]) -> Import {
        Import { relative_level: level, ..from(module, names) }
    }

    const DJANGO: &[&str] = &[
        "django/__init__.py",
        "django/db/__init__.py",
        "django/db/models/__init__.py",
        "django/db/models/fields.py",
        "django/db/models/query.py",
        "django/utils/__init__.py",
        "django/utils/functional.py",
        "django/utils/typing.pyi",
        "tests/runtests.py",
        "tests/admin_views/__init__.py",
        "tests/admin_views/models.py",
        "tests/admin_views/tests.py",
        "scripts/build.py",
        "scripts/helpers.py",
    ];

    #[test]
    fn absolute_imports_find_modules_and_packages() {
        let layout = layout(DJANGO, &[]);
        let from_file = "django/db/models/query.py";
        check(&layout, from_file, Lang::Python, &absolute("django.db.models.fields"), &["django/db/models/fields.py"]);
        check(&layout, from_file, Lang::Python, &absolute("django.db"), &["django/db/__init__.py"]);
        check(&layout, from_file, Lang::Python, &absolute("django.utils.typing"), &["django/utils/typing.pyi"]);
        check(&layout, from_file, Lang::Python, &absolute("os.path"), &["ext:os.path"]);
    }

    #[test]
    fn from_imports_prefer_submodules_then_the_module() {
        let layout = layout(DJANGO, &[]);
        let from_file = "django/db/models/query.py";
        check(
            &layout,
            from_file,
            Lang::Python,
            &from("django.db.models", &["fields"]),
            &["django/db/models/fields.py"],
        );
        check(
            &layout,
            from_file,
            Lang::Python,
            &from("django.utils.functional", &["cached_property"]),
            &["django/utils/functional.py"],
        );
        check(&layout, from_file, Lang::Python, &from("django.db.models", &["*"]), &["django/db/models/__init__.py"]);
        check(&layout, from_file, Lang::Python, &from("collections", &["OrderedDict"]), &["ext:collections"]);
    }

    #[test]
    fn missing_tails_fall_back_to_the_longest_existing_module() {
        let layout = layout(DJANGO, &[]);
        check(&layout, "x.py", Lang::Python, &absolute("django.db.backends.generated"), &["django/db/__init__.py"]);
    }

    #[test]
    fn relative_imports_start_at_the_package() {
        let layout = layout(DJANGO, &[]);
        let from_file = "django/db/models/query.py";
        check(&layout, from_file, Lang::Python, &relative(1, "", &["fields"]), &["django/db/models/fields.py"]);
        check(&layout, from_file, Lang::Python, &relative(1, "fields", &["Field"]), &["django/db/models/fields.py"]);
        check(&layout, from_file, Lang::Python, &relative(2, "", &["models"]), &["django/db/models/__init__.py"]);
        check(
            &layout,
            from_file,
            Lang::Python,
            &relative(3, "utils.functional", &["x"]),
            &["django/utils/functional.py"],
        );
        check(&layout, from_file, Lang::Python, &relative(1, "", &["Q"]), &["django/db/models/__init__.py"]);
        check(
            &layout,
            "django/db/models/__init__.py",
            Lang::Python,
            &relative(1, "query", &["QuerySet"]),
            &["django/db/models/query.py"],
        );
        check(&layout, from_file, Lang::Python, &relative(2, "missing", &["x"]), &["ext:..missing"]);
        check(&layout, "top.py", Lang::Python, &relative(3, "", &["x"]), &["ext:...x"]);
    }

    #[test]
    fn script_directories_are_roots_of_last_resort() {
        let layout = layout(DJANGO, &[]);
        check(
            &layout,
            "tests/admin_views/tests.py",
            Lang::Python,
            &from("admin_views.models", &["Article"]),
            &["tests/admin_views/models.py"],
        );
        check(&layout, "scripts/build.py", Lang::Python, &absolute("helpers"), &["scripts/helpers.py"]);
        // A package's directory is not a root: `import functional` inside django/utils is not
        // an implicit relative import.
        check(&layout, "django/utils/__init__.py", Lang::Python, &absolute("functional"), &["ext:functional"]);
    }

    #[test]
    fn src_layouts_and_nearest_roots() {
        let files = &[
            "pyproject.toml",
            "src/acme/__init__.py",
            "src/acme/core.py",
            "plugins/p1/pyproject.toml",
            "plugins/p1/src/acme/__init__.py",
            "plugins/p1/src/acme/core.py",
            "plugins/p1/src/p1/main.py",
            "lib/vendored.py",
        ];
        let layout = layout(files, &[]);
        check(&layout, "src/acme/core.py", Lang::Python, &absolute("acme.core"), &["src/acme/core.py"]);
        check(
            &layout,
            "plugins/p1/src/p1/main.py",
            Lang::Python,
            &absolute("acme.core"),
            &["plugins/p1/src/acme/core.py"],
        );
        check(&layout, "src/acme/core.py", Lang::Python, &absolute("vendored"), &["lib/vendored.py"]);
    }
}
