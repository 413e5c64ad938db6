//! Symbol recall against universal-ctags, on the kinds both tools know.
//!
//! ctags runs once over the corpus (`ctags -R --output-format=json --fields=+nKl`, restricted
//! to the languages loupe parses and to the kinds below). A ctags definition (name, path, line)
//! counts as found when loupe's index has a definition of the same name (exact case) in the same
//! file, whose name line or first line is within one line of ctags' line, and whose kind is of
//! the same family:
//!
//! | family | ctags kinds (letter: long name) | loupe kinds |
//! | --- | --- | --- |
//! | callable | C/C++ `f` function; Python `f` function, `m` member; Rust `f` function, `P` method; JavaScript `f` function, `m` method, `g` generator; TypeScript `f` function, `m` method, `G` generator; Go `f` func; Java `m` method | function, method, constructor |
//! | type | C `s` struct; C++ `c` class, `s` struct; Python `c` class; Rust `s` struct; JavaScript/TypeScript `c` class; Go `s` struct; Java `c` class | class, struct |
//!
//! Not compared: names ctags generates for anonymous definitions (`__anon…`,
//! `AnonymousFunction…`), and JavaScript "classes" whose line has no `class` keyword (ctags 5.9
//! files object literals such as `const Sizable = {` under that kind).
//!
//! Functions and methods form one family because the tools split them differently (a Python
//! `def` in a class is ctags' `member` and loupe's `method`; a C++ method defined out of line is
//! ctags' `function` with a class scope). "any kind" also counts a same-name, same-place
//! definition that loupe files under another kind (e.g. an arrow function held in a `const`).
//! Only files loupe indexed with a parser are compared: ctags definitions in other files (over
//! `max_index_file_bytes`, ignored, or a language loupe does not parse) are counted apart.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use loupe_index::{Index, SymbolKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::stats;

/// `--kinds-LANG=` letters per ctags language, and each letter's family.
const KINDS: &[(&str, &[(char, Family)])] = &[
    ("C", &[('f', Family::Callable), ('s', Family::Type)]),
    ("C++", &[('c', Family::Type), ('s', Family::Type), ('f', Family::Callable)]),
    ("Python", &[('c', Family::Type), ('f', Family::Callable), ('m', Family::Callable)]),
    ("Rust", &[('f', Family::Callable), ('P', Family::Callable), ('s', Family::Type)]),
    ("JavaScript", &[('c', Family::Type), ('f', Family::Callable), ('m', Family::Callable), ('g', Family::Callable)]),
    ("TypeScript", &[('c', Family::Type), ('f', Family::Callable), ('m', Family::Callable), ('G', Family::Callable)]),
    ("Go", &[('f', Family::Callable), ('s', Family::Type)]),
    ("Java", &[('c', Family::Type), ('m', Family::Callable)]),
];

/// ctags' long kind names for the letters above, per language.
const LONG_NAMES: &[(&str, &str, char)] = &[
    ("C", "function", 'f'),
    ("C", "struct", 's'),
    ("C++", "class", 'c'),
    ("C++", "struct", 's'),
    ("C++", "function", 'f'),
    ("Python", "class", 'c'),
    ("Python", "function", 'f'),
    ("Python", "member", 'm'),
    ("Rust", "function", 'f'),
    ("Rust", "method", 'P'),
    ("Rust", "struct", 's'),
    ("JavaScript", "class", 'c'),
    ("JavaScript", "function", 'f'),
    ("JavaScript", "method", 'm'),
    ("JavaScript", "generator", 'g'),
    ("TypeScript", "class", 'c'),
    ("TypeScript", "function", 'f'),
    ("TypeScript", "method", 'm'),
    ("TypeScript", "generator", 'G'),
    ("Go", "func", 'f'),
    ("Go", "struct", 's'),
    ("Java", "class", 'c'),
    ("Java", "method", 'm'),
];

/// One of loupe's definitions: path, name line, first line, family.
type LoupeDef = (String, usize, usize, Option<Family>);

/// How many missed definitions the report shows.
const EXAMPLES: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Callable,
    Type,
}

fn family_of(kind: SymbolKind) -> Option<Family> {
    match kind {
        SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor => Some(Family::Callable),
        SymbolKind::Class | SymbolKind::Struct => Some(Family::Type),
        _ => None,
    }
}

/// Found/total for one ctags language and kind.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Tally {
    pub(crate) total: u64,
    pub(crate) found: u64,
    pub(crate) found_any_kind: u64,
}

/// The recall of one corpus.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Recall {
    pub(crate) ctags_millis: f64,
    pub(crate) ctags_version: String,
    /// ctags definitions of the compared kinds in files loupe indexed with a parser.
    pub(crate) compared: Tally,
    /// By "Language kind", e.g. "C function".
    pub(crate) by_kind: BTreeMap<String, Tally>,
    /// ctags definitions in files loupe did not parse (not compared).
    pub(crate) outside: u64,
    /// JavaScript object literals ctags calls classes (not compared).
    pub(crate) object_literals: u64,
    /// JavaScript calls ctags reads as method definitions (`_super.prototype.next.call(this)`;
    /// not compared).
    #[serde(default)]
    pub(crate) misread_calls: u64,
    /// A few definitions loupe missed, as "path:line kind name".
    pub(crate) missed_examples: Vec<String>,
    pub(crate) error: Option<String>,
}

/// Runs ctags over `root` and compares its definitions with `index`.
pub(crate) fn measure(root: &Path, index: &Index) -> Recall {
    match run(root, index) {
        Ok(recall) => recall,
        Err(error) => Recall { error: Some(error), ..Recall::default() },
    }
}

fn run(root: &Path, index: &Index) -> Result<Recall, String> {
    let version = Command::new("ctags")
        .arg("--version")
        .output()
        .map_err(|error| format!("ctags not found ({error}); run bench/index/fetch-corpora.sh"))?;
    let version = String::from_utf8_lossy(&version.stdout).lines().next().unwrap_or("").to_owned();
    if !version.contains("Universal Ctags") {
        return Err(format!("`ctags` is not universal-ctags: {version}"));
    }
    let parsed: HashSet<String> = index
        .files()
        .into_iter()
        .filter(|record| record.lang.is_some())
        .map(|record| record.path.as_str().to_owned())
        .collect();
    let long_names: HashMap<(&str, &str), char> =
        LONG_NAMES.iter().map(|&(language, long, letter)| ((language, long), letter)).collect();
    let families: HashMap<(&str, char), Family> = KINDS
        .iter()
        .flat_map(|&(language, kinds)| kinds.iter().map(move |&(letter, family)| ((language, letter), family)))
        .collect();

    let mut command = Command::new("ctags");
    command.current_dir(root).args(["-R", "--output-format=json", "--fields=+nKl", "-f", "-"]);
    let languages: Vec<&str> = KINDS.iter().map(|(language, _)| *language).collect();
    command.arg(format!("--languages={}", languages.join(",")));
    for (language, kinds) in KINDS {
        let letters: String = kinds.iter().map(|(letter, _)| *letter).collect();
        command.arg(format!("--kinds-{language}={letters}"));
    }
    command.stdout(Stdio::piped()).stderr(Stdio::null()).stdin(Stdio::null());
    let started = Instant::now();
    let mut child = command.spawn().map_err(|error| format!("starting ctags: {error}"))?;
    let stdout = child.stdout.take().ok_or("ctags has no stdout")?;

    let mut recall = Recall { ctags_version: version, ..Recall::default() };
    // name → loupe's definitions of that exact name: (path, name line, first line, family).
    let mut misses: u64 = 0;
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut loupe_defs: HashMap<String, Vec<LoupeDef>> = HashMap::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|error| format!("reading ctags output: {error}"))?;
        let Ok(tag) = serde_json::from_str::<Value>(&line) else { continue };
        if tag.get("_type").and_then(Value::as_str) != Some("tag") {
            continue;
        }
        let (Some(name), Some(path), Some(line_number), Some(language), Some(kind)) = (
            tag.get("name").and_then(Value::as_str),
            tag.get("path").and_then(Value::as_str),
            tag.get("line").and_then(Value::as_u64),
            tag.get("language").and_then(Value::as_str),
            tag.get("kind").and_then(Value::as_str),
        ) else {
            continue;
        };
        // Anonymous structs, classes and functions get generated names; loupe has none to match.
        if name.starts_with("__anon") || name.starts_with("AnonymousFunction") {
            continue;
        }
        let Some(&letter) = long_names.get(&(language, kind)) else { continue };
        // ctags 5.9 files JavaScript object literals (`const Sizable = {`) as classes.
        if language == "JavaScript"
            && kind == "class"
            && !tag.get("pattern").and_then(Value::as_str).is_some_and(|pattern| pattern.contains("class "))
        {
            recall.object_literals += 1;
            continue;
        }
        // ctags 5.9 also files `X.prototype.name.call(…)` and `.apply(…)`, which call a method,
        // as definitions of `name`.
        if language == "JavaScript"
            && let Some(pattern) = tag.get("pattern").and_then(Value::as_str)
            && [".call(", ".apply("].iter().any(|call| pattern.contains(&format!(".{name}{call}")))
            && !pattern.contains(&format!(".{name} ="))
        {
            recall.misread_calls += 1;
            continue;
        }
        let Some(&family) = families.get(&(language, letter)) else { continue };
        let path = path.strip_prefix("./").unwrap_or(path);
        if !parsed.contains(path) {
            recall.outside += 1;
            continue;
        }
        let defs = loupe_defs.entry(name.to_owned()).or_insert_with(|| {
            index
                .symbols_named(name)
                .into_iter()
                .filter(|hit| hit.symbol.name == name)
                .map(|hit| {
                    (
                        hit.path.as_str().to_owned(),
                        hit.symbol.name_line,
                        hit.symbol.span.start_line,
                        family_of(hit.symbol.kind),
                    )
                })
                .collect()
        });
        let line_number = line_number as usize;
        let near =
            |def: &&LoupeDef| def.0 == path && (def.1.abs_diff(line_number) <= 1 || def.2.abs_diff(line_number) <= 1);
        let any_kind = defs.iter().any(|def| near(&def));
        let same_family = defs.iter().filter(near).any(|def| def.3 == Some(family));
        let tally = recall.by_kind.entry(format!("{language} {kind}")).or_default();
        for tally in [tally, &mut recall.compared] {
            tally.total += 1;
            tally.found += u64::from(same_family);
            tally.found_any_kind += u64::from(any_kind);
        }
        if !same_family {
            misses += 1;
            // Reservoir sampling with a fixed seed: examples spread over the corpus, same every run.
            let example = || format!("{path}:{line_number} {language} {kind} {name}");
            if recall.missed_examples.len() < EXAMPLES {
                recall.missed_examples.push(example());
            } else {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let slot = (seed % misses) as usize;
                if slot < EXAMPLES {
                    recall.missed_examples[slot] = example();
                }
            }
        }
    }
    recall.missed_examples.sort();
    let status = child.wait().map_err(|error| format!("waiting for ctags: {error}"))?;
    recall.ctags_millis = stats::millis(started.elapsed());
    if !status.success() {
        recall.error = Some(format!("ctags exited with {status}"));
    }
    Ok(recall)
}
