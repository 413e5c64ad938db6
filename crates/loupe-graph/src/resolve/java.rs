//! Java (and Kotlin, by the same rule): `import a.b.C` names a file `…/a/b/C.java` in any
//! source root, matched on the path suffix and preferring the importer's own source root;
//! `import a.b.*` names every source file of the package directory `…/a/b/`. Static imports
//! and nested classes (`a.b.C.m`, `a.b.C.Inner`) fall back to the outer class's file.
//!
//! Must not read sources: the package a file declares is taken to match its directory.

use loupe_syntax::Import;

use super::Found;
use super::files::{FileId, Files, file_name, nearness, parent};

/// The source extensions of Java, in preference order.
pub(crate) const JAVA: &[&str] = &["java"];
/// The source extensions of Kotlin, in preference order (Kotlin imports Java classes too).
pub(crate) const KOTLIN: &[&str] = &["kt", "java"];

pub(crate) fn resolve(files: &Files, from: &str, import: &Import, extensions: &[&str], found: &mut Found) {
    let from_dir = parent(from);
    if import.names.is_empty() {
        resolve_name(files, from_dir, &import.module, extensions, found);
        return;
    }
    for name in &import.names {
        if name == "*" {
            if !package_files(files, from_dir, &import.module, extensions, found) {
                // `import static a.b.C.*`: the members of class C.
                resolve_name(files, from_dir, &import.module, extensions, found);
            }
            continue;
        }
        let qualified = if import.module.is_empty() { name.clone() } else { format!("{}.{name}", import.module) };
        resolve_name(files, from_dir, &qualified, extensions, found);
    }
}

fn resolve_name(files: &Files, from_dir: &str, qualified: &str, extensions: &[&str], found: &mut Found) {
    match class_file(files, from_dir, qualified, extensions) {
        Some(id) => found.file(id),
        None => found.external(qualified),
    }
}

/// The file of the class `a.b.C` (or of an outer class for `a.b.C.Inner` and `a.b.C.member`),
/// nearest the importer. At least two segments must match, so a bare `C.java` elsewhere is
/// never taken for `x.C`.
fn class_file(files: &Files, from_dir: &str, qualified: &str, extensions: &[&str]) -> Option<FileId> {
    let mut dotted = qualified;
    while dotted.contains('.') {
        for extension in extensions {
            let suffix = format!("{}.{extension}", dotted.replace('.', "/"));
            let best = files.with_suffix(&suffix).min_by_key(|&id| {
                let path = files.path(id).as_str();
                let source_root = parent_of_suffix(path, &suffix);
                (nearness(from_dir, source_root), path)
            });
            if best.is_some() {
                return best;
            }
        }
        dotted = &dotted[..dotted.rfind('.')?];
    }
    None
}

/// Adds every source file of the package directory `a/b` nearest the importer; false when the
/// workspace has no such directory with sources in it.
fn package_files(files: &Files, from_dir: &str, package: &str, extensions: &[&str], found: &mut Found) -> bool {
    let suffix = package.replace('.', "/");
    let is_source = |id: FileId| {
        let name = file_name(files.path(id).as_str());
        extensions.iter().any(|extension| name.rsplit_once('.').is_some_and(|(_, ext)| ext == *extension))
    };
    let best = files
        .dirs_with_suffix(&suffix)
        .filter(|dir| files.in_dir(dir).iter().any(|&id| is_source(id)))
        .min_by_key(|dir| (nearness(from_dir, parent_of_suffix(dir, &suffix)), *dir));
    let Some(dir) = best else { return false };
    for &id in files.in_dir(dir) {
        if is_source(id) {
            found.file(id);
        }
    }
    true
}

/// `path` without its `/suffix` (the source root).
fn parent_of_suffix<'a>(path: &'a str, suffix: &str) -> &'a str {
    path[..path.len() - suffix.len()].trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use crate::resolve::tests::{check, import, layout};
    use loupe_syntax::{ImportKind, Lang};

    const FILES: &[&str] = &[
        "core/src/main/java/com/acme/model/User.java",
        "core/src/main/java/com/acme/model/Order.java",
        "core/src/main/java/com/acme/model/package-info.txt",
        "core/src/main/java/com/acme/util/Strings.java",
        "core/src/test/java/com/acme/util/StringsTest.java",
        "app/src/main/java/com/acme/util/Strings.java",
        "app/src/main/java/com/acme/App.java",
        "app/src/main/kotlin/com/acme/Tool.kt",
        "other/C.java",
    ];

    fn java(module: &str, name: &str) -> loupe_syntax::Import {
        import(ImportKind::Import, module, &[name])
    }

    #[test]
    fn classes_match_on_the_path_suffix_preferring_the_importers_source_root() {
        let layout = layout(FILES, &[]);
        let from = "app/src/main/java/com/acme/App.java";
        check(
            &layout,
            from,
            Lang::Java,
            &java("com.acme.model", "User"),
            &["core/src/main/java/com/acme/model/User.java"],
        );
        check(
            &layout,
            from,
            Lang::Java,
            &java("com.acme.util", "Strings"),
            &["app/src/main/java/com/acme/util/Strings.java"],
        );
        let test = "core/src/test/java/com/acme/util/StringsTest.java";
        check(
            &layout,
            test,
            Lang::Java,
            &java("com.acme.util", "Strings"),
            &["core/src/main/java/com/acme/util/Strings.java"],
        );
    }

    #[test]
    fn wildcards_take_the_package_directory() {
        let layout = layout(FILES, &[]);
        let from = "app/src/main/java/com/acme/App.java";
        check(
            &layout,
            from,
            Lang::Java,
            &java("com.acme.model", "*"),
            &["core/src/main/java/com/acme/model/Order.java", "core/src/main/java/com/acme/model/User.java"],
        );
        // `import static com.acme.model.User.*`: the class file.
        check(
            &layout,
            from,
            Lang::Java,
            &java("com.acme.model.User", "*"),
            &["core/src/main/java/com/acme/model/User.java"],
        );
        check(&layout, from, Lang::Java, &java("java.util", "*"), &["ext:java.util"]);
    }

    #[test]
    fn static_members_and_nested_classes_fall_back_to_the_outer_class() {
        let layout = layout(FILES, &[]);
        let from = "app/src/main/java/com/acme/App.java";
        check(
            &layout,
            from,
            Lang::Java,
            &java("com.acme.model.User", "Role"),
            &["core/src/main/java/com/acme/model/User.java"],
        );
        check(
            &layout,
            from,
            Lang::Java,
            &java("com.acme.model.User.Role", "ADMIN"),
            &["core/src/main/java/com/acme/model/User.java"],
        );
        check(
            &layout,
            from,
            Lang::Java,
            &java("org.junit.Assert", "assertEquals"),
            &["ext:org.junit.Assert.assertEquals"],
        );
        check(&layout, from, Lang::Java, &java("java.util", "List"), &["ext:java.util.List"]);
        // A bare `C.java` elsewhere is not `x.C`.
        check(&layout, from, Lang::Java, &java("x", "C"), &["ext:x.C"]);
    }

    #[test]
    fn kotlin_finds_kotlin_and_java_files() {
        let layout = layout(FILES, &[]);
        let from = "app/src/main/kotlin/com/acme/Main.kt";
        check(&layout, from, Lang::Kotlin, &java("com.acme", "Tool"), &["app/src/main/kotlin/com/acme/Tool.kt"]);
        check(
            &layout,
            from,
            Lang::Kotlin,
            &java("com.acme.model", "User"),
            &["core/src/main/java/com/acme/model/User.java"],
        );
        check(&layout, from, Lang::Java, &java("com.acme", "Tool"), &["ext:com.acme.Tool"]);
    }
}
