//! The tool surface as MCP sees it (§4): names, descriptions, input and output schemas and
//! annotations, all generated from the engine's parameter table (`loupe_engine::params`), so
//! the schema a client sees and the parser that reads its call cannot drift. Every token of
//! `tools/list` sits in every agent's context: the whole surface stays under 3,000 tokens.

use std::sync::Arc;

use loupe_core::config::LegacyTools;
use loupe_engine::legacy::{LEGACY_TOOLS, LegacyTool};
use loupe_engine::params::{self, Effects, Param, ParamType, ToolSpec};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

/// The tools `tools/list` returns, in order, generated from the engine's parameter table.
pub fn tools() -> Vec<Tool> {
    params::TOOLS.iter().map(|spec| tool(spec)).collect()
}

/// `tools/list` under a `legacy_tools` setting (§12): the five tools, then, when `listed`, the
/// legacy names marked deprecated. The listed names may take the list over the §4 budget; the
/// default list never holds them (hidden ones are callable, disabled ones answer
/// `LEGACY_TOOL_DISABLED`).
pub fn tools_for(legacy: LegacyTools) -> Vec<Tool> {
    let mut listed = tools();
    if legacy == LegacyTools::Listed {
        listed.extend(LEGACY_TOOLS.iter().map(legacy_tool));
    }
    listed
}

/// A legacy name as `tools/list` shows it in listed mode: its old parameters, the replacement's
/// annotations and output schema, `deprecated` in its title, description and `_meta`.
fn legacy_tool(legacy: &LegacyTool) -> Tool {
    let Some(spec) = params::tool(legacy.tool) else { unreachable!("a legacy name routes to one of the five tools") };
    let implied: Vec<String> = legacy.fixed.iter().map(|(key, value)| format!("{key}={value}")).collect();
    let replacement =
        if implied.is_empty() { legacy.tool.to_owned() } else { format!("{} ({})", legacy.tool, implied.join(", ")) };
    let description = format!(
        "Deprecated: use `{replacement}`. {} Answers carry LEGACY_TOOL_DEPRECATED; `{}` parameters are accepted too.",
        legacy.description, legacy.tool
    );
    let title = format!("{} (deprecated)", legacy.name);
    let Effects { read_only, destructive, idempotent } = spec.effects;
    let mut meta = JsonObject::new();
    meta.insert("deprecated".into(), Value::Bool(true));
    meta.insert("replacement".into(), Value::from(legacy.tool));
    let mut tool = Tool::new(legacy.name, description, object(input_schema(legacy.params)))
        .with_title(title.clone())
        .with_raw_output_schema(object(output_schema(legacy.tool)))
        .with_annotations(
            ToolAnnotations::with_title(title)
                .read_only(read_only)
                .destructive(destructive)
                .idempotent(idempotent)
                .open_world(false),
        );
    tool.meta = Some(rmcp::model::MetaObject(meta));
    tool
}

fn tool(spec: &ToolSpec) -> Tool {
    let Effects { read_only, destructive, idempotent } = spec.effects;
    Tool::new(spec.name, spec.description, object(input_schema(spec.params)))
        .with_title(spec.title)
        .with_raw_output_schema(object(output_schema(spec.name)))
        .with_annotations(
            ToolAnnotations::with_title(spec.title)
                .read_only(read_only)
                .destructive(destructive)
                .idempotent(idempotent)
                .open_world(false),
        )
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The `inputSchema` of a parameter list: one property per canonical name (aliases are
/// accepted but not listed, to keep `tools/list` small), the required ones named.
pub(crate) fn input_schema(params: &[Param]) -> Value {
    let mut properties = Map::new();
    for param in params {
        properties.insert(param.name.to_owned(), property(param));
    }
    let required: Vec<&str> = params.iter().filter(|param| param.required).map(|param| param.name).collect();
    json!({"type": "object", "properties": properties, "required": required})
}

fn property(param: &Param) -> Value {
    let mut schema = match param.ty {
        ParamType::String => json!({"type": "string"}),
        ParamType::Integer { min, max } => {
            let mut schema = json!({"type": "integer", "minimum": min});
            if let Some(max) = max {
                schema["maximum"] = Value::from(max);
            }
            schema
        }
        ParamType::Boolean => json!({"type": "boolean"}),
        ParamType::Choice(choices) => json!({"type": "string", "enum": choices}),
        ParamType::StringList => json!({"type": "array", "items": {"type": "string"}}),
        ParamType::EditList(items) => json!({"type": "array", "minItems": 1, "items": input_schema(items)}),
    };
    // A parameter that belongs to some modes says which, so a model need not guess.
    let description = match param.only_for {
        [] => param.description.to_owned(),
        modes => format!("{}: {}", modes.join("/"), param.description),
    };
    schema["description"] = Value::from(description);
    schema
}

/// One small `outputSchema` for every tool (§3.3): every answer has `ok` and `text`, the face
/// without the lines that rows carry (`results` for search hits, `nodes` for analyze) nor the
/// `→ next:` lines that `next_calls` holds; the other fields a program acts on (`next_cursor`,
/// `file_hash`, `transaction_id`, …) sit beside them when the answer has them, and
/// `metadata: "full"` adds `meta`, `content` and `location`.
fn output_schema(tool: &str) -> Value {
    let mut properties = json!({
        "ok": {"type": "boolean"},
        "text": {"type": "string"},
        "error": {"type": "object"},
        "next_calls": {"type": "array"}
    });
    match tool {
        "search" => {
            properties["results"] = json!({"type": "array", "description": "[path, line, candidate_id, shown] per hit"})
        }
        "analyze" => {
            properties["nodes"] = json!({"type": "array", "description": "[id, line] or id"});
            properties["edges"] = json!({"type": "array", "description": "[from, to, line, confidence] by node index"});
        }
        _ => {}
    }
    json!({"type": "object", "properties": properties, "required": ["ok", "text"]})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §4: descriptions and schemas of the whole surface stay under 3,000 tokens.
    #[test]
    fn tools_list_stays_under_its_token_budget() {
        let listed = serde_json::to_string(&tools()).unwrap();
        let tokens = loupe_core::tokens::count(&listed);
        eprintln!("tools/list: {tokens} tokens, {} bytes", listed.len());
        assert!(tokens < 3000, "tools/list costs {tokens} tokens");
    }

    /// §12: the default list (hidden) and a disabled one hold the five tools only; listed mode
    /// adds every legacy name, marked deprecated, with its old parameters.
    #[test]
    fn only_listed_mode_lists_the_legacy_names_marked_deprecated() {
        let json = |tools: Vec<Tool>| serde_json::to_value(tools).unwrap();
        assert_eq!(json(tools_for(LegacyTools::Hidden)), json(tools()));
        assert_eq!(json(tools_for(LegacyTools::Disabled)), json(tools()));
        let listed = tools_for(LegacyTools::Listed);
        let names: Vec<&str> = listed.iter().map(|tool| tool.name.as_ref()).collect();
        let legacy: Vec<&str> = LEGACY_TOOLS.iter().map(|legacy| legacy.name).collect();
        assert_eq!(names[..5], params::tool_names()[..]);
        assert_eq!(names[5..], legacy[..]);
        for (tool, legacy) in listed[5..].iter().zip(LEGACY_TOOLS) {
            let description = tool.description.as_deref().unwrap_or_default();
            assert!(description.starts_with(&format!("Deprecated: use `{}", legacy.tool)), "{description}");
            assert_eq!(tool.title.as_deref(), Some(format!("{} (deprecated)", legacy.name).as_str()));
            let meta = &tool.meta.as_ref().unwrap().0;
            assert_eq!(meta["deprecated"], Value::Bool(true));
            assert_eq!(meta["replacement"], Value::from(legacy.tool));
            let properties = tool.input_schema["properties"].as_object().unwrap();
            let old: Vec<&str> = legacy.params.iter().map(|param| param.name).collect();
            assert_eq!(properties.keys().map(String::as_str).collect::<Vec<_>>().len(), old.len());
            assert!(old.iter().all(|name| properties.contains_key(*name)), "{}: {properties:?}", legacy.name);
        }
        let edit_code = &listed[5 + LEGACY_TOOLS.iter().position(|legacy| legacy.name == "edit_code").unwrap()];
        let item = &edit_code.input_schema["properties"]["edits"]["items"]["properties"];
        assert!(item["targetString"].is_object() && item["filePath"].is_object(), "{item}");
        let tokens = loupe_core::tokens::count(&serde_json::to_string(&listed).unwrap());
        eprintln!("tools/list with the legacy names listed: {tokens} tokens");
    }

    #[test]
    fn every_tool_is_annotated_and_declares_its_output() {
        for tool in tools_for(LegacyTools::Listed) {
            let annotations = tool.annotations.as_ref().unwrap();
            assert!(annotations.read_only_hint.is_some() && annotations.destructive_hint.is_some());
            assert!(annotations.idempotent_hint.is_some());
            assert_eq!(annotations.open_world_hint, Some(false));
            assert!(tool.output_schema.is_some());
        }
    }
}
