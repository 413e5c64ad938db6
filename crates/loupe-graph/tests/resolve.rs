//! Import resolution from the user's side: small workspaces as (path, text) pairs, every
//! import found by `loupe_syntax::parse` resolved through `Layout`.
//!
//! Owns the contract between the two crates: the import shapes `loupe-syntax` produces are
//! the ones `Layout::resolve` understands. Must not test rules in isolation (the unit tests
//! next to each rule do that).

use loupe_core::RepoPath;
use loupe_graph::{Layout, Resolved};
use loupe_syntax::{Lang, parse};

/// A workspace of (path, text) pairs.
struct Workspace {
    files: Vec<(&'static str, &'static str)>,
    layout: Layout,
}

impl Workspace {
    fn new(files: &[(&'static str, &'static str)]) -> Workspace {
        let paths: Vec<RepoPath> = files.iter().map(|(path, _)| RepoPath::normalize(path).unwrap()).collect();
        let read =
            |path: &RepoPath| files.iter().find(|(name, _)| *name == path.as_str()).map(|(_, text)| (*text).to_owned());
        let layout = Layout::new(&paths, &read);
        Workspace { files: files.to_vec(), layout }
    }

    /// Every import of `path`, one line each: `line: module -> targets`.
    fn imports(&self, path: &str) -> Vec<String> {
        let text = self.files.iter().find(|(name, _)| *name == path).map(|(_, text)| *text).unwrap();
        let lang = Lang::from_path(path).unwrap();
        let from = RepoPath::normalize(path).unwrap();
        parse(lang, text)
            .imports
            .iter()
            .map(|import| {
                let targets: Vec<String> = self
                    .layout
                    .resolve(&from, lang, import)
                    .into_iter()
                    .map(|resolved| match resolved {
                        Resolved::File(path) => path.as_str().to_owned(),
                        Resolved::External(name) => format!("ext:{name}"),
                    })
                    .collect();
                format!("{}: {} -> {}", import.line, import.module, targets.join(", "))
            })
            .collect()
    }
}

#[test]
fn rust_use_trees_mods_and_tests_modules() {
    let workspace = Workspace::new(&[
        ("Cargo.toml", "[package]\nname = \"demo-app\"\n"),
        (
            "src/lib.rs",
            "pub mod config;\nmod net;\npub use crate::config::{Config, load};\nuse std::fmt;\nextern crate serde;\n",
        ),
        (
            "src/config.rs",
            "use crate::{net, net::tcp::Socket};\nuse super::*;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        ),
        ("src/net/mod.rs", "pub mod tcp;\nmod inline {\n    mod deep;\n}\n"),
        ("src/net/tcp.rs", "use super::super::config::Config;\nuse self::Kind::*;\nenum Kind { A }\n"),
        ("src/net/inline/deep.rs", ""),
        ("src/main.rs", "use demo_app::config::Config;\nfn main() {}\n"),
    ]);
    assert_eq!(
        workspace.imports("src/lib.rs"),
        [
            "1: config -> src/config.rs",
            "2: net -> src/net/mod.rs",
            "3: crate::config -> src/config.rs",
            "4: std -> ext:std",
            "5: serde -> ext:serde",
        ]
    );
    assert_eq!(
        workspace.imports("src/config.rs"),
        [
            "1: crate -> src/net/mod.rs",
            "1: crate::net::tcp -> src/net/tcp.rs",
            "2: super -> src/lib.rs",
            "5: super -> src/config.rs",
        ]
    );
    assert_eq!(
        workspace.imports("src/net/mod.rs"),
        ["1: tcp -> src/net/tcp.rs", "3: inline::deep -> src/net/inline/deep.rs"]
    );
    assert_eq!(
        workspace.imports("src/net/tcp.rs"),
        ["1: super::super::config -> src/config.rs", "2: self::Kind -> src/net/tcp.rs",]
    );
    assert_eq!(workspace.imports("src/main.rs"), ["1: demo_app::config -> src/config.rs"]);
}

#[test]
fn python_absolute_relative_and_from_imports() {
    let workspace = Workspace::new(&[
        ("pyproject.toml", "[project]\nname = \"shop\"\n"),
        ("src/shop/__init__.py", ""),
        ("src/shop/models.py", ""),
        ("src/shop/views/__init__.py", ""),
        (
            "src/shop/views/cart.py",
            "from . import helpers\nfrom .. import models\nfrom ..models import Item\nimport shop.views.helpers as h\nimport os.path\nfrom shop import models, views\n",
        ),
        ("src/shop/views/helpers.py", ""),
    ]);
    assert_eq!(
        workspace.imports("src/shop/views/cart.py"),
        [
            "1:  -> src/shop/views/helpers.py",
            "2:  -> src/shop/models.py",
            "3: models -> src/shop/models.py",
            "4: shop.views.helpers -> src/shop/views/helpers.py",
            "5: os.path -> ext:os.path",
            "6: shop -> src/shop/models.py, src/shop/views/__init__.py",
        ]
    );
}

#[test]
fn typescript_relative_config_and_package_imports() {
    let workspace = Workspace::new(&[
        ("package.json", "{\"workspaces\": {\"packages\": [\"packages/*\"]}}"),
        (
            "tsconfig.json",
            "{\n  // JSONC\n  \"compilerOptions\": { \"paths\": { \"~/*\": [\"./packages/app/src/*\"] }, },\n}",
        ),
        ("packages/lib/package.json", "{\"name\": \"@demo/lib\", \"main\": \"dist/index.js\"}"),
        ("packages/lib/src/index.ts", "export * from './math.js';\n"),
        ("packages/lib/src/math.ts", ""),
        (
            "packages/app/src/main.tsx",
            "import React from 'react';\nimport { add } from '@demo/lib';\nimport { Button } from './ui';\nimport type { T } from '~/types';\nconst fs = require('node:fs');\nexport { x } from '../../lib/src/math';\n",
        ),
        ("packages/app/src/ui/index.tsx", ""),
        ("packages/app/src/types.d.ts", ""),
    ]);
    assert_eq!(workspace.imports("packages/lib/src/index.ts"), ["1: ./math.js -> packages/lib/src/math.ts"]);
    assert_eq!(
        workspace.imports("packages/app/src/main.tsx"),
        [
            "1: react -> ext:react",
            "2: @demo/lib -> packages/lib/src/index.ts",
            "3: ./ui -> packages/app/src/ui/index.tsx",
            "4: ~/types -> packages/app/src/types.d.ts",
            "5: node:fs -> ext:node:fs",
            "6: ../../lib/src/math -> packages/lib/src/math.ts",
        ]
    );
}

#[test]
fn go_java_and_c_imports() {
    let workspace = Workspace::new(&[
        ("go.mod", "module example.com/shop\n\ngo 1.22\n"),
        ("cmd/api/main.go", "package main\n\nimport (\n\t\"fmt\"\n\tstore \"example.com/shop/internal/store\"\n)\n"),
        ("internal/store/store.go", "package store\n"),
        ("internal/store/store_test.go", "package store\n"),
        (
            "src/main/java/com/shop/App.java",
            "package com.shop;\nimport com.shop.model.Item;\nimport com.shop.model.*;\nimport static com.shop.model.Item.create;\nimport java.util.List;\nclass App {}\n",
        ),
        ("src/main/java/com/shop/model/Item.java", "package com.shop.model;\nclass Item {}\n"),
        ("native/src/codec.c", "#include <stdio.h>\n#include <shop/codec.h>\n#include \"internal.h\"\n"),
        ("native/src/internal.h", ""),
        ("native/include/shop/codec.h", ""),
    ]);
    assert_eq!(
        workspace.imports("cmd/api/main.go"),
        ["4: fmt -> ext:fmt", "5: example.com/shop/internal/store -> internal/store/store.go",]
    );
    assert_eq!(
        workspace.imports("src/main/java/com/shop/App.java"),
        [
            "2: com.shop.model -> src/main/java/com/shop/model/Item.java",
            "3: com.shop.model -> src/main/java/com/shop/model/Item.java",
            "4: com.shop.model.Item -> src/main/java/com/shop/model/Item.java",
            "5: java.util -> ext:java.util.List",
        ]
    );
    assert_eq!(
        workspace.imports("native/src/codec.c"),
        [
            "1: stdio.h -> ext:stdio.h",
            "2: shop/codec.h -> native/include/shop/codec.h",
            "3: internal.h -> native/src/internal.h",
        ]
    );
}
