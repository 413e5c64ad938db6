//! Reading a tool's JSON arguments against its parameter table (`params.rs`): aliases renamed
//! to their canonical names, unknown names refused by name, parameters of another mode refused
//! with the §3.4 message, numbers accepted as numbers or numeric strings.
//!
//! Every adapter (MCP, CLI) hands the engine the same JSON object, so this is the one place
//! where argument shape is checked; each tool's parser turns what it reads into its typed
//! request, and nothing after that looks at the JSON again.

use loupe_core::{ArgumentRule, ToolError};
use serde_json::{Map, Value};

use crate::errors::quoted;

/// The most unknown parameter names a refusal lists.
const UNKNOWN_SHOWN: usize = 8;
use crate::params::{MAX_LIST_ITEMS, MAX_TEXT_BYTES, Param, ParamType, ToolSpec};

/// A call whose arguments did not parse: the error, and what the call named (for the answer's
/// header and the session it belongs to).
#[derive(Debug)]
pub(crate) struct Rejected {
    pub(crate) tool: &'static str,
    pub(crate) error: ToolError,
    pub(crate) mode: Option<String>,
    pub(crate) target: Option<String>,
    pub(crate) session_id: Option<String>,
}

/// A parse's outcome: the typed request, or why the arguments were refused.
pub(crate) type Parsed<T> = Result<T, Box<Rejected>>;

impl Rejected {
    /// Runs a tool's parser on `arguments`, keeping them as given: for the replayable calls the
    /// request builds later, and for the refusal when they do not parse.
    pub(crate) fn parsing<T>(
        tool: &'static str,
        arguments: Value,
        parse: impl FnOnce(Value, Map<String, Value>) -> Result<T, ToolError>,
    ) -> Result<T, (Box<Rejected>, Map<String, Value>)> {
        let original = match &arguments {
            Value::Object(map) => map.clone(),
            _ => Map::new(),
        };
        parse(arguments, original.clone()).map_err(|error| (Rejected::new(tool, error, &original), original))
    }

    /// A rejection of `tool`'s `arguments` (as given) for `error`.
    pub(crate) fn new(tool: &'static str, error: ToolError, arguments: &Map<String, Value>) -> Box<Rejected> {
        let session_id = arguments.get("session_id").and_then(Value::as_str).map(str::to_owned);
        Box::new(Rejected { tool, error, mode: None, target: None, session_id })
    }

    /// The answer to the call.
    pub(crate) fn into_outcome(self) -> crate::response::Outcome {
        crate::response::Outcome::failure(self.tool, self.mode, self.target, self.error)
    }
}

/// A tool's arguments being consumed. Keys are removed as they are read, so whatever is
/// left at the end is unknown.
#[derive(Debug)]
pub(crate) struct Args {
    tool: &'static str,
    params: &'static [Param],
    /// The parameter whose value `only_for` refers to (`mode`, `command`, `operation`).
    selector: &'static str,
    map: Map<String, Value>,
}

impl Args {
    /// The `metadata` level asked for; `None` takes the configured default.
    pub(crate) fn metadata(&mut self) -> Result<Option<crate::response::MetadataLevel>, ToolError> {
        Ok(self.choice("metadata")?.as_deref().and_then(crate::response::MetadataLevel::parse))
    }

    /// A tool's arguments, with the table's aliases already renamed.
    pub(crate) fn new(spec: &'static ToolSpec, value: Value) -> Result<Args, ToolError> {
        Args::with_params(spec.name, spec.params, spec.selector.unwrap_or("mode"), value)
    }

    /// Arguments described by `params` (an entry of `edit`'s `edits`, for one).
    pub(crate) fn with_params(
        tool: &'static str,
        params: &'static [Param],
        selector: &'static str,
        value: Value,
    ) -> Result<Args, ToolError> {
        let map = match value {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::invalid_args(
                    format!("arguments for `{tool}` must be a JSON object, got {}", kind_of(&other)),
                    "pass the parameters as an object, e.g. {\"mode\":\"file\",\"target\":\"src/main.rs\"}",
                ));
            }
        };
        let mut args = Args { tool, params, selector, map };
        for param in params {
            for alias in param.aliases {
                args.alias(alias, param.name)?;
            }
        }
        // The camelCase spelling of every name and alias (the old intent tools' clients,
        // docs/findings.md: `lineRange`, `maxResults`, `dryRun`…) is the same parameter.
        let camel: Vec<(String, &'static str)> = args
            .map
            .keys()
            .filter(|key| key.bytes().any(|byte| byte.is_ascii_uppercase()))
            .filter_map(|key| {
                let snake = snake_case(key);
                let param =
                    params.iter().find(|param| param.name == snake || param.aliases.contains(&snake.as_str()))?;
                Some((key.clone(), param.name))
            })
            .collect();
        for (key, canonical) in camel {
            args.alias(&key, canonical)?;
        }
        Ok(args)
    }

    /// Refuses every present parameter that the table does not allow with the selector set to
    /// `value`, with the §3.4 message.
    pub(crate) fn refuse_other_modes(&self, value: &str) -> Result<(), ToolError> {
        for param in self.params {
            if !param.valid_for(value) {
                self.refuse_for_mode(param.name, param.only_for)?;
            }
        }
        Ok(())
    }

    /// One of the choices the table lists for `key`; the error lists them.
    pub(crate) fn choice(&mut self, key: &str) -> Result<Option<String>, ToolError> {
        let choices = match self.params.iter().find(|param| param.name == key).map(|param| param.ty) {
            Some(ParamType::Choice(choices)) => choices,
            _ => &[],
        };
        self.choice_of(key, choices)
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.map.get(key).is_some_and(|value| !value.is_null())
    }

    /// Renames an alias to its canonical name when only the alias is present.
    pub(crate) fn alias(&mut self, alias: &str, canonical: &str) -> Result<(), ToolError> {
        if !self.has(alias) {
            self.map.remove(alias);
            return Ok(());
        }
        if self.has(canonical) {
            return Err(ToolError::invalid_args(
                format!("`{alias}` and `{canonical}` are the same parameter; pass only `{canonical}`"),
                format!("remove `{alias}`"),
            )
            .refusing(ArgumentRule::TwoNames, canonical));
        }
        if let Some(value) = self.map.remove(alias) {
            self.map.insert(canonical.to_owned(), value);
        }
        Ok(())
    }

    /// Takes a parameter's raw JSON value (lists and objects that need their own parsing).
    pub(crate) fn take_value(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key).filter(|value| !value.is_null())
    }

    pub(crate) fn string(&mut self, key: &str) -> Result<Option<String>, ToolError> {
        match self.map.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => self.bounded(key, text).map(Some),
            Some(Value::Number(number)) => Ok(Some(number.to_string())),
            Some(other) => Err(self.wrong_type(key, "a string", &other)),
        }
    }

    /// The table's bound on `key`'s length (the default for names the table does not list).
    fn max_bytes(&self, key: &str) -> usize {
        self.params.iter().find(|param| param.name == key).map_or(MAX_TEXT_BYTES, |param| param.max_bytes)
    }

    /// `text` when it is within the table's bound for `key`; the refusal never echoes it.
    fn bounded(&self, key: &str, text: String) -> Result<String, ToolError> {
        let limit = self.max_bytes(key);
        if text.len() <= limit {
            return Ok(text);
        }
        Err(ToolError::invalid_args(
            format!("`{key}` is {} bytes long; the limit is {limit}", text.len()),
            match key {
                "query" => "search for a shorter, distinctive part of it".to_owned(),
                _ => format!("pass at most {limit} bytes in `{key}`"),
            },
        )
        .refusing(ArgumentRule::TooLong, key))
    }

    pub(crate) fn required_string(&mut self, key: &str, example: &str) -> Result<String, ToolError> {
        match self.string(key)? {
            Some(text) if !text.trim().is_empty() => Ok(text),
            _ => Err(ToolError::invalid_args(
                format!("`{key}` is required for `{}`", self.tool),
                format!("add `{key}`, e.g. {example}"),
            )),
        }
    }

    /// A non-negative integer; numeric strings are accepted because models send them.
    /// A list of strings: a JSON array, or one comma-separated string.
    pub(crate) fn string_list(&mut self, key: &str) -> Result<Vec<String>, ToolError> {
        let items: Vec<String> = match self.map.remove(key) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::String(text)) => {
                text.split(',').map(str::trim).filter(|item| !item.is_empty()).map(str::to_owned).collect()
            }
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|item| match item {
                    Value::String(text) => Ok(text),
                    other => Err(self.wrong_type(key, "a list of strings", &other)),
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(self.wrong_type(key, "a list of strings", &other)),
        };
        if items.len() > MAX_LIST_ITEMS {
            return Err(ToolError::invalid_args(
                format!("`{key}` has {} items; the limit is {MAX_LIST_ITEMS}", items.len()),
                format!("pass at most {MAX_LIST_ITEMS} items in `{key}`"),
            ));
        }
        items.into_iter().map(|item| self.bounded(key, item)).collect()
    }

    pub(crate) fn integer(&mut self, key: &str) -> Result<Option<u64>, ToolError> {
        let value = match self.map.remove(key) {
            None | Some(Value::Null) => return Ok(None),
            Some(value) => value,
        };
        let parsed = match &value {
            Value::Number(number) => number
                .as_u64()
                .or_else(|| number.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15).map(|f| f as u64)),
            Value::String(text) => text.trim().parse::<u64>().ok(),
            _ => None,
        };
        parsed.map(Some).ok_or_else(|| self.wrong_type(key, "a non-negative integer", &value))
    }

    pub(crate) fn boolean(&mut self, key: &str) -> Result<Option<bool>, ToolError> {
        match self.map.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(flag)),
            Some(Value::String(text)) if text == "true" || text == "false" => Ok(Some(text == "true")),
            Some(other) => Err(self.wrong_type(key, "true or false", &other)),
        }
    }

    /// One of `choices`; the error lists them.
    fn choice_of(&mut self, key: &str, choices: &[&str]) -> Result<Option<String>, ToolError> {
        let Some(text) = self.string(key)? else { return Ok(None) };
        if choices.contains(&text.as_str()) {
            return Ok(Some(text));
        }
        Err(ToolError::invalid_args(
            format!("`{key}` must be one of {}, got `{}`", choices.join("|"), quoted(&text)),
            format!("set `{key}` to one of: {}", choices.join(", ")),
        )
        .refusing(ArgumentRule::NotAChoice, key))
    }

    /// Refuses a present parameter that belongs to another mode, with the §3.4 message.
    fn refuse_for_mode(&self, key: &str, owner_modes: &[&str]) -> Result<(), ToolError> {
        if !self.has(key) {
            return Ok(());
        }
        let selector = self.selector;
        let owners = owner_modes.iter().map(|mode| format!("{selector}='{mode}'")).collect::<Vec<_>>().join(" or ");
        Err(ToolError::invalid_args(
            format!("{key} is only valid for {owners}. Remove it or switch {selector}."),
            format!("remove `{key}`, or call with {owners}"),
        )
        .refusing(ArgumentRule::OtherMode, key))
    }

    /// Ends reading: any key not consumed is unknown and refused by name.
    pub(crate) fn finish(mut self) -> Result<(), ToolError> {
        let accepted: Vec<&str> = self.params.iter().map(|param| param.name).collect();
        self.map.retain(|_, value| !value.is_null());
        let mut unknown: Vec<&String> = self.map.keys().collect();
        if unknown.is_empty() {
            return Ok(());
        }
        unknown.sort();
        // Each name quoted bounded, and at most `UNKNOWN_SHOWN` of them: a refusal never echoes a
        // caller's megabyte (a 1 MB parameter name once came back as a 4.2 MB answer).
        let shown: Vec<String> = unknown.iter().take(UNKNOWN_SHOWN).map(|name| quoted(name)).collect();
        let more = unknown.len().saturating_sub(UNKNOWN_SHOWN);
        let mut names = shown.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
        if more > 0 {
            names.push_str(&format!(" and {more} more"));
        }
        Err(ToolError::invalid_args(
            format!("unknown parameter {names} for `{}`", self.tool),
            format!("accepted parameters: {}", accepted.join(", ")),
        )
        .with_detail("unknown", Value::from(shown))
        .with_detail("accepted", Value::from(accepted.to_vec()))
        .refusing(ArgumentRule::Unknown, unknown[0]))
    }

    fn wrong_type(&self, key: &str, expected: &str, got: &Value) -> ToolError {
        ToolError::invalid_args(
            format!("`{key}` must be {expected}, got {} `{}`", kind_of(got), quoted(&got.to_string())),
            format!("pass `{key}` as {expected}"),
        )
        .refusing(ArgumentRule::WrongType, key)
    }
}

/// The text `arguments` give for `name` (a parameter of `params`) under its name, an alias, or
/// either's camelCase spelling: what `Args` reads as that parameter, for a look before parsing.
pub(crate) fn given_text<'a>(params: &[Param], arguments: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    let param = params.iter().find(|param| param.name == name)?;
    let names = |key: &str| key == param.name || param.aliases.contains(&key);
    arguments.iter().find(|(key, _)| names(key) || names(&snake_case(key))).and_then(|(_, value)| value.as_str())
}

/// What a JSON value is, for an error message: "a string", "an array"…
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `lineRange` → `line_range`.
fn snake_case(name: &str) -> String {
    let mut snake = String::with_capacity(name.len() + 4);
    for character in name.chars() {
        if character.is_ascii_uppercase() {
            snake.push('_');
            snake.push(character.to_ascii_lowercase());
        } else {
            snake.push(character);
        }
    }
    snake
}
