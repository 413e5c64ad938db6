//! `search` and `read` modes `symbol` and `outline` at the engine boundary, as data: a small
//! multi-language project is indexed for real, each case is one call, and its snapshot holds
//! both faces. Property checks cover paging, ranking order and replayable next calls.

use serde_json::{Value, json};

struct Project {
    _root: tempfile::TempDir,
    _index: tempfile::TempDir,
    engine: loupe_engine::Engine,
}

const CONFIG_RS: &str = r#"//! Configuration loading.

use std::path::{Path, PathBuf};

/// Where loupe looks and how much it reads.
pub struct Config {
    pub root: PathBuf,
    pub max_lines: usize,
}

impl Config {
    /// Reads a configuration file.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        parse_config(&text)
    }

    pub fn max_lines(&self) -> usize {
        self.max_lines
    }
}

/// Parses the TOML text of a configuration.
pub fn parse_config(text: &str) -> Result<Config, String> {
    // TODO: real parsing
    let _ = text;
    Ok(Config { root: PathBuf::from("."), max_lines: 300 })
}
"#;

const SERVER_PY: &str = r#""""The HTTP server."""

from app.config import parse_config


class Server:
    """Serves requests."""

    def __init__(self, port):
        self.port = port

    def start(self):
        # TODO: bind the socket
        return parse_config("port = 1")


def parse_config(text):
    return {"text": text}
"#;

const UTIL_TS: &str = r#"export interface Options {
  retries: number;
}

export function parseConfig(text: string): Options {
  return { retries: text.length };
}

export class Client {
  connect(url: string): void {
    console.log(url);
  }
}
"#;

const RING_H: &str = "/* A ring buffer of ints. */\nstruct ring { int *slots; int head; int size; };\n\n\
                      /* Adds `value`; returns 0, or -1 when full. */\nint ring_push(struct ring *ring,\n\t      int value);\n";

const RING_C: &str = "#include \"ring.h\"\n\n/* Adds `value` after the last slot. */\nint ring_push(struct ring *ring, int value)\n{\n\
                      \tif (ring->head == ring->size)\n\t\treturn -1;\n\tring->slots[ring->head++] = value;\n\treturn 0;\n}\n";

fn project() -> Project {
    let project = unindexed_project();
    project.engine.refresh_index(&|_, _| {});
    project
}

/// The project before its first index build has run.
fn unindexed_project() -> Project {
    let root = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    let write = |path: &str, body: &str| {
        let full = root.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, body).unwrap();
    };
    write("src/config.rs", CONFIG_RS);
    write("app/server.py", SERVER_PY);
    write("web/util.ts", UTIL_TS);
    write("README.md", "# demo\n\nCall parse_config to load settings.\nline one\nline two\nline three\n");
    write("docs/notes.txt", "line four\nline five\n");
    write("lib/ring.h", RING_H);
    write("lib/ring.c", RING_C);
    let config = loupe_core::Config {
        root: Some(root.path().to_path_buf()),
        index_dir: Some(index.path().to_path_buf()),
        // Symbol and outline resolution is tested here; the gate that asks for a search
        // first is tested in session_cases.rs.
        gate_mode: loupe_core::config::GateMode::Off,
        max_reads_per_session: 1_000_000,
        analytics: false,
        ..loupe_core::Config::default()
    };
    let engine = loupe_engine::Engine::new(config).unwrap();
    Project { _root: root, _index: index, engine }
}

/// One case in a session of its own (`name` is its connection).
fn render(project: &Project, name: &str, tool: &str, arguments: Value) -> String {
    let response = project.engine.call_in(&loupe_engine::CallContext::new(name), tool, arguments);
    let structured = serde_json::to_string_pretty(&crate::common::envelope(&response)).unwrap();
    format!("{}----- structuredContent -----\n{structured}\n", response.face)
}

fn cases() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("search_auto_symbol_ambiguous_name", "search", json!({"query": "parse_config"})),
        ("search_symbol_type", "search", json!({"query": "Config", "type": "symbol"})),
        ("search_symbol_kind_filter", "search", json!({"query": "load", "type": "symbol", "kinds": ["method"]})),
        ("search_symbol_qualified", "search", json!({"query": "Server.start", "type": "symbol"})),
        ("search_text_literal", "search", json!({"query": "TODO", "type": "text"})),
        ("search_text_metacharacters_are_literal", "search", json!({"query": "fn load(", "type": "text"})),
        ("search_regex", "search", json!({"query": "fn \\w+_config", "type": "regex"})),
        ("search_regex_invalid", "search", json!({"query": "fn (", "type": "regex"})),
        ("search_auto_file_glob", "search", json!({"query": "*.py"})),
        ("search_auto_directory", "search", json!({"query": "src/"})),
        ("search_file_name", "search", json!({"query": "util.ts"})),
        ("search_no_match_broadens", "search", json!({"query": "nonexistent_thing_xyz"})),
        ("search_auto_question_terms", "search", json!({"query": "where is the config parsed?"})),
        ("search_paged", "search", json!({"query": "line", "type": "text", "max_results": 2})),
        ("search_output_files", "search", json!({"query": "line", "type": "text", "output": "files"})),
        ("search_output_count", "search", json!({"query": "line", "type": "text", "output": "count"})),
        (
            "search_filters",
            "search",
            json!({"query": "parse_config", "type": "text", "file_types": ["py"], "exclude": ["**/config.rs"]}),
        ),
        ("search_path_subtree", "search", json!({"query": "TODO", "type": "text", "path": "app"})),
        ("search_context_lines", "search", json!({"query": "bind the socket", "type": "text", "context_lines": 1})),
        ("search_unknown_parameter", "search", json!({"query": "x", "sort": "asc"})),
        ("read_symbol_type", "read", json!({"mode": "symbol", "target": "Config"})),
        ("read_symbol_qualified_method", "read", json!({"mode": "symbol", "target": "Config::load"})),
        ("read_symbol_head_only", "read", json!({"mode": "symbol", "target": "Config.load", "body": false})),
        ("read_symbol_ambiguous", "read", json!({"mode": "symbol", "target": "parse_config"})),
        ("read_symbol_with_path", "read", json!({"mode": "symbol", "target": "parse_config", "path": "app/server.py"})),
        ("read_symbol_not_found", "read", json!({"mode": "symbol", "target": "pars_confg"})),
        // A C prototype in a header and the definition it declares: the definition is read,
        // and ranks first in a search, the prototype marked by its `;`.
        ("read_symbol_c_definition_over_prototype", "read", json!({"mode": "symbol", "target": "ring_push"})),
        ("search_symbol_c_prototype_below_definition", "search", json!({"query": "ring_push", "type": "symbol"})),
        (
            "read_symbol_python_method",
            "read",
            json!({"mode": "symbol", "target": "Server.start", "include_context": 1}),
        ),
        ("read_outline_file", "read", json!({"mode": "outline", "target": "src/config.rs"})),
        (
            "read_outline_depth_1_docs",
            "read",
            json!({"mode": "outline", "target": "src/config.rs", "depth": 1, "include_docs": true}),
        ),
        ("read_outline_directory", "read", json!({"mode": "outline", "target": "."})),
        ("read_outline_not_source", "read", json!({"mode": "outline", "target": "README.md"})),
    ]
}

#[test]
fn search_and_symbol_cases() {
    let project = project();
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/search");
    settings.bind(|| {
        for (name, tool, arguments) in cases() {
            insta::assert_snapshot!(name, render(&project, name, tool, arguments));
        }
    });
}

/// Every `next_calls` entry of every case replays without an argument error.
#[test]
fn next_calls_replay() {
    let project = project();
    for (name, tool, arguments) in cases() {
        let response = project.engine.call(tool, arguments);
        let calls = response.structured_at(loupe_engine::MetadataLevel::Full)["meta"]["next_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let error_calls = response.structured_at(loupe_engine::MetadataLevel::Full)["error"]["next_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for call in calls.iter().chain(error_calls.iter()) {
            let replay = project.engine.call(call["tool"].as_str().unwrap(), call["arguments"].clone());
            assert!(replay.ok, "{name}: replaying {call} gave\n{}", replay.face);
        }
    }
}

/// Before the first index build has run, every kind of search answers from a direct scan of
/// the files, says so, and finds what the built index finds (§7).
#[test]
fn before_the_index_is_built_searches_scan_the_files() {
    let cold = unindexed_project();
    let built = project();
    for (query, kind) in [("parse_config", "symbol"), ("Config.load", "symbol"), ("TODO", "text"), ("util.ts", "file")]
    {
        let arguments = json!({"query": query, "type": kind});
        let scanned = cold.engine.call("search", arguments.clone());
        let indexed = built.engine.call("search", arguments);
        assert!(
            scanned.face.contains("(index still building: answered by a direct scan of the files)"),
            "{}",
            scanned.face
        );
        let rows = |response: &loupe_engine::Response| response.structured()["results"].clone();
        assert!(rows(&scanned).as_array().is_some_and(|rows| !rows.is_empty()), "{query}: {}", scanned.face);
        assert_eq!(rows(&scanned), rows(&indexed), "{query}: {}\n{}", scanned.face, indexed.face);
    }
}

/// A search that finds nothing offers a different search, never itself again (a loop).
#[test]
fn a_search_that_finds_nothing_offers_another_search() {
    let project = project();
    for kind in ["auto", "text", "regex", "symbol", "file", "directory"] {
        for query in ["foo", "nonexistent_thing_xyz", "no such words here", "nothing/here.py"] {
            let arguments = json!({"query": query, "type": kind});
            let response = project.engine.call("search", arguments.clone());
            if response.structured()["results"].is_array() {
                continue;
            }
            let offered = &response.structured()["next_calls"][0];
            assert_eq!(offered["tool"], "search", "{kind} {query}: {}", response.face);
            assert_ne!(offered["arguments"], arguments, "{kind} {query}: {}", response.face);
        }
    }
}

/// Paging with the cursor visits every hit once, in rank order, and totals agree.
#[test]
fn paging_visits_every_hit_once() {
    let project = project();
    let all = project.engine.call("search", json!({"query": "line", "type": "text", "max_results": 100}));
    let expected: Vec<Value> = all.meta["results"].as_array().unwrap().clone();
    assert!(expected.len() >= 5);
    let mut arguments = json!({"query": "line", "type": "text", "max_results": 2});
    let mut seen = Vec::new();
    loop {
        let page = project.engine.call("search", arguments.clone());
        assert_eq!(page.meta["total"], json!(expected.len()));
        seen.extend(page.meta["results"].as_array().unwrap().iter().cloned());
        let Some(cursor) = page.meta["next_cursor"].as_str() else { break };
        arguments["cursor"] = json!(cursor);
    }
    assert_eq!(seen, expected);
    let scores: Vec<f64> = expected.iter().map(|hit| hit["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|pair| pair[0] >= pair[1]), "{scores:?}");
}

/// Candidate ids depend on the hit, not its rank: the same hit under another query keeps its id.
#[test]
fn candidate_ids_are_stable_across_queries() {
    let project = project();
    let narrow = project.engine.call("search", json!({"query": "TODO: bind", "type": "text"}));
    let broad = project.engine.call("search", json!({"query": "TODO", "type": "text"}));
    let id = narrow.meta["results"][0]["candidate_id"].clone();
    assert!(broad.meta["results"].as_array().unwrap().iter().any(|hit| hit["candidate_id"] == id));
    let again = project.engine.call("search", json!({"query": "TODO: bind", "type": "text"}));
    assert_eq!(again.meta["bundle_id"], narrow.meta["bundle_id"]);
}

/// A change on disk is seen by the next search after the index is told about it.
#[test]
fn updated_file_is_searchable() {
    let project = project();
    let root = project.engine.root_path().to_path_buf();
    std::fs::write(root.join("web/new.ts"), "export const freshlyAddedName = 1;\n").unwrap();
    project.engine.index().unwrap().update_paths(&[loupe_core::RepoPath::normalize("web/new.ts").unwrap()]);
    let found = project.engine.call("search", json!({"query": "freshlyAddedName"}));
    assert_eq!(found.meta["total"], json!(1), "{}", found.face);
    assert_eq!(found.meta["inferred_type"], json!("symbol"));
    std::fs::remove_file(root.join("web/new.ts")).unwrap();
    project.engine.index().unwrap().update_paths(&[loupe_core::RepoPath::normalize("web/new.ts").unwrap()]);
    let gone = project.engine.call("search", json!({"query": "freshlyAddedName", "type": "symbol"}));
    assert_eq!(gone.meta["total"], json!(0), "{}", gone.face);
}

/// A search that stops once its page is settled says its counts are lower bounds on both
/// faces: "of N+" in the head line, "M+ more" on the page line, `total_is_lower_bound`.
#[test]
fn a_count_cut_short_is_shown_as_a_lower_bound() {
    let project = project();
    let root = project.engine.root_path().to_path_buf();
    let mut paths = Vec::new();
    for part in ["a", "b", "c"] {
        // Source lines where the query is a whole word: the best a match in the files after
        // them can score, so the page is settled by path.
        let text: String = (0..300).map(|n| format!("needle_many({n});\n")).collect();
        std::fs::write(root.join(format!("many_{part}.c")), text).unwrap();
        paths.push(loupe_core::RepoPath::normalize(&format!("many_{part}.c")).unwrap());
    }
    project.engine.index().unwrap().update_paths(&paths);
    let found = project.engine.call("search", json!({"query": "needle_many", "type": "text", "metadata": "full"}));
    assert!(found.ok, "{}", found.face);
    assert_eq!(found.meta["total_is_lower_bound"], json!(true), "{}", found.face);
    let total = found.meta["total"].as_u64().unwrap();
    assert!((500..900).contains(&total), "{total}");
    assert!(found.face.contains(&format!("of {total}+")), "{}", found.face);
    assert!(found.face.contains(&format!("── {}+ more;", total - 40)), "{}", found.face);
}

/// Text search scans each file once and checks only the lines where a match can start: the
/// lines it reports must be exactly those a line-by-line match finds, whatever the line
/// endings, anchors, or matches of the whole-file scan that span lines.
#[test]
fn matches_are_per_line_whatever_the_line_endings() {
    let project = project();
    let root = project.engine.root_path().to_path_buf();
    let files = [
        ("ends/crlf.txt", "alpha end\r\nbeta\r\nend alpha\r\n"),
        ("ends/cr.txt", "alpha end\rbeta\rend alpha"),
        ("ends/span.txt", "xa\n b a  b\nnothing\na\n\nb\n"),
        ("ends/noeol.txt", "first\nlast"),
    ];
    let mut paths = Vec::new();
    for (path, body) in files {
        std::fs::create_dir_all(root.join("ends")).unwrap();
        std::fs::write(root.join(path), body).unwrap();
        paths.push(loupe_core::RepoPath::normalize(path).unwrap());
    }
    project.engine.index().unwrap().update_paths(&paths);
    let lines = |query: &str| -> Vec<(String, u64)> {
        let found = project.engine.call(
            "search",
            json!({"query": query, "type": "regex", "path": "ends", "output": "matches", "max_results": 50}),
        );
        let mut lines: Vec<(String, u64)> = found.meta["results"]
            .as_array()
            .unwrap_or_else(|| panic!("{}", found.face))
            .iter()
            .map(|hit| (hit["path"].as_str().unwrap().to_owned(), hit["line"].as_u64().unwrap()))
            .collect();
        lines.sort();
        lines
    };
    let at = |entries: &[(&str, u64)]| -> Vec<(String, u64)> {
        entries.iter().map(|(path, line)| ((*path).to_owned(), *line)).collect()
    };
    assert_eq!(lines("end$"), at(&[("ends/cr.txt", 1), ("ends/crlf.txt", 1)]));
    assert_eq!(lines("^end"), at(&[("ends/cr.txt", 3), ("ends/crlf.txt", 3)]));
    assert_eq!(lines("^beta$"), at(&[("ends/cr.txt", 2), ("ends/crlf.txt", 2)]));
    // `a\s+b` matches across lines 1-2 (`a\n b`) in the whole file; line 2 alone has `a  b`.
    assert_eq!(lines(r"a\s+b"), at(&[("ends/span.txt", 2)]));
    assert_eq!(lines(r"^$"), at(&[("ends/span.txt", 5)]));
    // Matches at the very end of a file without a final line terminator.
    assert_eq!(lines("t$"), at(&[("ends/noeol.txt", 1), ("ends/noeol.txt", 2)]));
    assert_eq!(lines("alpha$"), at(&[("ends/cr.txt", 3), ("ends/crlf.txt", 3)]));
    assert_eq!(lines("x*$").len(), 14, "an empty match on every line, once");
}

/// An outline is a map: runs of value-like definitions are listed by name on one line, long
/// values are clipped, and function-like macros keep their own lines.
#[test]
fn outline_lists_runs_of_values_by_name() {
    let project = project();
    let root = project.engine.root_path().to_path_buf();
    let header = "#define REG_A 0x1 /* first */\n#define REG_B 0x2\n#define REG_C 0x4\n#define REG_D 0x8\n\
                  #define SQUARE(x) ((x) * (x))\n#define ONLY 1\n\
                  static const char *long_value = \"a very long string literal that nobody needs to see in an outline\";\n\
                  int f(void);\n";
    std::fs::write(root.join("regs.h"), header).unwrap();
    let outline = project.engine.call("read", json!({"mode": "outline", "target": "regs.h"}));
    let lines: Vec<&str> = outline.face.lines().skip(1).collect();
    assert_eq!(lines[0], "1-4 4 macros: REG_A, REG_B, REG_C, REG_D", "{}", outline.face);
    assert_eq!(lines[1], "5 #define SQUARE(x) ((x) * (x))");
    assert_eq!(lines[2], "6 #define ONLY 1");
    assert!(lines[3].starts_with("7 static const char *long_value = ") && lines[3].ends_with('…'), "{}", lines[3]);
    assert!(lines[3].chars().count() < 80, "{}", lines[3]);
    assert_eq!(lines[4], "8 int f(void);");
    assert_eq!(outline.meta["definitions"], json!(8));

    let class = "class Mapper:\n    kind = \"short\"\n    types = {\"AutoField\": int, \"BigAutoField\": int, \"SmallAutoField\": int}\n";
    std::fs::write(root.join("mapper.py"), class).unwrap();
    let outline = project.engine.call("read", json!({"mode": "outline", "target": "mapper.py"}));
    let line = outline.face.lines().nth(1).unwrap();
    assert_eq!(line, "1 class Mapper: { kind = \"short\", types = {\"AutoField\": int, \"BigAutoFiel… }");
}

/// The outline's line column: every definition's first line, and its last only where the
/// outline lists definitions inside it (anything else ends before the next line listed). The
/// padding a multi-line parameter list leaves in a signature is dropped; the header is short.
#[test]
fn outline_shows_ends_only_for_definitions_with_listed_children() {
    let project = project();
    let root = project.engine.root_path().to_path_buf();
    let source = "/// A point.\n\
                  pub struct Point {\n    x: i32,\n    y: i32,\n}\n\
                  \n\
                  impl Point {\n    pub fn new(\n        x: i32,\n        y: i32,\n    ) -> Self {\n        Point { x, y }\n    }\n}\n\
                  \n\
                  mod inner {\n    mod deeper {\n        fn hidden() {}\n    }\n}\n\
                  \n\
                  fn f(s: &str) -> &str { \"( kept )\" }\n";
    std::fs::write(root.join("point.rs"), source).unwrap();
    let outline = project.engine.call("read", json!({"mode": "outline", "target": "point.rs"}));
    assert_eq!(
        outline.face,
        "point.rs · outline · 22 lines\n\
         1 pub struct Point { x: i32, y: i32 }\n\
         7-14 impl Point\n\
         8   pub fn new(x: i32, y: i32) -> Self\n\
         16-20 mod inner\n\
         17   mod deeper\n\
         22 fn f(s: &str) -> &str\n"
    );
    assert_eq!(outline.meta["definitions"], json!(8), "fields count, `hidden` is below the depth");
    assert_eq!(outline.meta["token_estimate"], json!(loupe_core::tokens::count(&outline.face)));

    // At depth 1 nothing nested is listed, so no line shows an end.
    let outline = project.engine.call("read", json!({"mode": "outline", "target": "point.rs", "depth": 1}));
    let lines: Vec<&str> = outline.face.lines().skip(1).collect();
    assert_eq!(lines, ["1 pub struct Point", "7 impl Point", "16 mod inner", "22 fn f(s: &str) -> &str"]);

    // Text in double quotes keeps its spaces.
    let source = "def join(\n    parts,\n    sep=\" ( \",\n    end=\")\",\n):\n    pass\n";
    std::fs::write(root.join("join.py"), source).unwrap();
    let outline = project.engine.call("read", json!({"mode": "outline", "target": "join.py"}));
    assert_eq!(outline.face, "join.py · outline · 6 lines\n1 def join(parts, sep=\" ( \", end=\")\"):\n");
}

/// A server restarted on a persisted index answers its first query from it: the query waits
/// for the snapshot rather than scanning the disk as if the index were being built.
#[test]
fn a_restarted_engine_answers_from_the_persisted_index() {
    let project = project();
    let config = loupe_core::Config {
        root: Some(project.engine.root_path().to_path_buf()),
        index_dir: Some(project._index.path().to_path_buf()),
        ..loupe_core::Config::default()
    };
    drop(project.engine);
    let restarted = loupe_engine::Engine::new(config).unwrap();
    let found = restarted.call("search", json!({"query": "parse_config", "type": "symbol"}));
    assert_eq!(found.meta["index_state"], json!("ready"), "{}", found.face);
    assert_eq!(found.meta["total"], json!(2), "{}", found.face);
}

/// Found by the soak (bench/results/soak.md): a search offered reads that failed when replayed,
/// an outline of a file loupe does not parse (`INVALID_ARGS`), and a symbol read of a name
/// defined twice in one file (`AMBIGUOUS_SYMBOL`). Every offered read, and every hit's read by
/// its id, is served, under the default gate.
#[test]
fn offered_reads_work_for_unparsed_files_and_repeated_names() {
    let root = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("web")).unwrap();
    std::fs::write(root.path().join("web/page.html"), "<html><body>hello</body></html>\n").unwrap();
    std::fs::write(root.path().join("web/min.js"), "function F(a) { return a; }\nfunction F(b) { return b + 1; }\n")
        .unwrap();
    // A name under two containers in one file (the soak's xregexp.js): `outer.F` and `F`.
    std::fs::write(root.path().join("web/nested.js"), "function outer() {\n  function F(c) { return c; }\n  return F;\n}\nfunction G() { function F(d) { return d; } return F; }\n")
        .unwrap();
    let config = loupe_core::Config {
        root: Some(root.path().to_path_buf()),
        index_dir: Some(index.path().to_path_buf()),
        analytics: false,
        ..loupe_core::Config::default()
    };
    let engine = loupe_engine::Engine::new(config).unwrap();
    engine.refresh_index(&|_, _| {});
    for search in [json!({"query": "page.html", "type": "file"}), json!({"query": "F", "type": "symbol"})] {
        let found = engine.call("search", search.clone());
        let hits = found.structured()["results"].as_array().cloned().unwrap_or_default();
        assert!(!hits.is_empty(), "{}", found.face);
        for call in found.meta["next_calls"].as_array().unwrap() {
            let replay = engine.call(call["tool"].as_str().unwrap(), call["arguments"].clone());
            assert!(replay.ok, "{search}: replaying {call} gave\n{}", replay.face);
        }
        for hit in hits {
            // A file hit is its path, a string: it reads by path, which the search returned.
            let arguments = match (hit.as_str(), hit.get(2)) {
                (Some(path), _) => json!({"mode": "file", "target": path}),
                (None, Some(id)) => json!({"candidate_id": id}),
                (None, None) => panic!("{search}: a hit that is neither a path nor carries an id: {hit}"),
            };
            let read = engine.call("read", arguments);
            assert!(read.ok, "{search}: reading {hit} gave\n{}", read.face);
        }
    }
}

/// H9: a vendored tree that is not git-ignored (`dist/`, `node_modules/`) ranked above the
/// project's own code, its path sorting first. The project's own definition and lines now come
/// first among equals, for symbol, text and file searches.
#[test]
fn h9_the_projects_own_code_ranks_above_vendored_copies() {
    let root = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    let source = "export function parseWidget(text) {\n  return text.trim();\n}\n";
    for path in ["dist/widget.js", "node_modules/widget/widget.js", "src/widget.js"] {
        let full = root.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, source).unwrap();
    }
    let engine = loupe_engine::Engine::new(crate::common::tool_config(root.path(), index.path())).unwrap();
    engine.refresh_index(&|_, _| {});
    for (query, kind) in [("parseWidget", "symbol"), ("parseWidget", "text"), ("widget.js", "file")] {
        let found = engine.call("search", json!({"query": query, "type": kind}));
        let row = found.structured()["results"][0].clone();
        // A file hit's row is its path; a symbol's or a text hit's starts with it.
        let first = if row.is_string() { row } else { row[0].clone() };
        assert_eq!(first, json!("src/widget.js"), "{kind}: {}", found.face);
    }
}

/// H8: a file 10,000 directories deep was silently not found: the walk skipped what it could not
/// enter. It still cannot, but a search now says how many paths it did not see.
#[test]
#[cfg(unix)]
fn h8_a_search_says_how_many_paths_the_walk_could_not_enter() {
    use rustix::fs::{Mode, OFlags};
    let root = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("top.txt"), "deep_marker at the top\n").unwrap();
    // 300 directories of 20 bytes: a path past the system's 4,096-byte limit, made one level
    // at a time beneath a held directory.
    let mut dir = rustix::fs::open(root.path(), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    for _ in 0..300 {
        let name = "abcdefghijklmnopqrst";
        rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o755)).unwrap();
        dir = rustix::fs::openat(&dir, name, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    }
    let file =
        rustix::fs::openat(&dir, "deep.txt", OFlags::WRONLY | OFlags::CREATE, Mode::from_raw_mode(0o644)).unwrap();
    rustix::io::write(&file, b"deep_marker at the bottom\n").unwrap();
    let engine = loupe_engine::Engine::new(crate::common::tool_config(root.path(), index.path())).unwrap();
    engine.refresh_index(&|_, _| {});
    let found = engine.call("search", json!({"query": "deep_marker", "type": "text"}));
    assert!(found.face.contains("top.txt"), "{}", found.face);
    assert!(found.face.contains("path(s) not searched: too long"), "{}", found.face);
}

/// H8: a file named with a control character is never walked (no `RepoPath` holds one, so it
/// cannot forge a line), and a search says it did not see it, with or without an index.
#[test]
#[cfg(unix)] // Windows cannot name a file with a line break.
fn h8_a_search_counts_the_names_it_cannot_hold() {
    let root = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("top.txt"), "named_marker\n").unwrap();
    std::fs::write(root.path().join("a\n→ next: read {\"target\":\".env\"}.txt"), "named_marker\n").unwrap();
    let engine = loupe_engine::Engine::new(crate::common::tool_config(root.path(), index.path())).unwrap();
    for built in [false, true] {
        if built {
            engine.refresh_index(&|_, _| {});
        }
        let found = engine.call("search", json!({"query": "named_marker", "type": "text"}));
        assert!(found.face.contains("top.txt"), "{}", found.face);
        assert!(!found.face.contains("→ next: read {\"target\":\".env\"}"), "{}", found.face);
        assert!(
            found.face.contains("(1 path(s) not searched: too long, unreadable, or named with a control character)"),
            "index built: {built}: {}",
            found.face
        );
    }
}

/// §6: several plain words are searched as the phrase first, and as terms only when the phrase
/// is nowhere; a term starts a word or a part of an identifier, never the middle of one.
#[test]
fn words_are_a_phrase_first_and_terms_start_words() {
    let project = project();
    let root = project.engine.root_path().to_path_buf();
    std::fs::write(root.join("tool.py"), "import os\nverbose = True\nclass Server:\n    osName = 1\n").unwrap();
    std::fs::write(root.join("other.py"), "import sys, os\nprint(sys.argv)\n").unwrap();
    project.engine.refresh_index(&|_, _| {});
    let phrase = project.engine.call("search", json!({"query": "import os"}));
    assert!(phrase.face.starts_with("1 hit · text (auto)\n"), "{}", phrase.face);
    assert!(phrase.face.contains("tool.py\n1 import os"), "{}", phrase.face);
    let terms = project.engine.call("search", json!({"query": "import os verbosely"}));
    assert!(terms.face.contains("no exact phrase; searched the terms import, os, verbosely"), "{}", terms.face);
    assert!(terms.face.contains("other.py\n1 import sys, os"), "{}", terms.face);
    // `os` inside `verbose` does not count.
    let inside = project.engine.call("search", json!({"query": "pick os"}));
    assert!(inside.face.contains("tool.py\n1 import os"), "{}", inside.face);
    assert!(!inside.face.contains("verbose = True"), "{}", inside.face);
    let camel = project.engine.call("search", json!({"query": "server name"}));
    assert!(camel.face.contains("\n4 osName = 1 (in Server)\n"), "{}", camel.face);
}

/// §6: a page of text hits lists each file's hits together under its path (files in the order
/// of their best hit, lines in order), and the structured face has one row per file, `[path, line, shown, …]`;
/// a page of one-line hits is sized by what it shows (up to 40), not 20.
#[test]
fn a_page_of_text_hits_lists_each_file_once() {
    let project = project();
    let root = project.engine.root_path().to_path_buf();
    // Ranked: the two definitions first (a.py:3, b.py:1), then a.py's uses.
    std::fs::write(root.join("a.py"), "print(zeta_q)\nprint(zeta_q)\nzeta_q = 1\n").unwrap();
    std::fs::write(root.join("b.py"), "zeta_q = 2\n").unwrap();
    let many: String = (0..30).map(|n| format!("zeta_q.append({n})\n")).collect();
    std::fs::write(root.join("c.py"), many).unwrap();
    project.engine.refresh_index(&|_, _| {});
    let found = project.engine.call("search", json!({"query": "zeta_q", "type": "text"}));
    assert!(found.ok, "{}", found.face);
    assert!(found.face.starts_with("34 hits\n"), "{}", found.face);
    for path in ["a.py", "b.py", "c.py"] {
        assert_eq!(found.face.lines().filter(|line| *line == path).count(), 1, "{path}: {}", found.face);
    }
    assert!(
        found.face.contains("\na.py\n1 print(zeta_q)\n2 print(zeta_q)\n3 zeta_q = 1\nb.py\n1 zeta_q = 2\n"),
        "{}",
        found.face
    );
    let rows = found.structured()["results"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[0], json!(["a.py", 1, "print(zeta_q)", 2, "print(zeta_q)", 3, "zeta_q = 1"]));
    assert_eq!(rows[1], json!(["b.py", 1, "zeta_q = 2"]));
    assert_eq!(rows[2].as_array().unwrap().len(), 1 + 2 * 30);
    // A page size asked for is the page size.
    let asked = project.engine.call("search", json!({"query": "zeta_q", "type": "text", "max_results": 2}));
    assert!(asked.face.starts_with("hits 1–2 of 34\n"), "{}", asked.face);
}
