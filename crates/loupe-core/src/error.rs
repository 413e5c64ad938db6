//! The fixed error-code enum (§3.4) and the tool error value every failure becomes.
//!
//! Codes are for programs, messages for people: policy never looks at message text.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The fixed set of error codes of §3.4. The order is the contract's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    InvalidArgs,
    FileNotFound,
    SymbolNotFound,
    AmbiguousSymbol,
    SymbolInUse,
    NameCollision,
    AmbiguousMatch,
    NoMatch,
    PathOutsideRoot,
    PathExcluded,
    BinaryFile,
    FileTooLarge,
    TokenLimitExceeded,
    BudgetExceeded,
    SearchFirstRequired,
    SearchRefRequired,
    CandidateRefRequired,
    SessionIdRequired,
    Conflict,
    GitUnavailable,
    IndexNotReady,
    ReadOnly,
    LegacyToolDisabled,
    IoError,
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 25] = [
        ErrorCode::InvalidArgs,
        ErrorCode::FileNotFound,
        ErrorCode::SymbolNotFound,
        ErrorCode::AmbiguousSymbol,
        ErrorCode::SymbolInUse,
        ErrorCode::NameCollision,
        ErrorCode::AmbiguousMatch,
        ErrorCode::NoMatch,
        ErrorCode::PathOutsideRoot,
        ErrorCode::PathExcluded,
        ErrorCode::BinaryFile,
        ErrorCode::FileTooLarge,
        ErrorCode::TokenLimitExceeded,
        ErrorCode::BudgetExceeded,
        ErrorCode::SearchFirstRequired,
        ErrorCode::SearchRefRequired,
        ErrorCode::CandidateRefRequired,
        ErrorCode::SessionIdRequired,
        ErrorCode::Conflict,
        ErrorCode::GitUnavailable,
        ErrorCode::IndexNotReady,
        ErrorCode::ReadOnly,
        ErrorCode::LegacyToolDisabled,
        ErrorCode::IoError,
        ErrorCode::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgs => "INVALID_ARGS",
            ErrorCode::FileNotFound => "FILE_NOT_FOUND",
            ErrorCode::SymbolNotFound => "SYMBOL_NOT_FOUND",
            ErrorCode::AmbiguousSymbol => "AMBIGUOUS_SYMBOL",
            ErrorCode::SymbolInUse => "SYMBOL_IN_USE",
            ErrorCode::NameCollision => "NAME_COLLISION",
            ErrorCode::AmbiguousMatch => "AMBIGUOUS_MATCH",
            ErrorCode::NoMatch => "NO_MATCH",
            ErrorCode::PathOutsideRoot => "PATH_OUTSIDE_ROOT",
            ErrorCode::PathExcluded => "PATH_EXCLUDED",
            ErrorCode::BinaryFile => "BINARY_FILE",
            ErrorCode::FileTooLarge => "FILE_TOO_LARGE",
            ErrorCode::TokenLimitExceeded => "TOKEN_LIMIT_EXCEEDED",
            ErrorCode::BudgetExceeded => "BUDGET_EXCEEDED",
            ErrorCode::SearchFirstRequired => "SEARCH_FIRST_REQUIRED",
            ErrorCode::SearchRefRequired => "SEARCH_REF_REQUIRED",
            ErrorCode::CandidateRefRequired => "CANDIDATE_REF_REQUIRED",
            ErrorCode::SessionIdRequired => "SESSION_ID_REQUIRED",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::GitUnavailable => "GIT_UNAVAILABLE",
            ErrorCode::IndexNotReady => "INDEX_NOT_READY",
            ErrorCode::ReadOnly => "READ_ONLY",
            ErrorCode::LegacyToolDisabled => "LEGACY_TOOL_DISABLED",
            ErrorCode::IoError => "IO_ERROR",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A ready-to-run tool call: replaying it as it is must work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextCall {
    pub tool: String,
    pub arguments: Map<String, Value>,
}

impl NextCall {
    /// Builds a call from a JSON object literal; non-object values give empty arguments.
    pub fn new(tool: &str, arguments: Value) -> NextCall {
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        NextCall { tool: tool.to_owned(), arguments }
    }

    /// The one-line form the text face prints: `read {"mode":"file",...}`.
    pub fn render(&self) -> String {
        format!("{} {}", self.tool, Value::Object(self.arguments.clone()))
    }
}

/// Which rule of a tool's parameter table refused an argument. The message says it to people;
/// this says it to programs that check the table's rules (never rendered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentRule {
    /// Not a parameter of the tool.
    Unknown,
    /// A parameter of another mode, command or operation (`only_for`).
    OtherMode,
    /// A value of the wrong type.
    WrongType,
    /// A value not among the parameter's choices.
    NotAChoice,
    /// A value longer than the parameter takes.
    TooLong,
    /// A parameter given under two of its names.
    TwoNames,
}

/// A tool-level failure: a code, a message for people, a hint saying what to do, and the
/// concrete retries when one exists. Extra structured detail goes in `details`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    pub hint: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub next_calls: Vec<NextCall>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub details: Map<String, Value>,
    /// For an argument refused by the parameter table: the rule and the parameter's name (boxed:
    /// most errors have none, and every `Result` carries the error's size).
    #[serde(skip)]
    pub refused: Option<Box<(ArgumentRule, String)>>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>, hint: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
            hint: hint.into(),
            next_calls: Vec::new(),
            details: Map::new(),
            refused: None,
        }
    }

    pub fn invalid_args(message: impl Into<String>, hint: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::InvalidArgs, message, hint)
    }

    #[must_use]
    pub fn with_next_call(mut self, call: NextCall) -> ToolError {
        self.next_calls.push(call);
        self
    }

    /// Marks the error as the parameter table's `rule` refusing `parameter`.
    #[must_use]
    pub fn refusing(mut self, rule: ArgumentRule, parameter: &str) -> ToolError {
        self.refused = Some(Box::new((rule, parameter.to_owned())));
        self
    }

    #[must_use]
    pub fn with_detail(mut self, key: &str, value: Value) -> ToolError {
        self.details.insert(key.to_owned(), value);
        self
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialize_as_their_contract_names() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, Value::String(code.as_str().to_owned()));
        }
    }

    #[test]
    fn next_call_renders_as_tool_then_json() {
        let call = NextCall::new("read", serde_json::json!({"mode": "file", "target": "a.rs"}));
        assert_eq!(call.render(), r#"read {"mode":"file","target":"a.rs"}"#);
    }
}
