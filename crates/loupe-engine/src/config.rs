//! Loading the configuration (§2, §14): defaults, then `loupe.toml` (or
//! `.loupe/config.toml`) at the root, then `LOUPE_*` environment variables, then flags.
//!
//! The root itself is decided first, in the order of §2: `--root`, the MCP client's first
//! root, `LOUPE_ROOT`, the current directory.

use std::path::{Path, PathBuf};

use loupe_core::Config;
use loupe_core::config::{CONFIG_KEYS, LegacyTools};
use serde_json::Value;

/// Where configuration values come from, besides the defaults and the file at the root.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `--key value` flags, already split; later entries win.
    pub flags: Vec<(String, Value)>,
    /// The process environment (or a test's stand-in).
    pub env: Vec<(String, String)>,
    /// The MCP client's first root, when it gave one.
    pub client_root: Option<PathBuf>,
    /// The directory used when nothing names a root.
    pub current_dir: PathBuf,
}

impl Sources {
    /// Flags as given, the real environment and the real current directory.
    pub fn from_process(flags: Vec<(String, Value)>) -> Sources {
        Sources {
            flags,
            env: std::env::vars().collect(),
            client_root: None,
            current_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }

    fn env_value(&self, name: &str) -> Option<&str> {
        self.env.iter().rev().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

/// The configuration file found at `root`, if any.
pub fn config_file(root: &Path) -> Option<PathBuf> {
    [root.join("loupe.toml"), root.join(".loupe").join("config.toml")].into_iter().find(|path| path.is_file())
}

/// Builds the configuration. Errors name their source (file, variable or flag) and say
/// what was expected; unknown keys in the file are reported in `warnings`.
pub fn load(sources: &Sources) -> Result<(Config, Vec<String>), String> {
    let mut warnings = Vec::new();
    let root_flag = sources
        .flags
        .iter()
        .rev()
        .find(|(key, _)| key == "root")
        .and_then(|(_, value)| value.as_str().map(PathBuf::from));
    let root = root_flag
        .or_else(|| sources.client_root.clone())
        .or_else(|| sources.env_value("LOUPE_ROOT").filter(|v| !v.is_empty()).map(PathBuf::from))
        .unwrap_or_else(|| sources.current_dir.clone());
    let root = if root.is_absolute() { root } else { sources.current_dir.join(root) };

    let mut config = Config::default();
    if let Some(file) = config_file(&root) {
        let text = std::fs::read_to_string(&file).map_err(|error| format!("{}: {error}", file.display()))?;
        let table: toml::Table = toml::from_str(&text).map_err(|error| format!("{}: {error}", file.display()))?;
        for (key, value) in table {
            if key == "root" {
                warnings.push(format!("{}: `root` is ignored in the file that lives at the root", file.display()));
                continue;
            }
            if !CONFIG_KEYS.contains(&key.as_str()) {
                warnings.push(format!(
                    "{}: unknown key `{key}` ignored; known keys: {}",
                    file.display(),
                    CONFIG_KEYS.join(", ")
                ));
                continue;
            }
            let json = serde_json::to_value(&value).map_err(|error| format!("{}: {key}: {error}", file.display()))?;
            config.set(&key, &json).map_err(|error| format!("{}: {error}", file.display()))?;
        }
    }
    for key in CONFIG_KEYS.iter().filter(|key| **key != "root") {
        let name = format!("LOUPE_{}", key.to_ascii_uppercase());
        if let Some(value) = sources.env_value(&name) {
            config.set(key, &Value::from(value)).map_err(|error| format!("{name}: {error}"))?;
        }
    }
    if sources.env_value("LOUPE_DISABLE_LEGACY").is_some_and(|value| matches!(value.trim(), "1" | "true" | "yes")) {
        config.legacy_tools = LegacyTools::Disabled;
    }
    for (key, value) in &sources.flags {
        if key == "root" {
            continue;
        }
        config.set(key, value).map_err(|error| format!("--{}: {error}", key.replace('_', "-")))?;
    }
    config.root = Some(root);
    Ok((config, warnings))
}

/// True when `key` was set explicitly: by a flag, a `LOUPE_<KEY>` variable or the
/// configuration file at the root `config` was loaded for. The CLI uses it to pick
/// defaults of its own where the server's would not fit a one-shot command.
pub fn is_set(sources: &Sources, config: &Config, key: &str) -> bool {
    if sources.flags.iter().any(|(name, _)| name == key) {
        return true;
    }
    if sources.env_value(&format!("LOUPE_{}", key.to_ascii_uppercase())).is_some() {
        return true;
    }
    let Some(file) = config.root.as_deref().and_then(config_file) else { return false };
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| toml::from_str::<toml::Table>(&text).ok())
        .is_some_and(|table| table.contains_key(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use loupe_core::config::GateMode;

    fn sources(dir: &Path) -> Sources {
        Sources { current_dir: dir.to_path_buf(), ..Sources::default() }
    }

    #[test]
    fn file_then_env_then_flags() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("loupe.toml"),
            "max_single_read_lines = 100\ngate_mode = \"warn\"\nmystery = 1\n",
        )
        .unwrap();
        let mut sources = sources(dir.path());
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
    fn root_order_is_flag_client_env_cwd() {
        let mut sources = sources(Path::new("/cwd"));
        assert_eq!(load(&sources).unwrap().0.root, Some(PathBuf::from("/cwd")));
        sources.env.push(("LOUPE_ROOT".into(), "/env".into()));
        assert_eq!(load(&sources).unwrap().0.root, Some(PathBuf::from("/env")));
        sources.client_root = Some(PathBuf::from("/client"));
        assert_eq!(load(&sources).unwrap().0.root, Some(PathBuf::from("/client")));
        sources.flags.push(("root".into(), Value::from("/flag")));
        assert_eq!(load(&sources).unwrap().0.root, Some(PathBuf::from("/flag")));
    }

    #[test]
    fn errors_name_their_source() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".loupe")).unwrap();
        std::fs::write(dir.path().join(".loupe/config.toml"), "max_preview_chars = -3\n").unwrap();
        let error = load(&sources(dir.path())).unwrap_err();
        assert!(error.contains("config.toml") && error.contains("max_preview_chars"), "{error}");
        std::fs::remove_file(dir.path().join(".loupe/config.toml")).unwrap();
        let mut sources = sources(dir.path());
        sources.env.push(("LOUPE_GATE_MODE".into(), "sometimes".into()));
        let error = load(&sources).unwrap_err();
        assert!(error.starts_with("LOUPE_GATE_MODE:"), "{error}");
    }
}
