//! The two faces of every response (§3.3): the compact text the model reads, and the JSON
//! envelope for programs.
//!
//! The text face is built by each operation; this module owns the envelope, the error face,
//! the `metadata: minimal` projection and the final token count. Budgets are applied before
//! a response reaches here: nothing is trimmed on the way out.

use loupe_core::{NextCall, ToolError, tokens};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Which envelope fields a caller wants (§3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MetadataLevel {
    Minimal,
    #[default]
    Standard,
}

/// The meta keys `metadata: minimal` keeps: what is needed to act.
const MINIMAL_META_KEYS: &[&str] = &["truncated", "next_cursor", "file_hash", "reason_codes", "next_calls"];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Location {
    pub file: String,
    pub line: Option<usize>,
    pub end_line: Option<usize>,
}

/// One tool response, both faces.
#[derive(Debug, Clone)]
#[must_use]
pub struct Response {
    pub ok: bool,
    pub tool: &'static str,
    pub mode: Option<String>,
    pub target: Option<String>,
    pub meta: Map<String, Value>,
    /// The payload exactly as in the file (line endings kept), when there is one.
    pub text: Option<String>,
    pub location: Option<Location>,
    pub error: Option<ToolError>,
    /// What the model reads.
    pub face: String,
    pub metadata: MetadataLevel,
}

impl Response {
    /// A failure, with its error face and `token_estimate`.
    pub fn failure(tool: &'static str, mode: Option<String>, target: Option<String>, error: ToolError) -> Response {
        // A refused target is the caller's text, echoed bounded like any argument in an error.
        let target = target.map(|target| crate::errors::quoted(&target));
        let face = error_face(&error);
        let mut meta = Map::new();
        meta.insert("token_estimate".into(), Value::from(tokens::count(&face)));
        meta.insert("reason_codes".into(), json!([]));
        meta.insert("next_calls".into(), serde_json::to_value(&error.next_calls).unwrap_or_default());
        Response {
            ok: false,
            tool,
            mode,
            target,
            meta,
            text: None,
            location: None,
            error: Some(error),
            face,
            metadata: MetadataLevel::Standard,
        }
    }

    pub fn error_code(&self) -> Option<&str> {
        self.error.as_ref().map(|error| error.code.as_str())
    }

    /// The `structuredContent` envelope at the requested metadata level.
    pub fn structured(&self) -> Value {
        let mut envelope = Map::new();
        envelope.insert("ok".into(), Value::Bool(self.ok));
        let minimal = self.metadata == MetadataLevel::Minimal;
        if !minimal {
            envelope.insert("tool".into(), Value::from(self.tool));
            if let Some(mode) = &self.mode {
                envelope.insert("mode".into(), Value::from(mode.as_str()));
            }
            if let Some(target) = &self.target {
                envelope.insert("target".into(), Value::from(target.as_str()));
            }
        }
        let meta: Map<String, Value> = if minimal {
            self.meta
                .iter()
                .filter(|(key, _)| MINIMAL_META_KEYS.contains(&key.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        } else {
            self.meta.clone()
        };
        envelope.insert("meta".into(), Value::Object(meta));
        if let Some(text) = &self.text {
            envelope.insert("text".into(), Value::from(text.as_str()));
        }
        if !minimal && let Some(location) = &self.location {
            envelope.insert("location".into(), serde_json::to_value(location).unwrap_or_default());
        }
        if let Some(error) = &self.error {
            envelope.insert("error".into(), error_json(error));
        }
        Value::Object(envelope)
    }
}

fn error_json(error: &ToolError) -> Value {
    let mut object = Map::new();
    object.insert("code".into(), Value::from(error.code.as_str()));
    object.insert("message".into(), Value::from(error.message.as_str()));
    object.insert("hint".into(), Value::from(error.hint.as_str()));
    object.insert("next_calls".into(), serde_json::to_value(&error.next_calls).unwrap_or_default());
    for (key, value) in &error.details {
        object.insert(key.clone(), value.clone());
    }
    Value::Object(object)
}

/// `error CODE: message`, the hint, and each ready-to-run retry.
pub(crate) fn error_face(error: &ToolError) -> String {
    let mut face = format!("error {}: {}\nhint: {}\n", error.code, error.message, error.hint);
    for call in &error.next_calls {
        face.push_str(&format!("→ next: {}\n", call.render()));
    }
    face
}

/// The footer line naming a ready-to-run call.
pub(crate) fn next_line(call: &NextCall) -> String {
    format!("→ next: {}\n", call.render())
}
