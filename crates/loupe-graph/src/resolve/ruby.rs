//! Ruby: `require_relative "x"` is `x.rb` next to the requiring file; `require "a/b"` is
//! `lib/a/b.rb` in the nearest `lib/` directory above the requiring file (the load path a gem
//! or application sets up), else external.
//!
//! Must not evaluate load-path manipulation (`$LOAD_PATH <<`): only literal requires resolve.

use loupe_syntax::{Import, ImportKind};

use super::Found;
use super::files::{Files, ancestors, join, join_normalized, parent};

pub(crate) fn resolve(files: &Files, from: &str, import: &Import, found: &mut Found) {
    let written = import.module.as_str();
    if import.kind != ImportKind::Require || written.is_empty() {
        found.external(written);
        return;
    }
    let with_extension = if written.ends_with(".rb") { written.to_owned() } else { format!("{written}.rb") };
    let from_dir = parent(from);
    if import.relative_level > 0 {
        if let Some(id) = join_normalized(from_dir, &with_extension).and_then(|path| files.id(&path)) {
            found.file(id);
        } else {
            found.external(written);
        }
        return;
    }
    for dir in ancestors(from_dir) {
        let candidate = join_normalized(&join(dir, "lib"), &with_extension);
        if let Some(id) = candidate.and_then(|path| files.id(&path)) {
            found.file(id);
            return;
        }
    }
    found.external(written);
}

#[cfg(test)]
mod tests {
    use crate::resolve::tests::{check, import, layout};
    use loupe_syntax::{ImportKind, Lang};

    #[test]
    fn require_relative_and_lib_requires() {
        let layout = layout(&["app/lib/util.rb", "app/lib/acme/client.rb", "app/bin/run.rb", "app/lib/acme.rb"], &[]);
        let mut relative = import(ImportKind::Require, "../lib/util", &[]);
        relative.relative_level = 1;
        check(&layout, "app/bin/run.rb", Lang::Ruby, &relative, &["app/lib/util.rb"]);
        check(
            &layout,
            "app/lib/acme.rb",
            Lang::Ruby,
            &import(ImportKind::Require, "acme/client", &[]),
            &["app/lib/acme/client.rb"],
        );
        check(&layout, "app/bin/run.rb", Lang::Ruby, &import(ImportKind::Require, "json", &[]), &["ext:json"]);
        let mut missing = import(ImportKind::Require, "nope", &[]);
        missing.relative_level = 1;
        check(&layout, "app/bin/run.rb", Lang::Ruby, &missing, &["ext:nope"]);
    }
}
