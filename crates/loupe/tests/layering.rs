//! The layering of `loupe-engine` and `loupe-index`, read from their production source (test
//! modules left out): which file names which through `crate::`, `super::` and `self::` paths.
//!
//! - No import circle: neither between a crate's top-level modules nor between the files of one
//!   module (a module's own file may name its children and they it).
//! - In `loupe-engine`, `workspace` (what the tools share) names no tool and nothing above the
//!   tools; the tools (`read`, `search`, `analyze`, `edit`) name no layer above them and no other
//!   tool, except `edit` → `read`: an edit's cut diff continues as a `read diff_preview` cursor.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Module = Vec<String>;

const TOOLS: &[&str] = &["read", "search", "analyze", "edit"];
/// What sits above the tools: the engine-level modules.
const ABOVE_TOOLS: &[&str] = &["engine", "dispatch", "session", "manage", "legacy", "latency", "fuzz"];
/// The one tool-to-tool arrow.
const TOOL_EXCEPTIONS: &[(&str, &str)] = &[("edit", "read")];

#[test]
fn loupe_engine_and_loupe_index_have_no_import_circle() {
    for krate in ["loupe-engine", "loupe-index"] {
        let edges = edges(&source_dir(krate));
        assert!(!edges.is_empty(), "{krate}: no imports found; the reader is broken");
        let top = top_level(&edges);
        assert_eq!(circles(&top), Vec::<Vec<String>>::new(), "{krate}: a circle between top-level modules");
        let siblings = siblings(&edges);
        assert_eq!(circles(&siblings), Vec::<Vec<String>>::new(), "{krate}: a circle between the files of a module");
    }
}

#[test]
fn the_workspace_names_no_tool_and_the_tools_name_no_layer_above_them() {
    let top = top_level(&edges(&source_dir("loupe-engine")));
    let named = |from: &str| top.get(from).cloned().unwrap_or_default();
    assert!(top.contains_key("workspace") && TOOLS.iter().all(|tool| top.contains_key(*tool)), "{top:?}");
    let mut wrong = Vec::new();
    for to in named("workspace") {
        if TOOLS.contains(&to.as_str()) || ABOVE_TOOLS.contains(&to.as_str()) {
            wrong.push(format!("workspace → {to}"));
        }
    }
    for tool in TOOLS {
        for to in named(tool) {
            let other_tool = TOOLS.contains(&to.as_str()) && !TOOL_EXCEPTIONS.contains(&(tool, to.as_str()));
            if other_tool || ABOVE_TOOLS.contains(&to.as_str()) {
                wrong.push(format!("{tool} → {to}"));
            }
        }
    }
    assert_eq!(wrong, Vec::<String>::new(), "arrows the layering forbids");
}

#[test]
fn the_reader_sees_grouped_nested_and_relative_paths() {
    let source = strip(
        "use crate::{a::{b, c::D}, e as f};\n\
         // crate::commented\n\
         let s = \"crate::in_a_string\"; let c = '\"'; let r = r#\"super::raw\"#;\n\
         fn g<'a>(x: &'a str) { super::h::i(); self::j::k(); }\n\
         #[cfg(test)]\nmod tests { use crate::only_in_tests; }\n",
    );
    let mut found = paths(&source);
    found.sort();
    let expected: Vec<Vec<&str>> = vec![
        vec!["crate", "a", "b"],
        vec!["crate", "a", "c", "D"],
        vec!["crate", "e"],
        vec!["self", "j", "k"],
        vec!["super", "h", "i"],
    ];
    assert_eq!(found, expected);
}

fn source_dir(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(krate).join("src")
}

/// Every production file's module and the file modules it names.
fn edges(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = BTreeMap::new();
    collect(src, src, &mut files);
    let test_only: BTreeSet<Module> = files
        .iter()
        .flat_map(|(module, text)| {
            test_only_children(text).into_iter().map(move |child| {
                let mut path = module.clone();
                path.push(child);
                path
            })
        })
        .collect();
    files.retain(|module, _| !test_only.iter().any(|test| module.starts_with(test)));
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, text) in &files {
        let named = edges.entry(module.clone()).or_default();
        for path in paths(&strip(text)) {
            let (mut base, rest): (Module, &[&str]) = match path[0] {
                "crate" => (Vec::new(), &path[1..]),
                "self" => (module.clone(), &path[1..]),
                _ => {
                    let supers = path.iter().take_while(|segment| **segment == "super").count();
                    (module[..module.len().saturating_sub(supers)].to_vec(), &path[supers..])
                }
            };
            for segment in rest {
                let mut next = base.clone();
                next.push((*segment).to_owned());
                if !files.contains_key(&next) {
                    break;
                }
                base = next;
            }
            if !base.is_empty() && base != *module {
                named.insert(base);
            }
        }
    }
    edges
}

fn collect(src: &Path, dir: &Path, files: &mut BTreeMap<Module, String>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir).unwrap().map(|entry| entry.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(src, &path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Module = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
            if matches!(module.last().map(String::as_str), Some("lib" | "main" | "mod")) {
                module.pop();
            }
            files.insert(module, fs::read_to_string(&path).unwrap());
        }
    }
}

/// The modules a file declares under `#[cfg(test)]` (`#[cfg(test)] mod fuzz;`).
fn test_only_children(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|pair| pair[0] == "#[cfg(test)]")
        .filter_map(|pair| pair[1].strip_prefix("mod ").and_then(|rest| rest.strip_suffix(';')))
        .map(str::to_owned)
        .collect()
}

/// The code without comments, string and character literals, and `#[cfg(test)]` blocks.
fn strip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let identifier = |c: char| c.is_alphanumeric() || c == '_';
    while at < chars.len() {
        let rest = &chars[at..];
        if rest.starts_with(&['/', '/']) {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            let mut depth = 0;
            while at < chars.len() {
                if chars[at..].starts_with(&['/', '*']) {
                    depth += 1;
                    at += 2;
                } else if chars[at..].starts_with(&['*', '/']) {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    at += 1;
                }
            }
        } else if (rest[0] == 'r' || rest.starts_with(&['b', 'r']))
            && (at == 0 || !identifier(chars[at - 1]))
            && let Some(hashes) = raw_string_hashes(&rest[if rest[0] == 'b' { 2 } else { 1 }..])
        {
            let opening = if rest[0] == 'b' { 2 } else { 1 } + hashes + 1;
            at += opening;
            let closing: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            while at < chars.len() && !chars[at..].starts_with(&closing) {
                at += 1;
            }
            at += closing.len();
            out.push_str("\"\"");
        } else if rest[0] == '"' {
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
            out.push_str("\"\"");
        } else if rest[0] == '\'' && rest.get(1) == Some(&'\\') {
            at += 2;
            while at < chars.len() && chars[at] != '\'' {
                at += 1;
            }
            at += 1;
        } else if rest[0] == '\'' && rest.get(2) == Some(&'\'') {
            at += 3;
        } else if rest.starts_with(&"#[cfg(test)]".chars().collect::<Vec<_>>()) {
            // The item that follows, to its closing brace or semicolon.
            at += "#[cfg(test)]".len();
            let mut depth = 0;
            while at < chars.len() {
                match chars[at] {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            at += 1;
                            break;
                        }
                    }
                    ';' if depth == 0 => {
                        at += 1;
                        break;
                    }
                    _ => {}
                }
                at += 1;
            }
        } else {
            out.push(rest[0]);
            at += 1;
        }
    }
    out
}

/// `#…#"` after an `r`: the number of hashes, when a raw string starts there.
fn raw_string_hashes(rest: &[char]) -> Option<usize> {
    let hashes = rest.iter().take_while(|c| **c == '#').count();
    (rest.get(hashes) == Some(&'"')).then_some(hashes)
}

/// Every path starting `crate::`, `super::` or `self::`, braces of a `use` expanded.
fn paths(code: &str) -> Vec<Vec<&str>> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    for head in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(head) {
            let boundary =
                at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] == b':');
            if boundary {
                expand(&code[at..], Vec::new(), &mut found);
            }
        }
    }
    found
}

/// The path at the start of `text` (segments joined by `::`, maybe ending in a `{…}` group),
/// each full path pushed to `found`.
fn expand<'a>(text: &'a str, mut prefix: Vec<&'a str>, found: &mut Vec<Vec<&'a str>>) {
    let mut rest = text;
    loop {
        let trimmed = rest.trim_start();
        if let Some(group) = trimmed.strip_prefix('{') {
            for item in split_group(group) {
                let item = item.trim();
                let item = item.split(" as ").next().unwrap_or(item).trim();
                if item == "self" {
                    found.push(prefix.clone());
                } else if !item.is_empty() && item != "*" {
                    expand(item, prefix.clone(), found);
                }
            }
            return;
        }
        let end = trimmed.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(trimmed.len());
        if end == 0 {
            break;
        }
        prefix.push(&trimmed[..end]);
        match trimmed[end..].strip_prefix("::") {
            Some(after) => rest = after,
            None => break,
        }
    }
    if !prefix.is_empty() {
        found.push(prefix);
    }
}

/// The top-level comma-separated items of a group, up to its closing brace.
fn split_group(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..at]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    items
}

/// The arrows between top-level modules.
fn top_level(edges: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, named) in edges {
        let Some(first) = from.first() else { continue };
        let entry = top.entry(first.clone()).or_default();
        entry.extend(named.iter().filter_map(|to| to.first()).filter(|to| *to != first).cloned());
    }
    top
}

/// The arrows between files of one module (children of one parent).
fn siblings(edges: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, named) in edges.iter().filter(|(from, _)| from.len() > 1) {
        let entry = graph.entry(from.join("/")).or_default();
        let parent = &from[..from.len() - 1];
        for to in named {
            if to.len() == from.len() && to.starts_with(parent) {
                entry.insert(to.join("/"));
            }
        }
    }
    graph
}

/// The strongly connected components of more than one node (Tarjan), sorted.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(state: &mut State<'g>, node: &'g str) {
        let number = state.index.len();
        state.index.insert(node, number);
        state.low.insert(node, number);
        state.stack.push(node);
        state.on_stack.insert(node);
        for next in state.graph.get(node).into_iter().flatten() {
            let next = next.as_str();
            if !state.index.contains_key(next) {
                visit(state, next);
                let low = state.low[node].min(state.low[next]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(next) {
                let low = state.low[node].min(state.index[next]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack.remove(member);
                component.push(member.to_owned());
                if member == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(&mut state, node);
        }
    }
    state.found.sort();
    state.found
}
