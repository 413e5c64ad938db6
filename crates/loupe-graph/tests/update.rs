//! The graphs updated in place after an edit answer exactly what graphs built from scratch on
//! the edited workspace answer: every file's imports and importers, and every walk.

use loupe_core::RepoPath;
use loupe_graph::{ImportGraph, Layout, Resolved, TypeGraph};
use loupe_syntax::{FileFacts, Lang, parse};

fn path(text: &str) -> RepoPath {
    RepoPath::normalize(text).unwrap()
}

fn facts(files: &[(&str, &str)]) -> Vec<(RepoPath, Lang, FileFacts)> {
    files
        .iter()
        .map(|(name, text)| (path(name), Lang::from_path(name).unwrap(), parse(Lang::from_path(name).unwrap(), text)))
        .collect()
}

fn layout(files: &[(&str, &str)]) -> Layout {
    let paths: Vec<RepoPath> = files.iter().map(|(name, _)| path(name)).collect();
    Layout::new(&paths, &|_| None)
}

fn build(layout: &Layout, parsed: &[(RepoPath, Lang, FileFacts)]) -> (ImportGraph, TypeGraph) {
    let imports =
        ImportGraph::build(layout, parsed.iter().map(|(path, lang, facts)| (path, *lang, facts.imports.as_slice())));
    let types = TypeGraph::build(parsed.iter().map(|(path, _, facts)| (path, facts.type_relations.as_slice())));
    (imports, types)
}

/// Everything a query can ask of the graphs, as text.
fn answers(files: &[(&str, &str)], imports: &ImportGraph, types: &TypeGraph) -> Vec<String> {
    let mut out = Vec::new();
    for (name, _) in files {
        let file = Resolved::File(path(name));
        out.push(format!("{name} imports {:?}", imports.imports_of(&path(name))));
        out.push(format!("{name} importers {:?}", imports.importers_of(&file)));
        out.push(format!("{name} up {:?}", imports.walk(&file, true, 3, 100)));
        out.push(format!("{name} down {:?}", imports.walk(&file, false, 3, 100)));
    }
    for name in ["os", "json", "Base", "Mixin", "Child", "Other"] {
        out.push(format!("{name} importers {:?}", imports.importers_of(&Resolved::External(name.into()))));
        out.push(format!("{name} subtypes {:?}", types.subtypes_of(name)));
        out.push(format!("{name} supertypes {:?}", types.supertypes_of(name)));
    }
    out
}

#[test]
fn an_edited_file_updates_the_graphs_to_what_a_build_makes() {
    let before = [
        ("pkg/__init__.py", ""),
        ("pkg/a.py", "import os\nfrom pkg import b\n\nclass Base:\n    pass\n"),
        ("pkg/b.py", "import json\nfrom pkg import c\n\nclass Child(Base):\n    pass\n"),
        ("pkg/c.py", "from pkg import a\n\nclass Mixin:\n    pass\n"),
        ("pkg/d.py", "from pkg import b\nimport os\n"),
    ];
    // b.py now imports a and os (not c or json), and its class has two bases; c.py imports nothing.
    let after_b =
        "from pkg import a\nimport os\n\nclass Child(Base, Mixin):\n    pass\n\nclass Other(Child):\n    pass\n";
    let after_c = "class Mixin:\n    pass\n";
    let mut after = before;
    after[2].1 = after_b;
    after[3].1 = after_c;

    let layout_before = layout(&before);
    let (mut imports, mut types) = build(&layout_before, &facts(&before));
    for (name, text) in [("pkg/b.py", after_b), ("pkg/c.py", after_c)] {
        let lang = Lang::from_path(name).unwrap();
        let edited = parse(lang, text);
        imports.replace_imports(&layout_before, &path(name), lang, &edited.imports);
        types.replace_relations(&path(name), &edited.type_relations);
    }
    let (built_imports, built_types) = build(&layout(&after), &facts(&after));
    let updated = answers(&after, &imports, &types);
    let built = answers(&after, &built_imports, &built_types);
    assert_eq!(updated, built);
    assert!(built.iter().any(|line| line.starts_with("pkg/a.py importers") && line.contains("pkg/b.py")), "{built:?}");
}

#[test]
fn the_layout_knows_the_configs_it_was_built_from() {
    let files = [("Cargo.toml", "[package]\nname = \"demo\"\n"), ("src/lib.rs", "pub mod a;\n"), ("src/a.rs", "")];
    let paths: Vec<RepoPath> = files.iter().map(|(name, _)| path(name)).collect();
    let read =
        |wanted: &RepoPath| files.iter().find(|(name, _)| *name == wanted.as_str()).map(|(_, text)| (*text).to_owned());
    let layout = Layout::new(&paths, &read);
    assert!(layout.depends_on(&path("Cargo.toml")));
    assert!(!layout.depends_on(&path("src/lib.rs")));
}
