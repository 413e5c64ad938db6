//! `analyze` at the engine boundary: every mode on a small Python workspace, the faces as
//! snapshots, the errors with their next calls, `max_nodes` cutting a walk, and the graphs
//! following an edit.

use crate::common;

use loupe_engine::{Engine, Response};
use serde_json::{Value, json};

const FILES: &[(&str, &str)] = &[
    (
        "app/main.py",
        "from .config import parse_config\nfrom .jobs import run\n\n\ndef main(argv):\n    path = argv[1]\n    config = parse_config(path)\n    run(config)\n    return config\n",
    ),
    (
        "app/config.py",
        "import os\n\nfrom .util import read_text\n\n\ndef parse_config(path):\n    text = read_text(path)\n    return dict(line.split('=') for line in text.splitlines())\n",
    ),
    ("app/util.py", "def read_text(path):\n    with open(path) as handle:\n        return handle.read()\n"),
    ("app/jobs.py", "from .models import Child\n\n\ndef run(config):\n    return Child(config).start()\n"),
    (
        "app/models.py",
        "class Base:\n    def start(self):\n        return self.name()\n\n    def name(self):\n        return 'base'\n\n\nclass Child(Base):\n    def __init__(self, config):\n        self.config = config\n",
    ),
    ("tools/run.py", "def run():\n    return 0\n"),
    ("app/__init__.py", ""),
];

struct Workspace {
    _root: tempfile::TempDir,
    _index: tempfile::TempDir,
    engine: Engine,
}

fn workspace() -> Workspace {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in FILES {
        let full = root.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let index = tempfile::tempdir().unwrap();
    let engine = common::indexed_engine(root.path(), index.path());
    Workspace { _root: root, _index: index, engine }
}

fn analyze(engine: &Engine, arguments: Value) -> Response {
    engine.call("analyze", arguments)
}

fn edges(response: &Response) -> Vec<String> {
    response.meta["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| {
            let confidence = edge["confidence"].as_str().map(|c| format!(" [{c}]")).unwrap_or_default();
            format!(
                "{} -{}-> {}{confidence}",
                edge["source"].as_str().unwrap(),
                edge["relation"].as_str().unwrap(),
                edge["target"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn calls_both_ways_with_confidence() {
    let workspace = workspace();
    let response = analyze(&workspace.engine, json!({"mode": "calls", "target": "parse_config"}));
    assert!(response.ok, "{}", response.face);
    insta::assert_snapshot!(response.face);
    assert_eq!(
        edges(&response),
        [
            "app/config.py#parse_config -calls-> app/util.py#read_text [exact]",
            "app/main.py#main -calls-> app/config.py#parse_config [exact]",
        ]
    );
    assert_eq!(
        response.meta["resolved_target"],
        json!({"type": "symbol", "path": "app/config.py", "name": "parse_config", "kind": "function", "line": 6})
    );
    let next = &response.meta["next_calls"][0];
    assert_eq!(next["tool"], "read");
    assert_eq!(next["arguments"]["mode"], "symbol");
}

/// "Who calls this" is answered by the direct callers; the rest of the default depth is
/// counted, and the next call is the same question at that depth, which shows it.
#[test]
fn calls_without_a_depth_shows_direct_callers_and_counts_the_rest() {
    let workspace = workspace();
    let arguments = json!({"mode": "calls", "target": "read_text", "direction": "upstream"});
    let near = analyze(&workspace.engine, arguments.clone());
    assert!(near.ok, "{}", near.face);
    assert_eq!(edges(&near), ["app/config.py#parse_config -calls-> app/util.py#read_text [exact]"]);
    let mut deeper = arguments.clone();
    deeper["max_depth"] = json!(3);
    assert!(near.face.contains("── 1 more within depth 3\n→ next: analyze "), "{}", near.face);
    let full = near.structured_at(loupe_engine::MetadataLevel::Full);
    assert_eq!(full["meta"]["next_calls"], json!([{"tool": "analyze", "arguments": deeper}]), "{full}");
    let far = analyze(&workspace.engine, deeper);
    assert!(
        edges(&far).contains(&"app/main.py#main -calls-> app/config.py#parse_config [exact]".to_owned()),
        "{}",
        far.face
    );
    assert!(!far.face.contains("more within depth"), "{}", far.face);
}

#[test]
fn dependencies_impact_and_types() {
    let workspace = workspace();
    let engine = &workspace.engine;
    let response = analyze(engine, json!({"mode": "dependencies", "target": "app/config.py"}));
    insta::assert_snapshot!("dependencies", response.face);
    assert_eq!(
        edges(&response),
        [
            "app/config.py -imports-> external:os",
            "app/config.py -imports-> app/util.py",
            "app/main.py -imports-> app/config.py"
        ]
    );

    // impact: everything that depends on util.py, nearest first.
    let response = analyze(engine, json!({"mode": "impact", "target": "app/util.py"}));
    let nodes: Vec<(&str, u64)> = response.meta["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| (node["id"].as_str().unwrap(), node["depth"].as_u64().unwrap()))
        .collect();
    assert_eq!(nodes, [("app/util.py", 0), ("app/config.py", 1), ("app/main.py", 2)]);

    // impact of a symbol: its users, then the files importing theirs.
    let response = analyze(engine, json!({"mode": "impact", "target": "read_text"}));
    assert_eq!(
        edges(&response),
        [
            "app/config.py#<module> -references-> app/util.py#read_text [exact]",
            "app/config.py#parse_config -references-> app/util.py#read_text [exact]",
            "app/main.py -imports-> app/config.py",
        ]
    );
    insta::assert_snapshot!("impact_of_a_symbol", response.face);

    let response = analyze(engine, json!({"mode": "types", "target": "Base"}));
    assert_eq!(edges(&response), ["app/models.py#Child -extends-> app/models.py#Base [exact]"]);
    insta::assert_snapshot!("types", response.face);
}

#[test]
fn data_flow_follows_an_argument_into_the_callee() {
    let workspace = workspace();
    let response = analyze(&workspace.engine, json!({"mode": "data_flow", "target": "main.path"}));
    assert!(response.ok, "{}", response.face);
    insta::assert_snapshot!(response.face);
    assert_eq!(
        edges(&response),
        [
            "app/main.py#main.path -passes_to-> app/config.py#parse_config.path [exact]",
            "app/config.py#parse_config.path -passes_to-> app/util.py#read_text.path [exact]",
        ]
    );
    // A bare variable with its file: the one function that uses it.
    let bare = analyze(&workspace.engine, json!({"mode": "data_flow", "target": "config", "path": "app/main.py"}));
    assert!(bare.ok, "{}", bare.face);
    assert_eq!(bare.meta["resolved_target"]["function"], "main");
}

#[test]
fn ambiguity_and_misuse_are_errors_with_next_calls_that_work() {
    let workspace = workspace();
    let engine = &workspace.engine;
    let response = analyze(engine, json!({"mode": "calls", "target": "run"}));
    assert_eq!(response.error_code(), Some("AMBIGUOUS_SYMBOL"), "{}", response.face);
    let next_calls = response.meta["next_calls"].as_array().unwrap();
    assert_eq!(next_calls.len(), 2);
    for call in next_calls {
        assert_eq!(call["tool"], "analyze");
        let replay = analyze(engine, call["arguments"].clone());
        assert!(replay.ok, "{}", replay.face);
    }

    let response = analyze(engine, json!({"mode": "calls", "target": "app/util.py"}));
    assert_eq!(response.error_code(), Some("INVALID_ARGS"));
    assert_eq!(response.meta["next_calls"][0]["arguments"], json!({"mode": "outline", "target": "app/util.py"}));

    let response = analyze(engine, json!({"mode": "calls", "target": "parse_confg"}));
    assert_eq!(response.error_code(), Some("SYMBOL_NOT_FOUND"));
    assert!(response.face.contains("parse_config"), "{}", response.face);

    for bad in [
        json!({"target": "main"}),
        json!({"mode": "calls", "target": "main", "max_nodes": 0}),
        json!({"mode": "calls", "target": "main", "max_nodes": 501}),
        json!({"mode": "calls", "target": "main", "depth": 2}),
        json!({"mode": "flows", "target": "main"}),
    ] {
        let response = analyze(engine, bad.clone());
        assert_eq!(response.error_code(), Some("INVALID_ARGS"), "{bad}: {}", response.face);
    }

    let response = analyze(engine, json!({"mode": "data_flow", "target": "main.nothing"}));
    assert_eq!(response.error_code(), Some("SYMBOL_NOT_FOUND"));
}

#[test]
fn max_nodes_cuts_the_walk_and_says_how_to_get_the_rest() {
    let workspace = workspace();
    let response = analyze(&workspace.engine, json!({"mode": "impact", "target": "app/util.py", "max_nodes": 2}));
    assert_eq!(response.meta["truncated"], json!(true));
    assert_eq!(response.meta["nodes"].as_array().unwrap().len(), 2);
    assert!(response.face.contains("truncated at max_nodes=2"), "{}", response.face);
    let more = &response.meta["next_calls"][0];
    assert_eq!(more["tool"], "analyze");
    assert_eq!(more["arguments"]["max_nodes"], json!(8));
    let replay = analyze(&workspace.engine, more["arguments"].clone());
    assert_eq!(replay.meta["truncated"], json!(false));
}

#[test]
fn an_edit_updates_the_graphs_before_the_next_query() {
    let workspace = workspace();
    let engine = &workspace.engine;
    let before = analyze(engine, json!({"mode": "dependencies", "target": "app/util.py", "direction": "upstream"}));
    assert_eq!(edges(&before), ["app/config.py -imports-> app/util.py"]);
    let edit = engine.call(
        "edit",
        json!({"edits": [{"path": "app/jobs.py", "operation": "insert", "line": 0, "new_string": "from .util import read_text\n"}]}),
    );
    assert!(edit.ok, "{}", edit.face);
    let after = analyze(engine, json!({"mode": "dependencies", "target": "app/util.py", "direction": "upstream"}));
    assert_eq!(edges(&after), ["app/config.py -imports-> app/util.py", "app/jobs.py -imports-> app/util.py"]);
    // The graphs were updated in place (an edited file, no file came or went): they answer what
    // graphs built from scratch on the edited workspace answer.
    let index = tempfile::tempdir().unwrap();
    let fresh = common::indexed_engine(workspace._root.path(), index.path());
    for arguments in [
        json!({"mode": "dependencies", "target": "app/util.py", "direction": "upstream"}),
        json!({"mode": "dependencies", "target": "app/jobs.py", "direction": "both"}),
        json!({"mode": "impact", "target": "app/util.py"}),
        json!({"mode": "types", "target": "Base"}),
        json!({"mode": "calls", "target": "read_text", "direction": "upstream", "max_depth": 3}),
    ] {
        let (updated, built) = (analyze(engine, arguments.clone()), analyze(&fresh, arguments.clone()));
        assert_eq!(updated.face, built.face, "{arguments}");
    }
}

/// The first minute (§7): while the first build runs, `analyze` answers from the files indexed
/// so far, says how many of how many, and offers the same call again; once the index is built
/// the same call answers whole.
#[test]
fn while_the_index_builds_analyze_says_what_it_covers_and_offers_the_call_again() {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in FILES {
        let full = root.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let index_dir = tempfile::tempdir().unwrap();
    let engine = Engine::new(common::tool_config(root.path(), index_dir.path())).unwrap();
    // The session ends after 3 of the 7 files (in path order: app/__init__, config, jobs).
    let index = std::sync::Arc::clone(engine.index().unwrap());
    engine.refresh_index(&move |done, _| {
        if done == 3 {
            index.interrupt_build();
        }
    });
    let arguments = json!({"mode": "calls", "target": "parse_config"});
    let partial = analyze(&engine, arguments.clone());
    assert!(partial.ok, "{}", partial.face);
    assert!(
        partial.face.contains(
            "note: the index is still building (3 of 7 files): edges from the files not yet indexed are missing"
        ),
        "{}",
        partial.face
    );
    let full = partial.structured_at(loupe_engine::MetadataLevel::Full);
    assert_eq!(full["meta"]["next_calls"][0], json!({"tool": "analyze", "arguments": arguments}), "{full}");
    assert_eq!(full["meta"]["truncated"], json!(true), "{full}");
    assert!(!edges(&partial).iter().any(|edge| edge.starts_with("app/main.py")), "{:?}", edges(&partial));

    // The next session finishes the build: the caller in app/main.py appears.
    drop(engine);
    let engine = common::indexed_engine(root.path(), index_dir.path());
    let whole = analyze(&engine, arguments);
    assert!(!whole.face.contains("still building"), "{}", whole.face);
    assert!(
        edges(&whole).iter().any(|edge| edge.starts_with("app/main.py#main -calls->")),
        "{}\n{:?}",
        whole.face,
        edges(&whole)
    );
}
