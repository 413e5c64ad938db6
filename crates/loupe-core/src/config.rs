//! The configuration of §14 as one plain struct, and the rules for setting a key from text.
//!
//! Layering (defaults, then the user-level config file, then the repository's own
//! `loupe.toml`, then `LOUPE_*`, then flags) is done by the caller, which feeds each layer
//! through `Config::set`. This module never reads files or the environment; it states which
//! keys a repository's own file may set (`REPOSITORY_KEYS`, §3.1).

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GateMode {
    Enforce,
    Warn,
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RelevanceMode {
    Warn,
    Block,
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LegacyTools {
    Hidden,
    Listed,
    Disabled,
}

/// Which structured face a tool result carries (§3.3): a call's `metadata` argument, or the
/// `structured_content` config key for calls that do not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MetadataLevel {
    Minimal,
    #[default]
    Standard,
    Full,
}

impl MetadataLevel {
    pub fn parse(level: &str) -> Option<MetadataLevel> {
        match level {
            "minimal" => Some(MetadataLevel::Minimal),
            "standard" => Some(MetadataLevel::Standard),
            "full" => Some(MetadataLevel::Full),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    pub root: Option<PathBuf>,
    pub index_dir: Option<PathBuf>,
    pub log: String,
    pub max_single_read_lines: usize,
    pub max_preview_chars: usize,
    pub max_response_tokens: usize,
    pub max_index_file_bytes: u64,
    /// Files larger than this are refused by `read` with `FILE_TOO_LARGE`.
    pub max_file_bytes: u64,
    pub exclude: Vec<String>,
    pub allow: Vec<String>,
    pub gate_mode: GateMode,
    pub max_range_lines: usize,
    pub max_reads_per_session: usize,
    pub max_total_read_lines: usize,
    pub relevance: RelevanceMode,
    pub strict_session_id: bool,
    pub session_ttl_secs: u64,
    pub analytics: bool,
    pub read_only: bool,
    pub legacy_tools: LegacyTools,
    pub structured_content: MetadataLevel,
    /// De-duplication elides only lines sent within this many tokens of reads (§9.6): clients
    /// compact their context, so older lines are sent again rather than pointed at.
    pub dedup_window_tokens: u64,
    /// How the root was chosen (§2), for `manage status`: set when the configuration is loaded.
    pub root_chosen_by: String,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            root: None,
            index_dir: None,
            log: "warn".to_owned(),
            max_single_read_lines: 300,
            max_preview_chars: 12_000,
            max_response_tokens: 20_000,
            max_index_file_bytes: 1_048_576,
            max_file_bytes: 64 * 1_048_576,
            exclude: DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect(),
            allow: Vec::new(),
            gate_mode: GateMode::Enforce,
            max_range_lines: 200,
            max_reads_per_session: 25,
            max_total_read_lines: 2500,
            relevance: RelevanceMode::Warn,
            strict_session_id: false,
            session_ttl_secs: 7200,
            analytics: true,
            read_only: false,
            legacy_tools: LegacyTools::Hidden,
            structured_content: MetadataLevel::Standard,
            dedup_window_tokens: 30_000,
            root_chosen_by: String::new(),
        }
    }
}

/// Every key `Config::set` accepts, in the order of §14.
pub const CONFIG_KEYS: &[&str] = &[
    "root",
    "index_dir",
    "log",
    "max_single_read_lines",
    "max_preview_chars",
    "max_response_tokens",
    "max_index_file_bytes",
    "max_file_bytes",
    "exclude",
    "allow",
    "gate_mode",
    "max_range_lines",
    "max_reads_per_session",
    "max_total_read_lines",
    "relevance",
    "strict_session_id",
    "session_ttl_secs",
    "analytics",
    "read_only",
    "legacy_tools",
    "structured_content",
    "dedup_window_tokens",
];

/// The keys a repository's own config file may set (§3.1, §14), and only within their
/// restrictions: `exclude` adds patterns, `allow` names single files the repository excluded
/// itself. Everything else (the ceilings and budgets, the gate and relevance policies, which
/// tools are exposed, structured faces, analytics, the index and journal's place, whether loupe
/// may write, logging) is the user's alone: a repository is not trusted, it can be hostile, and
/// an agent working in it can be prompt-injected into committing one. A key outside this list
/// is ignored there with a warning that says where the user sets it.
pub const REPOSITORY_KEYS: &[&str] = &["exclude", "allow"];

impl Config {
    /// Sets `key` from a value: JSON/TOML values keep their type; a string (from an
    /// environment variable or a flag) is parsed per the key's type. Lists accept a JSON array
    /// or a comma-separated string. The error says what was expected.
    pub fn set(&mut self, key: &str, value: &Value) -> Result<(), String> {
        match key {
            "root" => self.root = Some(PathBuf::from(as_string(key, value)?)),
            "index_dir" => self.index_dir = Some(PathBuf::from(as_string(key, value)?)),
            "log" => self.log = as_string(key, value)?,
            "max_single_read_lines" => self.max_single_read_lines = as_positive(key, value)? as usize,
            "max_preview_chars" => self.max_preview_chars = as_positive(key, value)? as usize,
            "max_response_tokens" => self.max_response_tokens = as_positive(key, value)? as usize,
            "max_index_file_bytes" => self.max_index_file_bytes = as_positive(key, value)?,
            "max_file_bytes" => self.max_file_bytes = as_positive(key, value)?,
            // Every layer adds to the exclusions in force, never replaces them: one added
            // pattern must not drop the secret defaults (§3.1). Lifting one is `allow`'s job.
            "exclude" => {
                for pattern in as_list(key, value)? {
                    if !self.exclude.contains(&pattern) {
                        self.exclude.push(pattern);
                    }
                }
            }
            "allow" => self.allow = as_list(key, value)?,
            "dedup_window_tokens" => self.dedup_window_tokens = as_positive(key, value)?,
            "structured_content" => {
                let level = as_string(key, value)?;
                self.structured_content =
                    MetadataLevel::parse(&level).ok_or_else(|| expected(key, "minimal|standard|full", &level))?;
            }
            "gate_mode" => {
                self.gate_mode = match as_string(key, value)?.as_str() {
                    "enforce" => GateMode::Enforce,
                    "warn" => GateMode::Warn,
                    "off" => GateMode::Off,
                    other => return Err(expected(key, "enforce|warn|off", other)),
                }
            }
            "max_range_lines" => self.max_range_lines = as_positive(key, value)? as usize,
            "max_reads_per_session" => self.max_reads_per_session = as_positive(key, value)? as usize,
            "max_total_read_lines" => self.max_total_read_lines = as_positive(key, value)? as usize,
            "relevance" => {
                self.relevance = match as_string(key, value)?.as_str() {
                    "warn" => RelevanceMode::Warn,
                    "block" => RelevanceMode::Block,
                    "off" => RelevanceMode::Off,
                    other => return Err(expected(key, "warn|block|off", other)),
                }
            }
            "strict_session_id" => self.strict_session_id = as_bool(key, value)?,
            "session_ttl_secs" => self.session_ttl_secs = as_positive(key, value)?,
            "analytics" => self.analytics = as_bool(key, value)?,
            "read_only" => self.read_only = as_bool(key, value)?,
            "legacy_tools" => {
                self.legacy_tools = match as_string(key, value)?.as_str() {
                    "hidden" => LegacyTools::Hidden,
                    "listed" => LegacyTools::Listed,
                    "disabled" => LegacyTools::Disabled,
                    other => return Err(expected(key, "hidden|listed|disabled", other)),
                }
            }
            other => {
                return Err(format!("unknown configuration key `{other}`; known keys: {}", CONFIG_KEYS.join(", ")));
            }
        }
        Ok(())
    }
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
