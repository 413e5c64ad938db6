//! C and C++ `#include`: the includer's directory (quoted includes only), then the
//! workspace's `include` directories (and the `uapi` directory inside each, as Linux's build
//! adds them) nearest the includer first, then the workspace root, then a unique path-suffix
//! match (quoted includes only). At most one file per include; ties between equally near
//! include directories go to the first in path order.
//!
//! Must not guess a file for `<...>` beyond the include directories: `<stdio.h>` stays
//! external even when some vendored copy exists deep in the tree.

use loupe_syntax::{Import, ImportKind};
use rustc_hash::FxHashMap;

use super::Found;
use super::files::{FileId, Files, join_normalized, nearness, parent};

/// The files under every directory named `include` (or `include/uapi`), keyed by their path
/// below it.
pub(crate) struct CLayout {
    under_include: FxHashMap<Box<str>, Vec<IncludeCandidate>>,
}

/// A file some include directory offers for a path.
#[derive(Clone, Copy)]
struct IncludeCandidate {
    id: FileId,
    /// Offered by `…/include/uapi`, which ranks after its `…/include`.
    uapi: bool,
}

impl CLayout {
    pub(crate) fn new(files: &Files) -> CLayout {
        let mut under_include: FxHashMap<Box<str>, Vec<IncludeCandidate>> = FxHashMap::default();
        for (id, path) in files.all() {
            let mut start = 0;
            while let Some(offset) = path[start..].find("include/") {
                let at = start + offset;
                let is_component = at == 0 || path.as_bytes()[at - 1] == b'/';
                let rest = &path[at + "include/".len()..];
                if is_component && !rest.is_empty() {
                    under_include.entry(rest.into()).or_default().push(IncludeCandidate { id, uapi: false });
                    if let Some(below_uapi) = rest.strip_prefix("uapi/") {
                        let candidate = IncludeCandidate { id, uapi: true };
                        under_include.entry(below_uapi.into()).or_default().push(candidate);
                    }
                }
                start = at + "include/".len();
            }
        }
        CLayout { under_include }
    }

    pub(crate) fn resolve(&self, files: &Files, from: &str, import: &Import, found: &mut Found) {
        if import.kind != ImportKind::Include {
            // C++ `using namespace std;` names a namespace, not a file.
            found.external(import.module.clone());
            return;
        }
        match self.include(files, from, &import.module, import.is_system) {
            Some(id) => found.file(id),
            None => found.external(import.module.clone()),
        }
    }

    fn include(&self, files: &Files, from: &str, written: &str, is_system: bool) -> Option<FileId> {
        let from_dir = parent(from);
        if !is_system
            && let Some(path) = join_normalized(from_dir, written)
            && let Some(id) = files.id(&path)
        {
            return Some(id);
        }
        let normalized = join_normalized("", written)?;
        if let Some(candidates) = self.under_include.get(normalized.as_str()) {
            // The include directory is the candidate's path minus `/<written>`; its parent is
            // where it hangs in the tree (`arch/x86` for `arch/x86/include[/uapi]`).
            let best = candidates.iter().min_by_key(|candidate| {
                let path = files.path(candidate.id).as_str();
                let mut include_dir = &path[..path.len() - normalized.len() - 1];
                if candidate.uapi {
                    include_dir = parent(include_dir);
                }
                (nearness(from_dir, parent(include_dir)), candidate.uapi, path)
            });
            if let Some(best) = best {
                return Some(best.id);
            }
        }
        if is_system {
            return None;
        }
        if let Some(id) = files.id(&normalized) {
            return Some(id);
        }
        let mut matches = files.with_suffix(&normalized);
        let first = matches.next()?;
        matches.next().is_none().then_some(first)
    }
}

#[cfg(test)]
mod tests {
    use crate::resolve::tests::{check, layout};
    use loupe_syntax::{Import, ImportKind, Lang};

    fn include(module: &str, is_system: bool) -> Import {
        Import {
            kind: ImportKind::Include,
            module: module.to_owned(),
            names: Vec::new(),
            alias: None,
            line: 1,
            relative_level: 0,
            is_system,
        }
    }

    const LINUX: &[&str] = &[
        "include/linux/fs.h",
        "include/asm-generic/io.h",
        "arch/x86/include/asm/io.h",
        "arch/arm/include/asm/io.h",
        "arch/x86/kernel/setup.c",
        "arch/x86/kernel/local.h",
        "fs/ext4/inode.c",
        "fs/ext4/ext4.h",
        "fs/internal.h",
        "tools/include/linux/fs.h",
        "tools/perf/builtin.c",
        "drivers/net/foo/foo.c",
        "drivers/net/foo/regs/foo_regs.h",
        "lib/a/dup.h",
        "lib/b/dup.h",
        "include/uapi/linux/ioctl.h",
        "include/uapi/linux/fs.h",
        "arch/x86/include/uapi/asm/byteorder.h",
        "arch/arm/include/uapi/asm/byteorder.h",
        "arch/arm/include/asm/byteorder.h",
    ];

    #[test]
    fn quoted_includes_start_at_the_includer() {
        let layout = layout(LINUX, &[]);
        check(&layout, "fs/ext4/inode.c", Lang::C, &include("ext4.h", false), &["fs/ext4/ext4.h"]);
        check(&layout, "fs/ext4/inode.c", Lang::C, &include("../internal.h", false), &["fs/internal.h"]);
        check(&layout, "arch/x86/kernel/setup.c", Lang::C, &include("local.h", false), &["arch/x86/kernel/local.h"]);
    }

    #[test]
    fn angle_includes_use_the_nearest_include_directory() {
        let layout = layout(LINUX, &[]);
        check(&layout, "fs/ext4/inode.c", Lang::C, &include("linux/fs.h", true), &["include/linux/fs.h"]);
        check(&layout, "arch/x86/kernel/setup.c", Lang::C, &include("asm/io.h", true), &["arch/x86/include/asm/io.h"]);
        check(&layout, "arch/arm/mm/init.c", Lang::C, &include("asm/io.h", true), &["arch/arm/include/asm/io.h"]);
        check(&layout, "tools/perf/builtin.c", Lang::C, &include("linux/fs.h", true), &["tools/include/linux/fs.h"]);
        check(&layout, "fs/ext4/inode.c", Lang::C, &include("stdio.h", true), &["ext:stdio.h"]);
        // An angle include never looks next to the includer.
        check(&layout, "fs/ext4/inode.c", Lang::C, &include("ext4.h", true), &["ext:ext4.h"]);
    }

    #[test]
    fn uapi_directories_rank_after_their_include_directory() {
        let layout = layout(LINUX, &[]);
        check(&layout, "fs/ext4/inode.c", Lang::C, &include("linux/ioctl.h", true), &["include/uapi/linux/ioctl.h"]);
        check(&layout, "fs/ext4/inode.c", Lang::C, &include("linux/fs.h", true), &["include/linux/fs.h"]);
        check(
            &layout,
            "arch/x86/kernel/setup.c",
            Lang::C,
            &include("asm/byteorder.h", true),
            &["arch/x86/include/uapi/asm/byteorder.h"],
        );
        check(
            &layout,
            "arch/arm/kernel/setup.c",
            Lang::C,
            &include("asm/byteorder.h", true),
            &["arch/arm/include/asm/byteorder.h"],
        );
        // Equally near include directories: the first in path order.
        check(&layout, "drivers/net/foo/foo.c", Lang::C, &include("asm/io.h", true), &["arch/arm/include/asm/io.h"]);
    }

    #[test]
    fn quoted_includes_fall_back_to_include_dirs_root_and_unique_suffix() {
        let layout = layout(LINUX, &[]);
        check(&layout, "fs/ext4/inode.c", Lang::C, &include("asm-generic/io.h", false), &["include/asm-generic/io.h"]);
        check(&layout, "drivers/net/foo/foo.c", Lang::C, &include("fs/internal.h", false), &["fs/internal.h"]);
        check(
            &layout,
            "drivers/net/foo/foo.c",
            Lang::C,
            &include("foo_regs.h", false),
            &["drivers/net/foo/regs/foo_regs.h"],
        );
        // Two candidates: no guess.
        check(&layout, "fs/ext4/inode.c", Lang::C, &include("dup.h", false), &["ext:dup.h"]);
        check(&layout, "fs/ext4/inode.c", Lang::C, &include("missing.h", false), &["ext:missing.h"]);
    }

    #[test]
    fn cpp_using_is_external() {
        let layout = layout(LINUX, &[]);
        let using = Import { kind: ImportKind::Use, names: vec!["*".to_owned()], ..include("std", false) };
        check(&layout, "a.cpp", Lang::Cpp, &using, &["ext:std"]);
        check(&layout, "fs/x.cpp", Lang::Cpp, &include("internal.h", false), &["fs/internal.h"]);
    }
}
