//! `edit`'s symbol operations (§8.2) at the engine boundary as data: each case is one call on a
//! small fixture in three languages, its text face and the bytes of every file it changed
//! (snapshots), then undo, which must restore every byte.

use std::fs;

use loupe_engine::Engine;
use serde_json::{Value, json};

use crate::common;

const FILES: &[(&str, &str)] = &[
    (
        "pkg/helpers.py",
        "import os\n\n\n@cached\ndef get_load_dotenv(default=True):\n    \"\"\"Whether to load dotenv files.\"\"\"\n    val = os.environ.get(\"FLASK_SKIP_DOTENV\")\n    if not val:\n        return default\n    return val.lower() in (\"0\", \"false\", \"no\")\n\n\nclass Config(dict):\n    def load(self, path):\n        # get_load_dotenv is named here in a comment\n        return get_load_dotenv()\n\n    def apply(self):\n        return self.load(\"x\")\n\n\ndef unused():\n    return 1\n",
    ),
    (
        "pkg/cli.py",
        "from .helpers import get_load_dotenv\nfrom .helpers import get_load_dotenv as gld\nfrom .helpers import Config\n\n\ndef main():\n    if get_load_dotenv():\n        print(\"get_load_dotenv\")\n    Config().load(\"y\")\n    return gld(False)\n",
    ),
    ("pkg/__init__.py", ""),
    (
        "src/lib.rs",
        "/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n\npub fn twice(a: i32) -> i32 {\n    add(a, a)\n}\n",
    ),
    (
        "web/shop.ts",
        "export class Cart {\n  items: number[] = [];\n\n  total(): number {\n    return this.items.reduce((a, b) => a + b, 0);\n  }\n}\n",
    ),
];

struct Fixture {
    root: tempfile::TempDir,
    _index: tempfile::TempDir,
    engine: Engine,
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in FILES {
        let full = root.path().join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }
    let index = tempfile::tempdir().unwrap();
    let engine = common::indexed_engine(root.path(), index.path());
    Fixture { root, _index: index, engine }
}

impl Fixture {
    fn files(&self) -> Vec<(String, String)> {
        FILES
            .iter()
            .map(|(path, _)| {
                (
                    (*path).to_owned(),
                    fs::read_to_string(self.root.path().join(path)).unwrap_or_else(|_| "(absent)\n".to_owned()),
                )
            })
            .collect()
    }

    /// The call's text face and every file it changed, as they are after it.
    fn run(&self, arguments: Value) -> (Value, String) {
        let response = self.engine.call("edit", arguments);
        let mut shown = response.face.clone();
        shown.push_str("----- files after -----\n");
        for ((path, after), (_, before)) in self.files().iter().zip(FILES) {
            if after != before {
                shown.push_str(&format!("{path}:\n{after}"));
            }
        }
        (common::envelope(&response), shown)
    }
}

fn one(entry: Value) -> Value {
    json!({ "edits": [entry] })
}

fn cases() -> Vec<(&'static str, Value)> {
    vec![
        (
            "replace_body_python_keeps_decorator_and_docstring",
            one(json!({"operation": "replace_symbol", "symbol": "get_load_dotenv", "new_body": "return default"})),
        ),
        (
            "replace_body_method_reindents",
            one(
                json!({"operation": "replace_symbol", "symbol": "Config.load", "new_body": "        value = path\n        return value"}),
            ),
        ),
        (
            "replace_body_rust_between_braces",
            one(json!({"operation": "replace_symbol", "symbol": "sub", "new_body": "b - a"})),
        ),
        (
            "replace_body_typescript_method",
            one(
                json!({"operation": "replace_symbol", "symbol": "Cart.total", "new_body": "let sum = 0;\nfor (const item of this.items) {\n  sum += item;\n}\nreturn sum;"}),
            ),
        ),
        (
            "replace_text_whole_definition",
            one(
                json!({"operation": "replace_symbol", "symbol": "Config.apply", "new_text": "def apply(self, path=\"x\"):\n    return self.load(path)"}),
            ),
        ),
        (
            "insert_after_method_keeps_the_class_gap",
            one(
                json!({"operation": "insert_after_symbol", "symbol": "Config.load", "new_string": "def reset(self):\n    self.clear()"}),
            ),
        ),
        (
            "insert_before_top_level_python_two_blank_lines",
            one(json!({"operation": "insert_before_symbol", "symbol": "Config", "new_string": "DEFAULT = {}"})),
        ),
        (
            "insert_after_rust_function",
            one(
                json!({"operation": "insert_after_symbol", "symbol": "add", "path": "src/lib.rs", "new_string": "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}"}),
            ),
        ),
        ("delete_unused_function", one(json!({"operation": "delete_symbol", "symbol": "unused"}))),
        ("delete_used_function_is_refused", one(json!({"operation": "delete_symbol", "symbol": "get_load_dotenv"}))),
        ("delete_used_function_forced", one(json!({"operation": "delete_symbol", "symbol": "sub", "force": true}))),
        (
            "rename_across_files_keeps_alias_and_comments",
            one(json!({"operation": "rename_symbol", "symbol": "get_load_dotenv", "new_name": "load_dotenv_enabled"})),
        ),
        (
            "rename_in_comments_too",
            one(
                json!({"operation": "rename_symbol", "symbol": "get_load_dotenv", "new_name": "load_dotenv_enabled", "in_comments": true}),
            ),
        ),
        (
            "rename_method_through_self_and_instances",
            one(json!({"operation": "rename_symbol", "symbol": "Config.load", "new_name": "load_file"})),
        ),
        ("rename_rust_function", one(json!({"operation": "rename_symbol", "symbol": "add", "new_name": "plus"}))),
        (
            "rename_collision_with_a_sibling",
            one(json!({"operation": "rename_symbol", "symbol": "Config.load", "new_name": "apply"})),
        ),
        (
            "rename_collision_with_an_import",
            one(json!({"operation": "rename_symbol", "symbol": "get_load_dotenv", "new_name": "os"})),
        ),
        (
            "rename_to_a_keyword_is_invalid",
            one(json!({"operation": "rename_symbol", "symbol": "add", "new_name": "fn"})),
        ),
        (
            "symbol_not_found_offers_a_search",
            one(json!({"operation": "replace_symbol", "symbol": "get_load_dotenvx", "new_body": "pass"})),
        ),
        ("replace_symbol_needs_one_of_body_or_text", one(json!({"operation": "replace_symbol", "symbol": "add"}))),
        (
            "mixed_with_a_text_edit_in_one_call",
            json!({"edits": [
                {"operation": "replace_symbol", "symbol": "twice", "new_body": "add(a, a) + 0"},
                {"path": "src/lib.rs", "operation": "replace", "old_string": "/// Adds.", "new_string": "/// Adds two numbers."}
            ]}),
        ),
        // LEFT_DANGLING on any edit: a text edit renaming a definition leaves its uses behind.
        (
            "text_rename_of_a_definition_leaves_its_uses_behind",
            one(
                json!({"path": "pkg/helpers.py", "old_string": "def get_load_dotenv(", "new_string": "def load_env_enabled("}),
            ),
        ),
        (
            "forced_delete_names_what_it_left_behind",
            one(json!({"operation": "delete_symbol", "symbol": "get_load_dotenv", "force": true})),
        ),
        (
            "a_new_required_parameter_leaves_calls_behind",
            one(
                json!({"operation": "replace_symbol", "symbol": "get_load_dotenv", "new_text": "def get_load_dotenv(default, strict):\n    return default"}),
            ),
        ),
        ("deleting_a_file_leaves_its_importers_behind", one(json!({"path": "pkg/helpers.py", "operation": "delete"}))),
        ("operation_inferred_from_new_name", one(json!({"symbol": "unused", "new_name": "spare"}))),
    ]
}

#[test]
fn symbol_edit_cases() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/symbol_edit");
    settings.bind(|| {
        for (name, arguments) in cases() {
            let fixture = fixture();
            let (envelope, shown) = fixture.run(arguments);
            insta::assert_snapshot!(name, shown);
            // Whatever the call did, undo brings every byte back.
            if let Some(id) = envelope["transaction_id"].as_str() {
                let undo = fixture.engine.call("manage", json!({"command": "undo", "transaction_id": id}));
                assert!(undo.ok, "{name}: undo failed: {}", undo.face);
                for ((path, after), (_, before)) in fixture.files().iter().zip(FILES) {
                    assert_eq!(after, before, "{name}: undo left {path} changed");
                }
            }
        }
    });
}

#[test]
fn an_ambiguous_symbol_offers_one_edit_per_candidate() {
    let fixture = fixture();
    fs::write(fixture.root.path().join("pkg/other.py"), "def unused():\n    return 2\n").unwrap();
    let reindexed = fixture.engine.call("manage", json!({"command": "reindex"}));
    assert!(reindexed.ok, "{}", reindexed.face);
    let arguments = one(json!({"operation": "replace_symbol", "symbol": "unused", "new_body": "return 3"}));
    let response = fixture.engine.call("edit", arguments);
    let envelope = common::envelope(&response);
    assert_eq!(envelope["error"]["code"], "AMBIGUOUS_SYMBOL", "{}", response.face);
    let calls = envelope["next_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{}", response.face);
    // Each candidate's call is the whole edit aimed at one file, and runs.
    for call in calls {
        assert_eq!(call["tool"], "edit");
        let arguments = call["arguments"].clone();
        assert_eq!(arguments["edits"][0]["new_body"], "return 3");
        let dry = json!({"dry_run": true, "edits": arguments["edits"]});
        let answer = fixture.engine.call("edit", dry);
        assert!(answer.ok, "{}", answer.face);
    }
}

#[test]
fn a_refused_delete_names_the_uses_and_the_forced_call_works() {
    let fixture = fixture();
    let response = fixture.engine.call("edit", one(json!({"operation": "delete_symbol", "symbol": "get_load_dotenv"})));
    let envelope = common::envelope(&response);
    assert_eq!(envelope["error"]["code"], "SYMBOL_IN_USE");
    let references = envelope["error"]["references"].as_array().unwrap();
    assert!(references.iter().any(|site| site["path"] == "pkg/cli.py" && site["line"] == 7), "{references:?}");
    let forced = envelope["next_calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|call| call["tool"] == "edit")
        .expect("a forced call")
        .clone();
    let answer = fixture.engine.call("edit", forced["arguments"].clone());
    assert!(answer.ok, "{}", answer.face);
    let text = fs::read_to_string(fixture.root.path().join("pkg/helpers.py")).unwrap();
    assert!(!text.contains("def get_load_dotenv") && !text.contains("@cached"), "{text}");
}

#[test]
fn a_search_hits_candidate_id_names_the_symbol_to_edit() {
    let fixture = fixture();
    let found = fixture.engine.call("search", json!({"query": "apply", "type": "symbol"}));
    let envelope = common::envelope(&found);
    let hit = &envelope["results"][0];
    assert_eq!(hit[0], "pkg/helpers.py", "{}", found.face);
    let id = hit[2].as_str().expect("a candidate id").to_owned();
    let arguments = one(json!({"operation": "replace_symbol", "symbol": id, "new_body": "return None"}));
    let response = fixture.engine.call("edit", arguments);
    assert!(response.ok, "{}", response.face);
    assert!(response.face.contains("replaced the body of method apply in Config"), "{}", response.face);
    let text = fs::read_to_string(fixture.root.path().join("pkg/helpers.py")).unwrap();
    assert!(text.contains("    def apply(self):\n        return None\n"), "{text}");
    // An id no search gave is a name like any other.
    let unknown = fixture.engine.call("edit", one(json!({"operation": "delete_symbol", "symbol": "zzzzzzz"})));
    assert_eq!(common::envelope(&unknown)["error"]["code"], "SYMBOL_NOT_FOUND");
}

/// `pkg.abort()` through `pkg/__init__.py`'s `from .helpers import abort as abort` is a use, and
/// the re-export's alias is the public name it goes by: both change with the definition, so the
/// package still exports what its users call.
#[test]
fn a_rename_follows_a_package_reexport_and_renames_its_alias() {
    let root = tempfile::tempdir().unwrap();
    let files = [
        ("pkg/__init__.py", "from .helpers import abort as abort\n"),
        ("pkg/helpers.py", "def abort(code):\n    raise ValueError(code)\n"),
        ("tests/test_x.py", "import pkg\n\n\ndef test_it():\n    pkg.abort(404)\n"),
    ];
    for (path, text) in files {
        common::write(root.path(), path, text);
    }
    let index = tempfile::tempdir().unwrap();
    let engine = common::indexed_engine(root.path(), index.path());
    let response =
        engine.call("edit", one(json!({"operation": "rename_symbol", "symbol": "abort", "new_name": "stop"})));
    assert!(response.ok, "{}", response.face);
    let read = |path: &str| fs::read_to_string(root.path().join(path)).unwrap();
    assert_eq!(read("pkg/__init__.py"), "from .helpers import stop as stop\n");
    assert_eq!(read("pkg/helpers.py"), "def stop(code):\n    raise ValueError(code)\n");
    assert_eq!(read("tests/test_x.py"), "import pkg\n\n\ndef test_it():\n    pkg.stop(404)\n");
}

/// A receiver typed by the local assignment that made it (`c = Cart()`) is that type's: its
/// method call is renamed; one made by another type (`d = Order()`) is not.
#[test]
fn a_rename_types_a_receiver_by_its_local_assignment() {
    let root = tempfile::tempdir().unwrap();
    let files = [
        (
            "pkg/a.py",
            "class Cart:\n    def total(self):\n        return 1\n\n\nclass Order:\n    def total(self):\n        return 2\n",
        ),
        (
            "pkg/b.py",
            "from .a import Cart, Order\n\n\ndef f():\n    c = Cart()\n    d = Order()\n    return c.total() + d.total()\n",
        ),
    ];
    for (path, text) in files {
        common::write(root.path(), path, text);
    }
    let index = tempfile::tempdir().unwrap();
    let engine = common::indexed_engine(root.path(), index.path());
    let response =
        engine.call("edit", one(json!({"operation": "rename_symbol", "symbol": "Cart.total", "new_name": "sum_all"})));
    assert!(response.ok, "{}", response.face);
    let read = |path: &str| fs::read_to_string(root.path().join(path)).unwrap();
    assert!(read("pkg/a.py").contains("class Cart:\n    def sum_all(self):"), "{}", read("pkg/a.py"));
    assert!(read("pkg/a.py").contains("class Order:\n    def total(self):"), "{}", read("pkg/a.py"));
    assert!(read("pkg/b.py").contains("return c.sum_all() + d.total()"), "{}", read("pkg/b.py"));
}
