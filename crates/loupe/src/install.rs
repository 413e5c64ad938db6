//! `loupe install` and `loupe uninstall`: register `loupe serve` with the MCP clients a user
//! has, by editing each client's own config file in place.
//!
//! Every client is a row of [`CLIENTS`]: where its file lives in each scope, its format, and the
//! settings loupe adds to it. A setting is a named entry in an object (`mcpServers.loupe`) or a
//! member of an array (Claude Code's approved project servers, its `PreToolUse` hooks). Files are
//! edited through a syntax tree that keeps what it does not touch byte for byte (comments,
//! order, indentation), the change is shown as a diff before it is written, and the write is
//! atomic. What install had to create (a file, a directory, an empty container object) is
//! remembered in `installed.json` beside the user's loupe config, so that uninstall removes
//! exactly what install added and nothing the user had before.

// This module writes client config files by design: the workspace rule against `std::fs`
// writes is about the repository being served, which this never touches.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Value, json};

/// Where a client's config file is looked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Scope {
    /// The repository's own files (committed, shared with the team).
    Project,
    /// The user's files: every project this user opens.
    User,
}

/// Which built-in tool calls the Claude Code hook steers (`loupe hook claude-code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum HookMode {
    /// Let the call run, and add the loupe call that answers it as context.
    Suggest,
    /// Deny the call, giving the loupe call as the reason.
    Redirect,
}

impl HookMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            HookMode::Suggest => "suggest",
            HookMode::Redirect => "redirect",
        }
    }
}

/// The places a client's file may be in: read from the environment once, given to tests.
#[derive(Clone, Debug)]
pub(crate) struct Places {
    pub(crate) home: PathBuf,
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    pub(crate) config_home: PathBuf,
    /// The platform's per-user application data (`~/Library/Application Support`,
    /// `%APPDATA%`, `~/.config`).
    pub(crate) app_data: PathBuf,
    /// The project (the root loupe would serve from here).
    pub(crate) project: Option<PathBuf>,
    /// `$CODEX_HOME`, else `~/.codex`.
    pub(crate) codex_home: PathBuf,
    /// The client programs found on `PATH`.
    pub(crate) on_path: BTreeSet<&'static str>,
}

impl Places {
    pub(crate) fn from_env(project: Option<PathBuf>) -> anyhow::Result<Places> {
        let home = std::env::home_dir().context("no home directory (set HOME)")?;
        let absolute = |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|path| path.is_absolute());
        let config_home = absolute("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"));
        let app_data = if cfg!(target_os = "macos") {
            home.join("Library").join("Application Support")
        } else if cfg!(windows) {
            absolute("APPDATA").unwrap_or_else(|| home.join("AppData").join("Roaming"))
        } else {
            config_home.clone()
        };
        let codex_home = absolute("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
        let on_path = CLIENTS
            .iter()
            .flat_map(|client| client.programs)
            .copied()
            .filter(|program| which::which(program).is_ok())
            .collect();
        Ok(Places { home, config_home, app_data, project, codex_home, on_path })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Json,
    Toml,
}

/// One thing loupe adds to a file.
#[derive(Clone, Debug)]
enum Setting {
    /// `keys…` is an object holding `name: value`.
    Entry { keys: &'static [&'static str], name: &'static str, value: Value },
    /// `keys…` is an array holding `value`; an element is loupe's when `ours` says so.
    Member { keys: &'static [&'static str], value: Value, ours: fn(&Value) -> bool },
}

/// A file and what loupe adds to it.
#[derive(Clone, Debug)]
struct Target {
    path: PathBuf,
    format: Format,
    settings: Vec<Setting>,
}

/// What the server entry runs: the command and, for clients that neither start the server in
/// the project nor send MCP roots, the variable naming the workspace.
#[derive(Clone, Debug)]
pub(crate) struct Launch {
    pub(crate) command: String,
    pub(crate) hooks: Option<HookMode>,
}

/// A client loupe can set up.
pub(crate) struct Client {
    pub(crate) id: &'static str,
    pub(crate) name: &'static str,
    /// Programs whose presence on `PATH` means the client is installed.
    programs: &'static [&'static str],
    /// Its files for a scope, or `None` where it has no such scope.
    targets: fn(&Places, Scope, &Launch) -> Option<Vec<Target>>,
    /// Directories (under the home or app data) whose presence means the client is installed.
    marks: fn(&Places) -> Vec<PathBuf>,
    /// Said when the client is set up: what it needs beyond the file.
    pub(crate) note: &'static str,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id)
    }
}

fn is_loupe(value: &Value) -> bool {
    value.as_str() == Some("loupe")
}

/// A `PreToolUse` group is loupe's when one of its hooks runs `… hook claude-code`.
fn is_loupe_hook(value: &Value) -> bool {
    value["hooks"].as_array().is_some_and(|hooks| {
        hooks.iter().any(|hook| hook["command"].as_str().is_some_and(|command| command.contains(" hook claude-code")))
    })
}

/// The tools the Claude Code hook looks at: whole-file reads and greps, as `Read` and `Grep` or
/// as `cat` and `rg` in `Bash` (globs it leaves alone, so it is not spawned for them; `hook.rs`).
pub(crate) const HOOK_MATCHER: &str = "Read|Grep|Bash";

fn server(launch: &Launch, extra: Value) -> Value {
    let mut entry = json!({"command": launch.command, "args": ["serve"]});
    if let (Value::Object(entry), Value::Object(extra)) = (&mut entry, extra) {
        entry.extend(extra);
    }
    entry
}

fn quoted_command(command: &str) -> String {
    if command.chars().all(|c| c.is_ascii_alphanumeric() || "/._-:\\".contains(c)) {
        command.to_owned()
    } else {
        format!("\"{}\"", command.replace('"', "\\\""))
    }
}

/// One JSON file holding loupe's server entry at `keys.loupe`: what most clients need.
fn json_entry(path: PathBuf, keys: &'static [&'static str], value: Value) -> Vec<Target> {
    vec![Target { path, format: Format::Json, settings: vec![Setting::Entry { keys, name: "loupe", value }] }]
}

fn claude_code(places: &Places, scope: Scope, launch: &Launch) -> Option<Vec<Target>> {
    let entry = server(launch, json!({"type": "stdio"}));
    let mut targets = match scope {
        Scope::User => json_entry(places.home.join(".claude.json"), &["mcpServers"], entry),
        Scope::Project => {
            let project = places.project.as_ref()?;
            let mut targets = json_entry(project.join(".mcp.json"), &["mcpServers"], entry);
            // A project's servers wait for the user's approval; running install is it.
            targets.push(Target {
                path: project.join(".claude").join("settings.local.json"),
                format: Format::Json,
                settings: vec![Setting::Member {
                    keys: &["enabledMcpjsonServers"],
                    value: json!("loupe"),
                    ours: is_loupe,
                }],
            });
            targets
        }
    };
    if let Some(mode) = launch.hooks {
        let command = format!("{} hook claude-code --mode {}", quoted_command(&launch.command), mode.as_str());
        let path = match scope {
            Scope::User => places.home.join(".claude").join("settings.json"),
            Scope::Project => places.project.as_ref()?.join(".claude").join("settings.json"),
        };
        targets.push(Target {
            path,
            format: Format::Json,
            settings: vec![Setting::Member {
                keys: &["hooks", "PreToolUse"],
                value: json!({
                    "matcher": HOOK_MATCHER,
                    "hooks": [{"type": "command", "command": command, "timeout": 5}],
                }),
                ours: is_loupe_hook,
            }],
        });
    }
    Some(targets)
}

fn codex(places: &Places, scope: Scope, launch: &Launch) -> Option<Vec<Target>> {
    // Codex reads MCP servers from its user config only (a project's `.codex/config.toml` is
    // not consulted by `codex mcp list`, 0.171); it starts them in the project directory.
    (scope == Scope::User).then(|| {
        vec![Target {
            path: places.codex_home.join("config.toml"),
            format: Format::Toml,
            settings: vec![Setting::Entry { keys: &["mcp_servers"], name: "loupe", value: server(launch, json!({})) }],
        }]
    })
}

fn cursor(places: &Places, scope: Scope, launch: &Launch) -> Option<Vec<Target>> {
    // Cursor starts a server without the project as its directory and sends no roots, but it
    // expands `${workspaceFolder}`; `LOUPE_ROOT` ranks below client roots, so one that does
    // send them still wins.
    let entry = server(launch, json!({"env": {"LOUPE_ROOT": "${workspaceFolder}"}}));
    let dir = match scope {
        Scope::User => places.home.join(".cursor"),
        Scope::Project => places.project.as_ref()?.join(".cursor"),
    };
    Some(json_entry(dir.join("mcp.json"), &["mcpServers"], entry))
}

fn vscode(places: &Places, scope: Scope, launch: &Launch) -> Option<Vec<Target>> {
    // VS Code sends the workspace folders as MCP roots: no variable needed.
    let path = match scope {
        Scope::User => places.app_data.join("Code").join("User").join("mcp.json"),
        Scope::Project => places.project.as_ref()?.join(".vscode").join("mcp.json"),
    };
    Some(json_entry(path, &["servers"], server(launch, json!({"type": "stdio"}))))
}

fn gemini(places: &Places, scope: Scope, launch: &Launch) -> Option<Vec<Target>> {
    let dir = match scope {
        Scope::User => places.home.join(".gemini"),
        Scope::Project => places.project.as_ref()?.join(".gemini"),
    };
    Some(json_entry(dir.join("settings.json"), &["mcpServers"], server(launch, json!({}))))
}

fn windsurf(places: &Places, scope: Scope, launch: &Launch) -> Option<Vec<Target>> {
    let path = places.home.join(".codeium").join("windsurf").join("mcp_config.json");
    (scope == Scope::User).then(|| json_entry(path, &["mcpServers"], server(launch, json!({}))))
}

fn zed(places: &Places, scope: Scope, launch: &Launch) -> Option<Vec<Target>> {
    let path = match scope {
        Scope::User if cfg!(windows) => places.app_data.join("Zed").join("settings.json"),
        Scope::User => places.config_home.join("zed").join("settings.json"),
        Scope::Project => places.project.as_ref()?.join(".zed").join("settings.json"),
    };
    Some(json_entry(path, &["context_servers"], server(launch, json!({}))))
}

pub(crate) const CLIENTS: &[Client] = &[
    Client {
        id: "claude-code",
        name: "Claude Code",
        programs: &["claude"],
        targets: claude_code,
        marks: |places| vec![places.home.join(".claude")],
        note: "check: claude mcp list",
    },
    Client {
        id: "codex",
        name: "Codex CLI",
        programs: &["codex"],
        targets: codex,
        marks: |places| vec![places.codex_home.clone()],
        note: "check: codex mcp list",
    },
    Client {
        id: "cursor",
        name: "Cursor",
        programs: &["cursor"],
        targets: cursor,
        marks: |places| vec![places.home.join(".cursor")],
        note: "Cursor: enable loupe under Settings → MCP if it asks",
    },
    Client {
        id: "vscode",
        name: "VS Code",
        programs: &["code"],
        targets: vscode,
        marks: |places| vec![places.app_data.join("Code").join("User")],
        note: "VS Code: start it from the MCP view, or let chat start it",
    },
    Client {
        id: "gemini",
        name: "Gemini CLI",
        programs: &["gemini"],
        targets: gemini,
        marks: |places| vec![places.home.join(".gemini")],
        note: "check: gemini mcp list",
    },
    Client {
        id: "windsurf",
        name: "Windsurf",
        programs: &["windsurf"],
        targets: windsurf,
        marks: |places| vec![places.home.join(".codeium").join("windsurf")],
        note: "Windsurf: refresh the MCP servers list",
    },
    Client {
        id: "zed",
        name: "Zed",
        programs: &["zed", "zeditor"],
        targets: zed,
        marks: |places| vec![places.config_home.join("zed"), places.app_data.join("Zed")],
        note: "Zed: loupe appears under the agent panel's context servers",
    },
];

pub(crate) fn client(id: &str) -> Option<&'static Client> {
    CLIENTS.iter().find(|client| client.id == id)
}

impl Client {
    /// Whether this client looks installed: its program on `PATH` or its config directory.
    pub(crate) fn present(&self, places: &Places) -> bool {
        self.programs.iter().any(|program| places.on_path.contains(program))
            || (self.marks)(places).iter().any(|mark| mark.is_dir())
    }
}

// ---------------------------------------------------------------------------------------------
// Documents: JSON (with comments) through jsonc-parser's CST, TOML through toml_edit.

enum Doc {
    Json(jsonc_parser::cst::CstRootNode),
    Toml(toml_edit::DocumentMut),
}

/// The order keys are written in: what a reader looks for first (an object's other keys follow
/// in their own order).
const KEY_ORDER: &[&str] =
    &["query", "type", "command", "args", "env", "matcher", "hooks", "timeout", "path", "glob", "file_types"];

/// `map`'s entries in [`KEY_ORDER`].
pub(crate) fn ordered(map: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by_key(|(key, _)| KEY_ORDER.iter().position(|k| k == key).unwrap_or(KEY_ORDER.len()));
    entries
}

/// `value` as compact JSON with objects' keys in [`KEY_ORDER`].
pub(crate) fn ordered_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let fields: Vec<String> = ordered(map)
                .into_iter()
                .map(|(key, value)| format!("{}:{}", Value::from(key.as_str()), ordered_json(value)))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(ordered_json).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

fn to_input(value: &Value) -> jsonc_parser::cst::CstInputValue {
    use jsonc_parser::cst::CstInputValue;
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(to_input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(ordered(map).into_iter().map(|(k, v)| (k.clone(), to_input(v))).collect())
        }
    }
}

fn toml_value(value: &Value) -> Option<toml_edit::Value> {
    Some(match value {
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64()?.into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => toml_edit::Value::Array(items.iter().map(toml_value).collect::<Option<_>>()?),
        Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (key, value) in ordered(map) {
                table.insert(key, toml_value(value)?);
            }
            toml_edit::Value::InlineTable(table)
        }
        Value::Null => return None,
    })
}

fn toml_json(item: &toml_edit::Item) -> Value {
    fn of_value(value: &toml_edit::Value) -> Value {
        match value {
            toml_edit::Value::String(s) => json!(s.value()),
            toml_edit::Value::Integer(i) => json!(i.value()),
            toml_edit::Value::Float(f) => json!(f.value()),
            toml_edit::Value::Boolean(b) => json!(b.value()),
            toml_edit::Value::Datetime(d) => json!(d.value().to_string()),
            toml_edit::Value::Array(items) => Value::Array(items.iter().map(of_value).collect()),
            toml_edit::Value::InlineTable(table) => {
                Value::Object(table.iter().map(|(k, v)| (k.to_owned(), of_value(v))).collect())
            }
        }
    }
    match item {
        toml_edit::Item::None => Value::Null,
        toml_edit::Item::Value(value) => of_value(value),
        toml_edit::Item::Table(table) => {
            Value::Object(table.iter().map(|(k, v)| (k.to_owned(), toml_json(v))).collect())
        }
        toml_edit::Item::ArrayOfTables(tables) => Value::Array(
            tables
                .iter()
                .map(|t| Value::Object(t.iter().map(|(k, v)| (k.to_owned(), toml_json(v))).collect()))
                .collect(),
        ),
    }
}

impl Doc {
    fn parse(format: Format, text: &str, path: &Path) -> anyhow::Result<Doc> {
        Ok(match format {
            Format::Json => Doc::Json(
                jsonc_parser::cst::CstRootNode::parse(text, &jsonc_parser::ParseOptions::default())
                    .map_err(|error| anyhow::anyhow!("{}: not valid JSON: {error}", path.display()))?,
            ),
            Format::Toml => Doc::Toml(
                text.parse::<toml_edit::DocumentMut>()
                    .map_err(|error| anyhow::anyhow!("{}: not valid TOML: {error}", path.display()))?,
            ),
        })
    }

    fn text(&self) -> String {
        match self {
            Doc::Json(root) => root.to_string(),
            Doc::Toml(doc) => doc.to_string(),
        }
    }

    /// The value at `keys`, as JSON (`Null` when absent).
    fn get(&self, keys: &[&str]) -> Value {
        match self {
            Doc::Json(root) => {
                let mut value = root.value().and_then(|value| value.to_serde_value()).unwrap_or(Value::Null);
                for key in keys {
                    value = value.get(key).cloned().unwrap_or(Value::Null);
                }
                value
            }
            Doc::Toml(doc) => {
                let mut item = doc.as_item();
                for key in keys {
                    match item.get(key) {
                        Some(next) => item = next,
                        None => return Value::Null,
                    }
                }
                toml_json(item)
            }
        }
    }

    /// The object at `keys`, created (and with it every missing parent) when absent.
    fn json_object(root: &jsonc_parser::cst::CstRootNode, keys: &[&str]) -> jsonc_parser::cst::CstObject {
        let mut object = root.object_value_or_set();
        for key in keys {
            object = object.object_value_or_set(key);
        }
        object
    }

    fn set_entry(&mut self, keys: &[&str], name: &str, value: &Value) -> anyhow::Result<()> {
        match self {
            Doc::Json(root) => {
                let object = Doc::json_object(root, keys);
                match object.get(name) {
                    Some(prop) => prop.set_value(to_input(value)),
                    None => {
                        object.append(name, to_input(value));
                    }
                }
            }
            Doc::Toml(doc) => {
                let mut table = doc.as_table_mut();
                for key in keys {
                    let item = table.entry(key).or_insert_with(|| {
                        let mut new = toml_edit::Table::new();
                        new.set_implicit(true);
                        toml_edit::Item::Table(new)
                    });
                    table = item.as_table_mut().with_context(|| format!("`{key}` is not a table"))?;
                }
                let Value::Object(fields) = value else { bail!("a TOML entry must be a table") };
                let mut entry = toml_edit::Table::new();
                for (key, value) in ordered(fields) {
                    entry.insert(key, toml_edit::Item::Value(toml_value(value).context("null in a TOML entry")?));
                }
                table.insert(name, toml_edit::Item::Table(entry));
            }
        }
        Ok(())
    }

    fn remove_entry(&mut self, keys: &[&str], name: &str) {
        match self {
            Doc::Json(root) => {
                let mut object = root.object_value();
                for key in keys {
                    object = object.and_then(|object| object.object_value(key));
                }
                if let Some(prop) = object.and_then(|object| object.get(name)) {
                    prop.remove();
                }
            }
            Doc::Toml(doc) => {
                let mut table = Some(doc.as_table_mut());
                for key in keys {
                    table = table.and_then(|table| table.get_mut(key)).and_then(toml_edit::Item::as_table_mut);
                }
                if let Some(table) = table {
                    table.remove(name);
                }
            }
        }
    }

    /// Puts `value` in the array at `keys`, replacing the element `ours` picks (JSON only).
    fn set_member(&mut self, keys: &[&str], value: &Value, ours: fn(&Value) -> bool) -> anyhow::Result<()> {
        let Doc::Json(root) = self else { bail!("array settings are JSON only") };
        let (last, parents) = keys.split_last().context("no key")?;
        let array = Doc::json_object(root, parents).array_value_or_set(last);
        let elements = array.elements();
        let ours_at: Vec<usize> = elements
            .iter()
            .enumerate()
            .filter(|(_, element)| element.to_serde_value().as_ref().is_some_and(ours))
            .map(|(index, _)| index)
            .collect();
        match ours_at.split_first() {
            None => {
                array.append(to_input(value));
            }
            Some((&first, rest)) => {
                for &index in rest.iter().rev() {
                    elements[index].clone().remove();
                }
                if elements[first].to_serde_value().as_ref() != Some(value) {
                    elements[first].clone().remove();
                    array.insert(first, to_input(value));
                }
            }
        }
        Ok(())
    }

    fn remove_members(&mut self, keys: &[&str], ours: fn(&Value) -> bool) {
        let Doc::Json(root) = self else { return };
        let Some((last, parents)) = keys.split_last() else { return };
        let mut object = root.object_value();
        for key in parents {
            object = object.and_then(|object| object.object_value(key));
        }
        if let Some(array) = object.and_then(|object| object.array_value(last)) {
            for element in array.elements() {
                if element.to_serde_value().as_ref().is_some_and(ours) {
                    element.remove();
                }
            }
        }
    }

    /// Removes the container at `keys` if it holds nothing.
    fn remove_if_empty(&mut self, keys: &[&str]) {
        let empty = match self.get(keys) {
            Value::Object(map) => map.is_empty(),
            Value::Array(items) => items.is_empty(),
            _ => false,
        };
        let Some((last, parents)) = keys.split_last() else { return };
        if empty {
            self.remove_entry(parents, last);
        }
    }

    fn is_empty(&self) -> bool {
        match self.get(&[]) {
            Value::Object(map) => map.is_empty(),
            Value::Null => true,
            _ => false,
        }
    }
}

/// The text after applying or removing `settings`, and the containers it had to create.
fn edited(
    target: &Target,
    before: Option<&str>,
    install: bool,
    created: &BTreeSet<String>,
) -> anyhow::Result<(String, Vec<String>)> {
    let mut doc = Doc::parse(target.format, before.unwrap_or(""), &target.path)?;
    let mut made = Vec::new();
    for setting in &target.settings {
        let keys = match setting {
            Setting::Entry { keys, .. } => *keys,
            Setting::Member { keys, .. } => *keys,
        };
        if install {
            for depth in 1..=keys.len() {
                if doc.get(&keys[..depth]).is_null() {
                    made.push(keys[..depth].join("."));
                }
            }
            match setting {
                Setting::Entry { keys, name, value } => {
                    if doc.get(keys).get(name) != Some(value) {
                        doc.set_entry(keys, name, value)?;
                    }
                }
                Setting::Member { keys, value, ours } => {
                    let current = doc.get(keys);
                    let ours_now: Vec<&Value> =
                        current.as_array().map(|items| items.iter().filter(|v| ours(v)).collect()).unwrap_or_default();
                    if ours_now != [value] {
                        doc.set_member(keys, value, *ours)?;
                    }
                }
            }
        } else {
            match setting {
                Setting::Entry { keys, name, .. } => doc.remove_entry(keys, name),
                Setting::Member { keys, ours, .. } => doc.remove_members(keys, *ours),
            }
            for depth in (1..=keys.len()).rev() {
                if created.contains(&keys[..depth].join(".")) {
                    doc.remove_if_empty(&keys[..depth]);
                }
            }
        }
    }
    let mut text = doc.text();
    if before.is_none_or(str::is_empty) && !text.ends_with('\n') {
        text.push('\n');
    }
    Ok((text, made))
}

// ---------------------------------------------------------------------------------------------
// The record of what install created.

/// What install created, so that uninstall removes it and nothing else: files, directories
/// (as paths) and containers (as `path#key.key`); and each file it edited as it was before,
/// with the hash of what install left, so that an uninstall finding the file as install left
/// it puts back the user's bytes exactly (a one-line object install had to unfold included).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Record {
    created: BTreeSet<String>,
    #[serde(default)]
    saved: std::collections::BTreeMap<String, Saved>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Saved {
    before: String,
    after_hash: String,
}

fn text_hash(text: &str) -> String {
    loupe_core::hash::ContentHash::of(text.as_bytes()).as_str().to_owned()
}

impl Record {
    fn path(places: &Places) -> PathBuf {
        places.config_home.join("loupe").join("installed.json")
    }

    fn load(places: &Places) -> Record {
        std::fs::read(Record::path(places))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn save(&self, places: &Places) -> anyhow::Result<()> {
        let path = Record::path(places);
        if self.created.is_empty() && self.saved.is_empty() {
            match std::fs::remove_file(&path) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error.into()),
                _ => return Ok(()),
            }
        }
        let text = serde_json::to_string_pretty(self)? + "\n";
        write_atomically(&path, &text, None)?;
        // It holds copies of client configs, which may hold tokens: the user's eyes only.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(())
    }

    fn containers(&self, path: &Path) -> BTreeSet<String> {
        let prefix = format!("{}#", path.display());
        self.created.iter().filter_map(|entry| entry.strip_prefix(&prefix)).map(str::to_owned).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Plans: what would change, shown, then written.

/// One file's change.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) client: &'static str,
    pub(crate) path: PathBuf,
    pub(crate) before: Option<String>,
    /// `None`: the file goes (uninstall of a file install created).
    pub(crate) after: Option<String>,
    /// The containers (`key.key`) install creates in the file, or uninstall takes out of it.
    containers: Vec<String>,
}

impl Change {
    pub(crate) fn changes(&self) -> bool {
        self.before != self.after
    }
}

/// What `install` or `uninstall` would do for these clients.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub(crate) changes: Vec<Change>,
    /// Clients that have no file for the scope asked for, with the reason.
    pub(crate) skipped: Vec<(&'static str, String)>,
}

fn read_config(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(anyhow::Error::new(error).context(format!("cannot read {}", path.display()))),
    }
}

pub(crate) fn plan(
    clients: &[&'static Client],
    places: &Places,
    scope: Scope,
    launch: &Launch,
    install: bool,
) -> anyhow::Result<Plan> {
    let record = Record::load(places);
    let mut plan = Plan::default();
    for client in clients {
        let Some(targets) = (client.targets)(places, scope, launch) else {
            let why = match (scope, places.project.is_some()) {
                (Scope::Project, true) => format!("{} has no project config; use --scope user", client.name),
                (Scope::Project, false) => "no project here (not in a repository)".to_owned(),
                (Scope::User, _) => format!("{} has no user config; use --scope project", client.name),
            };
            plan.skipped.push((client.id, why));
            continue;
        };
        for target in targets {
            let before = read_config(&target.path)?;
            if !install && before.is_none() {
                continue;
            }
            let created = record.containers(&target.path);
            let key = target.path.display().to_string();
            let (text, mut containers) = match (install, record.saved.get(&key), before.as_deref()) {
                // As install left it: the user's own bytes go back.
                (false, Some(saved), Some(now)) if text_hash(now) == saved.after_hash => {
                    (saved.before.clone(), Vec::new())
                }
                _ => edited(&target, before.as_deref(), install, &created)?,
            };
            let mut after = Some(text);
            if !install {
                // The containers install made that the file no longer has, and the file itself
                // when install made it and nothing is left in it.
                let doc = Doc::parse(target.format, after.as_deref().unwrap_or_default(), &target.path)?;
                containers = created
                    .iter()
                    .filter(|keys| doc.get(&keys.split('.').collect::<Vec<_>>()).is_null())
                    .cloned()
                    .collect();
                if record.created.contains(&key) && doc.is_empty() {
                    after = None;
                }
            }
            plan.changes.push(Change { client: client.id, path: target.path, before, after, containers });
        }
    }
    Ok(plan)
}

/// The plan as a reader sees it: per file, a unified diff, or that nothing changes.
pub(crate) fn show(plan: &Plan, home: &Path) -> String {
    let mut out = String::new();
    for change in &plan.changes {
        let name = shown_path(&change.path, home);
        if !change.changes() {
            let _ = writeln!(out, "{}: {name} already as wanted", change.client);
            continue;
        }
        let verb = match (&change.before, &change.after) {
            (None, _) => "create",
            (_, None) => "delete",
            _ => "edit",
        };
        let _ = writeln!(out, "{}: {verb} {name}", change.client);
        let before = change.before.as_deref().unwrap_or("");
        let after = change.after.as_deref().unwrap_or("");
        let diff = similar::TextDiff::from_lines(before, after);
        let _ = write!(out, "{}", diff.unified_diff().context_radius(2).header(&name, &name));
    }
    for (client, why) in &plan.skipped {
        let _ = writeln!(out, "{client}: skipped: {why}");
    }
    out
}

fn shown_path(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

/// Writes the plan: each file atomically (a temporary beside it, renamed over it), keeping its
/// permissions and writing through a symlink to the file it names; directories are created as
/// needed; the record of what was created is updated last.
pub(crate) fn apply(plan: &Plan, places: &Places, install: bool) -> anyhow::Result<()> {
    let mut record = Record::load(places);
    for change in plan.changes.iter().filter(|change| change.changes()) {
        let path = dunce::canonicalize(&change.path).unwrap_or_else(|_| change.path.clone());
        // The file may have changed since it was read (a client rewriting its own config): then
        // the plan is stale, and writing it would lose that change.
        if read_config(&path)? != change.before {
            bail!("{} changed while loupe was editing it; run the command again", change.path.display());
        }
        let key = change.path.display().to_string();
        match &change.after {
            Some(text) => {
                if install && change.before.is_none() {
                    let mut dir = change.path.parent();
                    let mut new_dirs = Vec::new();
                    while let Some(d) = dir.filter(|d| !d.exists()) {
                        new_dirs.push(d.to_path_buf());
                        dir = d.parent();
                    }
                    std::fs::create_dir_all(change.path.parent().context("a file with no parent")?)?;
                    record.created.extend(new_dirs.iter().map(|d| d.display().to_string()));
                    record.created.insert(key.clone());
                }
                write_atomically(&path, text, change.before.as_ref().map(|_| path.as_path()))?;
                let containers = change.containers.iter().map(|keys| format!("{key}#{keys}"));
                if install {
                    record.created.extend(containers);
                    if let Some(before) = &change.before {
                        // Keep the oldest original while the file stays as install left it.
                        let original = match record.saved.remove(&key) {
                            Some(saved) if saved.after_hash == text_hash(before) => saved.before,
                            _ => before.clone(),
                        };
                        record.saved.insert(key.clone(), Saved { before: original, after_hash: text_hash(text) });
                    }
                } else {
                    for container in containers {
                        record.created.remove(&container);
                    }
                    record.saved.remove(&key);
                }
            }
            None => {
                std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
                let prefix = format!("{key}#");
                record.created.retain(|entry| entry != &key && !entry.starts_with(&prefix));
                record.saved.remove(&key);
                let mut dir = change.path.parent();
                while let Some(d) = dir.filter(|d| record.created.contains(&d.display().to_string())) {
                    if std::fs::remove_dir(d).is_err() {
                        break;
                    }
                    record.created.remove(&d.display().to_string());
                    dir = d.parent();
                }
            }
        }
    }
    record.save(places)
}

/// Writes `text` to `path` through a temporary file in the same directory, renamed over it; the
/// permissions of `keep` (the file being replaced) carry over.
fn write_atomically(path: &Path, text: &str, keep: Option<&Path>) -> anyhow::Result<()> {
    use std::io::Write;
    let dir = path.parent().context("a file with no parent")?;
    std::fs::create_dir_all(dir)?;
    let mut temporary =
        tempfile::NamedTempFile::new_in(dir).with_context(|| format!("cannot write in {}", dir.display()))?;
    temporary.write_all(text.as_bytes())?;
    temporary.as_file().sync_all()?;
    if let Some(permissions) = keep.and_then(|keep| std::fs::metadata(keep).ok()).map(|m| m.permissions()) {
        std::fs::set_permissions(temporary.path(), permissions)?;
    }
    temporary.persist(path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// For `loupe doctor`: per client, whether it is here, where loupe is set up for it (each
/// scope), whether the command there can be run, and what `loupe install` would change.
pub(crate) fn report(places: &Places, launch_for: impl Fn(Scope) -> Launch) -> String {
    let mut out = String::from("clients:\n");
    for client in CLIENTS {
        let mut lines = Vec::new();
        for scope in [Scope::User, Scope::Project] {
            let launch = launch_for(scope);
            let Some(targets) = (client.targets)(places, scope, &launch) else { continue };
            let scope_name = if scope == Scope::User { "user" } else { "project" };
            let Some(target) = targets.first() else { continue };
            let Ok(Some(text)) = read_config(&target.path) else { continue };
            let Ok(doc) = Doc::parse(target.format, &text, &target.path) else {
                lines.push(format!(
                    "{scope_name}: {} is not valid; loupe install cannot edit it",
                    shown_path(&target.path, &places.home)
                ));
                continue;
            };
            let Some(Setting::Entry { keys, name, .. }) = target.settings.first() else { continue };
            let entry = doc.get(keys).get(*name).cloned().unwrap_or(Value::Null);
            let Some(command) = entry["command"].as_str() else { continue };
            let runnable = which::which(command).is_ok();
            let current = plan(&[client], places, scope, &launch, true)
                .map(|plan| !plan.changes.iter().any(Change::changes))
                .unwrap_or(false);
            lines.push(format!(
                "{scope_name}: {} runs {command}{}{}",
                shown_path(&target.path, &places.home),
                if runnable { "" } else { " (NOT FOUND: clients cannot start it)" },
                if current { "" } else { "; `loupe install` would change it (--dry-run shows how)" },
            ));
        }
        let state = match (lines.is_empty(), client.present(places)) {
            (false, _) => lines.join("; "),
            (true, true) => format!("not set up: loupe install {}", client.id),
            (true, false) => "not found here".to_owned(),
        };
        let _ = writeln!(out, "  {:<12} {state}", client.name);
    }
    out
}

/// The command a client config should run. The project's files are shared, so they name
/// `loupe` and let each machine's `PATH` find it; the user's files name the absolute path of
/// the `loupe` on `PATH` (or of this binary), because editors started from a dock or a start
/// menu do not see the shell's `PATH`.
pub(crate) fn server_command(explicit: Option<String>, scope: Scope) -> String {
    if let Some(command) = explicit {
        return command;
    }
    if scope == Scope::Project {
        return "loupe".to_owned();
    }
    which::which("loupe")
        .ok()
        .or_else(|| std::env::current_exe().ok())
        .map(|path| dunce::simplified(&path).display().to_string())
        .unwrap_or_else(|| "loupe".to_owned())
}

/// At most 15 lines for `AGENTS.md` / `CLAUDE.md`: when to use which loupe tool.
pub(crate) const AGENTS_SNIPPET: &str = "\
## Code navigation: use loupe
This repository is served by the `loupe` MCP server. Prefer its tools to grep, find and cat:
- Find code with `search` (a symbol name, words, a regex, or a file name with type `file`); a
  text hit names the function it is in.
- Read a symbol by name (`read` mode `symbol`) or a file's outline before any whole file; then
  windows of lines (`read` mode `snippet`, `start_line`/`end_line`).
- Before changing a function: `analyze` mode `impact` or `calls` shows who depends on it.
- Change files with `edit` (guarded by the `file_hash` a read returned); `manage undo` reverts.
- Answers say what they left out and end with the exact next call: follow it.
";

const AGENTS_BEGIN: &str = "<!-- loupe: begin (loupe uninstall removes this block) -->";
const AGENTS_END: &str = "<!-- loupe: end -->";

/// The change that puts [`AGENTS_SNIPPET`] in `path` between markers (replacing an older copy),
/// or takes it out; a file left empty by taking it out goes.
pub(crate) fn agents_change(path: &Path, install: bool) -> anyhow::Result<Change> {
    let before = read_config(path)?;
    let text = before.clone().unwrap_or_default();
    let block = format!("{AGENTS_BEGIN}\n{AGENTS_SNIPPET}{AGENTS_END}\n");
    let existing = text.find(AGENTS_BEGIN).and_then(|start| {
        let end = text[start..].find(AGENTS_END)? + start + AGENTS_END.len();
        Some((start, end + usize::from(text[end..].starts_with('\n'))))
    });
    let after = match (existing, install) {
        (Some((start, end)), true) => Some(format!("{}{block}{}", &text[..start], &text[end..])),
        (None, true) if text.is_empty() => Some(block),
        (None, true) => Some(format!("{}{}\n{block}", text, if text.ends_with('\n') { "" } else { "\n" })),
        (Some((start, end)), false) => {
            let head = text[..start].strip_suffix("\n\n").map_or(&text[..start], |head| &text[..head.len() + 1]);
            let rest = format!("{head}{}", &text[end..]);
            if rest.trim().is_empty() { None } else { Some(rest) }
        }
        (None, false) => before.clone(),
    };
    Ok(Change { client: "agents-md", path: path.to_path_buf(), before, after, containers: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(dir: &Path) -> Places {
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let project = dir.join("project");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        Places {
            config_home: home.join(".config"),
            app_data: home.join(".config"),
            codex_home: home.join(".codex"),
            home,
            project: Some(project),
            on_path: BTreeSet::new(),
        }
    }

    fn launch() -> Launch {
        Launch { command: "/opt/loupe/bin/loupe".into(), hooks: None }
    }

    fn run(places: &Places, ids: &[&str], scope: Scope, launch: &Launch, install: bool) -> Plan {
        let clients: Vec<&Client> = ids.iter().map(|id| client(id).unwrap()).collect();
        let plan = plan(&clients, places, scope, launch, install).unwrap();
        apply(&plan, places, install).unwrap();
        plan
    }

    fn changed(plan: &Plan) -> usize {
        plan.changes.iter().filter(|change| change.changes()).count()
    }

    /// Install, install again, uninstall: the second install changes nothing, and uninstall
    /// gives back the file byte for byte.
    fn round_trip(places: &Places, ids: &[&str], scope: Scope, launch: &Launch, path: &Path, original: &str) -> String {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, original).unwrap();
        let first = run(places, ids, scope, launch, true);
        assert!(changed(&first) >= 1, "{first:?}");
        let installed = std::fs::read_to_string(path).unwrap();
        let second = run(places, ids, scope, launch, true);
        assert_eq!(changed(&second), 0, "a second install changed {second:?}");
        run(places, ids, scope, launch, false);
        assert_eq!(std::fs::read_to_string(path).unwrap(), original, "uninstall did not restore {}", path.display());
        installed
    }

    #[test]
    fn a_jsonc_file_keeps_its_comments_and_other_servers() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let path = places.project.as_ref().unwrap().join(".vscode/mcp.json");
        let original = "{\n\t// mine\n\t\"servers\": {\n\t\t\"other\": { \"command\": \"x\" }, // trailing\n\t},\n\t\"inputs\": []\n}\n";
        let installed = round_trip(&places, &["vscode"], Scope::Project, &launch(), &path, original);
        assert!(installed.contains("// mine") && installed.contains("// trailing"), "{installed}");
        let parsed = Doc::parse(Format::Json, &installed, &path).unwrap();
        assert_eq!(parsed.get(&["servers", "other"]), json!({"command": "x"}));
        assert_eq!(
            parsed.get(&["servers", "loupe"]),
            json!({"type": "stdio", "command": "/opt/loupe/bin/loupe", "args": ["serve"]})
        );
        assert_eq!(parsed.get(&["inputs"]), json!([]));
        assert!(installed.find("\"stdio\"").unwrap() < installed.find("\"/opt/loupe").unwrap(), "{installed}");

        // Edited by the user after install: uninstall takes out loupe's entry alone.
        run(&places, &["vscode"], Scope::Project, &launch(), true);
        let edited = std::fs::read_to_string(&path).unwrap().replace("\"inputs\": []", "\"inputs\": [1]");
        std::fs::write(&path, &edited).unwrap();
        run(&places, &["vscode"], Scope::Project, &launch(), false);
        let left = std::fs::read_to_string(&path).unwrap();
        let parsed = Doc::parse(Format::Json, &left, &path).unwrap();
        assert_eq!(parsed.get(&["servers", "loupe"]), Value::Null, "{left}");
        assert_eq!(parsed.get(&["inputs"]), json!([1]));
        assert!(left.contains("// mine") && left.contains("// trailing"), "{left}");
        assert!(!Record::path(&places).exists(), "the record outlived what it recorded");
    }

    #[test]
    fn codex_toml_keeps_comments_and_tables() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let path = places.codex_home.join("config.toml");
        let original = "# my codex\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep\n\n[profiles.fast]\nmodel = \"o4-mini\"\n";
        let installed = round_trip(&places, &["codex"], Scope::User, &launch(), &path, original);
        assert!(installed.contains("# keep") && installed.contains("[profiles.fast]"), "{installed}");
        let table: toml::Table = installed.parse().unwrap();
        assert_eq!(table["mcp_servers"]["loupe"]["command"].as_str(), Some("/opt/loupe/bin/loupe"));
        assert_eq!(table["mcp_servers"]["other"]["command"].as_str(), Some("x"));
        assert_eq!(table["model"].as_str(), Some("o3"));
        // Codex has no project scope: asked for one, it is skipped with the reason.
        let clients = [client("codex").unwrap()];
        let plan = plan(&clients, &places, Scope::Project, &launch(), true).unwrap();
        assert!(plan.changes.is_empty() && plan.skipped[0].1.contains("--scope user"), "{plan:?}");
    }

    #[test]
    fn what_install_created_uninstall_removes_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        // Nothing there: install creates the directory and the file, uninstall takes both away.
        let cursor = places.home.join(".cursor");
        run(&places, &["cursor"], Scope::User, &launch(), true);
        let text = std::fs::read_to_string(cursor.join("mcp.json")).unwrap();
        assert_eq!(
            Doc::parse(Format::Json, &text, &cursor).unwrap().get(&["mcpServers", "loupe", "env"]),
            json!({"LOUPE_ROOT": "${workspaceFolder}"})
        );
        run(&places, &["cursor"], Scope::User, &launch(), false);
        assert!(!cursor.exists(), "uninstall left {}", cursor.display());
        assert!(!Record::path(&places).exists(), "the record outlived what it recorded");

        // An empty container the user had stays; one install made goes.
        let gemini = places.home.join(".gemini/settings.json");
        let original = "{\n  \"mcpServers\": {},\n  \"theme\": \"dark\"\n}\n";
        round_trip(&places, &["gemini"], Scope::User, &launch(), &gemini, original);
        let zed = places.config_home.join("zed/settings.json");
        round_trip(&places, &["zed"], Scope::User, &launch(), &zed, "{\n  \"theme\": \"One Dark\"\n}\n");
    }

    #[test]
    fn claude_code_project_scope_approves_its_server_and_hooks_merge() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let project = places.project.clone().unwrap();
        let local = project.join(".claude/settings.local.json");
        let settings = project.join(".claude/settings.json");
        std::fs::create_dir_all(local.parent().unwrap()).unwrap();
        std::fs::write(&local, "{\"enabledMcpjsonServers\": [\"db\"]}\n").unwrap();
        let theirs = "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}\n    ]\n  }\n}\n";
        std::fs::write(&settings, theirs).unwrap();
        let mut with_hooks = launch();
        with_hooks.hooks = Some(HookMode::Suggest);
        run(&places, &["claude-code"], Scope::Project, &with_hooks, true);
        let read = |path: &Path| {
            let text = std::fs::read_to_string(path).unwrap();
            Doc::parse(Format::Json, &text, path).unwrap().get(&[])
        };
        assert_eq!(read(&local)["enabledMcpjsonServers"], json!(["db", "loupe"]));
        assert_eq!(read(&project.join(".mcp.json"))["mcpServers"]["loupe"]["command"], json!("/opt/loupe/bin/loupe"));
        let groups = read(&settings)["hooks"]["PreToolUse"].clone();
        assert_eq!(groups.as_array().unwrap().len(), 2, "{groups}");
        assert_eq!(groups[1]["hooks"][0]["command"], json!("/opt/loupe/bin/loupe hook claude-code --mode suggest"));

        // Switching the hook's mode replaces loupe's group rather than adding one.
        with_hooks.hooks = Some(HookMode::Redirect);
        run(&places, &["claude-code"], Scope::Project, &with_hooks, true);
        let groups = read(&settings)["hooks"]["PreToolUse"].clone();
        assert_eq!(groups.as_array().unwrap().len(), 2, "{groups}");
        assert!(groups[1]["hooks"][0]["command"].as_str().unwrap().ends_with("--mode redirect"));

        run(&places, &["claude-code"], Scope::Project, &with_hooks, false);
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), theirs);
        assert_eq!(read(&local)["enabledMcpjsonServers"], json!(["db"]));
        assert!(!project.join(".mcp.json").exists());
    }

    #[test]
    fn a_file_changed_after_planning_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let path = places.home.join(".claude.json");
        std::fs::write(&path, "{\"numStartups\": 1}").unwrap();
        let clients = [client("claude-code").unwrap()];
        let plan = plan(&clients, &places, Scope::User, &launch(), true).unwrap();
        std::fs::write(&path, "{\"numStartups\": 2}").unwrap();
        let error = apply(&plan, &places, true).unwrap_err().to_string();
        assert!(error.contains("changed while loupe was editing it"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"numStartups\": 2}");
    }

    #[test]
    fn a_broken_file_is_named_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let path = places.home.join(".claude.json");
        std::fs::write(&path, "{\"mcpServers\": ").unwrap();
        let clients = [client("claude-code").unwrap()];
        let error = plan(&clients, &places, Scope::User, &launch(), true).unwrap_err().to_string();
        assert!(error.contains(".claude.json: not valid JSON"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"mcpServers\": ");
    }

    #[cfg(unix)]
    #[test]
    fn permissions_stay_and_a_symlinked_config_is_written_through() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let real = dir.path().join("dotfiles/claude.json");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, "{}\n").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = places.home.join(".claude.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        run(&places, &["claude-code"], Scope::User, &launch(), true);
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
        assert!(std::fs::read_to_string(&real).unwrap().contains("\"loupe\""));
        assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn the_agents_note_goes_in_once_and_comes_out_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let path = dir.path().join("AGENTS.md");
        let original = "# Agents\n\nRun `make test`.\n";
        std::fs::write(&path, original).unwrap();
        let write = |install: bool| {
            let plan = Plan { changes: vec![agents_change(&path, install).unwrap()], skipped: vec![] };
            apply(&plan, &places, install).unwrap();
            plan
        };
        write(true);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(original) && text.contains("`search`"), "{text}");
        assert!(AGENTS_SNIPPET.lines().count() <= 15);
        assert_eq!(changed(&write(true)), 0);
        write(false);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
        std::fs::remove_file(&path).unwrap();
        write(true);
        write(false);
        assert!(!path.exists());
    }
}
