//! Loading the configuration (§2, §3.1, §14), in layers where later wins: the defaults, the
//! user-level config file (`$XDG_CONFIG_HOME/loupe/config.toml`, else
//! `~/.config/loupe/config.toml`), the repository's own `loupe.toml` (or
//! `.loupe/config.toml`), the `LOUPE_*` environment variables, then flags.
//!
//! The repository's file is the one layer loupe does not trust: a repository can be hostile,
//! and an agent working in it can be prompt-injected. So that file is restricted (§3.1):
//! - it may set only the keys the table marks `repository` (`exclude`, `allow`): any other is
//!   ignored with a warning naming the key and where the user sets it;
//! - its `exclude` list adds to the exclusions in force, never replaces them, so `.git/`
//!   and the secret defaults stay;
//! - its `allow` entries name single files by their root-relative path (no glob patterns;
//!   a bare name means the file at the root), and one is dropped with a warning when the
//!   file it names is excluded by anything the repository did not add itself: the §3.1
//!   defaults, `.git/`, or the user's own exclusions. A repository can only lift what it
//!   excluded itself;
//! - it is read only when it is a regular file at the root (never through a symbolic link,
//!   which could point outside the root, nor a file with other hard links, which could be one
//!   outside), without blocking, at most `MAX_CONFIG_BYTES` and nested at most
//!   `MAX_CONFIG_NESTING` deep;
//! - nothing in it stops the server: a file that cannot be read or parsed, or a value of the
//!   wrong type, is ignored with one warning, and the warning never quotes the file's text.
//!
//! The user's file, the environment and flags have full power: there `allow` replaces the list
//! in force, and `exclude`, in every layer, adds to the §3.1 defaults (lifting one is `allow`'s
//! job).
//!
//! The root itself is decided first, in the order of §2: `--root`, the MCP client's first
//! root, `LOUPE_ROOT`, the current directory.

use std::io::Read;
use std::path::{Path, PathBuf};

use loupe_core::config::{KEYS, Key, LegacyTools, key_names};
use loupe_core::{Config, RepoPath};
use loupe_vfs::Exclusions;
use serde_json::Value;

/// A config file is a few lines; anything larger is refused rather than read.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The names the repository's own config file may have, relative to the root.
const REPOSITORY_FILES: &[&[&str]] = &[&["loupe.toml"], &[".loupe", "config.toml"]];

/// Where configuration values come from, besides the defaults and the file at the root.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `--key value` flags, already split; later entries win.
    pub flags: Vec<(String, Value)>,
    /// The process environment (or a test's stand-in). `XDG_CONFIG_HOME` and `HOME` here
    /// locate the user-level config file.
    pub env: Vec<(String, String)>,
    /// The MCP client's roots, when it gave any (§2 takes the one holding the working
    /// directory, else the first).
    pub client_roots: Vec<PathBuf>,
    /// The directory used when nothing names a root.
    pub current_dir: PathBuf,
}

impl Sources {
    /// Flags as given, the real environment and the real current directory.
    pub fn from_process(flags: Vec<(String, Value)>) -> Sources {
        Sources {
            flags,
            env: std::env::vars().collect(),
            client_roots: Vec::new(),
            current_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }

    fn env_value(&self, name: &str) -> Option<&str> {
        self.env.iter().rev().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// True when a flag or a `LOUPE_<KEY>` variable sets `key`.
    fn later_layer_sets(&self, key: &str) -> bool {
        self.flags.iter().any(|(name, _)| name == key)
            || self.env_value(&format!("LOUPE_{}", key.to_ascii_uppercase())).is_some()
    }
}

/// The user-level config file, when there is one: `$XDG_CONFIG_HOME/loupe/config.toml`,
/// else `$HOME/.config/loupe/config.toml` (as `sources.env` gives them).
pub fn user_config_file(sources: &Sources) -> Option<PathBuf> {
    let absolute = |value: &str| Some(PathBuf::from(value)).filter(|path| path.is_absolute());
    let base = sources
        .env_value("XDG_CONFIG_HOME")
        .and_then(absolute)
        .or_else(|| sources.env_value("HOME").and_then(absolute).map(|home| home.join(".config")))?;
    Some(base.join("loupe").join("config.toml")).filter(|path| path.exists())
}

/// The repository's config file at `root`, if any: the first of `loupe.toml` and
/// `.loupe/config.toml` that is there (as a name; whether it may be read is decided when
/// reading it).
pub fn config_file(root: &Path) -> Option<PathBuf> {
    REPOSITORY_FILES
        .iter()
        .map(|parts| parts.iter().fold(root.to_path_buf(), |path, part| path.join(part)))
        .find(|path| std::fs::symlink_metadata(path).is_ok_and(|metadata| !metadata.is_dir()))
}

/// What the repository's file asked for in `exclude` and `allow`, held aside until the
/// later layers are applied: its exclusions are added at the end (unless the environment or
/// a flag replaced the list), its allowances only once vetted against everything else.
#[derive(Debug, Default)]
struct RepositoryLists {
    exclude: Vec<String>,
    /// (the entry as written, the root-anchored pattern it becomes)
    allow: Vec<(String, String)>,
}

/// Builds the configuration. Errors name their source (file, variable or flag) and say
/// what was expected; unknown keys, and keys a repository's file may not set, are reported
/// in `warnings`.
pub fn load(sources: &Sources) -> Result<(Config, Vec<String>), String> {
    let mut warnings = Vec::new();
    let (root, chosen_by) = choose_root(sources)?;

    let mut config = Config::default();
    if let Some(file) = user_config_file(sources) {
        let table = read_table(&file, &read_user_file(&file)?)?;
        apply_user_file(&mut config, &file, table, &mut warnings)?;
    }
    let mut repository = RepositoryLists::default();
    if let Some(file) = config_file(&root) {
        match read_repository_file(&root, &file).and_then(|text| parse_repository_file(&text)) {
            Ok(table) => repository = repository_lists(&file, table, &mut warnings),
            Err(reason) => warnings.push(format!("{}: ignored: {reason}", file.display())),
        }
    }
    // `LOUPE_ROOT` is read with the root's other sources, in the order of §2.
    for key in KEYS.iter().filter(|key| key.name != "root") {
        let name = key.env_name();
        if let Some(value) = sources.env_value(&name) {
            config.set(key.name, &Value::from(value)).map_err(|error| format!("{name}: {error}"))?;
        }
    }
    if sources.env_value("LOUPE_DISABLE_LEGACY").is_some_and(disables_legacy) {
        config.legacy_tools = LegacyTools::Disabled;
    }
    for (key, value) in &sources.flags {
        if key == "root" {
            continue;
        }
        config.set(key, value).map_err(|error| format!("--{}: {error}", key.replace('_', "-")))?;
    }
    merge_repository_lists(&mut config, sources, repository, &mut warnings)?;
    config.root = Some(root);
    config.root_chosen_by = chosen_by;
    Ok((config, warnings))
}

/// The configuration `tools/list` depends on (`legacy_tools`, §12; `read_only`, §4) before an
/// engine is open: the whole configuration when it loads; otherwise (no root can be chosen
/// yet) what the environment and the flags say of those keys.
pub fn listing_config(sources: &Sources) -> Config {
    if let Ok((config, _)) = load(sources) {
        return config;
    }
    let mut config = Config::default();
    for (key, variable) in [("legacy_tools", "LOUPE_LEGACY_TOOLS"), ("read_only", "LOUPE_READ_ONLY")] {
        if let Some(value) = sources.env_value(variable) {
            let _ = config.set(key, &Value::from(value));
        }
    }
    if sources.env_value("LOUPE_DISABLE_LEGACY").is_some_and(disables_legacy) {
        config.legacy_tools = LegacyTools::Disabled;
    }
    for (key, value) in sources.flags.iter().filter(|(key, _)| key == "legacy_tools" || key == "read_only") {
        let _ = config.set(key, value);
    }
    config
}

/// The `legacy_tools` setting (§12, §14) before an engine is open ([`listing_config`]).
pub fn legacy_tools(sources: &Sources) -> LegacyTools {
    listing_config(sources).legacy_tools
}

/// `LOUPE_DISABLE_LEGACY=1` (or `true`, `yes`).
fn disables_legacy(value: &str) -> bool {
    matches!(value.trim(), "1" | "true" | "yes")
}

/// The workspace root (§2), and how it was chosen: `--root`, the client's roots (the one
/// holding the working directory, else the first), `LOUPE_ROOT`, then the repository around the
/// working directory (the nearest ancestor with `.git` or `loupe.toml`), else the working
/// directory itself. `/` and the home directory are never chosen implicitly: that is an error
/// that says how to name the root.
pub fn choose_root(sources: &Sources) -> Result<(PathBuf, String), String> {
    let home = sources.env_value("HOME").filter(|home| !home.is_empty()).map(PathBuf::from);
    // `~` and `~/…` name the home directory (§9.1), as a shell would have expanded them had the
    // value not come quoted, from a config file or from a client's settings.
    let named = |text: &str| match (text.strip_prefix('~'), &home) {
        (Some(""), Some(home)) => home.clone(),
        (Some(rest), Some(home)) if rest.starts_with('/') => home.join(&rest[1..]),
        _ => PathBuf::from(text),
    };
    let absolute = |path: PathBuf| if path.is_absolute() { path } else { sources.current_dir.join(path) };
    let flag = sources.flags.iter().rev().find(|(key, _)| key == "root").and_then(|(_, value)| value.as_str());
    if let Some(root) = flag {
        return Ok((absolute(named(root)), "--root".to_owned()));
    }
    if !sources.client_roots.is_empty() {
        let holding = sources.client_roots.iter().position(|root| sources.current_dir.starts_with(root));
        let index = holding.unwrap_or(0);
        let why = match (holding, sources.client_roots.len()) {
            (_, 1) => "the client's root".to_owned(),
            (Some(_), count) => format!("the client's root holding the working directory (of {count})"),
            (None, count) => format!("the client's first root (of {count}; none holds the working directory)"),
        };
        return Ok((absolute(sources.client_roots[index].clone()), why));
    }
    if let Some(root) = sources.env_value("LOUPE_ROOT").filter(|value| !value.is_empty()) {
        return Ok((absolute(named(root)), "LOUPE_ROOT".to_owned()));
    }
    let start = &sources.current_dir;
    let too_wide = |dir: &Path| dir.parent().is_none() || home.as_deref() == Some(dir);
    for dir in start.ancestors() {
        if too_wide(dir) {
            break;
        }
        if dir.join(".git").exists() || dir.join("loupe.toml").is_file() {
            let marker = if dir.join(".git").exists() { ".git" } else { "loupe.toml" };
            let why = if dir == start {
                format!("the working directory ({marker})")
            } else {
                format!("the repository around the working directory ({marker} in an ancestor)")
            };
            return Ok((dir.to_path_buf(), why));
        }
    }
    if too_wide(start) {
        return Err(no_root(start));
    }
    Ok((start.clone(), "the working directory (no .git or loupe.toml above it)".to_owned()))
}

/// The answer when nothing names a root and the working directory is `/` or the home directory.
pub fn no_root(current_dir: &Path) -> String {
    format!(
        "no workspace root: loupe was started in `{}`, which it never serves unless named. Name the root with `--root <dir>`, the `LOUPE_ROOT` variable, or your client's workspace roots",
        current_dir.display()
    )
}

/// True when `key` was set explicitly: by a flag, a `LOUPE_<KEY>` variable, the user-level
/// config file, or the repository's file at the root `config` was loaded for (when that file
/// may set it). The CLI uses it to pick defaults of its own where the server's would not fit
/// a one-shot command.
pub fn is_set(sources: &Sources, config: &Config, key: &str) -> bool {
    if sources.later_layer_sets(key) {
        return true;
    }
    let user = user_config_file(sources)
        .and_then(|file| read_user_file(&file).ok())
        .and_then(|text| toml::from_str::<toml::Table>(&text).ok());
    if user.is_some_and(|table| table.contains_key(key)) {
        return true;
    }
    if !Key::named(key).is_some_and(|key| key.repository) {
        return false;
    }
    let Some(root) = config.root.as_deref() else { return false };
    config_file(root)
        .and_then(|file| read_repository_file(root, &file).ok())
        .and_then(|text| parse_repository_file(&text).ok())
        .is_some_and(|table| table.contains_key(key))
}

fn read_table(file: &Path, text: &str) -> Result<toml::Table, String> {
    if nesting_depth(text) > MAX_CONFIG_NESTING {
        return Err(format!("{}: it nests arrays or tables deeper than {MAX_CONFIG_NESTING} levels", file.display()));
    }
    toml::from_str(text).map_err(|error| format!("{}: {error}", file.display()))
}

fn to_json(file: &Path, key: &str, value: &toml::Value) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|error| format!("{}: {key}: {error}", file.display()))
}

fn unknown_key(file: &Path, key: &str) -> String {
    format!("{}: unknown key `{key}` ignored; known keys: {}", file.display(), key_names())
}

/// The user's own file: every key but `root` (which §2 takes only from a flag, the client or
/// `LOUPE_ROOT`), with the same meaning as a flag.
fn apply_user_file(
    config: &mut Config,
    file: &Path,
    table: toml::Table,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    for (key, value) in table {
        if key == "root" {
            warnings
                .push(format!("{}: `root` is ignored in a config file; pass --root or set LOUPE_ROOT", file.display()));
            continue;
        }
        if Key::named(&key).is_none() {
            warnings.push(unknown_key(file, &key));
            continue;
        }
        let json = to_json(file, &key, &value)?;
        config.set(&key, &json).map_err(|error| format!("{}: {error}", file.display()))?;
    }
    Ok(())
}

/// How deep a repository's config may nest arrays and tables: loupe's keys nest one level,
/// and the parser recurses per level, so a file of 100,000 `[` would exhaust the stack.
const MAX_CONFIG_NESTING: usize = 16;

/// The repository's file as a table, or why it is ignored. Its nesting is bounded before the
/// parser sees it, and a parse error is reported by line, never by the text it quotes (the
/// file is the repository's, and what it says is not repeated to the model).
fn parse_repository_file(text: &str) -> Result<toml::Table, String> {
    if nesting_depth(text) > MAX_CONFIG_NESTING {
        return Err(format!("it nests arrays or tables deeper than {MAX_CONFIG_NESTING} levels"));
    }
    toml::from_str::<toml::Table>(text).map_err(|error| match error.span() {
        Some(span) => format!("it is not valid TOML (line {})", text[..span.start].matches('\n').count() + 1),
        None => "it is not valid TOML".to_owned(),
    })
}

/// The deepest nesting of `[`/`{` in a TOML text, outside strings and comments. An upper
/// bound of what the parser would recurse into (a `[[table]]` header counts two).
fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(character) = chars.next() {
        match character {
            '#' => while chars.next_if(|next| *next != '\n').is_some() {},
            quote @ ('"' | '\'') => {
                // Strings (basic, literal, and the triple-quoted forms, which read as an empty
                // string then a string) end at their unescaped closing quote.
                while let Some(inner) = chars.next() {
                    if inner == '\\' && quote == '"' {
                        chars.next();
                    } else if inner == quote {
                        break;
                    }
                }
            }
            '[' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The repository's own file, restricted as the module comment says: its `exclude` and
/// `allow`, returned for `merge_repository_lists` to apply last. Every other key, and every
/// value that is not what its key takes, is ignored with a warning; nothing here fails.
fn repository_lists(file: &Path, table: toml::Table, warnings: &mut Vec<String>) -> RepositoryLists {
    let mut lists = RepositoryLists::default();
    for (key, value) in table {
        let known = Key::named(&key);
        if !known.is_some_and(|known| known.repository) {
            warnings.push(match known {
                Some(known) => format!(
                    "{}: `{key}` is ignored in a repository's own config, which may set only {} (§3.1); set it \
                     with {}, {} or in the user config file (~/.config/loupe/config.toml)",
                    file.display(),
                    KEYS.iter()
                        .filter(|key| key.repository)
                        .map(|key| format!("`{}`", key.name))
                        .collect::<Vec<_>>()
                        .join(" and "),
                    known.flag.typed(known.name),
                    known.env_name()
                ),
                None => unknown_key(file, &key),
            });
            continue;
        }
        let entries = to_json(file, &key, &value).and_then(|json| list_of(file, &key, &json));
        let entries = match entries {
            Ok(entries) => entries,
            Err(error) => {
                warnings.push(format!("{error}; the key is ignored"));
                continue;
            }
        };
        for entry in entries {
            if key == "exclude" {
                match Exclusions::new(std::slice::from_ref(&entry), &[]) {
                    Ok(_) => lists.exclude.push(entry),
                    Err(error) => {
                        warnings.push(format!("{}: exclude: {error}; the pattern is ignored", file.display()))
                    }
                }
                continue;
            }
            match anchored_file_pattern(&entry) {
                Ok(pattern) => lists.allow.push((entry, pattern)),
                Err(why) => warnings.push(format!("{}: `allow` entry `{entry}` is ignored: {why}", file.display())),
            }
        }
    }
    lists
}

/// A list value read the way `Config::set` reads one (array or comma-separated string).
fn list_of(file: &Path, key: &str, value: &Value) -> Result<Vec<String>, String> {
    let mut scratch = Config { exclude: Vec::new(), ..Config::default() };
    scratch.set(key, value).map_err(|error| format!("{}: {error}", file.display()))?;
    Ok(if key == "allow" { scratch.allow } else { scratch.exclude })
}

/// An `allow` entry from a repository's file as a pattern that matches that one file: a
/// root-relative path without glob characters, anchored at the root (a pattern with a `/`
/// is matched against the whole path). A bare name would otherwise match any component,
/// `notes` lifting `notes/.env`.
fn anchored_file_pattern(entry: &str) -> Result<String, String> {
    if entry.contains(['*', '?', '[', ']', '{', '}', '\\']) || entry.ends_with('/') {
        return Err("a repository's config may allow named files only, not patterns or directories".into());
    }
    let path = RepoPath::normalize(entry.trim_start_matches('/'))
        .filter(|path| !path.is_root())
        .ok_or("it does not name a file inside the root")?;
    if path.components().any(|component| component == ".git") {
        return Err("`.git/` is never lifted".into());
    }
    Ok(format!("/{}", path.as_str()))
}

/// Adds the repository's exclusions to the list in force (every layer adds to it), and its
/// vetted allowances unless the environment or a flag replaced the `allow` list (later wins).
fn merge_repository_lists(
    config: &mut Config,
    sources: &Sources,
    repository: RepositoryLists,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    // What the repository may not lift: every exclusion and allowance from the other layers.
    let trusted = Exclusions::new(&config.exclude, &config.allow)
        .map_err(|error| format!("configuration key `exclude`/`allow`: {error}"))?;
    for pattern in repository.exclude {
        if !config.exclude.contains(&pattern) {
            config.exclude.push(pattern);
        }
    }
    if sources.later_layer_sets("allow") {
        return Ok(());
    }
    for (entry, pattern) in repository.allow {
        let path = RepoPath::normalize(pattern.trim_start_matches('/')).unwrap_or_else(RepoPath::root);
        match trusted.matching_pattern(&path) {
            Some(rule) => warnings.push(format!(
                "the repository's config: `allow` entry `{entry}` is ignored: `{path}` is excluded by `{rule}`, which \
                 only the user may lift (the user config file, LOUPE_ALLOW or --allow), §3.1"
            )),
            None => config.allow.push(pattern),
        }
    }
    Ok(())
}

/// The user's own file: followed through links (dotfile managers link it), but opened
/// without blocking, as a regular file, and read within `MAX_CONFIG_BYTES`.
fn read_user_file(file: &Path) -> Result<String, String> {
    let opened = loupe_vfs::open_own(file, loupe_vfs::OwnAccess::ReadThroughLinks)
        .map_err(|error| format!("{}: {error}", file.display()))?;
    read_regular(opened, Links::Any).map_err(|reason| format!("{}: {reason}", file.display()))
}

/// The repository's file: opened component by component beneath the root, never through a
/// symbolic link (which could point outside the root, and a parse error would then echo
/// another file's text), never blocking (a FIFO), and only as a regular file.
fn read_repository_file(root: &Path, file: &Path) -> Result<String, String> {
    let relative = file.strip_prefix(root).map_err(|_| "it is not at the root".to_owned())?;
    let opened = loupe_vfs::open_without_links(root, relative).map_err(|error| {
        if error.kind() == std::io::ErrorKind::InvalidInput {
            "a repository's config is read only from a regular file at the root, not through a symbolic link".to_owned()
        } else {
            error.to_string()
        }
    })?;
    read_regular(opened, Links::One)
}

/// Whether a config file may have other hard links: the user's may (dotfile managers link it),
/// the repository's may not (a hard link planted in a tree can be a file outside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Links {
    Any,
    One,
}

/// Reads an opened file that must be regular, at most `MAX_CONFIG_BYTES` and never past the
/// size it had when opened.
fn read_regular(file: std::fs::File, links: Links) -> Result<String, String> {
    let metadata = file.metadata().map_err(|error| error.to_string())?;
    if !metadata.is_file() {
        return Err("not a regular file".into());
    }
    if links == Links::One && loupe_vfs::link_count(&file).map_err(|error| error.to_string())? > 1 {
        return Err("the file has other hard links, one of which could be outside the root".into());
    }
    if metadata.len() > MAX_CONFIG_BYTES {
        return Err(format!(
            "{} bytes is larger than a config file may be ({MAX_CONFIG_BYTES}); shorten it",
            metadata.len()
        ));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(metadata.len()).read_to_end(&mut bytes).map_err(|error| error.to_string())?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use loupe_core::config::GateMode;

    fn sources(dir: &Path) -> Sources {
        Sources { current_dir: dir.to_path_buf(), ..Sources::default() }
    }

    /// Sources with the user's config file at `<dir>/xdg/loupe/config.toml` holding `text`.
    fn with_user_file(dir: &Path, text: &str) -> Sources {
        std::fs::create_dir_all(dir.join("xdg/loupe")).unwrap();
        std::fs::write(dir.join("xdg/loupe/config.toml"), text).unwrap();
        let mut sources = sources(dir);
        sources.env.push(("XDG_CONFIG_HOME".into(), dir.join("xdg").display().to_string()));
        sources
    }

    #[test]
    fn file_then_env_then_flags() {
        let dir = tempfile::tempdir().unwrap();
        let mut sources =
            with_user_file(dir.path(), "max_single_read_lines = 100\ngate_mode = \"warn\"\nmystery = 1\n");
        let (config, warnings) = load(&sources).unwrap();
        assert_eq!((config.max_single_read_lines, config.gate_mode), (100, GateMode::Warn));
        assert!(warnings[0].contains("unknown key `mystery`"), "{warnings:?}");
        sources.env.push(("LOUPE_MAX_SINGLE_READ_LINES".into(), "50".into()));
        sources.env.push(("LOUPE_DISABLE_LEGACY".into(), "1".into()));
        let (config, _) = load(&sources).unwrap();
        assert_eq!(config.max_single_read_lines, 50);
        assert_eq!(config.legacy_tools, LegacyTools::Disabled);
        sources.flags.push(("max_single_read_lines".into(), Value::from(20)));
        let (config, _) = load(&sources).unwrap();
        assert_eq!(config.max_single_read_lines, 20);
        assert_eq!(config.root.as_deref(), Some(dir.path()));
    }

    #[test]
    fn root_order_is_flag_client_env_repository() {
        let mut sources = sources(Path::new("/cwd"));
        let chosen = |sources: &Sources| {
            let (config, _) = load(sources).unwrap();
            (config.root.unwrap(), config.root_chosen_by)
        };
        assert_eq!(chosen(&sources).0, PathBuf::from("/cwd"));
        sources.env.push(("LOUPE_ROOT".into(), "/env".into()));
        assert_eq!(chosen(&sources), (PathBuf::from("/env"), "LOUPE_ROOT".to_owned()));
        sources.client_roots = vec![PathBuf::from("/client")];
        assert_eq!(chosen(&sources), (PathBuf::from("/client"), "the client's root".to_owned()));
        // Several client roots: the one holding the working directory, else the first.
        sources.client_roots = vec![PathBuf::from("/a"), PathBuf::from("/"), PathBuf::from("/b")];
        assert_eq!(chosen(&sources).0, PathBuf::from("/"));
        sources.client_roots = vec![PathBuf::from("/a"), PathBuf::from("/b")];
        let (root, why) = chosen(&sources);
        assert_eq!(root, PathBuf::from("/a"));
        assert!(why.contains("first root (of 2"), "{why}");
        sources.flags.push(("root".into(), Value::from("/flag")));
        assert_eq!(chosen(&sources), (PathBuf::from("/flag"), "--root".to_owned()));
        // `~` in --root or LOUPE_ROOT is the home directory.
        sources.env.push(("HOME".into(), "/home/me".into()));
        sources.flags.push(("root".into(), Value::from("~/work/app")));
        assert_eq!(chosen(&sources).0, PathBuf::from("/home/me/work/app"));
        sources.flags.clear();
        sources.client_roots.clear();
        sources.env.push(("LOUPE_ROOT".into(), "~".into()));
        assert_eq!(chosen(&sources).0, PathBuf::from("/home/me"));
    }

    #[test]
    fn without_a_named_root_the_repository_around_the_working_directory_is_served() {
        let home = tempfile::tempdir().unwrap();
        let repository = home.path().join("work/project");
        let nested = repository.join("src/deep");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::create_dir(repository.join(".git")).unwrap();
        let mut sources = sources(&nested);
        sources.env.push(("HOME".into(), home.path().display().to_string()));
        let (config, _) = load(&sources).unwrap();
        assert_eq!(config.root.as_deref(), Some(repository.as_path()));
        assert!(config.root_chosen_by.contains(".git in an ancestor"), "{}", config.root_chosen_by);
        // A loupe.toml marks a root too (a project that is not a git repository).
        let plain = home.path().join("plain");
        std::fs::create_dir_all(plain.join("sub")).unwrap();
        std::fs::write(plain.join("loupe.toml"), "exclude = [\"*.tmp\"]\n").unwrap();
        sources.current_dir = plain.join("sub");
        let (config, _) = load(&sources).unwrap();
        assert_eq!(config.root.as_deref(), Some(plain.as_path()));
        assert!(config.exclude.contains(&"*.tmp".to_owned()), "{:?}", config.exclude);
        // Nothing above: the working directory itself.
        let bare = home.path().join("bare/dir");
        std::fs::create_dir_all(&bare).unwrap();
        sources.current_dir = bare.clone();
        assert_eq!(load(&sources).unwrap().0.root, Some(bare));
        // The home directory and `/` are never served unless named.
        for dir in [home.path().to_path_buf(), PathBuf::from("/")] {
            sources.current_dir = dir.clone();
            let error = load(&sources).unwrap_err();
            assert!(error.contains("--root") && error.contains("LOUPE_ROOT") && error.contains("roots"), "{error}");
        }
        sources.env.push(("LOUPE_ROOT".into(), "/".into()));
        assert_eq!(load(&sources).unwrap().0.root, Some(PathBuf::from("/")), "named, `/` is served");
    }

    #[test]
    fn errors_name_their_source() {
        let dir = tempfile::tempdir().unwrap();
        let error = load(&with_user_file(dir.path(), "max_preview_chars = -3\n")).unwrap_err();
        assert!(error.contains("config.toml") && error.contains("max_preview_chars"), "{error}");
        let mut sources = sources(dir.path());
        sources.env.push(("LOUPE_GATE_MODE".into(), "sometimes".into()));
        let error = load(&sources).unwrap_err();
        assert!(error.starts_with("LOUPE_GATE_MODE:"), "{error}");
    }
}
