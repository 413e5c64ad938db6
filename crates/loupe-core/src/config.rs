//! The configuration of §14: every key declared once (`config_keys!`), from which come the plain
//! `Config` struct, its defaults, the `KEYS` table (type, choices, description, flag, `LOUPE_*`
//! name, whether a repository's own `loupe.toml` may set it, §3.1) and `Config::set`.
//!
//! Layering (defaults, then the user-level config file, then the repository's own
//! `loupe.toml`, then `LOUPE_*`, then flags) is done by the caller, which feeds each layer
//! through `Config::set`, where each key's `Combine` says how a later value meets the one in
//! force. This module never reads files or the environment.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

/// The §3.1 default exclusions. A pattern ending in `/` names a directory anywhere in the
/// path; any other pattern is a glob matched against every path component.
pub const DEFAULT_EXCLUDE: &[&str] = &[
    ".git/",
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_ed25519*",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "credentials*.json",
];

/// Names the default `.env.*` rule lets through: templates hold no secrets.
pub const DEFAULT_EXCLUDE_EXCEPTIONS: &[&str] = &[".env.example", ".env.sample"];

/// Declares enums whose values a key takes by name: the names (`CHOICES`, for `--help` and
/// §14) and the parser come from the one list.
macro_rules! choices {
    ($($(#[$attribute:meta])* pub enum $name:ident { $($(#[$variant_attribute:meta])* $variant:ident = $text:literal,)* })*) => {$(
        $(#[$attribute])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
        #[serde(rename_all = "lowercase")]
        pub enum $name { $($(#[$variant_attribute])* $variant,)* }

        impl $name {
            /// Every value, by name, in order.
            pub const CHOICES: &[&str] = &[$($text),*];

            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }

        impl Setting for $name {
            const KIND: Kind = Kind::Choice($name::CHOICES);

            fn parse(key: &str, value: &Value) -> Result<$name, String> {
                let text = as_string(key, value)?;
                $name::parse(&text).ok_or_else(|| expected(key, &$name::CHOICES.join("|"), &text))
            }

            fn show(&self) -> String {
                self.as_str().to_owned()
            }
        }
    )*};
}

choices! {
    /// The search → read gate (§9.7).
    pub enum GateMode {
        Enforce = "enforce",
        Warn = "warn",
        Off = "off",
    }

    /// What a read outside the last searches' results gets (§9.5).
    pub enum RelevanceMode {
        Warn = "warn",
        Block = "block",
        Off = "off",
    }

    /// The seeds' old tool names (§12).
    pub enum LegacyTools {
        Hidden = "hidden",
        Listed = "listed",
        Disabled = "disabled",
    }

    /// Which structured face a tool result carries (§3.3): a call's `metadata` argument, or the
    /// `structured_content` config key for calls that do not say.
    #[derive(Default)]
    pub enum MetadataLevel {
        Minimal = "minimal",
        #[default]
        Standard = "standard",
        Full = "full",
    }
}

/// What a key holds, as the command line and §14 show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Path,
    Text,
    /// A positive integer.
    Count,
    /// A list of patterns: a JSON or TOML array, or a comma-separated string.
    Patterns,
    Switch,
    Choice(&'static [&'static str]),
}

/// How a key is spelled on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// `--<key-with-dashes> VALUE` on every command; for a switch, `--<key>` alone sets it true.
    Key,
    /// `--<name>` alone sets a switch false (`--no-analytics`).
    Negated(&'static str),
    /// `--<key-with-dashes> VALUE` on `loupe serve` only: on `read` and `search` the same flag is
    /// the call's own cap, a tool parameter.
    ServeOnly,
}

impl Flag {
    /// The flag as a user types it: `--gate-mode`, `--no-analytics`, `serve --max-preview-chars`.
    pub fn typed(self, key: &str) -> String {
        match self {
            Flag::ServeOnly => format!("serve --{}", self.long(key)),
            _ => format!("--{}", self.long(key)),
        }
    }

    /// The long flag, without its dashes, for `key`.
    pub fn long(self, key: &str) -> String {
        match self {
            Flag::Negated(name) => name.to_owned(),
            Flag::Key | Flag::ServeOnly => key.replace('_', "-"),
        }
    }
}

/// How a later layer's value meets the one in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    Replace,
    /// Added to the list in force (`exclude`: one added pattern must never drop the §3.1
    /// defaults; lifting one is `allow`'s job).
    Add,
}

/// One configuration key, as declared once in `config_keys!`: everything the loaders, the
/// command line, the environment and §14 know about it.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub name: &'static str,
    pub kind: Kind,
    /// One sentence: the field's documentation, `--help` and §14.
    pub description: &'static str,
    /// The contract section that says what the key governs.
    pub section: &'static str,
    pub flag: Flag,
    /// Whether a repository's own `loupe.toml` may set it (§3.1).
    pub repository: bool,
    pub combine: Combine,
    /// The default as §14 and `--help` show it, when the value alone does not say it.
    shown: Option<&'static str>,
}

impl Key {
    /// `LOUPE_<KEY>`.
    pub fn env_name(&self) -> String {
        format!("LOUPE_{}", self.name.to_ascii_uppercase())
    }

    /// The key's entry in the table, by name.
    pub fn named(name: &str) -> Option<&'static Key> {
        KEYS.iter().find(|key| key.name == name)
    }
}

/// A value a key holds: read from a layer's value, and shown.
pub trait Setting: Sized {
    const KIND: Kind;
    /// Reads `value`: JSON/TOML values keep their type; a string (from an environment variable
    /// or a flag) is parsed per the key's type. The error says what was expected.
    fn parse(key: &str, value: &Value) -> Result<Self, String>;
    fn show(&self) -> String;
    /// The value in force after a later layer set `later`.
    fn combine(&mut self, later: Self, how: Combine) {
        let _ = how;
        *self = later;
    }
}

impl Setting for Option<PathBuf> {
    const KIND: Kind = Kind::Path;
    fn parse(key: &str, value: &Value) -> Result<Self, String> {
        as_string(key, value).map(|text| Some(PathBuf::from(text)))
    }
    fn show(&self) -> String {
        self.as_ref().map(|path| path.display().to_string()).unwrap_or_default()
    }
}

impl Setting for String {
    const KIND: Kind = Kind::Text;
    fn parse(key: &str, value: &Value) -> Result<Self, String> {
        as_string(key, value)
    }
    fn show(&self) -> String {
        self.clone()
    }
}

impl Setting for u64 {
    const KIND: Kind = Kind::Count;
    fn parse(key: &str, value: &Value) -> Result<Self, String> {
        as_positive(key, value)
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl Setting for usize {
    const KIND: Kind = Kind::Count;
    fn parse(key: &str, value: &Value) -> Result<Self, String> {
        as_positive(key, value).map(|number| number as usize)
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl Setting for bool {
    const KIND: Kind = Kind::Switch;
    fn parse(key: &str, value: &Value) -> Result<Self, String> {
        as_bool(key, value)
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl Setting for Vec<String> {
    const KIND: Kind = Kind::Patterns;
    fn parse(key: &str, value: &Value) -> Result<Self, String> {
        as_list(key, value)
    }
    fn show(&self) -> String {
        if self.is_empty() { "empty".to_owned() } else { self.join(", ") }
    }
    fn combine(&mut self, later: Self, how: Combine) {
        match how {
            Combine::Replace => *self = later,
            Combine::Add => {
                for pattern in later {
                    if !self.contains(&pattern) {
                        self.push(pattern);
                    }
                }
            }
        }
    }
}

/// Declares every configuration key once: from each entry come the `Config` field, its default,
/// its row in `KEYS` (and so its `LOUPE_*` variable, its flag in `--help`, its §14 row and
/// whether a repository may set it) and its arm in `Config::set`.
macro_rules! config_keys {
    ($(
        $name:ident: $ty:ty = $default:expr, $description:literal, $section:literal,
            flag: $flag:expr, repository: $repository:literal, combine: $combine:ident $(, shown: $shown:literal)?;
    )*) => {
        #[derive(Debug, Clone, PartialEq, Serialize)]
        pub struct Config {
            $(#[doc = $description] pub $name: $ty,)*
            /// How the root was chosen (§2), for `manage status`: set when the configuration is loaded.
            pub root_chosen_by: String,
        }

        impl Default for Config {
            fn default() -> Config {
                Config { $($name: $default,)* root_chosen_by: String::new() }
            }
        }

        /// Every key, in the order of §14.
        pub const KEYS: &[Key] = &[$(Key {
            name: stringify!($name),
            kind: <$ty as Setting>::KIND,
            description: $description,
            section: $section,
            flag: $flag,
            repository: $repository,
            combine: Combine::$combine,
            shown: config_keys!(@shown $($shown)?),
        },)*];

        impl Config {
            /// Sets `key` from one layer's value, combined with the value in force as the key's
            /// table entry says (`exclude` adds; every other key replaces).
            pub fn set(&mut self, key: &str, value: &Value) -> Result<(), String> {
                match key {
                    $(stringify!($name) => {
                        let later = <$ty as Setting>::parse(key, value)?;
                        self.$name.combine(later, Combine::$combine);
                    })*
                    other => {
                        return Err(format!("unknown configuration key `{other}`; known keys: {}", key_names()));
                    }
                }
                Ok(())
            }

            /// A key's value in force, as `--help` and §14 show it.
            pub fn shown(&self, key: &str) -> Option<String> {
                match key {
                    $(stringify!($name) => Some(self.$name.show()),)*
                    _ => None,
                }
            }
        }
    };
    (@shown $shown:literal) => { Some($shown) };
    (@shown) => { None };
}

config_keys! {
    root: Option<PathBuf> = None, "Workspace root.", "§2",
        flag: Flag::Key, repository: false, combine: Replace,
        shown: "the client's roots, `LOUPE_ROOT`, then the repository around the current directory";
    index_dir: Option<PathBuf> = None, "Where the index, the edit journal and the analytics live.", "§2",
        flag: Flag::Key, repository: false, combine: Replace, shown: "`$XDG_CACHE_HOME/loupe/<workspace_hash>`";
    log: String = "warn".to_owned(), "Log filter for stderr, e.g. `info` or `loupe=debug`.", "§11",
        flag: Flag::Key, repository: false, combine: Replace;
    max_single_read_lines: usize = 300, "Most lines one read returns before it is cut with a cursor.", "§3.5",
        flag: Flag::Key, repository: false, combine: Replace;
    max_preview_chars: usize = 12_000, "Most characters of payload one answer carries.", "§3.5",
        flag: Flag::ServeOnly, repository: false, combine: Replace;
    max_response_tokens: usize = 20_000, "Most tokens one answer carries.", "§3.5",
        flag: Flag::Key, repository: false, combine: Replace;
    max_index_file_bytes: u64 = 1_048_576, "Files larger than this many bytes are not indexed, only scanned.", "§7",
        flag: Flag::Key, repository: false, combine: Replace;
    max_file_bytes: u64 = 64 * 1_048_576, "Files larger than this many bytes are not read, nor git blobs diffed.", "§3.5",
        flag: Flag::Key, repository: false, combine: Replace;
    exclude: Vec<String> = DEFAULT_EXCLUDE.iter().map(|pattern| (*pattern).to_owned()).collect(),
        "Exclusion patterns, comma-separated: every layer adds to the §3.1 defaults.", "§3.1",
        flag: Flag::Key, repository: true, combine: Add, shown: "the §3.1 list";
    allow: Vec<String> = Vec::new(), "Patterns lifted from the exclusions, comma-separated (a repository's own: single files it excluded itself).", "§3.1",
        flag: Flag::Key, repository: true, combine: Replace;
    gate_mode: GateMode = GateMode::Enforce, "The search → read gate.", "§9.7",
        flag: Flag::Key, repository: false, combine: Replace;
    max_range_lines: usize = 200, "Most lines a read may take without a search ref.", "§9.7",
        flag: Flag::Key, repository: false, combine: Replace;
    max_reads_per_session: usize = 25, "Reads a session takes before the budget sends it back to search.", "§9.4",
        flag: Flag::Key, repository: false, combine: Replace;
    max_total_read_lines: usize = 2500, "Lines a session reads before the budget sends it back to search.", "§9.4",
        flag: Flag::Key, repository: false, combine: Replace;
    relevance: RelevanceMode = RelevanceMode::Warn, "What a read outside the last searches' results gets.", "§9.5",
        flag: Flag::Key, repository: false, combine: Replace;
    strict_session_id: bool = false, "Require a session_id on every read and search call (SESSION_ID_REQUIRED without one).", "§9.1",
        flag: Flag::Key, repository: false, combine: Replace;
    session_ttl_secs: u64 = 7200, "Seconds a session may idle before it starts over.", "§9.1",
        flag: Flag::Key, repository: false, combine: Replace;
    max_call_secs: u64 = 30, "Seconds a call's long work may run before it stops and answers with what it has, cut.", "§11",
        flag: Flag::Key, repository: false, combine: Replace;
    max_call_mb: u64 = 1024, "MiB the heap may grow during a call's long work before it stops and answers, cut.", "§11",
        flag: Flag::Key, repository: false, combine: Replace;
    analytics: bool = true, "Write the analytics log (`analytics.jsonl` in the index directory).", "§9.2",
        flag: Flag::Negated("no-analytics"), repository: false, combine: Replace;
    read_only: bool = false, "Refuse edit, undo and redo.", "§8.2",
        flag: Flag::Key, repository: false, combine: Replace;
    legacy_tools: LegacyTools = LegacyTools::Hidden, "The seeds' old tool names: callable but not listed, listed, or refused.", "§12",
        flag: Flag::Key, repository: false, combine: Replace;
    structured_content: MetadataLevel = MetadataLevel::Standard, "The structured face of calls that pass no `metadata`.", "§3.3",
        flag: Flag::Key, repository: false, combine: Replace;
    dedup_window_tokens: u64 = 30_000, "De-duplication elides only lines sent within this many tokens of reads.", "§9.6",
        flag: Flag::Key, repository: false, combine: Replace;
}

/// The keys' names, comma-separated.
pub fn key_names() -> String {
    KEYS.iter().map(|key| key.name).collect::<Vec<_>>().join(", ")
}

impl Key {
    /// The default as §14 and `--help` show it.
    pub fn default_text(&self) -> String {
        match self.shown {
            Some(shown) => shown.to_owned(),
            None => Config::default().shown(self.name).unwrap_or_default(),
        }
    }
}

/// The §14 table: one row per key, generated from `KEYS` (a test keeps `docs/contract.md` equal
/// to it).
pub fn contract_table() -> String {
    let mut table =
        String::from("| key | default | what it governs | flag | repository | § |\n|---|---|---|---|---|---|\n");
    for key in KEYS {
        let default = match key.kind {
            Kind::Choice(choices) => format!(
                "`{}` ({})",
                key.default_text(),
                choices.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
            ),
            Kind::Text => format!("`{}`", key.default_text()),
            _ => key.default_text(),
        };
        let value = if key.kind == Kind::Switch { "" } else { " …" };
        let flag = format!("`{}{value}`", key.flag.typed(key.name));
        let repository = if key.repository { "yes" } else { "no" };
        table.push_str(&format!(
            "| `{}` | {default} | {} | {flag} | {repository} | {} |\n",
            key.name, key.description, key.section
        ));
    }
    table
}

fn expected(key: &str, what: &str, got: &str) -> String {
    format!("configuration key `{key}` expects {what}, got `{got}`")
}

fn as_string(key: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(flag) => Ok(flag.to_string()),
        other => Err(expected(key, "a string", &other.to_string())),
    }
}

fn as_positive(key: &str, value: &Value) -> Result<u64, String> {
    let parsed = match value {
        Value::Number(number) => number.as_u64(),
        Value::String(text) => text.trim().replace('_', "").parse::<u64>().ok(),
        _ => None,
    };
    match parsed {
        Some(number) if number > 0 => Ok(number),
        _ => Err(expected(key, "a positive integer", &value.to_string())),
    }
}

fn as_bool(key: &str, value: &Value) -> Result<bool, String> {
    match value {
        Value::Bool(flag) => Ok(*flag),
        Value::String(text) => match text.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" | "" => Ok(false),
            other => Err(expected(key, "true|false", other)),
        },
        Value::Number(number) => Ok(number.as_u64().unwrap_or(0) != 0),
        other => Err(expected(key, "true|false", &other.to_string())),
    }
}

fn as_list(key: &str, value: &Value) -> Result<Vec<String>, String> {
    match value {
        Value::Array(items) => items.iter().map(|item| as_string(key, item)).collect(),
        Value::String(text) => {
            Ok(text.split(',').map(str::trim).filter(|item| !item.is_empty()).map(str::to_owned).collect())
        }
        other => Err(expected(key, "a list of strings", &other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_contract_carries_the_key_table() {
        let contract = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/contract.md");
        let contract = std::fs::read_to_string(contract).unwrap();
        let table = contract_table();
        assert!(contract.contains(&table), "docs/contract.md §14 must hold the table generated from KEYS:\n{table}");
    }

    #[test]
    fn every_key_is_set_by_its_name_and_shown() {
        let defaults = Config::default();
        for key in KEYS {
            let mut config = Config::default();
            let text = match key.kind {
                Kind::Path => "/somewhere".to_owned(),
                Kind::Text => "info".to_owned(),
                Kind::Count => "7".to_owned(),
                Kind::Patterns => "a/, b".to_owned(),
                Kind::Switch => (!as_bool(key.name, &json!(defaults.shown(key.name).unwrap())).unwrap()).to_string(),
                Kind::Choice(choices) => choices.last().unwrap().to_string(),
            };
            config.set(key.name, &json!(text)).unwrap_or_else(|error| panic!("{}: {error}", key.name));
            assert_ne!(config.shown(key.name), defaults.shown(key.name), "{} did not change", key.name);
            assert!(!key.description.is_empty() && key.section.starts_with('§'), "{}", key.name);
        }
        let names: Vec<&str> = KEYS.iter().map(|key| key.name).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a key declared twice");
    }

    #[test]
    fn strings_are_parsed_per_key_type() {
        let mut config = Config::default();
        config.set("max_single_read_lines", &json!("120")).unwrap();
        config.set("gate_mode", &json!("off")).unwrap();
        config.set("read_only", &json!("1")).unwrap();
        config.set("exclude", &json!("*.secret, build/")).unwrap();
        assert_eq!(config.max_single_read_lines, 120);
        assert_eq!(config.gate_mode, GateMode::Off);
        assert!(config.read_only);
        // Added to the defaults, never replacing them.
        assert_eq!(config.exclude[..DEFAULT_EXCLUDE.len()], *DEFAULT_EXCLUDE);
        assert_eq!(config.exclude[DEFAULT_EXCLUDE.len()..], ["*.secret", "build/"]);
    }

    #[test]
    fn bad_values_and_keys_say_what_was_expected() {
        let mut config = Config::default();
        let error = config.set("max_preview_chars", &json!("lots")).unwrap_err();
        assert!(error.contains("positive integer"), "{error}");
        let error = config.set("gate_mode", &json!("maybe")).unwrap_err();
        assert!(error.contains("enforce|warn|off"), "{error}");
        let error = config.set("max_lines_ever", &json!(1)).unwrap_err();
        assert!(error.contains("unknown configuration key"), "{error}");
        assert_eq!(config, Config::default());
    }
}
