//! The compact structured face (§3.3): a client that hands the model
//! `JSON.stringify(structuredContent)` (Claude Code, Codex) gives it what the text face gives, at
//! most 1.3× the text face's tokens + 40 on every call of every tool and mode, counted with the
//! real tokenizer; and a program still finds what it acts on at the top level.

use std::fs;
use std::path::Path;

use loupe_core::Config;
use loupe_core::tokens;
use loupe_engine::{CallContext, Engine, MetadataLevel, Response};
use serde_json::{Value, json};

use crate::common::git;

const MODELS: &str = r#""""Data models for the shop."""

from dataclasses import dataclass


@dataclass
class Item:
    """One thing for sale."""

    name: str
    price_cents: int
    quantity: int = 1

    def total(self) -> int:
        """The price of all of them."""
        return self.price_cents * self.quantity


class Cart:
    def __init__(self):
        self.items = []

    def add(self, item: Item) -> None:
        if item.quantity <= 0:
            raise ValueError("quantity must be positive")
        self.items.append(item)

    def total(self) -> int:
        return sum(item.total() for item in self.items)
"#;

const CHECKOUT: &str = r#""""Checkout: turns a cart into an order."""

from shop.models import Cart, Item

TAX_RATE = 0.2


def format_price(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def checkout(cart: Cart) -> str:
    subtotal = cart.total()
    tax = round(subtotal * TAX_RATE)
    return format_price(subtotal + tax)


def quick_checkout(name: str, price_cents: int) -> str:
    cart = Cart()
    cart.add(Item(name, price_cents))
    return checkout(cart)
"#;

const CLI: &str = r#"from shop.checkout import checkout, quick_checkout
from shop.models import Cart, Item


def main(argv):
    if len(argv) == 3:
        print(quick_checkout(argv[1], int(argv[2])))
        return 0
    cart = Cart()
    for pair in argv[1:]:
        name, price = pair.split("=")
        cart.add(Item(name, int(price)))
    print(checkout(cart))
    return 0
"#;

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(full, text).unwrap();
}

fn project() -> (tempfile::TempDir, tempfile::TempDir, Engine) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    write(dir, "shop/__init__.py", "");
    write(dir, "shop/models.py", MODELS);
    write(dir, "shop/checkout.py", CHECKOUT);
    write(dir, "shop/cli.py", CLI);
    write(dir, "README.md", "# shop\n\nA tiny shop: `checkout(cart)` prices a cart with tax.\n");
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "shop"]);
    // A change in the working tree, for diff_preview.
    write(dir, "shop/checkout.py", &CHECKOUT.replace("TAX_RATE = 0.2", "TAX_RATE = 0.25"));
    let index = tempfile::tempdir().unwrap();
    let engine = Engine::new(crate::common::tool_config(dir, index.path())).unwrap();
    engine.refresh_index(&|_, _| {});
    (root, index, engine)
}

/// Every tool and mode, as an agent calls them.
fn calls() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("read file", "read", json!({"mode": "file", "target": "shop/models.py"})),
        ("read file, cut", "read", json!({"mode": "file", "target": "shop/models.py", "limit": 10})),
        (
            "read snippet",
            "read",
            json!({"mode": "snippet", "target": "shop/checkout.py", "start_line": 8, "end_line": 16}),
        ),
        ("read symbol", "read", json!({"mode": "symbol", "target": "Cart.add", "path": "shop/models.py"})),
        ("read outline file", "read", json!({"mode": "outline", "target": "shop/models.py"})),
        ("read outline dir", "read", json!({"mode": "outline", "target": "shop"})),
        ("read diff_preview file", "read", json!({"mode": "diff_preview", "target": "shop/checkout.py"})),
        ("read diff_preview dir", "read", json!({"mode": "diff_preview", "target": "."})),
        ("read error", "read", json!({"mode": "file", "target": "shop/nope.py"})),
        ("search symbol", "search", json!({"query": "checkout", "type": "symbol"})),
        ("search text", "search", json!({"query": "cart", "type": "text"})),
        ("search regex", "search", json!({"query": "def \\w+\\(self", "type": "regex"})),
        ("search text, context", "search", json!({"query": "cart", "type": "text", "context_lines": 1})),
        ("search files", "search", json!({"query": "cart", "type": "text", "output": "files"})),
        ("search file", "search", json!({"query": "models.py", "type": "file"})),
        ("search directory", "search", json!({"query": "shop", "type": "directory"})),
        ("search none", "search", json!({"query": "no_such_thing_anywhere", "type": "text"})),
        ("analyze calls", "analyze", json!({"mode": "calls", "target": "checkout", "path": "shop/checkout.py"})),
        ("analyze references", "analyze", json!({"mode": "references", "target": "Cart", "path": "shop/models.py"})),
        ("analyze dependencies", "analyze", json!({"mode": "dependencies", "target": "shop/cli.py"})),
        ("analyze impact", "analyze", json!({"mode": "impact", "target": "shop/models.py"})),
        ("analyze types", "analyze", json!({"mode": "types", "target": "Item", "path": "shop/models.py"})),
        (
            "analyze data_flow",
            "analyze",
            json!({"mode": "data_flow", "target": "subtotal", "path": "shop/checkout.py"}),
        ),
        (
            "edit dry run",
            "edit",
            json!({"dry_run": true, "edits": [{"path": "shop/models.py", "operation": "replace", "old_string": "quantity: int = 1", "new_string": "quantity: int = 2"}]}),
        ),
        (
            "edit",
            "edit",
            json!({"edits": [{"path": "shop/cli.py", "operation": "replace", "old_string": "return 0\n", "new_string": "return 0  # done\n", "replace_all": true}]}),
        ),
        ("manage history", "manage", json!({"command": "history"})),
        ("manage undo", "manage", json!({"command": "undo"})),
        ("manage status", "manage", json!({"command": "status"})),
        ("manage metrics", "manage", json!({"command": "metrics"})),
        ("manage guidance", "manage", json!({"command": "guidance"})),
    ]
}

fn stringify(response: &Response, level: MetadataLevel) -> String {
    serde_json::to_string(&response.structured_at(level)).unwrap()
}

#[test]
fn the_compact_structured_face_costs_at_most_1_3x_the_text_face_plus_40() {
    let (_root, _index, engine) = project();
    let (mut text_sum, mut json_sum) = (0, 0);
    let mut over = Vec::new();
    for (name, tool, arguments) in calls() {
        // Each call in a session of its own: no read is shortened by an earlier one.
        let response = engine.call_in(&CallContext::new(name), tool, arguments);
        let text = tokens::count(&response.face);
        let json = tokens::count(&stringify(&response, MetadataLevel::Standard));
        eprintln!("{name:<24} text {text:>5}  structured {json:>5}  ratio {:.2}", json as f64 / text as f64);
        text_sum += text;
        json_sum += json;
        if let Ok(dir) = std::env::var("LOUPE_FACES_DUMP") {
            let file = name.replace(' ', "_");
            fs::write(format!("{dir}/{file}.txt"), &response.face).unwrap();
            fs::write(format!("{dir}/{file}.json"), stringify(&response, MetadataLevel::Standard)).unwrap();
        }
        if json * 10 > text * 13 + 400 {
            over.push(format!("{name}: {json} > 1.3 × {text} + 40"));
        }
        the_model_reads_every_line_of_the_face(name, &response);
    }
    eprintln!("all calls: text {text_sum}, structured {json_sum}, {:.3}×", json_sum as f64 / text_sum as f64);
    assert!(over.is_empty(), "over the bound:\n{}", over.join("\n"));
}

/// Every line of the text face is in the structured face: in its `text`, or (a search hit, an
/// analyze node) as a row that holds what the line shows.
fn the_model_reads_every_line_of_the_face(name: &str, response: &Response) {
    let structured = response.structured();
    // Every field is one the tool's output schema declares (they are made from this table).
    for key in structured.as_object().unwrap().keys() {
        let declared = loupe_engine::STRUCTURED_FIELDS
            .iter()
            .any(|field| field.name == key && (field.tools.is_empty() || field.tools.contains(&response.tool)));
        assert!(declared, "{name}: `{key}` is not in {}'s output schema", response.tool);
    }
    let text = structured["text"].as_str().unwrap();
    let empty = Vec::new();
    let mut hits = structured["results"].as_array().unwrap_or(&empty).iter().peekable();
    let nodes = structured["nodes"].as_array().unwrap_or(&empty);
    let mut kept = text.lines().peekable();
    let mut face = response.face.lines();
    // The `line, shown` pairs of the text row whose path line came last.
    let mut pairs: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    while let Some(line) = face.next() {
        if kept.peek() == Some(&line) {
            kept.next();
            continue;
        }
        // A read's header: its hash is `file_hash`, the text has the rest of the line.
        if let Some(hash) = structured["file_hash"].as_str()
            && kept.peek().copied() == Some(line.replacen(&format!(" · hash {hash}"), "", 1).as_str())
        {
            kept.next();
            continue;
        }
        // An edit's undo call is carried by `transaction_id`.
        if let Some(id) = structured["transaction_id"].as_str()
            && line == format!("→ next: manage {}", json!({"command": "undo", "transaction_id": id}))
        {
            continue;
        }
        // A next call the text leaves out is in `next_calls`.
        if let Some(call) = line.strip_prefix("→ next: ") {
            let calls = structured["next_calls"].as_array().unwrap_or(&empty);
            let carried = calls.iter().any(|carried| {
                let shape = format!("{} {}", carried["tool"].as_str().unwrap(), carried["arguments"]);
                shape == call
            });
            assert!(carried, "{name}: the next call {line:?} is not in next_calls");
            continue;
        }
        // A line the text leaves out is a row's. A node row is `path#name:line`, or the id
        // alone.
        if !nodes.is_empty() {
            let shows = |node: &&Value| {
                let row = node.as_str().unwrap();
                let id =
                    row.rsplit_once(':').filter(|(_, line)| line.parse::<usize>().is_ok()).map_or(row, |(id, _)| id);
                let (path, name) = id.split_once('#').unwrap_or((id, ""));
                line.contains(path) && (name.starts_with('<') || line.contains(name))
            };
            assert!(nodes.iter().any(|node| shows(&node)), "{name}: no node row shows {line:?}");
            continue;
        }
        // A file's text hits are one row, `[path, line, shown, line, shown, …]`: the path alone
        // on a line, then a line `line shown` for each pair, in the row's order.
        if pairs.front() == Some(&line.to_owned()) {
            pairs.pop_front();
            continue;
        }
        assert!(pairs.is_empty(), "{name}: the text hits {pairs:?} are not shown in the row's order");
        let next_row = hits.peek().and_then(|hit| hit.as_array()).cloned().unwrap_or_default();
        let text_row = next_row.len() % 2 == 1 && next_row.len() >= 3 && next_row[1].is_u64();
        if text_row && line == next_row[0].as_str().unwrap() {
            hits.next();
            for pair in next_row[1..].chunks(2) {
                pairs.push_back(format!("{} {}", pair[0], pair[1].as_str().unwrap()));
            }
            continue;
        }
        // A symbol hit's row is `[path, line, candidate_id, shown]`, in the face's order.
        let hit = hits.next().unwrap_or_else(|| panic!("{name}: no row shows {line:?} ({structured})"));
        // A file or directory hit is its path alone, on both faces.
        if let Some(path) = hit.as_str() {
            assert_eq!(line, path, "{name}: a file hit's row is its path");
            continue;
        }
        // A file of `output: files` is its path and its count.
        if hit.as_array().is_some_and(|row| row.len() == 2) {
            assert_eq!(line, format!("{} {}", hit[0].as_str().unwrap(), hit[1].as_u64().unwrap()), "{name}");
            continue;
        }
        // A text hit with context: its place, then its lines (the row's `shown`).
        if hit.as_array().is_some_and(|row| row.len() == 3) {
            assert!(
                line.starts_with(&format!("{}:{}", hit[0].as_str().unwrap(), hit[1])),
                "{name}: {line:?} is not {hit}"
            );
            for expected in hit[2].as_str().unwrap().lines() {
                assert_eq!(face.next(), Some(expected), "{name}: the hit {hit}");
            }
            continue;
        }
        let (path, id) = (hit[0].as_str().unwrap(), hit[2].as_str().unwrap());
        assert!(line.starts_with(path), "{name}: {line:?} is not the hit {hit}");
        assert!(line.ends_with(&format!("  [{id}]")), "{name}: {line:?} does not end with the hit's id");
        match hit.get(3).and_then(Value::as_str) {
            // A hit with context: its place and id, then its lines.
            Some(shown) if !line.contains(shown) => {
                for expected in shown.lines() {
                    assert_eq!(face.next(), Some(expected), "{name}: the hit {hit}");
                }
            }
            Some(_) | None => {}
        }
    }
    assert!(kept.next().is_none(), "{name}: the structured text has lines the face has not");
    assert!(hits.next().is_none(), "{name}: a row shows no line of the face");
}

#[test]
fn a_program_finds_what_it_acts_on_at_the_top_level() {
    let (_root, _index, engine) = project();
    let search = engine.call("search", json!({"query": "checkout", "type": "symbol"})).structured();
    // Each hit as `[path, line, candidate_id, shown]`, in rank order.
    let first = &search["results"][0];
    assert!(first[0].is_string() && first[1].is_u64() && first[2].is_string(), "{search}");
    assert!(first[3].as_str().unwrap().contains("def checkout"), "{search}");
    assert_eq!(search["ok"], json!(true));
    // A hit's read is offered by its id, and reading by the id reads the hit.
    let offered = search["next_calls"][0].clone();
    assert_eq!(offered, json!({"tool": "read", "arguments": {"candidate_id": first[2]}}), "{search}");
    let read = engine.call("read", offered["arguments"].clone());
    assert!(read.ok, "{}", read.face);
    assert!(read.face.contains(&format!("{} · lines", first[0].as_str().unwrap())), "{}", read.face);
    assert!(read.face.contains(&format!("{} def checkout", first[1])), "{}", read.face);
    // An id the session was never given is no read.
    let unknown = engine.call("read", json!({"candidate_id": "aaaaaaa"}));
    assert_eq!(unknown.error_code(), Some("INVALID_ARGS"), "{}", unknown.face);

    let cut = engine.call("read", json!({"mode": "file", "target": "shop/models.py", "limit": 10})).structured();
    assert_eq!(cut["truncated"], json!(true));
    assert!(cut["next_cursor"].is_string() && cut["file_hash"].is_string(), "{cut}");
    assert_eq!(cut["next_calls"][0]["arguments"]["cursor"], cut["next_cursor"]);

    let edit = engine.call(
        "edit",
        json!({"edits": [{"path": "README.md", "operation": "replace", "old_string": "tiny", "new_string": "small"}]}),
    );
    assert!(edit.structured()["transaction_id"].is_string(), "{}", edit.structured());

    let analyze =
        engine.call("analyze", json!({"mode": "calls", "target": "checkout", "path": "shop/checkout.py"})).structured();
    // The graph is read as lines, as the text face has them (no rows joined by index), the
    // resolved target first; `full` has the target, the nodes and the edges.
    assert!(["resolved_target", "nodes", "edges"].iter().all(|field| analyze.get(*field).is_none()), "{analyze}");
    let text = analyze["text"].as_str().unwrap();
    assert!(text.contains("shop/checkout.py:12"), "the target's line: {analyze}");
    let full = engine
        .call("analyze", json!({"mode": "calls", "target": "checkout", "path": "shop/checkout.py", "metadata": "full"}))
        .structured();
    assert!(full["nodes"][0]["id"] == json!("shop/checkout.py#checkout") && full["edges"].is_array(), "{full}");
    assert!(full["resolved_target"].is_object(), "{full}");

    let error = engine.call("read", json!({"mode": "file", "target": "shop/nope.py"})).structured();
    assert_eq!((error["ok"].clone(), error["error"]["code"].clone()), (json!(false), json!("FILE_NOT_FOUND")));
}

#[test]
fn every_level_carries_the_text_and_full_adds_the_envelope() {
    let (_root, _index, engine) = project();
    let arguments = |level: &str| json!({"mode": "snippet", "target": "shop/checkout.py", "start_line": 1, "end_line": 3, "metadata": level});
    let minimal = engine.call_in(&CallContext::new("minimal"), "read", arguments("minimal"));
    let full = engine.call_in(&CallContext::new("full"), "read", arguments("full"));
    // The compact text is the face without the header's hash, which `file_hash` carries.
    let hash = minimal.structured()["file_hash"].as_str().unwrap().to_owned();
    assert!(minimal.face.contains(&format!(" · hash {hash}\n")), "{}", minimal.face);
    assert_eq!(minimal.structured()["text"], Value::from(minimal.face.replacen(&format!(" · hash {hash}"), "", 1)));
    assert!(minimal.structured().get("meta").is_none());
    let envelope = full.structured();
    assert_eq!(envelope["text"], Value::from(full.face.as_str()));
    assert_eq!(
        envelope["content"],
        json!("\"\"\"Checkout: turns a cart into an order.\"\"\"\n\nfrom shop.models import Cart, Item\n")
    );
    assert!(envelope["meta"]["stabilization"].is_object() && envelope["meta"]["token_estimate"].is_u64());
    assert_eq!(envelope["location"]["line"], json!(1));

    // The configured default applies to calls that do not say.
    let (_root, _index, engine) = {
        let (root, index, _) = project();
        let config =
            Config { structured_content: MetadataLevel::Full, ..crate::common::tool_config(root.path(), index.path()) };
        let engine = Engine::new(config).unwrap();
        (root, index, engine)
    };
    let response =
        engine.call("read", json!({"mode": "snippet", "target": "README.md", "start_line": 1, "end_line": 1}));
    assert!(response.structured()["meta"].is_object());
}
